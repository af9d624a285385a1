"""nn.scaler against torch.amp.GradScaler on the CPU: the same scripted sequence of
overflowing and clean steps gives the same scale trajectory, bit for bit."""
import numpy as np
import pytest

import nn
from nn.scaler import unscale

try:
    import torch
except ImportError:                 # the scaler's own rules are tested without torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")


def torch_trajectory(pattern, **kw):
    """Scale before each step and after the last, and which steps torch skipped."""
    p = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.SGD([p], lr=0.1)
    sc = torch.amp.GradScaler("cpu", **kw)
    scales, skipped = [], []
    for bad in pattern:
        opt.zero_grad()
        c = torch.tensor(float("inf") if bad else 1.0)
        before = p.detach().clone()
        scaled = sc.scale((p * c).sum())
        scales.append(sc.get_scale())          # the float32 scale this step used
        scaled.backward()
        sc.step(opt)
        sc.update()
        skipped.append(bool(torch.equal(before, p.detach())))
    scales.append(sc.get_scale())
    return scales, skipped


def ours(pattern, **kw):
    sc = nn.DynamicLossScaler(**kw)
    scales = []
    for bad in pattern:
        scales.append(sc.scale)
        g = np.full(3, np.inf if bad else 1.0, np.float32) * np.float32(sc.scale)
        _, found_inf = unscale([g], sc.scale)
        sc.update(found_inf)
    scales.append(sc.scale)
    return scales


PATTERNS = {
    "calibrate": [1] * 5 + [0] * 12 + [1] + [0] * 9,
    "sawtooth": ([0] * 4 + [1]) * 5,
    "random": list(np.random.default_rng(0).random(60) < 0.2),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(PATTERNS))
@pytest.mark.parametrize("kw", [
    dict(init_scale=2.0 ** 16, growth_interval=3),
    dict(init_scale=1000.0, growth_factor=1.7, backoff_factor=0.3, growth_interval=2),
    dict(init_scale=3.0e38, growth_interval=1),           # growth would overflow float32
])
def test_dynamic_trajectory_equals_gradscaler(name, kw):
    pattern = [bool(b) for b in PATTERNS[name]]
    expect, skipped = torch_trajectory(pattern, **kw)
    assert skipped == pattern                  # torch skips exactly the overflowing steps
    assert ours(pattern, **kw) == expect       # exact float equality


@needs_torch
def test_default_constants_match_torch():
    sc, t = nn.DynamicLossScaler(), torch.amp.GradScaler("cpu")
    assert sc.scale == t.get_scale() == 65536.0
    assert (sc.growth_factor, sc.backoff_factor, sc.growth_interval) == (
        t.get_growth_factor(), t.get_backoff_factor(), t.get_growth_interval())


@needs_torch
def test_unscale_multiplies_by_float32_reciprocal():
    g = np.array([3.0, 1e-3, 7.5], np.float32) * np.float32(3.0)
    out, inf = unscale([g], 3.0)
    assert not inf
    tg = torch.tensor(g)
    torch._amp_foreach_non_finite_check_and_unscale_(
        [tg], torch.zeros(()), torch.tensor(3.0).double().reciprocal().float())
    np.testing.assert_array_equal(out[0], tg.numpy())
    assert out[0].dtype == np.float32
    _, inf = unscale([np.array([1.0, np.nan], np.float32)], 2.0)
    assert inf


def test_hysteresis_and_min_scale():
    sc = nn.DynamicLossScaler(init_scale=8.0, hysteresis=2, min_scale=2.0, growth_interval=100)
    sc.update(True)
    assert sc.scale == 8.0                     # first overflow tolerated
    sc.update(True)
    assert sc.scale == 4.0                     # second one backs off
    sc.update(True)
    assert sc.scale == 2.0                     # tolerance stays used up until growth
    sc.update(True)
    assert sc.scale == 2.0                     # floor
    assert [f for _, f in sc.history] == [True] * 4


def test_static_and_validation():
    s = nn.StaticLossScaler(128)
    s.update(True)
    s.update(False)
    assert s.scale == 128.0 and s.skips
    with pytest.raises(ValueError):
        nn.StaticLossScaler(0.0)
    with pytest.raises(ValueError):
        nn.DynamicLossScaler(growth_factor=1.0)
    with pytest.raises(ValueError):
        nn.DynamicLossScaler(backoff_factor=1.5)
    with pytest.raises(ValueError):
        nn.DynamicLossScaler(growth_interval=0)


def test_scale_has_a_floor_and_nan_steps_never_update():
    """A scale at its floor backs off no further (torch's would reach
    0, and 1/0 turned every gradient into NaN that the next 'clean' step applied)."""
    from nn.scaler import MIN_SCALE
    with pytest.raises(ValueError):
        nn.Precision("fp16", loss_scaling="dynamic", loss_scale=2.0 ** -149)
    with pytest.raises(ValueError):
        nn.DynamicLossScaler(init_scale=2.0 ** -149)
    with pytest.raises(ValueError):
        nn.StaticLossScaler(2.0 ** -127)
    sc = nn.DynamicLossScaler(init_scale=MIN_SCALE)
    sc.update(True)
    assert sc.scale == MIN_SCALE
    policy = nn.Precision("fp16", loss_scaling="dynamic", loss_scale=MIN_SCALE,
                          master_weights=True)
    model = nn.MLP([4, 3, 2], seed=0)
    opt = nn.SGD(model.parameters(), lr=0.1, precision=policy)
    scaler = nn.make_scaler(policy)
    x = np.ones((2, 4), np.float32)
    y = np.array([0, 1])
    before = [p.data.copy() for p in model.parameters()]
    r = nn.train_step(model, opt, scaler, np.full((2, 4), np.nan, np.float32), y)
    assert r.found_inf
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.data, b)          # the NaN step did not update
    assert scaler.scale == MIN_SCALE
    r = nn.train_step(model, opt, scaler, x, y)
    assert not r.found_inf
    assert all(np.isfinite(p.data).all() for p in model.parameters())


def test_unscale_overflow_is_found():
    g = np.array([3.0e38], np.float32)                  # finite, but not once unscaled
    _, found = unscale([g], 0.5)
    assert found
