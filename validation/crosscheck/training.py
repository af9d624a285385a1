"""The training check: steps of the `nn` MLP with dynamic loss scaling against
torch's autocast, GradScaler and SGD (the loss-scale trajectory exact, the
weights within a stated bound)."""
from __future__ import annotations

import numpy as np

from .cases import FMT, FP32
from .compare import Result
from .runner import Skip
from .torch_io import tdtype, torch


# 11. one GradScaler-driven training step of the nn MLP ------------------
def check_gradscaler_step(run, dtype):
    """Training steps of the `nn` MLP (fp16/bf16 storage, fp32 master weights,
    fp32 accumulation, dynamic loss scaling) against torch (autocast to
    ``dtype`` + GradScaler + SGD on fp32 parameters). The scale is started high
    so that the first steps overflow and back off; growth_interval 2 makes it
    grow again. Claimed: the loss-scale trajectory and the skipped steps equal;
    weights within a stated bound (torch rounds activations only at its
    autocast points, nn after every op, so weights agree to a few fp16 ulps of
    the update, not bit for bit)."""
    try:
        from nn import MLP, SGD, Precision, make_scaler, train_step
    except Exception as ex:  # nn/ is optional for this script
        raise Skip(f"nn is not importable ({ex!r})")
    t = torch()
    f = FMT[dtype]
    steps = run.n(8, 4)
    sizes = [8, 16, 4]
    init_scale = {"float16": 2.0 ** 22, "bfloat16": 2.0 ** 130}[dtype]  # bf16: overflow fp32
    opts = {"growth_interval": 2}
    P = Precision(params=f.name, accumulate="fp32", master_weights=True,
                  loss_scaling="dynamic", loss_scale=min(init_scale, 2.0 ** 127),
                  scaler_options=opts)
    with P:
        model = MLP(sizes, seed=3)
        w0 = [np.array(p.data, np.float32) for p in model.parameters()]
        opt = SGD(model.parameters(), lr=0.05, precision=P)
        scaler = make_scaler(P)
    rng = np.random.default_rng(7)
    gain = run.nn_gain[dtype]
    xs = [(gain * rng.standard_normal((32, sizes[0]))).astype(np.float32) for _ in range(steps)]
    ys = [rng.integers(0, sizes[-1], 32) for _ in range(steps)]
    ours_scale = []
    for x, y in zip(xs, ys):
        ours_scale.append(scaler.scale)
        with np.errstate(over="ignore", invalid="ignore"):   # overflow is the point
            train_step(model, opt, scaler, x, y, task="classify")
    ours_scale.append(scaler.scale)
    ours_w = [np.array(m, np.float32) for m in (opt.master if opt.master is not None
                                                else [p.data for p in model.parameters()])]
    # torch: the same MLP with fp32 parameters, autocast to dtype, GradScaler
    dev = run.device
    layers = []
    for i in range(0, len(w0), 2):
        lin = t.nn.Linear(w0[i].shape[0], w0[i].shape[1])
        with t.no_grad():
            lin.weight.copy_(t.from_numpy(w0[i].T.copy()))
            lin.bias.copy_(t.from_numpy(w0[i + 1]))
        layers += [lin, t.nn.ReLU()]
    net = t.nn.Sequential(*layers[:-1]).to(dev)
    topt = t.optim.SGD(net.parameters(), lr=0.05)
    gs = t.amp.GradScaler(dev, init_scale=min(init_scale, 2.0 ** 127), growth_interval=2)
    theirs_scale = []
    for x, y in zip(xs, ys):
        theirs_scale.append(float(gs.get_scale()))
        topt.zero_grad()
        with t.autocast(device_type=dev, dtype=tdtype(dtype)):
            out = net(t.from_numpy(x).to(dev))
            loss = t.nn.functional.cross_entropy(out.float(), t.from_numpy(y).to(dev))
        gs.scale(loss).backward()
        gs.step(topt)
        gs.update()
    theirs_scale.append(float(gs.get_scale()))
    theirs_w = []
    for lin in net:
        if isinstance(lin, t.nn.Linear):
            theirs_w += [lin.weight.detach().cpu().numpy().T, lin.bias.detach().cpu().numpy()]
    r = Result("gradscaler_step", dtype, True, False,
               f"{steps} SGD steps of MLP{sizes} with dynamic loss scaling "
               f"(init {min(init_scale, 2.0 ** 127):g}, growth_interval 2), fp32 master "
               f"weights: scale trajectory exact, weights bounded")
    a = np.array(ours_scale, np.float32).view(np.uint32)
    b = np.array(theirs_scale, np.float32).view(np.uint32)
    r.add(b, a, FP32, [np.arange(a.size, dtype=np.float64)])
    diffs = [np.abs(o - w) for o, w in zip(ours_w, theirs_w)]
    moved = [np.abs(w - i) for w, i in zip(theirs_w, w0)]
    max_abs = float(max(d.max() for d in diffs))
    max_move = float(max(m.max() for m in moved))
    u = f.unit_roundoff
    bound = 8 * steps * u * max(max_move, 1e-12)
    d = r.finish(scale_trajectory_ours=ours_scale, scale_trajectory_torch=theirs_scale,
                 weights_max_abs_diff=max_abs, weights_max_update=max_move,
                 weights_bound=f"max |w_nn - w_torch| <= 8 * steps * u({f.name}) * "
                               f"(largest weight change) = {bound:.3g}",
                 weights_within_bound=bool(max_abs <= bound))
    d["passed"] = d["passed"] and d["weights_within_bound"]
    yield d
