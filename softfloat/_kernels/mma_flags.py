"""The exact A B + C behind the inexact and underflow flags of the matrix
units (``softfloat.mma.mma(..., return_flags=True)``): every product and c
added exactly in 32-bit limbs and compared with the result."""
import math

import numpy as np
from numba import njit

from .jit import helper
from .mma_decode import out_pos


@helper
def _acc_add(acc, mag, neg, p):
    """acc += (-1)**neg * mag * 2**p (0 <= mag < 2**62, p >= 0: bit position
    above the accumulator's base); limbs of 32 bits, carries left for later."""
    idx = p >> 5
    off = p & 31
    low = 32 - off
    part0 = (mag & ((np.int64(1) << low) - 1)) << off
    rest = mag >> low
    s = np.int64(-1) if neg else np.int64(1)
    acc[idx] += s * part0
    acc[idx + 1] += s * (rest & np.int64(0xFFFFFFFF))
    acc[idx + 2] += s * (rest >> 32)


@helper
def _acc_norm(acc, nl):
    """Propagate the carries: limbs in [0, 2**32); returns the final carry (0 for
    a value >= 0, -1 for a negative one, in two's complement over the limbs)."""
    carry = np.int64(0)
    for i in range(nl):
        v = acc[i] + carry
        acc[i] = v & np.int64(0xFFFFFFFF)
        carry = v >> 32
    return carry


@helper
def _acc_below(acc, nl, t):
    """Whether the (normalised, non-negative) value is below 2**t (t a bit
    position, may be negative or beyond the limbs)."""
    if t <= 0:
        for i in range(nl):
            if acc[i] != 0:
                return False
        return True
    li = t >> 5
    for i in range(li + 1, nl):
        if acc[i] != 0:
            return False
    if li < nl and (acc[li] >> (t & 31)) != 0:
        return False
    return True


@helper
def _sig53(x):
    """(|x| as a 53-bit integer, exponent, sign) with |x| = sig * 2**e, x finite."""
    fr, ex = math.frexp(abs(x))
    return np.int64(fr * 9007199254740992.0), np.int64(ex) - 53, x < 0


@njit(cache=True, nogil=True)
def exact_flags_chunk(lo, hi, Av, Bv, m, n, K, Cv, has_c, Dv, base, nl, temin, fl):
    """Inexact (1) and underflow (2) of outputs [lo, hi) whose operands are all
    finite (the others are skipped): D (float64 values) against the exact
    V = sum_k a_k b_k + c, accumulated in 32-bit limbs from 2**base: inexact when
    D != V (an infinite D included), underflow when inexact and
    0 < |V| < 2**temin. Av (nb * m, K), Bv (nb * n, K) (block scales already
    applied), Cv, Dv, fl (nb * m * n). Each a (and b) is split into 26- and
    27-bit halves so that every partial product is below 2**54."""
    acc = np.zeros(nl + 3, np.int64)
    for idx in range(lo, hi):
        bt, i, j, arow, brow = out_pos(idx, m, n, K)
        fin = True
        for t in range(K):
            if not (np.isfinite(Av[arow + t]) and np.isfinite(Bv[brow + t])):
                fin = False
                break
        c = Cv[idx] if has_c else 0.0
        if not fin or not np.isfinite(c):
            continue
        d = Dv[idx]
        if not np.isfinite(d):
            fl[idx] |= 1
            continue
        for q in range(nl + 3):
            acc[q] = 0
        for t in range(K):
            x = Av[arow + t]
            y = Bv[brow + t]
            if x == 0.0 or y == 0.0:
                continue
            sx, ex, nx = _sig53(x)
            sy, ey, ny = _sig53(y)
            neg = nx != ny
            xh = sx >> 27
            xl = sx & ((np.int64(1) << 27) - 1)
            yh = sy >> 27
            yl = sy & ((np.int64(1) << 27) - 1)
            p = ex + ey - base
            _acc_add(acc, xl * yl, neg, p)
            _acc_add(acc, xh * yl, neg, p + 27)
            _acc_add(acc, xl * yh, neg, p + 27)
            _acc_add(acc, xh * yh, neg, p + 54)
        if c != 0.0:
            sc, ec, nc = _sig53(c)
            _acc_add(acc, sc, nc, ec - base)
        carry = _acc_norm(acc, nl + 3)
        zero = carry == 0
        if zero:
            for q in range(nl + 3):
                if acc[q] != 0:
                    zero = False
                    break
        tiny = False
        if not zero:
            if carry < 0:                  # |V|: the two's complement negated
                cy = np.int64(0)
                for q in range(nl + 3):
                    v = -acc[q] + cy
                    acc[q] = v & np.int64(0xFFFFFFFF)
                    cy = v >> 32
                tiny = _acc_below(acc, nl + 3, temin - base)
                cy = np.int64(0)
                for q in range(nl + 3):    # back to V
                    v = -acc[q] + cy
                    acc[q] = v & np.int64(0xFFFFFFFF)
                    cy = v >> 32
            else:
                tiny = _acc_below(acc, nl + 3, temin - base)
        if d != 0.0:
            sd, ed, nd = _sig53(d)
            _acc_add(acc, sd, not nd, ed - base)
        carry2 = _acc_norm(acc, nl + 3)
        exact = carry + carry2 == 0
        if exact:
            for q in range(nl + 3):
                if acc[q] != 0:
                    exact = False
                    break
        if not exact:
            fl[idx] |= 1
            if tiny and not zero:
                fl[idx] |= 2
    return 0
