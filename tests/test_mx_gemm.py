"""fp8 GEMM models and block-scaled MMA (softfloat.mx_gemm).

Oracles: MMA-Sim 2.1.1 (the optional ``mmasim`` test extra; those tests skip with a
reason without it): its Hopper ``WGMMA`` chained along K (fast accumulation) and
per 128-product interval with float32 additions (promotion), its ``MMABlockScale``
(RTX Blackwell) and ``TCGen05MMABlockScale`` (Blackwell) for block-scaled MMA. Without
mmasim: the promotion and padding logic against softfloat.mma's instructions with
numpy float32 additions, and the idealised block-scaled model against exact
Fraction block dots."""
from fractions import Fraction
import warnings

import numpy as np
import pytest

import softfloat as sf
from softfloat import mx, mx_gemm
from softfloat import mma as M

import exact_reference as O

F32 = sf.get_format("fp32")

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch
        from mmasim.nv_ptx import WGMMA, MMABlockScale, TCGen05MMABlockScale
    HAVE_MMASIM = True
except Exception:                     # not installed (an optional test extra)
    HAVE_MMASIM = False
needs_mmasim = pytest.mark.skipif(not HAVE_MMASIM, reason="mmasim (test extra) not importable")

_TORCH8 = {"fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}


def _rne32(v: Fraction) -> Fraction:
    if v == 0:
        return Fraction(0)
    b, _ = O.round_exact(int(v < 0), abs(v), F32, "nearest_even")
    return O.decode(b, F32).value


def _fp8(seed, shape, fmt="fp8_e4m3", positive=False, special=False):
    """fp8 encodings: N(0, 16) values with a spread of exponents; ``special``: also
    zeros, subnormals, the largest values and NaNs (and infinities for e5m2)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-6, 5, shape))
    if positive:
        x = np.abs(x)
    f = sf.get_format(fmt)
    if special:
        p = rng.random(shape)
        x[p < 0.05] = 0.0
        x[(p >= 0.05) & (p < 0.1)] = float(f.smallest_subnormal) * 3
        x[(p >= 0.1) & (p < 0.12)] = -float(f.max)
        x[(p >= 0.12) & (p < 0.122)] = np.nan
        if f.has_inf:
            x[(p >= 0.122) & (p < 0.124)] = np.inf
    with np.errstate(over="ignore", invalid="ignore"):
        return sf.to_bits(x, f, overflow="saturate")


def _t8(codes, fmt):
    return torch.from_numpy(np.ascontiguousarray(codes)).view(getattr(torch, _TORCH8[fmt]))


def mmasim_fp8(A, B, fa, fb, N=None, scales=None):
    """MMA-Sim's Hopper fp8 wgmma: the whole K (N None), or per N-interval from
    c = 0, each partial sum (times RN(sa * sb)) added in float32."""
    op = WGMMA("Hopper", f"m64n8k32.f32.{fa[4:]}.{fb[4:]}")
    ta, tb = _t8(A, fa), _t8(B, fb)
    m, K = A.shape
    n = B.shape[1]
    if N is None:
        return op(ta, tb, torch.zeros(m, n)).double().numpy()
    acc = torch.zeros(m, n)
    for j, k0 in enumerate(range(0, K, N)):
        part = op(ta[:, k0:k0 + N], tb[k0:k0 + N], torch.zeros(m, n))
        if scales is not None:
            s = torch.from_numpy((scales[0][:, j:j + 1].astype(np.float64)
                                  * scales[1][j:j + 1, :]).astype(np.float32))
            part = part * s
        acc = acc + part
    return acc.double().numpy()


@needs_mmasim
@pytest.mark.parametrize("fa, fb", [("fp8_e4m3", "fp8_e4m3"), ("fp8_e5m2", "fp8_e5m2"),
                                    ("fp8_e5m2", "fp8_e4m3")])
@pytest.mark.parametrize("model, N", [("hopper_fp8_fast", None), ("hopper_fp8_promote128", 128),
                                      ("hopper_fp8_promote64", 64)])
def test_fp8_models_against_mmasim(fa, fb, model, N):
    """384 outputs per case (9 cases: 3,456), K = 200 (7 instructions, the last one
    padded; with promotion the last interval partial), special inputs included;
    0 mismatches (bits; NaNs as NaNs: a promoted NaN keeps the payload float32
    addition gives it)."""
    A = _fp8(1, (16, 200), fa, special=True)
    B = _fp8(2, (200, 24), fb, special=True)
    got = mx_gemm.fp8_matmul(A, B, fa, fmt_b=fb, model=model)
    want = mmasim_fp8(A, B, fa, fb, N)
    assert np.array_equal(got, want, equal_nan=True)
    if N is None:      # fast accumulation: the instruction's canonical NaN, bit for bit
        assert np.array_equal(sf.to_bits(got, "fp32"), sf.to_bits(want, "fp32"))


@needs_mmasim
def test_fp8_scaled_intervals_against_mmasim():
    A = _fp8(3, (16, 256))
    B = _fp8(4, (256, 24))
    rng = np.random.default_rng(5)
    sa = rng.uniform(0.5, 2, (16, 2)).astype(np.float32)
    sb = rng.uniform(0.5, 2, (2, 24)).astype(np.float32)
    got = mx_gemm.fp8_matmul(A, B, model="hopper_fp8_promote128", scale_a=sa, scale_b=sb)
    want = mmasim_fp8(A, B, "fp8_e4m3", "fp8_e4m3", 128, (sa, sb))
    assert np.array_equal(got, want)
    with pytest.raises(ValueError, match="promotion"):
        mx_gemm.fp8_matmul(A, B, model="hopper_fp8_fast", scale_a=sa, scale_b=sb)


def test_fp8_promotion_against_instructions_and_float32_adds():
    """Without mmasim: promotion = softfloat.mma on each 128-interval from c = +0,
    then float32 additions (numpy, nearest even) in K order; fast accumulation =
    softfloat.mma over the whole K. K = 300: the zero padding of the last interval."""
    A = _fp8(6, (8, 300))
    B = _fp8(7, (300, 8))
    unit = M.tensor_core("hopper", "fp8_e4m3", "fp32")
    acc = np.zeros((8, 8), np.float32)
    for k0 in range(0, 300, 128):
        a, b = A[:, k0:k0 + 128], B[k0:k0 + 128]
        pad = (-a.shape[1]) % 32
        a = np.pad(a, ((0, 0), (0, pad)))
        b = np.pad(b, ((0, pad), (0, 0)))
        acc = acc + sf.from_bits(M.mma(unit, a, b), "fp32").astype(np.float32)
    assert np.array_equal(mx_gemm.fp8_matmul(A, B, model="hopper_fp8_promote128"), acc)
    full = M.mma(unit, np.pad(A, ((0, 0), (0, 20))), np.pad(B, ((0, 20), (0, 0))))
    assert np.array_equal(mx_gemm.fp8_matmul(A, B, model="hopper_fp8_fast"),
                          sf.from_bits(full, "fp32"))


def test_fp8_models_other_units():
    """FP8GemmModel on other matrix units: Ada's mma (e8m13 too) and Blackwell's
    tcgen05 (F = 25, RZ into fp32) give what softfloat.mma gives for the chain."""
    A = _fp8(8, (4, 64))
    B = _fp8(9, (64, 4))
    for arch in ("ada", "blackwell"):
        got = mx_gemm.fp8_matmul(A, B, model=mx_gemm.FP8GemmModel(arch, None))
        want = sf.from_bits(M.mma(M.tensor_core(arch, "fp8_e4m3", "fp32"), A, B), "fp32")
        assert np.array_equal(got, want)
    unit = M.tensor_core("hopper", "fp8_e4m3", "fp32")
    mixed = mx_gemm.FP8GemmModel(unit, None).resolve("fp8_e5m2", "fp8_e4m3")
    assert mixed.instruction == "m64n8k32.f32.e5m2.e4m3"
    with pytest.raises(ValueError, match="multiple"):
        mx_gemm.FP8GemmModel("hopper", 48)
    with pytest.raises(ValueError, match="unknown architecture"):
        mx_gemm.FP8GemmModel("hopperr", None)


def test_fp8_generic_blockfma_model_against_fraction_reference():
    """A user-built BlockFMA step (the generic model, run by softfloat.matmul) with
    promotion every 64: tests/naive_models.py's exact Fraction block FMA per interval,
    then binary32 nearest-even additions through the exact reference."""
    import naive_models as naive
    step = sf.BlockFMA(32, -10, "fp32", "toward_zero")
    A = _fp8(15, (2, 150))
    B = _fp8(16, (150, 2))
    got = mx_gemm.fp8_matmul(A, B, model=mx_gemm.FP8GemmModel(step, 64))
    want = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            acc = Fraction(0)
            for k0 in range(0, 150, 64):
                pb, _ = naive.block_fma(A[i, k0:k0 + 64].tolist(), B[k0:k0 + 64, j].tolist(),
                                        "fp8_e4m3", 32, -10, "fp32", "toward_zero")
                acc = _rne32(acc + O.decode(int(pb), F32).value)
            want[i, j] = float(acc)
    assert np.array_equal(got, want)


def test_fp8_matmul_k0_returns_zeros():
    """An empty sum is +0 (numpy's a @ b), for every model (was ZeroDivisionError
    without promotion)."""
    a = np.zeros((2, 0), np.uint8)
    b = np.zeros((0, 3), np.uint8)
    for model in ("hopper_fp8_fast", "hopper_fp8_promote128"):
        r = mx_gemm.fp8_matmul(a, b, model=model)
        assert r.shape == (2, 3) and not r.any() and not np.signbit(r).any()


def test_promotion_reduces_error_at_k4096():
    """DeepSeek-V3's observation: without promotion the limited accumulator loses
    accuracy at K = 4096 (positive terms: the truncation bias adds up); promoting
    every 128 products keeps it far smaller."""
    K = 4096
    A = _fp8(8, (4, K), positive=True)
    B = _fp8(9, (K, 4), positive=True)
    exact = sf.from_bits(A, "fp8_e4m3") @ sf.from_bits(B, "fp8_e4m3")
    fast = mx_gemm.fp8_matmul(A, B, model="hopper_fp8_fast")
    prom = mx_gemm.fp8_matmul(A, B, model="hopper_fp8_promote128")
    e_fast = np.abs(fast / exact - 1).max()
    e_prom = np.abs(prom / exact - 1).max()
    assert e_fast > 1e-2 and e_prom < 2e-3 and e_fast > 20 * e_prom


# ---------------------------------------------------------------------------
# block-scaled MMA
# ---------------------------------------------------------------------------
def _mx_operands(seed, fmt, m, K, n, random_codes=True):
    """Codes and scales of a (m, K) and b (K, n): random element codes (every code,
    NaN excluded) and random scales around 1 (e8m0 2**-20 .. 2**20; ue4m3 any
    positive finite code), or quantized N(0, 1) data."""
    bf = mx.block_format(fmt)
    rng = np.random.default_rng(seed)
    kb = bf.block
    if not random_codes:
        ca, sa = mx.quantize(rng.standard_normal((m, K)), fmt, axis=-1)
        cb, sb = mx.quantize(rng.standard_normal((K, n)), fmt, axis=0)
        return ca, sa, cb, sb
    e = bf.elem
    nc = 1 << e.nbits
    ok = np.array([c for c in range(nc)
                   if not np.isnan(sf.from_bits(np.array(c, e.dtype), e))], e.dtype)
    ca = rng.choice(ok, (m, K))
    cb = rng.choice(ok, (K, n))
    if bf.scale.name == "e8m0":
        sa = rng.integers(107, 148, (m, K // kb)).astype(np.uint8)
        sb = rng.integers(107, 148, (K // kb, n)).astype(np.uint8)
    else:
        sa = rng.integers(1, 0x7F, (m, K // kb)).astype(np.uint8)
        sb = rng.integers(1, 0x7F, (K // kb, n)).astype(np.uint8)
    return ca, sa, cb, sb


_MMASIM_BS = {   # (our arch, block format) -> (MMA-Sim class name, arch, instruction)
    ("rtx_blackwell", "mxfp8_e4m3"): ("MMABlockScale", "RTX Blackwell",
                                      "m16n8k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.f32.ue8m0"),
    ("blackwell", "mxfp8_e5m2"): ("TCGen05MMABlockScale", "Blackwell",
                                  "m128n8k32.kind::mxf8f6f4.block32.f32.e5m2.e5m2.ue8m0"),
    ("blackwell", "mxfp6_e3m2"): ("TCGen05MMABlockScale", "Blackwell",
                                  "m128n8k32.kind::mxf8f6f4.block32.f32.e3m2.e3m2.ue8m0"),
    ("blackwell", "mxfp4"): ("TCGen05MMABlockScale", "Blackwell",
                             "m128n8k64.kind::mxf4.block32.f32.e2m1.e2m1.ue8m0"),
    ("blackwell", "nvfp4"): ("TCGen05MMABlockScale", "Blackwell",
                             "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3"),
    ("rtx_blackwell", "nvfp4"): ("MMABlockScale", "RTX Blackwell",
                                 "m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3"),
}


def mmasim_block_scaled(arch, fmt, ca, sa, cb, sb):
    """MMA-Sim on the same operands: the k = 32 kinds one instruction at a time (its
    MMA_ST_FDPA takes one scale per call), C carried; the k = 64 fp4 kinds on
    packed fp4 (two per byte, the high nibble first) over the whole K."""
    cls, a_name, ins = _MMASIM_BS[(arch, fmt)]
    op = {"MMABlockScale": MMABlockScale, "TCGen05MMABlockScale": TCGen05MMABlockScale}[cls](
        a_name, ins)
    bf = mx.block_format(fmt)
    sdt = torch.float8_e8m0fnu if bf.scale.name == "e8m0" else torch.float8_e4m3fn
    m, K = ca.shape
    n = cb.shape[1]
    ts = lambda x: torch.from_numpy(np.ascontiguousarray(x)).view(sdt)   # noqa: E731
    if op.k == 64:
        pa = torch.from_numpy(((ca[:, 0::2] << 4) | ca[:, 1::2]).astype(np.uint8))
        pbT = torch.from_numpy(np.ascontiguousarray(((cb[0::2] << 4) | cb[1::2]).T
                                                    .astype(np.uint8)))
        al, be = ts(sa), ts(sb)
        return op.dpa(pa[:, None, :].expand(-1, n, -1), pbT[None].expand(m, -1, -1),
                      torch.zeros(m, n), al[:, None, :].expand(-1, n, -1),
                      be.T[None].expand(m, -1, -1)).double().numpy()
    e = bf.elem.name
    conv = (lambda x: _t8(x, e)) if e in _TORCH8 else (lambda x: torch.from_numpy(
        np.ascontiguousarray(x).astype(np.uint8)))
    C = torch.zeros(m, n)
    for j in range(K // 32):
        C = op(conv(ca[:, 32 * j:32 * j + 32]), conv(cb[32 * j:32 * j + 32]), C,
               ts(sa[:, j:j + 1]), ts(sb[j:j + 1, :]))
    return C.double().numpy()


@needs_mmasim
@pytest.mark.parametrize("arch, fmt", sorted(_MMASIM_BS))
def test_mx_matmul_against_mmasim(arch, fmt):
    """Random element codes and scales (576 outputs, K = 128: 4 or 2 chained
    instructions), and quantized normal data (256 outputs): 0 mismatches (4,992
    outputs over the 6 cases)."""
    for seed, (m, n, rc) in enumerate([(24, 24, True), (16, 16, False)]):
        ca, sa, cb, sb = _mx_operands(seed, fmt, m, 128, n, rc)
        got = mx_gemm.mx_matmul(ca, sa, cb, sb, fmt, arch=arch)
        want = mmasim_block_scaled(arch, fmt, ca, sa, cb, sb)
        assert np.array_equal(sf.to_bits(got, "fp32"), sf.to_bits(want, "fp32")), (arch, fmt)


def test_mx_matmul_padding_against_mma():
    """A K that is not a multiple of the instruction's k (70, blocks of 32 with a
    short last block): the same as softfloat.mma on the operands padded with zero
    codes and unit scales to K = 96."""
    ca, sa, cb, sb = _mx_operands(11, "mxfp8_e4m3", 8, 96, 8)
    ca, cb = ca[:, :70].copy(), cb[:70].copy()
    got = mx_gemm.mx_matmul(ca, sa, cb, sb, "mxfp8_e4m3")
    unit = M.tensor_core("blackwell", "mxfp8_e4m3", "fp32")
    pa = np.pad(ca, ((0, 0), (0, 26)))
    pb = np.pad(cb, ((0, 26), (0, 0)))
    want = sf.from_bits(M.mma(unit, pa, pb, scale_a=sa, scale_b=sb), "fp32")
    assert np.array_equal(got, want)


def test_mx_matmul_hardware_differs_from_ideal():
    """The hardware truncates (RZ) its scaled sums: on random data it differs from
    the idealised exact-block-dot model, and never exceeds it in magnitude by more
    than the ideal model's own rounding."""
    ca, sa, cb, sb = _mx_operands(12, "mxfp8_e4m3", 16, 128, 16, random_codes=False)
    hw = mx_gemm.mx_matmul(ca, sa, cb, sb, "mxfp8_e4m3")
    ideal = mx_gemm.mx_matmul(ca, sa, cb, sb, "mxfp8_e4m3", arch="ideal")
    assert not np.array_equal(hw, ideal)
    np.testing.assert_allclose(hw, ideal, rtol=2 ** -20, atol=0)


@pytest.mark.parametrize("fmt", ["mxfp8_e4m3", "mxfp6_e3m2", "mxfp4", "mxint8", "nvfp4"])
def test_mx_matmul_ideal_against_exact(fmt):
    rng = np.random.default_rng(10)
    a = rng.standard_normal((3, 70)).astype(np.float32)
    b = rng.standard_normal((70, 4)).astype(np.float32)
    ca, sa = mx.quantize(a, fmt, axis=-1)
    cb, sb = mx.quantize(b, fmt, axis=0)
    got = mx_gemm.mx_matmul(ca, sa, cb, sb, fmt, arch="ideal")
    va = mx.dequantize(ca, sa, fmt, axis=-1)
    vb = mx.dequantize(cb, sb, fmt, axis=0)
    kb = mx.block_format(fmt).block
    want = np.zeros((3, 4))
    for i in range(3):
        for j in range(4):
            acc = Fraction(0)
            for k0 in range(0, 70, kb):
                blk = sum(Fraction(float(va[i, k])) * Fraction(float(vb[k, j]))
                          for k in range(k0, min(70, k0 + kb)))
                acc = _rne32(acc + _rne32(blk))
            want[i, j] = float(acc)
    assert np.array_equal(got, want)
    with pytest.raises(NotImplementedError):
        mx_gemm.mx_matmul(*mx.quantize(a, "mxfp8_e5m2"), *mx.quantize(b, "mxfp8_e5m2", axis=0),
                          "mxfp8_e5m2", arch="ideal")
    if fmt == "mxint8":
        with pytest.raises(ValueError, match="ideal"):
            mx_gemm.mx_matmul(ca, sa, cb, sb, fmt)


def _nv_operands():
    rng = np.random.default_rng(13)
    a = rng.standard_normal((4, 64)).astype(np.float32)
    b = rng.standard_normal((64, 3)).astype(np.float32)
    ta, tb = mx.nvfp4_tensor_scale(a), mx.nvfp4_tensor_scale(b)
    ca, sa = mx.quantize(a, "nvfp4", axis=-1, tensor_scale=ta)
    cb, sb = mx.quantize(b, "nvfp4", axis=0, tensor_scale=tb)
    return ca, sa, cb, sb, ta, tb


def test_tensor_scales_used_as_given():
    """alpha = RN(ts_a * ts_b), then RN(acc * alpha); 0.0 is a scale like any other
    (was read as 1.0): zeros."""
    ca, sa, cb, sb, ta, tb = _nv_operands()
    base = mx_gemm.mx_matmul(ca, sa, cb, sb, "nvfp4").astype(np.float32)
    got = mx_gemm.mx_matmul(ca, sa, cb, sb, "nvfp4", tensor_scale_a=ta, tensor_scale_b=tb)
    alpha = np.float32(np.float32(ta) * np.float32(tb))
    assert np.array_equal(got, (base * alpha).astype(np.float64))
    z = mx_gemm.mx_matmul(ca, sa, cb, sb, "nvfp4", tensor_scale_a=0.0, tensor_scale_b=tb)
    assert not z.any()
    one = mx_gemm.mx_matmul(ca, sa, cb, sb, "nvfp4", tensor_scale_a=np.float32(2.0))
    assert np.array_equal(one, 2 * base)


@pytest.mark.parametrize("bad, err", [(-1.0, ValueError), (float("nan"), ValueError),
                                      (float("inf"), ValueError), ("2", TypeError),
                                      (True, TypeError), (0.1, ValueError),
                                      (np.array([1.0]), TypeError)])
def test_tensor_scales_refused(bad, err):
    """Negative, NaN, infinite, string, bool, array and non-float32 scales (0.1 is
    not a float32 value) raise, naming the argument."""
    ca, sa, cb, sb, _, _ = _nv_operands()
    with pytest.raises(err, match="tensor_scale_a"):
        mx_gemm.mx_matmul(ca, sa, cb, sb, "nvfp4", tensor_scale_a=bad)


def test_tensor_scales_nvfp4_only():
    rng = np.random.default_rng(14)
    ca, sa = mx.quantize(rng.standard_normal((2, 32)), "mxfp8_e4m3", axis=-1)
    cb, sb = mx.quantize(rng.standard_normal((32, 2)), "mxfp8_e4m3", axis=0)
    for kw in ({"tensor_scale_a": 2.0}, {"tensor_scale_b": 1.0}):
        with pytest.raises(ValueError, match="NVFP4"):
            mx_gemm.mx_matmul(ca, sa, cb, sb, "mxfp8_e4m3", **kw)


def test_mx_matmul_arguments():
    ca, sa, cb, sb, _, _ = _nv_operands()
    with pytest.raises(ValueError, match="scales of shapes"):
        mx_gemm.mx_matmul(ca, sa[:, :1], cb, sb, "nvfp4")
    with pytest.raises(ValueError, match="unknown architecture"):
        mx_gemm.mx_matmul(ca, sa, cb, sb, "nvfp4", arch="hopper2")
    with pytest.raises(ValueError):              # Hopper has no block-scaled MMA
        mx_gemm.mx_matmul(ca, sa, cb, sb, "nvfp4", arch="hopper")
    with pytest.raises(ValueError, match="not a block-scaled"):
        mx_gemm.mx_matmul(ca, sa, cb, sb, "nvfp4", arch="blackwell",
                          instruction="m128n8k32.kind::f8f6f4.f32.e2m1.e2m1")
    r = mx_gemm.mx_matmul(ca[:, :0], sa[:, :0], cb[:0], sb[:0], "nvfp4")
    assert r.shape == (4, 3) and not r.any()


def test_model_validation():
    with pytest.raises(ValueError, match="unknown fp8 GEMM model"):
        mx_gemm.fp8_gemm_model("hopper")
    with pytest.raises(ValueError):
        mx_gemm.FP8GemmModel(promote_every=0)
    assert mx_gemm.fp8_gemm_model("hopper_fp8_promote32").promote_every == 32
    with pytest.raises(ValueError, match="fp32 output"):
        mx_gemm.FP8GemmModel(M.tensor_core("hopper", "fp8_e4m3", "fp16"), None)


def test_junk_arguments_raise_clear_errors():
    """Junk operands, scales, models and architectures: TypeError or ValueError with
    the argument named, never another exception or a silent cast."""
    A = _fp8(17, (2, 64))
    B = _fp8(18, (64, 3))
    ca, sa, cb, sb, ta, _ = _nv_operands()
    fp8_cases = [
        (dict(a=A.astype(np.float32)), "a"), (dict(a=A.astype(np.int64) + 300), "a"),
        (dict(a="x"), "a"), (dict(b=B[:10]), "align|expected"), (dict(a=A[None]), "expected"),
        (dict(model=3), "model"), (dict(model="hopper_fp8_promote"), "unknown"),
        (dict(model="hopper_fp8_promote100"), "multiple"),
        (dict(fmt="fp9"), "format"), (dict(fmt_b="e2m1x"), "format"),
        (dict(scale_a=np.ones((2, 1), np.float64), scale_b=np.ones((1, 3), np.float32)),
         "float32"),
        (dict(scale_a=np.ones((2, 2), np.float32), scale_b=np.ones((2, 3), np.float32)),
         "shapes"),
        (dict(scale_a=np.ones((2, 1), np.float32)), "both"),
    ]
    for kw, match in fp8_cases:
        args = dict(a=A, b=B, model="hopper_fp8_promote128")
        args.update(kw)
        a, b = args.pop("a"), args.pop("b")
        with pytest.raises((TypeError, ValueError), match=match):
            mx_gemm.fp8_matmul(a, b, **args)
    mx_cases = [
        (dict(fmt="nvfp5"), "block format"), (dict(fmt=None), "fmt"),
        (dict(arch=None), "arch"), (dict(arch=5), "arch"), (dict(arch="cdna3"), "cdna3"),
        (dict(instruction=7), "instruction"), (dict(instruction="m1n1k1"), "instruction"),
        (dict(a=ca.astype(np.float32)), "a_codes"), (dict(a=ca + 16), "a_codes|range"),
        (dict(sb=sb[:, :1]), "scales"), (dict(fmt_b="mxfp8_e4m3"), "block size"),
        (dict(tensor_scale_b="1"), "tensor_scale_b"),
    ]
    for kw, match in mx_cases:
        args = dict(a=ca, sa=sa, b=cb, sb=sb, fmt="nvfp4")
        args.update(kw)
        pos = [args.pop(k) for k in ("a", "sa", "b", "sb", "fmt")]
        with pytest.raises((TypeError, ValueError), match=match):
            mx_gemm.mx_matmul(*pos, **args)
