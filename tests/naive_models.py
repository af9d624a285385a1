"""Slow, obviously-right references for the accumulation models.

Plain Python loops over exact ``fractions.Fraction`` values; every rounding goes
through ``exact_reference.round_exact`` (written independently of the library's kernels).
The summation trees are rebuilt here from their definitions.

A value in flight is ``("finite", Fraction)``, ``("zero", sign)``, ``("inf", sign)``
or ``("nan", None)``. Results are (bits, flags); NaN results use the format's
default NaN (compare NaN results as "both NaN").
"""
from __future__ import annotations

from fractions import Fraction

import exact_reference as O

INVALID = O.INVALID


def _f(fmt):
    """Format names are looked up in softfloat (data only: ebits, mbits, bias, kind)."""
    if isinstance(fmt, str):
        import softfloat
        return softfloat.get_format(fmt)
    return fmt


def value_of(bits, fmt):
    fmt = _f(fmt)
    d = O.decode(int(bits), fmt)
    if d.cls == "finite":
        return ("finite", d.value)
    if d.cls == "zero":
        return ("zero", d.sign)
    if d.cls == "inf":
        return ("inf", d.sign)
    return ("nan", None)


def product(x, y):
    """Exact product of two values in flight; (value, flags)."""
    if x[0] == "nan" or y[0] == "nan":
        return ("nan", None), 0
    sx = x[1] if x[0] in ("zero", "inf") else int(x[1] < 0)
    sy = y[1] if y[0] in ("zero", "inf") else int(y[1] < 0)
    if x[0] == "inf" or y[0] == "inf":
        if x[0] == "zero" or y[0] == "zero":
            return ("nan", None), INVALID
        return ("inf", sx ^ sy), 0
    if x[0] == "zero" or y[0] == "zero":
        return ("zero", sx ^ sy), 0
    return ("finite", x[1] * y[1]), 0


def round_into(v, fmt, rounding, **pol):
    """Round a value in flight into fmt: (bits, flags)."""
    fmt = _f(fmt)
    L = O.layout(fmt)
    if v[0] == "nan":
        return O.nan_bits(fmt), 0
    if v[0] == "inf":
        if L.kind == "ieee":
            return (v[1] << (L.E + L.M)) | (((1 << L.E) - 1) << L.M), 0
        return O.nan_bits(fmt, v[1]), INVALID
    if v[0] == "zero":
        return (0 if L.kind == "fnuz" else v[1] << (L.E + L.M)), 0
    x = v[1]
    return O.round_exact(int(x < 0), abs(x), fmt, rounding, **pol)


def add(x, y, fmt, rounding, **pol):
    """round(x + y) into fmt for two exact values in flight: (bits, flags)."""
    fmt = _f(fmt)
    if x[0] == "nan" or y[0] == "nan":
        return O.nan_bits(fmt), 0
    if x[0] == "inf" and y[0] == "inf" and x[1] != y[1]:
        return O.nan_bits(fmt), INVALID
    if x[0] == "inf":
        return round_into(x, fmt, rounding, **pol)
    if y[0] == "inf":
        return round_into(y, fmt, rounding, **pol)
    if x[0] == "zero" and y[0] == "zero":
        s = x[1] if x[1] == y[1] else int(O._mode(rounding) == "downward")
        return round_into(("zero", s), fmt, rounding, **pol)
    if x[0] == "zero":
        return round_into(y, fmt, rounding, **pol)
    if y[0] == "zero":
        return round_into(x, fmt, rounding, **pol)
    s = x[1] + y[1]
    if s == 0:
        return round_into(("zero", int(O._mode(rounding) == "downward")), fmt, rounding,
                          **pol)
    return round_into(("finite", s), fmt, rounding, **pol)


def neg(v):
    if v[0] == "finite":
        return ("finite", -v[1])
    if v[0] in ("zero", "inf"):
        return (v[0], 1 - v[1])
    return v


# ---------------------------------------------------------------------------
# Trees
# ---------------------------------------------------------------------------
def pairwise_tree(k):
    """Adjacent pairs level by level; an odd last node moves up unchanged."""
    level = list(range(k))
    while len(level) > 1:
        new = []
        i = 0
        while i + 1 < len(level):
            new.append((level[i], level[i + 1]))
            i += 2
        if i < len(level):
            new.append(level[i])
        level = new
    return level[0]


def blocked_tree(k, b):
    blocks = []
    for s in range(0, k, b):
        blk = tuple(range(s, min(k, s + b)))
        blocks.append(blk[0] if len(blk) == 1 else blk)
    return tuple(blocks) if len(blocks) > 1 else blocks[0]


def eval_tree(tree, terms, fmt, rounding, **pol):
    """A node: first child rounded into fmt, then v = round(v + child) per next child
    (a leaf child exact, a node child its rounded value). Returns (bits, flags)."""
    fmt = _f(fmt)
    if isinstance(tree, int):
        return round_into(terms[tree], fmt, rounding, **pol)
    flags = 0
    bits = None
    for n, child in enumerate(tree):
        if isinstance(child, int):
            cv = terms[child]
        else:
            cb, f = eval_tree(child, terms, fmt, rounding, **pol)
            flags |= f
            if n == 0:
                bits = cb
                continue
            cv = value_of(cb, fmt)
        if n == 0:
            bits, f = round_into(cv, fmt, rounding, **pol)
        else:
            bits, f = add(value_of(bits, fmt), cv, fmt, rounding, **pol)
        flags |= f
    return bits, flags


def sequential(terms, fmt, rounding, c_bits=None, **pol):
    """acc = round(t0) (or c), then acc = round(acc + t) for each next term."""
    fmt = _f(fmt)
    flags = 0
    if c_bits is None:
        bits, flags = round_into(terms[0], fmt, rounding, **pol)
        rest = terms[1:]
    else:
        bits, rest = int(c_bits), terms
    for t in rest:
        bits, f = add(value_of(bits, fmt), t, fmt, rounding, **pol)
        flags |= f
    return bits, flags


def kahan(terms, fmt, rounding, **pol):
    fmt = _f(fmt)
    flags = 0
    s, f = round_into(terms[0], fmt, rounding, **pol)
    flags |= f
    comp = round_into(("zero", 0), fmt, rounding)[0]
    for x in terms[1:]:
        y, f1 = add(x, neg(value_of(comp, fmt)), fmt, rounding, **pol)
        t, f2 = add(value_of(s, fmt), value_of(y, fmt), fmt, rounding, **pol)
        d, f3 = add(value_of(t, fmt), neg(value_of(s, fmt)), fmt, rounding, **pol)
        comp, f4 = add(value_of(d, fmt), neg(value_of(y, fmt)), fmt, rounding, **pol)
        s = t
        flags |= f1 | f2 | f3 | f4
    return s, flags


# ---------------------------------------------------------------------------
# Block FMA (tensor cores), from the definition
# ---------------------------------------------------------------------------
def _binade(x: Fraction, emin: int) -> int:
    return max(O._floor_log2(abs(x)), emin)


def block_fma(a_bits, b_bits, in_fmt, width, extra, fmt, rounding, c_bits=None,
              frame_bits=23, frame_emin=-126):
    """Products of a_i b_i in blocks of ``width``: align to the largest (unnormalised)
    exponent among nonzero products and c, truncate every term to 2**(E -
    frame_bits - extra), add exactly, round into fmt; the result is the next c."""
    in_fmt, fmt = _f(in_fmt), _f(fmt)
    Lin = O.layout(in_fmt)
    av = [value_of(x, in_fmt) for x in a_bits]
    bv = [value_of(x, in_fmt) for x in b_bits]
    c = value_of(c_bits, fmt) if c_bits is not None else ("zero", 0)
    prods = [product(x, y)[0] for x, y in zip(av, bv)]
    allv = prods + [c]
    if any(v[0] == "nan" for v in allv):
        return O.nan_bits(fmt), None
    infs = {v[1] for v in allv if v[0] == "inf"}
    if len(infs) == 2:
        return O.nan_bits(fmt), None
    if infs:
        return round_into(("inf", infs.pop()), fmt, rounding)[0], None
    for k0 in range(0, len(av), width):
        exps = []
        terms = []
        if c[0] == "finite":
            exps.append(_binade(c[1], frame_emin))
            terms.append(c[1])
        for x, y in zip(av[k0:k0 + width], bv[k0:k0 + width]):
            if x[0] == "finite" and y[0] == "finite":
                exps.append(_binade(x[1], Lin.emin) + _binade(y[1], Lin.emin))
                terms.append(x[1] * y[1])
        if not terms:
            c = ("zero", 0)
            continue
        q = Fraction(2) ** (max(exps) - frame_bits - extra)
        S = Fraction(0)
        for t in terms:
            mag = abs(t) / q
            tr = (mag.numerator // mag.denominator) * q
            S += tr if t > 0 else -tr
        if S == 0:
            c = ("zero", 0)
        else:
            cb, _ = round_into(("finite", S), fmt, rounding)
            c = value_of(cb, fmt)
            if c[0] == "inf":
                break              # an overflowing block: the infinity stays (inf + finite)
    return round_into(c, fmt, rounding)[0] if c[0] != "finite" else cb, None
