"""Numba kernels on integer bit patterns. Integer arithmetic only.

Conventions shared by every kernel:

* A format travels as four int64 scalars ``E, M, bias, kind`` (see
  `softfloat.formats.Format.params`); a policy as the tuple built by
  `softfloat.context.kernel_policy`. Nothing is read from globals, so numba's
  cache never freezes a format or a mode.
* A finite nonzero value in flight is ``(sign, exp, sig)`` meaning
  ``(-1)**sign * sig * 2**exp`` with ``0 < sig < 2**63``; bits below those
  kept may be *jammed* into bit 0 (sticky), which is exact for rounding as long
  as at least two bits lie between the rounding point and bit 0.
* ``round_pack`` in `core` is the one general rounding: it reads the rounding
  mode per element, detects tininess, raises underflow/overflow/inexact and
  packs. Its branch-free twin (`core.round_masks`, `increment_branchfree`,
  `addend_branchfree`) serves the fast paths, which take the mode apart once per
  chunk; tests/test_rule_owners.py lists every other reader of the mode.
"""
