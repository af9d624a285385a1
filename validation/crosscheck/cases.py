"""The inputs of the checks: the dtypes checked and their formats, every 16-bit
encoding, the edge encodings of a 16-bit format, random and finite random ones,
the float32 rounding boundaries of a 16-bit format (`boundaries32`), and the
mixed-magnitude data and tensor views of the torch CPU model checks
(`model_values`, `model_input`)."""
from __future__ import annotations

import numpy as np

import softfloat as sf

from .torch_io import to_torch

DTYPES = ("float16", "bfloat16")
FMT = {"float16": sf.get_format("fp16"), "bfloat16": sf.get_format("bf16")}
FP32 = sf.get_format("fp32")


def all16() -> np.ndarray:
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def edge16(f) -> np.ndarray:
    """Interesting encodings of a 16-bit format: zeros, subnormals, normals around
    1 and the extremes, infinities and NaNs (quiet, signaling, with payloads)."""
    M = f.mbits
    pos = [0, 1, 2, 3, (1 << M) - 1, 1 << M, (1 << M) + 1, f.max_bits, f.max_bits - 1,
           f.inf_bits, f.inf_bits + 1, f.default_nan_bits, f.default_nan_bits + 1,
           f.inf_bits | (1 << (M - 2)), (f.sign_mask - 1)]
    one = sf.to_bits(np.array([1.0, 2.0, 0.5, 3.0, 1.5, 0.1, 1 / 3, 7.0, 10.0, 100.0]), f)
    pos += [int(v) for v in one] + [int(v) + 1 for v in one] + [int(v) - 1 for v in one]
    pos = np.array(sorted(set(pos)), np.uint32)
    return np.concatenate([pos, pos | f.sign_mask]).astype(np.uint16)


def random16(rng, n) -> np.ndarray:
    return rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)


def finite_random16(rng, n, f, lo=-14.0, hi=8.0):
    """Random finite values with log2|x| uniform in [lo, hi] (so that sums stay finite)."""
    e = rng.uniform(lo, hi, n)
    v = np.exp2(e) * rng.choice([-1.0, 1.0], n)
    return sf.to_bits(v, f)


def boundaries32(f):
    """Every float32 midpoint between neighbouring values of ``f`` (both signs), and
    the float32 neighbours on each side; the overflow threshold; specials."""
    pos = np.arange(0, f.inf_bits + 1, dtype=np.uint32).astype(f.dtype)
    lo = sf.from_bits(pos[:-1], f)
    hi = sf.from_bits(pos[1:], f)
    mid = (lo + hi) / 2  # exact in float64 and in float32 (p + 1 <= 24 bits)
    m32 = mid.astype(np.float32).view(np.uint32)
    pts = np.concatenate([m32, m32 + 1, m32 - 1])
    if f.inf_bits is not None:
        ovf = np.float32((f.max + (f.max - sf.from_bits(np.array([f.max_bits - 1], f.dtype), f)[0]) / 2))
        o = np.array([ovf], np.float32).view(np.uint32)
        pts = np.concatenate([pts, o, o - 1, o + 1])
    specials = np.array([0, 0x00000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000,
                         0x7F800001, 0x7FA00000, 0x7FBFFFFF, 0x7FC00000, 0x7FC00001,
                         0x7FFFFFFF, 0x7FE12345, 0x7F812345], np.uint32)
    pts = np.concatenate([pts, specials])
    pts = pts[pts < 0x80000000]
    return np.unique(np.concatenate([pts, pts | np.uint32(0x80000000)]))


def model_values(rng, f, n):
    """Mixed magnitudes: log2|x| uniform in [-8, 4], 5% scaled by 2^6..2^10,
    a third of the values cancelled by a negated copy elsewhere, 2% zeros of
    either sign, and now and then an all -0 input."""
    v = np.exp2(rng.uniform(-8, 4, n)) * rng.choice([-1.0, 1.0], n)
    big = rng.random(n) < 0.05
    v[big] *= 2.0 ** rng.integers(6, 11, int(big.sum()))
    if n >= 2:
        idx = rng.permutation(n)
        h = n // 3
        v[idx[h:2 * h]] = -v[idx[:h]]
    zero = rng.random(n) < 0.02                 # signed zeros
    v[zero] = rng.choice([0.0, -0.0], int(zero.sum()))
    if rng.random() < 0.02:                     # now and then all -0
        v[:] = -0.0
    return sf.to_bits(v, f)


def model_input(rng, f, dt, nmax):
    """(encodings as a NumPy view, the same view in torch, axis, threads)."""
    th = int(rng.integers(1, 3))
    if rng.random() < 0.4:
        n = int(np.exp(rng.uniform(0, np.log(nmax))))
        base = model_values(rng, f, n)
        tb = to_torch(base, dt, "cpu")
        if rng.random() < 0.25 and n > 1:
            return base[::2], tb[::2], rng.choice([None, 0]), th
        return base, tb, rng.choice([None, 0]), th
    R, C = (int(np.exp(rng.uniform(0, np.log(300)))) for _ in range(2))
    base = model_values(rng, f, R * C).reshape(R, C)
    tb = to_torch(base, dt, "cpu").reshape(R, C)
    axis = [None, 0, 1][int(rng.integers(0, 3))]
    view = int(rng.integers(0, 3))
    if view == 1:
        return base.T, tb.t(), axis, th
    if view == 2 and C > 1:
        return base[:, ::2], tb[:, ::2], axis, th
    return base, tb, axis, th
