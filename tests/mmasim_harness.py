"""Side-by-side runs of softfloat.mma and MMA-Sim (the optional ``mmasim`` test
extra): inputs, the conversion of encodings to MMA-Sim's torch tensors, and the
chaining of instructions along K (one MMA-Sim call per instruction, D carried as
the next C, as the hardware does)."""
from __future__ import annotations

import numpy as np

from softfloat.mma import MMASIM_ARCH, tensor_core

try:                                    # pragma: no cover (depends on the extra)
    import torch
    import mmasim.amd as _amd
    import mmasim.nv_ptx as _nv
    HAVE_MMASIM = True
except Exception:                       # noqa: BLE001 (any import failure: skip)
    HAVE_MMASIM = False

_TORCH = {}
if HAVE_MMASIM:
    _TORCH = {"fp16": (np.int16, torch.float16), "bf16": (np.int16, torch.bfloat16),
              "fp32": (np.int32, torch.float32), "fp64": (np.int64, torch.float64),
              "fp8_e4m3": (np.uint8, torch.float8_e4m3fn), "fp8_e5m2": (np.uint8, torch.float8_e5m2),
              "fp8_e4m3fnuz": (np.uint8, torch.float8_e4m3fnuz),
              "fp8_e5m2fnuz": (np.uint8, torch.float8_e5m2fnuz),
              "e8m0": (np.uint8, torch.float8_e8m0fnu)}


def _to_torch(bits, fmt_name, packed_fp4=False):
    bits = np.ascontiguousarray(bits)
    if fmt_name == "tf32":
        x = (bits.astype(np.uint32) << np.uint32(13)).view(np.int32)
        return torch.from_numpy(x.copy()).view(torch.float32)
    if fmt_name in ("fp6_e2m3", "fp6_e3m2"):
        return torch.from_numpy(bits.astype(np.uint8))
    if fmt_name == "fp4_e2m1":
        if packed_fp4:
            b = bits.astype(np.uint8)
            return torch.from_numpy(np.ascontiguousarray((b[..., 0::2] << 4) | b[..., 1::2]))
        return torch.from_numpy((bits.astype(np.uint8) << 2).astype(np.uint8))
    npd, td = _TORCH[fmt_name]
    return torch.from_numpy(bits.view(npd).copy()).view(td)


def _from_torch(t, fmt_name):
    npd, td = _TORCH[fmt_name]
    return t.contiguous().view({1: torch.uint8, 2: torch.int16, 4: torch.int32,
                                8: torch.int64}[t.element_size()]).numpy().view(
        {"fp16": np.uint16, "bf16": np.uint16, "fp32": np.uint32, "fp64": np.uint64}[fmt_name])


def mmasim_op(unit):
    arch = MMASIM_ARCH[unit.arch]
    fam = unit.family
    if fam == "mfma":
        return _amd.MFMA(arch, unit.instruction)
    cls = {"mma": _nv.MMA, "mma_block_scale": _nv.MMABlockScale, "wgmma": _nv.WGMMA,
           "tcgen05": _nv.TCGen05MMA, "tcgen05_block_scale": _nv.TCGen05MMABlockScale}[fam]
    return cls(arch, unit.instruction)


def run_mmasim(unit, a, b, c, sa=None, sb=None):
    """MMA-Sim's D for 2-D encodings a (m, K), b (K, n), c (m, n): one call per
    instruction of K = unit.k, D carried as the next C."""
    op = mmasim_op(unit)
    K = a.shape[1]
    k = unit.k
    packed = unit.algorithm == "grouped"
    d = _to_torch(c, unit.c_fmt.name)
    for k0 in range(0, K, k):
        A = _to_torch(a[:, k0:k0 + k], unit.a_fmt.name, packed)
        B = _to_torch(np.ascontiguousarray(b[k0:k0 + k].T), unit.b_fmt.name, packed).T
        if packed:
            B = B.contiguous()
        if unit.scaled:
            s0, s1 = k0 // unit.scale_block, (k0 + k) // unit.scale_block
            sname = "e8m0" if unit.scale_fmt.name == "e8m0" else "fp8_e4m3"
            SA = _to_torch(sa[:, s0:s1], sname)
            SB = _to_torch(sb[s0:s1], sname)
            d = op(A, B, d, SA, SB)
        else:
            d = op(A, B, d)
    return _from_torch(d, unit.out_fmt.name)


# ---------------------------------------------------------------------------
# Inputs: rows of different kinds
# ---------------------------------------------------------------------------
def _finite_codes(fmt):
    import softfloat as sf
    if fmt.nbits > 16:
        return None
    allb = np.arange(1 << fmt.nbits, dtype=np.int64).astype(fmt.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        v = sf.from_bits(allb, fmt)
    return allb[np.isfinite(v)], allb[~np.isfinite(v)]


def random_bits(fmt, shape, rng, kind):
    """Encodings of ``fmt``: kind 0 normal values of a random scale, 1 any finite
    encoding (wide exponents, subnormals), 2 half zeros, 3 any encoding
    (infinities, NaNs), 4 tiny (subnormal-range) values, 5 large values."""
    import softfloat as sf
    size = int(np.prod(shape))
    if fmt.name == "fp64":
        if kind == 3:
            return rng.integers(0, 1 << 63, size=size, dtype=np.int64).astype(np.uint64)\
                .reshape(shape) ^ (rng.integers(0, 2, size=size).astype(np.uint64) << np.uint64(63)).reshape(shape)
        e = {0: rng.integers(-8, 8), 1: rng.integers(-1000, 1000, size), 2: 0,
             4: rng.integers(-1074, -1000, size), 5: rng.integers(900, 1023, size)}[kind]
        v = rng.standard_normal(size) * 2.0 ** e
        if kind == 2:
            v[rng.random(size) < 0.5] = 0.0
        return v.reshape(shape).view(np.uint64)
    if kind == 3:
        hi = 1 << fmt.nbits
        return rng.integers(0, hi, size=size, dtype=np.int64).astype(fmt.dtype).reshape(shape)
    if kind == 1:
        fin = _finite_codes(fmt)
        if fin is not None:
            return rng.choice(fin[0], size=size).reshape(shape)
        v = rng.standard_normal(size) * 2.0 ** rng.integers(-60, 60, size)
        return sf.to_bits(v, fmt).reshape(shape)
    if kind == 4:
        v = rng.standard_normal(size) * 2.0 ** (fmt.emin - rng.integers(0, fmt.mbits + 2, size))
        return sf.to_bits(v, fmt).reshape(shape)
    if kind == 5:
        v = rng.standard_normal(size) * fmt.max / 3
        return sf.to_bits(np.clip(v, -fmt.max, fmt.max), fmt).reshape(shape)
    sc = 2.0 ** rng.integers(-6, 6) if fmt.emax > 8 else 1.0
    v = rng.standard_normal(size) * sc
    if fmt.max < 100:
        v = np.clip(v, -fmt.max, fmt.max)
    if kind == 2:
        v[rng.random(size) < 0.5] = 0.0
    return sf.to_bits(v, fmt).reshape(shape)


def _rows(fmt, nrows, ncols, rng, kinds):
    """(nrows, ncols) encodings, each row of a kind drawn from ``kinds``."""
    pick = rng.integers(len(kinds), size=nrows)
    out = np.zeros((nrows, ncols), fmt.dtype)
    for q, kind in enumerate(kinds):
        rows = np.flatnonzero(pick == q)
        if rows.size:
            out[rows] = random_bits(fmt, (rows.size, ncols), rng, kind)
    return out


def make_case(unit, m, n, nk, seed, kinds=(0, 1, 2, 3, 4, 5)):
    """(a, b, c, scale_a, scale_b) for ``nk`` chained instructions: A's rows and
    B's columns each of a random kind, every fourth column's second half the
    negation of the previous column's first half (cancellation), C of mixed
    kinds with a fifth of zeros, scales around 1 with a fifth anywhere."""
    rng = np.random.default_rng(seed)
    K = unit.k * nk
    a = _rows(unit.a_fmt, m, K, rng, kinds)
    bt = _rows(unit.b_fmt, n, K, rng, kinds)
    if unit.b_fmt.has_sign and n > 1:
        h = K // 2
        cols = np.arange(1, n, 4)
        bt[cols, h:] = bt[cols - 1, :K - h] ^ np.asarray(unit.b_fmt.sign_mask, unit.b_fmt.dtype)
    c = _rows(unit.c_fmt, m, n, rng, kinds)
    c[rng.random((m, n)) < 0.2] = 0
    sa = sb = None
    if unit.scaled:
        nsb = K // unit.scale_block
        if unit.scale_fmt.name == "e8m0":
            sa = rng.integers(127 - 20, 127 + 20, size=(m, nsb)).astype(np.uint8)
            sb = rng.integers(127 - 20, 127 + 20, size=(nsb, n)).astype(np.uint8)
            for s in (sa, sb):
                wide = rng.random(s.shape) < 0.2
                s[wide] = rng.integers(0, 256, size=int(wide.sum()))
        else:
            sa = rng.integers(0, 256, size=(m, nsb)).astype(np.uint8)
            sb = rng.integers(0, 256, size=(nsb, n)).astype(np.uint8)
    return a, np.ascontiguousarray(bt.T), c, sa, sb


def compare(arch, instruction, m=64, n=40, nk=2, seed=0, kinds=(0, 1, 2, 3, 4, 5)):
    """(ours, mmasim's, inputs) on one case."""
    from softfloat.mma import mma
    unit = tensor_core(arch, instruction=instruction)
    a, b, c, sa, sb = make_case(unit, m, n, nk, seed, kinds)
    ours = mma(unit, a, b, c, scale_a=sa, scale_b=sb)
    theirs = run_mmasim(unit, a, b, c, sa, sb)
    return ours, theirs, (unit, a, b, c, sa, sb)


def families(arch):
    """One instruction per (family, k, types) of an architecture (n, m of
    wgmma/tcgen05 do not change the arithmetic)."""
    from softfloat.mma import INSTRUCTIONS
    import re
    seen = {}
    for ins in INSTRUCTIONS[arch]:
        key = re.sub(r"^m(64|128)n\d+", "mXnX", ins)
        seen.setdefault(key, ins)
    return list(seen.values())


# ---------------------------------------------------------------------------
# Digests: MMA-Sim's outputs on fixed inputs, stored as hashes
# ---------------------------------------------------------------------------
DIGEST_M, DIGEST_N, DIGEST_NK = 128, 80, 2          # 10,240 outputs, two chained instructions


def case_seed(arch, instruction) -> int:
    import zlib
    return zlib.crc32(f"{arch}|{instruction}".encode())


def is_nan_bits(bits, fmt):
    import softfloat as sf
    b = np.asarray(bits)
    if fmt.name == "fp64":
        return np.isnan(b.astype(np.uint64).view(np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        return np.isnan(sf.from_bits(b.astype(fmt.dtype), fmt))


def finite_bits(bits, fmt):
    import softfloat as sf
    b = np.asarray(bits)
    if fmt.name == "fp64":
        return np.isfinite(b.astype(np.uint64).view(np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        return np.isfinite(sf.from_bits(b.astype(fmt.dtype), fmt))


# Families whose NaN bit patterns in MMA-Sim are the host CPU's (x86 NaN
# propagation through torch float arithmetic), not a GPU rule: compared as NaN.
HOST_NAN_ALGORITHMS = ("exact", "ftz_chain", "fma")


def deviation_mask(unit, a, b, c, sa=None, sb=None, nk=None):
    """Outputs where MMA-Sim is documented to deviate (docs/matrix-units.md):
    CDNA3 fp8 (two_stage_pairs) with an infinite or NaN accumulator at the
    start of a chunk,
    which MMA-Sim drops when the products lie more than 25 binades above its
    exponent slot (it reads inf/NaN at exponent -1)."""
    from softfloat.mma import mma
    m, n = c.shape
    mask = np.zeros((m, n), bool)
    if unit.algorithm != "two_stage_pairs":
        return mask
    import dataclasses
    step = dataclasses.replace(unit, k=unit.chunk)      # one chunk per call
    d = c
    K = a.shape[1]
    for k0 in range(0, K, unit.chunk):
        mask |= ~finite_bits(d, unit.c_fmt)
        d = mma(step, a[:, k0:k0 + unit.chunk], b[k0:k0 + unit.chunk], d)
    return mask


def normalise(unit, bits, mask):
    out = np.asarray(bits).astype(np.uint64).copy()
    out[is_nan_bits(bits, unit.out_fmt)] = np.uint64(0xFFFFFFFFFFFFFFFF)
    out[mask] = np.uint64(0)
    return out


def digest(unit, bits, mask):
    import hashlib
    return hashlib.sha256(normalise(unit, bits, mask).tobytes()).hexdigest()[:24]


def digest_case(arch, instruction):
    unit = tensor_core(arch, instruction=instruction)
    case = make_case(unit, DIGEST_M, DIGEST_N, DIGEST_NK, case_seed(arch, instruction))
    return unit, case
