"""nn.engine: gradients of every op against central finite differences in float64
and against torch CPU; a full MLP's loss and gradients against torch."""
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nn
from nn import Tensor

try:
    import torch
except ImportError:                 # the float64 gradient checks run without torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")


def numgrad(f, xs, eps=1e-6):
    """Central differences of the scalar f() with respect to each array in xs (float64)."""
    out = []
    for x in xs:
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            old = x[i]
            x[i] = old + eps
            fp = f()
            x[i] = old - eps
            fm = f()
            x[i] = old
            g[i] = (fp - fm) / (2 * eps)
        out.append(g)
    return out


# Each case: (name, arity-shapes builder, engine expression, torch expression).
def _cases():
    return {
        "add_bcast": (lambda a, b: a + b, lambda a, b: a + b, [(3, 4), (4,)]),
        "add_bcast_col": (lambda a, b: a + b, lambda a, b: a + b, [(3, 4), (3, 1)]),
        "sub": (lambda a, b: a - b, lambda a, b: a - b, [(2, 5), (2, 5)]),
        "rsub_scalar": (lambda a: 2.5 - a, lambda a: 2.5 - a, [(3, 2)]),
        "mul_bcast": (lambda a, b: a * b, lambda a, b: a * b, [(4, 3), (1, 3)]),
        "mul_scalar": (lambda a: a * 3.0, lambda a: a * 3.0, [(2, 3)]),
        "neg": (lambda a: -a, lambda a: -a, [(5,)]),
        "matmul": (lambda a, b: a @ b, lambda a, b: a @ b, [(3, 4), (4, 2)]),
        "relu": (lambda a: a.relu(), lambda a: a.relu(), [(4, 5)]),
        "tanh": (lambda a: a.tanh(), lambda a: a.tanh(), [(4, 5)]),
        "sum_all": (lambda a: a.sum(), lambda a: a.sum(), [(3, 4)]),
        "sum_axis0": (lambda a: a.sum(axis=0), lambda a: a.sum(dim=0), [(3, 4)]),
        "sum_axis1_keep": (lambda a: a.sum(axis=1, keepdims=True),
                           lambda a: a.sum(dim=1, keepdim=True), [(3, 4)]),
        "mean": (lambda a: a.mean(axis=1), lambda a: a.mean(dim=1), [(3, 4)]),
        "T": (lambda a, b: a.T @ b, lambda a, b: a.T @ b, [(4, 3), (4, 2)]),
        "reshape": (lambda a: a.reshape(6, 2), lambda a: a.reshape(6, 2), [(3, 4)]),
        "reuse": (lambda a: a * a + a, lambda a: a * a + a, [(3, 3)]),
    }


CASES = _cases()


def _weights(shape, seed):
    return np.random.default_rng(seed + 99).standard_normal(shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_gradients_float64(name):
    f_nn, f_torch, shapes = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    xs = [rng.standard_normal(s) + 0.1 for s in shapes]   # away from relu's kink at 0
    out_shape = f_nn(*[Tensor(x) for x in xs]).shape
    w = _weights(out_shape, 0)                              # a random linear functional

    def f():
        return float((f_nn(*[Tensor(x) for x in xs]).data * w).sum())

    ts = [Tensor(x, requires_grad=True) for x in xs]
    (f_nn(*ts) * w).sum().backward()
    for t, g in zip(ts, numgrad(f, xs)):
        assert t.grad.dtype == np.float64
        np.testing.assert_allclose(t.grad, g, rtol=1e-6, atol=1e-8)
    if torch is None:
        return
    tt = [torch.tensor(x, requires_grad=True) for x in xs]
    (f_torch(*tt) * torch.tensor(w)).sum().backward()
    for t, x in zip(ts, tt):
        np.testing.assert_allclose(t.grad, x.grad.numpy(), rtol=1e-12, atol=1e-12)


@needs_torch
@settings(max_examples=25)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**31))
def test_random_shapes_linear_tanh_vs_torch(m, k, n, seed):
    rng = np.random.default_rng(seed)
    x, W, b = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal(n)
    tx, tW, tb = (Tensor(a, requires_grad=True) for a in (x, W, b))
    ((tx @ tW + tb).tanh() * (tx @ tW)).mean().backward()
    qx, qW, qb = (torch.tensor(a, requires_grad=True) for a in (x, W, b))
    ((qx @ qW + qb).tanh() * (qx @ qW)).mean().backward()
    for a, q in ((tx, qx), (tW, qW), (tb, qb)):
        np.testing.assert_allclose(a.grad, q.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cross_entropy_gradcheck_and_torch():
    rng = np.random.default_rng(3)
    z = rng.standard_normal((5, 4)) * 3
    y = rng.integers(0, 4, 5)
    t = Tensor(z, requires_grad=True)
    loss = nn.cross_entropy(t, y)
    loss.backward()
    (g,) = numgrad(lambda: float(nn.cross_entropy(Tensor(z), y).data), [z])
    np.testing.assert_allclose(t.grad, g, rtol=1e-6, atol=1e-9)
    if torch is None:
        return
    q = torch.tensor(z, requires_grad=True)
    ql = torch.nn.functional.cross_entropy(q, torch.tensor(y))
    ql.backward()
    assert float(loss.data) == pytest.approx(float(ql.detach()), rel=1e-13)
    np.testing.assert_allclose(t.grad, q.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_mse_gradcheck():
    rng = np.random.default_rng(4)
    p, y = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    t = Tensor(p, requires_grad=True)
    nn.mse_loss(t, y).backward()
    (g,) = numgrad(lambda: float(nn.mse_loss(Tensor(p), y).data), [p])
    np.testing.assert_allclose(t.grad, g, rtol=1e-6, atol=1e-9)


@needs_torch
@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_mlp_loss_and_gradients_vs_torch_float32(activation):
    rng = np.random.default_rng(5)
    model = nn.MLP([64, 32, 16, 10], activation=activation, seed=1)
    x = rng.random((20, 64)).astype(np.float32)
    y = rng.integers(0, 10, 20)
    loss = nn.cross_entropy(model(Tensor(x)), y)
    loss.backward()
    assert loss.data.dtype == np.float32
    tparams = [torch.tensor(p.data, requires_grad=True) for p in model.parameters()]
    h = torch.tensor(x)
    for i in range(0, len(tparams), 2):
        h = h @ tparams[i] + tparams[i + 1]
        if i + 2 < len(tparams):
            h = h.relu() if activation == "relu" else h.tanh()
    tl = torch.nn.functional.cross_entropy(h, torch.tensor(y))
    tl.backward()
    assert float(loss.data) == pytest.approx(float(tl.detach()), rel=2e-6)
    for p, q in zip(model.parameters(), tparams):
        assert p.grad.dtype == np.float32
        np.testing.assert_allclose(p.grad, q.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_backward_accumulates_and_zero_grad():
    w = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    (w * 3.0).sum().backward()
    (w * 3.0).sum().backward()
    np.testing.assert_array_equal(w.grad, [6.0, 6.0])
    lin = nn.Linear(2, 2)
    lin(Tensor(np.ones((1, 2), np.float32))).sum().backward()
    assert lin.W.grad is not None
    lin.zero_grad()
    assert lin.W.grad is None and lin.b.grad is None


def test_input_validation():
    with pytest.raises(TypeError):
        Tensor(np.arange(3))                   # integer arrays are not silently cast
    with pytest.raises(TypeError):
        Tensor(np.ones(3, np.float16))
    with pytest.raises(ValueError):
        Tensor(np.ones((2, 2))).backward()     # non-scalar without a gradient
    with pytest.raises(ValueError):
        nn.cross_entropy(Tensor(np.ones((2, 3))), np.array([0, 1, 2]))
    with pytest.raises(TypeError):
        nn.cross_entropy(Tensor(np.ones((2, 3))), np.array([0.0, 1.0]))
    with pytest.raises(ValueError):
        Tensor(np.ones((2, 3))) @ Tensor(np.ones(3))
    with pytest.raises(ValueError):
        nn.MLP([3, 4], activation="gelu")
    assert Tensor([1.0, 2.0]).data.dtype == np.float32


def test_cross_entropy_refuses_labels_outside_classes():
    z = Tensor(np.zeros((2, 3)))
    for bad in ([0, -1], [3, 0], [0, 7]):
        with pytest.raises(ValueError, match=r"\[0, 3\)"):
            nn.cross_entropy(z, np.array(bad))
    nn.cross_entropy(z, np.array([0, 2]))            # the edges are fine


def test_backward_uses_the_forward_policy():
    """The graph carries the policy its forward ran under: backward() outside the
    ``with policy:`` block rounds gradients as inside it."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    W0 = (rng.standard_normal((6, 3)) * 0.3).astype(np.float32)
    y = np.array([0, 1, 2, 1])

    def grads(backward_inside):
        policy = nn.Precision("bf16")
        W = Tensor(W0, requires_grad=True, fmt=None)
        with policy:
            loss = nn.cross_entropy((Tensor(x) @ W).tanh(), y)
            if backward_inside:
                loss.backward()
        if not backward_inside:
            loss.backward()
        return W.grad, policy.grad_nonzero

    g_in, n_in = grads(True)
    g_out, n_out = grads(False)
    np.testing.assert_array_equal(g_out, g_in)
    # the gradients were rounded and counted by the bf16 policy in both cases (before
    # the fix, a backward outside the block counted them on the default policy: 0)
    assert n_out == n_in > 0


def test_keep_where_equals_np_where_bitwise():
    from nn.engine import _keep_where
    rng = np.random.default_rng(2)
    for dt in (np.float32, np.float64):
        g = rng.standard_normal((37, 29)).astype(dt)
        g[::3, ::2] = -0.0
        g[1, 1] = np.nan
        m = rng.random((37, 29)) < 0.5
        want = np.where(m, g, dt(0))
        got = _keep_where(m, g)
        assert got.dtype == dt
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


# ---------------------------------------------------------------------------
# junk arguments are refused with a message naming them
def _tiny():
    import nn as _nn
    x = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    return _nn, _nn.MLP([4, 5, 3]), x, y


def test_evaluate_refuses_an_empty_batch_and_junk():
    nn_, m, x, y = _tiny()
    P = nn_.Precision()
    with pytest.raises(ValueError, match="empty"):
        nn_.evaluate(m, P, x[:0], y[:0])
    for bad, words in [(dict(batch=-1), "batch"), (dict(batch=True), "batch"),
                       (dict(batch=2.5), "batch"), (dict(task="junk"), "task")]:
        with pytest.raises((ValueError, TypeError), match=words):
            nn_.evaluate(m, P, x, y, **bad)
    with pytest.raises(TypeError, match="policy"):
        nn_.evaluate(m, x, y, P)                      # the policy comes second
    with pytest.raises(ValueError, match="rows"):
        nn_.evaluate(m, P, x, y[:3])
    loss, acc = nn_.evaluate(m, P, x, y, batch=3)
    assert np.isfinite(loss) and 0 <= acc <= 1


def test_train_step_refuses_an_empty_batch_and_junk():
    nn_, m, x, y = _tiny()
    opt = nn_.SGD(m.parameters(), lr=0.1)
    for kw, words in [(dict(x=x[:0], y=y[:0]), "empty"), (dict(task="junk"), "task"),
                      (dict(loss_factor=float("nan")), "loss_factor"),
                      (dict(loss_factor=0.0), "loss_factor")]:
        args = dict(x=x, y=y)
        args.update(kw)
        with pytest.raises((ValueError, TypeError), match=words):
            nn_.train_step(m, opt, nn_.NoLossScaler(), **args)


@pytest.mark.parametrize("make, words", [
    (lambda nn_, p: nn_.SGD(p, lr=True), "lr"),
    (lambda nn_, p: nn_.SGD(p, lr=float("inf")), "lr"),
    (lambda nn_, p: nn_.SGD(p, lr=0.1, momentum=2), "momentum"),
    (lambda nn_, p: nn_.SGD(p, lr=0.1, momentum=float("nan")), "momentum"),
    (lambda nn_, p: nn_.SGD(p, lr=0.1, weight_decay=-1), "weight_decay"),
    (lambda nn_, p: nn_.Adam(p, lr=0.1, betas=(1.5, 0.9)), "betas"),
    (lambda nn_, p: nn_.Adam(p, lr=0.1, betas=(0.9,)), "betas"),
    (lambda nn_, p: nn_.Adam(p, lr=0.1, eps=-1), "eps"),
    (lambda nn_, p: nn_.Adam(p, lr=0.1, eps=True), "eps"),
])
def test_optimizers_refuse_junk_hyperparameters(make, words):
    nn_, m, _, _ = _tiny()
    with pytest.raises((ValueError, TypeError), match=words):
        make(nn_, m.parameters())
