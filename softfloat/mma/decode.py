"""The matrix units' operands: decoded for the kernels (through per-format
tables for formats of at most `LUT_BITS` bits), as values, and laid out the
way the fast kernels read them (`Operands`)."""
from __future__ import annotations

import numpy as np

from .._kernels import mma_decode as KD
from .._kernels import mma_fast as KF
from .._parallel import run_chunks
from ..conversions import from_bits
from ..formats import FP16, FP32, Format

LUT_BITS = 19          # formats of at most this many bits decode through tables
_luts: dict = {}


def _lut(fmt: Format, values: bool, sign_off: bool = False):
    """The decoding of every encoding of ``fmt`` (at most `LUT_BITS` bits), made
    once by the decoding kernels themselves: (sig int32, exp int32, cls) as
    `decode` gives them, or with ``values`` (value float64, binade exponent
    float32 with zeros and specials at NO_EXP, cls) for the fast "fdpa" kernel."""
    key = (fmt.params, values, sign_off)
    t = _luts.get(key)
    if t is None:
        codes = np.arange(1 << fmt.nbits, dtype=np.uint32).astype(fmt.dtype)
        E, M, bias, kind = fmt.params
        n = codes.size
        if values:
            t = (np.empty(n, np.float64), np.empty(n, np.int32), np.empty(n, np.uint8))
            KD.decode_values_chunk(0, n, codes, *t, E, M, bias, kind, KD.POW2)
            t = (t[0], t[1].astype(np.float32), t[2])
        else:
            t = (np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8))
            KD.decode_chunk(0, n, codes, *t, E, M, bias, kind, bool(sign_off))
        _luts[key] = t
    return t


def decode(bits: np.ndarray, fmt: Format, sign_off: bool = False):
    flat = np.ascontiguousarray(bits).reshape(-1)
    n = flat.size
    sig = np.empty(n, np.int32)
    exp = np.empty(n, np.int32)
    cls = np.empty(n, np.uint8)
    if fmt.nbits <= LUT_BITS and n >= 64:
        run_chunks(KD.lut_chunk, n, flat, *_lut(fmt, False, sign_off), sig, exp, cls)
        return sig, exp, cls
    E, M, bias, kind = fmt.params
    if fmt.kind == "ieee" and fmt.bias == (1 << (E - 1)) - 1 and not sign_off:
        run_chunks(KD.decode_ieee_chunk, n, flat, sig, exp, cls, E, M)
        return sig, exp, cls
    run_chunks(KD.decode_chunk, n, flat, sig, exp, cls, E, M, bias, kind, bool(sign_off))
    return sig, exp, cls


def decode_all(model, A3, BT3, C3):
    return (decode(A3, model.a_fmt) + decode(BT3, model.b_fmt)
            + decode(C3, model.c_fmt))


def decode_values(bits: np.ndarray, fmt: Format):
    """(values float64, binade exponents float32 with zeros at NO_EXP, classes)
    for the fast "fdpa" kernel (formats of at most `LUT_BITS` bits)."""
    flat = np.ascontiguousarray(bits).reshape(-1)
    n = flat.size
    val = np.empty(n, np.float64)
    exp0 = np.empty(n, np.float32)
    cls = np.empty(n, np.uint8)
    run_chunks(KD.lut_chunk, n, flat, *_lut(fmt, True), val, exp0, cls)
    return val, exp0, cls


def float_values(bits: np.ndarray, fmt: Format, dtype) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.ascontiguousarray(from_bits(np.ascontiguousarray(bits), fmt).astype(dtype)
                                    ).reshape(-1)


def float_values_quick(bits, fmt, dtype):
    """`float_values` through numpy's own casts for fp16, bf16 and fp32 (exact)."""
    flat = np.ascontiguousarray(bits).reshape(-1)
    with np.errstate(invalid="ignore"):
        if fmt == FP16:
            return flat.view(np.float16).astype(dtype)
        if fmt == FP32:
            return flat.view(np.float32).astype(dtype)
        if fmt.name == "bf16":
            return (flat.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(dtype)
    return float_values(flat, fmt, dtype)


class Operands:
    """The operands of one product, validated: ``A`` (..., m, K) and ``B``
    (..., K, n) encodings as given, c broadcast and flat (``C3``, a placeholder
    without c), the batch and the sizes (``nbt`` products of ``m`` x ``n``
    outputs, ``K`` padded to ``Kp``, a whole number of instructions). The
    reference kernels' layouts (``A3`` (nbt, m, Kp), ``BT3`` (nbt, n, Kp): B
    transposed) are made on first use; the fast kernels take `padded`."""

    def __init__(self, model, A, B, Cb, batch):
        self.model, self.A, self.B, self.batch = model, A, B, batch
        self.m, self.K, self.n = A.shape[-2], A.shape[-1], B.shape[-1]
        self.nbt = int(np.prod(batch, dtype=np.int64))
        self.Kp = -(-self.K // model.k) * model.k
        self.has_c = Cb is not None
        if self.has_c:
            self.C3 = np.ascontiguousarray(np.broadcast_to(Cb, batch + (self.m, self.n))
                                           ).reshape(-1)
        else:
            self.C3 = np.zeros(1, model.c_fmt.dtype)
        self._a3 = self._bt3 = None

    @property
    def nout(self) -> int:
        return self.nbt * self.m * self.n

    @property
    def A3(self) -> np.ndarray:
        """A as (nbt, m, Kp), contiguous, K padded with zeros."""
        if self._a3 is None:
            nbt, m, K, Kp = self.nbt, self.m, self.K, self.Kp
            A3 = np.broadcast_to(self.A, self.batch + (m, K)).reshape(nbt, m, K)
            if Kp != K:
                A3 = np.concatenate([A3, np.zeros((nbt, m, Kp - K), A3.dtype)], axis=2)
            self._a3 = np.ascontiguousarray(A3)
        return self._a3

    @property
    def BT3(self) -> np.ndarray:
        """B transposed, (nbt, n, Kp), contiguous, K padded with zeros."""
        if self._bt3 is None:
            nbt, n, K, Kp = self.nbt, self.n, self.K, self.Kp
            BT3 = np.swapaxes(np.broadcast_to(self.B, self.batch + (K, n)).reshape(nbt, K, n),
                              1, 2)
            if Kp != K:
                BT3 = np.concatenate([BT3, np.zeros((nbt, n, Kp - K), BT3.dtype)], axis=2)
            self._bt3 = np.ascontiguousarray(BT3)
        return self._bt3

    def padded(self, blocks=True):
        """(A (nbt, m, Kp), B (nbt, Kp, npad), npad) for the fast kernels (B not
        transposed): K padded with zero products to Kp, and with ``blocks`` the
        columns with zero columns to npad, a multiple of the column block JB."""
        nbt, m, n, K, Kp = self.nbt, self.m, self.n, self.K, self.Kp
        npad = -(-n // KF.JB) * KF.JB if blocks else n
        A3 = np.broadcast_to(self.A, self.batch + self.A.shape[-2:]).reshape(nbt, m, K)
        B3 = np.broadcast_to(self.B, self.batch + self.B.shape[-2:]).reshape(nbt, K, n)
        if Kp != K:
            A3 = np.concatenate([A3, np.zeros((nbt, m, Kp - K), A3.dtype)], axis=2)
        if Kp != K or npad != n:
            B3 = np.pad(B3, ((0, 0), (0, Kp - K), (0, npad - n)))
        return A3, B3, npad

    def c_rows(self, npad):
        """c's encodings as (nbt * m * npad) for the fast kernels (a placeholder
        without c)."""
        if not self.has_c:
            return self.C3
        C = self.C3.reshape(self.nbt, self.m, self.n)
        if npad != self.n:
            C = np.pad(C, ((0, 0), (0, 0), (0, npad - self.n)))
        return C.reshape(-1)


def rows_cols(Aspec, Bspec, Cspec, nbt, m, n):
    """Flat indices of the outputs whose row of A (nbt, m) or column of B
    (nbt, n) or c (nbt * m * n, or None) is marked."""
    sp = Aspec[:, :, None] | Bspec[:, None, :]
    if Cspec is not None:
        sp = sp | Cspec.reshape(sp.shape)
    return np.flatnonzero(sp.reshape(-1)).astype(np.int64)
