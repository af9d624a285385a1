"""Branch-free (SIMD) twins of the ``host`` and ``ro53`` roundings, and the fused
oracle + compare kernel of the binary ops (+ - * /) over row x column blocks.

Why: a 2**32-pair sweep spends most of its oracle time in branches (operand
classes, the rounding's cases, the compare), and division's float64 divide is
slow when nothing overlaps it. Here the finite-operand path of a case is
straight-line code: LLVM's loop vectorizer turns the inner loop into AVX2 /
AVX-512 code (vdivpd, vfmadd, variable shifts, masked selects), several cases
per instruction. Nothing is new mathematically:

* the exact error terms are `ro53.exact_op`'s (TwoSum; the exact product; the
  division remainder ``fma(-q, y, x)``, exact because q is a correctly
  rounded quotient of operands of at most 26 bits: see ro53's module doc),
  with the signs taken arithmetically ((x > 0) - (x < 0));
* `host_rne_v` is `host.host_rne` (the FPU's round-to-nearest-even at the
  target's quantum, innocuous double rounding: host's module doc) with its
  early returns replaced by selects;
* `ro_round_v` is `ro53.ro_round` (round to odd at 55 bits, then an integer
  rounding in the requested mode) with every branch replaced by arithmetic
  on 0/1 integers and selects: the rounding increment is
  ``(rne & up_ne) | (rna & up_na) | (inexact & directed_up[sign])``, the odd
  bit ``rto & inexact``; the carry into the next binade shifts by the carry
  bit; overflow and the encoding choose between precomputed values. The same
  integer quantities as ro_round's, so the same proof applies.

Operands that are not finite nonzero numbers (zeros, infinities, NaN: their
results need the NaN rules, `nan_rules.special`) are not computed here: the
kernel skips them, and `check.special_rows` computes exactly those cases with
the scalar oracle (`check.one_case`). Division by a zero, an
infinite quotient... in the straight-line code only produce garbage that is
then discarded (float64 arithmetic does not trap; every shift count is kept
in [0, 63]).

The kernels use ``error_model="numpy"``: Python's error model puts a
ZeroDivisionError branch in front of every float division, which stops the
vectorizer (a branch out of the loop).

The scalar oracles stay the reference: the tests compare these twins with
them on every fp8 pair in every mode and on fp16/bf16 slices and samples,
and the sweep engine uses the scalar kernels for flat (sampled) layouts.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._bits import (FIN, FINITE, FNUZ, IEEE, INEXACT, OP_ADD, OP_MUL, OP_SUB,
                    OVERFLOW, RDN, RNA, RNE, RTO, RUP, UNDERFLOW, bits_f64, f64_bits, fma_f64)
from .nan_rules import nan_out

_M52 = (1 << 52) - 1


@njit(cache=True, nogil=True, error_model="numpy")
def exact_v(OP, x, y):
    """(hi, s) of x OP y as `ro53.exact_op`, branch-free (OP a constant)."""
    if OP == OP_ADD or OP == OP_SUB:
        if OP == OP_SUB:
            y = -y
        h = x + y
        bb = h - x
        e = (x - (h - bb)) + (y - bb)          # TwoSum: h + e == x + y exactly
        return h, np.int64(e > 0.0) - np.int64(e < 0.0)
    if OP == OP_MUL:
        return x * y, np.int64(0)
    # OP_DIV: q = RN(x / y), r = x - q*y exactly; sign(x/y - q) = sign(r) * sign(y)
    q = x / y
    r = fma_f64(-q, y, x)
    sr = np.int64(r > 0.0) - np.int64(r < 0.0)
    return q, sr * (np.int64(y > 0.0) - np.int64(y < 0.0))


@njit(cache=True, nogil=True, error_model="numpy")
def host_rne_v(hi, s, E, M, bias, kind, fmax, T, ovf0, ovf1):
    """`host.host_rne` without branches: (bits, flags) of RN_t(hi + error of sign
    s); ``ovf0``/``ovf1`` the result bits of an overflow of sign 0 / 1."""
    hb = f64_bits(hi)
    sign = (hb >> 63) & 1
    ah = abs(hi)
    eh = ((hb >> 52) & 0x7FF) - 1023
    emin = 1 - bias
    qe = max(eh, emin) - M
    C = bits_f64(((qe + 52 + 1023) << 52) | (np.int64(1) << 51))   # 1.5 * 2**(qe+52)
    r = (ah + C) - C
    sm = s - 2 * s * sign                       # sign of |x| - |hi|
    inexact = np.int64((r != ah) | (sm != 0))
    ovf = r > fmax
    tiny = (ah < T) | ((ah == T) & (sm < 0))
    rb = f64_bits(r)
    er = ((rb >> 52) & 0x7FF) - 1023
    norm = ((er + bias) << M) | ((rb >> (52 - M)) & ((np.int64(1) << M) - 1))
    two_emin = bits_f64((emin + 1023) << 52)
    sub = np.int64(min(r, two_emin) * bits_f64((M - emin + 1023) << 52))
    mag = norm if r >= two_emin else sub
    bits = (sign << (E + M)) | mag
    bits = np.int64(0) if (kind == FNUZ) & (mag == 0) else bits
    flags = inexact * INEXACT | np.int64(tiny) * inexact * UNDERFLOW
    bits = (ovf1 if sign else ovf0) if ovf else bits
    flags = np.int64(OVERFLOW | INEXACT) if ovf else flags
    return bits, flags


@njit(cache=True, nogil=True, error_model="numpy")
def _inc(kept, rem, half, sign, rne, rna, up0, up1):
    """The rounding increment (0/1) of ro53's `_rnd_int`, as arithmetic."""
    inexact = np.int64(rem != 0)
    up_ne = np.int64(rem > half) | (np.int64(rem == half) & kept & 1)
    up_na = np.int64(rem >= half)
    up_dir = inexact & ((up0 & (1 - sign)) | (up1 & sign))
    return (rne & up_ne) | (rna & up_na) | up_dir


# inline="always": LLVM's inliner leaves this large function as a call in the
# row kernel, which stops the loop vectorizer (measured: 18 ns per case as a
# call, against the scalar kernel's 14 ns); inlined at numba's IR level the
# loop vectorizes.
@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def ro_round_v(hi, s, E, M, bias, kind, rne, rna, up0, up1, rto, emax, kmax, ovf0, ovf1):
    """`ro53.ro_round` without branches (see the module doc): (bits, flags).
    Mode as 0/1 integers: rne, rna; up0/up1 = round the magnitude up when
    inexact for sign 0 / 1 (upward: up0, downward: up1); rto = round to odd.
    ``emax``, ``kmax``: the largest finite value kmax * 2**(emax - M);
    ``ovf0``/``ovf1``: the overflow result bits per sign in this mode."""
    hb = f64_bits(hi)
    sign = (hb >> 63) & 1
    e = ((hb >> 52) & 0x7FF) - 1023                    # hi = sig * 2**(e - 52)
    sig = (hb & _M52) | (np.int64(1) << 52)
    X = sig * 4 + (s - 2 * s * sign)                   # |x| on the grid 2**(e - 54)
    lsb = e - 54
    ex = e - np.int64(X < (np.int64(1) << 54))         # exponent of x's leading bit
    emin = 1 - bias
    qe = max(ex, emin) - M                             # the format's quantum at x
    d = qe - lsb
    big = d > 60                                       # X lies below a quarter quantum
    Xs = np.int64(1) if big else X
    ds = np.int64(2) if big else d
    kept = Xs >> ds
    rem = Xs & ((np.int64(1) << ds) - 1)
    half = np.int64(1) << (ds - 1)
    inexact = np.int64(rem != 0)
    kept = (kept + _inc(kept, rem, half, sign, rne, rna, up0, up1)) | (rto & inexact)
    carry = np.int64(kept >= (np.int64(1) << (M + 1)))  # rounded up to the next binade
    kept = kept >> carry
    qe = qe + carry
    ovf = (qe > emax - M) | ((qe == emax - M) & (kept > kmax))
    # tininess after rounding: X rounded at precision M + 1, unbounded exponent
    du = ex - M - lsb                                  # 53 - M or 54 - M
    ku0 = X >> du
    remu = X & ((np.int64(1) << du) - 1)
    ku = ku0 + _inc(ku0, remu, np.int64(1) << (du - 1), sign, rne, rna, up0, up1)
    reaches = (ku >= (np.int64(1) << (M + 1))) & (ex + 1 >= emin)
    under = (ex < emin) & (inexact == 1) & ~reaches
    normal = kept >= (np.int64(1) << M)
    mag = (((qe + M + bias) << M) | (kept - (np.int64(1) << M))) if normal else kept
    bits = (sign << (E + M)) | mag
    bits = np.int64(0) if (kind == FNUZ) & (kept == 0) else bits
    flags = inexact * INEXACT | np.int64(under) * UNDERFLOW
    bits = (ovf1 if sign else ovf0) if ovf else bits
    flags = np.int64(OVERFLOW | INEXACT) if ovf else flags
    return bits, flags


def mode_params(E, M, bias, kind, mode, dnan, host):
    """The per-call constants of the kernels for a format (E, M, bias, kind) and
    a rounding mode: (rne, rna, up0, up1, rto, emax, kmax, ovf0, ovf1), the
    overflow results per sign as `ro53.ro_round` / `host.host_rne` give them."""
    mode = int(mode)
    emax = ((1 << E) - 2 - bias) if kind == IEEE else ((1 << E) - 1 - bias)
    kmax = (1 << (M + 1)) - (2 if kind == 1 else 1)          # kind 1: FN
    ovf = []
    for sign in (0, 1):
        to_inf = mode in (RNE, RNA) or (mode == RUP and sign == 0) or \
            (mode == RDN and sign == 1)
        if host:                                 # host_rne: FINITE saturates, fn/fnuz NaN
            to_inf = True
        if to_inf and kind != FINITE:
            if kind == IEEE:
                ovf.append((sign << (E + M)) | (((1 << E) - 1) << M))
            else:
                ovf.append(int(nan_out(sign, 0, 1, True, E, M, kind, dnan)))
        else:
            mag = (1 << (E + M)) - 1 if (host and kind == FINITE) else \
                ((emax + bias) << M) | (kmax - (1 << M))
            ovf.append((sign << (E + M)) | mag)
    return tuple(np.int64(v) for v in (mode == RNE, mode == RNA, mode == RUP, mode == RDN,
                                       mode == RTO, emax, kmax, ovf[0], ovf[1]))


def _make_rows(OP, HOST):
    """The row x column check kernel of one (op, method), compiled on first use.

    check(lo, hi, a, sha, vb, tabc, tabv, E, M, bias, kind, fmax, T, rne, rna,
    up0, up1, rto, emax, kmax, ovf0, ovf1, got, gotf): case k is
    (a[k >> sha], b[k & (nb - 1)]) with nb = 2**sha = vb.size and ``vb`` the
    values of b (tabv[b]). Returns the OR over the cases whose operands are
    both finite nonzero numbers of 0 (agree), 1 (result bits differ), 2 (only
    the flags differ); the other cases are left to `check.special_rows`.

    It stores nothing per case (only the OR): per-case stores into a code
    array next to the byte-wide loads made the loop 2-3x slower whenever the
    arrays' addresses aliased modulo 4 KiB (measured 5.5 against 16 ns per
    case, depending on the allocation); the engine recomputes the codes with
    the scalar kernel in the rare block that has a mismatch."""

    @njit(cache=True, nogil=True, error_model="numpy")
    def check(lo, hi, a, sha, vb, tabc, tabv, E, M, bias, kind, fmax, T, rne, rna, up0, up1,
              rto, emax, kmax, ovf0, ovf1, got, gotf):
        acc = np.int64(0)
        nb = vb.size
        zb = (np.int64(1) << (E + M)) if up1 == 1 else np.int64(0)     # exact 0: -0 downward
        zb = np.int64(0) if kind == FNUZ else zb
        k = lo
        while k < hi:
            i = k >> sha
            j0 = k & (nb - 1)
            n = min(nb - j0, hi - k)
            base = k - j0
            k += n
            xa = a[i]
            if tabc[xa] != FIN:                       # the whole row is special
                continue
            va = tabv[xa]
            for j in range(j0, j0 + n):
                y = vb[j]
                h, s = exact_v(OP, va, y)
                if HOST:
                    r, f = host_rne_v(h, s, E, M, bias, kind, fmax, T, ovf0, ovf1)
                else:
                    r, f = ro_round_v(h, s, E, M, bias, kind, rne, rna, up0, up1, rto, emax,
                                      kmax, ovf0, ovf1)
                if OP == OP_ADD or OP == OP_SUB:          # exact cancellation
                    r = zb if h == 0.0 else r
                    f = np.int64(0) if h == 0.0 else f
                cd = np.int64(np.int64(got[base + j]) != r)
                cd = cd | (np.int64(2) * (1 - cd) * np.int64(np.int64(gotf[base + j]) != f))
                # b finite nonzero (NaN fails both comparisons)
                ay = abs(y)
                acc |= cd if ((ay > 0.0) & (ay < np.inf)) else np.int64(0)
        return acc
    return check


def _make_flat(OP, HOST):
    """The flat check kernel of one (op, method): case k is (va[k], vb[k]), the
    operand values (tabv of the encodings); otherwise as `_make_rows`' kernel
    (returns the OR of the codes of the cases whose operands are both finite
    nonzero; the others are left to `check.special_cases`)."""

    @njit(cache=True, nogil=True, error_model="numpy")
    def check(lo, hi, va, vb, E, M, bias, kind, fmax, T, rne, rna, up0, up1, rto, emax, kmax,
              ovf0, ovf1, got, gotf):
        acc = np.int64(0)
        zb = (np.int64(1) << (E + M)) if up1 == 1 else np.int64(0)     # exact 0: -0 downward
        zb = np.int64(0) if kind == FNUZ else zb
        for k in range(lo, hi):
            x = va[k]
            y = vb[k]
            h, s = exact_v(OP, x, y)
            if HOST:
                r, f = host_rne_v(h, s, E, M, bias, kind, fmax, T, ovf0, ovf1)
            else:
                r, f = ro_round_v(h, s, E, M, bias, kind, rne, rna, up0, up1, rto, emax,
                                  kmax, ovf0, ovf1)
            if OP == OP_ADD or OP == OP_SUB:
                r = zb if h == 0.0 else r
                f = np.int64(0) if h == 0.0 else f
            cd = np.int64(np.int64(got[k]) != r)
            cd = cd | (np.int64(2) * (1 - cd) * np.int64(np.int64(gotf[k]) != f))
            ax = abs(x)
            ay = abs(y)
            fin = (ax > 0.0) & (ax < np.inf) & (ay > 0.0) & (ay < np.inf)
            acc |= cd if fin else np.int64(0)
        return acc
    return check


ROW_KERNELS = {}
FLAT_KERNELS = {}


def row_kernel(op, host):
    """The compiled row kernel of (op code, host?)."""
    key = (int(op), bool(host))
    if key not in ROW_KERNELS:
        ROW_KERNELS[key] = _make_rows(*key)
    return ROW_KERNELS[key]


def flat_kernel(op, host):
    """The compiled flat kernel of (op code, host?)."""
    key = (int(op), bool(host))
    if key not in FLAT_KERNELS:
        FLAT_KERNELS[key] = _make_flat(*key)
    return FLAT_KERNELS[key]

