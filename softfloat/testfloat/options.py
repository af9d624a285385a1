"""The environment expected results are computed in (`Options`) and TestFloat's
rounding options (``-rnear_even`` ... ``-rodd``)."""
from __future__ import annotations

import dataclasses

from .._validate import boolean
from ..rounding import Rounding, get_rounding
from ..specialize import as_rule

__all__ = ["Options", "ROUND_OPTS", "ROUND_NAME"]

# TestFloat's rounding options -> our modes. -rodd is round to odd everywhere,
# integer rounding included (roundToInt, to_i32/to_i64 jam: SoftFloat 3e's code
# and TestFloat 3e's programs; TestFloat's help text says otherwise).
ROUND_OPTS = {"rnear_even": "nearest_even", "rneareven": "nearest_even",
               "rnearest_even": "nearest_even", "rnear_maxmag": "nearest_away",
               "rnear_maxMag": "nearest_away", "rnearmaxmag": "nearest_away",
               "rnearest_maxmag": "nearest_away", "rnearest_maxMag": "nearest_away",
               "rminmag": "toward_zero", "rminMag": "toward_zero", "rmin": "downward",
               "rmax": "upward", "rodd": "odd"}
ROUND_NAME = {Rounding.NEAREST_EVEN: "near_even", Rounding.NEAREST_AWAY: "near_maxMag",
               Rounding.TOWARD_ZERO: "minMag", Rounding.DOWNWARD: "min",
               Rounding.UPWARD: "max", Rounding.ODD: "odd"}



@dataclasses.dataclass(frozen=True)
class Options:
    """How expected results are computed.

    rounding : str            TestFloat's -r* options (default nearest_even)
    tininess : 'after'|'before'
    exact : bool              raise inexact when rounding to an integer (-exact)
    nan : 'propagate'|'canonical'|int|softfloat.specialize.NanRule
        NaN result policy: 'propagate' is SoftFloat's 8086-SSE (first NaN operand,
        quieted); fresh NaNs are the format's default NaN (positive, e.g. 0x7E00;
        an x86 SoftFloat build writes 0xFE00: use NanRule("propagate", "negative")
        or platform="x86_sse", and compare NaNs with -checkNaNs only against a
        matching policy).
    ftz, daz : bool            flush subnormal results / read subnormal inputs as zero
    overflow : None|'ieee'|'saturate'|'nan'
    platform : None or a name of softfloat.platforms (``x86_sse``, ``riscv``, ...)
        takes the NaN rules from that platform (operation results, casts, and the
        pattern of a fresh NaN such as 0/0) in place of ``nan``.
    """
    rounding: str = "nearest_even"
    tininess: str = "after"
    exact: bool = False
    nan: object = "propagate"
    ftz: bool = False
    daz: bool = False
    overflow: object = None
    platform: object = None

    def __post_init__(self):
        object.__setattr__(self, "rounding", get_rounding(self.rounding).label)
        if get_rounding(self.rounding) == Rounding.STOCHASTIC:
            raise ValueError("test vectors need a deterministic rounding mode, not stochastic")
        if self.tininess not in ("after", "before"):
            raise ValueError(f"tininess must be 'after' or 'before', got {self.tininess!r}")
        as_rule(self.nan)                    # ValueError for an unknown NaN policy
        for name in ("exact", "ftz", "daz"):
            object.__setattr__(self, name, boolean(getattr(self, name), name))
        if self.overflow is not None and self.overflow not in ("ieee", "saturate", "nan"):
            raise ValueError(f"overflow must be None, 'ieee', 'saturate' or 'nan', got "
                             f"{self.overflow!r}")
        if self.platform is not None:
            from ..platforms import get_platform
            object.__setattr__(self, "platform", get_platform(self.platform).name)

    def policies(self) -> dict:
        if self.platform is not None:
            raise ValueError("platform NaN rules are applied by expected()")
        p = dict(tininess=self.tininess, nan=self.nan, ftz=self.ftz, daz=self.daz)
        if self.overflow is not None:
            p["overflow"] = self.overflow
        return p


def make_options(opts, kw) -> Options:
    """``opts`` (an Options or None) with the keyword changes ``kw`` applied."""
    if opts is not None and not isinstance(opts, Options):
        raise TypeError(f"options must be a testfloat.Options, got {type(opts).__name__}")
    if opts is None:
        return Options(**kw)
    if kw:
        return dataclasses.replace(opts, **kw)
    return opts


