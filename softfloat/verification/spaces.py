"""The operand spaces `softfloat.verify` runs over: a numbering of cases
``0 .. total-1`` and the operands of any range of it (a pure function of the
space and the case index, so that shards can run anywhere and resume).

* ``"exhaustive"``: every operand combination (the mixed-radix numbering of
  `softfloat.sweep.Space`, the last operand fastest): every pair of a 16-bit
  binary op, every triple of an 8-bit fma, every input of a unary op or a
  conversion; at most 2**32 cases;
* ``"level1"`` / ``"level2"``: TestFloat's cases (`softfloat.testfloat.cases`:
  its patterns and interleaving, 46,464 two-operand cases at level 1);
* an int ``n``: ``n`` seeded random cases (uniform operand bits; case ``k``
  depends on (seed, k) only);
* a dict of operand sets as the sweep takes them (``a=``, ``b=``, ``c=``
  values and ranges, ``c_family=`` for fma): `softfloat.sweep.Space`;
* a tuple of operand arrays (one per operand, equal lengths): those cases.
"""
from __future__ import annotations

import numpy as np

from .ops import Op

__all__ = ["CaseSpace", "make_space", "MAX_EXHAUSTIVE_BITS"]

MAX_EXHAUSTIVE_BITS = 32
_RANDOM_BLOCK = 1 << 16
_PROXY = {1: "sqrt", 2: "add", 3: "fma"}


def _bits(t):
    from ..formats import Format
    from .ops import INTS
    return t.nbits if isinstance(t, Format) else INTS[t][0]


class CaseSpace:
    """``total`` cases; ``chunk(lo, hi)`` their operands (a tuple of arrays in
    the op's operand dtypes); ``spec`` a JSON-able description; ``exhaustive``."""

    def __init__(self, op: Op, spec, total, chunk, exhaustive=False):
        self.op, self.spec, self.total, self._chunk = op, spec, int(total), chunk
        self.exhaustive = exhaustive

    def chunk(self, lo, hi):
        ops = self._chunk(int(lo), int(hi))
        return tuple(np.ascontiguousarray(np.asarray(x).astype(d, copy=False)).reshape(-1)
                     for x, d in zip(ops, self.op.in_dtypes))


def _sweep_space(op: Op, kw):
    from ..sweep import Space
    return Space(_PROXY[op.nops], op.fmt, **kw)


def make_space(op: Op, space="exhaustive", seed=0) -> CaseSpace:
    """The `CaseSpace` of ``space`` (see the module doc) for ``op``."""
    from ..formats import Format
    if isinstance(space, str):
        if space == "exhaustive":
            widths = [_bits(t) for t in op.args]
            if sum(widths) > MAX_EXHAUSTIVE_BITS:
                raise ValueError(f"{op.describe()}: the exhaustive space has 2**{sum(widths)} "
                                 f"cases (more than 2**{MAX_EXHAUSTIVE_BITS}); use "
                                 f"space='level1', 'level2', a number of random cases, or "
                                 f"operand sets")
            all_float = all(isinstance(t, Format) and t.nbits <= 16 for t in op.args)
            if all_float and (op.nops > 1 or op.fmt.nbits <= 19):
                sp = _sweep_space(op, {})
                return CaseSpace(op, "exhaustive", sp.total,
                                 lambda lo, hi: sp.operands(np.arange(lo, hi, dtype=np.int64)),
                                 True)

            def chunk(lo, hi):
                k = np.arange(lo, hi, dtype=np.uint64)
                out, shift = [], sum(widths)
                for w in widths:
                    shift -= w
                    out.append((k >> np.uint64(shift)) & np.uint64((1 << w) - 1))
                return out
            return CaseSpace(op, "exhaustive", 1 << sum(widths), chunk, True)
        if space in ("level1", "level2"):
            from ..testfloat.cases import CaseStream, FloatPatterns, IntPatterns
            level = int(space[-1])
            pats = [FloatPatterns(t) if isinstance(t, Format) else IntPatterns(
                {"int32": "i32", "int64": "i64", "uint32": "ui32", "uint64": "ui64"}[t])
                for t in op.args]
            st = CaseStream(pats, level=level, seed=1 + int(seed))
            return CaseSpace(op, space, st.total, st.chunk)
        raise ValueError(f"unknown space {space!r}; expected 'exhaustive', 'level1', "
                         f"'level2', a number of random cases, a dict of operand sets "
                         f"(a=, b=, c=, c_family=) or a tuple of operand arrays")
    if isinstance(space, (int, np.integer)) and not isinstance(space, (bool, np.bool_)):
        n = int(space)
        if n < 1:
            raise ValueError(f"space: a number of random cases must be positive, got {n}")
        widths = [_bits(t) for t in op.args]

        def chunk(lo, hi):
            out = [np.empty(hi - lo, np.uint64) for _ in widths]
            for b in range(lo // _RANDOM_BLOCK, (hi - 1) // _RANDOM_BLOCK + 1):
                rng = np.random.default_rng([int(seed), 0x5F, b])
                vals = [rng.integers(0, 1 << w, size=_RANDOM_BLOCK, dtype=np.uint64,
                                     endpoint=False) if w < 64 else
                        rng.integers(0, 2**64 - 1, size=_RANDOM_BLOCK, dtype=np.uint64,
                                     endpoint=True) for w in widths]
                s, e = max(lo, b * _RANDOM_BLOCK), min(hi, (b + 1) * _RANDOM_BLOCK)
                for j, v in enumerate(vals):
                    out[j][s - lo:e - lo] = v[s - b * _RANDOM_BLOCK:e - b * _RANDOM_BLOCK]
            return out
        return CaseSpace(op, {"random": n, "seed": int(seed)}, n, chunk)
    if isinstance(space, dict):
        if not all(isinstance(t, Format) for t in op.args):
            raise ValueError(f"{op.describe()}: operand sets are for float operands")
        sp = _sweep_space(op, {k: v for k, v in space.items() if v is not None})
        return CaseSpace(op, {"sets": sp.describe()}, sp.total,
                         lambda lo, hi: sp.operands(np.arange(lo, hi, dtype=np.int64)))
    if isinstance(space, (tuple, list)):
        arrs = [np.asarray(x) for x in space]
        if len(arrs) != op.nops:
            raise ValueError(f"{op.describe()} takes {op.nops} operand(s); space has "
                             f"{len(arrs)} arrays")
        for x, d in zip(arrs, op.in_dtypes):
            if x.dtype.kind != "u":
                raise TypeError(f"space: operand arrays must be unsigned encodings "
                                f"({d}), got {x.dtype}")
            if x.ndim != 1:
                raise ValueError("space: operand arrays must be 1-D")
        if len({x.size for x in arrs}) != 1:
            raise ValueError("space: operand arrays must have equal lengths")
        for x, t in zip(arrs, op.args):
            w = _bits(t)
            if x.size and w < 64 and int(x.max()) >= 1 << w:
                raise ValueError(f"space: operand value {int(x.max()):#x} out of range for "
                                 f"{w}-bit operands")
        return CaseSpace(op, {"cases": int(arrs[0].size)}, arrs[0].size,
                         lambda lo, hi: [x[lo:hi] for x in arrs])
    raise TypeError(f"space must be a str, an int, a dict or a tuple of arrays, got "
                    f"{type(space).__name__}")
