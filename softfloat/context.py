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

__all__ = ["Context", "Policy", "getcontext", "setcontext", "localcontext",
           "OVERFLOW_POLICIES", "NAN_POLICIES", "TININESS", "SATURATIONS", "get_tininess"]

OVERFLOW_POLICIES = ("ieee", "saturate", "nan")
NAN_POLICIES = NAN_WORDS
TININESS = ("after", "before")
# The saturation rules of P3109 formats (None for every other format).
SATURATIONS = ("satfinite", "satpropagate", "satnone")
#: their kernel codes (the overflow slot of the policy tuple, for P3109 formats)
SATURATION_CODES = {"satnone": SAT_NONE, "satfinite": SAT_FINITE, "satpropagate": SAT_PROPAGATE}


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
    elif name == "tininess":
        if not isinstance(v, str) or v not in TININESS:
            raise ValueError(f"unknown tininess {v!r}; expected 'after' or 'before'")
    elif name == "saturation":
        if v is not None and (not isinstance(v, str) or v not in SATURATIONS):
            raise ValueError(f"unknown saturation {v!r}; expected None or one of "
                             f"{SATURATIONS} (P3109 formats only)")
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
    saturation : str or None
        P3109 formats only: ``satnone`` (the default), ``satfinite`` or
        ``satpropagate``, applied after rounding as the P3109 report's table says
        per rounding mode, signedness and domain (docs/p3109.md). Refused for
        other formats, which keep their ``overflow`` rules.
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
            if name != "flags":
                # the policies resolved under the old value are stale (`resolve`)
                object.__setattr__(self, "_policies", {})
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


# The words of the tininess and subnormal policies, TestFloat's option names
# included (``-tininessbefore``; ``-ftz``/``-daz`` are the keywords' own names).
_TININESS_WORDS = {"after": "after", "before": "before",
                   "tininessafter": "after", "tininessbefore": "before"}


def get_tininess(word) -> str:
    """``"after"`` or ``"before"`` for a tininess word (TestFloat's
    ``tininessafter``/``tininessbefore`` too, any case, a leading ``-``
    allowed); ValueError for anything else."""
    if isinstance(word, str):
        w = _TININESS_WORDS.get(word.strip().lower().lstrip("-"))
        if w is not None:
            return w
    raise ValueError(f"unknown tininess {word!r}; expected 'after' or 'before'")


@dataclasses.dataclass(frozen=True)
class Policy:
    """The policies one computation runs under, as one frozen value: built once
    from a public function's keywords and the current context (`Policy.resolve`),
    handed down to the kernels (`Policy.kernel_tuple`), and accepted by every
    public function as ``policy=`` in place of the keywords.

    Every field is parsed and validated here (`__post_init__`, through
    `check_option`): a field holds the parsed value, never a raw word.

    rounding : Rounding
        Parsed by `softfloat.rounding.get_rounding` (names, aliases, TestFloat's).
    ftz, daz : bool
        Flush subnormal results to zero / read subnormal operands as zero.
    tininess : ``"after"`` or ``"before"``
    nan : softfloat.specialize.NanRule
        The NaN rule (``nan=`` words and int patterns are parsed into one).
    overflow : None, ``"ieee"``, ``"saturate"`` or ``"nan"``
        None: ``ieee`` for formats with infinity, ``nan`` for the others.
    saturation : None, ``"satfinite"``, ``"satpropagate"`` or ``"satnone"``
        The saturation rule of P3109 formats; None for every other format.
    sr_bits : int
        Random bits per stochastic rounding (1..32).
    seed : int, numpy.random.Generator or None
        The random source of stochastic rounding.
    fast_paths : bool
        The fast kernels allowed (`Context.fast_paths`).
    context : Context or None
        Where the call's sticky flags go (not part of the value: equality and
        hashing ignore it); `resolve` sets it to the current context.
    """
    rounding: Rounding = Rounding.NEAREST_EVEN
    ftz: bool = False
    daz: bool = False
    tininess: str = "after"
    nan: object = "propagate"
    overflow: str | None = None
    saturation: str | None = None
    sr_bits: int = 32
    seed: object = None
    fast_paths: bool = True
    context: object = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "rounding", get_rounding(self.rounding))
        for name in ("ftz", "daz", "fast_paths"):
            _validate.boolean(getattr(self, name), name)
        set_(self, "tininess", get_tininess(self.tininess))
        set_(self, "nan", as_rule(self.nan))
        check_option("overflow", self.overflow)
        check_option("saturation", self.saturation)
        check_option("sr_bits", self.sr_bits)
        set_(self, "sr_bits", int(self.sr_bits))
        check_option("seed", self.seed)
        if self.context is not None and not isinstance(self.context, Context):
            raise TypeError(f"Policy.context must be a softfloat.Context or None, got "
                            f"{type(self.context).__name__}")

    @classmethod
    def resolve(cls, rounding=None, *, policy=None, subnormals=None, ftz=None, daz=None,
                overflow=None, tininess=None, nan=None, sr_bits=None, seed=None, rng=None,
                saturation=None) -> "Policy":
        """The policy of one call: ``policy`` as given, or the keywords merged over
        the current context (a keyword left as None reads the context). Giving
        ``policy`` with any of the keywords is a TypeError. The result's
        `context` is the current context (where the call's flags go)."""
        return resolve(rounding, policy=policy, subnormals=subnormals, ftz=ftz, daz=daz,
                       overflow=overflow, tininess=tininess, nan=nan, sr_bits=sr_bits,
                       seed=seed, rng=rng, saturation=saturation)

    def replace(self, **changes) -> "Policy":
        """A copy with ``changes`` (field names; words are parsed as in the
        constructor)."""
        return dataclasses.replace(self, **changes)

    def overflow_for(self, fmt: Format) -> str:
        """The overflow rule in ``fmt``: the field, or the format's default (None:
        ``ieee`` with infinity, ``nan`` without)."""
        ov = self.overflow
        if ov is None:
            return "ieee" if fmt.has_inf else "nan"
        if ov == "nan" and fmt.has_inf:
            raise ValueError(f"overflow='nan' is for formats without infinity; {fmt.name} "
                             f"has one")
        return ov

    def kernel_tuple(self, fmt: Format) -> tuple:
        """The int64 tuple the kernels read for results in ``fmt`` (layout:
        softfloat._kernels.codes.P_*); the one place it is built."""
        if getattr(fmt, "is_p3109", False):
            # P3109 formats: the overflow slot holds the saturation mode (SAT_*)
            if self.overflow is not None:
                raise ValueError(f"overflow={self.overflow!r} is not for P3109 formats "
                                 f"({fmt.name}); give saturation= one of {SATURATIONS}")
            ovc = SATURATION_CODES[self.saturation or "satnone"]
        elif self.saturation is not None:
            raise ValueError(f"saturation={self.saturation!r} is for P3109 formats only; "
                             f"{fmt.name} keeps its overflow rules (overflow=)")
        else:
            ovc = {"ieee": OVF_IEEE, "saturate": OVF_SATURATE,
                   "nan": OVF_NAN}[self.overflow_for(fmt)]
        nanmode, nanbits = kernel_nan(self.nan, fmt)    # ValueError for a non-NaN pattern
        return (np.int64(int(self.rounding)), np.int64(self.ftz), np.int64(self.daz),
                np.int64(ovc), np.int64(self.tininess == "before"), np.int64(nanmode),
                np.int64(nanbits), np.int64(self.sr_bits))

    def flags_sink(self) -> "Context":
        """The context the call's sticky flags go to."""
        return self.context if self.context is not None else getcontext()


# The name the policy value had before it was public.
Resolved = Policy

_POLICY_KEYWORDS = ("subnormals", "ftz", "daz", "overflow", "tininess", "nan", "sr_bits",
                    "seed", "rng", "saturation")


def resolve(rounding=None, *, policy=None, subnormals=None, ftz=None, daz=None, overflow=None,
            tininess=None, nan=None, sr_bits=None, seed=None, rng=None,
            saturation=None) -> Policy:
    """`Policy.resolve`: the keywords over the current context, or ``policy``."""
    ctx = getcontext()
    if policy is not None:
        if not isinstance(policy, Policy):
            raise TypeError(f"policy must be a softfloat.Policy, got {type(policy).__name__}")
        if (rounding is None and subnormals is None and ftz is None and daz is None
                and overflow is None and tininess is None and nan is None and sr_bits is None
                and seed is None and rng is None and saturation is None):
            given = ()                          # (the common case, checked without a list)
        else:
            given = [k for k, v in (("rounding", rounding), ("subnormals", subnormals),
                                    ("ftz", ftz), ("daz", daz), ("overflow", overflow),
                                    ("tininess", tininess), ("nan", nan),
                                    ("sr_bits", sr_bits), ("seed", seed), ("rng", rng),
                                    ("saturation", saturation)) if v is not None]
        if given:
            raise TypeError(f"give policy= or the policy keywords, not both (got policy= "
                            f"and {', '.join(given)}=); policy.replace({given[0]}=...) "
                            f"changes one")
        if policy.context is ctx:
            return policy
        p = object.__new__(Policy)
        p.__dict__.update(policy.__dict__)
        object.__setattr__(p, "context", ctx)
        return p
    if seed is None and rng is None:
        # the same keywords under an unchanged context give the same policy: kept
        # per context (keys carry the types, so that ftz=1 is not read as ftz=True)
        args = (rounding, subnormals, ftz, daz, overflow, tininess, nan, sr_bits, saturation)
        try:
            key = tuple((type(v), v) for v in args)
            p = ctx._policies.get(key)
        except TypeError:                       # an unhashable value: no cache
            key = p = None
        if p is not None:
            return p
        p = _resolve(ctx, *args, None, None)
        if key is not None:
            if len(ctx._policies) >= 64:
                ctx._policies.clear()
            ctx._policies[key] = p
        return p
    return _resolve(ctx, rounding, subnormals, ftz, daz, overflow, tininess, nan, sr_bits,
                    saturation, seed, rng)


def _resolve(ctx, rounding, subnormals, ftz, daz, overflow, tininess, nan, sr_bits,
             saturation, seed, rng) -> Policy:
    sub = ctx.subnormals if subnormals is None else check_option("subnormals", subnormals)
    check_option("ftz", ftz)
    check_option("daz", daz)
    f = ftz if ftz is not None else (ctx.ftz if ctx.ftz is not None else not sub)
    d = daz if daz is not None else (ctx.daz if ctx.daz is not None else not sub)
    if seed is not None and rng is not None:
        raise TypeError("give seed= or rng=, not both")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return Policy(ctx.rounding if rounding is None else rounding, bool(f), bool(d),
                  ctx.tininess if tininess is None else tininess,
                  ctx.nan if nan is None else nan,
                  ctx.overflow if overflow is None else overflow,
                  ctx.saturation if saturation is None else saturation,
                  ctx.sr_bits if sr_bits is None else sr_bits,
                  rng if rng is not None else (seed if seed is not None else ctx.seed),
                  bool(ctx.fast_paths), ctx)


def kernel_policy(res: Policy, fmt: Format) -> tuple:
    """The int64 tuple the kernels read (`Policy.kernel_tuple`)."""
    return res.kernel_tuple(fmt)


def random_key(seed) -> int:
    """A 64-bit stream key for stochastic rounding from seed/rng (see Context.seed)."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63, dtype=np.int64))
    if seed is None:
        return int(np.random.default_rng().integers(0, 2**63, dtype=np.int64))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return int(np.random.default_rng(int(seed)).integers(0, 2**63, dtype=np.int64))
    raise TypeError(f"seed must be an int, a numpy.random.Generator or None, got {type(seed).__name__}")
