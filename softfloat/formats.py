"""Format descriptors: data only.

A format is a few numbers (exponent bits, fraction bits, bias) and one switch
saying how infinity and NaN are encoded, after ml_dtypes:

``ieee``
    the all-ones exponent encodes infinity (fraction 0) and NaN (fraction != 0);
    the top fraction bit set marks a quiet NaN.
``fn``
    finite: no infinity; NaN only where exponent and fraction are all ones
    (one NaN per sign). OCP fp8 e4m3 is ``fn``: its largest value is 448.
``fnuz``
    finite, unsigned zero: no infinity, no negative zero; the single NaN is
    the pattern that would be -0 (``0x80`` for 8-bit formats).
``finite``
    no infinity and no NaN: every encoding is a number (OCP MX element types
    fp4 e2m1, fp6 e2m3 and e3m2). What has no encoding is decided once, in the
    kernels (``softfloat._kernels.core``, ``specialize``): a result beyond the
    largest value saturates to it (OCP MX v1.0: conversions to these types
    saturate), in every rounding mode and whatever the overflow policy, with
    overflow and inexact raised; an infinite input or an exact infinite result
    (x/0) becomes the largest value of its sign with *invalid* raised (as IEEE
    754 treats an infinity converted to an integer format); a NaN input or an
    invalid operation (0/0, sqrt(-1)) gives +0 with *invalid* raised
    (ml_dtypes gives a zero too, of the opposite sign: see docs/mx.md).
``fnu``
    finite, unsigned, no zero (OCP E8M0, ``float8_e8m0fnu``): no sign bit,
    no infinity, no zero and no subnormals; exponent field 0 is the normal
    value ``2**-bias``; the all-ones encoding is the one NaN. Negative values
    and zeros have no encoding: they give NaN with invalid raised (as
    ml_dtypes); a positive value below ``2**-bias`` becomes ``2**-bias``, inexact,
    and tiny by the one tininess rule of every format: with ``tininess="after"``
    (the default) only if it rounds, at the format's precision with unbounded
    exponent, below ``2**-bias`` (``1.25 * 2**-128`` in e8m0 raises underflow,
    ``1.75 * 2**-128``, which rounds to ``2**-127``, does not); with
    ``tininess="before"`` (and always under stochastic rounding and round-to-odd)
    every value below ``2**-bias``; underflow is raised when tiny. Overflow gives NaN (or the largest value in
    directed modes that round toward zero, and with ``overflow="saturate"``),
    as for ``fn``. ``fnu`` formats may have 0 fraction bits.
``p3109se``, ``p3109sf``, ``p3109ue``, ``p3109uf``
    IEEE P3109 formats BinaryKpP (signed/unsigned, extended/finite; see
    docs/p3109.md and `p3109_format`): one zero (code 0), one NaN (the -0
    pattern when signed, all ones when unsigned), infinities only in the
    extended domain (the largest magnitude code; unsigned: all ones minus one),
    bias 2**(K-P-1) signed or 2**(K-P) unsigned, P-1 fraction bits (P = 1:
    none, no subnormals). Unsigned formats have no sign bit. What overflow and
    negative results in unsigned formats give is the ``saturation=`` policy.

Encodings are right-aligned in the smallest unsigned dtype that holds them.
Everything else (max, eps, smallest normal/subnormal) is derived.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

__all__ = [
    "Format", "FP16", "BF16", "FP32", "TF32", "FP8_E5M2", "FP8_E4M3",
    "FP8_E4M3FNUZ", "FP8_E5M2FNUZ", "FP4_E2M1", "FP6_E2M3", "FP6_E3M2", "E8M0", "FP64",
    "get_format", "formats", "p3109_format",
]

#: the integer code of each kind, as the kernels read it (softfloat._kernels.codes)
KIND_CODES = {"ieee": 0, "fn": 1, "fnuz": 2, "finite": 3, "fnu": 4,
              "p3109se": 5, "p3109sf": 6, "p3109ue": 7, "p3109uf": 8}
#: the P3109 kinds: (signed, extended) of each
P3109_KINDS = {"p3109se": (True, True), "p3109sf": (True, False),
               "p3109ue": (False, True), "p3109uf": (False, False)}


def _exact_int(v, name: str, lo: int, hi: int) -> int:
    """A Python int from an int or a numpy integer (exactly), in [lo, hi]."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"Format {name} must be an integer (a Python int or a numpy "
                        f"integer), got {type(v).__name__} {v!r}")
    v = int(v)
    if not lo <= v <= hi:
        raise ValueError(f"Format {name} must be an integer in [{lo}, {hi}], got {v}")
    return v


@dataclass(frozen=True)
class Format:
    """A binary floating-point format of at most 8 exponent and 23 fraction bits.

    Parameters
    ----------
    name : str
        Canonical name (``"fp16"``).
    ebits, mbits : int
        Exponent and fraction (trailing significand) field widths.
    kind : {"ieee", "fn", "fnuz"}
        How infinity and NaN are encoded (see the module docstring).
    bias : int, optional
        Exponent bias; ``2**(ebits-1) - 1`` by default (``2**(ebits-1)`` for ``fnuz``).
    """

    name: str
    ebits: int
    mbits: int
    kind: str = "ieee"
    bias: int | None = None
    aliases: tuple = field(default=(), compare=False)

    def __post_init__(self):
        # One validation of every field: plain Python ints (numpy integers are
        # converted exactly; bools, floats and strings refused), ranges checked,
        # and a bias that keeps every value of the format inside float64. The
        # stored fields are Python ints and strs, so no odd field type can reach
        # a kernel (a numpy int16 field once compiled kernels for int16 and broke
        # later calls for every format).
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"Format name must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "name", str(self.name))
        if not isinstance(self.kind, str) or self.kind not in KIND_CODES:
            raise ValueError(f"Format kind must be one of {list(KIND_CODES)}, got {self.kind!r}")
        object.__setattr__(self, "kind", str(self.kind))
        if self.kind in P3109_KINDS:
            self._check_p3109()
            return
        for attr, lo, hi in (("ebits", 2, 11), ("mbits", 0 if self.kind == "fnu" else 1, 52)):
            object.__setattr__(self, attr, _exact_int(getattr(self, attr), attr, lo, hi))
        if self.name != "fp64" and (self.ebits > 8 or self.mbits > 23):
            raise ValueError(
                f"custom formats may have at most 8 exponent and 23 fraction bits, "
                f"got ebits={self.ebits}, mbits={self.mbits}")
        if self.bias is None:
            b = (1 << (self.ebits - 1)) - (0 if self.kind == "fnuz" else 1)
        else:
            b = _exact_int(self.bias, "bias", -(1 << 20), 1 << 20)
        object.__setattr__(self, "bias", b)
        if not isinstance(self.aliases, tuple) or not all(isinstance(a, str)
                                                          for a in self.aliases):
            raise TypeError(f"Format aliases must be a tuple of str, got {self.aliases!r}")
        # Every finite value must be a normal float64 (or zero): the largest is
        # below 2**(emax+1), the smallest subnormal is 2**(emin - mbits). (Values in
        # float64's own subnormal range are not decoded exactly by the kernels.)
        if self.name != "fp64" and (self.emax > 1023 or self.emin - self.mbits < -1022):
            raise ValueError(
                f"Format bias {b} puts values outside float64 (largest exponent "
                f"{self.emax}, smallest subnormal 2**{self.emin - self.mbits}); expected "
                f"a bias in [{self._bias_range()[0]}, {self._bias_range()[1]}] for "
                f"ebits={self.ebits}, mbits={self.mbits}, kind={self.kind!r}")

    def _check_p3109(self):
        """P3109 fields: K = width (3..16), P = mbits + 1, the report's bias (fixed)."""
        signed = P3109_KINDS[self.kind][0]
        M = _exact_int(self.mbits, "mbits", 0, 15)
        E = _exact_int(self.ebits, "ebits", 1, 16)
        K, P = E + M + int(signed), M + 1
        if not 3 <= K <= 16 or P > K - int(signed):
            raise ValueError(f"P3109 format with ebits={E}, mbits={M}: K={K}, P={P}; expected "
                             f"K in [3, 16] and 1 <= P <= {'K-1' if signed else 'K'}")
        b = 1 << (K - P - 1) if signed else 1 << (K - P)
        if self.bias is not None and _exact_int(self.bias, "bias", -(1 << 20), 1 << 20) != b:
            raise ValueError(f"P3109 format bias is fixed by K, P and signedness: {b}, "
                             f"got {self.bias}")
        object.__setattr__(self, "ebits", E)
        object.__setattr__(self, "mbits", M)
        object.__setattr__(self, "bias", b)
        if not isinstance(self.aliases, tuple) or not all(isinstance(a, str)
                                                          for a in self.aliases):
            raise TypeError(f"Format aliases must be a tuple of str, got {self.aliases!r}")

    # ---- P3109 ----------------------------------------------------------
    @property
    def is_p3109(self) -> bool:
        return self.kind in P3109_KINDS

    @property
    def p3109_params(self) -> tuple:
        """(K, P, signed, extended) of a P3109 format (ValueError for others)."""
        if not self.is_p3109:
            raise ValueError(f"{self.name} is not a P3109 format")
        signed, ext = P3109_KINDS[self.kind]
        return (self.nbits, self.mbits + 1, signed, ext)

    @property
    def p3109_one_bits(self) -> int:
        """The code of 1.0 in a P3109 format: 2**(K-2) signed, 2**(K-1) unsigned."""
        return self.bias << self.mbits

    @property
    def fits_float64(self) -> bool:
        """Whether every finite value is a normal float64 (or zero): False for the
        P3109 formats of wide exponent range (e.g. binary16p1ue, whose values
        reach 2**32765); their encodings work everywhere, their host-float
        decoding (from_bits, quantize) does not (see docs/p3109.md)."""
        return self.emax <= 1023 and self.emin - self.mbits >= -1022

    def _bias_range(self) -> tuple:
        top = (1 << self.ebits) - 1 - (1 if self.kind == "ieee" else 0)
        return (top - 1023, 1023 - self.mbits)

    # ---- derived layout -------------------------------------------------
    @property
    def kind_code(self) -> int:
        return KIND_CODES[self.kind]

    @property
    def has_sign(self) -> bool:
        """False for ``fnu`` formats (e8m0) and unsigned P3109 formats, which have no
        sign bit."""
        return self.kind not in ("fnu", "p3109ue", "p3109uf")

    @property
    def has_nan(self) -> bool:
        return self.kind != "finite"

    @property
    def has_zero(self) -> bool:
        return self.kind != "fnu"

    @property
    def nbits(self) -> int:
        """Total width of an encoding, sign included (``fnu``: no sign bit)."""
        return int(self.has_sign) + self.ebits + self.mbits

    @property
    def precision(self) -> int:
        """Significand precision p in bits, hidden bit included."""
        return self.mbits + 1

    @property
    def dtype(self) -> np.dtype:
        """Storage dtype: the smallest unsigned integer type holding an encoding."""
        n = self.nbits
        return np.dtype(np.uint8 if n <= 8 else np.uint16 if n <= 16 else
                        np.uint32 if n <= 32 else np.uint64)

    @property
    def sign_mask(self) -> int:
        """The sign bit (``fnu``: the bit above the encoding, never set)."""
        return 1 << (self.ebits + self.mbits)

    @property
    def has_inf(self) -> bool:
        return self.kind in ("ieee", "p3109se", "p3109ue")

    @property
    def has_negative_zero(self) -> bool:
        return self.kind in ("ieee", "fn", "finite")

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number (``fnu``: exponent field 0 is normal)."""
        return (0 if self.kind == "fnu" else 1) - self.bias

    @property
    def emax(self) -> int:
        """Exponent of the largest finite number."""
        return ((self.max_bits >> self.mbits) & ((1 << self.ebits) - 1)) - self.bias

    # ---- special encodings -----------------------------------------------
    @property
    def max_bits(self) -> int:
        """Encoding of the largest finite positive value."""
        full = (1 << (self.ebits + self.mbits)) - 1
        if self.is_p3109:               # the Inf (extended) or NaN (unsigned) code below
            return full - (1 if self.kind in ("p3109se", "p3109uf") else
                           2 if self.kind == "p3109ue" else 0)
        if self.kind == "ieee":
            return ((1 << self.ebits) - 1 << self.mbits) - 1
        if self.kind in ("fn", "fnu"):
            return full - 1
        return full

    @property
    def inf_bits(self) -> int | None:
        """Encoding of +infinity, or None where the format has none."""
        if self.kind in ("p3109se", "p3109ue"):
            return self.max_bits + 1
        return ((1 << self.ebits) - 1) << self.mbits if self.kind == "ieee" else None

    @property
    def default_nan_bits(self) -> int:
        """The format's own default NaN: positive, quiet, payload 0 (0x7E00 fp16,
        0x7FC0 bf16, 0x7F e4m3 (fn), 0x80 fnuz, 0xFF e8m0 (fnu)). ``finite`` formats
        (OCP fp4/fp6) have no NaN: 0, the +0 that a NaN result becomes there.
        An encoding fact; which NaN a result gets is softfloat.specialize's rule."""
        if self.kind == "ieee":
            return (((1 << self.ebits) - 1) << self.mbits) | (1 << (self.mbits - 1))
        if self.kind in ("fn", "fnu", "p3109ue", "p3109uf"):
            return (1 << (self.ebits + self.mbits)) - 1
        if self.kind == "finite":
            return 0
        return self.sign_mask                   # fnuz, signed P3109: the pattern of -0

    def is_nan_bits(self, bits):
        """True where ``bits`` (an int or an integer array of encodings, in range;
        any integer dtype) encodes a NaN."""
        if self.kind in ("fnuz", "p3109se", "p3109sf"):
            return bits == self.sign_mask
        if self.kind in ("p3109ue", "p3109uf"):
            return bits == self.sign_mask - 1
        if self.kind == "finite":               # OCP fp4/fp6: no NaN
            return np.zeros(np.shape(bits), bool) if np.ndim(bits) else False
        if self.kind == "fnu":                  # e8m0: all ones
            return bits == self.sign_mask - 1
        mag = bits & (self.sign_mask - 1)
        if self.kind == "fn":
            return mag == self.sign_mask - 1
        return mag > (((1 << self.ebits) - 1) << self.mbits)

    # ---- finfo-like constants (exact, as Python floats; every one fits float64)
    def _need_float64(self, what):
        if not self.fits_float64:
            raise ValueError(f"{self.name}: {what} is not a float64 (values from "
                             f"2**{self.min_exponent} to below 2**{self.emax + 1}); use the "
                             f"exact softfloat.p3109.decode")

    @property
    def max(self) -> float:
        """Largest finite value."""
        self._need_float64("max")
        return float(self._value_of(self.max_bits))

    @property
    def smallest_normal(self) -> float:
        self._need_float64("smallest_normal")
        return 2.0 ** self.emin

    @property
    def smallest_subnormal(self) -> float:
        """Smallest positive value (``fnu`` formats have no subnormals: the smallest normal)."""
        self._need_float64("smallest_subnormal")
        if self.kind == "fnu":
            return 2.0 ** self.emin
        return 2.0 ** (self.emin - self.mbits)

    @property
    def eps(self) -> float:
        """Distance from 1.0 to the next larger value: 2**-mbits."""
        return 2.0 ** -self.mbits

    @property
    def unit_roundoff(self) -> float:
        """u = eps/2, the bound on relative error of round-to-nearest."""
        return 2.0 ** (-self.mbits - 1)

    @property
    def min_exponent(self) -> int:
        """Exponent of the smallest positive value: ``smallest_subnormal == 2**min_exponent``."""
        return self.emin if self.kind == "fnu" else self.emin - self.mbits

    @property
    def fits_float32(self) -> bool:
        """Whether every finite value of the format is a float32, exactly: at most 24
        bits of precision, largest exponent <= 127, smallest value >= 2**-149."""
        return self.precision <= 24 and self.emax <= 127 and self.min_exponent >= -149

    def _value_of(self, bits: int) -> Fraction:
        e = (bits >> self.mbits) & ((1 << self.ebits) - 1)
        f = bits & ((1 << self.mbits) - 1)
        if e == 0 and self.kind != "fnu":
            v = Fraction(f, 1 << self.mbits) * Fraction(2) ** self.emin
        else:
            v = (1 + Fraction(f, 1 << self.mbits)) * Fraction(2) ** (e - self.bias)
        return -v if bits & self.sign_mask else v

    @property
    def params(self) -> tuple:
        """(ebits, mbits, bias, kind_code): what the kernels take."""
        return (self.ebits, self.mbits, self.bias, self.kind_code)

    def __repr__(self) -> str:
        return (f"Format({self.name!r}, ebits={self.ebits}, mbits={self.mbits}, "
                f"kind={self.kind!r}, bias={self.bias})")

    def __str__(self) -> str:
        return self.name


FP16 = Format("fp16", 5, 10, aliases=("half", "binary16", "float16", "f16", "e5m10"))
BF16 = Format("bf16", 8, 7, aliases=("bfloat16", "brain", "e8m7"))
FP32 = Format("fp32", 8, 23, aliases=("single", "binary32", "float32", "f32", "e8m23"))
TF32 = Format("tf32", 8, 10, aliases=("tensorfloat32", "tensorfloat-32", "e8m10"))
FP8_E5M2 = Format("fp8_e5m2", 5, 2, aliases=("e5m2", "float8_e5m2", "f8e5m2"))
FP8_E4M3 = Format("fp8_e4m3", 4, 3, "fn", aliases=("e4m3", "fp8_e4m3fn", "e4m3fn",
                                                   "float8_e4m3fn", "f8e4m3"))
FP8_E4M3FNUZ = Format("fp8_e4m3fnuz", 4, 3, "fnuz", aliases=("e4m3fnuz", "float8_e4m3fnuz"))
FP8_E5M2FNUZ = Format("fp8_e5m2fnuz", 5, 2, "fnuz", aliases=("e5m2fnuz", "float8_e5m2fnuz"))
# OCP Microscaling v1.0 element and scale types (section 5): no infinity, no NaN ...
FP4_E2M1 = Format("fp4_e2m1", 2, 1, "finite", aliases=("float4_e2m1fn", "fp4", "mxfp4_e2m1"))
FP6_E2M3 = Format("fp6_e2m3", 2, 3, "finite", aliases=("float6_e2m3fn",))
FP6_E3M2 = Format("fp6_e3m2", 3, 2, "finite", aliases=("float6_e3m2fn",))
# ... and the unsigned exponent-only scale: 2**-127 .. 2**127, 0xFF = NaN.
E8M0 = Format("e8m0", 8, 0, "fnu", aliases=("float8_e8m0fnu", "fp8_e8m0", "e8m0fnu"))
# float64 is a host format, used as a source of conversions; it is not a target.
FP64 = Format("fp64", 11, 52, aliases=("double", "binary64", "float64", "f64"))

_BUILTIN = [FP16, BF16, FP32, TF32, FP8_E5M2, FP8_E4M3, FP8_E4M3FNUZ, FP8_E5M2FNUZ,
            FP4_E2M1, FP6_E2M3, FP6_E3M2, E8M0]
_REGISTRY: dict = {}
def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


for _f in _BUILTIN:
    for _n in (_f.name,) + _f.aliases:
        _REGISTRY[_key(_n)] = _f


_P3109_CACHE: dict = {}


def p3109_format(K: int, P: int, signed: bool = True, extended: bool = True) -> Format:
    """The IEEE P3109 format BinaryKpP, signed or unsigned, extended (with
    infinities) or finite: K in [3, 16], 1 <= P <= K-1 (signed) or K (unsigned).
    Named ``binary{K}p{P}{s|u}{e|f}`` (``get_format`` reads the report's spelling,
    ``"Binary8p3se"``, in any case)."""
    K = _exact_int(K, "K", 3, 16)
    P = _exact_int(P, "P", 1, K - 1 if signed else K)
    for v, nm in ((signed, "signed"), (extended, "extended")):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{nm} must be a bool, got {type(v).__name__}")
    key = (K, P, bool(signed), bool(extended))
    if key not in _P3109_CACHE:
        kind = "p3109" + ("s" if signed else "u") + ("e" if extended else "f")
        name = f"binary{K}p{P}{kind[5:]}"
        _P3109_CACHE[key] = Format(name, K - P + (0 if signed else 1), P - 1, kind)
    return _P3109_CACHE[key]


def formats() -> list:
    """The built-in target formats."""
    return list(_BUILTIN)


def get_format(fmt) -> Format:
    """Return the `Format` named by ``fmt`` (a Format or a name/alias, case-insensitive).

    P3109 formats are named as the report writes them, ``"binary{K}p{P}{s|u}{e|f}"``
    (``"Binary8p3se"``, ``"binary16p11ue"``). The names ``"e4m3"`` and ``"e5m2"`` are the
    OCP fp8 formats; ``"e{E}m{M}ieee"`` is IEEE-style for every E, M; spellings with
    leading zeros (``"e04m03"``) are refused as ambiguous.
    Custom formats can also be named ``"e{E}m{M}"`` (IEEE encoding), ``"e{E}m{M}fn"``,
    ``"e{E}m{M}fnuz"``, ``"e{E}m{M}finite"`` (no infinity, no NaN) or
    ``"e{E}m{M}fnu"`` (unsigned, no zero, all-ones NaN).
    """
    if isinstance(fmt, Format):
        if fmt.name == "fp64":
            raise ValueError("fp64 is a source format only; expected a target format "
                             "of at most 8 exponent and 23 fraction bits")
        return fmt
    if not isinstance(fmt, str):
        raise TypeError(f"expected a softfloat.Format or a format name, got {type(fmt).__name__}")
    key = _key(fmt)
    if key in _REGISTRY:
        return _REGISTRY[key]
    import re
    m = re.fullmatch(r"binary(\d+)p(\d+)([su])([ef])", key)
    if m:
        K, P = int(m.group(1)), int(m.group(2))
        if m.group(1)[0] == "0" or m.group(2)[0] == "0":
            raise ValueError(f"format name {fmt!r}: write K and P without leading zeros "
                             f"('binary{K}p{P}{m.group(3)}{m.group(4)}')")
        signed = m.group(3) == "s"
        if not 3 <= K <= 16 or not 1 <= P <= K - int(signed):
            raise ValueError(f"P3109 format {fmt!r}: expected K in [3, 16] and P in "
                             f"[1, {'K-1' if signed else 'K'}], got K={K}, P={P}")
        return p3109_format(K, P, signed, m.group(4) == "e")
    if re.fullmatch(r"(?:fp\d+_)?e\d+m\d+(fnuz|fnu|fn|finite|ieee)?", key) and \
            re.search(r"e0\d|m0\d", key):
        raise ValueError(
            f"format name {fmt!r} is ambiguous: 'e4m3' names OCP fp8 E4M3 (kind fn: no "
            f"infinity, largest 448), 'e5m2' OCP fp8 E5M2 (IEEE-style); any other "
            f"'e<E>m<M>' is IEEE-style (infinity, NaNs) unless suffixed fn, fnuz, finite "
            f"or fnu, and 'e<E>m<M>ieee' is IEEE-style for every E, M ('e4m3ieee': "
            f"largest 240). Write E and M without leading zeros")
    m = re.fullmatch(r"(?:fp(\d+)_)?e(\d+)m(\d+)(fnuz|fnu|fn|finite|ieee)?", key)
    if m:
        E, M = int(m.group(2)), int(m.group(3))
        # "fp<N>_e<E>m<M>" is strict: N must be the width 1 + E + M ("fp32_e4m3" is
        # not an 8-bit format read leniently, it is an error).
        if m.group(1) is not None and int(m.group(1)) != 1 + E + M:
            raise ValueError(f"format name {fmt!r}: fp{m.group(1)} says {m.group(1)} bits but "
                             f"e{E}m{M} has {1 + E + M} (sign + exponent + fraction)")
        return Format(key, E, M, m.group(4) or "ieee")
    names = sorted({f.name for f in _BUILTIN})
    raise ValueError(f"unknown format {fmt!r}; expected one of {names}, an alias such as "
                     f"'half' or 'bfloat16', 'e<E>m<M>[fn|fnuz|finite|fnu|ieee]', a P3109 "
                     f"name 'binary<K>p<P><s|u><e|f>' (e.g. 'binary8p3se'), or a "
                     f"softfloat.Format")
