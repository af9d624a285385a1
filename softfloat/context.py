"""The environment a computation runs in, after Python's `decimal` module.

Every public function takes the policies as keywords; a keyword left as None is
read from the current context (`getcontext`), which `localcontext` changes for a
``with`` block.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses

import numpy as np

from . import _validate
from . import config
from ._kernels.codes import (OVF_IEEE, OVF_NAN, OVF_SATURATE, SAT_FINITE, SAT_NONE,
                            SAT_PROPAGATE)
from .flags import Flags
from .formats import Format
from .rounding import Rounding, get_rounding
from .specialize import NAN_WORDS, as_rule, kernel_nan

__all__ = ["Context", "getcontext", "setcontext", "localcontext", "OVERFLOW_POLICIES",
           "NAN_POLICIES", "TININESS"]

OVERFLOW_POLICIES = ("ieee", "saturate", "nan")
#: P3109 saturation modes (P3109 formats only; their kernel codes)
SATURATION_MODES = {"satnone": SAT_NONE, "satfinite": SAT_FINITE, "satpropagate": SAT_PROPAGATE}
NAN_POLICIES = NAN_WORDS
TININESS = ("after", "before")


def check_option(name: str, v):
    """The one validation of a policy value (a Context field or a keyword of a
    public function); returns it unchanged or raises TypeError/ValueError saying
    what was expected. Booleans must be real booleans: ``ftz="yes"`` and
    ``subnormals="no"`` are refused, never read by their truthiness."""
    if name == "rounding":
        get_rounding(v)
    elif name == "subnormals":
        _validate.boolean(v, name)
    elif name in ("ftz", "daz"):
        _validate.optional_boolean(v, name)
    elif name == "overflow":
        if v is not None and (not isinstance(v, str) or v not in OVERFLOW_POLICIES):
            raise ValueError(f"unknown overflow policy {v!r}; expected None or one of "
                             f"{OVERFLOW_POLICIES}")
    elif name == "saturation":
        if v is not None and (not isinstance(v, str) or v not in SATURATION_MODES):
            raise ValueError(f"unknown saturation {v!r}; expected None or one of "
                             f"{tuple(SATURATION_MODES)} (P3109 formats only)")
    elif name == "tininess":
        if not isinstance(v, str) or v not in TININESS:
            raise ValueError(f"unknown tininess {v!r}; expected 'after' or 'before'")
    elif name == "nan":
        as_rule(v)                      # ValueError for an unknown policy
    elif name == "sr_bits":
        if (not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_))
                or not 1 <= v <= 32):
            raise ValueError(f"sr_bits must be an integer in [1, 32], got {v!r}")
    elif name == "seed":
        if not (v is None or isinstance(v, np.random.Generator)
                or (isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)))):
            raise TypeError(f"seed must be an int, a numpy.random.Generator or None, got "
                            f"{type(v).__name__}")
        if isinstance(v, (int, np.integer)) and v < 0:
            raise ValueError(f"seed must be a non-negative int (numpy's seeds are), got {v}")
    elif name == "fast_paths":
        _validate.boolean(v, name)
    elif name == "flags":
        if not isinstance(v, (Flags, int)) or isinstance(v, bool):
            raise TypeError(f"flags must be a softfloat.Flags value, got {type(v).__name__}")
    return v


@dataclasses.dataclass
class Context:
    """Rounding and exception policies.

    Attributes
    ----------
    rounding : str
        ``nearest_even`` (default), ``nearest_away``, ``toward_zero``, ``upward``,
        ``downward``, ``odd``, ``stochastic`` (aliases rne, rna, rtz, rup, rdn, rto, sr).
    subnormals : bool
        True keeps subnormals (IEEE). False flushes them on output (ftz) and reads
        subnormal inputs as zero (daz); ``ftz``/``daz`` set each one apart.
    overflow : str or None
        ``ieee``: infinity, or the largest finite value where the mode points away
        from infinity. ``saturate``: the largest finite value. ``nan``: for formats
        without infinity (fn, fnuz), NaN where IEEE would give infinity. None picks
        ``ieee`` for IEEE formats and ``nan`` for the others (ml_dtypes' choice).
    tininess : str
        ``after`` (default) or ``before`` rounding; changes the underflow flag only.
    nan : str, int or softfloat.specialize.NanRule
        ``propagate``: a NaN operand's sign and payload, quieted (x86 SSE, SoftFloat's
        8086-SSE); a fresh NaN is the format's default NaN. ``canonical``: always the
        format's default NaN (0x7E00 fp16, 0x7FC0 bf16). An int: always that pattern.
        A ``NanRule`` says the rest (e.g. ``NanRule("propagate", "negative")``: x86's
        fresh NaN 0xFE00); see softfloat.specialize, which owns every NaN rule.
        (Overflow to NaN in a format without infinity keeps the sign, as ml_dtypes does.)
    sr_bits : int
        Random bits per stochastic rounding (1..32): the result rounds up with
        probability ceil(frac * 2**sr_bits) / 2**sr_bits, frac being the exact
        distance from the lower neighbour over the step.
    seed : int, numpy.random.Generator or None
        Random source for stochastic rounding. An int makes every call with it
        repeat the same random stream; a Generator advances (one draw per call);
        None draws fresh entropy.
    fast_paths : bool
        True (default) lets every operation take its fast kernels (hardware
        conversions, float32 arithmetic with error-free transformations, the
        branch-free integer passes, the native float32 accumulation), which give
        the same bits and flags as the general integer kernels. False runs the
        general kernels only (to check the fast ones, or to rule them out). The
        default comes from the environment variable ``SOFTFLOAT_FAST_PATHS``
        (``0``/``false``/``no``/``off``, any case, turn them off; see softfloat.config),
        read when a context is made.
    flags : Flags
        Sticky flags: every call ORs the flags it raised into the context's.
    """

    rounding: str = "nearest_even"
    subnormals: bool = True
    ftz: bool | None = None
    daz: bool | None = None
    overflow: str | None = None
    saturation: str | None = None
    tininess: str = "after"
    nan: object = "propagate"
    sr_bits: int = 32
    seed: object = None
    fast_paths: bool = dataclasses.field(default_factory=lambda: env_fast_paths())
    flags: Flags = Flags.NONE

    def __setattr__(self, name, value):
        # Every assignment is validated (construction, localcontext, ctx.x = ...),
        # so a bad value is refused where it is written, not later where it is used.
        if name in _FIELDS:
            check_option(name, value)
        elif not name.startswith("_"):
            raise TypeError(f"Context has no attribute {name!r}")
        object.__setattr__(self, name, value)

    def copy(self) -> "Context":
        return dataclasses.replace(self)

    def clear_flags(self) -> None:
        self.flags = Flags.NONE


def env_fast_paths() -> bool:
    """The default of Context.fast_paths: $SOFTFLOAT_FAST_PATHS (softfloat.config;
    on unless set to 0/false/no/off, any case)."""
    return config.fast_paths()


_FIELDS = frozenset(f.name for f in dataclasses.fields(Context))

_current: contextvars.ContextVar = contextvars.ContextVar("softfloat_context")


def getcontext() -> Context:
    """The current context (a fresh default one per thread/task on first use)."""
    try:
        return _current.get()
    except LookupError:
        ctx = Context()
        _current.set(ctx)
        return ctx


def setcontext(ctx: Context) -> None:
    if not isinstance(ctx, Context):
        raise TypeError(f"expected a softfloat.Context, got {type(ctx).__name__}")
    _current.set(ctx)


@contextlib.contextmanager
def localcontext(ctx: Context | None = None, **changes):
    """``with localcontext(rounding="toward_zero") as ctx:`` runs the block under a
    copy of ``ctx`` (default: the current context) with ``changes`` applied. The
    copy starts with clear sticky flags, so ``ctx.flags`` holds the block's own."""
    base = (ctx or getcontext()).copy()
    base.flags = Flags.NONE
    for k, v in changes.items():
        if not hasattr(base, k):
            raise TypeError(f"Context has no attribute {k!r}")
        setattr(base, k, v)
    token = _current.set(base)
    try:
        yield base
    finally:
        _current.reset(token)


@dataclasses.dataclass(frozen=True)
class Resolved:
    """Policies after keywords and the context are merged, ready for a kernel."""
    rounding: Rounding
    ftz: bool
    daz: bool
    overflow: str
    tininess: str
    nan: object
    sr_bits: int
    seed: object
    context: Context
    fast_paths: bool = True
    saturation: str | None = None


def resolve(rounding=None, *, subnormals=None, ftz=None, daz=None, overflow=None,
            tininess=None, nan=None, sr_bits=None, seed=None, rng=None,
            saturation=None) -> Resolved:
    ctx = getcontext()
    r = get_rounding(ctx.rounding if rounding is None else rounding)
    sub = ctx.subnormals if subnormals is None else check_option("subnormals", subnormals)
    check_option("ftz", ftz)
    check_option("daz", daz)
    f = ftz if ftz is not None else (ctx.ftz if ctx.ftz is not None else not sub)
    d = daz if daz is not None else (ctx.daz if ctx.daz is not None else not sub)
    ov = ctx.overflow if overflow is None else check_option("overflow", overflow)
    tn = ctx.tininess if tininess is None else check_option("tininess", tininess)
    nn = ctx.nan if nan is None else check_option("nan", nan)
    sb = ctx.sr_bits if sr_bits is None else check_option("sr_bits", sr_bits)
    if seed is not None and rng is not None:
        raise TypeError("give seed= or rng=, not both")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    sd = rng if rng is not None else (seed if seed is not None else ctx.seed)
    check_option("seed", sd)
    sat = ctx.saturation if saturation is None else check_option("saturation", saturation)
    return Resolved(r, bool(f), bool(d), ov, tn, nn, int(sb), sd, ctx, bool(ctx.fast_paths),
                    sat)


def kernel_policy(res: Resolved, fmt: Format) -> tuple:
    """The int64 tuple the kernels read (layout: softfloat._kernels.core.P_*).
    For P3109 formats the overflow slot holds the saturation mode (SAT_*)."""
    ov = res.overflow
    if fmt.is_p3109:
        if ov is not None:
            raise ValueError(f"overflow={ov!r} is not for P3109 formats ({fmt.name}); "
                             f"give saturation= one of {tuple(SATURATION_MODES)}")
        ovc = SATURATION_MODES[res.saturation or "satnone"]
        ov = "p3109"
    elif res.saturation is not None:
        raise ValueError(f"saturation={res.saturation!r} is for P3109 formats only; {fmt.name} "
                         f"keeps its overflow rules (overflow=)")
    if ov is None:
        ov = "ieee" if fmt.has_inf else "nan"
    if ov == "nan" and fmt.has_inf:
        raise ValueError(f"overflow='nan' is for formats without infinity; {fmt.name} has one")
    if ov != "p3109":
        ovc = {"ieee": OVF_IEEE, "saturate": OVF_SATURATE, "nan": OVF_NAN}[ov]
    nanmode, nanbits = kernel_nan(res.nan, fmt)     # ValueError for a non-NaN pattern
    return (np.int64(int(res.rounding)), np.int64(res.ftz), np.int64(res.daz), np.int64(ovc),
            np.int64(res.tininess == "before"), np.int64(nanmode), np.int64(nanbits),
            np.int64(res.sr_bits))


def random_key(seed) -> int:
    """A 64-bit stream key for stochastic rounding from seed/rng (see Context.seed)."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63, dtype=np.int64))
    if seed is None:
        return int(np.random.default_rng().integers(0, 2**63, dtype=np.int64))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return int(np.random.default_rng(int(seed)).integers(0, 2**63, dtype=np.int64))
    raise TypeError(f"seed must be an int, a numpy.random.Generator or None, got {type(seed).__name__}")
