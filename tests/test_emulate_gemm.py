"""sf.emulate's GEMMs: each equals softfloat.cublas called directly on the same
encodings (contiguous copies of the operands, whatever their strides), and
products of small integers (exact in every model) equal the exact product."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import softfloat as sf  # noqa: E402
from softfloat import cublas  # noqa: E402
from softfloat.emulation.encode import to_bits  # noqa: E402

FMT = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}


def _rand(*shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_mm_addmm_bmm_baddbmm_equal_cublas(dtype):
    f = FMT[dtype]
    a, b = _rand(12, 40, dtype=dtype, seed=0), _rand(40, 9, dtype=dtype, seed=1)
    w = _rand(9, 40, dtype=dtype, seed=2)          # a Linear weight: addmm gets w.t(), a view
    bias, c = _rand(9, dtype=dtype, seed=3), _rand(12, 9, dtype=dtype, seed=4)
    A3, B3 = _rand(3, 12, 40, dtype=dtype, seed=5), _rand(3, 40, 9, dtype=dtype, seed=6)
    with sf.emulate("h100") as run:
        mm = a @ b
        lin = torch.nn.functional.linear(a, w, bias)
        am = torch.addmm(c, a, b, beta=0.5, alpha=2.0)
        bm = torch.bmm(A3, B3)
        bam = torch.baddbmm(A3 @ B3, A3, B3, beta=0.25)
    g = lambda x, y, **k: cublas.gemm(to_bits(x), to_bits(y), device="h100", a_fmt=f, out_fmt=f, **k)
    assert np.array_equal(to_bits(mm), g(a, b))
    assert np.array_equal(to_bits(lin), g(a, w.t(), bias=to_bits(bias), bias_fmt=f))
    assert np.array_equal(to_bits(am), g(a, b, c=to_bits(c), c_fmt=f, alpha=2.0, beta=0.5))
    assert np.array_equal(to_bits(bm), g(A3, B3))
    assert np.array_equal(to_bits(bam), g(A3, B3, c=g(A3, B3), c_fmt=f, beta=0.25))
    rep = run.report()
    assert rep.calls("aten.addmm", claim="native") == 0 and rep.calls("aten.mm") == 1
    assert rep.calls("aten.bmm") == 2 and rep.calls("aten.baddbmm") == 1


def test_small_integer_products_are_exact():
    g = torch.Generator().manual_seed(7)
    a = torch.randint(-3, 4, (10, 16), generator=g)     # |sums| <= 144: exact in bf16 too
    b = torch.randint(-3, 4, (16, 6), generator=g)
    exact = a.double() @ b.double()
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        with sf.emulate("a100"):
            r = a.to(dtype) @ b.to(dtype)
        assert torch.equal(r.double(), exact)


def test_allow_tf32_switches_the_float32_path():
    a, b = _rand(8, 64, dtype=torch.float32, seed=8), _rand(64, 8, dtype=torch.float32, seed=9)
    old = torch.backends.cuda.matmul.allow_tf32
    out = {}
    try:
        for tf in (False, True):
            torch.backends.cuda.matmul.allow_tf32 = tf
            with sf.emulate("h100") as run:
                out[tf] = a @ b
            want = cublas.gemm(to_bits(a), to_bits(b), device="h100", a_fmt="fp32",
                               out_fmt="fp32", allow_tf32=tf)
            assert np.array_equal(to_bits(out[tf]), want)
            assert ("tf32" in run.report().rows[0].model) == tf
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    assert not torch.equal(out[False], out[True])
    with sf.emulate("h100", allow_tf32=True):      # the override, whatever torch's flag says
        assert torch.equal(a @ b, out[True])


@pytest.mark.parametrize("fast", [True, False])
def test_scaled_mm_equals_cublas_scaled_mm(fast):
    x8 = (_rand(32, 256, dtype=torch.float32, seed=10) * 4).to(torch.float8_e4m3fn)
    w8 = (_rand(16, 256, dtype=torch.float32, seed=11) * 4).to(torch.float8_e4m3fn)
    sa, sb = torch.tensor(0.5), torch.tensor(0.0625)
    with sf.emulate("h100_pcie", splitk=(2, "contiguous")) as run:
        y = torch._scaled_mm(x8, w8.t(), sa, sb, out_dtype=torch.bfloat16, use_fast_accum=fast)
    want = cublas.scaled_mm(to_bits(x8), to_bits(w8.t()), np.float32([0.5]), np.float32([0.0625]),
                            device="h100_pcie", out_fmt="bf16", fast_accum=fast,
                            splitk=(2, "contiguous"))
    assert y.dtype == torch.bfloat16 and np.array_equal(to_bits(y), want)
    assert "split-K 2 contiguous" in run.report().rows[0].model


def test_attention_goes_through_the_math_path():
    q = _rand(1, 2, 8, 16, dtype=torch.bfloat16, seed=12).requires_grad_()
    with sf.emulate("h100") as run:
        o = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        o.float().sum().backward()
    # torch's math path reads 16-bit q, k, v as float32 (unless
    # allow_fp16_bf16_reduction_math_sdp), on CUDA as on the CPU: float32 GEMMs
    rep = run.report()
    assert rep.calls("aten.bmm", claim="native") == 0
    assert rep.calls("aten.bmm", dtype="float32") >= 2
    assert rep.calls("aten._safe_softmax") == 1
    assert not any("flash" in r.op for r in rep.rows)
    assert q.grad is not None and q.grad.dtype == torch.bfloat16


def test_cpu_autocast_runs_the_gemm_in_bfloat16():
    x, w = _rand(4, 32, dtype=torch.float32, seed=13), _rand(8, 32, dtype=torch.float32, seed=14)
    with sf.emulate("h100") as run, torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.nn.functional.linear(x, w)
    assert y.dtype == torch.bfloat16
    want = cublas.gemm(to_bits(x.bfloat16()), to_bits(w.bfloat16().t()), device="h100",
                       a_fmt="bf16", out_fmt="bf16")
    assert np.array_equal(to_bits(y), want)
    assert run.report().calls("aten.mm", dtype="bfloat16") == 1


@pytest.mark.parametrize("device,profile,split", [("h100_pcie", "hopper", None),
                                                  ("h100_pcie", "hopper", (3, "contiguous")),
                                                  ("rtx4060", "ada", None),
                                                  ("rtx4060", "ada", (3, "pairwise"))])
def test_scaled_mm_under_the_mode_equals_mmaemu(device, profile, split):
    """torch._scaled_mm in a program under sf.emulate against mmaemu's CPU reference
    model (built from recordings of those GPUs), bit for bit."""
    mmaemu = pytest.importorskip("mmaemu")
    import warnings
    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        g = torch.Generator().manual_seed(15)
        x8 = (torch.randn(24, 320, generator=g) * 30).to(torch.float8_e4m3fn)
        w8 = (torch.randn(48, 320, generator=g) * 2 ** -6).to(torch.float8_e4m3fn)
        x8[3] = 0
        sa, sb = torch.tensor(0.37), torch.tensor(1.3e-3)
        for out in (torch.bfloat16, torch.float32):
            for fast in (True, False):
                with sf.emulate(device, splitk=split):
                    y = torch._scaled_mm(x8, w8.t(), sa, sb, out_dtype=out, use_fast_accum=fast)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ref = mmaemu.scaled_mm(x8, w8.t(), sa, sb, out_dtype=out, use_fast_accum=fast,
                                           profile=profile, splitk=1 if split is None else split,
                                           backend="reference")
                assert np.array_equal(to_bits(y), to_bits(ref)), (out, fast)
    finally:
        torch.set_num_threads(n_threads)


def test_scaled_mm_refuses_what_the_gpu_refuses():
    x8 = torch.ones(16, 40).to(torch.float8_e4m3fn)
    w8 = torch.ones(32, 40).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0)
    with sf.emulate("h100"):
        with pytest.raises(RuntimeError, match="k and n multiples of 16"):
            torch._scaled_mm(x8, w8.t(), one, one, out_dtype=torch.bfloat16)
        w8 = torch.ones(32, 48).to(torch.float8_e4m3fn)
        with pytest.raises(RuntimeError, match="column-major"):
            torch._scaled_mm(torch.ones(16, 48).to(torch.float8_e4m3fn), w8.t().contiguous(),
                             one, one, out_dtype=torch.bfloat16)
