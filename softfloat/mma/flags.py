"""The flags of ``mma(..., return_flags=True)``: overflow and invalid from the
operands' classes, inexact and underflow against the exact A B + C
(`softfloat._kernels.mma_flags.exact_flags_chunk`)."""
from __future__ import annotations

import numpy as np

from .._kernels import mma_flags as KL
from .._parallel import run_chunks_weighted
from ..conversions import from_bits
from ..flags import Flags
from ..formats import FP64

def _fvals(bits, fmt):
    if fmt == FP64:
        return np.ascontiguousarray(bits).view(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return from_bits(bits, fmt)


def unit_flags(model, res, A3, BT3, C3, batch, m, n, scales=None):
    """Per output: overflow, invalid (from the operands' classes) and, for
    outputs with finite operands, inexact and underflow against the exact
    A B + C (`_exact_flags`)."""
    vals = _fvals(res.reshape(-1), model.out_fmt).reshape(-1, m, n)
    av = _fvals(A3, model.a_fmt)
    bv = _fvals(BT3, model.b_fmt)
    xa, xb = av, bv                 # the exact products' factors: block scales applied
    if scales is not None:
        blk = model.scale_block
        off = model.scale_fmt.name == "fp8_e4m3"      # ue4m3: the sign bit is not read
        keep = model.scale_fmt.sign_mask - 1
        sa, sb = (_fvals(s & s.dtype.type(keep) if off else s, model.scale_fmt)
                  for s in scales)
        with np.errstate(invalid="ignore", over="ignore"):
            xa = av * np.repeat(sa, blk, axis=-1)
            xb = bv * np.repeat(np.swapaxes(sb, 1, 2), blk, axis=-1)
    cv = (_fvals(C3, model.c_fmt).reshape(vals.shape) if C3 is not None
          else np.zeros(vals.shape))
    a_nan, b_nan = np.isnan(av).any(-1), np.isnan(bv).any(-1)
    a_inf, b_inf = np.isinf(av).any(-1), np.isinf(bv).any(-1)
    in_nan = a_nan[:, :, None] | b_nan[:, None, :] | np.isnan(cv)
    if scales is not None:
        # a NaN block scale is a NaN operand of its row (column): no invalid
        in_nan = in_nan | (np.isnan(sa).any(-1)[:, :, None]
                           | np.isnan(sb).any(-2)[:, None, :])
    in_inf = a_inf[:, :, None] | b_inf[:, None, :] | np.isinf(cv)
    fl = np.zeros(vals.shape, np.uint8)
    fl[np.isinf(vals) & ~in_inf & ~in_nan] |= np.uint8(Flags.OVERFLOW)
    fl[np.isnan(vals) & ~in_nan] |= np.uint8(Flags.INVALID)
    _exact_flags(model, vals.reshape(-1), xa, xb, cv.reshape(-1), C3 is not None, m, n,
                 fl.reshape(-1))
    return fl.reshape(res.shape)


def _exps(v):
    """(smallest, largest) exponent e of the finite nonzero values v read as
    sig * 2**e with 53-bit integers sig; None when there are none."""
    v = v[np.isfinite(v) & (v != 0)]
    if v.size == 0:
        return None
    e = np.frexp(v)[1].astype(np.int64) - 53
    return int(e.min()), int(e.max()) + 53


def _exact_flags(model, d, av, bv, cv, has_c, m, n, fl):
    """Inexact (D is not the exact A B + C) and underflow (inexact, and the
    exact A B + C nonzero below the output format's smallest normal) for the
    outputs with finite operands (`softfloat._kernels.mma_flags.exact_flags_chunk`)."""
    K = av.shape[-1]
    A = np.ascontiguousarray(av, np.float64).reshape(-1)
    Bt = np.ascontiguousarray(bv, np.float64).reshape(-1)
    C = np.ascontiguousarray(cv, np.float64)
    D = np.ascontiguousarray(d, np.float64)
    ea, eb, ec, ed = _exps(A), _exps(Bt), _exps(C), _exps(D)
    lows, tops = [], []
    if ea is not None and eb is not None:
        lows.append(ea[0] + eb[0])
        tops.append(ea[1] + eb[1] + int(K).bit_length() + 1)
    for e in (ec, ed):
        if e is not None:
            lows.append(e[0])
            tops.append(e[1] + 1)
    if not lows:
        return                      # every finite value zero: exact
    base = min(lows)
    nl = (max(tops) + 2 - base) // 32 + 2
    nout = d.size
    run_chunks_weighted(KL.exact_flags_chunk, nout, 8 * K, A, Bt, m, n, K, C, has_c, D,
                        base, nl, model.out_fmt.emin, fl)
