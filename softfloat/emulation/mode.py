"""The dispatch mode: every aten op that reaches it is computed by a model
(elementwise.py, reductions.py, gemm.py), or classified as exact (data
movement, comparisons, integer ops, fills) or run natively and counted."""
from __future__ import annotations

import torch
from torch.utils._pytree import tree_flatten
from torch.utils._python_dispatch import TorchDispatchMode

from . import elementwise as ew
from . import gemm, reductions
from .device import EmulatedDevice, EmulationError
from .encode import FORMATS
from .report import Counter


# ---- the op table: functional name -> handler(args, kwargs, out_dtype) -----
def _binary(op):
    return lambda a, k, o: ew.binary(op, a[0], a[1], alpha=k.get("alpha"), out_dtype=o) \
        if k.keys() <= {"alpha"} else None


def _rsub(a, k, o):
    return ew.binary("sub", a[1], a[0], alpha=k.get("alpha"), out_dtype=o) \
        if k.keys() <= {"alpha"} else None


def _div(a, k, o):
    return ew.binary("div", a[0], a[1], out_dtype=o) if k.get("rounding_mode") is None else None


def _unary(op):
    return lambda a, k, o: ew.unary(op, a[0], o) if not k else None


def _addc(op):
    return lambda a, k, o: ew.ternary(op, a[0], a[1], a[2], value=k.get("value"), out_dtype=o)


def _lerp(a, k, o):
    return ew.ternary("lerp", a[0], a[1], a[2], out_dtype=o)


def _pow(a, k, o):
    if isinstance(a[0], torch.Tensor) and not isinstance(a[1], torch.Tensor):
        return ew.pow_scalar(a[0], a[1], o)
    return None


def _to_copy(a, k, o):
    x = a[0]
    dt = k.get("dtype") or x.dtype
    if dt == x.dtype or dt not in FORMATS or (x.dtype not in FORMATS
                                               and x.dtype != torch.float64):
        return None
    r = ew.cast(x, dt)
    if r is None:
        return None
    if x.dtype == torch.float64:
        return r, "proof", "IEEE round to nearest even, through float32 as c10 does"
    if torch.finfo(dt).bits >= torch.finfo(x.dtype).bits and torch.finfo(dt).eps <= \
            torch.finfo(x.dtype).eps and torch.finfo(dt).max >= torch.finfo(x.dtype).max:
        return r, "exact", "torch_cuda: exact widening"
    fp8 = (torch.float8_e4m3fn, torch.float8_e5m2)
    if dt in fp8 or x.dtype in fp8:
        return r, "modelled", "torch_cuda: c10 float8 cast through float32"
    return r, "proof", "IEEE round to nearest even (torch_cuda NaN pattern)"


def _reduce(what):
    def h(a, k, o):
        dim = a[1] if len(a) > 1 else k.get("dim")
        keep = a[2] if len(a) > 2 else k.get("keepdim", False)
        return reductions.sum_mean(what, a[0], dim, keep, k.get("dtype"), o)
    return h


FUNCTIONAL = {
    "add": _binary("add"), "sub": _binary("sub"), "mul": _binary("mul"), "div": _div,
    "rsub": _rsub, "neg": _unary("neg"), "abs": _unary("abs"), "relu": _unary("relu"),
    "sqrt": _unary("sqrt"), "addcmul": _addc("addcmul"), "addcdiv": _addc("addcdiv"),
    "lerp": _lerp, "pow": _pow, "_to_copy": _to_copy, "sum": _reduce("sum"),
    "mean": _reduce("mean"),
}

# computed in float32 and rounded once (16-bit operands); native for float32
OPMATH = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "sigmoid", "rsqrt",
    "reciprocal", "erf", "sin", "cos", "gelu", "silu", "softplus", "elu", "leaky_relu",
    "hardswish", "mish", "pow", "gelu_backward", "silu_backward", "sigmoid_backward",
    "tanh_backward", "softplus_backward", "elu_backward", "leaky_relu_backward",
    "_softmax", "_safe_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data",
    "native_layer_norm", "native_layer_norm_backward", "_fused_rms_norm",
    "_fused_rms_norm_backward", "nll_loss_forward", "nll_loss_backward", "mse_loss",
    "mse_loss_backward", "l1_loss", "smooth_l1_loss", "smooth_l1_loss_backward",
    "binary_cross_entropy_with_logits", "logsumexp", "var", "std", "var_mean",
    "std_mean", "norm", "linalg_vector_norm", "cumsum", "prod", "native_group_norm",
    "native_group_norm_backward", "native_batch_norm", "native_batch_norm_backward",
    "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
    "embedding_dense_backward", "clamp", "hardtanh", "hardtanh_backward",
}

# no rounding: data movement, selection, comparisons, fills, bookkeeping
EXACT = {
    "clone", "detach", "alias", "lift_fresh", "lift_fresh_copy", "_local_scalar_dense",
    "cat", "stack", "index", "index_select", "gather", "scatter", "index_put", "masked_fill",
    "where", "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum", "clamp_min",
    "clamp_max", "amax", "amin", "max", "min", "argmax", "argmin", "zeros", "ones",
    "zeros_like", "ones_like", "empty", "empty_like", "empty_strided", "full", "full_like",
    "fill", "fill_", "zero_", "zero", "new_zeros", "new_ones", "new_empty", "new_full",
    "new_empty_strided", "arange", "constant_pad_nd", "threshold_backward", "sign",
    "logical_not", "logical_and", "logical_or", "isnan", "isinf", "isfinite", "embedding",
    "slice_backward", "select_backward", "expand_copy", "repeat", "flip", "roll", "tril",
    "triu", "masked_select", "nonzero", "topk", "sort", "all", "any", "scalar_tensor",
    "set_", "resize_", "copy_", "_to_copy", "contiguous", "_unsafe_view", "view",
    "_efficientzerotensor", "split_with_sizes", "unbind", "split", "tensor_split",
    "_reshape_alias", "narrow", "diagonal", "t", "transpose", "permute", "unsqueeze",
    "squeeze", "expand", "as_strided", "select", "slice", "unfold", "bitwise_not",
    "bitwise_and", "bitwise_or", "relu", "neg", "abs", "equal", "is_nonzero", "item",
    "_has_compatible_shallow_copy_type", "record_stream", "sym_size", "sym_stride",
    "sym_numel", "sym_storage_offset", "dim", "size", "stride", "numel",
}


def _functional(func):
    """aten.add_.Tensor -> aten.add.Tensor (None when there is none)."""
    name = func.overloadpacket.__name__
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else None
    if base is None:
        return None
    packet = getattr(torch.ops.aten, base, None)
    return getattr(packet, func._overloadname, None) if packet is not None else None


def _dtype_of(r):
    ts = [t for t in tree_flatten(r)[0] if isinstance(t, torch.Tensor)]
    return str(ts[0].dtype).replace("torch.", "") if ts else "-"


def _floating(values):
    return [t.dtype for t in tree_flatten(values)[0]
            if isinstance(t, torch.Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex)]


class EmulateMode(TorchDispatchMode):
    """Computes each aten op as ``device`` does (see the package docstring)."""

    def __init__(self, device: EmulatedDevice):
        super().__init__()
        self.device = device
        self.counter = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self._check_cpu(func, args, kwargs)
        name = f"{func.overloadpacket._qualified_op_name.replace('::', '.')}.{func._overloadname}"
        got = self._model(func, args, kwargs)
        if got is not None:
            r, claim, model = got
            self.counter.add(name, _dtype_of(r), claim, model)
            return r
        return self._native(func, name, args, kwargs)

    # ---- models ----------------------------------------------------------
    def _model(self, func, args, kwargs):
        if func.namespace != "aten":
            return None
        name = func.overloadpacket.__name__
        if name in gemm.GEMMS:
            return gemm.run(self.device, name, func, args, kwargs)
        out = kwargs.get("out")
        if isinstance(out, torch.Tensor) and name in FUNCTIONAL:
            k = {kk: v for kk, v in kwargs.items() if kk != "out"}
            got = FUNCTIONAL[name](args, k, out.dtype)
            if got is None:
                return None
            r, claim, model = got
            if tuple(out.shape) != tuple(r.shape):
                out.resize_(r.shape)
            out.copy_(r)
            return out, claim, model
        if name in FUNCTIONAL:
            return FUNCTIONAL[name](args, kwargs, None)
        if name == "copy_":
            dst, src = args[0], args[1]
            if isinstance(src, torch.Tensor) and src.dtype != dst.dtype:
                got = _to_copy((src,), {"dtype": dst.dtype}, None)
                if got is None:
                    return None
                dst.copy_(got[0])
                return dst, got[1], got[2]
            return None
        fn = _functional(func)
        if fn is not None and args and isinstance(args[0], torch.Tensor):
            base = fn.overloadpacket.__name__
            self_ = args[0]
            if base in FUNCTIONAL:
                got = FUNCTIONAL[base](args, kwargs, self_.dtype)
            elif base in OPMATH:
                got = reductions.opmath(fn, args, kwargs)
            else:
                got = None
            if got is None:
                return None
            r, claim, model = got
            if r.dtype != self_.dtype:
                r = ew.cast(r, self_.dtype)
            self_.copy_(r)
            return self_, claim, model
        if name in OPMATH:
            return reductions.opmath(func, args, kwargs)
        return None

    # ---- everything else -------------------------------------------------
    def _native(self, func, name, args, kwargs):
        short = func.overloadpacket.__name__
        if func.namespace != "aten" or short in EXACT or func.is_view:
            r = func(*args, **kwargs)
            self.counter.add(name, _dtype_of(r), "exact", "no rounding (data movement)")
            return r
        if torch.Tag.nondeterministic_seeded in func.tags:
            r = func(*args, **kwargs)
            self.counter.add(name, _dtype_of(r), "native", "torch CPU generator (not CUDA's)")
            return r
        floats = _floating((args, kwargs))
        if not floats:
            r = func(*args, **kwargs)
            if not _floating(r):
                self.counter.add(name, _dtype_of(r), "exact", "integer/bool op")
                return r
            floats = _floating(r)
            if self.device.strict:
                raise EmulationError(self._why(name, floats))
            self.counter.add(name, _dtype_of(r), "native", "torch CPU")
            return r
        if self.device.strict:
            raise EmulationError(self._why(name, floats))
        r = func(*args, **kwargs)
        self.counter.add(name, _dtype_of(r), "native", "torch CPU")
        return r

    def _why(self, name, floats):
        dts = sorted({str(d).replace("torch.", "") for d in floats})
        bad = [d for d in floats if d not in FORMATS]
        if bad:
            return (f"sf.emulate({self.device.name!r}, strict=True): {name} on "
                    f"{', '.join(dts)}: dtype {str(bad[0]).replace('torch.', '')} is not "
                    f"emulated (supported: float32, float16, bfloat16, float8_e4m3fn, "
                    f"float8_e5m2)")
        return (f"sf.emulate({self.device.name!r}, strict=True): no model of {name} on "
                f"{', '.join(dts)} (it would run natively on the CPU)")

    @staticmethod
    def _check_cpu(func, args, kwargs):
        for t in tree_flatten((args, kwargs))[0]:
            dev = t.device if isinstance(t, torch.Tensor) else t if isinstance(t, torch.device) \
                else None
            if dev is not None and dev.type not in ("cpu", "meta"):
                raise EmulationError(
                    f"sf.emulate computes CPU tensors as the emulated GPU would; {func} got a "
                    f"{dev.type} tensor or device. Run the program on the CPU (without "
                    f".cuda() / device='cuda').")
