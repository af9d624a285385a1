"""Branch-free (SIMD) twin of the ``ro53`` fma oracle, fused with the compare:
the sweep engine's kernel for fma blocks of formats of at most 16 bits.

Why: a three-operand sweep spends about three quarters of a shard in the
scalar oracle (`check.one_case`: operand classes, the rounding's cases and
the compare are branches). Here a case whose three operands are finite (zeros
included) is straight-line code that LLVM's loop vectorizer turns into
AVX2 / AVX-512 code (float64 adds, variable shifts, masked selects).
Nothing is new mathematically; each step is `ro53`'s with its branches
replaced by selects:

1. **The exact product.** ``p = va * vb`` in float64 is exact: a format of at
   most 16 bits has at most 16 significant bits (fp16: 11, bf16: 8, fp8:
   <= 4), so the product has at most 32 <= 53 bits, and its magnitude, if
   nonzero, lies in [2**-298, 2**256] (the oracles' formats have at most 8
   exponent bits: operands in [2**-149, 2**128]), inside float64's normal
   range. A zero operand gives the correctly signed zero product (IEEE sign
   rule of multiplication).
2. **TwoSum.** ``h = RN(p + vc)``, ``e = (p - (h - bb)) + (vc - bb)`` with
   ``bb = h - p``: Knuth's TwoSum, exact without overflow whatever the
   magnitudes (|p + vc| < 2**257), so ``h + e == p + vc`` exactly and
   ``|e| <= ulp(h) / 2``; ``s = (e > 0) - (e < 0)`` its sign, arithmetically.
   A nonzero exact sum is a multiple of 2**-298 (both addends are), so
   ``h`` is a normal float64 in [2**-298, 2**257] (RN of a value in that
   range): `ro53.ro_round`'s domain.
3. **Round to odd, then the final rounding** (`simd.ro_round_v`, the same
   integer quantities as `ro53.ro_round`): X = 4*sig(h) + s*sign stands for
   the exact result on the grid 2**(e(h) - 54), which is the exact result
   rounded to odd at 55 bits; rounding X to the format's quantum at x (the
   subnormal quantum below 2**emin) in the requested mode is correct rounding
   (Boldo & Melquiond: round to odd at p + 2 bits, then any rounding to p
   bits). Overflow against the largest finite value (precomputed overflow
   results per sign and mode: infinity, the largest finite value, or the
   NaN of formats without infinity), tininess after rounding (X rounded at
   precision M + 1 with an unbounded exponent range, compared with
   2**emin), the encoding of normal and subnormal results: all selects.
4. **Exact zero sums.** ``h == 0`` exactly when ``p + vc == 0`` (TwoSum:
   h = RN(p + vc) is 0 only for an exact zero, float64 has no underflow to
   zero at these magnitudes). IEEE 754 section 6.3: the sum is -0 when both
   addends are -0, +0 when both are +0, and otherwise (opposite-signed
   zeros, or nonzero addends that cancel) +0 in every mode but downward,
   where it is -0. Both rules are a bit operation on the sign bits of p and
   vc (the product's zero sign is sign(a) xor sign(b), as `nan_rules` and
   SoftFloat's mulAdd give it):

   * not downward: sign = sign(p) AND sign(vc). If both are 1 the addends
     are both negative and sum to 0, so both are -0: -0, as required;
     otherwise the result is +0 (same-signed +0 addends, mixed zeros, or a
     cancellation, whose addends have opposite signs);
   * downward: sign = sign(p) OR sign(vc). If both are 0 the addends are
     both non-negative and sum to 0, so both are +0: +0, as required;
     otherwise -0 (both -0, mixed zeros, or a cancellation).

   fnuz formats have one zero, encoded 0. The flags of an exact zero are 0.
   (`check.one_case` gives the same: `nan_rules.special` for a zero product
   plus a zero c, `ro53`'s exact-cancellation rule otherwise.) In the
   straight-line code ``h == 0`` runs `ro_round_v` on garbage, which is then
   discarded: its shift counts stay in [0, 63] (X = 2**54 gives the "below a
   quarter quantum" branch).

Cases with an infinite or NaN operand need `nan_rules.special` (NaN
propagation, fma(0, inf, c), inf - inf): the vector loop computes garbage
for them and masks it out of its result (``abs(v) < inf`` is false for
infinities and NaN), and notes each aligned run of `RUN` cases that holds
one; `check.special_runs` then computes exactly those cases with the scalar
oracle. In fp16 and bf16 about 3% of the encodings are infinite or NaN, and
they are contiguous (0x7c00-0x7fff, 0xfc00-0xffff in fp16), so in a sweep's
blocks the flagged runs are few. The exact cancellations of the cancel
families (c = -RN(a*b) with an exact product, c = +-0) stay in the vector
path (step 4).

The kernels use ``error_model="numpy"`` (no ZeroDivisionError branches) and
read each operand as ``x[(k >> sh) & mask]`` (`check.Layout`: flat blocks,
row x column x addend boxes and the cancel families' addend grids alike);
one kernel per way of reading the three operands (`access`: constant over
an aligned run of cases, consecutive, or gathered) and per operand array
kind (values, or encodings looked up in the kernel), compiled on first use,
since gathers cost as much as the arithmetic.

The scalar oracle stays the reference: the tests compare this kernel with
`check.one_case` on every fp8 triple in every mode, on fp16/bf16 slices
(cancelling addends, zeros, extremes, subnormals) and samples, with MPFR on
samples and on every TestFloat level-1 ``f16_mulAdd`` / ``bf16_mulAdd``
case; ``SOFTFLOAT_SWEEP_SIMD=0`` runs the scalar kernel only.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._bits import FNUZ, f64_bits
from .simd import ro_round_v

#: cases per run: the vector loop notes the runs that hold an infinite or NaN
#: operand (one byte per run), the scalar pass revisits those runs
RUN = 64
LOG2_RUN = 6


# how a kernel reads an operand in an aligned run of RUN cases (compile-time)
CONST, LIN, GATHER = 0, 1, 2


@njit(cache=True, nogil=True)
def _ld(x, i, tabv, enc):
    """The value of operand element x[i]: tabv[x[i]] for an array of encodings
    (``enc``, a compile-time constant of the caller), else x[i]."""
    return tabv[np.uint64(x[i])] if enc else np.float64(x[i])


@njit(cache=True, nogil=True)
def _operand(K, x, k, v0, d, u, w, tabv, enc):
    """Operand value of case k, read as `access` kind K (a compile-time constant):
    v0 (CONST), element k + d (LIN) or element (k >> u) & w (GATHER) of x."""
    if K == CONST:
        return v0
    if K == LIN:
        return _ld(x, k + d, tabv, enc)
    return _ld(x, (k >> u) & w, tabv, enc)


def access(shift, mask):
    """How an operand read as x[(k >> shift) & mask] varies over an aligned run
    of RUN cases: CONST (one element: shift >= log2 RUN, or mask 0), LIN
    (consecutive elements: shift 0 and a mask of at least RUN - 1 ones, or
    none), else GATHER."""
    if mask == 0 or shift >= LOG2_RUN:
        return CONST
    if shift == 0 and (mask == -1 or (mask >= RUN - 1 and mask & (mask + 1) == 0)):
        return LIN
    return GATHER


def _make(KA, KB, KC, EA, EB, EC):
    """The check kernel for operand access kinds KA, KB, KC (`access`) and
    operand arrays of encodings (E* true: the value is tabv[x]) or of values;
    all compile-time constants of the closure. Contiguous and run-invariant
    operands are what make the loop fast: a gather costs about as much as the
    whole rounding (measured: 6.0 ns per case with two-level gathers for the
    three operands, 2.1 with contiguous loads). The closure holds only
    integers and booleans: numba's cache key includes the closure's contents,
    and a function object there would miss the cache in every new process."""
    EA, EB, EC = bool(EA), bool(EB), bool(EC)

    @njit(cache=True, nogil=True, error_model="numpy")
    def fma_check(lo, hi, a, sha, ma, b, shb, mb, c, shc, mc, tabv, E, M, bias, kind, rne,
                  rna, up0, up1, rto, emax, kmax, ovf0, ovf1, got, gotf, runs):
        """Cases k in [lo, hi): operands a[(k >> sha) & ma], b[...], c[...]
        (encodings, or values: see `_make`), ``got``/``gotf`` the results
        under test, flat. Mode constants as `simd.mode_params` (``up1`` =
        downward). Returns the OR over the cases whose three operands are
        finite of 0 (agree), 1 (bits differ), 2 (only the flags differ); sets
        ``runs[k >> LOG2_RUN]`` to 1 for every run with an infinite or NaN
        operand (never writes 0: chunks that share a run agree)."""
        acc = np.int64(0)
        sh = E + M
        fnuz = kind == FNUZ
        # unsigned indices: numba wraps negative signed indices around (a select
        # per load), which turns every load, contiguous ones included, into a
        # gather or scalar inserts (measured: 6.1 against 2.1 ns per case)
        ua, ub, uc = np.uint64(sha), np.uint64(shb), np.uint64(shc)
        wa, wb, wc = np.uint64(ma), np.uint64(mb), np.uint64(mc)
        k0 = np.uint64(lo)
        end = np.uint64(hi)
        one = np.uint64(1)
        while k0 < end:
            k1 = min((k0 | np.uint64(RUN - 1)) + one, end)    # the end of k0's aligned run
            # CONST operands: their value at k0; LIN ones: element k + d*
            ia = (k0 >> ua) & wa
            ib = (k0 >> ub) & wb
            ic = (k0 >> uc) & wc
            a0 = _ld(a, ia, tabv, EA)
            b0 = _ld(b, ib, tabv, EB)
            c0 = _ld(c, ic, tabv, EC)
            da = ia - k0
            db = ib - k0
            dc = ic - k0
            nf = np.int64(0)
            for k in range(k0, k1):
                va = _operand(KA, a, k, a0, da, ua, wa, tabv, EA)
                vb = _operand(KB, b, k, b0, db, ub, wb, tabv, EB)
                vc = _operand(KC, c, k, c0, dc, uc, wc, tabv, EC)
                p = va * vb                                 # exact (step 1)
                h = p + vc                                  # TwoSum (step 2)
                bb = h - p
                e = (p - (h - bb)) + (vc - bb)
                s = np.int64(e > 0.0) - np.int64(e < 0.0)
                r, f = ro_round_v(h, s, E, M, bias, kind, rne, rna, up0, up1, rto, emax,
                                  kmax, ovf0, ovf1)         # step 3
                # step 4: the sign of an exact zero sum from the addends' sign bits
                pb = f64_bits(p)
                cb = f64_bits(vc)
                zs = ((pb | cb) if up1 == 1 else (pb & cb)) >> 63
                zr = np.int64(0) if fnuz else (zs & 1) << sh
                zero = h == 0.0
                r = zr if zero else r
                f = np.int64(0) if zero else f
                cd = np.int64(np.int64(got[k]) != r)
                cd = cd | (np.int64(2) * (1 - cd) * np.int64(np.int64(gotf[k]) != f))
                fin = (abs(va) < np.inf) & (abs(vb) < np.inf) & (abs(vc) < np.inf)
                acc |= cd if fin else np.int64(0)
                nf |= np.int64(0) if fin else np.int64(1)
            if nf != 0:
                runs[k0 >> np.uint64(LOG2_RUN)] = 1
            k0 = k1
        return acc
    return fma_check


KERNELS = {}

#: operand arrays of at most this many elements are passed as values (tabv[x],
#: formed once per block), larger ones (a flat block's, the cancel families'
#: addend grid) as encodings looked up in the kernel
VALUES_MAX = 1 << 16


def kernel_args(layout, tabv):
    """(kernel, operand arguments) for a `check.Layout` of fma operands: the
    access kinds of its operands, arrays of values where small."""
    kinds, encs, args = [], [], []
    for x, sh, m in zip(layout.arrays, layout.shifts, layout.masks):
        kinds.append(access(sh, m))
        enc = x.size > VALUES_MAX
        encs.append(enc)
        args += [x if enc else np.ascontiguousarray(tabv[x]), np.int64(sh), np.int64(m)]
    key = (*(int(x) for x in kinds), *(bool(x) for x in encs))
    if key not in KERNELS:
        KERNELS[key] = _make(*key)
    return KERNELS[key], args
