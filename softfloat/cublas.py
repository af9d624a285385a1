"""cuBLAS-level GEMM models: a GPU's dense-GEMM instruction chained along K, the
split of K that cuBLASLt makes and the order in which it adds the partial sums,
and the epilogue (alpha, beta, bias, the output conversion).

``gemm(a, b, *, device, a_fmt, out_fmt, ...)`` computes ``alpha * A B + beta * C
(+ bias)`` on encodings, as the device's cuBLASLt does; ``scaled_mm(...)`` is
``torch._scaled_mm`` with per-tensor scales. See docs/cublas.md.

The accumulator (before the epilogue), for a device's architecture:

* fp8 operands on Hopper (``h100_pcie``, ``h100``, ...) and Ada (``rtx4060``,
  ``l40``, ...): the fp8 ``wgmma`` / ``mma`` instruction (`softfloat.mma`,
  MMA-Sim's models) chained along K. ``fast_accum=True``: one chain per split.
  ``fast_accum=False`` (torch's default): the chain restarts from +0 every 128
  products of a split and the chunk results are added in order into an fp32
  accumulator from +0 (binary32, nearest even), as `softfloat.mx_gemm.fp8_matmul`
  does with promotion.
* other operands (fp16, bf16, tf32, and fp8 on Blackwell): the dense-GEMM
  instruction (`softfloat.mma.tensor_core`) chained along each split; float32
  operands without ``allow_tf32``: a chain of binary32 fused multiply-adds along
  K (the SIMT path).

Split-K, S parts (``splitk=(S, order)``):

``"contiguous"``  (the H100's cuBLASLt kernels) K in 128-wide k-tiles, split s
    owns the tiles [s q, (s + 1) q), q = ceil(T / S); the partial sums added in
    order s = 0, 1, ... (binary32).
``"serial"`` / ``"interleaved"``  (the RTX 4060's) K in 64-wide k-tiles, split s
    owns the tiles t with t mod S = s; without fast accumulation a split restarts
    its chain every 2 of its own tiles; partial sums added in order.
``"pairwise"``  the same tiles, the partial sums added as
    ``(((p[S-1] + slot[0]) + slot[1]) + ...)`` with h = ceil(S/2),
    ``slot[i] = p[i] + p[i+h]`` if i + h < S - 1 else ``p[i]``.

The epilogue, in binary32 (every step one IEEE rounding, nearest even):
``alpha' = RN(scale_a * scale_b)`` (times alpha when alpha is not 1), ``y =
fma(alpha', acc, t)`` with ``t = RN(beta * c)``, or +0 when beta is 0 (C is then
not read: a NaN in C does not propagate), ``y = RN(y + bias)``; then the
conversion to ``out_fmt`` (bf16, fp16 nearest even; fp8 saturated to +-max,
infinities included, then nearest even); NaN is canonical (0x7FFFFFFF, 0x7FFF,
0x7F).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from . import _validate as V
from .formats import get_format
from .specialize import all_ones_nan_bits, default_nan_bits


def _canonical_nan(fmt) -> int:
    """The NaN cuBLAS writes: every bit but the sign set (OCP e4m3's only NaN is that
    pattern too, its format's default NaN)."""
    f = get_format(fmt)
    return all_ones_nan_bits(f) if f.kind == "ieee" else default_nan_bits(f)

__all__ = ["gemm", "scaled_mm", "GemmInfo", "CLAIMS", "SPLIT_ORDERS", "DEVICES"]

#: claim levels, strongest first (docs/cublas.md)
CLAIMS = ("validated", "proof", "modelled", "native")

#: split orders accepted by ``splitk=(S, order)``
SPLIT_ORDERS = ("contiguous", "serial", "interleaved", "pairwise")

#: devices with recorded cuBLASLt behaviour (mmaemu 0.1.0 profiles) beyond the
#: architecture names of `softfloat.mma.tensor_core`
DEVICES = {"h100_pcie": ("hopper", "hopper"), "h100pcie": ("hopper", "hopper"),
           "h100_sxm": ("hopper", None), "h100sxm": ("hopper", None),
           "rtx4060": ("ada", "ada"), "rtx_4060": ("ada", "ada")}

_PLATFORM_NAME = {"hopper": "H100 PCIe (114 SMs, cuBLASLt 12.8.3.14)",
                  "ada": "RTX 4060 (24 SMs, cuBLASLt 12.8.3.14)"}
_FP8 = ("fp8_e4m3", "fp8_e5m2")
_FP8_MAX = {"fp8_e4m3": 448.0, "fp8_e5m2": 57344.0}
_OUT_FMTS = ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2")
_IN_FMTS = ("fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
_MMAEMU_OUT = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16",
               "fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}
_PROMOTE = 128          # products per chain without fast accumulation (fp8)
_CONTIG_TILE = 128      # k-tile of the "contiguous" split
_INTERLEAVED_TILE = 64  # k-tile of the "serial"/"pairwise" split
_RNE = dict(rounding="nearest_even", subnormals=True, overflow="ieee", tininess="after")
_MMAEMU_INSTALL = "mmaemu is not installed (pip install 'softfloat-lab[test]' or mmaemu==0.1.0)"


@dataclass(frozen=True)
class GemmInfo:
    """What `gemm` computed and what the result is worth.

    ``claim``: "validated" (exact, checked against a named reference),
    "proof", "modelled" (from documentation and research, not validated) or
    "native"; ``validated_by`` names the reference ("" when none)."""
    instruction: str
    splitk: tuple
    split_source: str
    claim: str
    validated_by: str
    device: str = ""
    arch: str = ""
    accumulation: str = ""
    notes: tuple = field(default_factory=tuple)


# ---------------------------------------------------------------------------
# device, formats, instruction
# ---------------------------------------------------------------------------
def _resolve_device(device):
    """(canonical arch, mmaemu profile name or None, the name as given)."""
    if not isinstance(device, str):
        raise TypeError(f"device must be a str (a GPU or architecture name), got "
                        f"{type(device).__name__}")
    key = device.strip().lower().replace("-", "_").replace(" ", "_")
    if key in DEVICES:
        arch, profile = DEVICES[key]
        return arch, profile, key
    from .mma import canonical_arch
    try:
        return canonical_arch(device), None, device
    except ValueError as e:
        raise ValueError(f"{e}; or one of the recorded devices {sorted(set(DEVICES))}") from None


def _fmt(name, what, allowed):
    if not isinstance(name, str):
        raise TypeError(f"{what}: expected a format name, one of {list(allowed)}, got "
                        f"{type(name).__name__}")
    f = get_format(name)
    if f.name not in allowed:
        raise ValueError(f"{what}: {f.name} is not supported here; expected one of "
                         f"{list(allowed)}")
    return f.name


def _unit(arch, fa, fb):
    """The matrix unit (fp32 accumulator) for fa x fb operands, or None for the
    binary32 FMA path (float32 operands on NVIDIA GPUs)."""
    from .mma import tensor_core
    if fa == "fp32" or fb == "fp32":
        try:                                    # AMD's fp32 matrix instructions
            return tensor_core(arch, "fp32", "fp32")
        except ValueError:
            return None                         # NVIDIA: the SIMT FMA chain
    if fa in _FP8 or fb in _FP8:
        if (fa in _FP8) != (fb in _FP8):
            raise ValueError(f"operand formats {fa} x {fb}: fp8 operands pair with fp8 only")
        from .mx_gemm import _with_operands
        try:
            base = tensor_core(arch, fa, "fp32")
        except ValueError:
            raise ValueError(f"{arch} has no fp8 dense-GEMM instruction (fp8 GEMMs: ada, hopper, "
                             f"blackwell, rtx_blackwell)") from None
        return _with_operands(base, get_format(fa), get_format(fb))
    if fa != fb:
        raise ValueError(f"operand formats {fa} x {fb}: a and b must have one format "
                         f"(fp8 excepted)")
    try:
        return tensor_core(arch, fa, "fp32")
    except ValueError:
        raise ValueError(f"{arch} has no dense-GEMM instruction for {fa} operands with an fp32 "
                         f"accumulator") from None


# ---------------------------------------------------------------------------
# the plan: which K indices each chain covers, and how the chains are added
# ---------------------------------------------------------------------------
def _norm_order(order):
    if not isinstance(order, str) or order.strip().lower() not in SPLIT_ORDERS:
        raise ValueError(f"split order {order!r}: expected one of {list(SPLIT_ORDERS)}")
    o = order.strip().lower()
    return "serial" if o == "interleaved" else o


def _plan(K, S, order, restart):
    """[split][chain] -> int64 index vectors into K (each chain starts from +0).

    ``restart``: a chain restarts every `_PROMOTE` products (fp8 without fast
    accumulation), chunks added serially within the split."""
    if S == 1:
        if not restart:
            return [[np.arange(K)]]
        return [[np.arange(k0, min(K, k0 + _PROMOTE)) for k0 in range(0, K, _PROMOTE)]]
    if order == "contiguous":
        T = -(-K // _CONTIG_TILE)
        q = -(-T // S)
        splits = []
        for s in range(S):
            lo, hi = min(s * q, T) * _CONTIG_TILE, min(min((s + 1) * q, T) * _CONTIG_TILE, K)
            if lo >= hi:
                splits.append([])
            elif restart:
                splits.append([np.arange(k0, min(hi, k0 + _PROMOTE))
                               for k0 in range(lo, hi, _PROMOTE)])
            else:
                splits.append([np.arange(lo, hi)])
        return splits
    T = -(-K // _INTERLEAVED_TILE)
    splits = []
    for s in range(S):
        own = [np.arange(t * _INTERLEAVED_TILE, min(K, (t + 1) * _INTERLEAVED_TILE))
               for t in range(s, T, S)]
        if not own:
            splits.append([])
        elif restart:
            per = _PROMOTE // _INTERLEAVED_TILE
            splits.append([np.concatenate(own[j:j + per]) for j in range(0, len(own), per)])
        else:
            splits.append([np.concatenate(own)])
    return splits


def _add32(x, y):
    """binary32 addition (nearest even); inf + -inf is NaN without a warning."""
    with np.errstate(invalid="ignore", over="ignore"):
        return (x + y).astype(np.float32)


def _reduce(parts, order):
    """The S partial sums (float32 arrays) added in cuBLASLt's order (binary32)."""
    S = len(parts)
    if S == 1:
        return parts[0]
    if order in ("serial", "contiguous"):
        acc = parts[0]
        for p in parts[1:]:
            acc = _add32(acc, p)
        return acc
    h = -(-S // 2)
    acc = parts[S - 1]
    for i in range(h):
        acc = _add32(acc, _add32(parts[i], parts[i + h]) if i + h < S - 1 else parts[i])
    return acc


def _fma_chain(A3, B3, idx):
    """binary32 FMA chain along the K indices ``idx`` from +0: (nbt, m, n) float32.
    The host's fused multiply-add (``llvm.fma.f32``, one IEEE rounding) runs the
    chain where this thread's MXCSR keeps subnormals; `_fma_chain_slow` (the
    library's ``fma``, one call per k) is its twin, and the path under FTZ/DAZ.
    NaN payloads may differ between the two; `_to_out` makes every NaN canonical."""
    from ._kernels import hw
    from ._kernels.mma_amd import fma32_fast_chunk
    from ._parallel import run_chunks_weighted
    if hw.flushes() or A3.dtype != np.uint32 or B3.dtype != np.uint32:
        return _fma_chain_slow(A3, B3, idx)
    idx = np.asarray(idx, np.int64)
    nbt, m, _ = A3.shape
    n = B3.shape[2]
    K = idx.size
    Av = np.ascontiguousarray(A3[:, :, idx]).view(np.float32).reshape(nbt * m, K)
    Bv = np.ascontiguousarray(B3[:, idx, :]).view(np.float32)
    out = np.empty(nbt * m * n, np.float32)
    run_chunks_weighted(fma32_fast_chunk, nbt * m, max(K, 1) * n, Av, Bv, K, n,
                        np.zeros(1, np.float32), False, out)
    return out.reshape(nbt, m, n)


def _fma_chain_slow(A3, B3, idx):
    """`_fma_chain` through the library's ``fma`` (the general kernels)."""
    from .arith import fma
    nbt, m, _ = A3.shape
    n = B3.shape[2]
    acc = np.zeros((nbt, m, n), np.uint32)
    for k in idx:
        acc = fma(A3[:, :, k:k + 1], B3[:, k:k + 1, :], acc, "fp32", **_RNE)
    return acc.view(np.float32)


def _run_chains(unit, A3, B3, chains):
    """Every chain (index vector) run from +0; a list of float32 (nbt, m, n)."""
    from .mma import mma
    out = [None] * len(chains)
    K = A3.shape[2]
    by_len = {}
    for i, ix in enumerate(chains):
        by_len.setdefault(len(ix), []).append(i)
    for L, members in by_len.items():
        if unit is None:
            for i in members:
                out[i] = _fma_chain(A3, B3, chains[i])
            continue
        if len(members) == 1 and L == K:          # the whole K in order: no gather
            out[members[0]] = mma(unit, A3, B3).view(np.float32)
            continue
        ix = np.stack([chains[i] for i in members])            # (G, L)
        Ag = np.moveaxis(A3[:, :, ix], 2, 0)                   # (G, nbt, m, L)
        Bg = np.moveaxis(B3[:, ix, :], 1, 0)                   # (G, nbt, L, n)
        r = mma(unit, Ag, Bg).view(np.float32)
        for j, i in enumerate(members):
            out[i] = r[j]
    return out


def _accumulate(unit, A3, B3, plan, order, serial_chunks):
    """The fp32 accumulator (nbt, m, n) of the plan."""
    nbt, m, _ = A3.shape
    n = B3.shape[2]
    flat = [ix for split in plan for ix in split]
    res = _run_chains(unit, A3, B3, flat) if flat else []
    parts, j = [], 0
    for split in plan:
        if not split:                                          # an empty split: +0
            parts.append(np.zeros((nbt, m, n), np.float32))
            continue
        rs = res[j:j + len(split)]
        j += len(split)
        if serial_chunks:
            acc = np.zeros((nbt, m, n), np.float32)
            for r in rs:
                acc = _add32(acc, r)
        else:
            acc = rs[0]
        parts.append(acc)
    return _reduce(parts, order)


# ---------------------------------------------------------------------------
# the epilogue
# ---------------------------------------------------------------------------
def _f32_scalar(v, name):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a real number, got {type(v).__name__}")
    return np.float32(v)


def _to_out(y, out_fmt):
    """float32 values -> encodings of out_fmt (nearest even, fp8 saturating), NaN canonical."""
    from .conversions import to_bits
    nan = np.isnan(y)
    if out_fmt == "fp32":
        bits = y.view(np.uint32).copy()
    else:
        if out_fmt in _FP8_MAX:
            mx = np.float32(_FP8_MAX[out_fmt])
            y = np.where(nan, y, np.clip(y, -mx, mx)).astype(np.float32)
        bits = to_bits(y, out_fmt, **_RNE)
    if nan.any():
        bits[nan] = _canonical_nan(out_fmt)
    return bits


def _epilogue(acc, alpha, beta, cv, biasv, sa, sb, out_fmt):
    """acc float32 (..., m, n); cv, biasv float32 values or None; sa, sb float32
    arrays broadcastable to acc (or None). Returns encodings of out_fmt."""
    from .arith import fma
    f32 = lambda x: np.ascontiguousarray(x, np.float32).view(np.uint32)   # noqa: E731
    if sa is not None:
        with np.errstate(invalid="ignore", over="ignore"):
            a_eff = (sa.astype(np.float64) * sb.astype(np.float64)).astype(np.float32)  # RN(sa sb)
            if alpha != np.float32(1):
                a_eff = (a_eff.astype(np.float64) * np.float64(alpha)).astype(np.float32)
    else:
        a_eff = np.float32(alpha)
    if beta != 0 and cv is not None:
        with np.errstate(invalid="ignore", over="ignore"):
            t = (np.float64(beta) * cv.astype(np.float64)).astype(np.float32)      # RN(beta * c)
        t = np.broadcast_to(t, acc.shape)
        y = fma(f32(np.broadcast_to(a_eff, acc.shape)), f32(acc), f32(t), "fp32", **_RNE)
        y = y.view(np.float32)
    else:
        # fma(alpha, acc, +0): the exact product (float64 holds it), one rounding;
        # an exact zero product gives +0
        with np.errstate(invalid="ignore", over="ignore"):
            y = (np.asarray(a_eff, np.float64) * acc.astype(np.float64) + 0.0).astype(np.float32)
    if biasv is not None:
        y = _add32(y, np.broadcast_to(biasv, y.shape))
    return _to_out(np.ascontiguousarray(y), out_fmt)


def _values32(bits, fmt, name):
    """float32 values of encodings of fp32 / bf16 / fp16 (exact)."""
    from .conversions import from_bits
    f = get_format(fmt)
    B = V.as_bits(bits, f, name)
    if fmt == "fp32":
        return B.view(np.float32)
    return from_bits(B, f).astype(np.float32)


# ---------------------------------------------------------------------------
# split-K decisions
# ---------------------------------------------------------------------------
def _explicit_split(splitk):
    if isinstance(splitk, tuple) and len(splitk) == 2:
        S, order = splitk
        if isinstance(S, (bool, np.bool_)) or not isinstance(S, (int, np.integer)) or S < 1:
            raise ValueError(f"splitk=(S, order): S must be a positive int, got {S!r}")
        S = int(S)
        return (1, "none") if S == 1 else (S, _norm_order(order))
    if isinstance(splitk, (int, np.integer)) and not isinstance(splitk, (bool, np.bool_)) \
            and int(splitk) == 1:
        return 1, "none"
    raise TypeError(f"splitk: expected None, 'auto', 1 or (S, order) with order one of "
                    f"{list(SPLIT_ORDERS)}, got {splitk!r}")


def _mmaemu_split(profile, m, n, K, fa, fb, out_fmt, fast, splitk):
    """mmaemu's SplitDecision (S, scheme, source, verified, note) or raises ImportError /
    its SplitKUnknownError."""
    from mmaemu.platform.splitk_table import resolve_splitk
    name = {"fp8_e4m3": "e4m3", "fp8_e5m2": "e5m2"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resolve_splitk(m, n, K, a_dtype=name[fa], b_dtype=name[fb],
                              out_dtype=_MMAEMU_OUT[out_fmt], use_fast_accum=bool(fast),
                              profile=profile, splitk=splitk, layout_std=True, dry=True)


# ---------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------
def gemm(a, b, *, device, a_fmt, b_fmt=None, out_fmt, c=None, c_fmt=None, alpha=1.0, beta=0.0,
         bias=None, bias_fmt=None, scale_a=None, scale_b=None, fast_accum=False, splitk=None,
         allow_tf32=False, return_info=False):
    """``alpha * A B + beta * C (+ bias)`` as the device's cuBLASLt computes it.

    a : (..., m, k) encodings of ``a_fmt``; b : (..., k, n) encodings of ``b_fmt``
        (default ``a_fmt``); leading axes broadcast. Formats: "fp32", "tf32",
        "fp16", "bf16", "fp8_e4m3", "fp8_e5m2" (fp8 with fp8 only).
    device : a GPU or architecture name `softfloat.mma.tensor_core` takes, or
        "h100_pcie", "h100_sxm", "rtx4060".
    out_fmt : "fp32", "bf16", "fp16", "fp8_e4m3" or "fp8_e5m2".
    c, c_fmt : encodings of fp32/bf16/fp16 broadcastable to (..., m, n), added as
        beta * c in the epilogue (not read when beta is 0).
    alpha, beta : used as float32 (their nearest binary32 values).
    bias, bias_fmt : encodings of fp32/bf16/fp16, shape (n,): added last.
    scale_a, scale_b : float32 arrays (fp8 operands): per-tensor (one element),
        or row-wise (m, 1) and (1, n); alpha' = RN(scale_a * scale_b).
    fast_accum : fp8 only: no restart of the chain every 128 products.
    splitk : None (S = 1), 1, (S, order) with order "contiguous", "serial"
        (= "interleaved") or "pairwise", or "auto": the split the device's
        cuBLASLt chose, from mmaemu's recorded heuristics (fp8 on "h100_pcie" and
        "rtx4060", unbatched) when mmaemu is installed, else S = 1 (the info says
        which and why).
    allow_tf32 : float32 operands computed as tf32 on the tensor core (their 13 low
        fraction bits dropped); otherwise a binary32 FMA chain along K.
    return_info : also return a `GemmInfo`.

    Returns encodings of ``out_fmt``, shape (..., m, n) (and the info).
    """
    arch, profile, dev_name = _resolve_device(device)
    fa = _fmt(a_fmt, "a_fmt", _IN_FMTS)
    fb = fa if b_fmt is None else _fmt(b_fmt, "b_fmt", _IN_FMTS)
    fo = _fmt(out_fmt, "out_fmt", _OUT_FMTS)
    allow_tf32 = V.boolean(allow_tf32, "allow_tf32")
    fast = V.boolean(fast_accum, "fast_accum")
    return_info = V.boolean(return_info, "return_info")
    A = V.as_bits(a, get_format(fa), "a")
    B = V.as_bits(b, get_format(fb), "b")
    A, B, m, K, n, batch = V.matrix_operands("gemm", A, B)
    fp8 = fa in _FP8
    notes = []
    if fast and not fp8:
        raise ValueError("fast_accum applies to fp8 operands only (torch._scaled_mm's "
                         "use_fast_accum)")
    if (fa == "fp32") != (fb == "fp32"):
        raise ValueError(f"operand formats {fa} x {fb}: fp32 pairs with fp32 only")
    if fa == "fp32" and allow_tf32:
        from .mma import truncate_tf32
        A, B, fa, fb = truncate_tf32(A), truncate_tf32(B), "tf32", "tf32"
        notes.append("float32 operands read as tf32 (13 low fraction bits dropped)")
    unit = _unit(arch, fa, fb)
    if fp8 and profile is not None and fa == fb == "fp8_e4m3" and fo == "fp8_e5m2":
        raise ValueError(f"cuBLASLt 12.8 on the {_PLATFORM_NAME[profile]} rejects e4m3 x e4m3 "
                         f"-> e5m2 output (CUBLAS_STATUS_NOT_SUPPORTED)")
    al = _f32_scalar(alpha, "alpha")
    be = _f32_scalar(beta, "beta")
    # scales
    if (scale_a is None) != (scale_b is None):
        raise ValueError("give both scale_a and scale_b, or neither")
    sa = sb = None
    rowwise = False
    if scale_a is not None:
        sa, sb = np.asarray(scale_a), np.asarray(scale_b)
        if sa.dtype != np.float32 or sb.dtype != np.float32:
            raise TypeError(f"scale_a and scale_b must be float32 arrays, got {sa.dtype} and "
                            f"{sb.dtype}")
        if sa.size == 1 and sb.size == 1:
            sa, sb = sa.reshape(()), sb.reshape(())
        elif sa.shape == (m, 1) and sb.shape == (1, n):
            rowwise = True
        else:
            raise ValueError(f"scale_a and scale_b: expected one element each (per-tensor) or "
                             f"shapes {(m, 1)} and {(1, n)} (row-wise), got {sa.shape} and "
                             f"{sb.shape}")
    # epilogue operands
    cv = biasv = None
    if c is not None:
        if c_fmt is None:
            raise ValueError("c needs c_fmt ('fp32', 'bf16' or 'fp16')")
        cf = _fmt(c_fmt, "c_fmt", ("fp32", "bf16", "fp16"))
        cv = _values32(c, cf, "c")
        try:
            batch = np.broadcast_shapes(batch + (m, n), cv.shape)[:-2]
            if np.broadcast_shapes(cv.shape, (m, n))[-2:] != (m, n):
                raise ValueError
        except ValueError:
            raise ValueError(f"c of shape {cv.shape} does not broadcast to {(m, n)} "
                             f"(with leading axes {batch})") from None
    elif c_fmt is not None:
        raise ValueError("c_fmt given without c")
    elif be != 0:
        raise ValueError(f"beta = {beta} needs c (beta * c is added in the epilogue)")
    if bias is not None:
        if bias_fmt is None:
            raise ValueError("bias needs bias_fmt ('fp32', 'bf16' or 'fp16')")
        biasv = _values32(bias, _fmt(bias_fmt, "bias_fmt", ("fp32", "bf16", "fp16")), "bias")
        if biasv.shape != (n,):
            raise ValueError(f"bias: expected shape {(n,)}, got {biasv.shape}")
    elif bias_fmt is not None:
        raise ValueError("bias_fmt given without bias")
    # the split
    if splitk is None:
        S, order, source = 1, "none", "default S=1"
        dec = None
    elif isinstance(splitk, str):
        if splitk != "auto":
            raise ValueError(f"splitk: expected None, 'auto', 1 or (S, order), got {splitk!r}")
        S, order, source, dec = 1, "none", "default S=1", None
        if profile is None:
            notes.append(f"splitk='auto': no recorded cuBLASLt heuristics for {dev_name}; S = 1")
        elif not fp8:
            notes.append("splitk='auto': the recorded heuristics cover fp8 GEMMs only; S = 1")
        elif batch != ():
            notes.append("splitk='auto': the recorded heuristics cover unbatched GEMMs; S = 1")
        elif rowwise or bias is not None or (be != 0 and c is not None):
            notes.append("splitk='auto': the recorded heuristics cover per-tensor scales without "
                         "bias or C; S = 1")
        else:
            try:
                dec = _mmaemu_split(profile, m, n, K, fa, fb, fo, fast, "auto")
                S, order, source = dec.S, (dec.scheme if dec.S > 1 else "none"), \
                    "mmaemu heuristics"
                notes.append(f"split from mmaemu {_mmaemu_version()} ({dec.source}): {dec.note}")
            except ImportError:
                notes.append(f"splitk='auto': {_MMAEMU_INSTALL}; S = 1")
            except LookupError as e:                 # mmaemu's SplitKUnknownError
                notes.append(f"splitk='auto': the recorded heuristics do not decide this shape "
                             f"({str(e).split('. Ways out')[0]}); S = 1")
    else:
        S, order = _explicit_split(splitk)
        source, dec = "explicit", None
    if K == 0 or m == 0 or n == 0:
        acc = np.zeros(batch + (m, n), np.float32)
    else:
        A3 = np.broadcast_to(A, batch + (m, K)).reshape(-1, m, K)
        B3 = np.broadcast_to(B, batch + (K, n)).reshape(-1, K, n)
        restart = fp8 and not fast and arch in ("hopper", "ada")
        plan = _plan(K, S, order, restart)
        acc = _accumulate(unit, A3, B3, plan, order, restart).reshape(batch + (m, n))
    acc = np.broadcast_to(acc, batch + (m, n))
    out = _epilogue(acc, al, be, cv, biasv, sa, sb, fo)
    if not return_info:
        return out
    info = _info(arch, profile, dev_name, unit, fa, fb, fo, fp8, fast, S, order, source, dec,
                 rowwise, bias is not None, be != 0 and c is not None, al, restart=(
                     fp8 and not fast and arch in ("hopper", "ada")), notes=notes, mnk=(m, n, K))
    return out, info


def _mmaemu_version():
    try:
        import mmaemu
        return mmaemu.__version__
    except ImportError:
        return "(not installed)"


def _info(arch, profile, dev_name, unit, fa, fb, fo, fp8, fast, S, order, source, dec, rowwise,
          has_bias, has_c, alpha, restart, notes, mnk):
    ins = unit.instruction if unit is not None else "fma.rn.f32 (SIMT)"
    if restart:
        acc = f"{ins} chained along K, restarted every {_PROMOTE} products, chunks added in fp32"
    else:
        acc = f"{ins} chained along K" if unit is not None else "binary32 FMA chain along K"
    if S > 1:
        acc += f"; split into {S} ({order}), partial sums added in fp32"
    claim, by = "modelled", ""
    if unit is not None:
        by = "MMA-Sim 2.1.1 instruction parity (the instruction only)"
    scaled_semantics = not (rowwise or has_bias or has_c or alpha != np.float32(1))
    if fp8 and profile is not None and scaled_semantics:
        split_ok = S == 1 if dec is None else bool(dec.verified)
        why = f"split (S={S}, {order}) was never replayed on the {_PLATFORM_NAME[profile]} " \
              f"(mmaemu's verified combinations)"
        if S > 1 and dec is None:
            try:
                split_ok = bool(_mmaemu_split(profile, *mnk, fa, fb, fo, fast, (S, order)).verified)
            except ImportError:
                why = (f"split (S={S}, {order}): {_MMAEMU_INSTALL}, so whether this split was "
                       f"replayed on the hardware is not known")
        if not split_ok:
            notes.append(why)
        else:
            claim = "validated"
            by = (f"mmaemu 0.1.0 reference model (recordings of the {_PLATFORM_NAME[profile]}): "
                  f"parity tests; MMA-Sim 2.1.1 instruction parity")
    elif fp8 and profile is not None:
        notes.append("row-wise scales: torch runs them through CUTLASS kernels, modelled here "
                     "as cuBLASLt's chain and epilogue" if rowwise else
                     "bias, C or alpha != 1: the epilogue is modelled")
    if fp8 and arch not in ("hopper", "ada"):
        notes.append(f"no promotion is modelled on {arch}: fast_accum changes nothing, the "
                     f"instruction is chained along each split")
    elif fp8 and profile is None:
        rec = "H100 PCIe" if arch == "hopper" else "RTX 4060"
        notes.append(f"the same kernels as the recorded {rec} are assumed; not recorded on "
                     f"{dev_name}")
    return GemmInfo(instruction=ins, splitk=(S, order), split_source=source, claim=claim,
                    validated_by=by, device=dev_name, arch=arch, accumulation=acc,
                    notes=tuple(notes))


def scaled_mm(a8, b8, scale_a, scale_b, *, device, out_fmt, a_fmt="fp8_e4m3", b_fmt=None,
              bias=None, bias_fmt=None, fast_accum=False, splitk=None, return_info=False):
    """``torch._scaled_mm(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum)`` on
    encodings: a8 (m, k) and b8 (k, n) fp8 encodings (``a_fmt``, ``b_fmt``, default
    ``a_fmt``), per-tensor (or row-wise) float32 scales, ``out_fmt`` the out_dtype.
    torch's own refusals are kept: two e5m2 operands; a bias with an fp32 output, or
    of another format than a bf16/fp16 output. See `gemm` for the rest."""
    fa = _fmt(a_fmt, "a_fmt", _FP8)
    fb = fa if b_fmt is None else _fmt(b_fmt, "b_fmt", _FP8)
    fo = _fmt(out_fmt, "out_fmt", _OUT_FMTS)
    if fa == fb == "fp8_e5m2":
        raise ValueError("torch._scaled_mm: multiplication of two e5m2 matrices is not supported")
    if bias is not None:
        if bias_fmt is None and fo not in ("bf16", "fp16"):
            raise ValueError(f"torch._scaled_mm: a bias with a {fo} output needs bias_fmt "
                             f"('bf16' or 'fp16')")
        bf = fo if bias_fmt is None else _fmt(bias_fmt, "bias_fmt", ("bf16", "fp16"))
        if fo == "fp32":
            raise ValueError("torch._scaled_mm: bias is not supported with an fp32 output")
        if fo in ("bf16", "fp16") and bf != fo:
            raise ValueError(f"torch._scaled_mm: the bias must be {fo} for a {fo} output")
        bias_fmt = bf
    if np.ndim(a8) != 2 or np.ndim(b8) != 2:
        raise ValueError(f"scaled_mm: a8 and b8 must be matrices, got {np.ndim(a8)} and "
                         f"{np.ndim(b8)} axes")
    return gemm(a8, b8, device=device, a_fmt=fa, b_fmt=fb, out_fmt=fo, bias=bias,
                bias_fmt=bias_fmt, scale_a=scale_a, scale_b=scale_b, fast_accum=fast_accum,
                splitk=splitk, return_info=return_info)
