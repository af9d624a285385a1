"""Hardware-pace conversions float32/float64 -> fp16 and -> bf16, in every
deterministic mode, without flags, under the default policies (no ftz/daz,
IEEE overflow). softfloat.conversions dispatches here and falls back to the
integer kernels of `convert` for everything else.

Each chunk kernel returns -1 when the calling thread's MXCSR has FTZ or DAZ set
(nothing written; the caller reruns the whole array on the integer path; the
fp16 kernels also for a range shorter than one block), else the OR of the flags
of the chunk's non-NaN elements, | 256 when it holds a NaN input. NaN elements
are written with arbitrary bits here and recomputed by the caller with the
general kernel (`convert.convert_chunk`), so the NaN rules have a single owner.
The flags of a float64 x are those of y = RTO32(x) (below): y is inexact in
fp16 iff x is (an inexact RTO32 result has its last bit set, which no fp16
value has), and y lies on the same side of each float32 threshold as x (RTO32
is monotone, and a threshold with its last bit set stands for "beyond the
float32 below it").

Notation: RN16 / RNx16 = rounding to fp16 in mode x; RTO32 = rounding to
float32 by round-to-odd (truncate, then set the last bit if inexact).

fp16, every deterministic mode (`fp16_rne_chunk`, `fp16_chunk`): 16 elements
per `hw.cvt16_block` call, which converts with F16C's `vcvtps2ph` and its
rounding immediate (nearest-even, toward zero, upward, downward; odd and
nearest-away derived) and computes the flags; the proofs are in its
docstring. Inexact is back != x, back the exact float32 value of the result;
the overflow and tininess tests use signed float32 thresholds
(`signed_thresholds`). A length that is no multiple of 16 ends with a block that
overlaps the one before (the elements in both are converted twice, alike);
arrays shorter than 16 are zero-padded by the dispatch (0 converts exactly and
raises nothing). float64 sources go through RTO32 inside the block (below).

float64 -> fp16 / bf16: y = RTO32(x) (see `_rto32`), then as from float32. Round
to odd with a precision p' >= p + 2 followed by any rounding to p bits is the
correct rounding of x (Boldo & Melquiond 2008, "Emulation of FMA and correctly
rounded sums: proved algorithms using rounding to odd"): float32 has p' = 24,
fp16 p = 11 and bf16 p = 8. The range conditions hold too: every fp16 value and
midpoint is a float32 normal, and an x beyond float32's range becomes FLT_MAX
(odd; it rounds to fp16 infinity or max, as x does, since it lies beyond
65520). For bf16, whose subnormals are float32 subnormals, RTO32 at the float32
subnormal spacing 2^-149 still keeps 16 bits below bf16's 2^-133 spacing, so the
same argument holds; values below 2^-149 become 0 or 2^-149 with their sign,
and both sides round alike (to 0, or to bf16's smallest subnormal upward).
"""
import numpy as np
from numba import njit

from .codes import RDN as _RDN, RNA as _RNA, RNE as _RNE, RTZ as _RTZ, RUP as _RUP
from .core import addend_branchfree, round_masks
from .hw import BLOCK, cvt16_block, f32_bits, f64_bits, flushes

_1 = np.int32(1)
_0 = np.int32(0)


_env_bad = flushes        # MXCSR has FTZ or DAZ set (hw.flushes)


@njit(cache=True)
def _rto32(x):
    """float64 x (not NaN) -> int32 bits of RTO32(x), branch-free.

    y = float32(x) rounds to nearest (MXCSR: nearest-even, no FTZ checked by the
    caller), so y is one of the two float32 neighbours of x (or x). Of two
    consecutive encodings exactly one is odd; if y is inexact and even, the
    other neighbour is the encoding one step toward x: magnitude + 1 when
    |y| < |x|, - 1 when |y| > |x| (y = inf for x > FLT_MAX goes to FLT_MAX; y = 0
    for a tiny x to the smallest subnormal, the sign kept since float32(x)
    keeps it)."""
    y = np.float32(x)
    yb = f32_bits(y)
    ym = f64_bits(np.float64(y)) & np.int64(0x7FFFFFFFFFFFFFFF)
    xm = f64_bits(x) & np.int64(0x7FFFFFFFFFFFFFFF)
    lt = np.int32(ym < xm)
    gt = np.int32(ym > xm)
    even = _1 - (yb & _1)
    return yb + (lt - gt) * even


@njit(cache=True, inline="always")
def _masks32(mode):
    """`core.round_masks` as int32 lanes."""
    m_rne, m_rna, m_up, m_dn, m_odd = round_masks(mode)
    return np.int32(m_rne), np.int32(m_rna), np.int32(m_up), np.int32(m_dn), np.int32(m_odd)


@njit(cache=True, inline="always")
def _bf16_from_bits(u, m_rne, m_rna, m_odd, m_up, m_dn, t_on, t_oa, t_tn, t_ta):
    """(bf16 bits, flags) of float32 bits u (int32, not NaN) in any deterministic mode:
    bf16 is float32 with 16 fraction bits dropped, same exponent range, so the
    magnitude rounds as an integer: add (half - 1 + lowest kept bit) for
    nearest-even, half for nearest-away, (2^16 - 1) away from zero, nothing
    toward zero; a carry moves into the exponent and from the largest finite
    value to infinity, which is the IEEE overflow result in those modes; odd
    truncates and sets the last bit when any dropped bit is set (so overflow
    stays at the largest finite value)."""
    sign = (u >> 31) & _1
    m = u & np.int32(0x7FFFFFFF)
    lo = m & np.int32(0xFFFF)
    away = (m_up & (_1 - sign)) | (m_dn & sign)
    add = addend_branchfree(sign, (m >> 16) & _1, np.int32(0x8000), m_rne, m_rna, m_up, m_dn)
    r = ((m + add) >> 16) | (m_odd & np.int32(lo != 0))
    return (sign << 15) | r, _flags(m, np.int32(lo != 0), away, t_on, t_oa, t_tn, t_ta)


@njit(cache=True, inline="always")
def _flags(ux, inx, away, t_on, t_oa, t_tn, t_ta):
    """Flags of one conversion from the source magnitude bits ux (float32, not NaN):
    inexact; overflow (+ inexact) when ux >= the mode's overflow threshold and x
    is finite; underflow when inexact and ux < the tininess threshold. The
    thresholds (float32 magnitudes, see `thresholds`) depend on the mode and, in
    the directed modes, on whether the element rounds away from zero (away)."""
    to = t_oa if away != 0 else t_on
    tt = t_ta if away != 0 else t_tn
    ovf = np.int32(ux >= to) & np.int32(ux < np.int32(0x7F800000))
    unf = np.int32(ux < tt) & inx
    keep = -np.int32(ux <= np.int32(0x7F800000))      # all ones unless x is a NaN
    return (inx | (unf << 1) | (ovf << 2)) & keep


def thresholds(dst_params, mode):
    """(t_on, t_oa, t_tn, t_ta): float32 magnitude encodings such that, with
    tininess detected after rounding (the default), a finite x overflows iff
    |x| >= t_o and is tiny iff |x| < t_t; *_n for elements rounding toward zero
    or to nearest, *_a for elements rounding away from zero (upward for +,
    downward for -). With p bits of precision, emin and max finite value:
    nearest: overflow from the midpoint max + ulp/2, tiny below the midpoint
    2^emin - 2^(emin-p-1) (at it, nearest rounds up to 2^emin: its even
    neighbour); toward zero and odd (whose tininess is tested before rounding,
    as core.round_pack does): overflow from 2^(emax+1), tiny below 2^emin; away:
    overflow above max, tiny at or below 2^emin - 2^(emin-p)."""
    E, M, bias, _ = dst_params
    emin = 1 - bias
    emax = bias
    p = M + 1
    fmax = (2.0 - 2.0 ** -M) * 2.0 ** emax

    def b(v):
        assert abs(v) < 2.0 ** 128
        return int(np.float32(v).view(np.int32))

    top = b(2.0 ** (emax + 1)) if emax + 1 < 128 else 0x7F800000
    if mode in (_RNE, _RNA):
        t_o = b(fmax + 2.0 ** (emax - p))
        t_t = b(2.0 ** emin - 2.0 ** (emin - p - 1))
        return t_o, t_o, t_t, t_t
    t_on, t_tn = top, b(2.0 ** emin)
    if mode in (_RUP, _RDN):
        return t_on, b(fmax) + 1, t_tn, b(2.0 ** emin - 2.0 ** (emin - p)) + 1
    return t_on, t_on, t_tn, t_tn


# --------------------------------------------------------------------------
# chunk kernels: (lo, hi, src, out, mode, thresholds) -> -1 (MXCSR set), else
# the OR of the flags of the non-NaN elements | 256 when a NaN was seen
# --------------------------------------------------------------------------
def signed_thresholds(mode, t_on, t_oa, t_tn, t_ta):
    """(po, no, pt, nt): float32 thresholds for signed x from `thresholds`'
    magnitude encodings: a finite x overflows iff x >= po or x <= no and is tiny
    iff nt < x < pt. Positive x round away from zero upward, negative x
    downward; in the other modes the *_a and *_n thresholds are equal."""
    f = lambda t: np.uint32(t).view(np.float32)  # noqa: E731
    po = f(t_oa if mode == _RUP else t_on)
    no = -f(t_oa if mode == _RDN else t_on)
    pt = f(t_ta if mode == _RUP else t_tn)
    nt = -f(t_ta if mode == _RDN else t_tn)
    return po, no, pt, nt


@njit(cache=True)
def _pack(acc):
    """Flags (| 256 for a NaN input) from `cvt16_block`'s OR of lane masks."""
    m = np.int64(0xFFFF)
    return (np.int64(1 if (acc & m) != 0 else 0) | np.int64(2 if ((acc >> 16) & m) != 0 else 0)
            | np.int64(5 if ((acc >> 32) & m) != 0 else 0)
            | np.int64(256 if ((acc >> 48) & m) != 0 else 0))


# --------------------------------------------------------------------------
# chunk kernels: (lo, hi, src, out, mode, thresholds) -> -1 (MXCSR set), else
# the OR of the flags of the non-NaN elements | 256 when a NaN was seen
# --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def fp16_rne_chunk(lo, hi, src, out, mode, po, no, pt, nt):
    """src float32 or float64 (C-contiguous), out uint16, nearest-even (mode is
    ignored); thresholds from `signed_thresholds` (float32); hi - lo >= BLOCK
    (else -1: the dispatch pads shorter arrays). The first kernel most programs
    compile, kept to one loop. Needs `hw.HAVE_F16C_AVX`."""
    n = hi - lo
    if n < BLOCK or _env_bad():
        return -1
    src = src[lo:hi]
    out = out[lo:hi]
    acc = np.int64(0)
    for j in range(0, n - BLOCK, BLOCK):
        acc |= cvt16_block(src, out, j, 0, po, no, pt, nt)
    # the last 16 elements (overlapping the block before when 16 does not divide
    # n: those elements are converted again, to the same bits and flags)
    acc |= cvt16_block(src, out, n - BLOCK, 0, po, no, pt, nt)
    return _pack(acc)


@njit(cache=True, nogil=True)
def fp16_chunk(lo, hi, src, out, mode, po, no, pt, nt):
    """src float32 or float64 (C-contiguous), out uint16; mode nearest-away,
    toward zero, upward, downward or odd; otherwise as `fp16_rne_chunk`.
    (cvt16_block's mode must be a literal: one loop per mode.)"""
    n = hi - lo
    if n < BLOCK or _env_bad():
        return -1
    src = src[lo:hi]
    out = out[lo:hi]
    acc = np.int64(0)
    last = n - BLOCK
    if mode == _RNA:
        for j in range(0, last, BLOCK):
            acc |= cvt16_block(src, out, j, 1, po, no, pt, nt)
        acc |= cvt16_block(src, out, last, 1, po, no, pt, nt)
    elif mode == _RTZ:
        for j in range(0, last, BLOCK):
            acc |= cvt16_block(src, out, j, 2, po, no, pt, nt)
        acc |= cvt16_block(src, out, last, 2, po, no, pt, nt)
    elif mode == _RUP:
        for j in range(0, last, BLOCK):
            acc |= cvt16_block(src, out, j, 3, po, no, pt, nt)
        acc |= cvt16_block(src, out, last, 3, po, no, pt, nt)
    elif mode == _RDN:
        for j in range(0, last, BLOCK):
            acc |= cvt16_block(src, out, j, 4, po, no, pt, nt)
        acc |= cvt16_block(src, out, last, 4, po, no, pt, nt)
    else:
        for j in range(0, last, BLOCK):
            acc |= cvt16_block(src, out, j, 5, po, no, pt, nt)
        acc |= cvt16_block(src, out, last, 5, po, no, pt, nt)
    return _pack(acc)


@njit(cache=True, nogil=True)
def f32_bf16_chunk(lo, hi, src, out, mode, t_on, t_oa, t_tn, t_ta):
    """src uint32 (float32 bits), out uint16. Integer only: no MXCSR check."""
    src = src[lo:hi]
    out = out[lo:hi]
    m_rne, m_rna, m_up, m_dn, m_odd = _masks32(mode)
    nan = False
    fl = _0
    if mode == _RNE:
        for i in range(hi - lo):
            u = np.int32(src[i])
            h, f = _bf16_from_bits(u, _1, _0, _0, _0, _0, t_on, t_oa, t_tn, t_ta)
            out[i] = h
            fl |= f
            nan |= (u & np.int32(0x7FFFFFFF)) > np.int32(0x7F800000)
    else:
        for i in range(hi - lo):
            u = np.int32(src[i])
            h, f = _bf16_from_bits(u, m_rne, m_rna, m_odd, m_up, m_dn, t_on, t_oa, t_tn, t_ta)
            out[i] = h
            fl |= f
            nan |= (u & np.int32(0x7FFFFFFF)) > np.int32(0x7F800000)
    return np.int64(fl) | (256 if nan else 0)


@njit(cache=True, nogil=True)
def f64_bf16_chunk(lo, hi, src, out, mode, t_on, t_oa, t_tn, t_ta):
    """src float64, out uint16."""
    if _env_bad():
        return -1
    src = src[lo:hi]        # indices from 0: LLVM drops numba's negative-index
    out = out[lo:hi]        # wraparound and vectorizes with plain loads (30x)
    m_rne, m_rna, m_up, m_dn, m_odd = _masks32(mode)
    nan = False
    fl = _0
    for i in range(hi - lo):
        x = src[i]
        h, f = _bf16_from_bits(_rto32(x), m_rne, m_rna, m_odd, m_up, m_dn,
                               t_on, t_oa, t_tn, t_ta)
        out[i] = h
        # 2^128 (the overflow threshold toward zero and odd) is no float32: every
        # x in (FLT_MAX, inf) has RTO32(x) = FLT_MAX, so test x itself
        ax = abs(x)
        fl |= f | (np.int32((ax >= 2.0 ** 128) & (ax < np.inf)) * np.int32(5))
        nan |= x != x
    return np.int64(fl) | (256 if nan else 0)
