"""The environment a computation runs in, after Python's `decimal` module.

Every public function takes the policies as keywords; a keyword left as None is
read from the current context (`getcontext`), which `localcontext` changes for a
``with`` block.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os

import numpy as np

from .flags import Flags
from .formats import Format
from .rounding import Rounding, get_rounding

__all__ = ["Context", "getcontext", "setcontext", "localcontext", "OVERFLOW_POLICIES",
           "NAN_POLICIES", "TININESS"]

OVERFLOW_POLICIES = ("ieee", "saturate", "nan")
NAN_POLICIES = ("propagate", "canonical")
TININESS = ("after", "before")


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
    nan : str or int
        ``propagate``: a NaN operand's sign and payload, quieted (x86 SSE, SoftFloat's
        8086-SSE); a fresh NaN is the format's default NaN. ``canonical``: always the
        format's default NaN (0x7E00 fp16, 0x7FC0 bf16). An int: always that pattern.
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
        (``0``/``false``/``no``/``off`` turn them off), read when a context is made.
    flags : Flags
        Sticky flags: every call ORs the flags it raised into the context's.
    """

    rounding: str = "nearest_even"
    subnormals: bool = True
    ftz: bool | None = None
    daz: bool | None = None
    overflow: str | None = None
    tininess: str = "after"
    nan: object = "propagate"
    sr_bits: int = 32
    seed: object = None
    fast_paths: bool = dataclasses.field(default_factory=lambda: env_fast_paths())
    flags: Flags = Flags.NONE

    def copy(self) -> "Context":
        return dataclasses.replace(self)

    def clear_flags(self) -> None:
        self.flags = Flags.NONE


def env_fast_paths() -> bool:
    """The default of Context.fast_paths: False when $SOFTFLOAT_FAST_PATHS is
    0/false/no/off, True otherwise."""
    v = os.environ.get("SOFTFLOAT_FAST_PATHS", "1").strip().lower()
    return v not in ("0", "false", "no", "off")


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


def resolve(rounding=None, *, subnormals=None, ftz=None, daz=None, overflow=None,
            tininess=None, nan=None, sr_bits=None, seed=None, rng=None) -> Resolved:
    ctx = getcontext()
    r = get_rounding(ctx.rounding if rounding is None else rounding)
    sub = ctx.subnormals if subnormals is None else subnormals
    if not isinstance(sub, (bool, np.bool_)):
        raise TypeError(f"subnormals must be True or False, got {sub!r}")
    f = ftz if ftz is not None else (ctx.ftz if ctx.ftz is not None else not sub)
    d = daz if daz is not None else (ctx.daz if ctx.daz is not None else not sub)
    ov = ctx.overflow if overflow is None else overflow
    if ov is not None and ov not in OVERFLOW_POLICIES:
        raise ValueError(f"unknown overflow policy {ov!r}; expected one of {OVERFLOW_POLICIES}")
    tn = ctx.tininess if tininess is None else tininess
    if tn not in TININESS:
        raise ValueError(f"unknown tininess {tn!r}; expected 'after' or 'before'")
    nn = ctx.nan if nan is None else nan
    if not (nn in NAN_POLICIES or (isinstance(nn, (int, np.integer)) and not isinstance(nn, bool))):
        raise ValueError(f"unknown NaN policy {nn!r}; expected 'propagate', 'canonical' "
                         f"or an int NaN encoding")
    sb = ctx.sr_bits if sr_bits is None else sr_bits
    if not isinstance(sb, (int, np.integer)) or not 1 <= sb <= 32:
        raise ValueError(f"sr_bits must be an integer in [1, 32], got {sb!r}")
    if seed is not None and rng is not None:
        raise TypeError("give seed= or rng=, not both")
    sd = rng if rng is not None else (seed if seed is not None else ctx.seed)
    fp = ctx.fast_paths
    if not isinstance(fp, (bool, np.bool_)):
        raise TypeError(f"fast_paths must be True or False, got {fp!r}")
    return Resolved(r, bool(f), bool(d), ov, tn, nn, int(sb), sd, ctx, bool(fp))


def kernel_policy(res: Resolved, fmt: Format) -> tuple:
    """The int64 tuple the kernels read (layout: softfloat._kernels.core.P_*)."""
    from ._kernels.core import NAN_CANONICAL, NAN_PROPAGATE, OVF_IEEE, OVF_NAN, OVF_SATURATE
    ov = res.overflow
    if ov is None:
        ov = "ieee" if fmt.has_inf else "nan"
    if ov == "nan" and fmt.has_inf:
        raise ValueError(f"overflow='nan' is for formats without infinity; {fmt.name} has one")
    ovc = {"ieee": OVF_IEEE, "saturate": OVF_SATURATE, "nan": OVF_NAN}[ov]
    if isinstance(res.nan, str):
        nanmode = NAN_PROPAGATE if res.nan == "propagate" else NAN_CANONICAL
        nanbits = fmt.default_nan_bits
    else:
        nanmode, nanbits = NAN_CANONICAL, int(res.nan)
        if not _is_nan_bits(nanbits, fmt):
            raise ValueError(f"nan={res.nan:#x} is not a NaN encoding of {fmt.name}")
    return (np.int64(int(res.rounding)), np.int64(res.ftz), np.int64(res.daz), np.int64(ovc),
            np.int64(res.tininess == "before"), np.int64(nanmode), np.int64(nanbits),
            np.int64(res.sr_bits))


def _is_nan_bits(b: int, fmt: Format) -> bool:
    return 0 <= b < (1 << fmt.nbits) and bool(fmt.is_nan_bits(b))


def random_key(seed) -> int:
    """A 64-bit stream key for stochastic rounding from seed/rng (see Context.seed)."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63, dtype=np.int64))
    if seed is None:
        return int(np.random.default_rng().integers(0, 2**63, dtype=np.int64))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return int(np.random.default_rng(int(seed)).integers(0, 2**63, dtype=np.int64))
    raise TypeError(f"seed must be an int, a numpy.random.Generator or None, got {type(seed).__name__}")
