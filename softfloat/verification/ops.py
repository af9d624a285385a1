"""The operations `softfloat.verify` checks, by name, and the library's answer
for each (result encodings and flags) under a setting of the policies.

An operation is named as in the SFV1 header (docs/verify.md):

* ``add sub mul div`` (two operands of the format), ``sqrt``,
  ``round_to_integral`` and ``round_to_integral_exact`` (IEEE roundToIntegral,
  roundToIntegralExact, which raises inexact) (one operand);
* ``fma`` (a*b + c), ``fms`` (a*b - c), ``fnma`` (-(a*b) + c), ``fnms``
  (-(a*b) - c): one rounding; the negated variants are `softfloat.fma` with the
  sign bit of the negated operand flipped first (a NaN operand's too);
* ``minimum maximum minimum_number maximum_number`` (IEEE 754-2019) and
  ``fmin_riscv fmax_riscv`` (RISC-V F/D ``fmin``/``fmax``: minimumNumber with
  -0 < +0, the canonical NaN when both are NaN, invalid for a signaling NaN);
* comparisons ``eq ne lt le gt ge unordered`` (quiet) and ``eq_signaling
  ... ge_signaling``: a result byte 0 or 1 (RISC-V ``feq`` is ``eq``, ``flt``
  and ``fle`` are ``lt_signaling`` and ``le_signaling``);
* ``classify``: the RISC-V ``fclass`` 10-bit mask (The RISC-V Instruction Set
  Manual, Volume I, F extension, "Single-Precision Floating-Point Classify
  Instruction"): bit 0 -inf, 1 negative normal, 2 negative subnormal, 3 -0,
  4 +0, 5 positive subnormal, 6 positive normal, 7 +inf, 8 signaling NaN,
  9 quiet NaN (a format with a single NaN kind reports it as quiet); 2 result
  bytes, no flags;
* conversions ``convert:<dst>`` (into another format), ``to_int32 to_int64
  to_uint32 to_uint64`` (rounded in the mode; invalid: SoftFloat's 8086-SSE
  values) and ``from_int32 from_int64 from_uint32 from_uint64`` (operands are
  the integers' two's-complement bits in unsigned arrays).

Policies are the library's keywords: ``ftz``, ``daz``, ``tininess``, ``nan``,
``overflow`` or, for a result in a P3109 format, ``saturation`` (each op takes
those that apply to it, `Op.policies`).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import arith as A
from .. import conversions as C
from ..context import Context, Policy, localcontext
from ..formats import Format, get_format
from ..specialize import NAN_WORDS, is_nan_bits, is_snan_bits

__all__ = ["Op", "get_op", "op_names", "DEFAULTS", "POLICIES", "normalize_policies"]

#: The library's defaults of the policies verify searches over.
DEFAULTS = {"ftz": False, "daz": False, "tininess": "after", "nan": "propagate",
            "overflow": None, "saturation": None}
POLICIES = tuple(DEFAULTS)

BINARY = ("add", "sub", "mul", "div")
FMA = ("fma", "fms", "fnma", "fnms")
MINMAX = ("minimum", "maximum", "minimum_number", "maximum_number", "fmin_riscv",
          "fmax_riscv")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge", "unordered", "eq_signaling", "ne_signaling",
           "lt_signaling", "le_signaling", "gt_signaling", "ge_signaling")
INTS = {"int32": (32, True), "int64": (64, True), "uint32": (32, False),
        "uint64": (64, False)}
_TF_INT = {"int32": "i32", "int64": "i64", "uint32": "ui32", "uint64": "ui64"}

_FLOAT_IN = ("daz", "nan")


def _pols(f, keys=POLICIES) -> tuple:
    """``keys`` as an operation rounding into ``f`` takes them: a P3109 format
    takes ``saturation=`` where the others take ``overflow=``."""
    drop = "overflow" if f.is_p3109 else "saturation"
    return tuple(k for k in keys if k != drop)


@dataclasses.dataclass(frozen=True)
class Op:
    """One operation on one format: ``name`` (as in the SFV1 header), ``fmt``
    (the operand format; the source of a conversion), ``args`` (operand types:
    Format or an integer type name), ``result`` (a Format, ``"bool"``,
    ``"class"`` or an integer type name), whether it ``rounds``, the
    ``policies`` it takes, and ``testfloat`` (TestFloat's function name, when
    it has one)."""
    name: str
    fmt: Format
    args: tuple
    result: object
    rounds: bool
    policies: tuple
    testfloat: str | None = None

    @property
    def nops(self) -> int:
        return len(self.args)

    @property
    def in_dtypes(self) -> tuple:
        return tuple(_dtype(t) for t in self.args)

    @property
    def in_bytes(self) -> int:
        return max(d.itemsize for d in self.in_dtypes)

    @property
    def out_dtype(self) -> np.dtype:
        return _dtype(self.result)

    @property
    def out_bytes(self) -> int:
        return self.out_dtype.itemsize

    @property
    def out_bits(self) -> int:
        z = self.result
        if isinstance(z, Format):
            return z.nbits
        if z == "bool":
            return 1
        if z == "class":
            return 10
        return INTS[z][0]

    @property
    def float_result(self):
        return self.result if isinstance(self.result, Format) else None

    def compute(self, ops, rounding="nearest_even", **policies):
        """The library's (result encodings in `out_dtype`, flags uint8) for the
        operand arrays ``ops`` under ``rounding`` and ``policies`` (only those in
        `policies`; None values are left to the library's defaults)."""
        pol = {k: v for k, v in policies.items() if v is not None}
        for k in pol:
            if k not in self.policies:
                raise ValueError(f"{self.name} does not take the policy {k}=")
        r, f = _compute(self, [np.asarray(x) for x in ops], rounding, pol)
        return _unsigned(np.asarray(r), self.out_dtype), np.asarray(f, np.uint8)

    def describe(self) -> str:
        return f"{self.name} on {self.fmt.name}"


def _dtype(t) -> np.dtype:
    if isinstance(t, Format):
        return t.dtype
    if t == "bool":
        return np.dtype(np.uint8)
    if t == "class":
        return np.dtype(np.uint16)
    return np.dtype(np.uint64) if INTS[t][0] == 64 else np.dtype(np.uint32)


def _unsigned(x, dt):
    if x.dtype == dt:
        return x
    if x.dtype.kind == "b":
        return x.astype(dt)
    if x.dtype.kind == "i":
        return x.astype(np.int64).view(np.uint64).astype(dt)
    return x.astype(dt)


def _tf_token(f: Format) -> str:
    from ..testfloat.names import token
    return token(f)


def op_names() -> list:
    """Every operation name verify knows (``convert:<dst>`` for conversions)."""
    return (list(BINARY) + ["sqrt", "round_to_integral", "round_to_integral_exact"] + list(FMA) + list(MINMAX)
            + list(COMPARE) + ["classify", "convert:<format>"]
            + [f"to_{t}" for t in INTS] + [f"from_{t}" for t in INTS])


def get_op(op, fmt) -> Op:
    """The `Op` named ``op`` on the format ``fmt`` (a ValueError lists the names)."""
    if isinstance(op, Op):
        return op
    if not isinstance(op, str):
        raise TypeError(f"op must be an operation name (str), got {type(op).__name__}")
    f = get_format(fmt)
    tf = _tf_token(f)
    if op in BINARY:
        return Op(op, f, (f, f), f, True, _pols(f), f"{tf}_{op}")
    if op == "sqrt":
        return Op(op, f, (f,), f, True, _pols(f), f"{tf}_sqrt")
    if op in ("round_to_integral", "round_to_integral_exact"):
        return Op(op, f, (f,), f, True, _FLOAT_IN, f"{tf}_roundToInt" if op ==
                  "round_to_integral" else None)
    if op in FMA:
        return Op(op, f, (f, f, f), f, True, _pols(f), f"{tf}_mulAdd" if op == "fma" else None)
    if op in MINMAX:
        return Op(op, f, (f, f), f, False, _FLOAT_IN)
    if op in COMPARE:
        tfname = {"eq": "eq", "lt": "lt_quiet", "le": "le_quiet", "eq_signaling": "eq_signaling",
                  "lt_signaling": "lt", "le_signaling": "le"}.get(op)
        return Op(op, f, (f, f), "bool", False, ("daz",), f"{tf}_{tfname}" if tfname else None)
    if op == "classify":
        return Op(op, f, (f,), "class", False, ())
    if op.startswith("convert:"):
        d = get_format(op.split(":", 1)[1])
        return Op(f"convert:{d.name}", f, (f,), d, True, _pols(d), f"{tf}_to_{_tf_token(d)}")
    if op.startswith("to_") and op[3:] in INTS:
        t = op[3:]
        return Op(op, f, (f,), t, True, ("daz",), f"{tf}_to_{_TF_INT[t]}")
    if op.startswith("from_") and op[5:] in INTS:
        t = op[5:]
        return Op(op, f, (t,), f, True, _pols(f, ("ftz", "tininess", "overflow", "saturation")),
                  f"{_TF_INT[t]}_to_{tf}")
    raise ValueError(f"unknown operation {op!r}; expected one of {op_names()}")


def normalize_policies(policies: dict) -> dict:
    """Policy keywords (or ``policy=``, a `softfloat.Policy`) -> the explicit
    setting {ftz, daz, tininess, nan, overflow, saturation}. The keywords are
    parsed by `Policy.resolve` over the library's defaults (not the caller's
    context), so ``subnormals=False`` is ftz and daz as everywhere in the
    library; ``nan`` keeps the word it was given (the diagnosis and the JSON
    report speak in words)."""
    p = {k: v for k, v in policies.items() if v is not None}
    bad = [k for k in p if k not in DEFAULTS and k not in ("subnormals", "policy")]
    if bad:
        raise TypeError(f"unknown keyword {bad[0]}=; the policies are subnormals, "
                        + ", ".join(POLICIES) + ", or policy= (a softfloat.Policy)")
    with localcontext(Context()):
        pol = Policy.resolve(**p)
    out = {k: getattr(pol, k) for k in POLICIES}
    out["nan"] = p.get("nan", DEFAULTS["nan"]) if "policy" not in p else _nan_word(pol.nan)
    return out


def _nan_word(rule):
    """A NanRule as the ``nan=`` word (or int pattern) that gives it, where one does."""
    if rule.pattern is None and rule.mode in NAN_WORDS:
        return rule.mode
    if rule.mode == "canonical" and isinstance(rule.pattern, (int, np.integer)):
        return int(rule.pattern)
    return rule


# ---------------------------------------------------------------------------
def _neg(x, f):
    return A.neg(x.astype(f.dtype, copy=False), f)


def _tf_options(rounding, pol):
    from ..testfloat.options import Options
    kw = {k: v for k, v in pol.items() if k in ("ftz", "daz", "tininess", "overflow", "nan")}
    return Options(policy=Policy(rounding, **kw))


def _compute(op: Op, ops, r, pol):
    f = op.fmt
    n = op.name
    if n in BINARY:
        return getattr(A, n)(ops[0], ops[1], f, r, return_flags=True, **pol)
    if n == "sqrt":
        return A.sqrt(ops[0], f, r, return_flags=True, **pol)
    if n.startswith("round_to_integral"):
        return A.round_to_integral(ops[0], f, r, exact=n.endswith("_exact"), return_flags=True,
                                   **pol)
    if n in FMA:
        a, b, c = ops
        if n in ("fnma", "fnms"):
            a = _neg(a, f)
        if n in ("fms", "fnms"):
            c = _neg(c, f)
        return A.fma(a, b, c, f, r, return_flags=True, **pol)
    if n in MINMAX:
        if n.endswith("_riscv"):
            fn = A.minimum_number if n == "fmin_riscv" else A.maximum_number
            pol = dict(pol)
            pol.setdefault("nan", "canonical")
        else:
            fn = getattr(A, n)
        return fn(ops[0], ops[1], f, return_flags=True, **pol)
    if n in COMPARE:
        res, fl = getattr(A, n)(ops[0], ops[1], f, return_flags=True, **pol)
        return res.astype(np.uint8), fl
    if n == "classify":
        return classify(ops[0], f), np.zeros(np.shape(ops[0]), np.uint8)
    if n.startswith("convert:"):
        return C.convert(ops[0], f, op.result, r, return_flags=True, **pol)
    # integer conversions: the TestFloat reductions (softfloat.testfloat.expected)
    from ..testfloat.expected import expected
    return expected(op.testfloat, ops[0], options=_tf_options(r, pol))


def classify(bits, fmt) -> np.ndarray:
    """The RISC-V ``fclass`` mask (uint16) of encodings of ``fmt`` (see the module doc)."""
    f = get_format(fmt)
    b = np.asarray(bits).astype(np.uint64)
    nan = np.asarray(is_nan_bits(f, b), bool)
    snan = np.asarray(is_snan_bits(f, b), bool) & nan if f.kind == "ieee" else np.zeros(b.shape, bool)
    neg = ((b >> np.uint64(f.nbits - 1)) & np.uint64(1)).astype(bool) if f.has_sign else \
        np.zeros(b.shape, bool)
    mag = b & np.uint64(f.sign_mask - 1 if f.has_sign else (1 << f.nbits) - 1)
    exp = mag >> np.uint64(f.mbits)
    zero = mag == 0
    sub = (exp == 0) & ~zero
    inf = np.zeros(b.shape, bool) if f.inf_bits is None else \
        (mag == np.uint64(f.inf_bits & (f.sign_mask - 1))) & ~nan
    normal = ~(zero | sub | inf | nan)
    if f.kind == "fnuz":                 # no -0: the 0x80 pattern is the NaN
        zero &= ~nan
    out = np.zeros(b.shape, np.uint16)
    for bit, m in ((0, inf & neg), (1, normal & neg), (2, sub & neg), (3, zero & neg),
                   (4, zero & ~neg), (5, sub & ~neg), (6, normal & ~neg), (7, inf & ~neg),
                   (8, snan), (9, nan & ~snan)):
        out[m & ~nan if bit < 8 else m] |= np.uint16(1 << bit)
    return out
