"""Array loops whose random bits are an operand: conversions, + - * / fma sqrt.

Each loop is the general loop of convert.py / arith.py with one change: the
random integer of element i is ``rb[i]`` (``have_rb``) or, without it, the
seeded stream's `core.rand_bits(key, i, N)` (as the general loops draw it).
The rounding itself is round_pack's (the scheme is the policy's mode code).
softfloat.stochastic validates, allocates and calls these.
"""
import numpy as np
from numba import njit

from .arith import (OP_ADD, OP_DIV, OP_MUL, OP_SUB, add_one, div_one, finish, fma_pre, mul_one,
                    sqrt_pre)
from .codes import C_ZERO, P_DAZ, P_SRBITS
from .convert import round_value
from .core import rand_bits, unpack, unpack_in_flight

_I0 = np.int64(0)
_CZ = np.int64(C_ZERO)


@njit(cache=True, nogil=True)
def convert_rb_chunk(lo, hi, src, rb, have_rb, out, flg, want_flags, sE, sM, sb, sk,
                     dE, dM, db, dk, pol, key):
    """out[i] = src[i] (an encoding of the source format) rounded into the target."""
    nb = pol[P_SRBITS]
    a = 0
    for i in range(lo, hi):
        cls, sign, exp, sig = unpack_in_flight(src[i], sE, sM, sb, sk, pol[P_DAZ])
        r = np.int64(rb[i]) if have_rb else rand_bits(key, i, nb)
        b, f = round_value(cls, sign, exp, sig, dE, dM, db, dk, pol, r)
        out[i] = b
        if want_flags:
            flg[i] = f
        a |= f
    return a


@njit(cache=True, nogil=True)
def binary_rb_chunk(lo, hi, op, a, b, ma, mb, rb, have_rb, out, flg, want_flags,
                    E, M, bias, kind, pol, key):
    """out[i] = a[i & ma] op b[i & mb] for OP_ADD, OP_SUB, OP_MUL, OP_DIV."""
    nb = pol[P_SRBITS]
    fa = 0
    for i in range(lo, hi):
        r = np.int64(rb[i]) if have_rb else rand_bits(key, i, nb)
        x = np.int64(a[i & ma])
        y = np.int64(b[i & mb])
        if op == OP_MUL:
            v, f = mul_one(x, y, E, M, bias, kind, pol, r)
        elif op == OP_DIV:
            v, f = div_one(x, y, E, M, bias, kind, pol, r)
        else:
            v, f = add_one(np.int64(1) if op == OP_SUB else _I0, x, y, E, M, bias, kind, pol, r)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


@njit(cache=True, nogil=True)
def fma_rb_chunk(lo, hi, a, b, c, ma, mb, mc, rb, have_rb, out, flg, want_flags,
                 E, M, bias, kind, pol, key):
    """out[i] = fma(a[i & ma], b[i & mb], c[i & mc])."""
    nb = pol[P_SRBITS]
    daz = pol[P_DAZ]
    fa = 0
    for i in range(lo, hi):
        r = np.int64(rb[i]) if have_rb else rand_bits(key, i, nb)
        ca, sa, ea, xa = unpack(np.int64(a[i & ma]), E, M, bias, kind, daz)
        cb, sb, eb, xb = unpack(np.int64(b[i & mb]), E, M, bias, kind, daz)
        cc, sc, ec, xc = unpack(np.int64(c[i & mc]), E, M, bias, kind, daz)
        k, s, e, m, fx = fma_pre(ca, sa, ea, xa, cb, sb, eb, xb, cc, sc, ec, xc)
        v, f = finish(k, s, e, m, fx, ca, sa, xa, M, cb, sb, xb, M, cc, sc, xc, M,
                      E, M, bias, kind, pol, r)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


@njit(cache=True, nogil=True)
def sqrt_rb_chunk(lo, hi, a, rb, have_rb, out, flg, want_flags, E, M, bias, kind, pol, key):
    """out[i] = sqrt(a[i])."""
    nb = pol[P_SRBITS]
    daz = pol[P_DAZ]
    fa = 0
    for i in range(lo, hi):
        r = np.int64(rb[i]) if have_rb else rand_bits(key, i, nb)
        ca, sa, ea, xa = unpack(np.int64(a[i]), E, M, bias, kind, daz)
        k, s, e, m, fx = sqrt_pre(ca, sa, ea, xa)
        v, f = finish(k, s, e, m, fx, ca, sa, xa, M, _CZ, _I0, _I0, M, _CZ, _I0, _I0,
                      M, E, M, bias, kind, pol, r)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


@njit(cache=True, nogil=True)
def stream_chunk(lo, hi, out, key, nb):
    """out[i] = the seeded stream's random integer of element i (`core.rand_bits`)."""
    for i in range(lo, hi):
        out[i] = rand_bits(key, i, nb)
    return 0

