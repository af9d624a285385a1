"""Fast path for add, sub, mul and div of IEEE-kind formats in the deterministic
modes: two passes per chunk.

Pass 1 handles, without branches (so that LLVM can vectorize it), the common
case: both operands normal and finite, the result normal, finite and nonzero.
It writes the result and marks every other element "slow". Pass 2 recomputes
the marked elements with the general kernels of `arith` (specials, subnormals,
exact zeros, overflow, underflow, flushing, NaN policy). Results and flags are
those of the general path: the fast path only takes cases where no flag but
inexact can arise, and rounds the same exact value (jammed the same way) by the
same rule as `core.round_pack` (tests/test_arith.py compares both with an oracle).
"""
import numpy as np
from numba import njit

from .._parallel import run_chunks

from .arith import OP_ADD, OP_DIV, OP_MUL, OP_SUB, _I0, add_one, div_one, mul_one
from .core import P_MODE, clz64, increment_branchfree, round_masks


@njit(cache=True, inline="always")
def _round_fast(sign, s, sh, m_rne, m_rna, m_up, m_dn, m_odd):
    """Round the magnitude s (> 0) at bit sh (1 <= sh <= 62): (q, inexact), branch-free."""
    q = s >> sh
    rem = s & ((np.int64(1) << sh) - 1)
    half = np.int64(1) << (sh - 1)
    nz = np.int64(rem != 0)
    inc = increment_branchfree(sign, q, rem, half, m_rne, m_rna, m_up, m_dn)
    q = (q + inc) | (m_odd & nz)
    return q, nz


@njit(cache=True, inline="always")
def binary_normal_branchfree(op, x, y, E, M, bias, m_rne, m_rna, m_up, m_dn, m_odd):
    """(bits, inexact, slow) of one element; slow = 1 where pass 2 must redo it."""
    one = np.int64(1)
    x = np.int64(x)
    y = np.int64(y)
    S = one << (E + M)
    fm = (one << M) - 1
    emaxf = (one << E) - 2                       # largest normal exponent field
    sx = x >> (E + M)
    sy = (y >> (E + M)) ^ np.int64(op == OP_SUB)
    ex = (x >> M) & (emaxf + 1)
    ey = (y >> M) & (emaxf + 1)
    slow = np.int64((ex == 0) | (ey == 0) | (ex > emaxf) | (ey > emaxf))
    mx = (x & fm) | (one << M)
    my = (y & fm) | (one << M)
    if op == OP_ADD or op == OP_SUB:
        magx = x & (S - 1)
        magy = y & (S - 1)
        sw = np.int64(magx < magy)
        # (h, l): larger and smaller magnitude, without branches
        eh = ex ^ ((ex ^ ey) & -sw)
        el = ey ^ ((ex ^ ey) & -sw)
        mh = mx ^ ((mx ^ my) & -sw)
        ml = my ^ ((mx ^ my) & -sw)
        sign = sx ^ ((sx ^ sy) & -sw)
        sub = sx ^ sy
        hs = mh << (60 - M)                      # leading bit at 60
        ls = ml << (60 - M)
        d = eh - el
        d = d - ((d - 62) & -np.int64(d > 62))   # min(d, 62)
        lsh = (ls >> d) | np.int64((ls & ((one << d) - 1)) != 0)
        s = hs + lsh - ((lsh << 1) & -sub)       # hs - lsh when subtracting
        slow |= np.int64(s == 0)
        s = s | np.int64(s == 0)                 # keep clz defined; the element is slow
        lz = clz64(s)
        s = s << (lz - 1)                        # leading bit at 62
        e = eh + (3 - lz)                        # biased exponent of the leading bit
        q, inx = _round_fast(sign, s, 62 - M, m_rne, m_rna, m_up, m_dn, m_odd)
    elif op == OP_MUL:
        sign = sx ^ (y >> (E + M))
        p = mx * my                              # in [2**2M, 2**(2M+2)): exact
        top = p >> (2 * M + 1)
        e = ex + ey - bias + top
        q, inx = _round_fast(sign, p, M + top, m_rne, m_rna, m_up, m_dn, m_odd)
    else:
        sign = sx ^ (y >> (E + M))
        n = mx << (62 - M)                       # quotient in (2**(61-M), 2**(63-M))
        qq = n // my
        qq = qq | np.int64(n - qq * my != 0)     # a nonzero remainder is jammed
        top = qq >> (62 - M)                     # 1 when mx >= my: leading bit 61-M+top
        e = ex - ey + bias - 1 + top
        q, inx = _round_fast(sign, qq, 61 - 2 * M + top, m_rne, m_rna, m_up, m_dn, m_odd)
    mag = ((e - 1) << M) + q                     # a carry moves into the exponent
    slow |= np.int64(e < 1) | np.int64(mag > (((emaxf + 1) << M) - 1))
    return (sign << (E + M)) | (mag & (S - 1)), inx, slow


@njit(cache=True, inline="always")
def _pass1(op, a, b, out, scratch, lo, hi, E, M, bias, m_rne, m_rna, m_up, m_dn, m_odd):
    """One loop of the branch-free pass for a fixed op: scratch[i] = inexact | slow << 7.
    Returns the OR of the inexact flags of the fast elements."""
    fa = _I0
    # slices indexed from 0: no negative-index wraparound, so plain vector loads
    a = a[lo:hi]
    b = b[lo:hi]
    out = out[lo:hi]
    scratch = scratch[lo:hi]
    for i in range(hi - lo):
        v, f, sl = binary_normal_branchfree(op, a[i], b[i], E, M, bias, m_rne, m_rna, m_up, m_dn, m_odd)
        out[i] = v
        scratch[i] = f | (sl << 7)
        fa |= f & (1 - sl)
    return fa


# One two-pass loop per operation family, so that the first call of an operation
# compiles its own pass 2 (the family's general element function, arith.add_one,
# ...) only. Pass 1 is `_pass1` with the operation as a constant (one loop each).
@njit(cache=True, nogil=True)
def addsub_fast_chunk(lo, hi, op, a, b, out, scratch, want_flags, E, M, bias, kind, pol):
    """Elements lo..hi of `binary_fast_array` for OP_ADD/OP_SUB; returns the OR of
    their flags."""
    m_rne, m_rna, m_up, m_dn, m_odd = round_masks(pol[P_MODE])
    if op == OP_ADD:
        negb = _I0
        fa = _pass1(OP_ADD, a, b, out, scratch, lo, hi, E, M, bias, m_rne, m_rna, m_up,
                    m_dn, m_odd)
    else:
        negb = np.int64(1)
        fa = _pass1(OP_SUB, a, b, out, scratch, lo, hi, E, M, bias, m_rne, m_rna, m_up,
                    m_dn, m_odd)
    for i in range(lo, hi):
        if scratch[i] >= 128:
            v, f = add_one(negb, np.int64(a[i]), np.int64(b[i]), E, M, bias, kind, pol, _I0)
            out[i] = v
            scratch[i] = f
            fa |= f
    return fa


@njit(cache=True, nogil=True)
def mul_fast_chunk(lo, hi, op, a, b, out, scratch, want_flags, E, M, bias, kind, pol):
    """Elements lo..hi of `binary_fast_array` for OP_MUL; returns the OR of their flags."""
    m_rne, m_rna, m_up, m_dn, m_odd = round_masks(pol[P_MODE])
    fa = _pass1(OP_MUL, a, b, out, scratch, lo, hi, E, M, bias, m_rne, m_rna, m_up, m_dn,
                m_odd)
    for i in range(lo, hi):
        if scratch[i] >= 128:
            v, f = mul_one(np.int64(a[i]), np.int64(b[i]), E, M, bias, kind, pol, _I0)
            out[i] = v
            scratch[i] = f
            fa |= f
    return fa


@njit(cache=True, nogil=True)
def div_fast_chunk(lo, hi, op, a, b, out, scratch, want_flags, E, M, bias, kind, pol):
    """Elements lo..hi of `binary_fast_array` for OP_DIV; returns the OR of their flags."""
    m_rne, m_rna, m_up, m_dn, m_odd = round_masks(pol[P_MODE])
    fa = _pass1(OP_DIV, a, b, out, scratch, lo, hi, E, M, bias, m_rne, m_rna, m_up, m_dn,
                m_odd)
    for i in range(lo, hi):
        if scratch[i] >= 128:
            v, f = div_one(np.int64(a[i]), np.int64(b[i]), E, M, bias, kind, pol, _I0)
            out[i] = v
            scratch[i] = f
            fa |= f
    return fa


_FAST_CHUNK = {OP_ADD: addsub_fast_chunk, OP_SUB: addsub_fast_chunk, OP_MUL: mul_fast_chunk,
               OP_DIV: div_fast_chunk}


def binary_fast_array(op, a, b, out, scratch, want_flags, E, M, bias, kind, pol, chunk=None):
    """out = op(a, b) for OP_ADD/SUB/MUL/DIV, IEEE kind, deterministic modes;
    a, b: full-size flat arrays. scratch (uint8, size of out) ends up holding
    the per-element flags (pass the flags array when they are wanted).
    Runs the operation's two-pass chunk kernel (`addsub_fast_chunk`,
    `mul_fast_chunk`, `div_fast_chunk`) in parallel chunks; returns the OR of the flags."""
    return run_chunks(_FAST_CHUNK[op], out.size, op, a, b, out, scratch, want_flags, E, M,
                      bias, kind, pol)
