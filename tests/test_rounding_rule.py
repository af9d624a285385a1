"""One rounding rule in two forms: `core.round_pack`'s increment (branchy, per
element) and its branch-free twin (`round_masks`, `increment_branchfree`,
`addend_branchfree`), which every branch-free fast path uses. Checked here
against each other and against exact rational rounding, on every mode, sign,
parity and remainder at several rounding points."""
from fractions import Fraction
import math

import numpy as np
from numba import njit

from softfloat import Rounding
from softfloat._kernels import codes
from softfloat._kernels.core import (_round_increment, addend_branchfree, increment_branchfree,
                                     round_masks)

MODES = [codes.RNE, codes.RNA, codes.RTZ, codes.RUP, codes.RDN, codes.RTO]


@njit(cache=False)
def _table(mode, sh):
    """Rows (sign, q, rem, branchy q', twin q', addend q') for every sign, q < 8
    and remainder at rounding point sh."""
    half = np.int64(1) << (sh - 1)
    n = 2 * 8 * (1 << sh)
    out = np.empty((n, 6), np.int64)
    m_rne, m_rna, m_up, m_dn, m_odd = round_masks(mode)
    k = 0
    for sign in range(2):
        s = np.int64(sign)
        for q in range(8):
            qq = np.int64(q)
            for rem in range(1 << sh):
                r = np.int64(rem)
                nz = np.int64(r != 0)
                if mode == 5:       # odd: round_pack sets the last bit (the twin: m_odd)
                    branchy = qq | nz
                else:
                    branchy = qq + _round_increment(mode, s, qq, r, half)
                twin = (qq | (m_odd & nz)) + increment_branchfree(s, qq, r, half, m_rne, m_rna,
                                                                  m_up, m_dn)
                x = (qq << sh) + r
                add = addend_branchfree(s, qq & 1, half, m_rne, m_rna, m_up, m_dn)
                addend = ((x + add) >> sh) | (m_odd & nz)
                out[k, 0] = s
                out[k, 1] = qq
                out[k, 2] = r
                out[k, 3] = branchy
                out[k, 4] = twin
                out[k, 5] = addend
                k += 1
    return out


def _exact(mode, sign, q, rem, sh):
    """q + rem / 2**sh rounded to an integer magnitude, by the mode's definition."""
    v = q + Fraction(rem, 1 << sh)
    lo, hi = math.floor(v), math.ceil(v)
    if lo == hi:
        return lo
    m = Rounding(mode)
    if m == Rounding.NEAREST_EVEN:
        return lo if v - lo < hi - v or (v - lo == hi - v and lo % 2 == 0) else hi
    if m == Rounding.NEAREST_AWAY:
        return lo if v - lo < hi - v else hi
    if m == Rounding.TOWARD_ZERO:
        return lo
    if m == Rounding.UPWARD:
        return hi if sign == 0 else lo
    if m == Rounding.DOWNWARD:
        return lo if sign == 0 else hi
    return lo if lo % 2 == 1 else hi          # odd


def test_two_forms_and_the_definition_agree():
    for mode in MODES:
        for sh in (1, 2, 3, 5):
            t = _table(np.int64(mode), np.int64(sh))
            assert np.array_equal(t[:, 3], t[:, 4]), (mode, sh)
            assert np.array_equal(t[:, 3], t[:, 5]), (mode, sh)
            want = [_exact(mode, int(s), int(q), int(r), sh) for s, q, r in t[:, :3]]
            assert np.array_equal(t[:, 3], want), (mode, sh)


def test_masks_name_the_modes():
    @njit(cache=False)
    def masks(m):
        return round_masks(m)
    assert [masks(np.int64(m)) for m in MODES + [codes.RSR]] == [
        (1, 0, 0, 0, 0), (0, 1, 0, 0, 0), (0, 0, 0, 0, 0), (0, 0, 1, 0, 0), (0, 0, 0, 1, 0),
        (0, 0, 0, 0, 1), (0, 0, 0, 0, 0)]


def test_kernel_codes_are_the_enums():
    import softfloat as sf
    from softfloat.formats import KIND_CODES
    assert [codes.RNE, codes.RNA, codes.RTZ, codes.RUP, codes.RDN, codes.RTO, codes.RSR] == \
        [int(m) for m in Rounding]
    assert [codes.F_INEXACT, codes.F_UNDERFLOW, codes.F_OVERFLOW, codes.F_INFINITE,
            codes.F_INVALID] == [int(sf.Flags[n]) for n in ("INEXACT", "UNDERFLOW", "OVERFLOW",
                                                            "INFINITE", "INVALID")]
    assert [codes.K_IEEE, codes.K_FN, codes.K_FNUZ, codes.K_FINITE, codes.K_FNU] == \
        [KIND_CODES[k] for k in ("ieee", "fn", "fnuz", "finite", "fnu")]
    # the policy words reach the kernels as these codes (context.kernel_policy)
    from softfloat.context import Context, kernel_policy, resolve
    for word, code, fmt in (("ieee", codes.OVF_IEEE, sf.FP16),
                            ("saturate", codes.OVF_SATURATE, sf.FP16),
                            ("nan", codes.OVF_NAN, sf.FP8_E4M3)):
        assert kernel_policy(resolve(overflow=word), fmt)[codes.P_OVF] == code
    for nan, code in (("propagate", codes.NAN_PROPAGATE), ("canonical", codes.NAN_CANONICAL),
                      (sf.specialize.NanRule("keep"), codes.NAN_KEEP)):
        assert sf.specialize.kernel_nan(nan, sf.FP16)[0] == code
    assert isinstance(Context().rounding, str)
