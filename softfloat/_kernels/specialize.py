"""NaN specialization of the kernels, after Berkeley SoftFloat's ``specialize.h``.

The one place that decides which NaN a result gets and which integer an invalid
conversion gives. Every kernel asks these functions; none spells a NaN pattern.

The rules (the Python-side owner is ``softfloat/specialize.py``, which turns a
policy or a platform preset into the two policy entries read here):

* ``pol[P_NAN] == NAN_PROPAGATE`` (SoftFloat 8086-SSE, the default): a result
  with a NaN operand is the first NaN operand in argument order (a, then b,
  then c), with its sign and the top fraction bits of its payload, quieted.
  An invalid operation without a NaN result to propagate (inf - inf, 0 * inf,
  0/0, inf/inf, sqrt(-x), and fma(0, inf, NaN), where SoftFloat's default NaN
  wins over the addend's NaN) gives the *fresh NaN* ``pol[P_NANBITS]``: the
  format's default NaN (0x7E00 fp16), or a platform's own (x86's negative
  default NaN 0xFE00).
* ``NAN_CANONICAL``: every NaN result is ``pol[P_NANBITS]`` (RISC-V, ARM with
  FPCR.DN, torch CUDA's 0x7FFF casts).
* ``NAN_KEEP``: as propagate, but the payload is not quieted (a bfloat16 ->
  float32 bit shift); a payload that would become zero is quieted.
* ``NAN_PROPAGATE_LAST``: as propagate, but the *last* NaN operand in argument
  order wins (c, then b, then a): two NaN operands of ``a + b`` give b's NaN,
  quieted (NumPy's float16 arithmetic on x86, whose float32 detour leaves the
  second operand's NaN).
* A signaling NaN operand raises invalid in every mode.
* Formats without infinity: ``fn`` formats (one NaN per sign) keep the source
  NaN's sign under propagate; ``fnuz`` formats have a single NaN. Overflow to
  NaN and an infinite result in such a format keep the sign (as ml_dtypes does),
  whatever the NaN mode.
* P3109 formats have one NaN (signed: the -0 pattern; unsigned: all ones),
  whatever the NaN mode.
* ``finite`` formats (OCP fp4/fp6) have no NaN: +0 stands for every NaN result
  (the caller raises invalid); ``fnu`` formats (E8M0) have one NaN, all ones.
* The GPU matrix units (softfloat.mma) have one NaN, every bit set but the
  sign (`all_ones_nan`).
* Invalid integer conversions (NaN, infinity, out of range) give the integer
  type's minimum (x86 "integer indefinite", SoftFloat 8086-SSE).

NaNs "in flight" (values between kernel steps, see `unpack_in_flight`) carry
their payload in ``sig`` and its length in bits in ``exp``; length 0 marks a
fresh NaN.
"""
import numpy as np

from .codes import (C_QNAN, C_SNAN, F_INVALID, K_FINITE, K_FN, K_FNU, K_FNUZ, K_IEEE, K_P3109,
                    K_P3SF, NAN_CANONICAL,
                    NAN_KEEP, NAN_PROPAGATE, NAN_PROPAGATE_LAST, P_NAN, P_NANBITS)
from .jit import helper

# int64 constants for helper arguments: a Python int constant argument is typed as a
# literal, and numba would compile the callee once more for it.
_I0 = np.int64(0)
_I1 = np.int64(1)
_PROPAGATE = np.int64(NAN_PROPAGATE)


@helper
def make_nan(sign, payload, plen, E, M, kind, nanmode, nanbits):
    """The NaN a result gets. ``payload`` holds ``plen`` bits of a source NaN's
    fraction, left-aligned into the target's M bits; plen = 0: a fresh NaN (no
    source NaN). ``nanbits``: the canonical pattern (NAN_CANONICAL) or the fresh
    NaN (otherwise)."""
    if kind == K_FNUZ or (kind >= K_P3109 and kind <= K_P3SF):
        return np.int64(1) << (E + M)
    if kind == K_FNU or kind > K_P3SF:       # e8m0, unsigned P3109: all ones
        return (np.int64(1) << (E + M)) - 1
    if kind == K_FINITE:
        return _I0
    if nanmode == NAN_CANONICAL or plen == 0:
        return nanbits
    if kind == K_FN:                  # one NaN per sign: the sign is the payload
        return (sign << (E + M)) | ((np.int64(1) << (E + M)) - 1)
    if plen >= M:
        frac = payload >> (plen - M)
    else:
        frac = payload << (M - plen)
    if nanmode != NAN_KEEP or frac == 0:
        frac |= np.int64(1) << (M - 1)
    return (sign << (E + M)) | (((np.int64(1) << E) - 1) << M) | frac


@helper
def signed_nan(sign, E, M, kind):
    """NaN of a format without infinity where IEEE would give an infinity of sign
    ``sign`` (overflow, an exact infinite result): the sign is kept."""
    return make_nan(sign, _I0, _I1, E, M, kind, _PROPAGATE, _I0)


@helper
def all_ones_nan(E, M):
    """The NaN with every bit set but the sign (0x7FFF binary16, 0x7FFFFFFF
    binary32): the one NaN the GPU matrix units write, whatever the operands
    (`softfloat.specialize.all_ones_nan_bits` in a kernel)."""
    return (np.int64(1) << (E + M)) - 1


@helper
def nan_operands(c1, s1, f1, l1, c2, s2, f2, l2, c3, s3, f3, l3, E, M, kind, pol):
    """Result and flags of an operation with at least one NaN among up to three
    operands, each given as (class, sign, payload, payload length); pass C_ZERO
    for a missing one. Invalid if any operand is a signaling NaN; the first NaN
    operand in argument order gives sign and payload (SoftFloat 8086-SSE
    ``propagateNaN``: a, then b, then c; NAN_PROPAGATE_LAST: c, then b, then
    a); the NaN mode may replace it."""
    flags = F_INVALID if (c1 == C_SNAN or c2 == C_SNAN or c3 == C_SNAN) else 0
    if pol[P_NAN] == NAN_PROPAGATE_LAST:
        if c3 >= C_QNAN:
            s, f, n = s3, f3, l3
        elif c2 >= C_QNAN:
            s, f, n = s2, f2, l2
        else:
            s, f, n = s1, f1, l1
    elif c1 >= C_QNAN:
        s, f, n = s1, f1, l1
    elif c2 >= C_QNAN:
        s, f, n = s2, f2, l2
    else:
        s, f, n = s3, f3, l3
    return make_nan(s, f, n, E, M, kind, pol[P_NAN], pol[P_NANBITS]), flags


@helper
def nan_operand(c, s, f, n, E, M, kind, pol):
    """`nan_operands` with one NaN operand (conversions, values in flight)."""
    return nan_operands(c, s, f, n, _I0, _I0, _I0, _I0, _I0, _I0, _I0, _I0, E, M, kind, pol)


@helper
def fresh_nan(E, M, kind, pol):
    """Result and flags of an invalid operation without a NaN to propagate:
    the policy's fresh NaN, with invalid."""
    return make_nan(_I0, _I0, _I0, E, M, kind, pol[P_NAN], pol[P_NANBITS]), F_INVALID


@helper
def nan_payload_length(M, kind):
    """Bits of payload a NaN of the format carries (its fraction for IEEE
    formats; fn/fnuz NaNs carry none but their sign, length 1, payload 0)."""
    return np.int64(M) if kind == K_IEEE else np.int64(1)


@helper
def invalid_int(ibits):
    """Result of an invalid conversion to a signed integer of ``ibits`` bits."""
    return np.int64(-1) << (ibits - 1)


@helper
def float64_nan(sign, payload, M, kind):
    """float64 bit pattern (as int64) of a NaN of the format, read exactly:
    IEEE payloads left-aligned (so that converting back gives them back),
    fn/fnuz NaNs the default quiet NaN with the sign."""
    s = sign << 63
    if kind != K_IEEE:
        return s | (np.int64(0xFFF) << 51)
    return s | (np.int64(0x7FF) << 52) | (payload << (52 - M))


@helper
def is_nan_bits(x, E, M, kind):
    """True where the encoding ``x`` is a NaN (Format.is_nan_bits in a kernel)."""
    x = np.int64(x)
    mag = x & ((np.int64(1) << (E + M)) - 1)
    if kind == K_IEEE:
        return mag > (((np.int64(1) << E) - 1) << M)
    if kind == K_FN or kind == K_FNU or kind > K_P3SF:
        return mag == (np.int64(1) << (E + M)) - 1
    if kind == K_FINITE:
        return False
    return x == (np.int64(1) << (E + M))
