"""The ``mpfr`` oracle: GNU MPFR through gmpy2, scalar and slow, a sampled third
witness. Operands are decoded to exact rationals; the operation is done by
MPFR (or exactly in rationals) truncated to p + 8 bits with an unbounded
exponent range, with MPFR's inexact flag as the sticky bit; the final rounding
into the format (subnormals, overflow, tininess after rounding, every
deterministic mode) is finished in exact rationals (`_frac_round`). NaN
results follow the promised rule of `softfloat.sweep_oracles.nan_rules`,
written again here for Python integers.
"""
from __future__ import annotations

from ..formats import Format, get_format
from ..rounding import get_rounding
from ._bits import INF, INFINITE, INVALID, OVERFLOW, QNAN, RDN, RNA, RNE, RTO, RUP, SNAN, \
    INEXACT, UNDERFLOW, Z, FIN

BINARY_OPS = ("add", "sub", "mul", "div")
UNARY_OPS = ("sqrt",)

# ---------------------------------------------------------------------------
# MPFR (gmpy2): scalar, for sampled cross-checks
def _mpfr_value(bits, fmt: Format):
    """(class, exact value as Fraction or None, sign) of one encoding, in Python."""
    from fractions import Fraction
    bits = int(bits)
    E, M = fmt.ebits, fmt.mbits
    sign = (bits >> (E + M)) & 1
    ef = (bits >> M) & ((1 << E) - 1)
    fr = bits & ((1 << M) - 1)
    top = (1 << E) - 1
    if fmt.kind == "ieee" and ef == top:
        if fr == 0:
            return INF, None, sign
        return (QNAN if fr >> (M - 1) else SNAN), None, sign
    if fmt.kind == "fn" and ef == top and fr == (1 << M) - 1:
        return QNAN, None, sign
    if fmt.kind == "fnuz" and bits == fmt.sign_mask:
        return QNAN, None, sign
    if ef == 0 and fr == 0:
        return Z, Fraction(0), sign
    v = Fraction(fr if ef == 0 else fr + (1 << M)) * Fraction(2) ** ((ef or 1) - fmt.bias - M)
    return FIN, (-v if sign else v), sign


def _mpfr_encode(v, sign, fmt: Format) -> int:
    """Encoding of a representable Fraction value (nonzero or zero with sign)."""
    from fractions import Fraction
    v = abs(Fraction(v))
    s = sign << (fmt.ebits + fmt.mbits)
    if v == 0:
        return 0 if fmt.kind == "fnuz" else s
    e = v.numerator.bit_length() - v.denominator.bit_length()
    if Fraction(2) ** e > v:
        e -= 1
    if e < fmt.emin:
        k = v / Fraction(2) ** (fmt.emin - fmt.mbits)
        assert k.denominator == 1
        return s | int(k)
    k = v / Fraction(2) ** (e - fmt.mbits)
    assert k.denominator == 1
    return s | ((e + fmt.bias) << fmt.mbits) | (int(k) - (1 << fmt.mbits))


def _mpfr_round(exact_fn, sign, fmt: Format, mode: int):
    """Round the real that ``exact_fn()`` computes with gmpy2 into ``fmt``:
    MPFR truncates it to p + 8 bits (round toward zero, unbounded exponent) and
    reports whether that was inexact; `_frac_round` finishes in exact rationals.
    ``sign`` is the sign of the exact result. Returns (bits, flags)."""
    import gmpy2
    from fractions import Fraction
    with gmpy2.context(precision=fmt.precision + 8, emin=-100000, emax=100000,
                       round=gmpy2.RoundToZero) as c:
        c.clear_flags()
        t = exact_fn()
        if isinstance(t, type(gmpy2.mpq(0))):
            t = gmpy2.mpfr(t)            # rounds under the context
        inexact = bool(c.inexact)
    n, d = t.as_integer_ratio()
    return _frac_round(Fraction(int(n), int(d)), inexact, sign, fmt, mode)


def _frac_round(x, sticky, sign, fmt: Format, mode: int):
    """Round x (a Fraction, truncated from the exact value; ``sticky`` when the
    exact value lies strictly beyond x in magnitude) into fmt, with flags. The
    truncation has p + 8 bits, so the sticky side is enough for every mode."""
    from fractions import Fraction
    flags = 0
    ax = abs(x)
    M, emin = fmt.mbits, fmt.emin
    if ax == 0 and not sticky:
        return _mpfr_encode(0, sign, fmt), 0

    def rnd(q):                     # round ax at quantum q, unbounded
        n = ax / q
        k = n.numerator // n.denominator
        rem = n - k
        if rem == 0 and not sticky:
            return k, False
        half = Fraction(1, 2)
        if mode == RNE:
            up = rem > half or (rem == half and (sticky or k % 2 == 1))
        elif mode == RNA:
            up = rem >= half
        elif mode == RUP:
            up = sign == 0
        elif mode == RDN:
            up = sign == 1
        elif mode == RTO:
            up = False
            k |= 1
        else:
            up = False
        return k + up, True

    e = (ax.numerator.bit_length() - ax.denominator.bit_length()) if ax else emin - M - 10
    if ax and Fraction(2) ** e > ax:
        e -= 1
    qe = max(e, emin) - M
    k, inexact = rnd(Fraction(2) ** qe)
    if inexact:
        flags |= INEXACT
    val = k * Fraction(2) ** qe
    if val > Fraction(fmt.max):
        flags |= OVERFLOW | INEXACT
        to_inf = mode in (RNE, RNA) or (mode == RUP and sign == 0) or (mode == RDN and sign == 1)
        if to_inf and fmt.kind != "finite":    # finite formats saturate
            if fmt.kind == "ieee":
                return (sign << (fmt.ebits + M)) | fmt.inf_bits, flags
            return (fmt.sign_mask if fmt.kind == "fnuz" else
                    (sign << (fmt.ebits + M)) | (fmt.sign_mask - 1)), flags
        return (sign << (fmt.ebits + M)) | fmt.max_bits, flags
    if e < emin and inexact:
        ku, _ = rnd(Fraction(2) ** (e - M))
        if ku * Fraction(2) ** (e - M) < Fraction(2) ** emin:
            flags |= UNDERFLOW
    return _mpfr_encode(val, sign, fmt), flags


def _mpfr_nan(fmt: Format, src=None):
    """NaN per the propagate rule: quiet(src = (sign, frac, fmt_of_src)) or default."""
    if fmt.kind == "fnuz":
        return fmt.sign_mask
    if src is None:
        return fmt.default_nan_bits
    sign, frac, sfmt = src
    if fmt.kind == "fn":
        return (sign << (fmt.ebits + fmt.mbits)) | (fmt.sign_mask - 1)
    if sfmt.kind != "ieee":
        frac, sM = 0, 1
    else:
        sM = sfmt.mbits
    f = frac >> (sM - fmt.mbits) if sM >= fmt.mbits else frac << (fmt.mbits - sM)
    f |= 1 << (fmt.mbits - 1)
    return (sign << (fmt.ebits + fmt.mbits)) | fmt.inf_bits | f


def _mpfr_inf(sign, fmt: Format):
    if fmt.kind == "ieee":
        return (sign << (fmt.ebits + fmt.mbits)) | fmt.inf_bits, 0
    return _mpfr_nan(fmt), INVALID


def mpfr_binary(op, a, b, fmt, rounding="nearest_even"):
    """Scalar MPFR oracle for ``a op b`` (two encodings, Python ints): (bits, flags)."""
    import gmpy2
    f = get_format(fmt)
    mode = int(get_rounding(rounding))
    ca, va, sa = _mpfr_value(a, f)
    cb, vb, sb = _mpfr_value(b, f)
    if ca >= QNAN or cb >= QNAN:
        fl = INVALID if SNAN in (ca, cb) else 0
        M = f.mbits
        src = (sa, int(a) & ((1 << M) - 1), f) if ca >= QNAN else (sb, int(b) & ((1 << M) - 1), f)
        return _mpfr_nan(f, src), fl
    if op == "sub":
        sb = 1 - sb
        vb = -vb if vb is not None else None
    sx = sa ^ sb
    zero = lambda s: (0 if f.kind == "fnuz" else s << (f.ebits + f.mbits), 0)  # noqa: E731
    if op in ("add", "sub"):
        if INF in (ca, cb):
            if ca == INF and cb == INF and sa != sb:
                return _mpfr_nan(f), INVALID
            return _mpfr_inf(sa if ca == INF else sb, f)
        s_exact = va + vb
        if s_exact == 0:
            if ca == Z and cb == Z and sa == sb:
                return zero(sa)
            return zero(1 if mode == RDN else 0)
        return _mpfr_round(lambda: gmpy2.mpq(s_exact), int(s_exact < 0), f, mode)
    if op == "mul":
        if (ca == INF and cb == Z) or (ca == Z and cb == INF):
            return _mpfr_nan(f), INVALID
        if INF in (ca, cb):
            return _mpfr_inf(sx, f)
        if Z in (ca, cb):
            return zero(sx)
        pr = va * vb
        return _mpfr_round(lambda: gmpy2.mpq(pr), sx, f, mode)
    if op == "div":
        if (ca == INF and cb == INF) or (ca == Z and cb == Z):
            return _mpfr_nan(f), INVALID
        if ca == INF:
            return _mpfr_inf(sx, f)
        if cb == Z:
            r, fl = _mpfr_inf(sx, f)
            return r, fl | INFINITE
        if ca == Z or cb == INF:
            return zero(sx)
        return _mpfr_round(lambda: gmpy2.mpfr(gmpy2.mpq(va)) / gmpy2.mpfr(gmpy2.mpq(vb)),
                           sx, f, mode)
    raise ValueError(f"unknown binary op {op!r}; expected one of {BINARY_OPS}")


def mpfr_unary(op, a, fmt, rounding="nearest_even"):
    """Scalar MPFR oracle for ``sqrt`` of one encoding: (bits, flags)."""
    import gmpy2
    if op != "sqrt":
        raise ValueError(f"unknown unary op {op!r}; expected one of {UNARY_OPS}")
    f = get_format(fmt)
    mode = int(get_rounding(rounding))
    ca, va, sa = _mpfr_value(a, f)
    if ca >= QNAN:
        return _mpfr_nan(f, (sa, int(a) & ((1 << f.mbits) - 1), f)), (INVALID if ca == SNAN else 0)
    if ca == Z:
        return (0 if f.kind == "fnuz" else sa << (f.ebits + f.mbits)), 0
    if sa:
        return _mpfr_nan(f), INVALID
    if ca == INF:
        return _mpfr_inf(0, f)
    return _mpfr_round(lambda: gmpy2.sqrt(gmpy2.mpfr(gmpy2.mpq(va))), 0, f, mode)


def mpfr_convert(bits, src, dst, rounding="nearest_even"):
    """Scalar MPFR oracle for converting one encoding of ``src`` into ``dst``."""
    import gmpy2
    s, d = get_format(src), get_format(dst)
    mode = int(get_rounding(rounding))
    c, v, sg = _mpfr_value(bits, s)
    if c >= QNAN:
        fl = INVALID if c == SNAN else 0
        return _mpfr_nan(d, (sg, int(bits) & ((1 << s.mbits) - 1), s)), fl
    if c == INF:
        return _mpfr_inf(sg, d)
    if c == Z:
        return (0 if d.kind == "fnuz" else sg << (d.ebits + d.mbits)), 0
    return _mpfr_round(lambda: gmpy2.mpq(v), sg, d, mode)


def mpfr_fma(a, b, c, fmt, rounding="nearest_even"):
    """Scalar MPFR oracle for ``a * b + c`` with one rounding (three encodings,
    Python ints): (bits, flags). NaN and infinity rules of SoftFloat's mulAdd
    (see `softfloat.sweep_oracles.nan_rules`)."""
    import gmpy2
    f = get_format(fmt)
    mode = int(get_rounding(rounding))
    M = f.mbits
    ca, va, sa = _mpfr_value(a, f)
    cb, vb, sb = _mpfr_value(b, f)
    cc, vc, sc = _mpfr_value(c, f)
    inv = INVALID if SNAN in (ca, cb, cc) else 0
    if ca >= QNAN or cb >= QNAN:
        src = (sa, int(a) & ((1 << M) - 1), f) if ca >= QNAN else (sb, int(b) & ((1 << M) - 1), f)
        return _mpfr_nan(f, src), inv
    sp = sa ^ sb
    if INF in (ca, cb):
        if Z in (ca, cb):
            return _mpfr_nan(f), INVALID
        if cc >= QNAN:
            return _mpfr_nan(f, (sc, int(c) & ((1 << M) - 1), f)), inv
        if cc == INF and sc != sp:
            return _mpfr_nan(f), INVALID
        return _mpfr_inf(sp, f)
    if cc >= QNAN:
        return _mpfr_nan(f, (sc, int(c) & ((1 << M) - 1), f)), inv
    if cc == INF:
        return _mpfr_inf(sc, f)
    zero = lambda s: (0 if f.kind == "fnuz" else s << (f.ebits + M), 0)  # noqa: E731
    exact = va * vb + vc
    if exact == 0:
        if Z in (ca, cb) and cc == Z and sp == sc:
            return zero(sp)
        return zero(1 if mode == RDN else 0)
    ma, mb, mc = (gmpy2.mpfr(gmpy2.mpq(v), 64) for v in (va, vb, vc))
    return _mpfr_round(lambda: gmpy2.fma(ma, mb, mc), int(exact < 0), f, mode)
