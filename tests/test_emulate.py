"""sf.emulate: the dispatch mode. Each modelled op is checked against the
library's models called directly on the same encodings (platform_op,
platform_convert, platform_sum/mean) and, where torch's CPU kernel computes the
same thing (correctly rounded ops, c10's fp8 casts), against torch itself."""
import json
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import softfloat as sf  # noqa: E402
from softfloat.emulation import EmulationError, Report  # noqa: E402
from softfloat.emulation.encode import from_bits, to_bits  # noqa: E402

FMT = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}
HALVES = (torch.float16, torch.bfloat16)


def _bits(t):
    return to_bits(t).copy()


def _sample(dtype, n=4000, seed=0):
    """Random encodings of ``dtype`` (NaN, inf, zeros and subnormals included)."""
    rng = np.random.default_rng(seed)
    b = rng.integers(0, 1 << 16, n).astype(np.uint16)
    b[:8] = [0, 0x8000, 1, 0x8001, 0x7C00 if dtype == torch.float16 else 0x7F80, 0xFC00 if
             dtype == torch.float16 else 0xFF80, 0x7E01 if dtype == torch.float16 else 0x7FC1,
             0x3C00 if dtype == torch.float16 else 0x3F80]
    return from_bits(b, dtype)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_tensor_tensor(dtype, op):
    x, y = _sample(dtype, seed=1), _sample(dtype, seed=2)
    with sf.emulate("h100") as run:
        r = getattr(torch, op)(x, y)
    want = sf.platform_op(op, _bits(x), _bits(y), fmt=FMT[dtype], platform="torch_cuda")
    assert np.array_equal(_bits(r), want)
    # correctly rounded: torch's CPU kernel (float32, rounded once) gives the same values
    native = getattr(torch, op)(x, y)
    ok = ~native.isnan()
    assert torch.equal(r[ok], native[ok]) and bool(r[~ok].isnan().all())
    nan = 0x7FFF
    assert (_bits(r)[~ok.numpy()] == nan).all()          # the platform's NaN pattern
    assert run.report().calls(f"aten.{op}.Tensor", claim="proof") == 1


@pytest.mark.parametrize("dtype", HALVES)
def test_scalar_and_alpha_ops(dtype):
    x, y = _sample(dtype, seed=3), _sample(dtype, seed=4)
    with sf.emulate("a100") as run:
        got = {"mul": x * 0.1, "add": x + 0.1, "div": x / 0.3, "rsub": 2.5 - x,
               "alpha": torch.add(x, y, alpha=0.3), "addcmul": torch.addcmul(x, y, y, value=0.7),
               "lerp": torch.lerp(x, y, 0.3)}
    b, c, f, P = _bits(x), _bits(y), FMT[dtype], "torch_cuda"
    want = {"mul": sf.platform_op("mul", b, 0.1, fmt=f, platform=P),
            "add": sf.platform_op("add", b, 0.1, fmt=f, platform=P),
            "div": sf.platform_op("div", b, 0.3, fmt=f, platform=P),
            "rsub": sf.platform_op("sub", 2.5, b, fmt=f, platform=P),
            "alpha": sf.platform_op("add", b, c, fmt=f, platform=P, alpha=0.3),
            "addcmul": sf.platform_op("addcmul", b, c, c, fmt=f, platform=P, value=0.7),
            "lerp": sf.platform_op("lerp", b, c, 0.3, fmt=f, platform=P)}
    for k in got:
        assert np.array_equal(_bits(got[k]), want[k]), k
    # x / s is x * RN32(1/s) in float32, rounded once: a float32 computation on the CPU
    inv = torch.tensor(np.float32(1) / np.float32(0.3))
    ref = (x.float() * inv).to(dtype)
    ok = ~ref.isnan()
    assert torch.equal(got["div"][ok], ref[ok])
    rep = run.report()
    assert rep.calls("aten.mul.Tensor", claim="modelled") == 1
    assert rep.calls("aten.lerp.Scalar") == 1


def test_inplace_and_out_variants():
    x, y = _sample(torch.bfloat16, seed=5), _sample(torch.bfloat16, seed=6)
    want = sf.platform_op("mul", _bits(x), _bits(y), fmt="bf16", platform="torch_cuda")
    z, out = x.clone(), torch.empty(0, dtype=torch.bfloat16)
    with sf.emulate("h100") as run:
        z.mul_(y)
        torch.mul(x, y, out=out)
    assert np.array_equal(_bits(z), want) and np.array_equal(_bits(out), want)
    assert run.report().calls("aten.mul_.Tensor") == 1


def test_float32_division_by_scalar_is_a_reciprocal_multiply():
    x = torch.tensor([169.0, 1.0, 7.0, -3.5], dtype=torch.float32)
    with sf.emulate("h100"):
        r = x / 13.0
    inv = np.float32(1.0) / np.float32(13.0)
    assert torch.equal(r, x * torch.tensor(inv))
    assert r[0].item() != 13.0          # 169/13 on CUDA: 13.000001


def test_float32_proof_ops_and_nan_pattern():
    x = torch.tensor([1.0, float("inf"), 0.0, 3.0])
    y = torch.tensor([3.0, float("-inf"), 0.0, float("nan")])
    with sf.emulate("h100") as run:
        r = x / y
    assert torch.equal(r[:1], torch.tensor([1.0]) / 3.0)
    assert (_bits(r)[1:] == 0x7FFFFFFF).all()
    assert run.report().calls("aten.div.Tensor", claim="proof") == 1


@pytest.mark.parametrize("src", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("dst", [torch.float8_e4m3fn, torch.float8_e5m2])
def test_fp8_casts(src, dst):
    if src == torch.float32:
        rng = np.random.default_rng(7)
        x = torch.from_numpy(rng.integers(0, 1 << 32, 20000, dtype=np.uint64)
                             .astype(np.uint32).view(np.int32)).view(torch.float32)
    else:
        x = from_bits(np.arange(1 << 16, dtype=np.uint16), src)
    with sf.emulate("h100"):
        r = x.to(dst)
    fs, fd = FMT.get(src), {torch.float8_e4m3fn: "fp8_e4m3", torch.float8_e5m2: "fp8_e5m2"}[dst]
    b = _bits(x)
    if fs != "fp32":
        b = sf.platform_convert(b, fs, "fp32", "torch_cuda")
    assert np.array_equal(_bits(r), sf.platform_convert(b, "fp32", fd, "torch_cuda"))
    # torch's CPU cast runs the same c10 conversion: equal wherever the source is not NaN
    native = x.to(dst)
    ok = ~x.isnan()
    assert np.array_equal(_bits(r)[ok.numpy()], _bits(native)[ok.numpy()])


def test_fp8_saturation_rules():
    x = torch.tensor([500.0, float("inf"), -1e9, 448.0, 464.0, 1e6, float("nan")])
    with sf.emulate("h100"):
        e4, e5 = x.to(torch.float8_e4m3fn), x.to(torch.float8_e5m2)
    assert list(_bits(e4)) == [0x7E, 0x7E, 0xFE, 0x7E, 0x7E, 0x7E, 0x7F]   # saturating
    assert list(_bits(e5)[[1, 2, 5, 6]]) == [0x7C, 0xFC, 0x7C, 0x7F]      # to inf


def test_16bit_casts_nan_and_double_rounding():
    nan = torch.tensor([0x7FC00123, 0xFF800001], dtype=torch.int64).to(torch.int32).view(torch.float32)
    d = torch.tensor([1 + 2 ** -11 + 2 ** -40], dtype=torch.float64)
    with sf.emulate("h100") as run:
        h, bf, hd = nan.half(), nan.bfloat16(), d.half()
        back = h.float()
    assert (_bits(h) == 0x7FFF).all() and (_bits(bf) == 0x7FFF).all()
    assert (_bits(back) == 0x7FFFFFFF).all()
    assert hd.item() == 1.0              # float64 -> float32 -> half
    rep = run.report()
    assert rep.calls("aten._to_copy", claim="exact") == 1
    assert rep.calls("aten._to_copy", claim="proof", dtype="float16") == 2


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_sum_and_mean(dtype):
    x = (torch.randn(7, 33, generator=torch.Generator().manual_seed(0)) * 10).to(dtype)
    with sf.emulate("h100") as run:
        s, m, s1 = x.sum(), x.mean(dim=1, keepdim=True), x.sum(dim=0)
    f = FMT[dtype]
    assert np.array_equal(_bits(s), sf.platform_sum(_bits(x).reshape(-1), f, platform="torch_cuda"))
    assert np.array_equal(_bits(m).reshape(-1), sf.platform_mean(_bits(x), f, axis=1,
                                                                 platform="torch_cuda"))
    assert np.array_equal(_bits(s1), sf.platform_sum(_bits(x), f, axis=0, platform="torch_cuda"))
    assert run.report().calls("aten.sum", claim="modelled") == 2
    # integers: every partial sum exact, so any order gives the exact sum
    k = torch.arange(-20, 44, dtype=dtype)
    with sf.emulate("h100"):
        assert k.sum().item() == sum(range(-20, 44))


def test_opmath_ops_round_once():
    x = _sample(torch.bfloat16, seed=8)
    with sf.emulate("h100") as run:
        r = torch.exp(x)
        g = torch.nn.functional.gelu(x)
    for got, fn in ((r, torch.exp), (g, torch.nn.functional.gelu)):
        want = sf.platform_convert(_bits(fn(x.float())), "fp32", "bf16", "torch_cuda")
        assert np.array_equal(_bits(got), want)
    assert run.report().calls("aten.exp.default", claim="modelled") == 1


@pytest.mark.parametrize("dtype", HALVES)
def test_small_model_forward_backward_optimizer(dtype):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                                torch.nn.Linear(16, 4)).to(dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, eps=1e-3)   # 1e-8 is 0 in fp16
    x = torch.randn(5, 8).to(dtype)
    with sf.emulate("h100") as run:
        for _ in range(2):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x).float(), torch.tensor([0, 1, 2, 3, 0]))
            loss.backward()
            opt.step()
    assert torch.isfinite(loss)
    assert all(p.grad is not None and p.grad.dtype == dtype for p in model.parameters())
    rep = run.report()
    assert rep.calls("aten.native_layer_norm_backward", claim="modelled") == 2
    assert rep.calls("aten.addcdiv_") == 2 * 6
    assert rep.calls("aten.addmm") == 4


def test_report_counts_table_and_json():
    x = torch.ones(4, dtype=torch.float16)
    with sf.emulate("h100", splitk=(2, "contiguous")) as run:
        for _ in range(3):
            x = x + x
        x.view(2, 2).t()
        torch.arange(5) * 2
    rep = run.report()
    assert rep.calls("aten.add.Tensor", dtype="float16", claim="proof") == 3
    assert rep.calls("aten.view.default", claim="exact") == 1
    assert rep.calls("aten.mul.Tensor", dtype="int64", claim="exact") == 1
    assert rep.by_claim()["proof"] == 3 and rep.by_claim()["native"] == 0
    d = json.loads(rep.to_json())
    assert d["device"] == "h100" and d["settings"]["splitk"] == [2, "contiguous"]
    assert Report.from_json(rep.to_json()) == rep
    s = str(rep)
    assert s.splitlines()[1].split()[:4] == ["op", "dtype", "calls", "claim"]
    assert "aten.add.Tensor" in s and "calls by claim: proof 3" in s


def test_strict_mode():
    x = torch.ones(3)
    with sf.emulate("h100", strict=True) as run:
        (torch.arange(4) + 1).sum()          # integer ops are exact
        x * 2.0
        with pytest.raises(EmulationError, match=r"aten\.exp\.default on float32"):
            torch.exp(x)
        with pytest.raises(EmulationError, match="dtype float64 is not emulated"):
            torch.ones(2, dtype=torch.float64) * torch.ones(2, dtype=torch.float64)
    assert run.report().calls(claim="native") == 0
    with sf.emulate("h100") as run:
        torch.exp(x)
    assert run.report().calls("aten.exp", claim="native") == 1


def test_errors():
    with pytest.raises(ValueError, match="unknown device 'h1000'.*h100_pcie.*hopper"):
        sf.emulate("h1000")
    with pytest.raises(ValueError, match="splitk must be"):
        sf.emulate("h100", splitk=(0, "contiguous"))
    with pytest.raises(TypeError, match="strict must be a bool"):
        sf.emulate("h100", strict=1)
    # (this torch has no CUDA: the check is called as the mode calls it on each op)
    from softfloat.emulation.mode import EmulateMode
    with pytest.raises(EmulationError, match="cuda tensor or device"):
        EmulateMode._check_cpu(torch.ops.aten.zeros.default, ([3],), {"device": torch.device("cuda")})
    EmulateMode._check_cpu(torch.ops.aten.zeros.default, ([3],), {"device": torch.device("cpu")})


def test_allow_tf32_source():
    from softfloat.emulation import EmulatedDevice
    d = EmulatedDevice.make("h100")
    old = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        assert d.tf32()
        torch.backends.cuda.matmul.allow_tf32 = False
        assert not d.tf32()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    assert EmulatedDevice.make("h100", allow_tf32=True).tf32()


def test_import_softfloat_does_not_import_torch_and_missing_torch_names_the_extra():
    code = ("import sys, softfloat\nassert 'torch' not in sys.modules\n"
            "sys.modules['torch'] = None\n"
            "import softfloat.emulation\nassert sys.modules['torch'] is None\n"
            "try:\n    softfloat.emulate('h100')\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "softfloat-lab[torch]" in out.stdout


def test_emulate_is_a_plain_function_of_the_emulation_package():
    import types

    import softfloat.emulation as m
    assert isinstance(sf.emulate, types.FunctionType) and sf.emulate is m.emulate
    assert type(m) is types.ModuleType and sf.emulation is m
    assert isinstance(sf.emulate("h100"), m.Run)
