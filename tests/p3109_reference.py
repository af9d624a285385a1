"""An exact reference for IEEE P3109 formats and projection, written from the
P3109 interim report's definitions (decode 4.7.2, project 4.7.3, round to
precision 4.7.4, saturate 4.7.5, encode 4.7.6) with fractions.Fraction and
Python ints only: no numpy, no float, nothing of softfloat.

Values are Fractions, ``INF``/``NINF`` or ``NAN`` (sentinels). A format is
(K, P, signed, extended). Rounding modes use softfloat's names.
"""
from fractions import Fraction
import re

INF, NINF, NAN = "+Inf", "-Inf", "NaN"
MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd")
SATS = ("satfinite", "satpropagate", "satnone")


def parse_name(name):
    m = re.fullmatch(r"[bB]inary(\d+)p(\d+)([su])([ef])", name)
    K, P = int(m.group(1)), int(m.group(2))
    return K, P, m.group(3) == "s", m.group(4) == "e"


def bias(K, P, signed):
    return 2 ** (K - P - 1) if signed else 2 ** (K - P)


def special_codes(K, P, signed, ext):
    """{code: datum} of Table 3."""
    if signed:
        d = {2 ** (K - 1): NAN}
        if ext:
            d[2 ** (K - 1) - 1] = INF
            d[2 ** K - 1] = NINF
    else:
        d = {2 ** K - 1: NAN}
        if ext:
            d[2 ** K - 2] = INF
    return d


def decode(code, K, P, signed, ext):
    sp = special_codes(K, P, signed, ext)
    if code in sp:
        return sp[code]
    if signed and code > 2 ** (K - 1):
        v = decode(code - 2 ** (K - 1), K, P, signed, ext)
        return -v
    B = bias(K, P, signed)
    T, Eb = code % 2 ** (P - 1), code // 2 ** (P - 1)
    if Eb == 0:
        return T * Fraction(1, 2 ** (P - 1)) * Fraction(2) ** (1 - B)
    return (1 + T * Fraction(1, 2 ** (P - 1))) * Fraction(2) ** (Eb - B)


def floor_log2(a):
    """floor(log2 a) of a positive Fraction, exactly."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    elif Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


def max_finite(K, P, signed, ext):
    """Mhi: the largest finite datum (the largest code that decodes finite)."""
    sp = special_codes(K, P, signed, ext)
    top = 2 ** (K - 1) - 1 if signed else 2 ** K - 1
    while top in sp:
        top -= 1
    return decode(top, K, P, signed, ext)


def round_to_precision(X, P, B, mode):
    """4.7.4 (deterministic modes): the rounded extended real, no upper bound."""
    if X in (INF, NINF, NAN) or X == 0:
        return X
    a = abs(X)
    Q = max(floor_log2(a), 1 - B) - P + 1
    St = a / Fraction(2) ** Q
    fl = St.numerator // St.denominator
    nu = St - fl
    if P > 1:
        even = fl % 2 == 0
    else:
        even = fl == 0 or (Q + B) % 2 == 0
    pos = X > 0
    away = {"toward_zero": False,
            "upward": nu > 0 and pos,
            "downward": nu > 0 and not pos,
            "nearest_away": nu >= Fraction(1, 2),
            "nearest_even": nu > Fraction(1, 2) or (nu == Fraction(1, 2) and not even),
            "odd": nu > 0 and even}[mode]
    S = fl + (1 if away else 0)
    Z = S * Fraction(2) ** Q
    return Z if pos else -Z


def saturate(R, mode, sat, K, P, signed, ext):
    """4.7.5: the rules in the report's order."""
    Mhi = max_finite(K, P, signed, ext)
    Mlo = -Mhi if signed else Fraction(0)
    if R == NAN:
        return NAN
    if R not in (INF, NINF) and Mlo <= R <= Mhi:
        return R
    if R == INF:
        if sat == "satfinite":
            return Mhi
        return INF if ext else Mhi
    if R == NINF:
        if sat == "satfinite":
            return Mlo
        if sat == "satpropagate":
            return NINF if (signed and ext) else Mlo
        if signed and ext:
            return NINF
        return NAN if not signed else Mlo
    if R > Mhi:
        if sat in ("satfinite", "satpropagate"):
            return Mhi
        if mode == "odd" and not signed and ext:
            return Mhi
        if mode in ("toward_zero", "downward"):
            return Mhi
        return INF if ext else Mhi
    # R < Mlo
    if sat in ("satfinite", "satpropagate"):
        return Mlo
    if mode in ("toward_zero", "upward"):
        return Mlo
    if signed and ext:
        return NINF
    return NAN if not signed else Mlo


def encode(X, K, P, signed, ext):
    """4.7.6, for datums of the format."""
    if X == NAN:
        return 2 ** (K - 1) if signed else 2 ** K - 1
    if X == INF:
        return 2 ** (K - 1) - 1 if signed else 2 ** K - 2
    if X == NINF:
        return 2 ** K - 1
    if X == 0:
        return 0
    if X < 0:
        return encode(-X, K, P, signed, ext) + 2 ** (K - 1)
    B = bias(K, P, signed)
    E = max(floor_log2(X), 1 - B)
    S = X * Fraction(2) ** (P - 1 - E)
    assert S.denominator == 1, "not a datum of the format"
    S = S.numerator
    if S < 2 ** (P - 1):
        return S % 2 ** (P - 1)
    return S % 2 ** (P - 1) + (E + B) * 2 ** (P - 1)


def project(X, fmt, mode="nearest_even", sat="satnone"):
    """4.7.3: NaN stays NaN; round to precision; saturate; encode. ``fmt`` is
    (K, P, signed, extended) or a name."""
    if isinstance(fmt, str):
        fmt = parse_name(fmt)
    K, P, signed, ext = fmt
    if X == NAN:
        return encode(NAN, *fmt)
    R = round_to_precision(X, P, bias(K, P, signed), mode)
    return encode(saturate(R, mode, sat, K, P, signed, ext), K, P, signed, ext)


def parse_hex_value(text):
    """A value of the published tables ('0x1.8p+15', '-0x0.18p-12', 'Inf', 'NaN'),
    exactly (float.fromhex would overflow for the wide formats)."""
    t = text.strip()
    if t in ("Inf", "+Inf"):
        return INF
    if t == "-Inf":
        return NINF
    if t == "NaN":
        return NAN
    m = re.fullmatch(r"([+-]?)0x([0-9a-fA-F]+)(?:\.([0-9a-fA-F]*))?p([+-]?\d+)", t)
    ip, fp = m.group(2), m.group(3) or ""
    v = Fraction(int(ip + fp, 16), 16 ** len(fp)) * Fraction(2) ** int(m.group(4))
    return -v if m.group(1) == "-" else v


def value_key(v):
    """(kind, odd significand, exponent): one canonical triple per datum, for digests."""
    if v == NAN:
        return (3, 0, 0)
    if v == INF:
        return (1, 0, 0)
    if v == NINF:
        return (2, 0, 0)
    if v == 0:
        return (0, 0, 0)
    n, d = v.numerator, v.denominator
    x = (abs(n) & -abs(n)).bit_length() - 1      # trailing zero bits of n
    return (0, n >> x, x - (d.bit_length() - 1))  # d is a power of two


# ---------------------------------------------------------------------------
# exact operations on extended reals (4.10) and IEEE targets (4.8, 4.14)
# ---------------------------------------------------------------------------
def _isinf(v):
    return v in (INF, NINF)


def _neg(v):
    if isinstance(v, Fraction):
        return -v
    return {INF: NINF, NINF: INF, NAN: NAN}[v]


def _sgn(v):
    return 1 if (v == INF or (isinstance(v, Fraction) and v > 0)) else \
        -1 if (v == NINF or (isinstance(v, Fraction) and v < 0)) else 0


def op_add(x, y):
    if NAN in (x, y):
        return NAN
    if _isinf(x) and _isinf(y):
        return x if x == y else NAN
    if _isinf(x):
        return x
    if _isinf(y):
        return y
    return x + y


def op_mul(x, y):
    if NAN in (x, y):
        return NAN
    if _isinf(x) or _isinf(y):
        s = _sgn(x) * _sgn(y)
        return NAN if s == 0 else (INF if s > 0 else NINF)
    return x * y


def op_div(x, y):
    if NAN in (x, y) or y == 0 or (_isinf(x) and _isinf(y)):
        return NAN
    if _isinf(y):
        return Fraction(0)
    if _isinf(x):
        return INF if _sgn(x) * _sgn(y) > 0 else NINF
    return x / y


def op_fma(x, y, z):
    return op_add(op_mul(x, y), z)


def op_sqrt(x, extra_bits=200):
    """The square root, or a rational strictly between the same two dyadic
    neighbours 2**-extra_bits apart (enough for every rounding here)."""
    if x == NAN or x == NINF or (isinstance(x, Fraction) and x < 0):
        return NAN
    if x == INF or x == 0:
        return x
    t = extra_bits
    n = x * Fraction(2) ** (2 * t)
    q = _isqrt(n.numerator // n.denominator)
    if Fraction(q * q) == n:
        return Fraction(q, 2 ** t)
    return (q + Fraction(1, 2)) / Fraction(2) ** t


def _isqrt(n):
    import math
    return math.isqrt(n)


def ieee_project(X, P, E, mode="nearest_even", sat="satnone"):
    """omega-Project into an IEEE format of precision P and E exponent bits
    (binary32: 24, 8), signed and extended: encodings with +0, the quiet NaN."""
    B = 2 ** (E - 1) - 1
    M = P - 1
    if X == NAN:
        return ((2 ** E - 1) << M) | (1 << (M - 1))
    Mhi = (2 - Fraction(1, 2 ** M)) * Fraction(2) ** B
    R = round_to_precision(X, P, B, mode)
    # the saturation table for a signed extended format
    if R == INF:
        S = Mhi if sat == "satfinite" else INF
    elif R == NINF:
        S = -Mhi if sat == "satfinite" else NINF
    elif R > Mhi:
        S = Mhi if (sat != "satnone" or mode in ("toward_zero", "downward")) else INF
    elif R < -Mhi:
        S = -Mhi if (sat != "satnone" or mode in ("toward_zero", "upward")) else NINF
    else:
        S = R
    sbit = 1 << (E + M)
    if S in (INF, NINF):
        return ((2 ** E - 1) << M) | (sbit if S == NINF else 0)
    if S == 0:
        return 0
    a = abs(S)
    e = max(floor_log2(a), 1 - B)
    sig = a * Fraction(2) ** (M - e)
    assert sig.denominator == 1
    sig = sig.numerator
    code = sig if sig < 2 ** M else ((e + B) << M) | (sig - 2 ** M)
    return code | (sbit if S < 0 else 0)


IEEE = {"binary32": (24, 8), "binary16": (11, 5), "bfloat16": (8, 8)}


def decode_ieee(code, P, E):
    """Exact value of an IEEE encoding, -0 read as 0 and every NaN as NaN (4.8)."""
    M = P - 1
    s, e, f = code >> (E + M), (code >> M) & (2 ** E - 1), code & (2 ** M - 1)
    if e == 2 ** E - 1:
        return NAN if f else (NINF if s else INF)
    B = 2 ** (E - 1) - 1
    v = Fraction(f, 2 ** M) * Fraction(2) ** (1 - B) if e == 0 else \
        (1 + Fraction(f, 2 ** M)) * Fraction(2) ** (e - B)
    return -v if s else v


def value(code, name):
    if name in IEEE:
        return decode_ieee(code, *IEEE[name])
    return decode(code, *parse_name(name))


def project_to(X, name, mode="nearest_even", sat="satnone"):
    if name in IEEE:
        return ieee_project(X, *IEEE[name], mode, sat)
    return project(X, name, mode, sat)
