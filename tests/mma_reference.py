"""An independent reference of the matrix-unit models (softfloat.mma), written
from the definitions in softfloat/mma/model.py with Python integers and
Fractions, one output at a time (slow, obviously right): the oracle the kernels
are checked against without MMA-Sim."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import softfloat as sf

INF, NAN = "inf", "nan"


def value(bits, fmt, sign_off=False):
    """Fraction, or ("inf", sign) / ("nan",) of one encoding."""
    b = int(bits)
    if sign_off:
        b &= ~fmt.sign_mask
    if fmt.name == "fp64":
        x = float(np.uint64(b).view(np.float64))
        if math.isnan(x):
            return (NAN,)
        if math.isinf(x):
            return (INF, 1 if x > 0 else -1)
        return Fraction(x)
    with np.errstate(over="ignore", invalid="ignore"):
        x = float(sf.from_bits(np.array(b, fmt.dtype), fmt))
    if math.isnan(x):
        return (NAN,)
    if math.isinf(x):
        return (INF, 1 if x > 0 else -1)
    return Fraction(x)


def binade(v: Fraction, fmt) -> int:
    """floor(log2 |v|), at least the format's smallest normal exponent (zero: that)."""
    if v == 0:
        return fmt.emin
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    return max(e, fmt.emin)


def trunc_to(v: Fraction, q: int) -> Fraction:
    """v truncated toward zero to a multiple of 2**q."""
    u = Fraction(2) ** q
    t = math.floor(abs(v) / u)
    return (t if v >= 0 else -t) * u


def floor_to(v: Fraction, q: int) -> Fraction:
    u = Fraction(2) ** q
    return math.floor(v / u) * u


def round_to(v: Fraction, p: int, emin: int, emax: int, rne: bool):
    """v rounded to p significant bits (subnormal quantum 2**(emin-p+1)); a
    result of 2**(emax+1) or more is infinite. Returns Fraction or (INF, sign)."""
    if v == 0:
        return Fraction(0)
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = max(e, emin) - (p - 1)
    u = Fraction(2) ** q
    t = a / u
    r = math.floor(t)
    if rne:
        rem = t - r
        if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and r % 2 == 1):
            r += 1
    res = r * u
    if res >= Fraction(2) ** (emax + 1):
        return (INF, 1 if v > 0 else -1)
    return res if v > 0 else -res


def encode(x, fmt):
    """Encoding of a Fraction / special in an IEEE format (fp16, fp32): NaN canonical."""
    if isinstance(x, tuple):
        if x[0] == NAN:
            return (1 << (fmt.ebits + fmt.mbits)) - 1
        return int(sf.to_bits(np.float64(np.inf if x[1] > 0 else -np.inf), fmt))
    return int(sf.to_bits(np.float64(x), fmt))           # exact (already rounded)


def _special(terms):
    """NaN / inf decision of a list of specials-or-Fractions: None when all finite."""
    nan = any(isinstance(t, tuple) and t[0] == NAN for t in terms)
    signs = {t[1] for t in terms if isinstance(t, tuple) and t[0] == INF}
    if nan or len(signs) == 2:
        return (NAN,)
    if signs:
        return (INF, signs.pop())
    return None


def _mul(x, y):
    if isinstance(x, tuple) or isinstance(y, tuple):
        if (isinstance(x, tuple) and x[0] == NAN) or (isinstance(y, tuple) and y[0] == NAN):
            return (NAN,)
        if (not isinstance(x, tuple) and x == 0) or (not isinstance(y, tuple) and y == 0):
            return (NAN,)
        sx = x[1] if isinstance(x, tuple) else (1 if x > 0 else -1)
        sy = y[1] if isinstance(y, tuple) else (1 if y > 0 else -1)
        return (INF, sx * sy)
    return x * y


def _out(unit):
    if unit.output_rounding == "RNE-FP16":
        return 11, -14, 15, True
    if unit.output_rounding == "RZ-E8M13":
        return 14, -126, 127, False
    return 24, -126, 127, unit.output_rounding == "RNE-FP32"


def one_output(unit, a_row, b_col, c, sa_row=None, sb_col=None):
    """D for one output: a_row, b_col encodings (K,), c an encoding or None."""
    fa, fb, fc, fo = unit.a_fmt, unit.b_fmt, unit.c_fmt, unit.out_fmt
    K = len(a_row)
    Kp = -(-K // unit.k) * unit.k
    av = [value(x, fa) for x in a_row] + [Fraction(0)] * (Kp - K)
    bv = [value(x, fb) for x in b_col] + [Fraction(0)] * (Kp - K)
    cv = Fraction(0) if c is None else value(c, fc)
    cfmt = fc
    L = unit.chunk
    for k0 in range(0, Kp, L):
        cv = _chunk(unit, av[k0:k0 + L], bv[k0:k0 + L], cv, cfmt, k0, sa_row, sb_col)
        cfmt = fo
    return encode(cv, fo) if fo.name != "fp64" else cv


def _chunk(unit, av, bv, cv, cfmt, k0, sa_row, sb_col):
    alg = unit.algorithm
    fa, fb = unit.a_fmt, unit.b_fmt
    if alg in ("fdpa", "grouped"):
        p, emin, emax, rne = _out(unit)
        F, ez = unit.frac_bits, unit.e_zero
        terms = []        # (value, exponent)
        specials = [cv] if isinstance(cv, tuple) else []
        if alg == "fdpa":
            sc, esc = Fraction(1), 0
            if unit.scaled:
                blk = k0 // unit.scale_block
                off = unit.scale_fmt.name == "fp8_e4m3"
                x = value(sa_row[blk], unit.scale_fmt, off)
                y = value(sb_col[blk], unit.scale_fmt, off)
                if isinstance(x, tuple) or isinstance(y, tuple):
                    return (NAN,)
                sc = x * y
                esc = binade(x, unit.scale_fmt) + binade(y, unit.scale_fmt)
            for x, y in zip(av, bv):
                pr = _mul(x, y)
                if isinstance(pr, tuple):
                    specials.append(pr)
                    continue
                pr = pr * sc
                e = ez if pr == 0 else binade(x, fa) + binade(y, fb) + esc
                terms.append((pr, e))
        else:
            G = unit.group
            for g in range(0, len(av), G):
                blk = (k0 + g) // unit.scale_block
                off = unit.scale_fmt.name == "fp8_e4m3"
                x = value(sa_row[blk], unit.scale_fmt, off)
                y = value(sb_col[blk], unit.scale_fmt, off)
                if isinstance(x, tuple) or isinstance(y, tuple):
                    return (NAN,)
                prods = [u * v for u, v in zip(av[g:g + G], bv[g:g + G])]
                s = sum(prods, Fraction(0))
                e = ez if all(q == 0 for q in prods) or x * y == 0 else \
                    binade(x, unit.scale_fmt) + binade(y, unit.scale_fmt)
                terms.append((s * x * y, e))
        sp = _special(specials)
        if sp is not None:
            return sp
        terms.append((cv, ez if cv == 0 else binade(cv, cfmt)))
        E = max(e for _, e in terms)
        S = sum((trunc_to(v, E - F) for v, _ in terms), Fraction(0))
        return round_to(S, p, emin, emax, rne)
    if alg in ("two_stage", "two_stage_pairs"):
        F, F2 = unit.frac_bits, unit.frac_bits2
        prods = [_mul(x, y) for x, y in zip(av, bv)]
        ovf = []
        if alg == "two_stage":
            for i, (x, y) in enumerate(zip(av, bv)):
                pr = prods[i]
                if not isinstance(pr, tuple) and pr != 0:
                    e = binade(x, fa) + binade(y, fb)
                    if abs(pr) >= Fraction(2) ** (e + 1):
                        e += 1
                    if e >= 128:
                        prods[i] = (INF, 1 if pr > 0 else -1)
        sp = _special([cv] + [q for q in prods if isinstance(q, tuple)] + ovf)
        if sp is not None:
            return sp

        def part(idx):
            ts = [(prods[i], binade(av[i], fa) + binade(bv[i], fb)) for i in idx
                  if prods[i] != 0]
            if not ts:
                return Fraction(0), None
            E = max(e for _, e in ts)
            return sum((trunc_to(v, E - F) for v, _ in ts), Fraction(0)), E

        n = len(av)
        if alg == "two_stage_pairs":
            (d0, e0), (d1, e1) = part(range(0, n, 2)), part(range(1, n, 2))
            es = [e for e in (e0, e1) if e is not None]
            edot = max(es) if es else None
            dot = Fraction(0)
            if edot is not None:
                dot = floor_to(d0, edot - F) + floor_to(d1, edot - F)
        else:
            dot, edot = part(range(n))
        ec = binade(cv, cfmt)
        E = ec if edot is None else max(edot, ec)
        t = Fraction(0) if edot is None else floor_to(dot, E - F2 - 1)
        cc = floor_to(cv, E - F)
        if alg == "two_stage_pairs" and ec < E - F - 1:
            cc = Fraction(0)
        v = t + cc
        if v != 0:
            ev = binade(v, sf.FP32)
            v = floor_to(v, ev - F2)
        return round_to(v, 24, -126, 127, True)
    if alg == "exact":
        prods = [_mul(x, y) for x, y in zip(av, bv)]
        sp = _special([cv] + [q for q in prods if isinstance(q, tuple)])
        if sp is not None:
            return sp
        return round_to(sum(prods, Fraction(0)) + cv, 24, -126, 127, True)
    if alg == "ftz_chain":
        f32 = np.float32

        def fl(x):
            return f32(0.0) * x if abs(x) < f32(2.0 ** -126) else x

        def tof(v, fmt):
            if isinstance(v, tuple):
                return f32(np.nan) if v[0] == NAN else f32(np.inf * v[1])
            x = f32(float(v))
            return f32(0.0) if abs(x) < f32(2.0 ** fmt.emin) else x

        with np.errstate(all="ignore"):
            c = tof(cv, cfmt) if cfmt.name != "fp32" else tof(cv, sf.FP32)
            ps = [fl(tof(x, fa) * tof(y, fb)) for x, y in zip(av, bv)]
            for i in range(0, len(ps), unit.products_per_step):
                s = fl(ps[i] + ps[i + 1])
                if unit.products_per_step == 4:
                    s = fl(s + fl(ps[i + 2] + ps[i + 3]))
                c = fl(c + s)
        if np.isnan(c):
            return (NAN,)
        if np.isinf(c):
            return (INF, 1 if c > 0 else -1)
        return Fraction(float(c))
    # fma
    c = cv
    for x, y in zip(av, bv):
        pr = _mul(x, y)
        sp = _special([t for t in (pr, c) if isinstance(t, tuple)])
        if sp is not None:
            c = sp
            continue
        if unit.out_fmt.name == "fp64":
            c = round_to(pr + c, 53, -1022, 1023, True)
        else:
            c = round_to(pr + c, 24, -126, 127, True)
    return c
