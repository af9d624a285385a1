"""The operand space of a sweep and its shards: which operation on which formats,
every encoding or a sub-space of operand sets (``a=``, ``b=``, ``c=``) or fma's
structured addend families (``c_family="cancel"``, ``"cancel4"``), the
mixed-radix numbering of its cases (the last operand fastest), the blocks a
shard is checked in (aligned boxes of the space where possible), shard ranges
and seeded samples (pure functions of their arguments), default shard counts and
the checks of a space's size; also `parse_values` (operand sets from the command
line) and `require` (the check for an optional extra a space or a run needs).
"""
from __future__ import annotations

import numpy as np

from .. import sweep_oracles as O
from ..formats import FP32, Format, get_format

OPS = O.BINARY_OPS + O.UNARY_OPS + O.TERNARY_OPS + ("convert:<format>", "from_float32")
BLOCK = 1 << 20            # cases per kernel call
FAMILY_SIZE = 16           # addends per (a, b) pair of the "cancel" fma family
FAMILIES = {"cancel": FAMILY_SIZE, "cancel4": 4}   # fma addend families and their sizes
MAX_UNARY_BITS = 19        # unary ops and conversions: sources up to tf32 (2**19 encodings)


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
            raise ValueError("from_float32 sweeps target formats of at most 16 bits")
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


def _space_kw(space):
    return {k: v for k, v in (space or {}).items() if v is not None}


def _compact_space(d):
    return ", ".join(f"{k}={v}" for k, v in d.items())
