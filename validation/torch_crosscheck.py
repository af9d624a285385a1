#!/usr/bin/env python
"""Cross-check softfloat's platform models against torch, bit for bit.

    python validation/torch_crosscheck.py --device {cuda,cpu} [--quick|--tiny] --out DIR

Writes ``DIR/report.json`` (``{"meta": {...}, "checks": [...]}``) and
``DIR/report.md``, and exits 1 when a check that claims bit-exactness finds a
mismatch (2 on a usage error). Every check runs for float16 and bfloat16; each
compares torch's result with `softfloat.platform_op` & co. under the platform
``torch_cuda`` or ``torch_cpu``.

Sizes. ``--device cuda`` (full): conversion from float32 over all 2^32 inputs, and
tensor-tensor add/sub/mul/div over all 2^32 operand pairs, in chunks generated on
the GPU with ``torch.arange``; torch's results come back to the host and our side
is computed by the numba kernels on the host's cores, chunk by chunk. A time budget
(``--budget-s``, default 300 s for the sweeps together) guards the 8-minute limit:
if the chunks done so far project past a sweep's share, the sweep continues on an
evenly strided subset of the chunks and the report says so (``coverage`` < 1). ``--device cpu --quick``:
a large random sample plus every boundary (CI-sized); ``--tiny``: a small sample
for the unit tests.

What the checks claim: ``exact`` checks count every differing bit pattern as a
mismatch, except that two NaNs of different patterns count only where the
platform claims its NaN patterns for that path (``nan_claimed``); both kinds are
reported, classified by cause. Bounded checks (transcendentals, sums of general
data, matmul) report the largest distance in units in the last place and a
histogram.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform as _pyplatform
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import softfloat as sf  # noqa: E402
from softfloat.budget import Budget, chunk_ranges  # noqa: E402
from softfloat.platforms import _isnan  # noqa: E402

DTYPES = ("float16", "bfloat16")
FMT = {"float16": sf.get_format("fp16"), "bfloat16": sf.get_format("bf16")}
FP32 = sf.get_format("fp32")

# --------------------------------------------------------------------------
# torch plumbing
# --------------------------------------------------------------------------
_torch = None


def torch():
    global _torch
    if _torch is None:
        import torch as t
        _torch = t
    return _torch


def tdtype(name):
    return {"float16": torch().float16, "bfloat16": torch().bfloat16,
            "float32": torch().float32, "float64": torch().float64}[name]


def to_torch(bits: np.ndarray, dtype: str, device: str):
    """A torch tensor of ``dtype`` holding the encodings ``bits`` (uint16/uint32)."""
    t = torch()
    if bits.dtype == np.uint16:
        x = t.from_numpy(np.ascontiguousarray(bits).view(np.int16))
    elif bits.dtype == np.uint32:
        x = t.from_numpy(np.ascontiguousarray(bits).view(np.int32))
    else:
        x = t.from_numpy(np.ascontiguousarray(bits).view(np.int64))
    return x.to(device).view(tdtype(dtype))


def from_torch(x) -> np.ndarray:
    """Encodings of a torch tensor, as uint16/uint32/uint64."""
    t = torch()
    x = x.detach().contiguous()
    if x.element_size() == 2:
        return x.view(t.int16).cpu().numpy().view(np.uint16)
    if x.element_size() == 4:
        return x.view(t.int32).cpu().numpy().view(np.uint32)
    return x.view(t.int64).cpu().numpy().view(np.uint64)


# --------------------------------------------------------------------------
# Comparison and classification
# --------------------------------------------------------------------------
def ordered(bits: np.ndarray, f) -> np.ndarray:
    """Encodings mapped to integers that are consecutive along the real line (+0 = -0)."""
    b = bits.astype(np.int64)
    mag = b & (f.sign_mask - 1)
    return np.where(b & f.sign_mask, -mag, mag)


def ulp_distance(got, exp, f) -> np.ndarray:
    return np.abs(ordered(got, f) - ordered(exp, f))


def _is_sub(b, f):
    b = b.astype(np.int64) & (f.sign_mask - 1)
    return (b > 0) & (b < (1 << f.mbits))


def _is_zero(b, f):
    return (b.astype(np.int64) & (f.sign_mask - 1)) == 0


class Result:
    """One check's accumulated outcome (merged over chunks)."""

    def __init__(self, name, dtype, exact, nan_claimed, what, bounded=False):
        self.d = {"name": name, "dtype": dtype, "exact": bool(exact),
                  "nan_claimed": bool(nan_claimed), "what": what, "cases": 0,
                  "mismatches": 0, "nan_pattern_mismatches": 0, "causes": {},
                  "examples": []}
        self.bounded = bounded
        if bounded:
            self.d["max_ulp"] = 0
            self.d["max_ulp_normal"] = 0      # over results that are normal numbers on both sides
            self.d["ulp_histogram"] = {}
        self.t0 = time.perf_counter()

    def add(self, got, exp, f, inputs=(), alts=None):
        """Compare encodings ``got`` (torch) with ``exp`` (model). ``inputs``: arrays
        (encodings or floats) shown in examples; ``alts``: {cause: callable(mask) ->
        encodings of an alternative model on the masked elements}; a mismatch equal
        to an alternative is filed under that cause."""
        got = np.asarray(got).reshape(-1)
        exp = np.asarray(exp).reshape(-1)
        inputs = [np.broadcast_to(np.asarray(i), got.shape).reshape(-1) if np.ndim(i) else
                  np.full(got.shape, i) for i in inputs]
        d = self.d
        d["cases"] += int(got.size)
        diff = got != exp
        if self.bounded:
            both = ~(_isnan(got, f) | _isnan(exp, f))
            u = ulp_distance(got[both], exp[both], f)
            if u.size:
                d["max_ulp"] = max(d["max_ulp"], int(u.max()))
                nrm = ~(_is_sub(got[both], f) | _is_zero(got[both], f) |
                        _is_sub(exp[both], f) | _is_zero(exp[both], f))
                if nrm.any():
                    d["max_ulp_normal"] = max(d["max_ulp_normal"], int(u[nrm].max()))
                vals, counts = np.unique(np.minimum(u, 16), return_counts=True)
                for v, c in zip(vals, counts):
                    k = str(int(v)) if v < 16 else ">=16"
                    d["ulp_histogram"][k] = d["ulp_histogram"].get(k, 0) + int(c)
        if not diff.any():
            return
        idx = np.nonzero(diff)[0]
        g, e = got[idx], exp[idx]
        gn, en = _isnan(g, f), _isnan(e, f)
        cause = np.full(idx.size, "", dtype=object)
        nanpat = gn & en
        cause[nanpat] = "nan_pattern"
        cause[(gn ^ en) & (cause == "")] = "nan_vs_number"
        zz = _is_zero(g, f) & _is_zero(e, f) & (cause == "")
        cause[zz] = "signed_zero"
        fl = (cause == "") & ((_is_zero(g, f) & _is_sub(e, f)) | (_is_zero(e, f) & _is_sub(g, f)))
        cause[fl] = "subnormal_flush"
        for name, fn in (alts or {}).items():
            open_ = cause == ""
            if not open_.any():
                break
            m = np.zeros(got.size, bool)
            m[idx[open_]] = True
            try:
                alt = np.asarray(fn(m)).reshape(-1)
            except Exception as ex:  # an alternative model must not break the check
                d.setdefault("alt_errors", []).append(f"{name}: {ex!r}")
                continue
            hit = alt == g[open_]
            sel = np.nonzero(open_)[0][hit]
            cause[sel] = name
        rest = cause == ""
        u = ulp_distance(g[rest], e[rest], f)
        cause[rest] = np.where(u == 1, "one_ulp_other", "other")
        counted = ~nanpat | d["nan_claimed"]
        d["mismatches"] += int(counted.sum())
        d["nan_pattern_mismatches"] += int(nanpat.sum())
        for c in np.unique(cause):
            d["causes"][c] = d["causes"].get(c, 0) + int((cause == c).sum())
        # a few examples, the counted ones first
        order = np.argsort(~counted, kind="stable")[:max(0, 8 - len(d["examples"]))]
        w = 4 if f.nbits <= 16 else 8
        for j in order:
            i = idx[j]
            ex = {"cause": cause[j], "torch": f"{int(g[j]):#0{w + 2}x}",
                  "model": f"{int(e[j]):#0{w + 2}x}", "inputs": []}
            for arr in inputs:
                v = arr[i]
                ex["inputs"].append(f"{int(v):#x}" if arr.dtype.kind == "u" else repr(float(v)))
            d["examples"].append(ex)

    def finish(self, **extra):
        self.d.update(extra)
        self.d["seconds"] = round(time.perf_counter() - self.t0, 3)
        self.d["passed"] = (not self.d["exact"]) or self.d["mismatches"] == 0
        return self.d


# --------------------------------------------------------------------------
# Input sets
# --------------------------------------------------------------------------
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


# --------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------
class Runner:
    def __init__(self, args):
        self.args = args
        self.device = args.device
        self.plat = sf.get_platform(args.platform or
                                    ("torch_cuda" if args.device == "cuda" else "torch_cpu"))
        self.size = "full" if (args.device == "cuda" and not args.quick and not args.tiny) else \
            ("tiny" if args.tiny else "quick")
        self.rng = np.random.default_rng(args.seed)
        self.results = []
        self.t_start = time.perf_counter()
        self.budget = Budget(args.budget_s)
        # the 2^32 sweeps: on by default for cuda full runs; --sweep forces them (with
        # --chunk-log2/--max-chunks, so that the sweep code runs on the CPU in tests)
        self.sweep = self.size == "full" or args.sweep
        self.chunk = 1 << args.chunk_log2
        self.max_chunks = args.max_chunks
        self._tiles = {}
        self.luts = {}
        # input gain of the GradScaler check: bf16 needs large activations to overflow
        self.nn_gain = {"float16": 1.0, "bfloat16": 16.0}

    # sample sizes --------------------------------------------------------
    def n(self, quick, tiny, full=None):
        return {"quick": quick, "tiny": tiny, "full": full if full is not None else quick}[self.size]

    def claims_nan(self, what):
        return self.plat.claims_nan(what)

    def record(self, d):
        self.results.append(d)
        st = "ok " if d["passed"] else "FAIL"
        extra = f" max_ulp={d['max_ulp']}" if "max_ulp" in d else ""
        print(f"[{st}] {d['name']:<28} {d['dtype']:<9} cases={d['cases']:<11} "
              f"mismatches={d['mismatches']:<7} nan_pattern={d['nan_pattern_mismatches']:<6}"
              f"{extra} ({d['seconds']:.1f}s)", flush=True)

    def run_check(self, fn, dtype):
        name = fn.__name__[len("check_"):]
        try:
            for d in fn(dtype):
                self.record(d)
        except _Skip as s:
            d = {"name": name, "dtype": dtype, "exact": False, "skipped": str(s), "cases": 0,
                 "mismatches": 0, "nan_pattern_mismatches": 0, "passed": True, "seconds": 0.0,
                 "causes": {}, "examples": []}
            print(f"[skip] {name:<28} {dtype:<9} {s}", flush=True)
            self.results.append(d)
        except Exception as ex:  # a crashing check is a failed check, not a crashed run
            d = {"name": name, "dtype": dtype, "exact": True, "error": repr(ex),
                 "traceback": traceback.format_exc(), "cases": 0, "mismatches": 0,
                 "nan_pattern_mismatches": 0, "passed": False, "seconds": 0.0,
                 "causes": {}, "examples": []}
            print(f"[ERR ] {name:<28} {dtype:<9} {ex!r}", flush=True)
            self.results.append(d)

    # 1. conversion from float32 ------------------------------------------
    def check_from_float32(self, dtype):
        f = FMT[dtype]
        r = Result("from_float32", dtype, True, self.claims_nan(f"cast:{f.name}"),
                   "x.to(dtype) for float32 x; model platform_to_bits (RNE, platform NaN)")
        if self.sweep:
            sf.platform_to_bits(np.zeros(4, np.float32), f, self.plat)            # compile
            cov = self._sweep32(r, f, dtype)
            yield r.finish(coverage=cov)
            return
        xs = [self._boundaries32(f),
              self.rng.integers(0, 1 << 32, self.n(1 << 22, 1 << 14), dtype=np.uint64).astype(np.uint32)]
        for x in xs:
            got = from_torch(to_torch(x, "float32", self.device).to(tdtype(dtype)))
            exp = sf.platform_to_bits(x.view(np.float32), f, self.plat)
            r.add(got, exp, f, [x], alts={
                "tie_rule": lambda m, x=x: sf.to_bits(x.view(np.float32)[m], f, "nearest_away"),
                "subnormal_flush": lambda m, x=x: sf.to_bits(x.view(np.float32)[m], f, ftz=True)})
        yield r.finish(coverage=None)

    def _boundaries32(self, f):
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

    def _sweep32(self, r, f, dtype):
        """All 2^32 float32 patterns (CUDA): chunks of 2^26 made on the device."""
        chunk = self.chunk
        starts = [lo for lo, _ in chunk_ranges(1 << 32, chunk, -(1 << 31))]
        return self._sweep(r, starts, lambda s: self._conv_chunk(r, f, dtype, s, chunk), chunk)

    def _conv_chunk(self, r, f, dtype, s, chunk):
        t = torch()
        xi = t.arange(s, s + chunk, dtype=t.int32, device=self.device)
        got = from_torch(xi.view(t.float32).to(tdtype(dtype)))
        u = s & 0xFFFFFFFF                      # the same patterns, unsigned
        x = np.arange(u, u + chunk, dtype=np.uint32)
        exp = sf.platform_to_bits(x.view(np.float32), f, self.plat)
        r.add(got, exp, f, [x])

    def _sweep(self, r, starts, do_chunk, chunk):
        """Run ``do_chunk`` over the chunk ``starts`` within this sweep's share of
        the time budget (`softfloat.budget.Budget`). Returns the coverage."""
        cov, note = self.budget.run(starts, do_chunk, self.max_chunks)
        if note:
            r.d["note"] = note
        return cov

    # 2. conversion from float64 ------------------------------------------
    def check_from_float64(self, dtype):
        f = FMT[dtype]
        r = Result("from_float64", dtype, True, self.claims_nan(f"cast64:{f.name}"),
                   "x.to(dtype) for float64 x: through float32 (double rounding)")
        pos = np.arange(0, f.inf_bits, dtype=np.uint32).astype(f.dtype)
        lo = sf.from_bits(pos[:-1], f)
        hi = sf.from_bits(pos[1:], f)
        mid = (lo + hi) / 2
        # just above / below each midpoint by less than half a float32 ulp: the
        # double-rounding cases (float32 rounds them onto the midpoint)
        tiny = np.spacing(mid.astype(np.float32)).astype(np.float64) / 4
        n = self.n(1 << 20, 1 << 12)
        rnd = self.rng.integers(0, 1 << 63, n, dtype=np.uint64)
        rnd = rnd[(rnd >> np.uint64(52) & np.uint64(0x7FF)) != 0x7FF]   # finite
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-300, 1e300,
                             1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -8 + 2.0 ** -40])
        parts = [mid + tiny, mid - tiny, mid, specials, rnd.view(np.float64),
                 self.rng.standard_normal(n)]
        x = np.concatenate([np.concatenate([p, -p]) for p in parts])
        if self.size == "tiny":
            x = x[self.rng.choice(x.size, min(x.size, 1 << 14), replace=False)]
        got = from_torch(t_from64(x, self.device).to(tdtype(dtype)))
        exp = sf.platform_to_bits(x, f, self.plat)
        r.add(got, exp, f, [x], alts={
            "double_rounding": lambda m: sf.to_bits(x[m], f)})
        yield r.finish()

    # 3. conversion to float32 ---------------------------------------------
    def check_to_float32(self, dtype):
        f = FMT[dtype]
        r = Result("to_float32", dtype, True, self.claims_nan(f"widen:{f.name}"),
                   "x.float() for all 2^16 inputs; exact widening")
        x = all16()
        got = from_torch(to_torch(x, dtype, self.device).float())
        exp = sf.platform_convert(x, f, FP32, self.plat)
        r.add(got, exp, FP32, [x])
        yield r.finish()

    # 4. tensor-tensor add, sub, mul, div ---------------------------------
    def check_binary(self, dtype):
        f = FMT[dtype]
        t = torch()
        ops = {"add": t.add, "sub": t.sub, "mul": t.mul, "div": t.div}
        for op, tf in ops.items():
            r = Result(f"{op}_tensor", dtype, True, self.claims_nan(f"result:{f.name}"),
                       f"torch.{op}(a, b) on {dtype} tensors; model platform_op('{op}')")
            alts = {
                "tie_rule": lambda m, a, b, op=op: getattr(sf, op)(a[m], b[m], f, "nearest_away"),
                "subnormal_flush": lambda m, a, b, op=op: getattr(sf, op)(a[m], b[m], f, subnormals=False),
            }
            if self.sweep:
                chunk = self.chunk
                sf.platform_op(op, edge16(f), edge16(f), fmt=f, platform=self.plat)  # compile
                starts = [lo for lo, _ in chunk_ranges(1 << 32, chunk)]
                cov = self._sweep(r, starts, lambda s, op=op, tf=tf, r=r: self._pair_chunk(
                    r, f, dtype, op, tf, s, chunk, alts), chunk)
                yield r.finish(coverage=cov)
                continue
            e = edge16(f)
            a1, b1 = np.meshgrid(e, e, indexing="ij")
            n = self.n(1 << 20, 1 << 13)
            for a, b in ((a1.reshape(-1), b1.reshape(-1)),
                         (random16(self.rng, n), random16(self.rng, n)),
                         (finite_random16(self.rng, n, f), finite_random16(self.rng, n, f))):
                got = from_torch(tf(to_torch(a, dtype, self.device), to_torch(b, dtype, self.device)))
                exp = sf.platform_op(op, a, b, fmt=f, platform=self.plat)
                r.add(got, exp, f, [a, b], {k: (lambda m, fn=fn, a=a, b=b: fn(m, a, b))
                                            for k, fn in alts.items()})
            yield r.finish(coverage=None)

    def _pair_chunk(self, r, f, dtype, op, tf, s, chunk, alts):
        t = torch()
        idx = t.arange(s, s + chunk, dtype=t.int64, device=self.device)
        ai = (((idx >> 16) ^ 0x8000) - 0x8000).to(t.int16).view(tdtype(dtype))
        bi = (((idx & 0xFFFF) ^ 0x8000) - 0x8000).to(t.int16).view(tdtype(dtype))
        got = from_torch(tf(ai, bi))
        if chunk >= 1 << 16:
            rows = chunk >> 16
            if rows not in self._tiles:      # b is the same in every chunk
                self._tiles[rows] = np.tile(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16),
                                            rows)
            b = self._tiles[rows]
            a = np.empty((rows, 1 << 16), np.uint16)
            a[:] = np.arange(s >> 16, (s + chunk) >> 16, dtype=np.uint32).astype(np.uint16)[:, None]
            a = a.reshape(-1)
        else:
            ii = np.arange(s, s + chunk, dtype=np.uint64)
            a = (ii >> np.uint64(16)).astype(np.uint16)
            b = (ii & np.uint64(0xFFFF)).astype(np.uint16)
        exp = sf.platform_op(op, a, b, fmt=f, platform=self.plat)
        r.add(got, exp, f, [a, b], {k: (lambda m, fn=fn: fn(m, a, b)) for k, fn in alts.items()})

    # 5. unary sqrt, neg, abs, relu over all 2^16 inputs ------------------
    def check_unary(self, dtype):
        f = FMT[dtype]
        t = torch()
        x = all16()
        for op, tf in {"sqrt": t.sqrt, "neg": t.neg, "abs": t.abs, "relu": t.relu}.items():
            what = f"result:{f.name}" if op == "sqrt" else f"signop:{f.name}"
            r = Result(op, dtype, True, self.claims_nan(what),
                       f"torch.{op}(x) for all 2^16 inputs")
            got = from_torch(tf(to_torch(x, dtype, self.device)))
            exp = sf.platform_op(op, x, fmt=f, platform=self.plat)
            alts = {}
            if op == "relu":
                other = "zero" if self.plat.relu_negzero == "keep" else "keep"
                alts["signed_zero"] = lambda m: sf.platform_op(
                    "relu", x[m], fmt=f, platform=self.plat.replace(relu_negzero=other))
            r.add(got, exp, f, [x], alts)
            yield r.finish()

    # 6. tensor-scalar ops under the device's scalar rules ----------------
    SCALARS = (0.1, 0.3, 1 / 3, -2.5, 3.0, 1e-3, 7e-6, 1e5, 65519.0, 1e-40, 3.0e38)

    def check_scalar(self, dtype):
        f = FMT[dtype]
        t = torch()
        ops = {"add": lambda x, s: x + s, "sub": lambda x, s: x - s,
               "mul": lambda x, s: x * s, "div": lambda x, s: x / s}
        x = all16() if self.size != "tiny" else random16(self.rng, 1 << 12)
        tx = to_torch(x, dtype, self.device)
        for op, tf in ops.items():
            r = Result(f"{op}_scalar", dtype, True, self.claims_nan(f"result:{f.name}"),
                       f"x {op} python_float for all x and scalars {list(self.SCALARS)}; rule: "
                       f"scalar '{self.plat.scalar_rule(op)}'" +
                       (f", division '{self.plat.scalar_div}'" if op == "div" else ""))
            flip = "narrow" if self.plat.scalar_rule(op) == "opmath" else "opmath"
            p_flip = self.plat.replace(scalars={**self.plat.scalars, op: flip, "*": flip})
            p_div = self.plat.replace(scalar_div="divide" if self.plat.scalar_div == "reciprocal"
                                      else "reciprocal")
            for s in self.SCALARS:
                got = from_torch(tf(tx, s))
                exp = sf.platform_op(op, x, s, fmt=f, platform=self.plat)
                alts = {"scalar_narrowing": lambda m, s=s: sf.platform_op(op, x[m], s, fmt=f, platform=p_flip)}
                if op == "div":
                    alts["reciprocal_division"] = lambda m, s=s: sf.platform_op(op, x[m], s, fmt=f, platform=p_div)
                alts["double_rounding"] = lambda m, s=s: getattr(sf, op)(
                    x[m], sf.to_bits(np.float64(s), f), f)
                r.add(got, exp, f, [x, np.float64(s)], alts)
            yield r.finish()

    # 7. fused ops: addcmul, addcdiv, lerp, add(alpha) --------------------
    def check_fused(self, dtype):
        f = FMT[dtype]
        t = torch()
        n = self.n(1 << 18, 1 << 12, 1 << 24)
        a, b, c = (finite_random16(self.rng, n, f, -10, 6) for _ in range(3))
        ta, tb, tc = (to_torch(v, dtype, self.device) for v in (a, b, c))
        unfused = self.plat.replace(fused=frozenset())
        cases = [
            ("addcmul", {}, lambda: t.addcmul(ta, tb, tc), (a, b, c)),
            ("addcmul", {"value": 0.3}, lambda: t.addcmul(ta, tb, tc, value=0.3), (a, b, c)),
            ("addcdiv", {}, lambda: t.addcdiv(ta, tb, tc), (a, b, c)),
            ("addcdiv", {"value": 0.3}, lambda: t.addcdiv(ta, tb, tc, value=0.3), (a, b, c)),
            ("lerp", {}, lambda: t.lerp(ta, tb, 0.3), (a, b, 0.3)),
            ("lerp", {}, lambda: t.lerp(ta, tb, 0.7), (a, b, 0.7)),
            ("lerp", {}, lambda: t.lerp(ta, tb, tc), (a, b, c)),
            ("add", {"alpha": 0.3}, lambda: t.add(ta, tb, alpha=0.3), (a, b)),
            ("sub", {"alpha": 2.5}, lambda: t.sub(ta, tb, alpha=2.5), (a, b)),
        ]
        for op, kw, tfn, operands in cases:
            label = op + "".join(f"_{k}{v}" for k, v in kw.items())
            if op == "lerp":
                label += "_w" + ("tensor" if isinstance(operands[2], np.ndarray) else str(operands[2]))
            r = Result(f"fused_{label}", dtype, True, self.claims_nan(f"result:{f.name}"),
                       f"torch.{op}({', '.join(f'{k}={v}' for k, v in kw.items())}); model "
                       f"platform_op with fused={sorted(self.plat.fused)}")
            got = from_torch(tfn())
            exp = sf.platform_op(op, *operands, fmt=f, platform=self.plat, **kw)
            sel = lambda m, o: o[m] if isinstance(o, np.ndarray) else o  # noqa: E731
            alts = {"unfused": lambda m, op=op, kw=kw, operands=operands: sf.platform_op(
                op, *[sel(m, o) for o in operands], fmt=f, platform=unfused, **kw)}
            flip = "narrow" if self.plat.scalar_rule(op) == "opmath" else "opmath"
            pf = self.plat.replace(scalars={"*": flip})
            alts["scalar_narrowing"] = lambda m, op=op, kw=kw, operands=operands: sf.platform_op(
                op, *[sel(m, o) for o in operands], fmt=f, platform=pf, **kw)
            r.add(got, exp, f, [o for o in operands if isinstance(o, np.ndarray)], alts)
            yield r.finish()

    # 8. transcendentals: bounded ----------------------------------------
    def check_transcendental(self, dtype):
        f = FMT[dtype]
        t = torch()
        x = all16()
        xv = sf.from_bits(x, f)
        erf = np.vectorize(math.erf, otypes=[np.float64])
        with np.errstate(all="ignore"):
            refs = {
                "exp": (t.exp, np.exp(xv)),
                "tanh": (t.tanh, np.tanh(xv)),
                "sigmoid": (t.sigmoid, 1.0 / (1.0 + np.exp(-xv))),
                "gelu": (lambda v: t.nn.functional.gelu(v),
                         0.5 * xv * (1.0 + erf(xv / math.sqrt(2.0)))),
                "gelu_tanh": (lambda v: t.nn.functional.gelu(v, approximate="tanh"),
                              0.5 * xv * (1.0 + np.tanh(math.sqrt(2 / math.pi)
                                                         * (xv + 0.044715 * xv ** 3)))),
            }
        for op, (tf, ref) in refs.items():
            r = Result(op, dtype, False, False,
                       f"torch {op} for all 2^16 inputs vs RN(float64 {op}) through the "
                       f"platform's float32 route; bounded", bounded=True)
            got = from_torch(tf(to_torch(x, dtype, self.device)))
            self.luts[f"{op}_{dtype}"] = got        # the device's table, saved as luts.npz
            exp = sf.platform_to_bits(ref, f, self.plat)
            r.add(got, exp, f, [x])
            yield r.finish()

    # 9. sum and mean ----------------------------------------------------
    def check_reduce(self, dtype):
        f = FMT[dtype]
        t = torch()
        sizes = {"quick": (1000, 4097, 65536, 300007), "tiny": (1000, 4097),
                 "full": (1000, 4097, 65536, 300007, 4_000_000)}[self.size]
        # (a) sums exact in float32 (values in [1, 2) times one sign pattern, n <= 8192):
        # every order gives the exact sum, so the model is bit-exact for sum and mean
        for red in ("sum", "mean"):
            r = Result(f"{red}_exact_data", dtype, True, self.claims_nan(f"result:{f.name}"),
                       f"{red} of 1-D data whose float32 sum is exact (values in [1,2), "
                       f"n <= 8192): bit-exact in any order; mean rule "
                       f"'{self.plat.reduction.mean}'")
            for n in (1, 3, 7, 100, 1000, 3000, 4097, 8191):
                for rep in range(self.n(4, 2)):
                    v = self.rng.uniform(1.0, 2.0, n) * self.rng.choice([-1.0, 1.0]) * \
                        (2.0 ** self.rng.integers(-4, 4))
                    xb = sf.to_bits(v, f)
                    got = from_torch(getattr(t, red)(to_torch(xb, dtype, self.device)))
                    model = sf.platform_sum if red == "sum" else sf.platform_mean
                    exp = model(xb, f, platform=self.plat)
                    alt_p = self.plat.replace(reduction=sf.Reduction(
                        "fp32", "sequential",
                        "divide" if self.plat.reduction.mean == "reciprocal" else "reciprocal"))
                    r.add(np.atleast_1d(got), np.atleast_1d(exp), f, [np.float64(n)],
                          {"mean_rule": lambda m, xb=xb: np.atleast_1d(sf.platform_mean(xb, f, platform=alt_p))})
            # all -0: the float32 identity is +0
            z = np.full(17, f.sign_mask, f.dtype)
            got = from_torch(getattr(t, red)(to_torch(z, dtype, self.device)))
            exp = (sf.platform_sum if red == "sum" else sf.platform_mean)(z, f, platform=self.plat)
            r.add(np.atleast_1d(got), np.atleast_1d(exp), f, [np.float64(17)])
            yield r.finish()
        # (b) general data: exact where the platform's order is transcribed
        # (torch_cpu: softfloat.torch_models), else bounded against pairwise float32
        modelled = self.device == "cpu" and self.plat.name == "torch_cpu"
        th = t.get_num_threads()
        for red in ("sum", "mean"):
            if modelled:
                r = Result(f"{red}_general", dtype, True, False,
                           f"{red} of random data, n in {list(sizes)}, {th} thread(s), vs the "
                           f"transcribed torch CPU order (softfloat.torch_models)")
            else:
                r = Result(f"{red}_general", dtype, False, False,
                           f"{red} of random data, n in {list(sizes)}, vs the pairwise float32 "
                           f"model; the device order ({self.plat.reduction.order}) is not "
                           f"transcribed: bounded", bounded=True)
            for n in sizes:
                xb = finite_random16(self.rng, n, f, -6, 6)
                got = from_torch(getattr(t, red)(to_torch(xb, dtype, self.device)))
                model = sf.platform_sum if red == "sum" else sf.platform_mean
                if modelled:
                    exp = model(xb, f, platform=self.plat, threads=th)
                else:
                    exp = model(xb, f, platform=self.plat, order="pairwise")
                r.add(np.atleast_1d(got), np.atleast_1d(exp), f, [np.float64(n)],
                      {"order_of_accumulation": lambda m: np.atleast_1d(got)})
            yield r.finish(threads=t.get_num_threads())

    # 10. matmul: bounded --------------------------------------------------
    def check_matmul(self, dtype):
        f = FMT[dtype]
        t = torch()
        shapes = {"quick": ((64, 16, 64), (64, 256, 64), (32, 1024, 32)),
                  "tiny": ((16, 16, 16), (8, 128, 8)),
                  "full": ((64, 16, 64), (64, 256, 64), (64, 4096, 64), (128, 1024, 128))}[self.size]
        modelled = self.device == "cpu" and self.plat.name == "torch_cpu"
        from softfloat import torch_models as TM
        r = Result("matmul", dtype, modelled, False,
                   (f"a @ b for shapes (m,k,n) {[s for s in shapes if TM.matmul_claimed(*s, f)]} "
                    f"vs the transcribed torch CPU GEMM kernels (torch_cpu_matmul)") if modelled
                   else (f"a @ b for shapes (m,k,n) {list(shapes)} vs the fp32-accumulation model "
                         f"(exact products, sequential fma in float32, one rounding); bounded"),
                   bounded=not modelled)
        rb = Result("matmul_unmodelled", dtype, False, False,
                    "bf16 a @ b with k > 4096 on oneDNN: k chunking not probed there; "
                    "bounded", bounded=True)
        for m, k, n in shapes:
            a = finite_random16(self.rng, m * k, f, -4, 2).reshape(m, k)
            b = finite_random16(self.rng, k * n, f, -4, 2).reshape(k, n)
            got = from_torch(to_torch(a, dtype, self.device) @ to_torch(b, dtype, self.device))
            exp = sf.platform_matmul(a, b, f, platform=self.plat)
            (r if not modelled or TM.matmul_claimed(m, k, n, f) else rb).add(
                got, exp, f, [np.float64(k)])
        yield r.finish()
        if rb.d["cases"]:
            yield rb.finish(note="not claimed: oneDNN's k chunking was probed up to "
                                 "k = 4096 only")

    # 11. one GradScaler-driven training step of the nn MLP ------------------
    def check_gradscaler_step(self, dtype):
        """Training steps of the `nn` MLP (fp16/bf16 storage, fp32 master weights,
        fp32 accumulation, dynamic loss scaling) against torch (autocast to
        ``dtype`` + GradScaler + SGD on fp32 parameters). The scale is started high
        so that the first steps overflow and back off; growth_interval 2 makes it
        grow again. Claimed: the loss-scale trajectory and the skipped steps equal;
        weights within a stated bound (torch rounds activations only at its
        autocast points, nn after every op, so weights agree to a few fp16 ulps of
        the update, not bit for bit)."""
        try:
            from nn import MLP, SGD, Precision, make_scaler, train_step
        except Exception as ex:  # nn/ is optional for this script
            raise _Skip(f"nn is not importable ({ex!r})")
        t = torch()
        f = FMT[dtype]
        steps = self.n(8, 4)
        sizes = [8, 16, 4]
        init_scale = {"float16": 2.0 ** 22, "bfloat16": 2.0 ** 130}[dtype]  # bf16: overflow fp32
        opts = {"growth_interval": 2}
        P = Precision(params=f.name, accumulate="fp32", master_weights=True,
                      loss_scaling="dynamic", loss_scale=min(init_scale, 2.0 ** 127),
                      scaler_options=opts)
        with P:
            model = MLP(sizes, seed=3)
            w0 = [np.array(p.data, np.float32) for p in model.parameters()]
            opt = SGD(model.parameters(), lr=0.05, precision=P)
            scaler = make_scaler(P)
        rng = np.random.default_rng(7)
        gain = self.nn_gain[dtype]
        xs = [(gain * rng.standard_normal((32, sizes[0]))).astype(np.float32) for _ in range(steps)]
        ys = [rng.integers(0, sizes[-1], 32) for _ in range(steps)]
        ours_scale = []
        for x, y in zip(xs, ys):
            ours_scale.append(scaler.scale)
            with np.errstate(over="ignore", invalid="ignore"):   # overflow is the point
                train_step(model, opt, scaler, x, y, task="classify")
        ours_scale.append(scaler.scale)
        ours_w = [np.array(m, np.float32) for m in (opt.master if opt.master is not None
                                                    else [p.data for p in model.parameters()])]
        # torch: the same MLP with fp32 parameters, autocast to dtype, GradScaler
        dev = self.device
        layers = []
        for i in range(0, len(w0), 2):
            lin = t.nn.Linear(w0[i].shape[0], w0[i].shape[1])
            with t.no_grad():
                lin.weight.copy_(t.from_numpy(w0[i].T.copy()))
                lin.bias.copy_(t.from_numpy(w0[i + 1]))
            layers += [lin, t.nn.ReLU()]
        net = t.nn.Sequential(*layers[:-1]).to(dev)
        topt = t.optim.SGD(net.parameters(), lr=0.05)
        gs = t.amp.GradScaler(dev, init_scale=min(init_scale, 2.0 ** 127), growth_interval=2)
        theirs_scale = []
        for x, y in zip(xs, ys):
            theirs_scale.append(float(gs.get_scale()))
            topt.zero_grad()
            with t.autocast(device_type=dev, dtype=tdtype(dtype)):
                out = net(t.from_numpy(x).to(dev))
                loss = t.nn.functional.cross_entropy(out.float(), t.from_numpy(y).to(dev))
            gs.scale(loss).backward()
            gs.step(topt)
            gs.update()
        theirs_scale.append(float(gs.get_scale()))
        theirs_w = []
        for lin in net:
            if isinstance(lin, t.nn.Linear):
                theirs_w += [lin.weight.detach().cpu().numpy().T, lin.bias.detach().cpu().numpy()]
        r = Result("gradscaler_step", dtype, True, False,
                   f"{steps} SGD steps of MLP{sizes} with dynamic loss scaling "
                   f"(init {min(init_scale, 2.0 ** 127):g}, growth_interval 2), fp32 master "
                   f"weights: scale trajectory exact, weights bounded")
        a = np.array(ours_scale, np.float32).view(np.uint32)
        b = np.array(theirs_scale, np.float32).view(np.uint32)
        r.add(b, a, FP32, [np.arange(a.size, dtype=np.float64)])
        diffs = [np.abs(o - w) for o, w in zip(ours_w, theirs_w)]
        moved = [np.abs(w - i) for w, i in zip(theirs_w, w0)]
        max_abs = float(max(d.max() for d in diffs))
        max_move = float(max(m.max() for m in moved))
        u = f.unit_roundoff
        bound = 8 * steps * u * max(max_move, 1e-12)
        d = r.finish(scale_trajectory_ours=ours_scale, scale_trajectory_torch=theirs_scale,
                     weights_max_abs_diff=max_abs, weights_max_update=max_move,
                     weights_bound=f"max |w_nn - w_torch| <= 8 * steps * u({f.name}) * "
                                   f"(largest weight change) = {bound:.3g}",
                     weights_within_bound=bool(max_abs <= bound))
        d["passed"] = d["passed"] and d["weights_within_bound"]
        yield d

    # 12. torch CPU reduction and GEMM models (softfloat.torch_models): exact -----
    def check_torch_models(self, dtype):
        """Random shapes, layouts (contiguous, transposed, sliced), dims and thread
        counts; values of mixed magnitudes with cancelling pairs. Exact checks
        against `softfloat.torch_models` (CPU only)."""
        if self.device != "cpu":
            raise _Skip("the torch_models check is for torch CPU (CUDA: validation/cuda_probe.py)")
        from softfloat import torch_models as TM
        t = torch()
        dts = [dtype] + (["float32"] if dtype == DTYPES[0] else [])
        n_inputs = self.n(3000, 40)
        keep_threads = t.get_num_threads()
        try:
            for dt in dts:
                f = sf.get_format({"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}[dt])
                res = {op: Result(f"model_{op}", dt, True, False,
                                  f"torch.{op} on random shapes/layouts/dims, threads 1 and 2, vs "
                                  f"softfloat.torch_models (transcribed order)")
                       for op in ("sum", "mean", "cumsum")}
                inputs = {op: 0 for op in res}
                for _ in range(n_inputs):
                    x, tx, axis, th = self._model_input(f, dt)
                    t.set_num_threads(th)
                    for op, r in res.items():
                        if op == "cumsum" and axis is None:
                            continue
                        fn = getattr(t, op)
                        got = from_torch(fn(tx) if axis is None else fn(tx, dim=axis))
                        exp = {"sum": TM.torch_cpu_sum, "mean": TM.torch_cpu_mean}.get(op)
                        exp = (exp(x, f, axis, threads=th) if exp else TM.torch_cpu_cumsum(x, f, axis))
                        r.add(np.atleast_1d(got), np.atleast_1d(exp), f, [])
                        inputs[op] += 1
                for op, r in res.items():
                    note = None
                    if op == "sum" and dt != "float32":
                        note = ("thread-dependent order modelled: with 2 threads a sum of >= "
                                "32,768 elements into one output is split in two halves whose "
                                "partial sums are rounded to the dtype (torch_cpu_sum threads=)")
                    yield r.finish(inputs=inputs[op], **({"note": note} if note else {}))
                if dt == "float32":
                    continue
                r = Result("model_matmul", dt, True, False,
                           "mm (a, b row-major or transposed), addmm with bias (a row-major or "
                           "transposed), linear with "
                           "and without bias, on random (m,k,n): m,n in [2,64], k in [1,4096] "
                           "(log-uniform), threads 1 and 2; claimed where "
                           "torch_models.matmul_claimed (bf16 oneDNN path: k <= 4096)")
                rb = Result("model_matmul_unclaimed", dt, False, False,
                            "bf16 on oneDNN (m*n*k > 4096) with k > 4096: k chunking not "
                            "probed there; bounded", bounded=True)
                count = 0
                for _ in range(self.n(1000, 20)):
                    m, n = (int(v) for v in self.rng.integers(2, 65, 2))
                    k = int(np.exp(self.rng.uniform(0, np.log(4096))))
                    th = int(self.rng.integers(1, 3))
                    t.set_num_threads(th)
                    a = self._model_values(f, m * k).reshape(m, k)
                    bt = self._model_values(f, n * k).reshape(n, k)
                    bias = self._model_values(f, n)
                    layout = str(self.rng.choice(["rowmajor", "a_T", "both_T", "linear",
                                                  "linear_bias", "bias_rowmajor", "bias_a_T"]))
                    ta, tbt = to_torch(a, dt, "cpu"), to_torch(bt, dt, "cpu")
                    b = np.ascontiguousarray(bt.T)
                    tb = to_torch(b, dt, "cpu")
                    aT = np.ascontiguousarray(a.T)
                    taT = to_torch(aT, dt, "cpu")
                    use_bias = "bias" in layout
                    if layout == "rowmajor":
                        got, exp = from_torch(ta @ tb), TM.torch_cpu_matmul(a, b, f)
                    elif layout == "a_T":
                        got, exp = from_torch(taT.t() @ tb), TM.torch_cpu_matmul(aT.T, b, f)
                    elif layout == "both_T":
                        got = from_torch(taT.t() @ tbt.t())
                        exp = TM.torch_cpu_matmul(aT.T, bt.T, f)
                    elif layout == "bias_rowmajor":
                        got = from_torch(t.addmm(to_torch(bias, dt, "cpu"), ta, tb))
                        exp = TM.torch_cpu_matmul(a, b, f, bias=bias)
                    elif layout == "bias_a_T":
                        got = from_torch(t.addmm(to_torch(bias, dt, "cpu"), taT.t(), tb))
                        exp = TM.torch_cpu_matmul(aT.T, b, f, bias=bias)
                    else:
                        wb = to_torch(bias, dt, "cpu") if use_bias else None
                        got = from_torch(t.nn.functional.linear(ta, tbt, wb))
                        exp = TM.torch_cpu_matmul(a, bt.T, f, bias=bias if use_bias else None)
                    claimed = TM.matmul_claimed(m, k, n, f)
                    (r if claimed else rb).add(got, exp, f, [])
                    count += claimed
                yield r.finish(inputs=count)
                if rb.d["cases"]:
                    yield rb.finish(note="not claimed: oneDNN's k chunking was probed "
                                         "up to k = 4096 only")
        finally:
            t.set_num_threads(keep_threads)

    def _model_values(self, f, n):
        """Mixed magnitudes: log2|x| uniform in [-8, 4], 5% scaled by 2^6..2^10,
        a third of the values cancelled by a negated copy elsewhere, 2% zeros of
        either sign, and now and then an all -0 input."""
        v = np.exp2(self.rng.uniform(-8, 4, n)) * self.rng.choice([-1.0, 1.0], n)
        big = self.rng.random(n) < 0.05
        v[big] *= 2.0 ** self.rng.integers(6, 11, int(big.sum()))
        if n >= 2:
            idx = self.rng.permutation(n)
            h = n // 3
            v[idx[h:2 * h]] = -v[idx[:h]]
        zero = self.rng.random(n) < 0.02                 # signed zeros
        v[zero] = self.rng.choice([0.0, -0.0], int(zero.sum()))
        if self.rng.random() < 0.02:                     # now and then all -0
            v[:] = -0.0
        return sf.to_bits(v, f)

    def _model_input(self, f, dt):
        """(encodings as a NumPy view, the same view in torch, axis, threads)."""
        t = torch()
        th = int(self.rng.integers(1, 3))
        if self.rng.random() < 0.4:
            n = int(np.exp(self.rng.uniform(0, np.log(self.n(70000, 5000)))))
            base = self._model_values(f, n)
            tb = to_torch(base, dt, "cpu")
            if self.rng.random() < 0.25 and n > 1:
                return base[::2], tb[::2], self.rng.choice([None, 0]), th
            return base, tb, self.rng.choice([None, 0]), th
        R, C = (int(np.exp(self.rng.uniform(0, np.log(300)))) for _ in range(2))
        base = self._model_values(f, R * C).reshape(R, C)
        tb = to_torch(base, dt, "cpu").reshape(R, C)
        axis = [None, 0, 1][int(self.rng.integers(0, 3))]
        view = int(self.rng.integers(0, 3))
        if view == 1:
            return base.T, tb.t(), axis, th
        if view == 2 and C > 1:
            return base[:, ::2], tb[:, ::2], axis, th
        return base, tb, axis, th


def t_from64(x: np.ndarray, device: str):
    return torch().from_numpy(np.ascontiguousarray(x)).to(device)


class _Skip(Exception):
    pass


CHECKS = ["from_float32", "from_float64", "to_float32", "binary", "unary", "scalar", "fused",
          "transcendental", "reduce", "matmul", "gradscaler_step", "torch_models"]


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------
def write_report(out, meta, results):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.json"), "w") as fh:
        json.dump({"meta": meta, "checks": results}, fh, indent=1, sort_keys=False)
    lines = [f"# torch cross-check: {meta['device']} ({meta['size']})", "",
             f"torch {meta['torch']} · softfloat {meta['softfloat']} · platform "
             f"`{meta['platform']}` · {meta['device_name']} · {meta['date']} · "
             f"{meta['seconds']:.0f} s · threads {meta['threads']}", "",
             f"**{meta['failed']} exact check(s) failed** of {meta['exact_checks']} claiming "
             f"bit-exactness; {meta['bounded_checks']} bounded.", "",
             "| check | dtype | exact | cases | mismatches | NaN-pattern | max ulp (normal) | causes | coverage |",
             "|---|---|---|---:|---:|---:|---:|---|---:|"]
    for d in results:
        causes = ", ".join(f"{k} {v}" for k, v in sorted(d.get("causes", {}).items()))
        if d.get("skipped"):
            causes = "skipped: " + d["skipped"]
        if d.get("error"):
            causes = "ERROR: " + d["error"]
        ex = "yes" if d["exact"] else "bounded"
        if d["exact"] and not d.get("nan_claimed", True):
            ex += " (NaN as NaN)"
        mark = "" if d["passed"] else " **FAIL**"
        cov = d.get("coverage")
        lines.append(f"| {d['name']}{mark} | {d['dtype']} | {ex} | {d['cases']} | "
                     f"{d['mismatches']} | {d['nan_pattern_mismatches']} | "
                     f"{_ulp_cell(d)} | {causes} | {'' if cov is None else cov} |")
    lines += ["", "## Bounded checks: ulp histograms", ""]
    for d in results:
        if "ulp_histogram" in d:
            h = d["ulp_histogram"]
            keys = sorted(h, key=lambda k: 99 if k.startswith(">") else int(k))
            lines.append(f"- {d['name']} {d['dtype']}: " + ", ".join(f"{k} ulp: {h[k]}" for k in keys))
    lines += ["", "## Notes", ""]
    for d in results:
        if d.get("note"):
            lines.append(f"- {d['name']} {d['dtype']}: {d['note']}")
        if "scale_trajectory_torch" in d:
            lines.append(f"- {d['name']} {d['dtype']}: loss scale (torch) "
                         f"{d['scale_trajectory_torch']}; equal in nn: "
                         f"{d['scale_trajectory_ours'] == d['scale_trajectory_torch']}; weights "
                         f"max |diff| {d['weights_max_abs_diff']:.3g}, bound: {d['weights_bound']}"
                         f" ({'within' if d['weights_within_bound'] else 'OUTSIDE'})")
    lines += ["- `NaN-pattern`: both results NaN with different bits; counted as mismatches "
              "only where the platform claims its NaN pattern for that path.",
              "- causes: `nan_pattern`, `nan_vs_number`, `signed_zero`, `subnormal_flush`, "
              "`tie_rule` (matches round-half-away), `double_rounding` (matches a direct "
              "rounding), `scalar_narrowing` (matches the other scalar rule), "
              "`reciprocal_division`, `unfused`, `mean_rule`, `order_of_accumulation`, "
              "`one_ulp_other`, `other`."]
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def _ulp_cell(d):
    if "max_ulp" not in d:
        return ""
    return f"{d['max_ulp']} ({d['max_ulp_normal']})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=("cuda", "cpu"), required=True)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="sampled sweeps (CI-sized)")
    g.add_argument("--tiny", action="store_true", help="small samples (unit tests)")
    ap.add_argument("--out", required=True, help="directory for report.json and report.md")
    ap.add_argument("--only", nargs="*", choices=CHECKS, help="run only these checks")
    ap.add_argument("--dtypes", nargs="*", choices=DTYPES, default=list(DTYPES))
    ap.add_argument("--seed", type=int, default=20260101)
    ap.add_argument("--budget-s", type=float, default=300.0,
                    help="seconds for the 2^32 sweeps together (cuda full run)")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (cpu)")
    ap.add_argument("--luts", action="store_true",
                    help="save DIR/luts.npz (always on for cuda)")
    ap.add_argument("--platform", default=None,
                    help="softfloat platform to check against (default: torch_<device>)")
    ap.add_argument("--sweep", action="store_true",
                    help="run the 2^32 sweep code (default only for a cuda full run)")
    ap.add_argument("--chunk-log2", type=int, default=26, help="sweep chunk size, log2")
    ap.add_argument("--max-chunks", type=int, default=0,
                    help="sweep only this many evenly spaced chunks (0: all; for testing)")
    args = ap.parse_args(argv)
    t = torch()
    if args.device == "cuda" and not t.cuda.is_available():
        print("error: --device cuda but torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    if args.threads:
        t.set_num_threads(args.threads)
    runner = Runner(args)
    checks = args.only or CHECKS
    runner.budget.runs = max(1, len(args.dtypes) * (("from_float32" in checks) +
                                                    4 * ("binary" in checks)))
    t0 = time.perf_counter()
    for name in checks:
        for dtype in args.dtypes:
            runner.run_check(getattr(runner, "check_" + name), dtype)
    res = runner.results
    failed = sum(1 for d in res if not d["passed"])
    meta = {
        "device": args.device, "size": runner.size, "platform": runner.plat.name,
        "torch": t.__version__, "softfloat": sf.__version__, "numpy": np.__version__,
        "python": _pyplatform.python_version(),
        "device_name": (t.cuda.get_device_name(0) if args.device == "cuda"
                        else (_pyplatform.processor() or _pyplatform.machine())),
        "cpu_capability": getattr(t.backends.cpu, "get_cpu_capability", lambda: "")(),
        "threads": t.get_num_threads(), "seed": args.seed, "sweep": runner.sweep,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seconds": time.perf_counter() - t0, "failed": failed,
        "exact_checks": sum(1 for d in res if d["exact"]),
        "bounded_checks": sum(1 for d in res if not d["exact"] and not d.get("skipped")),
    }
    if args.device == "cuda":
        meta["cuda"] = t.version.cuda
        meta["sm"] = ".".join(map(str, t.cuda.get_device_capability(0)))
    write_report(args.out, meta, res)
    if runner.luts and (args.device == "cuda" or args.luts):
        # torch's result for every 16-bit input: a per-device lookup table
        np.savez_compressed(os.path.join(args.out, "luts.npz"), **runner.luts)
    print(f"{failed} failed of {len(res)} checks; report in {args.out} "
          f"({meta['seconds']:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
