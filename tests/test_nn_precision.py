"""nn.precision and nn.optim: every simulated rounding against an oracle computed
another way (exact Fraction arithmetic, numpy float16, softfloat's arithmetic on
encodings, torch's optimizers); lost updates, underflow counts, step skipping."""
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import mma as M
import nn
from nn import Tensor
from nn.precision import Precision, lp_matmul, storage_format


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # small arrays: a parallel launch costs more than it saves (the library's chunk
    # pool; no kernel uses numba's own threads)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOFTFLOAT_NUM_THREADS", "1")
        yield


def rne(x: Fraction, fmt) -> Fraction:
    """Exact round-to-nearest-even of a rational into an IEEE format (no overflow)."""
    if x == 0:
        return Fraction(0)
    p, emin = fmt.precision, fmt.emin
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = Fraction(2) ** (max(e, emin) - p + 1)           # the step (ulp) at a
    n, r = divmod(a, q)
    if r * 2 > q or (r * 2 == q and n % 2 == 1):
        n += 1
    return (n * q) if x > 0 else -(n * q)


def oracle_matmul(a, b, fmt, acc):
    """Sequential sum of exact products, each addition rounded into acc, then fmt."""
    m, k = a.shape
    out = np.empty((m, b.shape[1]))
    for i in range(m):
        for j in range(b.shape[1]):
            s = Fraction(0)
            for t in range(k):
                s = rne(s + Fraction(float(a[i, t])) * Fraction(float(b[t, j])), acc)
            out[i, j] = float(rne(s, fmt))
    return out


def lp_values(rng, shape, fmt, positive=False, scale=1.0):
    x = rng.random(shape) if positive else rng.standard_normal(shape)
    return sf.quantize(x * scale, fmt).astype(np.float32)


@pytest.mark.parametrize("fmt,acc", [("fp16", "fp32"), ("bf16", "fp32"), ("fp16", "fp16"),
                                     ("bf16", "bf16"), ("fp8_e4m3", "fp16")])
def test_lp_matmul_against_fraction_oracle(fmt, acc):
    rng = np.random.default_rng(7)
    f = sf.get_format(fmt)
    a = lp_values(rng, (4, 37), f, positive=True)
    b = lp_values(rng, (37, 3), f, scale=0.5)
    P = Precision(fmt, accumulate=acc)
    A = sf.FP32 if acc == "fp32" else sf.get_format(acc)
    want = oracle_matmul(a, b, f, A)
    np.testing.assert_array_equal(lp_matmul(a, b, f, None, P), want)       # the policy's
    np.testing.assert_array_equal(lp_matmul(a, b, f, P.acc, P), want)      # a format
    with P:
        t = Tensor(a, fmt=f) @ Tensor(b, fmt=f)
    np.testing.assert_array_equal(t.data, want)


def test_narrow_accumulation_has_no_double_rounding():
    """The old nn fallback summed in float64 and rounded per k step: 2**-100 + 261
    (a bf16 midpoint between 260 and 262) became 261 in float64 and then 260 by
    ties-to-even; the exact sum rounds up to 262."""
    a = np.array([[2.0 ** -50, 9.0]], np.float32)
    b = np.array([[2.0 ** -50], [29.0]], np.float32)
    P = Precision("bf16", accumulate="bf16")
    assert lp_matmul(a, b, sf.BF16, None, P, final=False)[0, 0] == 262.0
    want = oracle_matmul(a, b, sf.BF16, sf.BF16)
    np.testing.assert_array_equal(lp_matmul(a, b, sf.BF16, None, P), want)


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_blas_order_within_its_bound(fmt):
    """order='blas': a float32 BLAS product, within gamma(K) sum|a_i b_i| (+ K 2**-150
    for bf16 products that lose bits in float32) of the exact sum (math.fsum of the
    exact float64 products; the reference's own error is below 2**-53 relative)."""
    import math
    rng = np.random.default_rng(12)
    f = sf.get_format(fmt)
    P = Precision(fmt, order="blas")
    u = 2.0 ** -24
    for K in (1, 7, 300, 2000):
        a = lp_values(rng, (5, K), f)
        tiny = 1e-38 if fmt == "bf16" else 1e-4      # bf16: products in fp32's subnormals
        b = lp_values(rng, (K, 4), f, scale=[1, tiny, 1e4][K % 3])
        b[::2] = -b[::2]
        got = lp_matmul(a, b, f, None, P, final=False).astype(np.float64)
        gamma = K * u / (1 - K * u)
        for i in range(5):
            for j in range(4):
                p = a[i].astype(np.float64) * b[:, j].astype(np.float64)
                exact = math.fsum(p)
                bound = gamma * np.abs(p).sum() + K * 2.0 ** -150 + abs(exact) * 2.0 ** -52
                assert abs(got[i, j] - exact) <= bound, (K, i, j)


# The published block-FMA parameters (Fasi, Higham, Mikaitis & Pranesh 2021; Khattak &
# Mikaitis 2025): products per block, extra alignment bits; fp32 out, truncation.
TENSOR_CORES = {"v100": (4, 0), "a100": (8, 1), "h100": (16, 2), "b200": (16, 2)}


@pytest.mark.parametrize("gpu", sorted(TENSOR_CORES))
def test_tensor_core_accumulation_against_the_fraction_model(gpu):
    # nn's tensor-core matmul against tests/naive_models.block_fma (exact rationals,
    # written from the papers' description), not against the library's own kernel
    import naive_models as N
    fmt = "bf16" if gpu != "v100" else "fp16"
    rng = np.random.default_rng(13)
    f = sf.get_format(fmt)
    a, b = lp_values(rng, (6, 50), f), lp_values(rng, (50, 7), f)
    P = Precision(fmt, accumulate=gpu)
    assert P.accumulate_name == gpu and P.acc is None
    got = lp_matmul(a, b, f, None, P, final=False)
    ab, bb = sf.to_bits(a, f), sf.to_bits(b, f)
    width, extra = TENSOR_CORES[gpu]
    want = np.empty((6, 7), np.float32)
    for i in range(6):
        for j in range(7):
            bits, _ = N.block_fma([int(x) for x in ab[i]], [int(x) for x in bb[:, j]], fmt,
                                  width, extra, "fp32", "toward_zero")
            want[i, j] = np.uint32(bits).view(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert P.tensor_core == M.tensor_core(gpu, f, "fp32")   # the validated matrix-unit model
    with pytest.raises(ValueError):
        Precision("fp32", accumulate=gpu)
    with pytest.raises(ValueError):
        Precision("fp8_e4m3", accumulate="a100")          # A100 has no fp8 tensor cores


def test_lp_matmul_checks_shapes():
    """Mismatched shapes are refused (the old fallback read past
    its arrays: a segfault, or finite garbage)."""
    P = Precision("fp16")
    with pytest.raises(ValueError, match="align"):
        lp_matmul(np.ones((2, 5000), np.float32), np.ones((8, 3), np.float32), sf.FP16,
                  None, P)
    with pytest.raises(ValueError):
        lp_matmul(np.ones(3, np.float32), np.ones((3, 3), np.float32), sf.FP16, None, P)
    with P, pytest.raises(ValueError):
        nn.MLP([8, 6, 3])(Tensor(np.ones((4, 9), np.float32)))
    with pytest.raises(ValueError, match="align"):
        sf.matmul_values(np.ones((2, 5)), np.ones((4, 3)), "fp16", check=False)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e5m2"])
def test_decode_equals_from_bits_exhaustively(fmt):
    f = sf.get_format(fmt)
    bits = np.arange(1 << f.nbits, dtype=np.uint64).astype(f.dtype)
    with np.errstate(invalid="ignore"):
        got = nn.precision.decode(bits, f).astype(np.float64)
    ref = sf.from_bits(bits, f)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.int64), ref[~nan].view(np.int64))


def test_sequential_orders_agree_on_wide_products():
    """lp_matmul (values, native float32 kernel) equals softfloat.matmul on encodings
    (the integer kernel with return_flags=True: no fast path) bit for bit."""
    rng = np.random.default_rng(8)
    for fmt in ("fp16", "bf16"):
        f = sf.get_format(fmt)
        a, b = lp_values(rng, (8, 700), f, positive=True), lp_values(rng, (700, 5), f)
        for acc in ("fp32", fmt):
            P = Precision(fmt, accumulate=acc)
            got = lp_matmul(a, b, f, None, P, final=False)
            ref, _ = sf.matmul(sf.to_bits(a, f), sf.to_bits(b, f), f, acc=P.acc_model,
                               return_flags=True)
            np.testing.assert_array_equal(got, sf.from_bits(ref, P.acc_model.fmt))


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_elementwise_ops_equal_softfloat_arith_on_encodings(fmt):
    rng = np.random.default_rng(9)
    f = sf.get_format(fmt)
    x = lp_values(rng, (3000,), f, scale=10.0) * np.float32(2.0) ** rng.integers(
        -20, 12, 3000).astype(np.float32)
    y = lp_values(rng, (3000,), f, scale=0.01) * np.float32(2.0) ** rng.integers(
        -20, 12, 3000).astype(np.float32)
    x, y = (sf.quantize(v, f).astype(np.float32) for v in (x, y))
    P = Precision(fmt)
    bx, by = sf.to_bits(x, f), sf.to_bits(y, f)
    np.testing.assert_array_equal(sf.to_bits(P.add(x, y, f), f), sf.add(bx, by, f))
    np.testing.assert_array_equal(sf.to_bits(P.mul(x, y, f), f), sf.mul(bx, by, f))


def test_fp16_tensor_ops_equal_numpy_float16():
    """numpy's float16 +, * (float32 then one rounding: innocuous for fp16) as oracle."""
    rng = np.random.default_rng(10)
    x = rng.standard_normal((6, 5)).astype(np.float16)
    y = (rng.standard_normal((1, 5)) * 1e-3).astype(np.float16)
    with Precision("fp16"):
        a = Tensor(x.astype(np.float32), fmt="fp16")
        b = Tensor(y.astype(np.float32), fmt="fp16")
        s, p, d = a + b, a * b, a - b
    np.testing.assert_array_equal(s.data, (x + y).astype(np.float32))
    np.testing.assert_array_equal(p.data, (x * y).astype(np.float32))
    np.testing.assert_array_equal(d.data, (x - y).astype(np.float32))
    assert s.fmt == sf.FP16 and s.data.dtype == np.float32


def test_linear_forward_backward_fp16_against_oracle():
    """y = x @ W + b in fp16 with fp32 accumulation; dW = x^T @ dy; db = sum(dy)."""
    rng = np.random.default_rng(11)
    f = sf.FP16
    x = lp_values(rng, (5, 9), f)
    W = lp_values(rng, (9, 3), f)
    bias = lp_values(rng, (3,), f)
    dy = lp_values(rng, (5, 3), f, scale=1e-3)
    P = Precision("fp16", accumulate="fp32")
    with P:
        tW = Tensor(W, requires_grad=True, fmt="fp16")
        tb = Tensor(bias, requires_grad=True, fmt="fp16")
        y = Tensor(x) @ tW + tb
        y.backward(dy)
    xy = oracle_matmul(x, W, f, sf.FP32)
    expect_y = np.array([[float(rne(Fraction(float(v)) + Fraction(float(c)), f))
                          for v, c in zip(row, bias)] for row in xy])
    np.testing.assert_array_equal(y.data, expect_y)
    np.testing.assert_array_equal(tW.grad, oracle_matmul(x.T, dy, f, sf.FP32))
    db = [float(rne(sum_seq32([Fraction(float(v)) for v in dy[:, j]]), f)) for j in range(3)]
    np.testing.assert_array_equal(tb.grad, db)


def sum_seq32(terms):
    s = Fraction(0)
    for t in terms:
        s = rne(s + t, sf.FP32)
    return s


def test_cross_entropy_gradient_underflows_in_fp16_and_is_counted():
    z = np.array([[2.0, -1.0, 0.5]], np.float32)
    for fmt, expect_zero in (("fp16", True), ("bf16", False)):
        P = Precision(fmt)
        with P:
            t = Tensor(z, requires_grad=True, fmt=fmt)
            loss = nn.cross_entropy(t, np.array([0])) * (2.0 ** -30)
            loss.backward()
        assert (np.count_nonzero(t.grad) == 0) == expect_zero
        assert P.grad_nonzero == 3
        assert P.grad_underflow == (3 if expect_zero else 0)
        assert P.weight_underflow_fraction == P.underflow_fraction


@pytest.mark.parametrize("mode,master", [("nearest_even", False), ("stochastic", False),
                                         ("nearest_even", True)])
def test_lost_updates_bf16(mode, master):
    """bf16 1.0 + 1e-3, a thousand times: nearest-even loses every update; stochastic
    rounding and an fp32 master copy reach about 2."""
    w = Tensor(np.ones(2000, np.float32), requires_grad=True)
    P = Precision("bf16", update_rounding=mode, master_weights=master, seed=1)
    opt = nn.SGD([w], lr=1e-3, precision=P)
    for _ in range(1000):
        opt.step([np.full(2000, -1.0, np.float32)])
    if mode == "nearest_even" and not master:
        assert np.all(w.data == 1.0) and opt.lost_update_fraction == 1.0
    elif master:
        assert abs(opt.master[0].mean() - 2.0) < 1e-3 and opt.lost_update_fraction == 0.0
        assert np.all(w.data == 2.0)                   # the working copy: bf16(master)
    else:
        assert abs(w.data.mean() - 2.0) < 0.02         # unbiased on average
        assert 0.5 < opt.lost_update_fraction < 1.0


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_matches_torch(momentum):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    w0 = rng.standard_normal(7).astype(np.float32)
    grads = [rng.standard_normal(7).astype(np.float32) for _ in range(5)]
    w = Tensor(w0.copy(), requires_grad=True)
    opt = nn.SGD([w], lr=0.1, momentum=momentum, weight_decay=0.01)
    tw = torch.nn.Parameter(torch.tensor(w0))
    topt = torch.optim.SGD([tw], lr=0.1, momentum=momentum, weight_decay=0.01)
    for g in grads:
        opt.step([g])
        tw.grad = torch.tensor(g)
        topt.step()
    np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_adam_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    w0 = rng.standard_normal(9).astype(np.float32)
    grads = [rng.standard_normal(9).astype(np.float32) for _ in range(6)]
    w = Tensor(w0.copy(), requires_grad=True)
    opt = nn.Adam([w], lr=1e-2)
    tw = torch.nn.Parameter(torch.tensor(w0))
    topt = torch.optim.Adam([tw], lr=1e-2, foreach=False)
    for g in grads:
        opt.step([g])
        tw.grad = torch.tensor(g)
        topt.step()
    np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_train_step_skips_on_overflow_and_scaler_backs_off():
    rng = np.random.default_rng(14)
    x = rng.random((8, 6)).astype(np.float32)
    y = rng.integers(0, 3, 8)
    model = nn.MLP([6, 5, 3], seed=2)
    P = Precision("fp16", master_weights=True, loss_scaling="dynamic", loss_scale=2.0 ** 40,
                  scaler_options={"growth_interval": 1000})
    opt = nn.SGD(model.parameters(), lr=0.1, precision=P)
    sc = nn.make_scaler(P)
    before = [m.copy() for m in opt.master]
    res = nn.train_step(model, opt, sc, x, y)
    assert res.found_inf                          # 2^40 * loss overflows fp16 gradients
    assert all(np.array_equal(a, b) for a, b in zip(before, opt.master))
    assert sc.scale == 2.0 ** 39
    for _ in range(40):
        res = nn.train_step(model, opt, sc, x, y)
    assert not res.found_inf and sc.scale < 2.0 ** 39
    assert not all(np.array_equal(a, b) for a, b in zip(before, opt.master))


def test_default_policy_is_plain_float32():
    model = nn.MLP([4, 3, 2], seed=0)
    out = model(Tensor(np.ones((2, 4), np.float32)))
    assert out.fmt is None and out.data.dtype == np.float32
    assert nn.current().simulated is False


def test_policy_validation():
    assert storage_format("fp32") is None
    assert storage_format("fp16") == sf.FP16
    with pytest.raises(ValueError):
        Precision("fp16", rounding="toward_zero")
    with pytest.raises(ValueError):
        Precision("fp16", loss_scaling="sometimes")
    with pytest.raises(ValueError):
        Precision("no_such_format")
    with pytest.raises(ValueError):
        Precision("fp16", order="gpu")
    with pytest.raises(ValueError):
        Precision("fp16", accumulate="fp16", order="blas")
    with pytest.raises(ValueError):
        storage_format(sf.Format("e8m23fn", 8, 23, kind="fn"))   # beyond float32's range
    with pytest.raises(ValueError):
        nn.SGD([Tensor(np.ones(2, np.float32), requires_grad=True)], lr=0.0)


def test_blocked_order_matches_softfloat_program():
    """Precision(order="blocked"): matrix products and reductions equal softfloat's
    blocked program (integer kernel) bit for bit."""
    rng = np.random.default_rng(21)
    f = sf.FP16
    P = Precision("fp16", order="blocked", block=8)
    a, b = lp_values(rng, (7, 100), f, scale=4.0), lp_values(rng, (100, 5), f)
    got = lp_matmul(a, b, f, None, P, final=False)
    ref, _ = sf.matmul(sf.to_bits(a, f), sf.to_bits(b, f), f,
                       acc=sf.Accumulator("fp32", "nearest_even", "blocked", 8),
                       return_flags=True)
    np.testing.assert_array_equal(got, sf.from_bits(ref, "fp32"))
    x2 = lp_values(rng, (100, 6), f, scale=100.0)
    s = P.seq_sum(x2, f, final=False)
    ref, _ = sf.sum(sf.to_bits(np.ascontiguousarray(x2.T), f), f, axis=-1,
                    acc=sf.Accumulator("fp32", "nearest_even", "blocked", 8), return_flags=True)
    np.testing.assert_array_equal(s, sf.from_bits(ref, "fp32"))
    with pytest.raises(ValueError):
        Precision("fp16", order="blocked", block=0)
