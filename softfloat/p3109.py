"""IEEE P3109 formats and operations (docs/p3109.md).

The formats themselves (``"binary8p3se"``, ``"Binary8p4sf"``, any BinaryKpP with
K in 3..16, signed or unsigned, extended or finite) are softfloat formats like
any other: `softfloat.to_bits`, `from_bits`, `quantize`, `convert` and the
arithmetic take them, with the ``saturation=`` policy. This module adds what
only P3109 defines: exact decoding, the operations with operands and result in
different formats (one rounding, the given projection), and the block
operations.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import _validate
from ._kernels.codes import C_FINITE, C_INF, C_QNAN, C_ZERO
from ._kernels.p3109 import decode_parts_chunk
from ._parallel import run_chunks
from .formats import Format, get_format

__all__ = [
    "decode", "decode_parts", "p3109_format", "is_p3109", "project", "convert",
    "negate", "abs", "add", "subtract", "multiply", "divide", "recip", "sqrt", "fma", "faa",
    "scaled_add", "scaled_subtract", "scaled_multiply", "block_dot_product",
    "block_reduce_add", "minimum", "maximum", "minimum_number", "maximum_number",
    "minimum_magnitude", "maximum_magnitude", "minimum_magnitude_number",
    "maximum_magnitude_number", "minimum_finite", "maximum_finite", "compare_less",
    "compare_less_equal", "compare_equal", "compare_greater", "compare_greater_equal",
    "is_zero", "is_one", "is_nan", "is_infinite", "is_finite", "is_sign_minus", "is_normal",
    "is_subnormal", "next_greater_than", "next_less_than", "max_finite_of", "min_finite_of",
    "min_positive_of", "min_normal_of", "max_subnormal_of", "REPORT_MODES",
    "REPORT_SATURATION"]

from .formats import p3109_format  # noqa: E402  (re-exported)


def _fmt(fmt) -> Format:
    return _validate.target_format(fmt)


def is_p3109(fmt) -> bool:
    """Whether ``fmt`` (a Format or a name) is a P3109 format."""
    return _fmt(fmt).is_p3109


def decode_parts(codes, fmt):
    """Exact integer parts of encodings of any format: ``(cls, sign, exp, sig)``
    int64 arrays of the shape of ``codes``; a finite value is
    ``(-1)**sign * sig * 2**exp``; ``cls`` is 0 zero, 1 finite, 2 infinity (sign
    in ``sign``), 3 NaN. Works for every P3109 format, those whose values leave
    float64 (e.g. binary16p1ue, up to 2**32765) included."""
    f = _fmt(fmt)
    b = _validate.as_bits(codes, f, "codes")
    src = np.ascontiguousarray(b, np.int64).reshape(-1)
    n = src.size
    cls, sign, exp, sig = (np.empty(n, np.int64) for _ in range(4))
    run_chunks(decode_parts_chunk, n, src, cls, sign, exp, sig, *f.params)
    cls[cls > C_QNAN] = C_QNAN
    return tuple(a.reshape(b.shape) for a in (cls, sign, exp, sig))


def decode(codes, fmt) -> np.ndarray:
    """Exact values of encodings as an object array of `fractions.Fraction`, with
    ``float('inf')``, ``float('-inf')`` and ``float('nan')`` for the specials (any
    format; the one exact decoding of P3109 formats beyond float64's range)."""
    cls, sign, exp, sig = decode_parts(codes, fmt)
    out = np.empty(cls.shape, object)
    flat = out.reshape(-1)
    for i, (c, s, e, m) in enumerate(zip(cls.reshape(-1).tolist(), sign.reshape(-1).tolist(),
                                         exp.reshape(-1).tolist(), sig.reshape(-1).tolist())):
        if c == C_FINITE:
            v = Fraction(m) * Fraction(2) ** e
            flat[i] = -v if s else v
        elif c == C_ZERO:
            flat[i] = Fraction(0)
        elif c == C_INF:
            flat[i] = float("-inf") if s else float("inf")
        else:
            flat[i] = float("nan")
    return out


# ---------------------------------------------------------------------------
# plumbing: exact decoding (omega-decode), one rounding (omega-project)
# ---------------------------------------------------------------------------
from ._kernels import p3109 as _k  # noqa: E402
from ._kernels.codes import F_OVERFLOW  # noqa: E402
from .context import kernel_policy, random_key, resolve  # noqa: E402
from .rounding import Rounding  # noqa: E402

#: the report's names of the rounding modes, read as softfloat's
REPORT_MODES = {"NearestTiesToEven": "nearest_even", "NearestTiesToAway": "nearest_away",
                "TowardZero": "toward_zero", "TowardPositive": "upward",
                "TowardNegative": "downward", "ToOdd": "odd"}
REPORT_SATURATION = {"SatFinite": "satfinite", "SatPropagate": "satpropagate",
                     "SatNone": "satnone"}

_NAN, _FIN, _INF, _ZERO = C_QNAN, C_FINITE, C_INF, C_ZERO


def _opfmt(fmt, what) -> Format:
    """A format the P3109 operations take: a P3109 format or an IEEE one
    (binary32, binary16, bfloat16: the report's external formats)."""
    f = _fmt(fmt)
    if not (f.is_p3109 or f.kind == "ieee"):
        raise ValueError(f"{what}: {f.name} is neither a P3109 format nor an IEEE one "
                         f"(binary32, binary16, bfloat16); the P3109 operations take those")
    return f


def _parts(codes, f, name):
    """omega-decode: (cls, sign, exp, sig) int64; -0 reads as 0, every NaN as NaN."""
    b = _validate.as_bits(codes, f, name)
    cls, sign, exp, sig = decode_parts(b, f)
    sign = np.where((cls == _ZERO) | (cls == _NAN), 0, sign)
    return [cls, sign, exp, sig]


def _projection(rounding, saturation):
    r = "nearest_even" if rounding is None else REPORT_MODES.get(rounding, rounding) \
        if isinstance(rounding, str) else rounding
    s = "satnone" if saturation is None else REPORT_SATURATION.get(saturation, saturation) \
        if isinstance(saturation, str) else saturation
    return r, s


def _run(op, fr, rounding, saturation, seed, a, b=None, c=None):
    """Apply kernel ``op`` to decoded operands (broadcast) and round once into fr
    with the projection (rounding, saturation). Returns fr codes."""
    fr = _opfmt(fr, "result format")
    rounding, saturation = _projection(rounding, saturation)
    ops = [x for x in (a, b, c) if x is not None]
    shape = np.broadcast_shapes(*(x[0].shape for x in ops))
    flat = [[np.ascontiguousarray(np.broadcast_to(p, shape), np.int64).reshape(-1)
             for p in x] for x in ops]
    while len(flat) < 3:
        flat.append(flat[0])
    n = int(np.prod(shape, dtype=np.int64))
    res = resolve(rounding, saturation=saturation if fr.is_p3109 else None, seed=seed)
    if not fr.is_p3109:
        from .context import check_option
        check_option("saturation", saturation)
    pol = kernel_policy(res, fr)
    key = random_key(res.seed) if res.rounding == Rounding.STOCHASTIC else 0
    out = np.empty(n, np.int64)
    flg = np.empty(n, np.uint8)
    run_chunks(_k.apply_chunk, n, op, *flat[0], *flat[1], *flat[2], out, flg, *fr.params,
               pol, key)
    if not fr.is_p3109:
        out = _ieee_fixup(out, flg, fr, res.rounding, saturation)
    return out.astype(fr.dtype).reshape(shape)


def _ieee_fixup(out, flg, f, mode, sat):
    """P3109 projection into an IEEE format (signed, extended): zero is +0, a NaN
    the default NaN, and overflow and infinities saturate by the report's table
    (SatNone: infinity unless the mode rounds toward the largest finite value;
    odd rounding too gives infinity there, where IEEE 754's gives the largest)."""
    sm = f.sign_mask
    out = np.where(out == sm, 0, out)
    out = np.where(f.is_nan_bits(out), f.default_nan_bits, out)
    neg = (out & sm) != 0
    mag = out & (sm - 1)
    inf = mag == f.inf_bits
    ovf = (flg & F_OVERFLOW) != 0
    mhi, infb = f.max_bits, f.inf_bits
    if sat == "satfinite":
        big = np.where(inf | ovf, mhi, mag)
    elif sat == "satpropagate":
        big = np.where(ovf, mhi, mag)
    else:
        clamp = {Rounding.TOWARD_ZERO: (True, True), Rounding.DOWNWARD: (True, False),
                 Rounding.UPWARD: (False, True)}.get(Rounding(mode), (False, False))
        big = np.where(ovf, np.where(neg, infb if not clamp[1] else mhi,
                                     infb if not clamp[0] else mhi), mag)
    return np.where(f.is_nan_bits(out), out, np.where(neg, sm, 0) | big)


def _round_exact(cls, sign, N, exp, fr, rounding, saturation, seed):
    """One rounding of exact values: cls (int64), sign, N (Python ints >= 0,
    object array), exp: (-1)**sign * N * 2**exp for finite ones."""
    cls = np.asarray(cls, np.int64).reshape(-1)
    n = cls.size
    sig = np.zeros(n, np.int64)
    e = np.zeros(n, np.int64)
    Nf = np.asarray(N, object).reshape(-1)
    ef = np.asarray(exp, object).reshape(-1)
    for i in np.flatnonzero(cls == _FIN):
        v, x = int(Nf[i]), int(ef[i])
        if v == 0:
            cls[i] = _ZERO
            continue
        bl = v.bit_length()
        if bl > 62:                       # jam: bits far below any rounding point
            sh = bl - 62
            v = (v >> sh) | (1 if v & ((1 << sh) - 1) else 0)
            x += sh
        sig[i], e[i] = v, x
    parts = [cls, np.asarray(sign, np.int64).reshape(-1), e, sig]
    return _run(_k.OP_ROUND, fr, rounding, saturation, seed, parts)


def project(codes, fx, fr, rounding=None, *, saturation=None, seed=None):
    """Convert<fx, fr>: encodings of fx (P3109 or binary32/binary16/bfloat16)
    into fr with the projection (rounding, saturation): one rounding."""
    fx = _opfmt(fx, "source format")
    return _run(_k.OP_ROUND, fr, rounding, saturation, seed, _parts(codes, fx, "codes"))


convert = project


def _unary_parts(x, fx, fr):
    return _parts(x, _opfmt(fx, "operand format"), "x")


def negate(x, fx, fr=None, rounding=None, *, saturation=None, seed=None):
    """Negate<fx, fr>: -x projected into fr (default fx); an unsigned fr gives
    what saturation says for a negative value."""
    p = _unary_parts(x, fx, fr)
    p[1] = np.where(p[0] == _FIN, 1 - p[1], np.where(p[0] == _INF, 1 - p[1], p[1]))
    return _run(_k.OP_ROUND, fr or fx, rounding, saturation, seed, p)


def abs(x, fx, fr=None, rounding=None, *, saturation=None, seed=None):  # noqa: A001
    """Abs<fx, fr>: |x| projected into fr (default fx)."""
    p = _unary_parts(x, fx, fr)
    p[1] = np.zeros_like(p[1])
    return _run(_k.OP_ROUND, fr or fx, rounding, saturation, seed, p)


def _binary(op, x, y, fx, fy, fr, rounding, saturation, seed, negy=False):
    f = [_opfmt(v, nm) for v, nm in ((fx, "x format"), (fy, "y format"), (fr, "result format"))]
    if f[0] == f[1] == f[2] and f[2].is_p3109:
        # one P3109 format: the library's own kernels (fast paths included) follow the
        # report there (one NaN, no -0, x / 0 NaN, the saturation policy)
        from . import arith
        fn = {_k.OP_ADD: arith.sub if negy else arith.add, _k.OP_MUL: arith.mul,
              _k.OP_DIV: arith.div}[op]
        rounding, saturation = _projection(rounding, saturation)
        return fn(x, y, f[2], rounding, saturation=saturation, seed=seed)
    a = _parts(x, _opfmt(fx, "x format"), "x")
    b = _parts(y, _opfmt(fy, "y format"), "y")
    if negy:
        b[1] = np.where((b[0] == _FIN) | (b[0] == _INF), 1 - b[1], b[1])
    out = _run(op, fr, rounding, saturation, seed, a, b)
    if op == _k.OP_DIV:                   # x / 0 is NaN (no signed zero to say which infinity)
        fr = _opfmt(fr, "result format")
        zero = np.broadcast_to(b[0] == _ZERO, out.shape)
        out = np.where(zero, fr.default_nan_bits, out).astype(fr.dtype)
    return out


def add(x, y, fx, fy, fr, rounding=None, *, saturation=None, seed=None):
    """Add<fx, fy, fr>: x + y exactly, projected once into fr."""
    return _binary(_k.OP_ADD, x, y, fx, fy, fr, rounding, saturation, seed)


def subtract(x, y, fx, fy, fr, rounding=None, *, saturation=None, seed=None):
    """Subtract<fx, fy, fr>: x - y exactly, projected once into fr."""
    return _binary(_k.OP_ADD, x, y, fx, fy, fr, rounding, saturation, seed, negy=True)


def multiply(x, y, fx, fy, fr, rounding=None, *, saturation=None, seed=None):
    """Multiply<fx, fy, fr>: x * y exactly (0 * Inf is NaN), projected once into fr."""
    return _binary(_k.OP_MUL, x, y, fx, fy, fr, rounding, saturation, seed)


def divide(x, y, fx, fy, fr, rounding=None, *, saturation=None, seed=None):
    """Divide<fx, fy, fr> (optional in the report): x / y rounded once; x / 0 is
    NaN, x / Inf is 0, Inf / Inf and NaN operands NaN."""
    return _binary(_k.OP_DIV, x, y, fx, fy, fr, rounding, saturation, seed)


def recip(x, fx, fr, rounding=None, *, saturation=None, seed=None):
    """Recip<fx, fr>: 1 / x rounded once; Recip(0) is NaN, Recip(+-Inf) is 0."""
    fx = _opfmt(fx, "x format")
    b = _parts(x, fx, "x")
    one = [np.full(b[0].shape, _FIN), np.zeros(b[0].shape, np.int64),
           np.zeros(b[0].shape, np.int64), np.ones(b[0].shape, np.int64)]
    fr = _opfmt(fr, "result format")
    out = _run(_k.OP_DIV, fr, rounding, saturation, seed, one, b)
    return np.where(b[0] == _ZERO, fr.default_nan_bits, out).astype(fr.dtype)


def sqrt(x, fx, fr, rounding=None, *, saturation=None, seed=None):
    """Sqrt<fx, fr> (optional in the report): the square root rounded once;
    negative x gives NaN."""
    return _run(_k.OP_SQRT, fr, rounding, saturation, seed, _parts(x, _opfmt(fx, "x format"), "x"))


def fma(x, y, z, fx, fy, fz, fr, rounding=None, *, saturation=None, seed=None):
    """FMA<fx, fy, fz, fr>: x * y + z exactly, projected once into fr."""
    a = _parts(x, _opfmt(fx, "x format"), "x")
    b = _parts(y, _opfmt(fy, "y format"), "y")
    c = _parts(z, _opfmt(fz, "z format"), "z")
    return _run(_k.OP_FMA, fr, rounding, saturation, seed, a, b, c)


# ---------------------------------------------------------------------------
# exact sums of exact products (FAA, scaled and block operations)
# ---------------------------------------------------------------------------
def _product(factors):
    """The exact product of decoded factors (lists of broadcastable parts):
    (cls, sign, N object array of Python ints, exp). NaN if a factor is NaN or a
    zero meets an infinity (omega-multiply, the report's left fold gives the same)."""
    shape = np.broadcast_shapes(*(f[0].shape for f in factors))
    cls = [np.broadcast_to(f[0], shape) for f in factors]
    isnan = np.zeros(shape, bool)
    anyzero = np.zeros(shape, bool)
    anyinf = np.zeros(shape, bool)
    sign = np.zeros(shape, np.int64)
    exp = np.zeros(shape, np.int64)
    N = np.ones(shape, object)
    for f, c in zip(factors, cls):
        isnan |= c == _NAN
        anyzero |= c == _ZERO
        anyinf |= c == _INF
        sign = sign ^ np.broadcast_to(f[1], shape)
        fin = c == _FIN
        exp = exp + np.where(fin, np.broadcast_to(f[2], shape), 0)
        N = N * np.where(fin, np.broadcast_to(f[3], shape).astype(object), 1)
    out = np.where(isnan | (anyzero & anyinf), _NAN,
                   np.where(anyinf, _INF, np.where(anyzero, _ZERO, _FIN)))
    return out, sign, N, exp


def _sum(cls, sign, N, exp, axis=-1):
    """Exact sum along ``axis`` of exact values: NaN if a term is NaN or both
    infinities meet; an infinity if one does; else the exact sum (0 is +0)."""
    isnan = (cls == _NAN).any(axis)
    pinf = ((cls == _INF) & (sign == 0)).any(axis)
    ninf = ((cls == _INF) & (sign == 1)).any(axis)
    fin = cls == _FIN
    big = np.iinfo(np.int64).max
    emin = np.where(fin, exp, big).min(axis, keepdims=True)
    emin = np.where(emin == big, 0, emin)
    sh = np.where(fin, exp - emin, 0).astype(object)
    terms = np.where(fin, N * (1 << sh) * np.where(sign == 1, -1, 1).astype(object), 0)
    total = terms.sum(axis)
    total = np.asarray(total, object)
    emin = np.squeeze(emin, axis)
    rcls = np.where(isnan | (pinf & ninf), _NAN,
                    np.where(pinf | ninf, _INF, _FIN))
    rsign = np.where(pinf | ninf, ninf.astype(np.int64),
                     np.asarray([1 if int(t) < 0 else 0 for t in total.reshape(-1)],
                                np.int64).reshape(total.shape))
    mag = np.asarray([builtins_abs(int(t)) for t in total.reshape(-1)], object).reshape(total.shape)
    return rcls, rsign, mag, emin


import builtins as _builtins  # noqa: E402
builtins_abs = _builtins.abs


def faa(x, y, z, fx, fy, fz, fr, rounding=None, *, saturation=None, seed=None):
    """FAA<fx, fy, fz, fr>: x + y + z exactly, projected once into fr."""
    ps = [_parts(v, _opfmt(f, nm + " format"), nm) for v, f, nm in
          ((x, fx, "x"), (y, fy, "y"), (z, fz, "z"))]
    shape = np.broadcast_shapes(*(p[0].shape for p in ps))
    st = [np.stack([np.broadcast_to(p[i], shape) for p in ps], -1) for i in range(4)]
    cls, sign, N, exp = _sum(st[0], st[1], st[3].astype(object), st[2])
    return _round_exact(cls, sign, N, exp, fr, rounding, saturation, seed).reshape(shape)


def _scaled(s, x, fs, fx, sname, xname):
    """omega-BlockDecode with B = 1: the exact s * x."""
    sp = _parts(s, _opfmt(fs, sname + " format"), sname)
    xp = _parts(x, _opfmt(fx, xname + " format"), xname)
    return _product([sp, xp])


def _scaled_op(kind, s1, x1, s2, x2, fs1, f1, fs2, f2, fr, rounding, saturation, seed):
    a = _scaled(s1, x1, fs1, f1, "s1", "x1")
    b = _scaled(s2, x2, fs2, f2, "s2", "x2")
    shape = np.broadcast_shapes(a[0].shape, b[0].shape)
    if kind == "mul":
        cls, sign, N, exp = _product_of_exact(a, b)
    else:
        if kind == "sub":
            b = (b[0], np.where(b[0] != _NAN, 1 - b[1], b[1]), b[2], b[3])
        st = [np.stack([np.broadcast_to(a[i], shape), np.broadcast_to(b[i], shape)], -1)
              for i in range(4)]
        cls, sign, N, exp = _sum(st[0], st[1], st[2], st[3])
    return _round_exact(cls, sign, N, exp, fr, rounding, saturation, seed).reshape(shape)


def _product_of_exact(a, b):
    """The exact product of two exact values (cls, sign, N, exp)."""
    shape = np.broadcast_shapes(a[0].shape, b[0].shape)
    ca, cb = np.broadcast_to(a[0], shape), np.broadcast_to(b[0], shape)
    nan = (ca == _NAN) | (cb == _NAN) | (((ca == _ZERO) | (cb == _ZERO)) &
                                         ((ca == _INF) | (cb == _INF)))
    cls = np.where(nan, _NAN, np.where((ca == _INF) | (cb == _INF), _INF,
                                       np.where((ca == _ZERO) | (cb == _ZERO), _ZERO, _FIN)))
    sign = np.broadcast_to(a[1], shape) ^ np.broadcast_to(b[1], shape)
    N = np.broadcast_to(a[2], shape) * np.broadcast_to(b[2], shape)
    exp = np.broadcast_to(a[3], shape) + np.broadcast_to(b[3], shape)
    return cls, sign, N, exp


def scaled_add(s1, x1, s2, x2, f1, f2, fr, rounding=None, *, saturation=None, seed=None,
               fs1="binary8p1uf", fs2="binary8p1uf"):
    """ScaledAdd<(fs1, f1), (fs2, f2), fr>: s1 * x1 + s2 * x2 exactly, projected
    once into fr; the scales are Binary8p1uf by default."""
    return _scaled_op("add", s1, x1, s2, x2, fs1, f1, fs2, f2, fr, rounding, saturation, seed)


def scaled_subtract(s1, x1, s2, x2, f1, f2, fr, rounding=None, *, saturation=None, seed=None,
                    fs1="binary8p1uf", fs2="binary8p1uf"):
    """ScaledSubtract: s1 * x1 - s2 * x2 exactly, projected once into fr."""
    return _scaled_op("sub", s1, x1, s2, x2, fs1, f1, fs2, f2, fr, rounding, saturation, seed)


def scaled_multiply(s1, x1, s2, x2, f1, f2, fr, rounding=None, *, saturation=None, seed=None,
                    fs1="binary8p1uf", fs2="binary8p1uf"):
    """ScaledMultiply: (s1 * x1) * (s2 * x2) exactly, projected once into fr."""
    return _scaled_op("mul", s1, x1, s2, x2, fs1, f1, fs2, f2, fr, rounding, saturation, seed)


def block_dot_product(sx, x, sy, y, fsx, fx, fsy, fy, fr, rounding=None, *, saturation=None,
                      seed=None):
    """BlockDotProduct: sum_i (sx * x[..., i]) * (sy * y[..., i]), accumulated
    exactly and projected once into fr. x and y: blocks along the last axis
    (same length); sx, sy: one scale per block, broadcast against x.shape[:-1]."""
    xp = _parts(x, _opfmt(fx, "x format"), "x")
    yp = _parts(y, _opfmt(fy, "y format"), "y")
    if xp[0].ndim == 0 or yp[0].ndim == 0 or xp[0].shape[-1] != yp[0].shape[-1]:
        raise ValueError(f"x and y must be blocks along their last axis, of one length; got "
                         f"shapes {np.shape(x)} and {np.shape(y)}")
    sxp = [np.expand_dims(p, -1) for p in _parts(sx, _opfmt(fsx, "sx format"), "sx")]
    syp = [np.expand_dims(p, -1) for p in _parts(sy, _opfmt(fsy, "sy format"), "sy")]
    cls, sign, N, exp = _product([sxp, xp, syp, yp])
    rc, rs, rN, re = _sum(cls, sign, N, exp)
    return _round_exact(rc, rs, rN, re, fr, rounding, saturation, seed).reshape(rc.shape)


def block_reduce_add(s, x, fs, fx, fr, rounding=None, *, saturation=None, seed=None):
    """BlockReduceAdd: sum_i s * x[..., i] exactly, projected once into fr."""
    xp = _parts(x, _opfmt(fx, "x format"), "x")
    if xp[0].ndim == 0:
        raise ValueError("x must hold blocks along its last axis")
    sp = [np.expand_dims(p, -1) for p in _parts(s, _opfmt(fs, "s format"), "s")]
    cls, sign, N, exp = _product([sp, xp])
    rc, rs, rN, re = _sum(cls, sign, N, exp)
    return _round_exact(rc, rs, rN, re, fr, rounding, saturation, seed).reshape(rc.shape)


# operations without rounding: extrema, comparisons, predicates, neighbours (their
# home is softfloat/p3109_compare.py; softfloat.p3109.<name> is the documented path)
from .p3109_compare import (  # noqa: E402,F401
    compare_equal, compare_greater, compare_greater_equal, compare_less, compare_less_equal,
    is_finite, is_infinite, is_nan, is_normal, is_one, is_sign_minus, is_subnormal, is_zero,
    max_finite_of, max_subnormal_of, maximum, maximum_finite, maximum_magnitude,
    maximum_magnitude_number, maximum_number, min_finite_of, min_normal_of, min_positive_of,
    minimum, minimum_finite, minimum_magnitude, minimum_magnitude_number, minimum_number,
    next_greater_than, next_less_than)
