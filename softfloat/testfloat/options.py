"""The environment expected results are computed in (`Options`): a
`softfloat.Policy` and what TestFloat adds to it (``-exact``, a platform's NaN
rules). TestFloat's rounding options are read by `softfloat.rounding`."""
from __future__ import annotations

import dataclasses

from .._validate import boolean
from ..context import Policy
from ..rounding import Rounding
from ..specialize import NAN_WORDS

__all__ = ["Options"]

_WORDS = ("rounding", "tininess", "nan", "ftz", "daz", "overflow")


@dataclasses.dataclass(frozen=True)
class Options:
    """How expected results are computed.

    rounding : str            a mode name or TestFloat's -r* option (default nearest_even)
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
    policy : softfloat.Policy or None
        The rounding and the policies as one value, in place of the six fields
        above (giving both is a TypeError unless they agree). Every word is parsed
        by the Policy; the fields hold the parsed values and `policy` is always set.
    """
    rounding: object = None
    tininess: object = None
    exact: bool = False
    nan: object = None
    ftz: object = None
    daz: object = None
    overflow: object = None
    platform: object = None
    policy: object = None

    def __post_init__(self):
        words = {k: getattr(self, k) for k in _WORDS if getattr(self, k) is not None}
        if self.policy is None:
            pol = Policy(**words)
        elif not isinstance(self.policy, Policy):
            raise TypeError(f"policy must be a softfloat.Policy, got "
                            f"{type(self.policy).__name__}")
        else:
            pol = self.policy.replace(context=None)
            clash = [k for k, v in words.items()
                     if _field(pol, k) != _field(Policy(**{k: v}), k)]
            if clash:
                raise TypeError(f"give policy= or the policy fields, not both (got policy= "
                                f"and {', '.join(clash)}=); Options.replace({clash[0]}=...) "
                                f"changes one")
        if pol.rounding == Rounding.STOCHASTIC:
            raise ValueError("test vectors need a deterministic rounding mode, not stochastic")
        set_ = object.__setattr__
        set_(self, "policy", pol)
        for k in _WORDS:
            set_(self, k, _field(pol, k))
        set_(self, "exact", boolean(self.exact, "exact"))
        if self.platform is not None:
            from ..platforms import get_platform
            set_(self, "platform", get_platform(self.platform).name)

    def replace(self, **changes) -> "Options":
        """A copy with ``changes``: the policy fields change the policy."""
        bad = [k for k in changes if k not in _WORDS + ("exact", "platform", "policy")]
        if bad:
            raise TypeError(f"unknown Options field {bad[0]}=")
        pol = changes.pop("policy", None) or self.policy
        pw = {k: changes.pop(k) for k in _WORDS if k in changes}
        if pw:
            pol = pol.replace(**pw)
        kw = dict(exact=self.exact, platform=self.platform)
        kw.update(changes)
        return Options(policy=pol, **kw)

    def as_dict(self) -> dict:
        """The fields in words (a report's options): the NaN rule as the ``nan=``
        word or int pattern that gives it, the policy left out."""
        nan = self.nan
        if nan.pattern is None and nan.mode in NAN_WORDS:
            nan = nan.mode
        elif nan.mode == "canonical" and isinstance(nan.pattern, int):
            nan = nan.pattern
        return {k: getattr(self, k) if k != "nan" else nan
                for k in _WORDS[:2] + ("exact",) + _WORDS[2:] + ("platform",)}

    def policies(self) -> Policy:
        """The policy the library's functions take (``policy=``)."""
        if self.platform is not None:
            raise ValueError("platform NaN rules are applied by expected()")
        return self.policy


def _field(pol: Policy, k: str):
    v = getattr(pol, k)
    return v.label if k == "rounding" else v


def make_options(opts, kw) -> Options:
    """``opts`` (an Options or None) with the keyword changes ``kw`` applied."""
    if opts is not None and not isinstance(opts, Options):
        raise TypeError(f"options must be a testfloat.Options, got {type(opts).__name__}")
    if opts is None:
        return Options(**kw)
    if kw:
        return opts.replace(**kw)
    return opts


