"""Block-scaled quantization kernels (softfloat.mx): the general kernel
(`quantize_chunk`, every case) and dequantization. The block scales are chosen
in `mx_scale.py`, the fast kernels' element rounding is in `mx_elem.py`, their
block loops in `mx_fast.py`, NVFP4's threshold kernel in `mx_nvfp4.py`.

Every element rounding of the general kernel (`quantize_chunk`) is one
`core.round_pack` of the exact quotient or product:
an input value V = (-1)**s * sig * 2**e (float32 or float64 bits, unpacked exactly)
divided by the block's divisor D = dsig * 2**dexp (a power of two for the MX
formats, dsig = 1; for NVFP4 dsig holds the product of the per-tensor fp32 scale's
and the e4m3 block scale's significands, < 2**28). Nothing is first rounded to a
host float, so there is no double rounding. The fast kernels (float32 input, 1-D
blocks; "Fast paths" in `mx_elem.py`) round every element by one helper,
`mx_elem.element`, on the branch-free twin of round_pack (`core.round_masks`, `core.addend_branchfree`).

Blocks: the input is viewed as (B, R, C) with blocks of (br, bc) elements over the
last two axes (br = 1 for 1-D blocks); edge blocks are partial. A chunk kernel
handles the blocks lo..hi (softfloat._parallel.run_chunks). Format parameters
travel as tuples: the element format's (E, M, bias, kind) or, for the fast
kernels, ``ef`` (`mx_elem.element`); the scale parameters ``sc`` (`quantize_chunk`).

numba ``inline="always"`` is kept only on the per-element helpers (`div_round`,
`round_element`, `mx_elem.element`): measured on 10^6 float32 values
(one thread, loaded 2-core machine, 5 interleaved runs), the general mxfp8 quantize
took 19-40 ms with them inlined against 42-54 ms without, while a fresh compile of the
kernels took 6-10 s either way (no measurable difference). The per-block scale helpers
run once per block: inlining them changed neither speed nor compile time measurably,
so they are plain calls. `element` is inlined so that its ``div`` and ``sr``
arguments, constants at each call site, fold away: each element loop compiles to
its own case. The other helpers of the fast kernels need no numba inlining: LLVM
inlines them and vectorises the element loops (checked in their assembly: AVX-512
zmm / AVX2 ymm loops). Per-tensor fp8 scaling has its kernels in fp8_scaling.py.
"""
import numpy as np
from numba import njit

from .core import (C_FINITE, K_FN, K_FNUZ, K_IEEE, P_SRBITS, clz64, is_stochastic, rand_bits,
                   round_pack, unpack)
from .mx_scale import _E4M3, _E8M0, _I0, mx_scale_exp
from .specialize import signed_nan

# element kinds handled here besides formats: MXINT8's two's complement integers
ELEM_FLOAT, ELEM_INT8 = 0, 1


@njit(cache=True, inline="always")
def div_round(sign, exp, sig, dsig, dexp, E, M, bias, kind, pol, r):
    """Round (-1)**sign * sig * 2**exp / (dsig * 2**dexp) into a format, exactly:
    the quotient of the leading-bit-62 dividend by dsig (< 2**28) keeps >= 34
    bits, and a nonzero remainder is jammed into bit 0 (round_pack needs only
    the sticky bit below its rounding point, at most 25 bits down)."""
    if dsig == 1:
        return round_pack(sign, exp - dexp, sig, E, M, bias, kind, pol, r)
    la = clz64(sig) - 1
    n = sig << la
    q = n // dsig
    if n - q * dsig != 0:
        q |= 1
    return round_pack(sign, exp - la - dexp, q, E, M, bias, kind, pol, r)


@njit(cache=True, inline="always")
def round_element(sign, exp, sig, dsig, dexp, elem, E, M, bias, kind, pol, r):
    """One finite nonzero element V / D into the element format: its code.
    MXINT8: round to an integer (via a pseudo format whose quantum is 1, as
    arith.int_magnitude), then clamp to +-127 (symmetric, as microxcaling)."""
    if elem == ELEM_INT8:
        bits, f = div_round(sign, exp, sig, dsig, dexp, 8, 30, -29, K_IEEE, pol, r)
        n = bits & ((np.int64(1) << 38) - 1)
        if n > 127:
            n = np.int64(127)
        return (-n if sign else n) & 0xFF
    bits, f = div_round(sign, exp, sig, dsig, dexp, E, M, bias, kind, pol, r)
    return bits


@njit(cache=True, nogil=True)
def quantize_chunk(lo, hi, x, B, R, C, br, bc, host, host32, codes, scales, elem, fmt, pol,
                   key, sc, scale_pol):
    """Blocks lo..hi: scale code per block, element codes. ``host``: (E, M, bias)
    of the input's float format (``host32``: float32); ``fmt``: the element
    format's (E, M, bias, kind) (MXINT8: the integer pseudo format of
    `round_element`), ``pol`` its kernel policy; ``sc``: the scale parameters
    (stype, rule, emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up;
    s_up is in ``scale_pol`` here).

    stype 0: E8M0 scales (MX); 1: e4m3 scales times the per-tensor scale
    ts_sig * 2**ts_exp (NVFP4), the e4m3 scale being amax / (max_elem * ts)
    rounded once by ``scale_pol`` (nearest-even or upward, saturating); a scale
    that rounds to 0 becomes 2**-9 (the smallest e4m3 subnormal)."""
    hE, hM, hbias = host
    E, M, bias, kind = fmt
    stype, rule, emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up = sc
    nbr = (R + br - 1) // br
    nbc = (C + bc - 1) // bc
    magmask = (np.int64(1) << (hE + hM)) - 1
    infb = ((np.int64(1) << hE) - 1) << hM
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    snan = (signed_nan(_I0, _E8M0[0], _E8M0[1], _E8M0[3]) if stype == 0 else
            signed_nan(_I0, _E4M3[0], _E4M3[1], _E4M3[3]))
    for k in range(lo, hi):
        b = k // (nbr * nbc)
        rem = k - b * nbr * nbc
        i = rem // nbc
        j = rem - i * nbc
        r0 = i * br
        r1 = min(R, r0 + br)
        c0 = j * bc
        c1 = min(C, c0 + bc)
        # pass 1: the largest magnitude (host-float magnitudes order like their bits)
        amax = _I0
        for rr in range(r0, r1):
            base = (b * R + rr) * C
            for cc in range(c0, c1):
                m = np.int64(x[base + cc]) & magmask
                if m > amax:
                    amax = m
        special = amax >= infb            # an infinity or a NaN in the block
        dsig = np.int64(1)
        dexp = _I0
        if stype == 0:
            if special:
                scode = snan
            else:
                if amax == 0:
                    e = np.int64(-127)
                else:
                    cls, s, ae, asg = unpack(amax, hE, hM, hbias, K_IEEE, False)
                    e = mx_scale_exp(rule, ae, asg, emax_elem, prec_elem, maxe_exp, maxe_sig,
                                     host32)
                if e > 127:
                    scode = snan              # the scale overflows E8M0: NaN
                else:
                    if e < -127:
                        e = np.int64(-127)
                    scode = e + 127
                    dexp = e
                    if elem == ELEM_INT8:
                        dexp = e - 6          # MXINT8 elements carry an implicit 2**-6
        else:
            if special:
                scode = snan                  # e4m3 NaN
            else:
                if amax == 0:
                    sb = np.int64(1)
                else:
                    cls, s, ae, asg = unpack(amax, hE, hM, hbias, K_IEEE, False)
                    # amax / (max_elem * ts): max_elem * ts = maxe_sig * ts_sig * 2**(..)
                    sb, f = div_round(np.int64(0), ae, asg, maxe_sig * ts_sig, maxe_exp + ts_exp,
                                      4, 3, 7, K_FN, scale_pol, _I0)
                    if sb == 0:
                        sb = np.int64(1)      # clamp to 2**-9
                scode = sb
                cls, s, se, ssg = unpack(sb, 4, 3, 7, K_FN, False)
                dsig = ssg * ts_sig
                dexp = se + ts_exp
                # normalise dsig: drop trailing zeros (keeps the division exact and cheap)
                while dsig > 1 and (dsig & 1) == 0:
                    dsig >>= 1
                    dexp += 1
        scales[k] = scode
        isnan_scale = scode == snan
        # pass 2: the elements
        for rr in range(r0, r1):
            base = (b * R + rr) * C
            for cc in range(c0, c1):
                idx = base + cc
                if isnan_scale:
                    codes[idx] = 0
                    continue
                cls, s, ex, sg = unpack(x[idx], hE, hM, hbias, K_IEEE, False)
                if cls == C_FINITE:
                    rb = rand_bits(key, idx, nb) if sr else _I0
                    codes[idx] = round_element(s, ex, sg, dsig, dexp, elem, E, M, bias, kind,
                                               pol, rb)
                elif elem == ELEM_INT8 or kind == K_FNUZ:
                    codes[idx] = 0            # no negative zero (int8, fnuz)
                else:
                    codes[idx] = s << (E + M)
    return 0


@njit(cache=True, nogil=True)
def dequantize_chunk(lo, hi, codes, scales, B, R, C, br, bc, lut, svals, out):
    """out = lut[code] * svals[scale code] over blocks lo..hi (exact products)."""
    nbr = (R + br - 1) // br
    nbc = (C + bc - 1) // bc
    for k in range(lo, hi):
        b = k // (nbr * nbc)
        rem = k - b * nbr * nbc
        i = rem // nbc
        j = rem - i * nbc
        r0 = i * br
        r1 = min(R, r0 + br)
        c0 = j * bc
        c1 = min(C, c0 + bc)
        f = svals[scales[k]]
        for rr in range(r0, r1):
            base = (b * R + rr) * C
            for cc in range(c0, c1):
                out[base + cc] = lut[codes[base + cc]] * f
    return 0
