"""The platform interpreter: `platform_op`, conversions, sums, means and matmul
carried out under a `Platform` (presets.py), through the library's kernels.

Every rule comes from the platform's fields; every NaN pattern from the kernels
under the policy `Platform.nan_policy` derives from those fields
(nothing is patched afterwards).
"""
from __future__ import annotations

import numpy as np

from .. import _validate
from ..conversions import convert, to_bits
from ..formats import BF16, FP16, FP32, Format, get_format
from ..model_hook import model_for
from .presets import PLATFORM_OPS, Platform, get_platform

__all__ = ["platform_op", "platform_to_bits", "platform_convert", "platform_sum",
           "platform_mean", "platform_cumsum", "platform_matmul"]


def _isnan(bits: np.ndarray, f: Format) -> np.ndarray:
    return f.is_nan_bits(bits.astype(np.int64))


# --------------------------------------------------------------------------
# Conversions under a platform
# --------------------------------------------------------------------------
def _narrow(bits, src: Format, dst: Format, plat: Platform) -> np.ndarray:
    """src encodings -> dst (a narrowing or same-width conversion): the platform's
    cast rule (`Platform.cast_rule`) and cast NaN rule."""
    rule = plat.cast_rule(dst)
    if rule == "exponent_field":
        return _exponent_field(bits, src, dst)
    out = convert(bits, src, dst, "nearest_even", nan=plat.nan_policy("cast", dst),
                  subnormals=True, overflow="saturate" if rule == "saturate" else None)
    if plat.nan_rule("cast", dst) == "ones" and dst.has_nan:
        nan = _isnan(np.asarray(bits), src)
        if nan.any():
            # the NaN's sign (propagated by the kernel) with every other bit set
            ones = np.asarray(dst.sign_mask - 1, dst.dtype)
            out = np.where(nan, out | ones, out).astype(dst.dtype)
    return out


def _exponent_field(bits, src: Format, dst: Format) -> np.ndarray:
    """torch's float8_e8m0fnu cast (the ``exponent_field`` cast rule, see
    presets.py) of src encodings: read as float32 (exactly; torch converts to
    float first), |x| rounded to a power of two, to nearest with ties upward,
    by the kernels' nearest_away rounding into ``dst``; 0 and the float32
    subnormals up to 2**-127 give 2**-127 and those above it 2**-126 (torch
    rounds the exponent field, which is 0 for them); NaN and +-inf give NaN."""
    from ..conversions import from_bits
    b = _validate.as_bits(bits, src)
    if src != FP32:
        b = convert(b, src, FP32, "nearest_even", subnormals=True)   # exact widening
    v = np.abs(from_bits(b, FP32))
    tiny = np.float64(2.0 ** -127)
    v = np.where(v < 2.0 ** -126, np.where(v > tiny, 2.0 ** -126, tiny), v)
    v = np.where(np.isinf(v), np.nan, v)
    return to_bits(v, dst, "nearest_away", subnormals=True)


def _widen(bits, src: Format, dst: Format, plat: Platform) -> np.ndarray:
    """src encodings -> a wider dst (exact), with the widen NaN rule (``keep``:
    the payload shifted, not quieted, done by the kernel's NAN_KEEP mode).
    fp16/bf16 -> fp32 take numpy's exact widening (bf16: the bits moved up 16
    places) for every non-NaN encoding, the general kernel (`_widen_slow`, the
    twin a test compares with over every encoding) for the NaNs."""
    from .._kernels.hw import flushes
    b = np.asarray(bits)
    if dst != FP32 or src not in (FP16, BF16) or b.dtype != np.uint16 or flushes():
        return _widen_slow(bits, src, dst, plat)
    if src == BF16:
        out = b.astype(np.uint32) << np.uint32(16)
    else:
        out = b.view(np.float16).astype(np.float32).view(np.uint32)
    nan = src.is_nan_bits(b)
    if nan.any():
        out[nan] = _widen_slow(b[nan], src, dst, plat)
    return out


def _widen_slow(bits, src: Format, dst: Format, plat: Platform) -> np.ndarray:
    return convert(bits, src, dst, "nearest_even", nan=plat.nan_policy("widen", src),
                   subnormals=True)


def platform_to_bits(x, fmt, platform=None) -> np.ndarray:
    """Round float values into ``fmt`` the way ``platform`` does (round to nearest even).

    float64 input follows ``platform.float64_route`` (``fp32``: through float32, a
    double rounding, as ``torch.tensor(x, dtype=torch.half)`` and ``.half()`` of a
    float64 tensor); float32 and float16 input round directly. NaNs get the
    platform's cast rule.
    """
    plat = get_platform(platform)
    a = _validate.as_values(x)
    f = get_format(fmt)
    src = _validate.HOST_FORMATS[a.dtype]
    if src.name == "fp64" and plat.float64_route == "fp32" and f.nbits < 32:
        b32 = to_bits(a, FP32, "nearest_even", nan="propagate", subnormals=True)
        return _narrow(b32, FP32, f, plat)
    if src.name == "fp64" and (plat.cast_rule(f) != "ieee"
                               or plat.nan_rule("cast", f) == "ones"):
        # the platform's cast rules are for float32 sources: float64 is rounded to
        # float32 first (exactly where the value is a float32)
        b32 = to_bits(a, FP32, "nearest_even", nan="propagate", subnormals=True)
        return _narrow(b32, FP32, f, plat)
    if src.name == "fp64":
        return to_bits(a, f, "nearest_even", nan=plat.nan_policy("cast", f),
                       subnormals=True)
    return platform_convert(_validate.int_view(a).astype(src.dtype, copy=False), src, f, plat)


def platform_convert(bits, src_fmt, dst_fmt, platform=None) -> np.ndarray:
    """Convert encodings between formats the way ``platform`` does (RNE; the widen
    NaN rule when ``dst`` is wider, the cast rule otherwise)."""
    plat = get_platform(platform)
    s, d = _validate.source_format(src_fmt), get_format(dst_fmt)
    b = _validate.as_bits(bits, s)
    if s == d:
        return b.copy()
    if d.nbits > s.nbits and d.ebits >= s.ebits and d.mbits >= s.mbits:
        return _widen(b, s, d, plat)
    return _narrow(b, s, d, plat)


# --------------------------------------------------------------------------
# Operations
# --------------------------------------------------------------------------
def _arith():
    try:
        from .. import arith
    except ImportError as e:  # pragma: no cover - arith is part of the package
        raise ImportError("softfloat.arith is needed for platform operations") from e
    for name in ("add", "sub", "mul", "div", "sqrt", "fma"):
        if not hasattr(arith, name):
            raise NotImplementedError(f"softfloat.arith.{name} is not available yet")
    return arith


def _is_scalar(v) -> bool:
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("bool is not a scalar operand; pass a float")
    if isinstance(v, (float, int, np.floating, np.integer)) and not isinstance(v, np.ndarray):
        return not isinstance(v, np.unsignedinteger)
    return False


class _Env:
    """The formats and rules one operation runs with."""

    def __init__(self, plat: Platform, fmt: Format):
        self.plat, self.fmt = plat, fmt
        self.cf = plat.compute_format(fmt)
        self.wide = self.cf is not fmt
        self.ar = _arith()
        # the platform's NaN rule for results in the compute format, fresh NaN
        # included: the kernels produce every pattern themselves
        self.nanpol = plat.nan_policy("result", self.cf)

    # values in the compute format -------------------------------------
    def tensor(self, bits):
        b = _validate.as_bits(bits, self.fmt)
        return _widen(b, self.fmt, self.cf, self.plat) if self.wide else b

    def scalar(self, s, op):
        if isinstance(s, (int, np.integer)):
            if abs(int(s)) >= 1 << 53:
                raise ValueError(f"integer scalar {s} is not exactly a float64")
        v = np.asarray(float(s), np.float64)
        if self.plat.scalar_rule(op) == "narrow" or not self.wide:
            b = platform_to_bits(v, self.fmt, self.plat)
            return _widen(b, self.fmt, self.cf, self.plat) if self.wide else b
        return platform_to_bits(v, self.cf, self.plat)

    def const(self, value):
        return to_bits(np.asarray(value, np.float64), self.cf, "nearest_even")

    def operand(self, v, op):
        return self.scalar(v, op) if _is_scalar(v) else self.tensor(v)

    # arithmetic in the compute format ---------------------------------
    def run(self, name, *xs):
        return getattr(self.ar, name)(*xs, self.cf, "nearest_even", nan=self.nanpol,
                                      subnormals=True)

    def neg(self, x):
        return (x ^ np.asarray(self.cf.sign_mask, self.cf.dtype)).astype(self.cf.dtype)

    def result(self, r):
        return _narrow(r, self.cf, self.fmt, self.plat) if self.wide else r


def platform_op(op, *operands, fmt, platform=None, alpha=None, value=None) -> np.ndarray:
    """What ``platform`` computes for ``op`` on ``fmt`` operands.

    Parameters
    ----------
    op : str
        ``add``, ``sub`` (``alpha=``: a + alpha*b), ``mul``, ``div``, ``sqrt``, ``neg``,
        ``abs``, ``relu``, ``fma`` (a*b + c), ``addcmul`` (x + value*t1*t2),
        ``addcdiv`` (x + value*t1/t2), ``lerp`` (x + w*(end - x)); see `PLATFORM_OPS`.
    operands
        Tensors are arrays of ``fmt`` encodings (its uint dtype); a Python/numpy
        float or int is a *scalar* operand, read by ``platform.scalars``. They
        broadcast like NumPy.
    fmt : Format or str
    platform : Platform or str, default ``"ieee"``
    alpha, value : float, optional
        torch's ``alpha`` of add/sub and ``value`` of addcmul/addcdiv.

    Returns
    -------
    ndarray of ``fmt.dtype`` encodings.

    Example: ``platform_op("div", x, 0.3, fmt="fp16", platform="torch_cuda")`` is
    ``x * RN32(1/RN32(0.3))`` rounded to half, as torch's CUDA kernel computes it.
    """
    if not isinstance(op, str) or op not in PLATFORM_OPS:
        raise ValueError(f"unknown op {op!r}; expected one of {sorted(PLATFORM_OPS)}")
    if len(operands) != PLATFORM_OPS[op]:
        raise TypeError(f"{op} takes {PLATFORM_OPS[op]} operands, got {len(operands)}")
    if alpha is not None and op not in ("add", "sub"):
        raise TypeError(f"alpha= is for add and sub, not {op}")
    if value is not None and op not in ("addcmul", "addcdiv"):
        raise TypeError(f"value= is for addcmul and addcdiv, not {op}")
    plat = get_platform(platform)
    f = get_format(fmt)
    if all(_is_scalar(o) for o in operands):
        raise TypeError(f"{op}: at least one operand must be an array of {f.name} encodings")
    env = _Env(plat, f)
    direct = _direct_policy(env, op, operands, alpha)
    if direct is not None:
        # One correctly rounded op in fmt equals the platform's opmath op + narrowing
        # (double rounding is innocuous: opmath precision >= 2p + 2, Figueroa 1995),
        # and every NaN ends as the cast pattern: skip the detour through opmath.
        fn = getattr(env.ar, op)
        xs = [_validate.as_bits(o, f) for o in operands]
        if op == "sub" and alpha is not None and float(alpha) == -1.0:
            fn = env.ar.add
        elif op == "add" and alpha is not None and float(alpha) == -1.0:
            fn = env.ar.sub
        return fn(*xs, f, "nearest_even", nan=direct, subnormals=True)

    if op in ("neg", "abs", "relu"):
        b = _validate.as_bits(operands[0], f)
        if op == "relu":
            nan = _isnan(b, f)
            neg = ((b.astype(np.int64) & f.sign_mask) != 0) & ~nan
            if plat.relu_negzero == "keep":
                neg &= (b.astype(np.int64) & (f.sign_mask - 1)) != 0
            return np.where(neg, np.zeros((), f.dtype), b).astype(f.dtype)
        if plat.sign_ops == "arith" and _isnan(b, f).any():
            # through opmath: NaNs get the result rule (sign ops never round otherwise)
            x = env.tensor(b)
            r = env.neg(x) if op == "neg" else (x & np.asarray(env.cf.sign_mask - 1, env.cf.dtype))
            r = np.where(_isnan(x, env.cf), env.run("add", x, x), r)
            return env.result(r)
        m = np.asarray(f.sign_mask, f.dtype)
        return (b ^ m) if op == "neg" else (b & np.asarray(f.sign_mask - 1, f.dtype))

    if op == "sqrt":
        return env.result(env.run("sqrt", env.tensor(operands[0])))

    if op in ("add", "sub"):
        a_, b_ = operands
        A = env.operand(a_, op)
        B = env.operand(b_, op)
        if op == "sub":
            B = env.neg(B)
        if alpha is None or float(alpha) == 1.0:
            return env.result(env.run("add", A, B))
        if float(alpha) == -1.0:
            return env.result(env.run("add", A, env.neg(B)))
        al = env.scalar(alpha, "add_alpha")
        if "add_alpha" in plat.fused:
            return env.result(env.run("fma", np.broadcast_to(al, np.shape(B)), B, A))
        return env.result(env.run("add", A, env.run("mul", al, B)))

    if op == "mul":
        return env.result(env.run("mul", env.operand(operands[0], "mul"),
                                  env.operand(operands[1], "mul")))

    if op == "div":
        a_, b_ = operands
        A = env.operand(a_, "div")
        if _is_scalar(b_) and plat.scalar_div == "reciprocal" and env.wide:
            inv = env.run("div", env.const(1.0), env.scalar(b_, "div"))
            return env.result(env.run("mul", A, inv))
        return env.result(env.run("div", A, env.operand(b_, "div")))

    if op == "fma":
        xs = [env.operand(o, "mul") for o in operands]
        return env.result(env.run("fma", *xs))

    if op in ("addcmul", "addcdiv"):
        x, t1, t2 = (env.operand(o, op) for o in operands)
        v = 1.0 if value is None else float(value)
        fused = op in plat.fused
        if op == "addcmul":
            if v == 1.0:
                if fused:
                    return env.result(env.run("fma", t1, t2, x))
                return env.result(env.run("add", x, env.run("mul", t1, t2)))
            vs = env.scalar(v, op)
            if plat.addcmul_form == "value_t1":
                p1 = env.run("mul", vs, t1)
                if fused:
                    return env.result(env.run("fma", p1, t2, x))
                return env.result(env.run("add", x, env.run("mul", p1, t2)))
            prod = env.run("mul", t1, t2)
            if fused:
                return env.result(env.run("fma", np.broadcast_to(vs, np.shape(prod)), prod, x))
            return env.result(env.run("add", x, env.run("mul", vs, prod)))
        # addcdiv
        if v == 1.0:
            return env.result(env.run("add", x, env.run("div", t1, t2)))
        vs = env.scalar(v, op)
        if plat.addcdiv_form == "value_t1":
            return env.result(env.run("add", x, env.run("div", env.run("mul", vs, t1), t2)))
        q = env.run("div", t1, t2)
        if fused:
            return env.result(env.run("fma", np.broadcast_to(vs, np.shape(q)), q, x))
        return env.result(env.run("add", x, env.run("mul", vs, q)))

    # lerp: |w| < 0.5 ? x + w*(end - x) : end - (end - x)*(1 - w)   (torch's Lerp.h)
    x_, end_, w_ = operands
    X = env.operand(x_, "lerp")
    E = env.operand(end_, "lerp")
    W = env.operand(w_, "lerp")
    shp = np.broadcast_shapes(np.shape(X), np.shape(E), np.shape(W))
    # (np.ascontiguousarray makes 0-d arrays 1-d: the shape is put back)
    X, E, W = (np.ascontiguousarray(t).reshape(shp) for t in np.broadcast_arrays(X, E, W))
    diff = env.run("add", E, env.neg(X))
    one = np.broadcast_to(env.const(1.0), W.shape)
    omw = env.run("add", one, env.neg(W))
    wv = np.abs(_values(W, env.cf))
    small = wv < 0.5
    if "lerp" in plat.fused:
        lo = env.run("fma", W, diff, X)
        hi = env.run("fma", env.neg(diff), omw, E)
    else:
        lo = env.run("add", X, env.run("mul", W, diff))
        hi = env.run("add", E, env.neg(env.run("mul", diff, omw)))
    return env.result(np.where(small, lo, hi).astype(env.cf.dtype))


# Set to False to force every operation through the opmath detour (tests compare both).
USE_DIRECT_PATH = True


def _direct_policy(env: _Env, op, operands, alpha):
    """The nan= policy for computing ``op`` directly in the operand format, or None
    when the platform's detour through opmath could give a different result."""
    if not (USE_DIRECT_PATH and env.wide and op in ("add", "sub", "mul", "div", "sqrt")):
        return None
    if alpha is not None and abs(float(alpha)) != 1.0:
        return None
    if any(_is_scalar(o) for o in operands):
        return None
    cf, f = env.cf, env.fmt
    # opmath precision >= 2p + 2, and its range reaches p + 1 bits below fmt's
    # smallest subnormal (so that a tiny result near a midpoint of fmt is exact in opmath)
    if cf.precision < 2 * f.precision + 2 or cf.emax < f.emax \
            or cf.emin - cf.mbits > f.emin - f.mbits - f.precision - 1:
        return None
    res_rule = env.plat.nan_rule("result", env.cf)
    cast_rule = env.plat.nan_rule("cast", env.fmt)
    if res_rule == "propagate" or res_rule == "keep" or not isinstance(cast_rule, (int, np.integer)) \
            and cast_rule != "canonical":
        return None
    return "canonical" if cast_rule == "canonical" else int(cast_rule)


def _values(bits, f: Format) -> np.ndarray:
    from ..conversions import from_bits
    return from_bits(bits, f)


# --------------------------------------------------------------------------
# Reductions and matmul (the platform's accumulate format; order: sequential
# or pairwise; named device orders are modelled as pairwise and only bounded)
# --------------------------------------------------------------------------
def _acc_env(plat: Platform, f: Format) -> _Env:
    acc = plat.reduction.accumulate
    p = plat if acc is None else plat.replace(opmath=acc)
    return _Env(p, f)


def _reduce_add(env: _Env, x: np.ndarray, order: str) -> np.ndarray:
    """Sum along axis 0 of compute-format encodings, in ``order``."""
    n = x.shape[0]
    if n == 0:
        return np.broadcast_to(env.const(0.0), x.shape[1:]).copy()
    if order == "pairwise":
        while x.shape[0] > 1:
            h = x.shape[0] // 2
            s = env.run("add", x[:h], x[h:2 * h])
            x = np.concatenate([s, x[2 * h:]]) if x.shape[0] % 2 else s
        # the accumulator starts at +0, as a float32 reduction's identity: -0 sums to +0
        return env.run("add", env.const(0.0), x[0])
    acc = np.broadcast_to(env.const(0.0), x.shape[1:]).copy()
    for i in range(n):
        acc = env.run("add", acc, x[i])
    return acc


def _reduce_setup(what, bits, fmt, axis, platform, order, kw):
    """Shared start of `platform_sum` and `platform_mean`: (platform, format,
    the registered model ``fn`` to call when there is one and no ``order`` is
    forced, else None and ``(env, x, order)``: the operands in the accumulate
    format with the reduced axis first, contiguous, and the checked order)."""
    plat = get_platform(platform)
    f = get_format(fmt)
    fn = model_for(plat.name, what) if order is None else None
    if fn is not None and f in (FP16, BF16, FP32):
        return plat, f, fn, None
    if kw:
        raise TypeError(f"unexpected keyword(s) {sorted(kw)} for platform {plat.name!r}")
    b = _validate.as_bits(bits, f)
    order = order or (plat.reduction.order if plat.reduction.order in ("sequential", "pairwise")
                      else "pairwise")
    if order not in ("sequential", "pairwise"):
        raise ValueError(f"order must be 'sequential' or 'pairwise', got {order!r}")
    env = _acc_env(plat, f)
    x = env.tensor(b)
    x = x.reshape(-1) if axis is None else np.moveaxis(x, axis, 0)
    return plat, f, None, (env, np.ascontiguousarray(x), order)


def platform_sum(bits, fmt, axis=None, platform=None, order=None, **kw) -> np.ndarray:
    """Sum of ``fmt`` encodings along ``axis`` (None: all). Where the platform has
    a registered bit-exact model (`softfloat.model_hook`; ``torch_cpu``:
    `softfloat.platforms.torch_cpu.torch_cpu_sum`, keywords such as ``threads=``) and no
    ``order`` is forced, that model. Otherwise accumulated in the platform's
    ``reduction.accumulate`` format starting from +0, in ``order`` (default: the
    platform's when it is ``sequential``/``pairwise``, else ``pairwise`` -- a
    device order such as ``cuda_reduce`` is not transcribed, so the result is a
    model to bound against, bit-exact only where the accumulation is exact),
    rounded once to ``fmt``."""
    plat, f, fn, prep = _reduce_setup("sum", bits, fmt, axis, platform, order, kw)
    if fn is not None:
        return fn(bits, f, axis, **kw)
    env, x, order = prep
    return env.result(_reduce_add(env, x, order))


def platform_mean(bits, fmt, axis=None, platform=None, order=None, **kw) -> np.ndarray:
    """Mean: the platform's registered model when it has one and no ``order`` is
    forced; else `platform_sum` in the accumulate format, then ``sum / N`` or
    ``sum * RN(1/N)`` (``reduction.mean``), rounded once to ``fmt``."""
    plat, f, fn, prep = _reduce_setup("mean", bits, fmt, axis, platform, order, kw)
    if fn is not None:
        return fn(bits, f, axis, **kw)
    env, x, order = prep
    n = x.shape[0]
    s = _reduce_add(env, x, order)
    nb = np.broadcast_to(env.const(float(n)), s.shape)
    if plat.reduction.mean == "reciprocal":
        inv = env.run("div", env.const(1.0), env.const(float(n)))
        m = env.run("mul", s, np.broadcast_to(inv, s.shape))
    else:
        m = env.run("div", s, nb)
    return env.result(m)


def platform_matmul(a, b, fmt, platform=None, order=None, **kw) -> np.ndarray:
    """``a @ b`` for 2-D arrays of ``fmt`` encodings: the platform's registered
    model (``torch_cpu``: `softfloat.platforms.torch_cpu.torch_cpu_matmul`, fp16/bf16,
    m, n >= 2, layouts read from the arrays' strides) unless
    ``order="sequential"`` is forced; otherwise products and sums in the
    platform's accumulate format (fma, sequential over k), rounded once to
    ``fmt`` -- a model to bound against, not a transcription."""
    plat = get_platform(platform)
    f = get_format(fmt)
    fn = model_for(plat.name, "matmul") if order is None else None
    if (fn is not None and f in (FP16, BF16) and np.ndim(a) == 2 and np.ndim(b) == 2
            and np.shape(a)[0] >= 2 and np.shape(b)[1] >= 2):
        return fn(a, b, f, **kw)
    if kw:
        raise TypeError(f"unexpected keyword(s) {sorted(kw)} for platform {plat.name!r}")
    if order not in (None, "sequential"):
        raise ValueError(f"order must be None or 'sequential', got {order!r}")
    A, B = _validate.as_bits(a, f), _validate.as_bits(b, f)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"matmul needs 2-D operands with matching inner dimension, got "
                         f"{A.shape} and {B.shape}")
    env = _acc_env(plat, f)
    Aw, Bw = env.tensor(A), env.tensor(B)
    m, k = A.shape
    n = B.shape[1]
    acc = np.broadcast_to(env.const(0.0), (m, n)).copy()
    for i in range(k):
        ai = np.ascontiguousarray(np.broadcast_to(Aw[:, i:i + 1], (m, n)))
        bi = np.ascontiguousarray(np.broadcast_to(Bw[i:i + 1, :], (m, n)))
        acc = env.run("fma", ai, bi, acc)
    return env.result(acc)


def platform_cumsum(bits, fmt, axis, platform=None, **kw) -> np.ndarray:
    """Cumulative sum of ``fmt`` encodings along ``axis`` by the platform's
    registered model (`softfloat.model_hook`; ``torch_cpu``: sequential in the
    accumulate type, each output rounded to ``fmt``); ValueError where the
    platform has none."""
    plat = get_platform(platform)
    fn = model_for(plat.name, "cumsum")
    if fn is None:
        raise ValueError(f"platform {plat.name!r} has no cumsum model")
    return fn(bits, fmt, axis, **kw)
