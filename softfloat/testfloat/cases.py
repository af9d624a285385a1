"""Test-case generation in Berkeley TestFloat's manner, for any format.

TestFloat builds operands from an *exponent pattern* OR-ed with a *significand
pattern*, and interleaves those systematic cases with weighted random ones:

``QIn``/``QOut``
    exponent patterns (both signs): zero/subnormal, the smallest normal
    exponent, ``-p`` (p = precision), -2..2 around 1.0, ``+p``, the largest
    finite exponent, the all-ones (infinity/NaN) exponent. ``QOut`` (used for
    one-operand functions) adds emin+1, -4..4 and emax-1.
``P1``/``P2``
    significand patterns: ``P1`` = {0, 1, all ones, all ones - 1}; ``P2`` =
    zero, walking ones, runs of leading ones, all ones, walking zeros, runs of
    trailing ones (4*M - 4 patterns for M fraction bits).
random operands
    3/8 exponent from ``QOut`` with a sum of two ``P2`` patterns; 1/8 ``QOut``
    with a random fraction; 3/8 a random exponent weighted towards 1.0 (the
    window halves with each weight mask) with a sum of two ``P2`` patterns;
    1/8 random exponent (weighted) with a random fraction.

The derivation rules reproduce TestFloat 3e's own fp16 tables (``genCases_f16.c``:
22 ``QIn``, 34 ``QOut``, 4 ``P1``, 36 ``P2`` entries), hence its case counts:
one operand 408 (level 1) / 2,448 (level 2); two operands 46,464 / 1,254,528;
three operands 6,133,248 / 993,586,176. Other formats get tables by the same
rules (bf16 two-operand level 1: 46,464 as well; fp8 e4m3: 38,400; fp32 one
operand 600 as TestFloat's). TestFloat's f32 tables differ from the rule in one
entry (its negative QIn has exponent 126 where the positive one has 127).

The interleaving follows TestFloat's generator loops: level 1 one operand
``R R S``; two operands per pattern pair ``RR AR RR RB RR AB``; three operands
``RRC ABR RRR RBC ARR RBR ARC RRR ABC``; level 2 alternates one all-random case
with one all-pattern case. The pattern sequences run with the first operand
outermost and restart when exhausted (so ``n`` beyond the minimum cycles).

Random draws come from NumPy's PCG64 seeded with ``(seed, block)`` per block of
``BLOCK`` cases, so case ``k`` depends on (seed, k) only: any chunking or any
shard of the stream reproduces the same cases. (The stream is not TestFloat's
C ``rand()`` stream; bit-identical operand lists with TestFloat are not a goal,
identical structure and counts are.)
"""
from __future__ import annotations

import numpy as np

from typing import Iterator

from ..formats import Format
from .names import INT_TYPES, Function, dtype_of, parse_function

__all__ = ["FloatPatterns", "IntPatterns", "CaseStream", "BLOCK", "INT_TYPES", "operands",
           "minimum_cases"]

BLOCK = 1 << 16


# Level-1 templates: per subcase, which operands come from the pattern sequence
# (True) and which are random (False).
_TEMPLATES = {
    (1, 1): ((False,), (False,), (True,)),
    (1, 2): ((False,), (True,)),
    (2, 1): ((False, False), (True, False), (False, False), (False, True), (False, False),
             (True, True)),
    (2, 2): ((False, False), (True, True)),
    (3, 1): ((False, False, True), (True, True, False), (False, False, False),
             (False, True, True), (True, False, False), (False, True, False),
             (True, False, True), (False, False, False), (True, True, True)),
    (3, 2): ((False, False, False), (True, True, True)),
}


def _unique(seq):
    out, seen = [], set()
    for v in seq:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


class FloatPatterns:
    """TestFloat's exponent and significand patterns for one format (encodings
    as Python ints; see the module docstring). Also valid for fp64 (a source
    format of conversions)."""

    def __init__(self, fmt: Format):
        self.fmt = fmt
        E, M, bias = fmt.ebits, fmt.mbits, fmt.bias
        self.nbits = fmt.nbits
        self.dtype = np.dtype(np.uint64) if fmt.nbits > 32 else fmt.dtype
        self.fracmask = (1 << M) - 1
        top = (1 << E) - 1                               # all-ones exponent field
        emax_field = top - 1 if fmt.kind == "ieee" else top
        p = fmt.precision

        def fields(exps):
            out = []
            for f in exps:
                if f is None:
                    continue
                out.append(min(max(f, 0), top))
            return _unique(out)

        qin = fields([0, 1, bias - p, bias - 2, bias - 1, bias, bias + 1, bias + 2, bias + p,
                      emax_field, top])
        # Integer-conversion boundaries (2**29..2**32, 2**61..2**64) where the
        # format reaches them below its two largest binades (f32: 50 patterns).
        ints = [bias + e for e in (29, 30, 31, 32, 61, 62, 63, 64) if bias + e < emax_field - 1]
        qout = fields([0, 1, 2, bias - p, bias - 4, bias - 3, bias - 2, bias - 1, bias,
                       bias + 1, bias + 2, bias + 3, bias + 4, bias + p] + ints +
                      [emax_field - 1, emax_field, top])
        s = fmt.sign_mask if fmt.name != "fp64" else 1 << 63
        if not fmt.has_sign:                             # fnu (e8m0): no sign bit
            s = 0
        self.qin = [f << M for f in qin] + [s | (f << M) for f in qin]
        self.qout = [f << M for f in qout] + [s | (f << M) for f in qout]
        full = self.fracmask
        self.p1 = _unique([f for f in (0, 1, full, full - 1) if 0 <= f <= full])  # (M = 0: e8m0)
        p2 = [0] + [1 << i for i in range(M)]                       # walking ones
        p2 += [full ^ ((1 << (M - k)) - 1) for k in range(2, M)]    # leading-ones runs
        p2 += [full]
        p2 += [full ^ (1 << i) for i in range(1, M)]                # walking zeros
        p2 += [(1 << k) - 1 for k in range(M - 2, 1, -1)]           # trailing-ones runs
        p2 = [f for f in p2 if 0 <= f <= full]
        self.p2 = p2 if len(set(p2)) == len(p2) else _unique(p2)
        # Weight masks for random exponents: the k-th keeps the low E-k exponent
        # bits and adds an offset that centres the window on the bias.
        ks = [0] + list(range(max(E - 2, 0)))
        self.wmask = [s | ((((1 << (E - k)) - 1)) << M) for k in ks]
        self.woff = [((1 << (E - 1)) - (1 << (E - 1 - k)) if k else 0) << M for k in ks]

    def sequence(self, level: int) -> np.ndarray:
        """The systematic operand list for multi-operand functions (QIn x P),
        exponent outermost."""
        p = self.p1 if level == 1 else self.p2
        return np.array([q | f for q in self.qin for f in p], dtype=np.uint64)

    def sequence_out(self, level: int) -> np.ndarray:
        """The systematic operand list for one-operand functions (QOut x P)."""
        p = self.p1 if level == 1 else self.p2
        return np.array([q | f for q in self.qout for f in p], dtype=np.uint64)

    def random(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` random encodings (uint64) by TestFloat's weighted mix."""
        qout = np.array(self.qout, np.uint64)
        p2 = np.array(self.p2, np.uint64)
        wm = np.array(self.wmask, np.uint64)
        wo = np.array(self.woff, np.uint64)
        fm = np.uint64(self.fracmask)
        sel = rng.integers(0, 8, size)
        rbits = rng.integers(0, 1 << min(self.nbits, 63), size, dtype=np.uint64)
        if self.nbits == 64:
            rbits |= rng.integers(0, 2, size, dtype=np.uint64) << np.uint64(63)
        p3 = (p2[rng.integers(0, p2.size, size)] + p2[rng.integers(0, p2.size, size)]) & fm
        q = qout[rng.integers(0, qout.size, size)]
        w = rng.integers(0, wm.size, size)
        out = np.where(sel <= 2, q | p3, 0)
        out = np.where(sel == 3, q | (rbits & fm), out)
        out = np.where((sel >= 4) & (sel <= 6), ((rbits & wm[w]) + wo[w]) | p3, out)
        out = np.where(sel == 7, (rbits & (wm[w] | fm)) + wo[w], out)
        return out.astype(np.uint64)


class IntPatterns:
    """Integer operands (for int -> float conversions): boundaries and bit
    patterns, mixed with random integers of random width and sign. Values are
    the two's-complement bit patterns as uint64."""

    def __init__(self, name: str):
        bits, signed = INT_TYPES[name]
        self.nbits, self.signed = bits, signed
        self.dtype = np.dtype(np.uint64) if bits == 64 else np.dtype(np.uint32)
        mask = (1 << bits) - 1
        vals = [0, 1, 2, 3]
        vals += [1 << k for k in range(bits - (1 if signed else 0))]
        vals += [(1 << k) - 1 for k in range(2, bits + (0 if signed else 1))]
        vals += [(1 << k) + 1 for k in range(2, bits - (1 if signed else 0))]
        if signed:
            vals += [-v for v in list(vals)]
            vals += [-(1 << (bits - 1))]
        self._seq = np.array([v & mask for v in _unique(vals)], np.uint64)
        self.mask = mask

    def sequence(self, level: int) -> np.ndarray:
        return self._seq

    sequence_out = sequence

    def random(self, rng, size):
        width = rng.integers(1, self.nbits + 1, size).astype(np.uint64)
        r = rng.integers(0, 1 << 63, size, dtype=np.uint64)
        r |= rng.integers(0, 2, size, dtype=np.uint64) << np.uint64(63)
        r >>= np.uint64(64) - width
        if self.signed:
            neg = rng.integers(0, 2, size).astype(bool)
            r = np.where(neg, (~r + np.uint64(1)), r)
        return r & np.uint64(self.mask)


class CaseStream:
    """The operand stream of one function: ``total`` systematic cases (the
    minimum, TestFloat's ``genCases_total``), or exhaustively every operand
    combination.

    ``patterns`` is one `FloatPatterns`/`IntPatterns` per operand.
    ``chunk(start, stop)`` returns the operand arrays of cases [start, stop);
    case k depends only on (seed, k).
    """

    def __init__(self, patterns, level=1, seed=1, exhaustive=False):
        if level not in (1, 2):
            raise ValueError(f"level must be 1 or 2, got {level!r}")
        self.patterns = list(patterns)
        self.nops = len(self.patterns)
        if not 1 <= self.nops <= 3:
            raise ValueError("functions take 1, 2 or 3 operands")
        self.level, self.seed, self.exhaustive = level, int(seed), bool(exhaustive)
        if self.exhaustive:
            widths = [p.nbits for p in self.patterns]
            tot = sum(widths)
            if tot > 32:
                raise ValueError(f"-exhaustive is for spaces of at most 2**32 cases; this "
                                 f"function's operands span 2**{tot}")
            self.widths = widths
            self.total = 1 << tot
            return
        if self.nops == 1:
            self.seqs = [self.patterns[0].sequence_out(level)]
        else:
            self.seqs = [p.sequence(level) for p in self.patterns]
        self.template = np.array(_TEMPLATES[(self.nops, level)], bool)
        self.period = len(self.template)
        self.groups = int(np.prod([s.size for s in self.seqs]))
        self.total = self.period * self.groups

    def _random_block(self, block: int):
        rng = np.random.default_rng([self.seed, block])
        return [p.random(rng, BLOCK) for p in self.patterns]

    def chunk(self, start: int, stop: int) -> list:
        """Operands (one uint64 array per operand) of cases [start, stop)."""
        n = stop - start
        k = np.arange(start, stop, dtype=np.uint64)
        if self.exhaustive:
            out, shift = [], sum(self.widths)
            for w in self.widths:
                shift -= w
                out.append((k >> np.uint64(shift)) & np.uint64((1 << w) - 1))
            return out
        # Random operands, block by block (independent of the chunking).
        rnd = [np.empty(n, np.uint64) for _ in range(self.nops)]
        b0, b1 = start // BLOCK, (stop - 1) // BLOCK
        for b in range(b0, b1 + 1):
            lo, hi = max(start, b * BLOCK), min(stop, (b + 1) * BLOCK)
            vals = self._random_block(b)
            for j in range(self.nops):
                rnd[j][lo - start:hi - start] = vals[j][lo - b * BLOCK:hi - b * BLOCK]
        # Systematic operands: group g = pattern tuple, subcase = position in period.
        g = (k // np.uint64(self.period)) % np.uint64(self.groups)
        sub = (k % np.uint64(self.period)).astype(np.intp)
        out = []
        inner = 1
        idx = []
        for s in reversed(self.seqs):
            idx.append((g // np.uint64(inner)) % np.uint64(s.size))
            inner *= s.size
        idx.reverse()
        for j in range(self.nops):
            pat = self.seqs[j][idx[j].astype(np.intp)]
            out.append(np.where(self.template[sub, j], pat, rnd[j]))
        return out


# ---- the operand stream of a function ---------------------------------------------
def _patterns(t):
    return IntPatterns(t) if isinstance(t, str) else FloatPatterns(t)


def stream(fn: Function, level, seed, exhaustive) -> CaseStream:
    return CaseStream([_patterns(t) for t in fn.args], level=level, seed=seed,
                      exhaustive=exhaustive)


def minimum_cases(function, level=1) -> int:
    """TestFloat's minimum (and default) number of cases for a function and level."""
    return stream(parse_function(function), level, 1, False).total


def operands(function, *, level=1, n=None, seed=1, exhaustive=False, offset=0,
             chunk=1 << 20) -> Iterator[tuple]:
    """Operand arrays in chunks (each a tuple of arrays in the operand types'
    dtypes); ``n`` cases from case ``offset`` (default: TestFloat's minimum for
    the level, or the whole space with ``exhaustive``)."""
    fn = parse_function(function)
    s = stream(fn, level, seed, exhaustive)
    if n is None:
        n = s.total - offset if exhaustive else s.total
    if not exhaustive and n < s.total:
        raise ValueError(f"-n {n}: too few cases; the minimum for {fn.name} at level "
                         f"{level} is {s.total}")
    if exhaustive and offset + n > s.total:
        raise ValueError(f"exhaustive space of {fn.name} has {s.total} cases; "
                         f"offset {offset} + n {n} is beyond it")
    if chunk < 1:
        raise ValueError("chunk must be positive")
    pos, end = offset, offset + n
    while pos < end:
        hi = min(end, pos + chunk)
        ops = s.chunk(pos, hi)
        yield pos, tuple(o.astype(dtype_of(t)) for o, t in zip(ops, fn.args))
        pos = hi


