"""nn's fp8/fp4 recipes (nn.fp8, Precision(recipe=...)): the quantization a recipe
applies against softfloat.mx's functions called directly, delayed scaling against
a hand-computed example, the Hopper GEMM option against softfloat.mx_gemm's
fp8_matmul on encodings, gradients against a float64 reference, and short
training runs."""
import numpy as np
import pytest

import softfloat as sf
from softfloat import mx, mx_gemm
from softfloat import mma as M
import nn
from nn import data as nn_data
from nn import Tensor
from nn.fp8 import RECIPES, fp8_gemm


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # the library's chunk pool (no kernel uses numba's own threads)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOFTFLOAT_NUM_THREADS", "1")
        yield


def _data(rng, shape, spread=3.0):
    return (rng.standard_normal(shape) * np.exp2(rng.uniform(-spread, spread, shape))
            ).astype(np.float32)


@pytest.mark.parametrize("role,fmt", [("x", "fp8_e4m3"), ("w", "fp8_e4m3"), ("dy", "fp8_e5m2")])
def test_current_scaling_equals_softfloat_mx(role, fmt):
    rng = np.random.default_rng(1)
    P = nn.Precision(recipe="fp8_current", amax_margin=1)
    v = _data(rng, (37, 29))
    vals, inv = P.fp8.per_tensor(v, role, site=0)
    codes, s = mx.quantize_per_tensor(v, fmt, margin=1)
    assert np.array_equal(vals.view(np.uint32),
                          sf.from_bits(codes, fmt).astype(np.float32).view(np.uint32))
    assert inv == np.float32(1) / np.float32(s)
    # and the dequantized tensor is softfloat's dequantize_per_tensor (to rounding
    # of the quotient: 1/s in fp32 vs a float64 division)
    np.testing.assert_allclose(vals * np.float64(inv), mx.dequantize_per_tensor(codes, s, fmt),
                               rtol=2 ** -23)


def test_delayed_scaling_equals_softfloat_mx_over_steps():
    rng = np.random.default_rng(2)
    P = nn.Precision(recipe="fp8_delayed", amax_history_len=2)
    ref = mx.DelayedScaling("fp8_e5m2", history_len=2)
    for step in range(5):
        v = _data(rng, (16, 8)) * np.float32(4.0 ** step)
        vals, inv = P.fp8.per_tensor(v, "dy", site=7)
        codes, s = ref.quantize(v)
        assert np.array_equal(vals, sf.from_bits(codes, "fp8_e5m2").astype(np.float32))
        assert inv == np.float32(1) / np.float32(s)


def test_delayed_scaling_hand_computed_three_steps():
    """amax 2, 4, 1 at steps 1-3: the scale at step 1 is TE's initial 1; at step 2
    448 / 2 = 224 (history [2]); at step 3 448 / max(2, 4) = 112 (not 448 / 1:
    the current tensor's amax is not used). Codes: 0.3 * 224 = 67.2 rounds to 64
    in e4m3 (spacing 8 in [64, 128)); 0.3 * 112 = 33.6 rounds to 32 (spacing 4)."""
    P = nn.Precision(recipe="fp8_delayed")
    x1 = np.array([[2.0, 0.3]], np.float32)
    x2 = np.array([[-4.0, 0.3]], np.float32)
    x3 = np.array([[1.0, 0.3]], np.float32)
    v1, i1 = P.fp8.per_tensor(x1, "x", site=1)
    v2, i2 = P.fp8.per_tensor(x2, "x", site=1)
    v3, i3 = P.fp8.per_tensor(x3, "x", site=1)
    f = np.float32
    assert (i1, i2, i3) == (f(1), f(1) / f(224), f(1) / f(112))     # TE's scale_inv in fp32
    assert v1.tolist() == [[2.0, 0.3125]]            # 0.3 in e4m3: 0.3125 (spacing 1/32)
    assert v2.tolist() == [[-448.0, 64.0]]           # -4 * 224 = -896 saturates to -448
    assert v3.tolist() == [[112.0, 32.0]]
    # a site's histories are separate from another site's and another role's
    _, j = P.fp8.per_tensor(x3, "x", site=2)
    _, k = P.fp8.per_tensor(x3, "w", site=1)
    assert j == 1.0 and k == 1.0


def test_delayed_scaling_inside_a_layer_uses_previous_steps():
    """Through the engine: the forward GEMM of a Linear layer under fp8_delayed
    quantizes x with the scale of the previous steps' amax."""
    P = nn.Precision(recipe="fp8_delayed")
    lin = nn.Linear(2, 1, bias=False)
    lin.W.data = np.array([[1.0], [1.0]], np.float32)
    outs = []
    with P:
        for x in ([[2.0, 0.3]], [[-4.0, 0.3]], [[1.0, 0.3]]):
            outs.append(float(lin(Tensor(np.array(x, np.float32))).data[0, 0]))
    # x codes as in the hand-computed test; W's code 1 at step 1 (scale 1), then 448
    # (scale 448 / amax 1); the fp32 sum of code products times alpha = (1/s_x)(1/s_w)
    f = np.float32
    alpha2 = (f(1) / f(224)) * (f(1) / f(448))
    alpha3 = (f(1) / f(112)) * (f(1) / f(448))
    assert outs == [2.3125, float(f(-384 * 448) * alpha2), float(f(144 * 448) * alpha3)]


@pytest.mark.parametrize("role,fmt,axis", [("x", "mxfp8_e4m3", -1), ("w", "mxfp8_e4m3", 0),
                                           ("dy", "mxfp8_e5m2", -1), ("dy", "mxfp8_e5m2", 0)])
def test_mxfp8_equals_softfloat_mx(role, fmt, axis):
    rng = np.random.default_rng(3)
    P = nn.Precision(recipe="mxfp8")
    v = _data(rng, (40, 70), spread=8)
    vals, alpha = P.fp8.blocked(v, role, axis)
    c, s = mx.quantize(v, fmt, axis=axis)
    ref = mx.dequantize(c, s, fmt, axis=axis)
    assert alpha == 1.0
    assert np.array_equal(vals.astype(np.float64), ref)          # exact in float32


@pytest.mark.parametrize("grad_rounding", ["nearest_even", "stochastic"])
def test_nvfp4_equals_softfloat_mx(grad_rounding):
    rng = np.random.default_rng(4)
    P = nn.Precision(recipe="nvfp4", grad_rounding=grad_rounding, seed=5)
    v = _data(rng, (24, 48))
    ts = mx.nvfp4_tensor_scale(v)
    for role in ("x", "dy"):
        vals, alpha = P.fp8.blocked(v, role, -1)
        sr = role == "dy" and grad_rounding == "stochastic"
        gen = np.random.default_rng(5)       # the policy's stream, fresh: one SR draw so far
        if sr:
            c, s = mx.quantize(v, "nvfp4", tensor_scale=ts, rounding="stochastic", seed=gen)
        else:
            c, s = mx.quantize(v, "nvfp4", tensor_scale=ts)
        assert alpha == ts
        assert np.array_equal(vals.astype(np.float64), mx.dequantize(c, s, "nvfp4"))
        # with the tensor scale: softfloat's values, to one rounding of the product
        np.testing.assert_allclose(vals.astype(np.float64) * ts,
                                   mx.dequantize(c, s, "nvfp4", tensor_scale=ts), rtol=2 ** -52)


@pytest.mark.parametrize("model", ["hopper_fp8_fast", "hopper_fp8_promote128"])
@pytest.mark.parametrize("positive", [True, False])
@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
def test_hopper_gemm_equals_mx_gemm(model, positive, fmt):
    """nn runs the model on fp16 values (fp16 holds both fp8 formats, so the mixed
    e5m2 x e4m3 backward GEMMs need no other path): equal to mx_gemm on encodings."""
    rng = np.random.default_rng(6)
    K = 300
    a = rng.random((5, K)) if positive else rng.standard_normal((5, K))
    b = rng.random((K, 3)) if positive else rng.standard_normal((K, 3))
    ca, cb = sf.to_bits(a * 16, fmt), sf.to_bits(b * 16, fmt)
    qa = sf.from_bits(ca, fmt).astype(np.float32)
    qb = sf.from_bits(cb, fmt).astype(np.float32)
    got = fp8_gemm(qa, qb, np.float32(1.0), model, (sf.get_format(fmt),) * 2)
    ref = mx_gemm.fp8_matmul(ca, cb, fmt, model=model)
    assert np.array_equal(got.astype(np.float64), ref)


def test_blas_gemm_within_fp32_bound():
    rng = np.random.default_rng(7)
    qa = sf.quantize(rng.standard_normal((6, 64)), "fp8_e4m3").astype(np.float32)
    qb = sf.quantize(rng.standard_normal((64, 4)), "fp8_e5m2").astype(np.float32)
    alpha = np.float32(0.37)
    exact = (qa.astype(np.float64) @ qb.astype(np.float64))   # products and sum exact in float64
    got = fp8_gemm(qa, qb, alpha)
    bound = 64 * 2 ** -24 * (np.abs(qa.astype(np.float64)) @ np.abs(qb.astype(np.float64)))
    assert np.all(np.abs(got / np.float64(alpha) - exact) <= bound * 1.01 + 1e-30)
    # the same float32 BLAS product as softfloat's order="blas" model, bit for bit
    ref = sf.matmul_values(qa, qb, sf.FP32, acc=sf.Accumulator(sf.FP32, "nearest_even", "blas"),
                           check=False, out_dtype=np.float32) * alpha
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32))


def _tiny_grads(policy, x, y, dtype):
    model = nn.MLP([8, 16, 4], seed=3)
    for p in model.parameters():
        p.data = p.data.astype(dtype)
    with policy:
        loss = nn.cross_entropy(model(Tensor(x.astype(dtype))), y)
        loss.backward()
    return [p.grad.astype(np.float64) for p in model.parameters()]


# Stated tolerances (relative Frobenius error of each parameter's gradient against
# float64 on a 8-16-4 relu net, batch 32): per-tensor fp8 and MXFP8 0.3, NVFP4 0.6.
# e5m2 gradients keep 3 significant bits (relative error up to 2**-3 per value),
# e4m3 operands 4, e2m1 2; the first layer's gradients pass through two gradient
# quantizations and the bias gradient's sum cancels. Measured over seeds 8-10:
# last layer 0.002-0.09, first layer 0.11-0.23 (fp8, MXFP8), 0.14-0.46 (NVFP4).
TOL = {"fp8_current": 0.3, "fp8_delayed": 0.3, "mxfp8": 0.3, "nvfp4": 0.6}


@pytest.mark.parametrize("recipe", RECIPES)
def test_gradients_against_float64(recipe):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((32, 8))
    y = rng.integers(0, 4, 32)
    ref = _tiny_grads(nn.Precision(), x, y, np.float64)
    P = nn.Precision(recipe=recipe)
    if recipe == "fp8_delayed":            # warm the histories (the first step uses scale 1)
        _tiny_grads(P, x, y, np.float32)
    got = _tiny_grads(P, x, y, np.float32)
    for g, r in zip(got, ref):
        assert np.linalg.norm(g - r) <= TOL[recipe] * np.linalg.norm(r)


@pytest.mark.parametrize("kw", [dict(recipe="fp8_current"), dict(recipe="fp8_delayed"),
                                dict(recipe="mxfp8"), dict(recipe="nvfp4"),
                                dict(recipe="nvfp4", grad_rounding="stochastic"),
                                dict(recipe="fp8_delayed", fp8_gemm="hopper_fp8_promote128")])
def test_short_training_decreases_loss(kw):
    xtr, ytr, _, _ = nn_data.digits(seed=0)
    xtr, ytr = xtr[:512], ytr[:512]
    P = nn.Precision(**kw)
    model = nn.MLP([64, 32, 10], seed=0)
    opt = nn.SGD(model.parameters(), lr=0.1, momentum=0.9, precision=P)
    sc = nn.make_scaler(P)
    losses = []
    rng = np.random.default_rng(1)
    for _ in range(3):
        for idx in nn_data.batches(len(xtr), 64, rng):
            losses.append(nn.train_step(model, opt, sc, xtr[idx], ytr[idx]).loss)
    assert np.all(np.isfinite(losses))
    assert np.mean(losses[-4:]) < losses[0] - 0.5


def test_recipe_validation():
    with pytest.raises(ValueError, match="recipe must be one of"):
        nn.Precision(recipe="fp8")
    with pytest.raises(ValueError, match="params='fp32'"):
        nn.Precision("bf16", recipe="fp8_current")
    with pytest.raises(ValueError, match="per-tensor"):
        nn.Precision(recipe="mxfp8", fp8_gemm="hopper_fp8_fast")
    with pytest.raises(ValueError, match="option of recipe='nvfp4'"):
        nn.Precision(recipe="fp8_current", grad_rounding="stochastic")
    with pytest.raises(ValueError, match="options of a recipe"):
        nn.Precision(fp8_gemm="hopper_fp8_fast")
    with pytest.raises(ValueError, match="amax_history_len"):
        nn.Precision(recipe="fp8_delayed", amax_history_len=0)
    assert "recipe='mxfp8'" in repr(nn.Precision(recipe="mxfp8"))


@pytest.mark.parametrize("recipe", ["fp8_current", "fp8_delayed"])
@pytest.mark.parametrize("role", ["x", "dy"])
def test_per_tensor_fast_path_equals_softfloat_path(recipe, role):
    """nn's one-pass scale-and-round against softfloat.mx's kernels (fast=False),
    over 20 steps of tensors whose amax swings by 2**+-12 (delayed scaling then
    saturates and flushes into the subnormal range), spread over 2**+-20."""
    rng = np.random.default_rng(11)
    fast = nn.Precision(recipe=recipe, amax_history_len=3, amax_margin=1)
    slow = nn.Precision(recipe=recipe, amax_history_len=3, amax_margin=1)
    for step in range(20):
        v = _data(rng, (64, 33), spread=20) * np.float32(2.0 ** rng.integers(-12, 13))
        v[0, :3] = (0.0, -0.0, 2.0 ** -149)
        a, ia = fast.fp8.per_tensor(v, role, site=3)
        b, ib = slow.fp8.per_tensor(v, role, site=3, fast=False)
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32)) and ia == ib
    # non-finite input takes softfloat's path
    v[1, 1] = np.inf
    a, _ = fast.fp8.per_tensor(v, role, site=4)
    b, _ = slow.fp8.per_tensor(v, role, site=4, fast=False)
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("role", ["x", "dy"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_mxfp8_fast_path_equals_softfloat_mx(role, axis):
    """nn's MX rounding against softfloat.mx.quantize + dequantize: blocks spread
    over 2**+-60 (subnormal elements, e clamped at -127 for 2**-140 blocks), an
    all-zero block, signed zeros, a partial last block (70 = 2 * 32 + 6)."""
    rng = np.random.default_rng(12)
    P = nn.Precision(recipe="mxfp8")
    for t in range(4):
        v = _data(rng, (70, 70), spread=6)
        v *= np.exp2(rng.integers(-60, 61, (70, 1)) if axis == -1
                     else rng.integers(-60, 61, (1, 70))).astype(np.float32)
        if axis == -1:
            v[0, :32] = 0.0
            v[1, :5] = (-0.0, 2.0 ** -149, -(2.0 ** -140), 2.0 ** -130, 3.0e38)
        else:
            v[:32, 0] = 0.0
            v[:5, 1] = (-0.0, 2.0 ** -149, -(2.0 ** -140), 2.0 ** -130, 3.0e38)
        a, _ = P.fp8.blocked(v, role, axis)
        b, _ = P.fp8.blocked(v, role, axis, fast=False)
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("kw", [dict(recipe="fp8_current"), dict(recipe="fp8_delayed"),
                                dict(recipe="mxfp8"), dict(recipe="nvfp4"),
                                dict(recipe="nvfp4", grad_rounding="stochastic")])
def test_training_fast_equals_softfloat_kernels(kw):
    """Three training steps with the one-pass quantizers and with softfloat.mx's general
    kernels (FP8Recipe.fast = False): the same parameters, bit for bit (the backward
    GEMMs' reuse of the forward's tensor scales and the transposed views included)."""
    x, y, _, _ = nn_data.digits()
    out = []
    for fast in (True, False):
        P = nn.Precision(**kw, seed=3)
        P.fp8.fast = fast
        m = nn.MLP([64, 48, 40, 10], seed=0)
        opt = nn.SGD(m.parameters(), lr=0.1, precision=P)
        sc = nn.make_scaler(P)
        for i in range(3):
            nn.train_step(m, opt, sc, x[i * 50:(i + 1) * 50], y[i * 50:(i + 1) * 50])
        out.append([p.data.copy() for p in m.parameters()])
    for a, b in zip(*out):
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


# ---- matrix units, non-finite and subnormal tensors, refused options ----------------
def _step(P, x, y, seed=0):
    """One train_step of a small MLP under P: (StepResult, parameters before, after)."""
    model = nn.MLP([16, 8, 4], seed=seed)
    opt = nn.SGD(model.parameters(), lr=0.1, precision=P)
    sc = nn.make_scaler(P)
    before = [p.data.copy() for p in model.parameters()]
    res = nn.train_step(model, opt, sc, x, y)
    return res, before, [p.data.copy() for p in model.parameters()]


@pytest.mark.parametrize("recipe, bad", [(r, b) for r in RECIPES for b in (np.nan, np.inf)])
def test_nonfinite_input_reports_found_inf(recipe, bad):
    """A NaN or an infinity in a GEMM operand: every recipe reports found_inf and
    the step is skipped (NVFP4 raised ValueError: no per-tensor scale of a
    non-finite tensor; the per-tensor recipes saturated an infinity into the
    tensor and trained on)."""
    rng = np.random.default_rng(20)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    x[2, 3] = bad
    y = rng.integers(0, 4, 8)
    P = nn.Precision(recipe=recipe, loss_scaling="dynamic")
    res, before, after = _step(P, x, y)
    assert res.found_inf
    assert all(np.array_equal(a, b) for a, b in zip(before, after))


def test_nvfp4_all_subnormal_tensor():
    """An all-subnormal operand (amax / 2688 below float32's smallest subnormal: the
    per-tensor scale was 0 and quantizing raised) quantizes; the tensor scale is
    never 0, and amax / scale stays within 448 * 6."""
    x = np.full((4, 16), 1e-44, np.float32)
    ts = mx.nvfp4_tensor_scale(x)
    assert ts > 0 and float(np.float32(1e-44)) / ts <= 448 * 6
    P = nn.Precision(recipe="nvfp4")
    vals, t = P.fp8.blocked(x, "x", -1)
    assert t == ts and np.all(np.isfinite(vals))
    codes, scales = mx.quantize(x, "nvfp4", axis=-1, tensor_scale=ts)
    back = mx.dequantize(codes, scales, "nvfp4", axis=-1, tensor_scale=ts)
    np.testing.assert_allclose(back, np.float32(1e-44), rtol=0.5)
    out, _ = P.fp8.forward(x, np.ones((16, 2), np.float32), 0)
    assert np.all(np.isfinite(out))
    with pytest.raises(ValueError, match="float32's range"):
        mx.nvfp4_tensor_scale(np.array([1e300, 1.0]))


@pytest.mark.parametrize("kw, match", [
    (dict(order="sequential"), "BLAS order"), (dict(order="blocked"), "BLAS order"),
    (dict(rounding="stochastic"), "grad_rounding"),
    (dict(update_rounding="stochastic"), "grad_rounding"),
    (dict(accumulate="fp16"), "matrix unit"), (dict(accumulate="bf16"), "matrix unit"),
    (dict(accumulate="hopper", fp8_gemm="hopper_fp8_fast"), "not both"),
])
@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_refuses_ignored_options(recipe, kw, match):
    """Options that a recipe would ignore (its storage is fp32, its GEMMs sum in fp32
    or on a matrix unit) are refused, not dropped."""
    if "fp8_gemm" in kw and recipe in ("mxfp8", "nvfp4"):
        match = "per-tensor"
    with pytest.raises(ValueError, match=match):
        nn.Precision(recipe=recipe, **kw)
    assert nn.Precision(recipe=recipe, order="blas").order == "blas"
    assert nn.Precision(recipe=recipe).order == "blas"


def test_plain_fp32_refuses_a_narrow_accumulator():
    with pytest.raises(ValueError, match="params="):
        nn.Precision("fp32", accumulate="fp16")
    assert nn.Precision("fp32").order == "sequential"


@pytest.mark.parametrize("acc", ["hopper", "h100", "h800"])
def test_per_tensor_recipe_on_a_matrix_unit(acc):
    """accumulate=<arch> under a per-tensor recipe: each GEMM is the Hopper wgmma
    model chained along K (softfloat.mma, the e4m3 x e4m3 forward instruction),
    times alpha = (1/s_a)(1/s_b) in fp32."""
    rng = np.random.default_rng(21)
    a = _data(rng, (8, 96))
    b = _data(rng, (96, 5))
    P = nn.Precision(recipe="fp8_current", accumulate=acc)
    out, ctx = P.fp8.forward(a, b, site=0)
    qa, ia, qb, ib, _ = ctx
    unit = M.tensor_core("hopper", "fp8_e4m3", "fp32")
    assert unit.instruction == "m64n8k32.f32.e4m3.e4m3"
    want = sf.from_bits(M.mma(unit, sf.to_bits(qa, "fp8_e4m3"), sf.to_bits(qb, "fp8_e4m3")),
                        "fp32").astype(np.float32) * np.float32(ia * ib)
    assert np.array_equal(out, want)
    # the backward GEMMs take e5m2 x e4m3 / e4m3 x e5m2 instructions
    g = _data(rng, (8, 5))
    da, db = P.fp8.backward(g, ctx, True, True)
    assert da.shape == (8, 96) and db.shape == (96, 5)
    ref_da = g.astype(np.float64) @ b.T.astype(np.float64)
    assert np.linalg.norm(da - ref_da) <= 0.3 * np.linalg.norm(ref_da)


@pytest.mark.parametrize("recipe", ["mxfp8", "nvfp4"])
def test_block_recipe_on_blackwell(recipe):
    """accumulate="blackwell" under a block-scaled recipe: the forward GEMM is
    softfloat.mx_gemm.mx_matmul on the operands' MX / NVFP4 codes and scales
    (tcgen05 block-scaled MMA, NVFP4's tensor scales as alpha); the backward GEMMs
    run on the transposed codes; gradients near float64's."""
    rng = np.random.default_rng(22)
    a = _data(rng, (8, 64), spread=1)
    b = _data(rng, (64, 16), spread=1)
    P = nn.Precision(recipe=recipe, accumulate="blackwell")
    out, ctx = P.fp8.forward(a, b, site=0)
    fmt = "mxfp8_e4m3" if recipe == "mxfp8" else "nvfp4"
    kw = {}
    if recipe == "nvfp4":
        kw = dict(tensor_scale=mx.nvfp4_tensor_scale(a)), dict(tensor_scale=mx.nvfp4_tensor_scale(b))
    ka, kb = kw if kw else ({}, {})
    ca, sa = mx.quantize(a, fmt, axis=-1, **ka)
    cb, sb = mx.quantize(b, fmt, axis=0, **kb)
    ts = {} if not kw else dict(tensor_scale_a=np.float32(ka["tensor_scale"]),
                                tensor_scale_b=np.float32(kb["tensor_scale"]))
    want = mx_gemm.mx_matmul(ca, sa, cb, sb, fmt, arch="blackwell", **ts).astype(np.float32)
    assert np.array_equal(out, want)
    g = _data(rng, (8, 16), spread=1)
    da, db = P.fp8.backward(g, ctx, True, True)
    for got, ref in ((da, g.astype(np.float64) @ b.T), (db, a.T.astype(np.float64) @ g)):
        assert got.shape == ref.shape
        assert np.linalg.norm(got - ref) <= 0.5 * np.linalg.norm(ref)
    with pytest.raises(ValueError, match="block-scaled matrix unit"):
        nn.Precision(recipe=recipe, accumulate="hopper")


def test_storage_policy_accepts_arch_models():
    """accumulate= an architecture name, a GPU name or a tensor_core(...) object for
    simulated storage; an object for other operands is refused."""
    rng = np.random.default_rng(23)
    a = sf.quantize(rng.standard_normal((4, 40)), "bf16").astype(np.float32)
    b = sf.quantize(rng.standard_normal((40, 3)), "bf16").astype(np.float32)
    unit = M.tensor_core("ampere", "bf16", "fp32")
    want = sf.from_bits(M.mma(unit, sf.to_bits(a, "bf16"), sf.to_bits(b, "bf16")), "fp32")
    for acc in ("ampere", "A100", "rtx3090", unit):
        P = nn.Precision("bf16", accumulate=acc)
        got = nn.precision.lp_matmul(a, b, sf.BF16, None, P, final=False)
        assert np.array_equal(got, want.astype(np.float32)), acc
    with pytest.raises(ValueError, match="takes fp16 x fp16"):
        nn.Precision("bf16", accumulate=M.tensor_core("ampere", "fp16", "fp32"))
    with pytest.raises(ValueError, match="unknown architecture"):
        nn.Precision("bf16", accumulate="hopperx")


def test_fp32_gemm_reads_transposed_operands_in_place():
    """The recipes' fp32 GEMM (softfloat.matmul_values, order="blas") on the
    backward pass's transposed views equals NumPy's float32 product of the same
    views, and of contiguous copies of them."""
    from nn.fp8 import fp8_gemm
    r = np.random.default_rng(3)
    g = sf.quantize(r.standard_normal((64, 48)), "fp8_e5m2", out_dtype=np.float32)
    w = sf.quantize(r.standard_normal((80, 48)), "fp8_e4m3", out_dtype=np.float32)
    got = fp8_gemm(g, w.T, np.float32(0.5))
    assert np.array_equal(got, np.matmul(g, w.T) * np.float32(0.5))
    assert np.array_equal(got, np.matmul(g, np.ascontiguousarray(w.T)) * np.float32(0.5))
