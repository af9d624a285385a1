"""An independent oracle of stochastic rounding with explicit random bits, written
from the schemes' definitions (docs/stochastic.md; IEEE P3109 interim report
4.7.4 for A/B/C), not from round_pack's structure.

Exact values are integers in units of 2**-U (numpy int64, vectorized) or
Fractions (`expected_fraction`, one element at a time): the exact value, its
binade, the target grid's quantum, the discarded fraction nu, the random integer
-> the result by the scheme's definition. Encodings come from a decoder of the
format parameters written here."""
from fractions import Fraction

import numpy as np

SCHEMES = ("stochastic_a", "stochastic_b", "stochastic_c", "stochastic_add", "stochastic")


class Grid:
    """The positive finite values of a format (E, M, bias, kind) and their codes,
    decoded here from the kind's rules (ieee: all-ones exponent is inf/NaN; fn:
    S.1111.111 is NaN; fnuz: 0x80 is NaN, no -0; finite: every code a number)."""

    def __init__(self, E, M, bias, kind):
        self.E, self.M, self.bias, self.kind = E, M, bias, kind
        self.emin = 1 - bias
        vals, codes = [], []
        for c in range(1 << (E + M)):
            ef, fr = c >> M, c & ((1 << M) - 1)
            if kind == "ieee" and ef == (1 << E) - 1:
                continue
            if kind == "fn" and ef == (1 << E) - 1 and fr == (1 << M) - 1:
                continue
            v = Fraction(fr, 1 << M) * Fraction(2) ** self.emin if ef == 0 else \
                (1 + Fraction(fr, 1 << M)) * Fraction(2) ** (ef - bias)
            vals.append(v)
            codes.append(c)
        self.values = vals
        self.code = dict(zip(vals, codes))
        self.maxval = max(vals)
        self.sign_bit = 1 << (E + M)

    def overflow_code(self, sign):
        """The encoding of a stochastic overflow (rounding away past the largest
        finite value): infinity (ieee), the signed NaN (fn, fnuz: the library's
        default overflow policy 'nan'), the largest value (finite formats)."""
        if self.kind == "ieee":
            return (sign * self.sign_bit) | (((1 << self.E) - 1) << self.M)
        if self.kind == "fn":
            return (sign * self.sign_bit) | ((1 << (self.E + self.M)) - 1)
        if self.kind == "fnuz":
            return self.sign_bit
        return (sign * self.sign_bit) | self.code[self.maxval]

    def encode(self, sign, mag):
        if mag > self.maxval:
            return self.overflow_code(sign)
        c = self.code[mag]
        if self.kind == "fnuz" and c == 0:
            return 0
        return c | (sign * self.sign_bit)


class P3109Grid(Grid):
    """A P3109 format BinaryKpP{s,u}{e,f} decoded from the report's formulas
    (interim report 4.7.2, Table 3): bias 2**(K-P-1) signed, 2**(K-P) unsigned;
    one zero (code 0), one NaN, infinities only in the extended domain; sign-
    magnitude codes for signed formats. ``saturation`` decides the encoding of a
    result above Mhi (4.7.5, the stochastic and nearest modes' rules):
    satnone gives +-Inf in an extended format, Mhi in a finite one; satfinite
    and satpropagate give Mhi."""

    def __init__(self, K, P, signed, extended, saturation="satnone"):
        self.K, self.P, self.signed, self.extended = K, P, signed, extended
        self.saturation = saturation
        self.M = P - 1
        self.bias = 2 ** (K - P - 1) if signed else 2 ** (K - P)
        self.emin = 1 - self.bias
        self.kind = "p3109"
        ncodes = 2 ** (K - 1) if signed else 2 ** K
        nan = 2 ** (K - 1) if signed else 2 ** K - 1
        inf = (2 ** (K - 1) - 1 if signed else 2 ** K - 2) if extended else None
        vals, codes = [], []
        for x in range(ncodes):
            if x in (nan, inf):
                continue
            T, Eb = x % 2 ** (P - 1), x // 2 ** (P - 1)
            if Eb == 0:
                v = Fraction(T, 2 ** (P - 1)) * Fraction(2) ** (1 - self.bias)
            else:
                v = (1 + Fraction(T, 2 ** (P - 1))) * Fraction(2) ** (Eb - self.bias)
            vals.append(v)
            codes.append(x)
        self.values = vals
        self.code = dict(zip(vals, codes))
        self.maxval = max(vals)
        self.sign_bit = 2 ** (K - 1) if signed else 0
        self.inf = inf

    def overflow_code(self, sign):
        mhi = self.code[self.maxval]
        if self.saturation == "satnone" and self.extended:
            return self.inf | (sign * self.sign_bit)
        return mhi | (sign * self.sign_bit)

    def encode(self, sign, mag):
        if mag > self.maxval:
            return self.overflow_code(sign)
        c = self.code[mag]
        return 0 if c == 0 else c | (sign * self.sign_bit)


def _rnite(num, den):
    """num/den to the nearest integer, ties to even (num, den > 0 ints)."""
    t, low = divmod(num, den)
    if 2 * low > den or (2 * low == den and t & 1):
        t += 1
    return t


def round_away(scheme, nu, N, R):
    """The scheme's RoundAway for a discarded fraction nu (Fraction, 0 <= nu < 1)."""
    if scheme == "stochastic_a":
        return (nu * 2**N).__floor__() + R >= 2**N
    if scheme == "stochastic_b":
        return (nu * 2**(N + 1)).__floor__() + 2 * R + 1 >= 2**(N + 1)
    if scheme == "stochastic_c":
        y = nu * 2**N
        return _rnite(y.numerator, y.denominator) + R >= 2**N
    if scheme == "stochastic":
        return R < (nu * 2**N).__ceil__()
    raise ValueError(scheme)


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    return e


def expected_fraction(grid: Grid, x: Fraction, scheme, N, R):
    """Encoding of the nonzero exact value x rounded by the scheme with R."""
    sign = 1 if x < 0 else 0
    mag = abs(x)
    e = _floor_log2(mag)
    Q = max(e, grid.emin) - grid.M           # the target grid's quantum (subnormals too)
    if scheme == "stochastic_add":
        # R's top bit just below the last bit a normal result in mag's binade keeps
        s = (mag + R * Fraction(2) ** (e - grid.M - N)) / Fraction(2) ** Q
        S = s.__floor__()
    else:
        s = mag / Fraction(2) ** Q
        T = s.__floor__()
        S = T + (1 if (s != T and round_away(scheme, s - T, N, R)) else 0)
    return grid.encode(sign, S * Fraction(2) ** Q)


def expected_units(grid: Grid, sign, mag, U, scheme, N, R):
    """Vectorized `expected_fraction`: mag (int64 array, > 0) is |x| in units of
    2**-U; R broadcasts against it. Returns the encodings (int64)."""
    mag = np.asarray(mag, np.int64)
    R = np.asarray(R, np.int64)
    mag, R, sign = np.broadcast_arrays(mag, R, np.asarray(sign, np.int64))
    e = np.frexp(mag.astype(np.float64))[1].astype(np.int64) - 1 - U   # floor(log2 |x|)
    Q = np.maximum(e, grid.emin) - grid.M
    k = Q + U                                               # the quantum in units
    assert (k >= 0).all(), "U too small for this format"
    T = mag >> k
    rem = mag - (T << k)
    if scheme == "stochastic_add":
        a = e - grid.M - N + U                              # R's lowest bit, in units
        lift = np.maximum(0, -a)                            # R below the unit: scale up
        S = ((mag << lift) + (R << np.maximum(a, 0))) >> (k + lift)
    else:
        if scheme == "stochastic_a":
            up = ((rem << N) >> k) + R >= (1 << N)
        elif scheme == "stochastic_b":
            up = ((rem << (N + 1)) >> k) + 2 * R + 1 >= (1 << (N + 1))
        elif scheme == "stochastic_c":
            num = rem << N
            t = num >> k
            low2 = 2 * (num - (t << k))
            t = t + ((low2 > (1 << k)) | ((low2 == (1 << k)) & ((t & 1) == 1)))
            up = t + R >= (1 << N)
        elif scheme == "stochastic":
            up = R < (((rem << N) + (1 << k) - 1) >> k)
        else:
            raise ValueError(scheme)
        S = T + ((rem != 0) & up)
    # encode: S * 2**Q in units -> a code (or the overflow encoding)
    vals = sorted(grid.values)
    units = np.array([int(v * 2**U) for v in vals], np.int64)
    assert all(Fraction(int(u), 2**U) == v for u, v in zip(units, vals)), "U too small"
    codes = np.array([grid.code[v] for v in vals], np.int64)
    res_units = S << k
    over = res_units > units[-1]
    pos = np.searchsorted(units, np.minimum(res_units, units[-1]))
    assert (units[pos] == np.minimum(res_units, units[-1])).all()
    out = codes[pos] | (sign * grid.sign_bit)
    if grid.kind in ("fnuz", "p3109"):                      # no -0
        out = np.where(codes[pos] == 0, 0, out)
    ovf = np.array([grid.overflow_code(0), grid.overflow_code(1)], np.int64)
    out = np.where(over, ovf[sign], out)
    if grid.kind == "p3109" and not grid.signed:
        # a negative result lies below Mlo = 0 (4.7.5): NaN under SatNone, else 0;
        # one that rounds to zero is zero
        neg = (sign == 1) & (S != 0)
        out = np.where(neg, 2**grid.K - 1 if grid.saturation == "satnone" else 0, out)
    return out
