"""The sweep engine: check an operation over every operand pattern (or a
sub-space, or a seeded random subset) against an oracle computed another way
(`softfloat.sweep_oracles`), comparing result bits, flags and the NaN bit
pattern the NaN policy promises.

The operand space of one sweep is a range of case indices ``0 .. total-1``, the
mixed-radix numbering of a product of operand sets (row-major, the last operand
fastest):

* binary ops (``add``, ``sub``, ``mul``, ``div``) of an n-bit format: every
  pair (2**32 for fp16 and bf16): case ``i`` is ``a = i >> n``, ``b = i & (2**n - 1)``;
* ``fma``: every triple (2**48 for fp16 and bf16), or a sub-space: a set of
  values per operand (``a=``, ``b=``, ``c=``: ranges, lists), or the
  structured ``c_family="cancel"``: for every (a, b) the 16 addends
  ``-RN(a*b) + d`` (d = -5..5 units in the last place, where the sum cancels),
  ``RN(a*b)``, both zeros and both largest finite values; or the smaller
  ``c_family="cancel4"``: for every (a, b) four addends, ``-RN(a*b)`` and its
  two neighbours (-1, +1 unit in the last place) plus one extreme value chosen
  by ``(a ^ b) & 3`` (+0, -0, +max, -max), so every pair meets each kind of
  hard addend and the whole 2**32 pairs make 2**34 triples;
* unary ops (``sqrt``) and conversions (``convert:<dst>``): every encoding
  (formats of at most 19 bits: tf32's 2**19 included);
* ``from_float32`` into a format: every float32 bit pattern (2**32), rounded
  by `softfloat.to_bits`.

Shard ``k`` of ``S`` is the index range ``[total*k//S, total*(k+1)//S)``: a pure
function of (k, S), so shards can run anywhere (local processes, a Dask
cluster), in any order, and merge. With ``sample=K`` each shard checks
``ceil(K/S)`` indices drawn from its range by a generator seeded with
``(seed, k)``.

Python::

    from softfloat.sweep import run_sweep
    report = run_sweep("add", "fp16", "nearest_even", out="my-sweeps", jobs=2)

Command line (without ``--out``, a new directory ``./sweep-<format>-<op>-<UTC
time>/`` per run; the committed ``sweeps/`` is written only with ``--out sweeps``)::

    python -m softfloat sweep fp16 add --rounding all --jobs 2 --out my-sweeps --resume
    python -m softfloat sweep bf16 convert:fp8_e4m3 --rounding nearest_even,toward_zero
    python -m softfloat sweep fp16 mul --sample 1000000 --mpfr 2000
    python -m softfloat sweep fp16 fma --c 0x3c00 --rounding all      # c fixed: 2**32 cases
    python -m softfloat sweep fp16 fma --c-family cancel --backend dask --scheduler tcp://host:8786
    python -m softfloat sweep table --out sweeps          # the whole table, then RESULTS.md
    python -m softfloat sweep --summarize sweeps          # writes sweeps/RESULTS.md

Results: one JSON file per shard under ``OUT/<name>.shards/`` naming its id,
its parameters and a SHA-256 checksum of its content (``--resume`` reuses the
shards whose file verifies and recomputes the others) and the merged report,
one line of ``OUT/reports.jsonl`` (one JSON object per run, sorted by run name;
a rerun replaces its own line only): op, format, mode, oracle, cases checked, mismatches (split
into result-bits mismatches and flag-only mismatches), the first mismatches
(operands, expected, got, flags) and seconds.

Exit statuses of the command: 0 no mismatch, 1 mismatches found, 2 could not
run (bad arguments, unwritable output, a missing optional extra, a Dask scheduler
that does not answer: one line on stderr), 130 after Ctrl-C.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import sys
import time

import numpy as np

from . import sweep_oracles as O
from .formats import FP32, Format, get_format
from .rounding import DETERMINISTIC_MODES, Rounding, get_rounding

__all__ = ["run_sweep", "run_shard", "shard_cases", "shard_range", "total_cases",
           "load_reports", "store_report", "report_name", "REPORTS", "check_sizes",
           "probe_scheduler", "require", "default_out",
           "merge_shards", "default_shards", "summarize", "main", "OPS", "Space",
           "chunk_starts", "run_within_budget", "BudgetResult", "verify_shard_file",
           "ShardFileError", "table_runs", "run_table", "parse_values", "run_parallel"]

OPS = O.BINARY_OPS + O.UNARY_OPS + O.TERNARY_OPS + ("convert:<format>", "from_float32")
BLOCK = 1 << 20            # cases per kernel call
FAMILY_SIZE = 16           # addends per (a, b) pair of the "cancel" fma family
FAMILIES = {"cancel": FAMILY_SIZE, "cancel4": 4}   # fma addend families and their sizes
SHARD_FORMAT = 2           # version of the shard file layout
MAX_UNARY_BITS = 19        # unary ops and conversions: sources up to tf32 (2**19 encodings)


# ---------------------------------------------------------------------------
# generic helpers, public and stable (validation/torch_crosscheck.py reuses them)
def chunk_starts(lo: int, hi: int, chunk: int) -> list:
    """Starts of the chunks of ``chunk`` items covering [lo, hi) (the last may be short)."""
    if chunk < 1:
        raise ValueError(f"chunk must be a positive integer, got {chunk!r}")
    return list(range(int(lo), int(hi), int(chunk)))


class BudgetResult:
    """What `run_within_budget` did: ``done`` of ``total`` items, a ``note``
    (empty when every item ran), and ``seconds``."""

    def __init__(self, done, total, note, seconds):
        self.done, self.total, self.note, self.seconds = done, total, note, seconds

    @property
    def coverage(self) -> float:
        return round(self.done / self.total, 6) if self.total else 1.0


def run_within_budget(items, work, budget_s: float, *, clock=time.perf_counter) -> BudgetResult:
    """Call ``work(item)`` over ``items`` in order within ``budget_s`` seconds:
    once the items done so far project past the budget, go on over an evenly
    strided subset of the rest (every k-th), or stop when none fits."""
    left = list(items)
    total = len(left)
    t0 = clock()
    done = 0
    note = ""
    while left:
        work(left.pop(0))
        done += 1
        el = clock() - t0
        per = el / done
        if left and el + per * len(left) > budget_s:
            fit = int((budget_s - el) / per)
            if fit <= 0:
                note = f"time budget ({budget_s:.0f} s): stopped after {done} chunks"
                left = []
            elif fit < len(left):
                k = math.ceil(len(left) / fit)
                left = left[::k]
                note = (f"time budget ({budget_s:.0f} s): after {done} chunks, every "
                        f"{k}-th of the remaining chunks was swept")
    return BudgetResult(done, total, note, clock() - t0)


def parse_values(spec, fmt) -> np.ndarray:
    """Operand encodings from a spec: an int, an iterable of ints, or a string of
    comma-separated hex/decimal values and inclusive ranges (``0x3c00-0x3cff``).
    Sorted, unique, checked against the format's width."""
    f = get_format(fmt)
    if isinstance(spec, str):
        vals = []
        for part in spec.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                if "-" in part[1:]:
                    i = part.index("-", 1)
                    x, y = int(part[:i], 0), int(part[i + 1:], 0)
                    if y < x:
                        raise ValueError
                    vals.append(np.arange(x, y + 1, dtype=np.int64))
                else:
                    vals.append(np.array([int(part, 0)], np.int64))
            except ValueError:
                raise ValueError(f"bad operand set {spec!r}: expected comma-separated values "
                                 f"or ranges such as 0x3c00-0x3cff") from None
        v = np.concatenate(vals) if vals else np.empty(0, np.int64)
    elif isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        v = np.array([int(spec)], np.int64)
    else:
        v = np.asarray(list(spec), dtype=np.int64) if not isinstance(spec, np.ndarray) \
            else spec.astype(np.int64)
    v = np.unique(v)
    if v.size == 0:
        raise ValueError(f"empty operand set {spec!r}")
    if v[0] < 0 or v[-1] >= (1 << f.nbits):
        raise ValueError(f"operand set {spec!r}: encodings of {f.name} are 0 .. "
                         f"{(1 << f.nbits) - 1:#x}")
    return v.astype(f.dtype)


def require(module: str, extra: str, feature: str) -> None:
    """Raise ImportError naming the extra to install unless ``module`` imports
    (checked before any work, so a plain install fails at once and clearly)."""
    import importlib
    try:
        importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{feature} needs {module}: pip install "
                          f"'softfloat-lab[{extra}]'") from None


# ---------------------------------------------------------------------------
# the operand space
def _kind(op: str) -> str:
    if op in O.BINARY_OPS:
        return "binary"
    if op in O.UNARY_OPS:
        return "unary"
    if op in O.TERNARY_OPS:
        return "ternary"
    if op.startswith("convert:"):
        return "convert"
    if op == "from_float32":
        return "from_float32"
    raise ValueError(f"unknown op {op!r}; expected one of {list(OPS)}")


def _pow2(n):
    return n > 0 and n & (n - 1) == 0


class Space:
    """The operand space of a sweep: the operation, its formats, and the operand
    sets (``sets[j]`` None = every encoding) or the fma family."""

    def __init__(self, op, fmt, a=None, b=None, c=None, c_family=None):
        if not isinstance(op, str):
            raise TypeError(f"op must be a string, got {type(op).__name__}")
        self.op = op
        self.kind = _kind(op)
        self.f = get_format(fmt)
        self.dst = get_format(op.split(":", 1)[1]) if self.kind == "convert" else self.f
        self.src = FP32 if self.kind == "from_float32" else self.f
        f = self.f
        if f.kind == "fnu" or self.dst.kind == "fnu":
            fn = f.name if f.kind == "fnu" else self.dst.name
            raise ValueError(f"sweeps do not cover fnu formats ({fn}: no sign, no zero); "
                             f"tests/test_mx_formats.py checks e8m0 against the exact reference")
        if self.kind in ("binary", "ternary") and f.nbits > 16:
            raise ValueError(f"{op} sweeps cover formats of at most 16 bits, not {f.name}")
        if self.kind in ("unary", "convert") and f.nbits > MAX_UNARY_BITS:
            raise ValueError(f"{op} sweeps cover formats of at most {MAX_UNARY_BITS} bits "
                             f"(tf32), not {f.name}")
        if self.kind == "from_float32" and f.precision > 25:
            raise ValueError(f"from_float32 sweeps target formats of at most 16 bits")
        nargs = {"binary": 2, "ternary": 3}.get(self.kind, 1)
        given = {"a": a, "b": b, "c": c}
        for name, v in given.items():
            if v is not None and "abc".index(name) >= nargs:
                raise ValueError(f"{op} has no operand {name!r}")
        if c_family is not None:
            if self.kind != "ternary":
                raise ValueError("c_family is for fma sweeps")
            if c_family not in FAMILIES:
                raise ValueError(f"unknown c_family {c_family!r}; expected one of "
                                 f"{sorted(FAMILIES)}")
            if c is not None:
                raise ValueError("give either c or c_family")
            if f.name not in ("fp16", "bf16"):
                raise ValueError("the cancel families are defined for fp16 and bf16")
        self.c_family = c_family
        self.sets = [None if given[n] is None else parse_values(given[n], f)
                     for n in "abc"[:nargs]]
        full = 1 << (32 if self.kind == "from_float32" else f.nbits)
        self.sizes = [full if s is None else int(s.size) for s in self.sets]
        if c_family:
            self.sizes[2] = FAMILIES[c_family]
        self.total = int(np.prod(self.sizes, dtype=object))

    def describe(self) -> dict:
        """The sub-space, for configs and reports (None where every encoding)."""
        d = {}
        for n, s in zip("abc", self.sets):
            if s is not None:
                d[n] = _compact(s)
        if self.c_family:
            d["c_family"] = self.c_family
        return d

    # operands -------------------------------------------------------------
    def _axis_values(self, j, idx):
        s = self.sets[j]
        dt = np.uint32 if self.kind == "from_float32" else self.f.dtype
        if s is None:
            return idx.astype(dt)
        return s[idx]

    def operands(self, idx):
        """Operand arrays (1-D, in the source dtype) of the case indices ``idx``."""
        idx = np.asarray(idx)
        parts = []
        rest = idx.astype(np.uint64) if idx.dtype == np.uint64 else idx.astype(np.int64)
        for j in range(len(self.sizes) - 1, -1, -1):
            n = self.sizes[j]
            parts.append(rest % n)
            rest = rest // n
        parts = parts[::-1]
        ops = []
        for j, p in enumerate(parts):
            if self.c_family and j == 2:
                ops.append(_family(ops[0], ops[1], p.astype(np.int64), self.f, self.c_family))
            else:
                ops.append(self._axis_values(j, p.astype(np.int64)))
        return tuple(ops)

    def box(self, s, e):
        """For a block [s, e) that is an aligned box of the space (all sizes powers
        of two, e - s a power of two dividing s): the per-operand 1-D arrays whose
        outer product (row-major) is the block; else None."""
        n = e - s
        if not (_pow2(n) and s % n == 0 and all(_pow2(x) for x in self.sizes)):
            return None
        stride = 1
        strides = []
        for x in reversed(self.sizes):
            strides.append(stride)
            stride *= x
        strides = strides[::-1]
        axes = []
        for j, size in enumerate(self.sizes):
            st = strides[j]
            if st >= n:                               # a single value
                i0 = (s // st) % size
                axes.append(np.array([i0], np.int64))
            elif st * size <= n:                      # the whole axis
                axes.append(np.arange(size, dtype=np.int64))
            else:                                     # part of the axis
                i0 = (s // st) % size
                axes.append(np.arange(i0, i0 + n // st, dtype=np.int64))
        vals = []
        for j, ix in enumerate(axes):
            if self.c_family and j == 2:
                vals.append(ix)                       # family positions
            else:
                vals.append(self._axis_values(j, ix))
        return vals

    def blocks(self, lo, hi, idx=None):
        """Yield (case indices or start, subject operands (broadcastable), oracle Layout)."""
        if idx is not None:
            for s in range(0, idx.size, BLOCK):
                part = idx[s:s + BLOCK]
                ops = self.operands(part)
                yield part, ops, O.Layout.flat(*ops)
            return
        for s in range(lo, hi, BLOCK):
            e = min(s + BLOCK, hi)
            vals = self.box(s, e)
            if vals is None:
                part = np.arange(s, e, dtype=np.int64)
                ops = self.operands(part)
                yield part, ops, O.Layout.flat(*ops)
                continue
            k = len(vals)
            if self.c_family:
                a, b, j = vals
                cgrid = _family_grid(a, b, j, self.f, self.c_family)
                layout = O.Layout([a, b, cgrid.ravel()],
                                  [(b.size * j.size).bit_length() - 1, j.size.bit_length() - 1, 0],
                                  [-1, b.size - 1, -1], a.size * b.size * j.size)
                ops = (a[:, None, None], b[None, :, None], cgrid)
            else:
                layout = O.Layout.outer(*vals)
                ops = tuple(v.reshape([-1 if i == t else 1 for i in range(k)])
                            for t, v in enumerate(vals))
            yield s, ops, layout


def _compact(v: np.ndarray) -> str:
    """A set of encodings as ranges: '0x3c00-0x3cff,0x8000'."""
    v = np.asarray(v, np.int64)
    out = []
    start = prev = int(v[0])
    for x in map(int, v[1:]):
        if x == prev + 1:
            prev = x
            continue
        out.append(f"{start:#x}" if start == prev else f"{start:#x}-{prev:#x}")
        start = prev = x
    out.append(f"{start:#x}" if start == prev else f"{start:#x}-{prev:#x}")
    return ",".join(out)


def _rn_product(a, b, f: Format):
    """RN(a*b) as int64 encodings (broadcasting a and b), by the host: the product
    is exact in float64 and rounded by numpy / ml_dtypes (a choice of inputs, not a
    result under test)."""
    if f.name == "fp16":
        ht = np.float16
    else:
        require("ml_dtypes", "test", "the bf16 cancel families")
        import ml_dtypes
        ht = ml_dtypes.bfloat16
    with np.errstate(all="ignore"):
        p = a.view(ht).astype(np.float64) * b.view(ht).astype(np.float64)
        if f.name == "fp16":
            r = p.astype(np.float16)
        else:
            r = p.astype(np.float32).astype(ht)
    return np.asarray(r).view(f.dtype).astype(np.int64)


def _family_member(pos, a, b, rn, f: Format, family):
    """Family member ``pos`` (an int) for operands a, b with rn = RN(a*b) (all
    broadcast to one shape): int64 encodings."""
    S = f.sign_mask
    if family == "cancel4":
        if pos == 3:
            # the extreme chosen by (a ^ b) & 3: +0, -0, +max, -max
            ext = np.array([0, S, f.max_bits, f.max_bits | S], np.int64)
            return ext[(np.asarray(a, np.int64) ^ np.asarray(b, np.int64)) & 3]
        pos = pos + 4                       # d = -1, 0, +1: the cancel family's 4, 5, 6
    if pos == 11:
        return rn
    if pos >= 12:
        return np.full(rn.shape, (0, S, f.max_bits, f.max_bits | S)[pos - 12], np.int64)
    # -RN(a*b) + d ulps for d = -5..5: step the magnitude's encoding (clamped to
    # finite, non-negative magnitudes; a NaN product keeps its pattern)
    neg = rn ^ S
    stepped = np.clip((neg & (S - 1)) + (pos - 5), 0, f.max_bits) | (neg & S)
    return np.where(f.is_nan_bits(rn), rn, stepped)


def _family(a, b, j, f: Format, family="cancel"):
    """The addends of ``family`` ('cancel' or 'cancel4', see the module doc) for
    operands a, b and family positions j (broadcasting; each element's position
    picks its member)."""
    a, b, j = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(j, np.int64))
    rn = _rn_product(a, b, f)
    out = np.empty(rn.shape, np.int64)
    for pos in np.unique(j):
        m = j == pos
        out[m] = _family_member(int(pos), a[m], b[m], rn[m], f, family)
    return out.astype(f.dtype)


def _family_grid(a, b, js, f: Format, family):
    """The addends for the outer product of 1-D a, b and family positions js:
    shape (a.size, b.size, js.size). RN(a*b) is formed once per pair."""
    a2 = a[:, None]
    b2 = b[None, :]
    rn = _rn_product(a2, b2, f)
    out = np.empty((a.size, b.size, js.size), f.dtype)
    for t, pos in enumerate(js):
        out[:, :, t] = _family_member(int(pos), a2, b2, rn, f, family)
    return out


def total_cases(op, fmt, **space) -> int:
    """Number of cases of the operand space of ``op`` on ``fmt`` (``space``: the
    sub-space arguments a=, b=, c=, c_family= of fma and binary sweeps)."""
    return Space(op, fmt, **space).total


SHARD_CASES = 1 << 24       # cases per shard by default (checked or sampled)


def default_shards(op, fmt, sample=None, **space) -> int:
    """Shards of about 2**24 cases: 256 for 2**32 spaces, more for larger ones
    (2**24 for the whole fp16 fma space), fewer for small ones. With a
    ``sample``, shards of about 2**24 sampled cases (one for a sample of up to
    2**24 cases), never more than the space's default."""
    return _default_shards(total_cases(op, fmt, **space), sample)


def _default_shards(total, sample=None):
    n = max(1, total // SHARD_CASES)
    if sample is not None:
        n = min(n, max(1, -(-int(sample) // SHARD_CASES)))
    return n


def check_sizes(total, shards, sample=None, what="the sweep") -> None:
    """Raise ValueError unless ``shards`` (and ``sample``) fit the space of
    ``total`` cases they divide: at most one shard per case (per sampled case),
    a sample no larger than the space."""
    if sample is not None and sample > total:
        raise ValueError(f"sample of {sample:,} cases is larger than the space of {what} "
                         f"({total:,} cases): drop the sample for an exhaustive sweep")
    if shards > total:
        raise ValueError(f"{shards:,} shards is more than the {total:,} cases of {what}: "
                         f"give at most {total:,} shards")
    if sample is not None and shards > sample:
        raise ValueError(f"{shards:,} shards is more than the sample of {sample:,} cases: "
                         f"give at most {sample:,} shards (or leave the default)")


def shard_range(shard_id: int, shards: int, total: int) -> tuple:
    """Case indices [lo, hi) of shard ``shard_id`` of ``shards``."""
    if isinstance(shards, bool) or not isinstance(shards, (int, np.integer)) or shards < 1:
        raise ValueError(f"shards must be a positive integer, got {shards!r}")
    if isinstance(shard_id, bool) or not isinstance(shard_id, (int, np.integer)) \
            or not 0 <= shard_id < shards:
        raise ValueError(f"shard_id must be an integer in [0, {shards}), got {shard_id!r}")
    return total * int(shard_id) // shards, total * (int(shard_id) + 1) // shards


def _sample_indices(lo, hi, k, seed, shard_id):
    rng = np.random.default_rng([int(seed), int(shard_id)])
    n = hi - lo
    if k >= n:
        return np.arange(lo, hi, dtype=np.int64)
    dt = np.int64 if hi <= 1 << 62 else np.uint64
    return np.sort(rng.integers(lo, hi, size=k, dtype=dt))


def shard_cases(shard_id, op, fmt, *, shards=None, sample=None, seed=0, **space) -> tuple:
    """The operands of one shard: ``(a, b)`` encodings for binary ops, ``(a, b, c)``
    for fma, ``(a,)`` for unary ops and conversions (``uint32`` float32 patterns
    for ``from_float32``). A pure function of its arguments."""
    sp = Space(op, fmt, **space)
    shards = _default_shards(sp.total, sample) if shards is None else shards
    lo, hi = shard_range(shard_id, shards, sp.total)
    if sample is not None:
        idx = _sample_indices(lo, hi, -(-int(sample) // shards), seed, shard_id)
    else:
        idx = np.arange(lo, hi, dtype=np.int64)
    return sp.operands(idx)


# ---------------------------------------------------------------------------
# the function under test, per block
def _subject(sp: Space, mode, ops):
    """Bits and flags of the library's operation, flat, in case order."""
    import softfloat as sf
    kind, op, f = sp.kind, sp.op, sp.f
    if kind in ("binary", "ternary"):
        r, fl = getattr(sf, op)(*ops, f, mode.label, return_flags=True)
    elif kind == "unary":
        r, fl = getattr(sf, op)(ops[0], f, mode.label, return_flags=True)
    elif kind == "convert":
        r, fl = sf.convert(ops[0], f, sp.dst, mode.label, return_flags=True)
    else:
        r, fl = sf.to_bits(ops[0].view(np.float32), f, mode.label, return_flags=True)
    return np.ascontiguousarray(r).ravel(), np.ascontiguousarray(fl).ravel()


def _example(sp: Space, case, ops_at, got, gotf, exp, expf, code):
    ow = 8 if sp.kind == "from_float32" else (sp.f.nbits + 3) // 4
    w = (sp.dst.nbits + 3) // 4
    return {"case": int(case), "operands": [f"0x{int(o):0{ow}x}" for o in ops_at],
            "expected": f"0x{int(exp):0{w}x}", "got": f"0x{int(got):0{w}x}",
            "expected_flags": int(expf), "got_flags": int(gotf),
            "kind": "bits" if code == 1 else "flags"}


def _mpfr_one(sp: Space, mode, ops_at):
    if sp.kind == "binary":
        return O.mpfr_binary(sp.op, int(ops_at[0]), int(ops_at[1]), sp.f, mode)
    if sp.kind == "ternary":
        return O.mpfr_fma(*(int(x) for x in ops_at), sp.f, mode)
    if sp.kind == "unary":
        return O.mpfr_unary(sp.op, int(ops_at[0]), sp.f, mode)
    return O.mpfr_convert(int(ops_at[0]), sp.src, sp.dst, mode)


def _mpfr_check(sp: Space, mode, lo, hi, k, seed, shard_id, max_examples):
    """Kernel vs MPFR on k cases of the shard."""
    idx = _sample_indices(lo, hi, k, seed + 0x5EED, shard_id)
    ops = sp.operands(idx)
    got, gotf = _subject(sp, mode, ops)
    n1 = n2 = 0
    ex = []
    for i in range(idx.size):
        at = [o[i] for o in ops]
        eb, ef = _mpfr_one(sp, mode, at)
        code = 1 if int(got[i]) != eb else (2 if int(gotf[i]) != ef else 0)
        n1 += code == 1
        n2 += code == 2
        if code and len(ex) < max_examples:
            ex.append(_example(sp, idx[i], at, got[i], gotf[i], eb, ef, code))
    return {"checked": int(idx.size), "mismatches": int(n1 + n2), "bits_mismatches": int(n1),
            "flag_mismatches": int(n2), "examples": ex}


def _space_kw(space):
    return {k: v for k, v in (space or {}).items() if v is not None}


def run_shard(shard_id, op, fmt, rounding="nearest_even", *, shards=None, sample=None,
              seed=0, oracle="auto", check_nan=True, mpfr=0, max_examples=20,
              progress=None, space=None) -> dict:
    """Check one shard; returns its result dict (see the module doc).
    ``space``: sub-space arguments (a=, b=, c=, c_family=). ``progress(cases_done)``
    is called after each block."""
    sw = _space_kw(space)
    sp = Space(op, fmt, **sw)
    mode = get_rounding(rounding)
    if mode == Rounding.STOCHASTIC:
        raise ValueError("sweeps cover the deterministic rounding modes only")
    method = O.default_method(sp.dst, mode, _op_kind(sp), sp.src) if oracle == "auto" \
        else oracle
    mcode = O.method_code(method, sp.dst, mode, _op_kind(sp), sp.src)
    total = sp.total
    shards = _default_shards(total, sample) if shards is None else int(shards)
    lo, hi = shard_range(shard_id, shards, total)
    idx = None
    if sample is not None:
        idx = _sample_indices(lo, hi, -(-int(sample) // shards), seed, shard_id)
    t0 = time.perf_counter()
    c0 = time.process_time()
    n = n1 = n2 = 0
    examples = []
    oracle_op = "convert" if sp.kind in ("convert", "from_float32") else op
    for part, ops, layout in sp.blocks(lo, hi, idx):
        got, gotf = _subject(sp, mode, ops)
        k1, k2, code = O.check_block(oracle_op, layout, sp.src, sp.dst, mode, mcode, got, gotf)
        if not check_nan and code is not None:
            k1, k2, code = _forgive_nans(sp, oracle_op, layout, mode, mcode, got, gotf, code)
        if (k1 or k2) and len(examples) < max_examples:
            bad = np.flatnonzero(code)[:max_examples - len(examples)]
            exp, expf = O.oracle_block(oracle_op, _sub_layout(layout, bad), sp.src, sp.dst,
                                       mode, mcode)
            flat = [np.broadcast_to(o, tuple(np.broadcast_shapes(*(x.shape for x in ops))))
                    .ravel() for o in ops] if not isinstance(part, np.ndarray) else ops
            for t, i in enumerate(bad):
                case = part[i] if isinstance(part, np.ndarray) else part + i
                examples.append(_example(sp, case, [o[i] for o in flat], got[i], gotf[i],
                                         exp[t], expf[t], code[i]))
        n += got.size
        n1 += int(k1)
        n2 += int(k2)
        if progress is not None:
            progress(got.size)
    res = {"format_version": SHARD_FORMAT, "shard": int(shard_id), "shards": shards,
           "lo": int(lo), "hi": int(hi), "cases": n, "mismatches": n1 + n2,
           "bits_mismatches": n1, "flag_mismatches": n2, "examples": examples,
           "seconds": round(time.perf_counter() - t0, 3),
           "cpu_seconds": round(time.process_time() - c0, 3),
           "config": _config(sp, mode, shards, sample, seed, method, check_nan, mpfr)}
    if mpfr:
        t1 = time.perf_counter()
        res["mpfr"] = _mpfr_check(sp, mode, lo, hi, int(mpfr), seed, shard_id, max_examples)
        res["mpfr"]["seconds"] = round(time.perf_counter() - t1, 3)
    return res


def _op_kind(sp):
    return "fma" if sp.kind == "ternary" else ("convert" if sp.kind in ("convert", "from_float32")
                                               else sp.op)


def _sub_layout(layout, positions):
    """A flat layout of the cases at ``positions`` of ``layout``."""
    k = np.asarray(positions, np.int64)
    arrs = [x[(k >> s) & m] for x, s, m in zip(layout.arrays, layout.shifts, layout.masks)]
    return O.Layout(arrs, [0, 0, 0], [-1, -1, -1], k.size)


def _forgive_nans(sp, oracle_op, layout, mode, mcode, got, gotf, code):
    """Opt-out (check_nan=False): a NaN result agrees with a NaN expectation of
    any pattern (then only the flags are compared)."""
    bad = np.flatnonzero(code == 1)
    exp, expf = O.oracle_block(oracle_op, _sub_layout(layout, bad), sp.src, sp.dst, mode, mcode)
    nan = sp.dst.is_nan_bits(got[bad].astype(np.int64)) & sp.dst.is_nan_bits(exp)
    code[bad[nan]] = np.where(gotf[bad[nan]] != expf[nan], 2, 0)
    k1, k2 = _recount(code)
    return k1, k2, code


def _recount(code):
    return int(np.count_nonzero(code == 1)), int(np.count_nonzero(code == 2))


def _config(sp: Space, mode, shards, sample, seed, method, check_nan, mpfr):
    cfg = {"op": sp.op, "format": sp.f.name, "mode": mode.label, "shards": int(shards),
           "sample": None if sample is None else int(sample), "seed": int(seed),
           "oracle": method, "check_nan": bool(check_nan), "mpfr": int(mpfr)}
    d = sp.describe()
    if d:
        cfg["space"] = d
    return cfg


def merge_shards(results, *, max_examples=20) -> dict:
    """Merge shard results (of one sweep) into a report."""
    if not results:
        raise ValueError("no shard results to merge")
    cfg = results[0]["config"]
    results = sorted(results, key=lambda r: r["shard"])
    ex = [e for r in results for e in r["examples"]]
    rep = {"op": cfg["op"], "format": cfg["format"], "mode": cfg["mode"],
           "oracle": cfg["oracle"], "exhaustive": cfg["sample"] is None and
           len(results) == cfg["shards"],
           "cases": sum(r["cases"] for r in results),
           "mismatches": sum(r["mismatches"] for r in results),
           "bits_mismatches": sum(r["bits_mismatches"] for r in results),
           "flag_mismatches": sum(r["flag_mismatches"] for r in results),
           "first_mismatches": ex[:max_examples],
           "seconds": round(sum(r["seconds"] for r in results), 3),
           "cpu_seconds": round(sum(r.get("cpu_seconds", 0.0) for r in results), 3),
           "shards": cfg["shards"], "shards_done": len(results), "config": cfg}
    if "space" in cfg:
        rep["space"] = cfg["space"]
    if any("mpfr" in r for r in results):
        m = [r["mpfr"] for r in results if "mpfr" in r]
        rep["mpfr"] = {"checked": sum(x["checked"] for x in m),
                       "mismatches": sum(x["mismatches"] for x in m),
                       "bits_mismatches": sum(x["bits_mismatches"] for x in m),
                       "flag_mismatches": sum(x["flag_mismatches"] for x in m),
                       "examples": [e for x in m for e in x["examples"]][:max_examples],
                       "seconds": round(sum(x["seconds"] for x in m), 3)}
    return rep


# ---------------------------------------------------------------------------
# shard files: named, parametrised, checksummed
class ShardFileError(ValueError):
    """A shard file that does not verify (the message says why)."""


def _checksum(obj) -> str:
    body = {k: v for k, v in obj.items() if k != "checksum"}
    blob = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def _seal(res: dict) -> dict:
    res = dict(res)
    res["checksum"] = _checksum(res)
    return res


def verify_shard_file(path, shard_id, cfg, lo, hi, expected_cases) -> dict:
    """Read and verify one shard file: JSON object, format version, checksum of
    its content, its id and range, its parameters (``cfg``), and consistent
    counts. Returns the result; raises ShardFileError saying what failed
    (``.other_settings`` is True when only the parameters differ)."""
    try:
        with open(path) as fh:
            r = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ShardFileError(f"{path}: unreadable or not JSON ({exc})") from None
    if not isinstance(r, dict):
        raise ShardFileError(f"{path}: expected a JSON object, got {type(r).__name__}")
    if r.get("format_version") != SHARD_FORMAT or "checksum" not in r:
        raise ShardFileError(f"{path}: not a version-{SHARD_FORMAT} shard file with a checksum")
    if r["checksum"] != _checksum(r):
        raise ShardFileError(f"{path}: checksum does not match its content")
    if r.get("shard") != shard_id:
        raise ShardFileError(f"{path}: holds shard {r.get('shard')!r}, expected {shard_id}")
    if r.get("config") != cfg:
        err = ShardFileError(f"{path} was written with other settings ({r.get('config')}); "
                             f"use another --out or drop --resume")
        err.other_settings = True
        raise err
    try:
        ok = (r["lo"] == lo and r["hi"] == hi and r["cases"] == expected_cases
              and all(isinstance(r[k], int) and r[k] >= 0
                      for k in ("mismatches", "bits_mismatches", "flag_mismatches"))
              and r["mismatches"] == r["bits_mismatches"] + r["flag_mismatches"]
              and r["mismatches"] <= r["cases"] and isinstance(r["examples"], list))
    except (KeyError, TypeError):
        ok = False
    if not ok:
        raise ShardFileError(f"{path}: inconsistent range or counts")
    return r


# ---------------------------------------------------------------------------
# running many shards
class _Progress:
    """A one-line progress bar on stderr (a line every 10 s when not a terminal)."""

    def __init__(self, label, total, enabled):
        self.label, self.total, self.enabled = label, total, enabled
        self.done = 0
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def add(self, n, force=False):
        self.done += n
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < (0.5 if self.tty else 10.0):
            return
        self.last = now
        frac = self.done / self.total if self.total else 1.0
        el = now - self.t0
        eta = el * (1 - frac) / frac if frac > 0 else float("nan")
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        line = (f"{self.label} [{bar}] {100 * frac:5.1f}% {self.done:,}/{self.total:,} "
                f"{el:6.1f}s ETA {eta:6.1f}s")
        sys.stderr.write(("\r" + line) if self.tty else (line + "\n"))
        sys.stderr.flush()

    def close(self):
        if self.enabled:
            self.add(0, force=True)
            if self.tty:
                sys.stderr.write("\n")


def _name(sp: Space, mode):
    d = sp.describe()
    return report_name({"op": sp.op, "format": sp.f.name, "mode": mode.label,
                        **({"space": d} if d else {})})


REPORTS = "reports.jsonl"     # the reports of a directory: one line per run, sorted


def report_name(rep) -> str:
    """The run name of a report (``<op>_<format>_<mode>[_<space tag>]``): its
    key in `REPORTS` and the stem of its shard directory."""
    base = f"{rep['op'].replace(':', '-')}_{rep['format']}_{rep['mode']}"
    d = rep.get("space")
    if d:
        tag = hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:8]
        base += "_" + (d["c_family"] if d.get("c_family") else "sub") + "-" + tag
    return base


def _report_line(rep) -> str:
    return json.dumps(rep, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def load_reports(directory) -> dict:
    """The reports of ``directory``, by run name: its `REPORTS` file (one JSON
    object per line), and any ``<name>.json`` report of an older layout (the
    line wins when both hold a run). A line that is not a JSON object raises
    ValueError naming the file and line."""
    out = {}
    for fn in sorted(os.listdir(directory)):
        if not fn.endswith(".json"):
            continue
        path = os.path.join(directory, fn)
        try:
            with open(path) as fh:
                r = json.load(fh)
        except (OSError, ValueError):
            continue
        if not isinstance(r, dict) or "op" not in r:
            continue
        _check_report(r, path)
        out[report_name(r)] = r
    path = os.path.join(directory, REPORTS)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            for no, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                except ValueError as exc:
                    raise ValueError(f"{path} line {no}: not JSON ({exc})") from None
                if not isinstance(r, dict):
                    raise ValueError(f"{path} line {no}: not a JSON object")
                _check_report(r, f"{path} line {no}")
                out[report_name(r)] = r
    return out


def store_report(out, rep) -> str:
    """Put ``rep`` into ``out``'s `REPORTS` file: the line of its run is replaced
    (the others are kept, byte for byte), lines sorted by run name; under a file
    lock, written to a temporary file and renamed. Returns the file's path."""
    path = os.path.join(out, REPORTS)
    name = report_name(rep)
    lock = open(os.path.join(out, ".reports.lock"), "a")
    try:
        try:
            import fcntl
            fcntl.flock(lock, fcntl.LOCK_EX)
        except (ImportError, OSError):     # pragma: no cover (not POSIX)
            pass
        lines = {}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    if line.strip():
                        try:
                            lines[report_name(json.loads(line))] = line.rstrip("\n")
                        except (ValueError, KeyError, TypeError, AttributeError):
                            lines[f"~unreadable {len(lines)}"] = line.rstrip("\n")
        lines[name] = _report_line(rep)
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("".join(lines[k] + "\n" for k in sorted(lines)))
        os.replace(tmp, path)
    finally:
        lock.close()
    return path


def _shard_path(out, name, k):
    return os.path.join(out, name + ".shards", f"shard_{k:05d}.json")


def _write_json(path, obj):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        json.dump(obj, fh, indent=1)
    os.replace(tmp, path)


def check_writable(out) -> None:
    """Raise OSError (with the path) unless ``out`` is, or can be made, a writable
    directory; called before any work."""
    try:
        os.makedirs(out, exist_ok=True)
        probe = os.path.join(out, f".write-test-{os.getpid()}")
        with open(probe, "w") as fh:
            fh.write("ok")
        os.remove(probe)
    except OSError as exc:
        raise OSError(f"cannot write to --out {out!r}: {exc.strerror or exc}") from None


def _die_with_parent(parent_pid):
    """In a worker: exit when the parent dies (Linux prctl PR_SET_PDEATHSIG, and a
    watchdog thread that polls the parent pid where prctl is unavailable or the
    parent died before it was set)."""
    import signal
    import threading
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):       # pragma: no cover (not Linux)
        pass
    if os.getppid() != parent_pid:
        os._exit(3)

    def watch():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                os._exit(3)
    threading.Thread(target=watch, daemon=True, name="softfloat-parent-watch").start()


def _worker_init(threads, parent_pid):
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the parent handles Ctrl-C
    _die_with_parent(parent_pid)
    os.environ["SOFTFLOAT_NUM_THREADS"] = str(max(1, threads))
    os.environ["NUMBA_NUM_THREADS"] = str(max(1, threads))


def _stop_pool(ex):
    """Stop a process pool now (Ctrl-C, an error): cancel what has not started,
    terminate the workers, and keep the pool's manager thread from printing
    tracebacks about the futures it can no longer complete."""
    import threading
    old = threading.excepthook
    threading.excepthook = lambda args: None
    try:
        procs = list((getattr(ex, "_processes", None) or {}).values())
        t = getattr(ex, "_executor_manager_thread", None)   # shutdown() forgets both
        ex.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            p.terminate()
        if t is not None:
            t.join(10)
    finally:
        threading.excepthook = old


def _worker(args):
    k, op, fname, mode, kw, path = args
    r = _seal(run_shard(k, op, fname, mode, **kw))
    if path:
        _write_json(path, r)
    return r


def dask_shard(k, op, fname, mode, kw, path):
    """One shard on a Dask worker: run it, write its verified file to ``path`` (a
    directory the workers share), return the result."""
    return _worker((k, op, fname, mode, kw, path))


def probe_scheduler(address, timeout=30.0) -> None:
    """Check that a ``tcp://host:port`` Dask scheduler answers like one, within
    ``timeout`` seconds: it must accept a connection and send its handshake (a
    length-prefixed message of reasonable size). Raises RuntimeError saying what
    went wrong (refused, silent, another protocol such as HTTP). Other address
    schemes are left to distributed's own connection timeout."""
    import socket
    import struct
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"scheduler must be an address such as tcp://host:8786, "
                         f"got {address!r}")
    addr = address.strip()
    if "://" not in addr:
        addr = "tcp://" + addr
    scheme, rest = addr.split("://", 1)
    if scheme != "tcp":
        return
    host, sep, port = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"scheduler address {address!r}: expected tcp://HOST:PORT")
    t0 = time.monotonic()
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except socket.timeout:
        raise RuntimeError(f"Dask scheduler {address}: no connection within {timeout:g} s") \
            from None
    except OSError as exc:
        raise RuntimeError(f"Dask scheduler {address}: cannot connect "
                           f"({exc.strerror or exc})") from None
    def recv(k):
        got = b""
        while len(got) < k:
            sock.settimeout(max(0.05, timeout - (time.monotonic() - t0)))
            chunk = sock.recv(k - len(got))
            if not chunk:
                raise RuntimeError(f"Dask scheduler {address}: the connection was closed "
                                   f"during the handshake (not a Dask scheduler?)")
            got += chunk
        return got
    try:
        head = recv(8)
        (n,) = struct.unpack("<Q", head)
        if not 0 < n < (1 << 26):
            what = "HTTP" if head.startswith(b"HTTP") else "another protocol"
            raise RuntimeError(f"Dask scheduler {address}: the server answers in {what} "
                               f"({head!r}...), not as a Dask scheduler")
        recv(n)                                # the whole handshake message, in time
    except socket.timeout:
        raise RuntimeError(f"Dask scheduler {address}: connected, but no complete handshake "
                           f"within {timeout:g} s (not a Dask scheduler, or it is stuck)") \
            from None
    except OSError as exc:
        raise RuntimeError(f"Dask scheduler {address}: {exc.strerror or exc}") from None
    finally:
        sock.close()


def _run_dask(todo, op, fname, mode_label, kw, scheduler, jobs, bar, results, timeout=30.0):
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ImportError("--backend dask needs distributed: pip install "
                          "'softfloat-lab[dask]'") from None
    cluster = None
    try:
        if scheduler:
            probe_scheduler(scheduler, timeout)
            client = Client(scheduler, timeout=timeout)
        else:
            threads = max(1, (os.cpu_count() or 1) // jobs)
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=40,
                                   env={"SOFTFLOAT_NUM_THREADS": str(threads)})
            client = Client(cluster, timeout=timeout)
    except (OSError, TimeoutError, MemoryError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        where = scheduler or "the local cluster"
        raise RuntimeError(f"Dask scheduler {where}: {type(exc).__name__}: {exc}") from None
    try:
        if scheduler:
            try:
                client.wait_for_workers(1, timeout=timeout)
            except (TimeoutError, OSError) as exc:
                raise RuntimeError(f"Dask scheduler {scheduler}: no worker joined within "
                                   f"{timeout:g} s ({exc})") from None
        futs = [client.submit(dask_shard, k, op, fname, mode_label, kw, path, pure=False,
                              key=f"softfloat-shard-{fname}-{op}-{mode_label}-{k}-{time.time_ns()}")
                for k, path in todo]
        for fu in as_completed(futs):
            r = fu.result()
            bar.add(r["cases"])
            results.append(r)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_parallel(fn, arglist, *, jobs=1, backend="process", scheduler=None,
                 on_result=None) -> list:
    """Call ``fn(*args)`` for every ``args`` of ``arglist``: in this process
    (jobs=1), on a pool of ``jobs`` spawned worker processes, or on Dask (a
    local cluster of ``jobs`` workers, or the one at ``scheduler``); call
    ``on_result(r)`` as each finishes. Returns the results in completion order.
    ``fn`` must be a module-level function when it runs elsewhere (the shard
    runner of `softfloat.verify` uses this)."""
    out = []

    def got(r):
        out.append(r)
        if on_result is not None:
            on_result(r)
    if backend == "dask":
        try:
            from distributed import Client, LocalCluster, as_completed
        except ImportError:
            raise RuntimeError("--backend dask needs the optional extra: pip install "
                               "'softfloat-lab[dask]' (dask and distributed)") from None
        cluster = None
        if scheduler:
            client = Client(scheduler)
        else:
            threads = max(1, (os.cpu_count() or 1) // jobs)
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=40,
                                   env={"SOFTFLOAT_NUM_THREADS": str(threads)})
            client = Client(cluster)
        try:
            futs = [client.submit(fn, *args, pure=False) for args in arglist]
            for fu in as_completed(futs):
                got(fu.result())
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    elif jobs == 1 or len(arglist) <= 1:
        for args in arglist:
            got(fn(*args))
    else:
        import concurrent.futures as cf
        import multiprocessing as mp
        threads = max(1, (os.cpu_count() or 1) // jobs)
        ex = cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                                    initializer=_worker_init, initargs=(threads, os.getpid()))
        try:
            futs = [ex.submit(fn, *args) for args in arglist]
            for fu in cf.as_completed(futs):
                got(fu.result())
        except BaseException:
            _stop_pool(ex)
            raise
        ex.shutdown(wait=True)
    return out


def run_sweep(op, fmt, rounding="nearest_even", *, shards=None, jobs=1, out=None,
              resume=False, sample=None, seed=0, oracle="auto", check_nan=True, mpfr=0,
              max_examples=20, progress=False, shard_ids=None, a=None, b=None, c=None,
              c_family=None, backend="process", scheduler=None, timeout=30.0) -> dict:
    """Run a sweep and return the merged report (see the module doc).

    Parameters
    ----------
    op : str
        ``add``, ``sub``, ``mul``, ``div``, ``fma``, ``sqrt``, ``convert:<dst>``
        or ``from_float32``.
    fmt : Format or str
        The operands' format (the target format for ``from_float32``).
    rounding : str
        One deterministic rounding mode.
    shards : int, optional
        Number of shards (default `default_shards`).
    jobs : int
        Worker processes (Dask: local workers); 1 runs in this process on threads.
    out : str, optional
        Directory for per-shard files and the report; None keeps everything in
        memory. Checked writable before any work.
    resume : bool
        Reuse the shard files in ``out`` that verify; recompute the others.
    sample : int, optional
        Check about ``sample`` random cases (split over the shards) instead of all.
    seed : int
        Seed of the sample (and of the MPFR cases).
    oracle : {"auto", "host", "ro53"}
        See `softfloat.sweep_oracles`; auto takes host for nearest_even where it applies.
    check_nan : bool
        Compare NaN results bit for bit with the pattern the NaN policy promises
        (default); False accepts any NaN for a NaN.
    mpfr : int
        Per shard, also check this many cases against MPFR (gmpy2).
    max_examples : int
        Mismatches kept in the report.
    progress : bool
        Progress bar on stderr.
    shard_ids : iterable of int, optional
        Run only these shards (the report then says ``exhaustive: false``).
    a, b, c : operand sets, optional
        A sub-space (see `parse_values`): ``c=0x3c00`` fixes c, ``a="0x3c00-0x3cff"``...
    c_family : {"cancel", "cancel4"}, optional
        fma only: the structured addends of the module doc (16 or 4 per pair).
    backend : {"process", "dask"}
        ``dask`` runs the shards on a Dask distributed cluster: a local one of
        ``jobs`` workers, or the one at ``scheduler``; shard files then need an
        ``out`` that every worker can write.
    timeout : float
        Dask: seconds to wait for the scheduler to answer (and for a first
        worker); a scheduler that does not answer, or answers in another
        protocol, raises RuntimeError saying so.
    """
    sw = _space_kw(dict(a=a, b=b, c=c, c_family=c_family))
    sp = Space(op, fmt, **sw)
    mode = get_rounding(rounding)
    if mode == Rounding.STOCHASTIC:
        raise ValueError("sweeps cover the deterministic rounding modes only")
    if oracle not in ("auto", "host", "ro53"):
        raise ValueError(f"oracle must be 'auto', 'host' or 'ro53', got {oracle!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if sample is not None and (isinstance(sample, bool) or not isinstance(
            sample, (int, np.integer)) or sample < 1):
        raise ValueError(f"sample must be a positive integer, got {sample!r}")
    if backend not in ("process", "dask"):
        raise ValueError(f"backend must be 'process' or 'dask', got {backend!r}")
    if isinstance(mpfr, bool) or not isinstance(mpfr, (int, np.integer)) or mpfr < 0:
        raise ValueError(f"mpfr must be a non-negative integer, got {mpfr!r}")
    if isinstance(max_examples, bool) or not isinstance(max_examples, (int, np.integer)) \
            or max_examples < 0:
        raise ValueError(f"max_examples must be a non-negative integer, got {max_examples!r}")
    if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
            and 0 < timeout < float("inf")):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    method = O.default_method(sp.dst, mode, _op_kind(sp), sp.src) if oracle == "auto" \
        else oracle
    O.method_code(method, sp.dst, mode, _op_kind(sp), sp.src)
    total = sp.total
    if sample is None and total > (1 << 48):
        raise ValueError(f"{op} on {sp.f.name} has {total} cases; use sample=")
    shards = _default_shards(total, sample) if shards is None else shards
    if isinstance(shards, bool) or not isinstance(shards, (int, np.integer)) or shards < 1:
        raise ValueError(f"shards must be a positive integer, got {shards!r}")
    shards = int(shards)
    check_sizes(total, shards, None if sample is None else int(sample),
                f"{op} on {sp.f.name}" + (f" {_compact_space(sp.describe())}"
                                          if sp.describe() else ""))
    if mpfr:
        require("gmpy2", "test", "--mpfr (the MPFR witness)")
    if sp.c_family and sp.f.name == "bf16":
        require("ml_dtypes", "test", "the bf16 cancel families")
    if backend == "dask":
        require("distributed", "dask", "--backend dask")
    ids = list(range(shards)) if shard_ids is None else [int(k) for k in shard_ids]
    if not ids:
        raise ValueError("no shards to run (empty shard_ids)")
    for k in ids:
        shard_range(k, shards, total)
    if out:
        check_writable(out)
    name = _name(sp, mode)
    cfg = _config(sp, mode, shards, sample, seed, method, check_nan, mpfr)
    kw = dict(shards=shards, sample=sample, seed=seed, oracle=method, check_nan=check_nan,
              mpfr=mpfr, max_examples=max_examples, space=sw or None)
    per = -(-int(sample) // shards) if sample is not None else None

    def size(k):
        lo, hi = shard_range(k, shards, total)
        return min(per, hi - lo) if per is not None else hi - lo
    results, todo, notes = [], [], []
    for k in ids:
        path = _shard_path(out, name, k) if out else None
        if resume and path and os.path.exists(path):
            lo, hi = shard_range(k, shards, total)
            try:
                results.append(verify_shard_file(path, k, cfg, lo, hi, size(k)))
                continue
            except ShardFileError as exc:
                if getattr(exc, "other_settings", False):
                    raise
                notes.append(f"{exc}: recomputed")
                print(f"warning: {exc}; recomputing shard {k}", file=sys.stderr)
        todo.append((k, path))
    bar = _Progress(f"{op} {sp.f.name} {mode.label}", int(sum(size(k) for k, _ in todo)),
                    progress)
    t0 = time.perf_counter()
    fname = sp.f if sp.f.name not in _builtin_names() else sp.f.name
    if backend == "dask":
        _run_dask(todo, op, fname, mode.label, kw, scheduler, jobs, bar, results, timeout)
    elif jobs == 1 or len(todo) <= 1:
        for k, path in todo:
            r = _seal(run_shard(k, op, sp.f, mode, progress=bar.add, **kw))
            if path:
                _write_json(path, r)
            results.append(r)
    else:
        import concurrent.futures as cf
        import multiprocessing as mp
        jobs = min(jobs, len(todo))          # no idle worker processes
        threads = max(1, (os.cpu_count() or 1) // jobs)
        ex = cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                                    initializer=_worker_init, initargs=(threads, os.getpid()))
        try:
            futs = [ex.submit(_worker, (k, op, fname, mode.label, kw, path))
                    for k, path in todo]
            for fu in cf.as_completed(futs):
                r = fu.result()
                bar.add(r["cases"])
                results.append(r)
        except BaseException:
            _stop_pool(ex)
            raise
        ex.shutdown(wait=True)
    bar.close()
    rep = merge_shards(results, max_examples=max_examples)
    rep["exhaustive"] = sample is None and len(results) == shards and not sw
    rep["wall_seconds"] = round(time.perf_counter() - t0, 3)
    rep["jobs"] = int(jobs)
    rep["backend"] = backend
    if notes:
        rep["notes"] = notes
    rep["machine"] = f"{platform.machine()} {os.cpu_count()} cpus, {platform.python_version()}"
    rep["date"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    if out:
        store_report(out, rep)
    return rep


def _builtin_names():
    from .formats import formats
    return {x.name for x in formats()}


# ---------------------------------------------------------------------------
# the whole table
TABLE_FORMATS16 = ("fp16", "bf16")
TABLE_FORMATS8 = ("fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp8_e5m2fnuz")


def table_runs(fma=False) -> list:
    """The runs of the results table, as (op, format, mode) in table order:
    fp16/bf16 and the fp8 formats x add, sub, mul, div; sqrt of each; every
    conversion between them; float32 -> fp16 and -> bf16; sqrt of tf32 and
    tf32 <-> fp16, bf16; all in the six deterministic modes. ``fma=True`` adds
    fp8 fma (every triple)."""
    fmts = TABLE_FORMATS16 + TABLE_FORMATS8
    runs = []
    for f in fmts:
        for op in O.BINARY_OPS + O.UNARY_OPS:
            runs += [(op, f, m) for m in DETERMINISTIC_MODES]
    for s in fmts:
        for d in fmts:
            if s != d:
                runs += [(f"convert:{d}", s, m) for m in DETERMINISTIC_MODES]
    for f in TABLE_FORMATS16:
        runs += [("from_float32", f, m) for m in DETERMINISTIC_MODES]
    # tf32 (19 bits): sqrt and the conversions to and from fp16 and bf16
    runs += [("sqrt", "tf32", m) for m in DETERMINISTIC_MODES]
    for f in TABLE_FORMATS16:
        runs += [(f"convert:{f}", "tf32", m) for m in DETERMINISTIC_MODES]
        runs += [("convert:tf32", f, m) for m in DETERMINISTIC_MODES]
    if fma:
        for f in ("fp8_e4m3", "fp8_e5m2"):
            runs += [("fma", f, m) for m in DETERMINISTIC_MODES]
    return runs


def run_table(out, *, sample=None, jobs=1, resume=False, only=None, fma=False, mpfr=0,
              max_cases=None, progress=False, log=print) -> int:
    """Run every sweep of `table_runs` (``sample``: a random sample of each
    instead) into ``out``, then write ``out/RESULTS.md`` (from every report in
    ``out``, those of earlier runs included). ``only``: a substring filter on
    'op format mode'; ``max_cases``: skip runs of larger spaces. Returns the
    number of runs with mismatches."""
    check_writable(out)
    bad = 0
    runs = [r for r in table_runs(fma) if (only is None or only in " ".join(r))
            and (max_cases is None or total_cases(r[0], r[1]) <= max_cases)]
    if not runs:
        raise ValueError(f"no table run matches {only!r}")
    for i, (op, f, m) in enumerate(runs):
        space = total_cases(op, f)
        s = sample if sample is not None and sample < space else None
        rep = run_sweep(op, f, m, out=out, jobs=jobs, resume=resume, sample=s, mpfr=mpfr,
                        progress=progress)
        bad += bool(rep["mismatches"] or rep.get("mpfr", {}).get("mismatches"))
        log(f"[{i + 1}/{len(runs)}] {_line(rep)}")
    write_results(out)
    return bad


def write_results(directory, command=None):
    table = summarize(directory)
    path = os.path.join(directory, "RESULTS.md")
    cmd = command or f"python -m softfloat sweep table --out {directory}"
    with open(path, "w") as fh:
        fh.write("# Sweep results\n\nRegenerated by `" + cmd + "` (the whole table; "
                 "add `--resume` to keep finished runs) or summarized from the reports in "
                 f"this directory's `{REPORTS}` by `python -m softfloat sweep --summarize "
                 f"{directory}` (one JSON line per op x format x mode x sub-space; the "
                 "per-shard files are not kept in git). Each run compares the library with an independent "
                 "oracle (`softfloat.sweep_oracles`: *host* = float64 + the FPU's "
                 "round-to-nearest-even, *ro53* = float64 + exact error, round to odd, "
                 "integer rounding) on result bits, flags and the NaN bit pattern the NaN "
                 "policy promises. *cases* below the space's size are random samples "
                 "(*exhaustive* says which). *wall s* is elapsed time, *CPU s* the process "
                 "CPU time over all threads.\n\n" + table)
    return table


#: what `summarize` reads from a report, and the types it expects
REPORT_KEYS = {"op": str, "format": str, "mode": str, "oracle": str, "cases": int,
               "mismatches": int, "bits_mismatches": int, "flag_mismatches": int}


def _check_report(r, where):
    """Raise ValueError naming ``where`` unless r has every key `summarize` reads."""
    missing = [k for k in REPORT_KEYS if k not in r]
    if missing:
        raise ValueError(f"{where}: a sweep report without {', '.join(missing)}; "
                         f"expected the JSON report that a sweep writes")
    for k, t in REPORT_KEYS.items():
        if not isinstance(r[k], t) or isinstance(r[k], bool):
            raise ValueError(f"{where}: {k} should be {t.__name__}, got {r[k]!r}")
    if "seconds" not in r and "wall_seconds" not in r:
        raise ValueError(f"{where}: a sweep report without seconds or wall_seconds")
    m = r.get("mpfr")
    if m is not None and not (isinstance(m, dict) and isinstance(m.get("checked"), int)
                              and isinstance(m.get("mismatches"), int)):
        raise ValueError(f"{where}: mpfr should hold 'checked' and 'mismatches' counts")
    for k in ("space", "config"):
        if k in r and not isinstance(r[k], dict):
            raise ValueError(f"{where}: {k} should be an object, got {r[k]!r}")


def summarize(directory) -> str:
    """A markdown table of every report in ``directory`` (`load_reports`: its
    ``reports.jsonl``, and ``*.json`` reports of the older layout). JSON files
    that are not objects with an ``op`` are skipped; a report that lacks what
    the table needs raises ValueError naming the file."""
    if not os.path.isdir(directory):
        raise OSError(f"--summarize {directory!r}: not a directory")
    rows = list(load_reports(directory).values())
    order = {m: i for i, m in enumerate(DETERMINISTIC_MODES)}
    rows.sort(key=lambda r: (r["format"], r["op"], json.dumps(r.get("space", {})),
                             order.get(r["mode"], 9)))
    lines = ["| op | format | mode | oracle | cases | exhaustive | NaN bits | mismatches "
             "(bits / flags only) | MPFR cases (mismatches) | wall s | CPU s | date |",
             "|---|---|---|---|---:|---|---|---|---|---:|---:|---|"]
    for r in rows:
        m = r.get("mpfr")
        mp_ = f"{m['checked']:,} ({m['mismatches']})" if m else "-"
        op = r["op"] + (f" [{_compact_space(r['space'])}]" if r.get("space") else "")
        nanb = "checked" if r.get("config", {}).get("check_nan") else "any NaN"
        lines.append(f"| {op} | {r['format']} | {r['mode']} | {r['oracle']} | "
                     f"{r['cases']:,} | {'yes' if r.get('exhaustive') else 'no'} | {nanb} | "
                     f"{r['mismatches']} ({r['bits_mismatches']} / {r['flag_mismatches']}) | "
                     f"{mp_} | {r.get('wall_seconds', r['seconds'])} | "
                     f"{r.get('cpu_seconds', '-')} | {r.get('date', '-')[:10]} |")
    return "\n".join(lines) + "\n"


def _compact_space(d):
    return ", ".join(f"{k}={v}" for k, v in d.items())


# ---------------------------------------------------------------------------
# command line
def _positive(name):
    def conv(s):
        try:
            v = int(s, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {s!r}")
        if v < 1:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {s!r}")
        return v
    return conv


class _Parser(argparse.ArgumentParser):
    def error(self, message):            # one line, status 2
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _positive_float(name):
    def conv(s):
        try:
            v = float(s)
        except ValueError:
            v = float("nan")
        if not 0 < v < float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be a positive number, got {s!r}")
        return v
    return conv


def _nonneg(name):
    def conv(s):
        try:
            v = int(s, 0)
        except ValueError:
            v = -1
        if v < 0:
            raise argparse.ArgumentTypeError(f"{name} must be a non-negative integer, "
                                             f"got {s!r}")
        return v
    return conv


def default_out(fmt, op) -> str:
    """The directory a command-line sweep writes to when no --out is given: a new
    one in the current directory named by the run (never the committed sweeps/)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = f"sweep-{fmt}-{str(op).replace(':', '-')}-{stamp}"
    d, i = base, 1
    while os.path.exists(d):
        i += 1
        d = f"{base}-{i}"
    return d


_OUT_HELP = ("directory for shard files and reports (default: a new directory "
             "./sweep-<format>-<op>-<UTC time>; '' keeps nothing on disk). Reports in "
             "the committed sweeps/ are written only when asked: --out sweeps")


def _parser():
    p = _Parser(
        prog="python -m softfloat sweep",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Check an operation over every operand pattern (or a sub-space, or a "
                    "random sharded subset) against an independent oracle: bits, flags and "
                    "NaN patterns. 'python -m softfloat sweep table --out DIR' runs the whole "
                    "results table. Exit status: 0 no mismatch, 1 mismatches, 2 could not run.")
    p.add_argument("format", nargs="?", help="operand format (fp16, bf16, fp8_e4m3, ...); "
                   "the target format for from_float32")
    p.add_argument("op", nargs="?",
                   help="add, sub, mul, div, fma, sqrt, convert:<dst>, from_float32")
    p.add_argument("--rounding", default="nearest_even",
                   help="a mode, a comma-separated list, or 'all' (the six deterministic modes)")
    p.add_argument("--shards", type=_positive("--shards"), default=None,
                   help="number of shards, at most the cases (or sampled cases) they "
                        "divide (None: about 2**24 cases each, or 2**24 sampled "
                        "cases)")
    p.add_argument("--shard-ids", default=None, help="run only these shards (e.g. 0,5,7 or 0-15)")
    p.add_argument("--jobs", type=_positive("--jobs"), default=1,
                   help="worker processes (default 1: this process, on threads)")
    p.add_argument("--out", default=None, help=_OUT_HELP)
    p.add_argument("--resume", action="store_true",
                   help="reuse the shard files in --out that verify; recompute the others "
                        "(needs --out)")
    p.add_argument("--sample", type=_positive("--sample"), default=None,
                   help="check K random cases instead of all (at most the space's size)")
    p.add_argument("--seed", type=_nonneg("--seed"), default=0,
                   help="seed of the sample and of the MPFR cases")
    p.add_argument("--mpfr", type=_nonneg("--mpfr"), default=0, metavar="K",
                   help="also check K cases per shard against MPFR (needs gmpy2: "
                        "softfloat-lab[test])")
    p.add_argument("--oracle", default="auto", choices=("auto", "host", "ro53"),
                   help="auto: host for nearest_even where it applies, else ro53")
    p.add_argument("--any-nan", action="store_true",
                   help="accept any NaN for a NaN (default: the promised NaN bit pattern)")
    p.add_argument("--check-nan", action="store_true", help=argparse.SUPPRESS)
    for n in "abc":
        p.add_argument(f"--{n}", default=None, metavar="SET",
                       help=f"operand {n} only from SET: values and ranges, e.g. "
                            f"0x3c00-0x3cff,0x8000 (None: every encoding)")
    p.add_argument("--c-family", default=None, choices=tuple(FAMILIES),
                   help="fma: for every (a, b), addends where the sum cancels: 'cancel' "
                        "16 (-RN(a*b) +- 5 ulps, RN(a*b), +-0, +-max), 'cancel4' 4 "
                        "(-RN(a*b) +- 1 ulp and one of +-0, +-max by (a^b)&3); bf16 needs "
                        "ml_dtypes (softfloat-lab[test])")
    p.add_argument("--backend", default="process", choices=("process", "dask"),
                   help="where shards run: local processes, or a Dask cluster (needs "
                        "softfloat-lab[dask])")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="with --backend dask: an existing scheduler, tcp://HOST:PORT "
                        "(None: a local cluster of --jobs workers)")
    p.add_argument("--timeout", type=_positive_float("--timeout"), default=30.0,
                   metavar="SECONDS",
                   help="with --backend dask: seconds to wait for the scheduler's answer "
                        "and a first worker")
    p.add_argument("--examples", type=_nonneg("--examples"), default=20,
                   help="mismatches kept in the report")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--summarize", metavar="DIR", default=None,
                   help="write DIR/RESULTS.md from the reports in DIR and exit")
    return p


def _table_parser():
    p = _Parser(prog="python -m softfloat sweep table",
                formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                description="Run the whole results table (see softfloat.sweep.table_runs) "
                            "into --out and write --out/RESULTS.md.")
    p.add_argument("--out", default=None,
                   help="directory for the reports and RESULTS.md (default: a new "
                        "directory ./sweep-table-<UTC time>; the committed table is "
                        "rewritten only when asked: --out sweeps)")
    p.add_argument("--sample", type=_positive("--sample"), default=None,
                   help="a random sample of K cases per run instead of every case")
    p.add_argument("--jobs", type=_positive("--jobs"), default=1, help="worker processes")
    p.add_argument("--resume", action="store_true",
                   help="keep the finished runs' shard files in --out (needs --out)")
    p.add_argument("--only", default=None, help="only runs whose 'op format mode' contains this")
    p.add_argument("--fma", action="store_true", help="add fp8 fma (every triple)")
    p.add_argument("--max-cases", type=_positive("--max-cases"), default=None,
                   help="skip runs whose space has more cases (e.g. 16777216: every run "
                        "but the 2^32 ones); RESULTS.md still lists the earlier reports")
    p.add_argument("--mpfr", type=_nonneg("--mpfr"), default=0, metavar="K",
                   help="also check K cases per shard against MPFR (needs gmpy2)")
    p.add_argument("--list", action="store_true", help="list the runs and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _parse_ids(s):
    if s is None:
        return None
    ids = []
    try:
        for part in s.split(","):
            if "-" in part:
                a, b = part.split("-")
                ids.extend(range(int(a), int(b) + 1))
            elif part.strip():
                ids.append(int(part))
    except ValueError:
        raise ValueError(f"bad --shard-ids {s!r}: expected e.g. 0,5,7 or 0-15") from None
    if not ids:
        raise ValueError(f"--shard-ids {s!r} names no shard")
    return ids


def _line(rep):
    mp_ = ""
    if "mpfr" in rep:
        m = rep["mpfr"]
        mp_ = f", MPFR {m['checked']:,} cases: {m['mismatches']} mismatches"
    sp = f" [{_compact_space(rep['space'])}]" if rep.get("space") else ""
    return (f"{rep['op']}{sp} {rep['format']} {rep['mode']} [{rep['oracle']}]: "
            f"{rep['cases']:,} cases, {rep['mismatches']} mismatches "
            f"({rep['bits_mismatches']} bits, {rep['flag_mismatches']} flags only){mp_}, "
            f"{rep['wall_seconds']} s")


def _say(text):
    """Print to stdout; a closed pipe (``| head``) ends the output quietly."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "table":
            return _main_table(argv[1:])
        return _main(argv)
    except KeyboardInterrupt:
        print("\ninterrupted: finished shards are in --out (rerun with --resume)",
              file=sys.stderr)
        return 130
    except SystemExit as exc:            # argparse: 0 for --help, 2 for usage errors
        return exc.code if isinstance(exc.code, int) else 2
    except BrokenPipeError:
        try:
            _say("")
        except OSError:
            pass
        return 0


def _main_table(argv):
    args = _table_parser().parse_args(argv)
    if args.list:
        for r in table_runs(args.fma):
            if (args.only is None or args.only in " ".join(r)) and (
                    args.max_cases is None or total_cases(r[0], r[1]) <= args.max_cases):
                _say(" ".join(r) + " " + str(total_cases(r[0], r[1])))
        return 0
    if args.resume and args.out is None:
        print("error: --resume needs --out (the directory of the earlier run)",
              file=sys.stderr)
        return 2
    out = args.out if args.out is not None else default_out("table", "all").replace(
        "sweep-table-all-", "sweep-table-")
    try:
        if args.mpfr:
            require("gmpy2", "test", "--mpfr (the MPFR witness)")
        bad = run_table(out, sample=args.sample, jobs=args.jobs, resume=args.resume,
                        only=args.only, fma=args.fma, mpfr=args.mpfr,
                        max_cases=args.max_cases, progress=not args.quiet, log=_say)
    except (ValueError, TypeError, OSError, RuntimeError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _say(f"wrote {os.path.join(out, 'RESULTS.md')}; runs with mismatches: {bad}")
    return 1 if bad else 0


def _main(argv):
    args = _parser().parse_args(argv)
    if args.summarize:
        try:
            table = write_results(args.summarize)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        _say(table.rstrip("\n"))
        return 0
    if not args.format or not args.op:
        print("python -m softfloat sweep: error: give a format and an op (or --summarize "
              "DIR, or 'table') (see --help)", file=sys.stderr)
        return 2
    if args.resume and args.out is None:
        print("error: --resume needs --out (the directory of the earlier run)",
              file=sys.stderr)
        return 2
    try:
        if args.rounding.strip() == "all":
            modes = list(DETERMINISTIC_MODES)
        else:
            modes = [m.strip() for m in args.rounding.split(",") if m.strip()]
        if not modes:
            raise ValueError(f"--rounding {args.rounding!r} names no rounding mode")
        modes = [get_rounding(m) for m in modes]
        ids = _parse_ids(args.shard_ids)
        # everything that can be checked is checked before the output directory is made
        sp = Space(args.op, args.format, **_space_kw(dict(a=args.a, b=args.b, c=args.c,
                                                          c_family=args.c_family)))
        if args.mpfr:
            require("gmpy2", "test", "--mpfr (the MPFR witness)")
        if sp.c_family and sp.f.name == "bf16":
            require("ml_dtypes", "test", "the bf16 cancel families")
        if args.backend == "dask":
            require("distributed", "dask", "--backend dask")
        shards = args.shards if args.shards is not None else _default_shards(sp.total,
                                                                              args.sample)
        check_sizes(sp.total, shards, args.sample, f"{args.op} on {sp.f.name}")
        out = args.out if args.out is not None else default_out(sp.f.name, args.op)
        if out:
            check_writable(out)
            if args.out is None:
                print(f"writing to {out}/", file=sys.stderr)
        worst = 0
        for mode in modes:
            rep = run_sweep(args.op, args.format, mode, shards=args.shards, jobs=args.jobs,
                            out=out, resume=args.resume, sample=args.sample,
                            seed=args.seed, oracle=args.oracle, check_nan=not args.any_nan,
                            mpfr=args.mpfr, max_examples=args.examples,
                            progress=not args.quiet, shard_ids=ids, a=args.a, b=args.b,
                            c=args.c, c_family=args.c_family, backend=args.backend,
                            scheduler=args.scheduler, timeout=args.timeout)
            _say(_line(rep))
            for e in rep["first_mismatches"][:5]:
                _say(f"  {e}")
            if rep["mismatches"] or rep.get("mpfr", {}).get("mismatches"):
                worst = 1
        return worst
    except (ValueError, TypeError, OSError, RuntimeError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
