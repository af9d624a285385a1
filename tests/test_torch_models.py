"""softfloat.platforms.torch_cpu: the torch 2.13 CPU sum/mean/cumsum/matmul models.

Without torch: the model agrees with softfloat.accumulate evaluating the same
tree (`cascade_order`), an independent implementation. With torch (skipped per
test when it is missing): the probe recovers the model's tree from torch itself,
and the model matches torch bit for bit on random shapes, layouts and threads."""
import os
import sys

import numpy as np
import pytest

import softfloat as sf
import softfloat.probe as P
from softfloat.platforms import torch_cpu as TM

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _values(rng, n, fmt):
    v = np.exp2(rng.uniform(-8, 4, n)) * rng.choice([-1.0, 1.0], n)
    big = rng.random(n) < 0.05
    v[big] *= 2.0 ** rng.integers(6, 11, int(big.sum()))
    return sf.to_bits(v, fmt)


# ---------------------------------------------------------------------------
# without torch
# ---------------------------------------------------------------------------
def test_softfloat_torch_models_is_the_same_public_api():
    # README's name for the models: the same objects as softfloat.platforms.torch_cpu's
    from softfloat import torch_models
    assert torch_models.__all__ == TM.__all__
    assert all(getattr(torch_models, n) is getattr(TM, n) for n in TM.__all__)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("n,kind", [(7, "ilp"), (70, "inner"), (333, "inner"), (1000, "inner")])
def test_model_equals_its_tree_through_accumulate(fmt, n, kind):
    rng = np.random.default_rng(n)
    x = _values(rng, n, fmt)
    tree = P.binarize(TM.cascade_order(n, kind, fmt))
    acc = sf.Accumulator("fp32", rounding="nearest_even", order=tree)
    for _ in range(3):
        x = _values(rng, n, fmt)
        want = sf.sum(x, fmt, axis=None, acc=acc, out_fmt=fmt, out_rounding="nearest_even")
        assert TM.torch_cpu_sum(x, fmt) == want


def test_plain_cascade_order_matches_dim0_model():
    # a contiguous (R, 32) array summed over dim 0 takes one cascade per column
    rng = np.random.default_rng(3)
    R = 300
    x = _values(rng, R * 32, "fp16").reshape(R, 32)
    acc = sf.Accumulator("fp32", rounding="nearest_even",
                         order=P.binarize(TM.cascade_order(R, "plain")))
    want = sf.sum(x, "fp16", axis=0, acc=acc, out_fmt="fp16", out_rounding="nearest_even")
    assert np.array_equal(TM.torch_cpu_sum(x, "fp16", 0), want)


def test_platform_hook_routes_to_the_model():
    rng = np.random.default_rng(4)
    x = _values(rng, 5000, "bf16").reshape(50, 100)
    assert np.array_equal(sf.platform_sum(x, "bf16", axis=1, platform="torch_cpu"),
                          TM.torch_cpu_sum(x, "bf16", 1))
    assert np.array_equal(sf.platform_sum(x.T, "bf16", axis=None, platform="torch_cpu", threads=2),
                          TM.torch_cpu_sum(x.T, "bf16", None, threads=2))
    assert np.array_equal(sf.platform_mean(x, "bf16", axis=0, platform="torch_cpu"),
                          TM.torch_cpu_mean(x, "bf16", 0))
    assert np.array_equal(sf.platform_cumsum(x, "bf16", 1, platform="torch_cpu"),
                          TM.torch_cpu_cumsum(x, "bf16", 1))
    a, b = x[:8, :16], x[:16, :9]
    assert np.array_equal(sf.platform_matmul(a, b, "bf16", platform="torch_cpu"),
                          TM.torch_cpu_matmul(a, b, "bf16"))
    # the model's keywords are refused by platforms without a model
    with pytest.raises(TypeError):
        sf.platform_sum(x, "bf16", axis=1, platform="torch_cuda", threads=2)


def test_input_validation():
    x = np.zeros(4, np.uint16)
    with pytest.raises(ValueError):
        TM.torch_cpu_sum(x.astype(np.uint8), "fp8_e4m3")
    with pytest.raises(TypeError):
        TM.torch_cpu_sum(np.zeros(4), "fp16")
    with pytest.raises(ValueError):
        TM.torch_cpu_sum(x, "fp16", axis=2)
    with pytest.raises(ValueError):
        TM.torch_cpu_sum(x, "fp16", threads=0)
    with pytest.raises(ValueError):
        TM.torch_cpu_sum(np.zeros(8, np.uint16)[::-1], "fp16")
    with pytest.raises(ValueError):
        TM.torch_cpu_sum(np.broadcast_to(np.zeros(1, np.uint16), (8,)), "fp16")
    with pytest.raises(ValueError):
        TM.torch_cpu_matmul(np.zeros((1, 3), np.uint16), np.zeros((3, 2), np.uint16), "fp16")
    with pytest.raises(ValueError):
        TM.torch_cpu_matmul(np.zeros((2, 3), np.uint32), np.zeros((3, 2), np.uint32), "fp32")


def test_all_negative_zero_sums_to_positive_zero():
    z = np.full(40, 0x8000, np.uint16)
    assert TM.torch_cpu_sum(z, "fp16") == 0
    assert np.all(TM.torch_cpu_cumsum(z, "fp16", 0) == 0)


def test_budget_chunks_and_thinning():
    from softfloat.budget import Budget, chunk_ranges
    from softfloat.sweep import shard_range
    r = chunk_ranges(1 << 20, 1 << 16)
    assert len(r) == 16 and r[0] == (0, 1 << 16) and r[-1][1] == 1 << 20
    assert r[3] == shard_range(3, 16, 1 << 20)
    assert chunk_ranges(10, 3, offset=-5) == [(-5, -3), (-3, 0), (0, 2), (2, 5)]
    now = [0.0]
    done = []

    def work(c):
        done.append(c)
        now[0] += 1.0                                  # one second per chunk
    b = Budget(10.0, runs=2, clock=lambda: now[0])
    cov, note = b.run(list(range(100)), work)          # share 5 s: thinned
    assert 0 < cov < 0.2 and "time budget" in note and done[0] == 0
    done.clear()
    cov2, note2 = b.run(list(range(3)), work)           # what is left is enough
    assert cov2 == 1.0 and note2 is None and done == [0, 1, 2]


# ---------------------------------------------------------------------------
# against torch
# ---------------------------------------------------------------------------
def _torch():
    return pytest.importorskip("torch")


def _t(bits, fmt):
    torch = _torch()
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[fmt]
    view = {2: np.int16, 4: np.int32}[bits.itemsize]
    return torch.from_numpy(np.ascontiguousarray(bits).view(view)).view(dt)


def _bits(t):
    torch = _torch()
    t = t.contiguous()
    if t.element_size() == 2:
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.view(torch.int32).numpy().view(np.uint32)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp32"])
def test_probe_recovers_the_model_tree_from_torch(fmt):
    torch = _torch()
    keep = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        r = P.probe_sum(P.torch_adapter(lambda t: t.sum()), 70, fmt)
        assert r.tree == P.canonical_tree(TM.cascade_order(70, "inner", fmt))
        assert set(r.precision.values()) == {24}     # float32 partial sums
        r = P.probe_sum(P.torch_adapter(lambda t: t.cumsum(0)[-1]), 9, fmt)
        seq = 0
        for i in range(1, 9):
            seq = (seq, i)
        assert r.tree == P.canonical_tree(seq)
        assert set(r.precision.values()) == {53 if fmt == "fp32" else 24}
    finally:
        torch.set_num_threads(keep)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp32"])
def test_sum_mean_cumsum_match_torch(fmt):
    torch = _torch()
    rng = np.random.default_rng(11)
    keep = torch.get_num_threads()
    try:
        cases = 0
        for shape in [(1,), (5,), (16,), (37,), (300,), (40000,), (3, 40), (40, 3), (37, 65),
                      (100, 70), (9, 300)]:
            x = _values(rng, int(np.prod(shape)), fmt).reshape(shape)
            tx = _t(x, fmt).reshape(shape)
            views = [(x, tx)]
            if x.ndim == 2:
                views += [(x.T, tx.t()), (x[:, ::2], tx[:, ::2])]
            else:
                views += [(x[::2], tx[::2])]
            for xv, tv in views:
                for th in (1, 2):
                    torch.set_num_threads(th)
                    for axis in [None] + list(range(xv.ndim)):
                        for op in ("sum", "mean", "cumsum"):
                            if op == "cumsum" and axis is None:
                                continue
                            f = getattr(torch, op)
                            got = _bits(f(tv) if axis is None else f(tv, dim=axis))
                            if op == "cumsum":
                                exp = TM.torch_cpu_cumsum(xv, fmt, axis)
                            else:
                                exp = getattr(TM, f"torch_cpu_{op}")(xv, fmt, axis, threads=th)
                            assert np.array_equal(np.ravel(got), np.ravel(exp)), \
                                (op, shape, xv.strides, axis, th)
                            cases += np.size(got)
        assert cases > 1000
    finally:
        torch.set_num_threads(keep)


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_matmul_matches_torch(fmt):
    torch = _torch()
    rng = np.random.default_rng(12)
    keep = torch.get_num_threads()
    try:
        checked = 0
        for (m, k, n) in [(2, 1, 2), (4, 7, 4), (16, 16, 16), (16, 17, 16), (9, 129, 3),
                          (40, 41, 42), (5, 70, 6), (32, 300, 8), (8, 1536, 6),
                          (12, 700, 20), (32, 1024, 32), (6, 4096, 5)]:
            a = sf.to_bits(np.exp2(rng.uniform(-3, 3, m * k)) * rng.choice([-1, 1], m * k),
                           fmt).reshape(m, k)
            bt = sf.to_bits(np.exp2(rng.uniform(-3, 3, n * k)) * rng.choice([-1, 1], n * k),
                            fmt).reshape(n, k)
            bias = sf.to_bits(rng.uniform(-4, 4, n), fmt)
            b = np.ascontiguousarray(bt.T)
            aT = np.ascontiguousarray(a.T)
            for th in (1, 2):
                torch.set_num_threads(th)
                ta, tb, tbt, taT = _t(a, fmt), _t(b, fmt), _t(bt, fmt), _t(aT, fmt)
                pairs = [
                    (ta @ tb, TM.torch_cpu_matmul(a, b, fmt)),
                    (torch.nn.functional.linear(ta, tbt), TM.torch_cpu_matmul(a, bt.T, fmt)),
                    (taT.t() @ tb, TM.torch_cpu_matmul(aT.T, b, fmt)),
                    (taT.t() @ tbt.t(), TM.torch_cpu_matmul(aT.T, bt.T, fmt)),
                    (torch.addmm(_t(bias, fmt), ta, tb), TM.torch_cpu_matmul(a, b, fmt, bias=bias)),
                ]
                if not TM.matmul_claimed(m, k, n, fmt):
                    continue                # (bf16 on AMX tiles: not modelled)
                for i, (got, exp) in enumerate(pairs):
                    assert np.array_equal(_bits(got), exp), (m, k, n, th, i)
                checked += 1
        assert checked >= 8
    finally:
        torch.set_num_threads(keep)


def test_cuda_probe_logic_on_cpu(tmp_path):
    _torch()
    sys.path.insert(0, ROOT)
    from validation import cuda_probe
    out = str(tmp_path / "cp")
    assert cuda_probe.main(["--device", "cpu", "--out", out, "--sizes", "40", "--ks", "8",
                            "--trials", "3"]) == 0
    import json
    with open(os.path.join(out, "probe.json")) as fh:
        rep = json.load(fh)
    sums = [c for c in rep["cases"] if c["op"] == "sum"]
    assert len(sums) == 2 and all(c["error"] is None for c in rep["cases"])
    assert all(c["tree_model_mismatches"] == 0 for c in sums)
    assert "order probe" in open(os.path.join(out, "probe.md")).read()


@pytest.mark.slow
def test_crosscheck_torch_models_full(tmp_path):
    _torch()
    sys.path.insert(0, ROOT)
    from validation import torch_crosscheck as tc
    import json
    out = str(tmp_path / "tm")
    rc = tc.main(["--device", "cpu", "--quick", "--only", "torch_models", "--out", out])
    with open(os.path.join(out, "report.json")) as fh:
        rep = json.load(fh)
    exact = [c for c in rep["checks"] if c["exact"]]
    assert rc == 0 and all(c["mismatches"] == 0 for c in exact)
    assert sum(c["cases"] for c in exact if c["name"] in ("model_sum", "model_mean")) >= 10 ** 5


# ---------------------------------------------------------------------------
# the matmul claim follows what is probed on this host
# ---------------------------------------------------------------------------
def test_onednn_half_chunks_like_bfloat16():
    # oneDNN's half path splits 512 < k <= 1024 in chunks of 512, as its bfloat16
    # path does (a chain over the whole k differs from torch on avx512_fp16 CPUs)
    for k in (1, 300, 512, 513, 1000, 1024, 1025, 4096):
        for kmaj in (False, True):
            assert TM.onednn_fp16_k_block(k, kmaj) == TM.onednn_k_block(k, kmaj), (k, kmaj)


def test_matmul_claim_withdrawn_where_the_host_probe_fails(monkeypatch):
    # pretend this CPU had avx512_fp16: the model then takes oneDNN's half path,
    # which torch on a CPU without it does not: the host probe sees the mismatch
    # and the claim is withdrawn (on a CPU with avx512_fp16 the probe decides)
    _torch()
    from softfloat.platforms.torch_cpu import hostprobe, matmul as MM
    real = MM.host_has_fp16_gemm()
    monkeypatch.setattr(MM, "host_has_fp16_gemm", lambda: not real)
    monkeypatch.setattr(hostprobe, "_RESULTS", {})
    assert not TM.matmul_claimed(32, 1024, 32, "fp16")
    if not real:
        assert TM.host_probe()[("fp16", "onednn_fp16", "512<k<=1024")] is False


def test_matmul_claimed_only_for_paths_probed_here():
    # every claim is a comparison with torch on this CPU (threads 1, 2 and torch's
    # count); without torch nothing is claimed
    torch = _torch()
    probed = TM.host_probe()
    assert probed and all(isinstance(v, bool) for v in probed.values())
    for (fmt, path, regime), ok in probed.items():
        assert ok or not any(
            TM.matmul_claimed(m, k, n, fmt) for (m, k, n) in TM.probe_shapes(fmt, path, regime))
    # the oneDNN bfloat16 path beyond k = 4096 is not claimed (probed: k = 8192 with
    # a transposed a and 2 threads differs from the extrapolated chunking)
    assert not TM.matmul_claimed(8, 8192, 8, "bf16")
    if not TM.host_has_amx_bf16() and torch.ops.mkldnn._is_mkldnn_bf16_supported():
        assert probed[("bf16", "onednn_bf16", "512<k<=1024")]
        assert TM.matmul_claimed(32, 1024, 32, "bf16")


def test_matmul_claim_needs_torch(monkeypatch):
    from softfloat.platforms.torch_cpu import hostprobe
    monkeypatch.setattr(hostprobe, "_RESULTS", {})
    monkeypatch.setitem(sys.modules, "torch", None)
    assert not TM.matmul_claimed(4, 7, 4, "fp16")
    assert TM.host_probe() == {}
