"""Platform descriptions (softfloat/platforms.py): the data, the validation of it,
and the operations under a platform, each checked against an oracle computed
another way (numpy float16/float32 hardware arithmetic, ml_dtypes, gmpy2/MPFR,
torch on the CPU)."""
import math

import gmpy2
import ml_dtypes
import numpy as np
import pytest

import softfloat as sf
import softfloat.platforms as P

FP16, BF16, FP32 = sf.get_format("fp16"), sf.get_format("bf16"), sf.get_format("fp32")
RNG = np.random.default_rng(6)


def h2f(bits):                      # fp16 encodings -> float32 (numpy hardware)
    return bits.view(np.float16).astype(np.float32)


def f2h(x32):                       # float32 -> fp16 encodings, RNE (numpy)
    with np.errstate(over="ignore"):
        return x32.astype(np.float16).view(np.uint16)


def b2f(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f2b(x32):
    return x32.astype(ml_dtypes.bfloat16).view(np.uint16)


def finite16(f, n, lo=-12, hi=10):
    v = np.exp2(RNG.uniform(lo, hi, n)) * RNG.choice([-1.0, 1.0], n)
    return sf.to_bits(v, f)


def isnan16(b, f):
    return (b.astype(np.int64) & (f.sign_mask - 1)) > f.inf_bits


# ---------------------------------------------------------------------------
# the data
# ---------------------------------------------------------------------------
def test_presets_and_lookup():
    names = sf.platform_names()
    for n in ("ieee", "torch_cuda", "torch_cpu", "numpy", "x86_sse", "arm_default_nan", "riscv"):
        assert n in names
        assert sf.get_platform(n).name == n
    assert sf.get_platform(None).name == "ieee"
    assert sf.get_platform("CUDA").name == "torch_cuda"
    p = sf.get_platform("torch_cuda")
    assert sf.get_platform(p) is p
    assert p.float64_route == "fp32" and p.scalar_div == "reciprocal"
    assert p.nan_rule("cast", "fp16") == 0x7FFF and p.nan_rule("cast", "bf16") == 0x7FFF
    assert p.scalar_rule("add") == "opmath"
    c = sf.get_platform("torch_cpu")
    assert c.scalar_rule("add") == "narrow" and c.scalar_rule("mul") == "opmath"
    assert c.claims_nan("cast:bf16") and not c.claims_nan("result:bf16")
    assert p.claims_nan("result:fp16")
    assert sf.get_platform("x86_sse").fresh_nan("fp16") == 0xFE00
    assert sf.get_platform("ieee").fresh_nan("bf16") == 0x7FC0
    assert all(len(q.notes) >= 1 for q in map(sf.get_platform, names))


def test_bad_platforms_raise():
    with pytest.raises(ValueError, match="unknown platform"):
        sf.get_platform("vax")
    with pytest.raises(TypeError, match="Platform"):
        sf.get_platform(3)
    with pytest.raises(ValueError, match="float64_route"):
        sf.Platform("x", float64_route="fp16")
    with pytest.raises(ValueError, match="fused"):
        sf.Platform("x", fused={"sqrt"})
    with pytest.raises(ValueError, match="scalars"):
        sf.Platform("x", scalars={"pow": "narrow"})
    with pytest.raises(ValueError, match="nan_cast"):
        sf.Platform("x", nan_cast={"fp16": "sometimes"})
    with pytest.raises(ValueError, match="mean"):
        sf.Reduction("fp32", "sequential", "guess")
    with pytest.raises(ValueError, match="unknown format"):
        sf.Platform("x", opmath="fp128")


def test_bad_operands_raise():
    a = np.zeros(3, np.uint16)
    with pytest.raises(ValueError, match="unknown op"):
        sf.platform_op("pow", a, a, fmt="fp16")
    with pytest.raises(TypeError, match="takes 2 operands"):
        sf.platform_op("add", a, fmt="fp16")
    with pytest.raises(TypeError, match="uint16"):
        sf.platform_op("add", a.astype(np.int32), a, fmt="fp16")
    with pytest.raises(TypeError, match="at least one operand"):
        sf.platform_op("add", 1.0, 2.0, fmt="fp16")
    with pytest.raises(TypeError, match="alpha"):
        sf.platform_op("mul", a, a, fmt="fp16", alpha=2.0)
    with pytest.raises(TypeError, match="bool"):
        sf.platform_op("add", a, True, fmt="fp16")
    with pytest.raises(TypeError, match="float"):
        sf.platform_to_bits(np.arange(3), "fp16", "torch_cuda")


# ---------------------------------------------------------------------------
# conversions
# ---------------------------------------------------------------------------
def test_float64_route_double_rounding():
    # 1 + 2^-11 + 2^-40: direct rounding gives 1 + 2^-10; through float32 the
    # 2^-40 is lost, a tie remains and goes to even: 1.0 (torch, measured)
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40])
    assert sf.platform_to_bits(x, "fp16", "torch_cuda")[0] == 0x3C00
    assert sf.platform_to_bits(x, "fp16", "torch_cpu")[0] == 0x3C00
    assert sf.platform_to_bits(x, "fp16", "numpy")[0] == 0x3C01
    assert sf.platform_to_bits(x, "fp16", "ieee")[0] == 0x3C01
    y = np.array([1 + 2.0 ** -8 + 2.0 ** -40])
    assert sf.platform_to_bits(y, "bf16", "torch_cuda")[0] == 0x3F80


def test_float64_route_against_numpy_float32():
    x = np.concatenate([RNG.standard_normal(20000) * 100,
                        sf.from_bits(np.arange(0x3C00, 0x3D00, dtype=np.uint16), FP16)
                        + 2.0 ** -12 + 2.0 ** -45])
    got = sf.platform_to_bits(x, "fp16", "torch_cuda")
    assert np.array_equal(got, f2h(x.astype(np.float32)))
    gotb = sf.platform_to_bits(x, "bf16", "torch_cuda")
    assert np.array_equal(gotb, f2b(x.astype(np.float32)))
    # numpy's own float64 -> float16 is direct
    assert np.array_equal(sf.platform_to_bits(x, "fp16", "numpy"), x.astype(np.float16).view(np.uint16))


def test_nan_patterns_of_casts():
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7FA00000, 0xFF812345], np.uint32).view(np.float32)
    assert list(sf.platform_to_bits(nans, "fp16", "torch_cuda")) == [0x7FFF] * 4
    assert list(sf.platform_to_bits(nans, "bf16", "torch_cuda")) == [0x7FFF] * 4
    # torch CPU (measured): F16C keeps sign and top payload bits, quieted; bf16 all 0xFFFF
    assert list(sf.platform_to_bits(nans, "fp16", "torch_cpu")) == [0x7E00, 0xFE00, 0x7F00, 0xFE09]
    assert list(sf.platform_to_bits(nans, "bf16", "torch_cpu")) == [0xFFFF] * 4
    assert list(sf.platform_to_bits(nans, "fp16", "riscv")) == [0x7E00] * 4
    # widening: bf16 -> float32 is a shift (signalling payload kept); fp16 on CUDA canonical
    b = np.array([0x7FA0, 0xFF81], np.uint16)
    assert list(sf.platform_convert(b, "bf16", "fp32", "torch_cpu")) == [0x7FA00000, 0xFF810000]
    h = np.array([0x7D00, 0xFE01], np.uint16)
    assert list(sf.platform_convert(h, "fp16", "fp32", "torch_cuda")) == [0x7FFFFFFF] * 2
    assert list(sf.platform_convert(h, "fp16", "fp32", "torch_cpu")) == [0x7FE00000, 0xFFC02000]


# ---------------------------------------------------------------------------
# numpy preset against numpy's own float16 arithmetic (every x, several scalars)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_numpy_preset_matches_numpy_float16(op):
    a = RNG.integers(0, 1 << 16, 40000, dtype=np.uint32).astype(np.uint16)
    b = RNG.integers(0, 1 << 16, 40000, dtype=np.uint32).astype(np.uint16)
    with np.errstate(all="ignore"):
        ref = getattr(np, {"add": "add", "sub": "subtract", "mul": "multiply",
                           "div": "true_divide"}[op])(a.view(np.float16), b.view(np.float16))
        got = sf.platform_op(op, a, b, fmt="fp16", platform="numpy")
        r = ref.view(np.uint16)
        both = isnan16(got, FP16) & isnan16(r, FP16)
        assert np.array_equal(got[~both], r[~both])
        assert np.array_equal(isnan16(got, FP16), isnan16(r, FP16))
        x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
        for s in (0.1, 1 / 3, -7.25, 1e-6):   # NEP 50: the Python float becomes float16
            ref = getattr(np, {"add": "add", "sub": "subtract", "mul": "multiply",
                               "div": "true_divide"}[op])(x.view(np.float16), s).view(np.uint16)
            got = sf.platform_op(op, x, s, fmt="fp16", platform="numpy")
            ok = (got == ref) | (isnan16(got, FP16) & isnan16(ref, FP16))
            assert ok.all(), (op, s, np.nonzero(~ok)[0][:5])


# ---------------------------------------------------------------------------
# torch CUDA rules against float32 hardware arithmetic (numpy float32 is IEEE)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt,to32,from32", [("fp16", h2f, f2h), ("bf16", b2f, f2b)])
def test_cuda_scalar_rules(fmt, to32, from32):
    f = sf.get_format(fmt)
    x = finite16(f, 5000)
    x32 = to32(x)
    for s in (0.1, 0.3, -2.5, 1e-3):
        s32 = np.float32(s)
        # x * s: scalar kept float32, one product in float32, then RNE
        assert np.array_equal(sf.platform_op("mul", x, s, fmt=f, platform="torch_cuda"),
                              from32(x32 * s32))
        # x + s: float32 sum then RNE (a double rounding, as on the device)
        assert np.array_equal(sf.platform_op("add", x, s, fmt=f, platform="torch_cuda"),
                              from32(x32 + s32))
        # x / s = x * RN32(1 / RN32(s))
        inv = np.float32(1) / s32
        assert np.array_equal(sf.platform_op("div", x, s, fmt=f, platform="torch_cuda"),
                              from32(x32 * inv))
        # the CPU narrows add's scalar, keeps mul's, divides truly
        sn = to32(sf.platform_to_bits(np.float64(s), f, "torch_cpu").reshape(1))[0]
        assert np.array_equal(sf.platform_op("add", x, s, fmt=f, platform="torch_cpu"),
                              from32(x32 + sn))
        assert np.array_equal(sf.platform_op("div", x, s, fmt=f, platform="torch_cpu"),
                              from32(x32 / s32))


def _fma32(a, b, c):
    """float32 fma by MPFR (24 bits, float32's exponent range), one rounding."""
    with gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True,
                       round=gmpy2.RoundToNearest):
        return np.array([float(gmpy2.fma(gmpy2.mpfr(float(p)), gmpy2.mpfr(float(q)),
                                         gmpy2.mpfr(float(r))))
                         for p, q, r in zip(a, b, c)], np.float32)


@pytest.mark.parametrize("fmt,to32,from32", [("fp16", h2f, f2h), ("bf16", b2f, f2b)])
def test_fused_ops_against_mpfr(fmt, to32, from32):
    f = sf.get_format(fmt)
    n = 1500
    a, b, c = (finite16(f, n, -8, 6) for _ in range(3))
    A, B, C = to32(a), to32(b), to32(c)
    w = np.float32(0.3)
    # lerp(a, b, 0.3) = fma(w, b - a, a) in float32
    d = B - A
    ref = from32(_fma32(np.full(n, w), d, A))
    assert np.array_equal(sf.platform_op("lerp", a, b, 0.3, fmt=f, platform="torch_cuda"), ref)
    # lerp(a, b, 0.7) = fma(-(b - a), 1 - w, b)
    ref = from32(_fma32(-d, np.full(n, np.float32(1) - np.float32(0.7)), B))
    assert np.array_equal(sf.platform_op("lerp", a, b, 0.7, fmt=f, platform="torch_cuda"), ref)
    # addcmul(value=0.3): CUDA fma(v, t1*t2, x); CPU fma(v*t1, t2, x)
    ref = from32(_fma32(np.full(n, w), B * C, A))
    assert np.array_equal(sf.platform_op("addcmul", a, b, c, fmt=f, platform="torch_cuda",
                                         value=0.3), ref)
    ref = from32(_fma32(w * B, C, A))
    assert np.array_equal(sf.platform_op("addcmul", a, b, c, fmt=f, platform="torch_cpu",
                                         value=0.3), ref)
    # add(alpha=0.3) on CUDA: fma(alpha, b, a)
    ref = from32(_fma32(np.full(n, w), B, A))
    assert np.array_equal(sf.platform_op("add", a, b, fmt=f, platform="torch_cuda", alpha=0.3), ref)
    # unfused variant: two roundings in float32
    unf = sf.get_platform("torch_cuda").replace(fused=frozenset())
    assert np.array_equal(sf.platform_op("add", a, b, fmt=f, platform=unf, alpha=0.3),
                          from32(A + w * B))


# ---------------------------------------------------------------------------
# NaN results per platform
# ---------------------------------------------------------------------------
def test_nan_results_per_platform():
    z = np.zeros(1, np.uint16)
    inf = np.array([0x7C00], np.uint16)
    qn = np.array([0xFD23], np.uint16)     # negative signalling NaN with a payload
    one = np.array([0x3C00], np.uint16)
    op = sf.platform_op
    assert op("div", z, z, fmt="fp16", platform="torch_cuda")[0] == 0x7FFF
    assert op("sub", inf, inf, fmt="fp16", platform="torch_cuda")[0] == 0x7FFF
    assert op("mul", qn, one, fmt="fp16", platform="torch_cuda")[0] == 0x7FFF
    assert op("mul", np.array([0xFFA3], np.uint16), np.array([0x3F80], np.uint16), fmt="bf16",
              platform="torch_cuda")[0] == 0x7FFF
    assert op("div", z, z, fmt="fp16", platform="torch_cpu")[0] == 0xFE00   # x86 default NaN
    assert op("mul", qn, one, fmt="fp16", platform="torch_cpu")[0] == 0xFF23  # quieted payload
    assert op("div", z, z, fmt="fp16", platform="x86_sse")[0] == 0xFE00
    assert op("mul", qn, one, fmt="fp16", platform="x86_sse")[0] == 0xFF23
    assert op("div", z, z, fmt="fp16", platform="ieee")[0] == 0x7E00
    assert op("mul", qn, one, fmt="fp16", platform="riscv")[0] == 0x7E00
    assert op("mul", qn, one, fmt="fp16", platform="arm_default_nan")[0] == 0x7E00
    assert op("sqrt", np.array([0xBC00], np.uint16), fmt="bf16", platform="riscv")[0] == 0x7FC0
    # sign ops touch the sign bit only; relu keeps -0 and NaN
    assert op("neg", qn, fmt="fp16", platform="torch_cuda")[0] == 0x7D23
    assert op("abs", qn, fmt="fp16", platform="torch_cuda")[0] == 0x7D23
    r = op("relu", np.array([0x8000, 0xBC00, 0x3C00, 0xFE00], np.uint16), fmt="fp16",
           platform="torch_cpu")
    assert list(r) == [0x8000, 0, 0x3C00, 0xFE00]
    zr = sf.get_platform("torch_cuda").replace(relu_negzero="zero")
    assert op("relu", np.array([0x8000], np.uint16), fmt="fp16", platform=zr)[0] == 0


# ---------------------------------------------------------------------------
# the direct path (one op in fmt) equals the opmath detour
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_direct_path_equals_detour(fmt, monkeypatch):
    f = sf.get_format(fmt)
    n = 30000
    a = RNG.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    b = RNG.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    # plus tiny operands (products and quotients near the subnormal midpoints)
    t = np.concatenate([np.arange(0, 64, dtype=np.uint16), np.arange(0x0380, 0x0400, dtype=np.uint16)])
    ta, tb = (g.reshape(-1) for g in np.meshgrid(t, np.concatenate([t, t ^ 0x8000,
              sf.to_bits(np.array([0.5, 0.75, 1.5, 3.0, 0.0078125]), f)]), indexing="ij"))
    a, b = np.concatenate([a, ta]), np.concatenate([b, tb])
    for op in ("add", "sub", "mul", "div", "sqrt"):
        args = (a,) if op == "sqrt" else (a, b)
        fast = sf.platform_op(op, *args, fmt=f, platform="torch_cuda")
        monkeypatch.setattr(P.ops, "USE_DIRECT_PATH", False)
        slow = sf.platform_op(op, *args, fmt=f, platform="torch_cuda")
        monkeypatch.setattr(P.ops, "USE_DIRECT_PATH", True)
        assert np.array_equal(fast, slow), (op, np.nonzero(fast != slow)[0][:5])


# ---------------------------------------------------------------------------
# reductions and matmul
# ---------------------------------------------------------------------------
def test_sum_mean_rules():
    x = np.array([1.0, 2.0, 4.0] * 3 + [1.0 + 2.0 ** -10], np.float64)
    b = sf.to_bits(x, "fp16")
    s = sf.platform_sum(b, "fp16", platform="torch_cuda")
    assert s == sf.to_bits(x.sum(), "fp16")       # float32 sum exact, one rounding to fp16
    # mean: CPU sum / N, CUDA sum * RN32(1/N), both rounded to fp16 from float32
    n = np.float32(len(x))
    s32 = np.float32(x.sum())
    cpu = sf.platform_mean(b, "fp16", platform="torch_cpu")
    cuda = sf.platform_mean(b, "fp16", platform="torch_cuda")
    assert cpu == f2h(np.array([s32 / n]))[0]
    assert cuda == f2h(np.array([s32 * (np.float32(1) / n)]))[0]
    # an unknown order is refused by sum and mean alike
    for fn in (sf.platform_sum, sf.platform_mean):
        with pytest.raises(ValueError, match="order must be"):
            fn(b, "fp16", platform="torch_cuda", order="tree")
    # mean in an explicit order: sum in float32 (exact here), then / N
    assert sf.platform_mean(b, "fp16", platform="torch_cpu", order="sequential") == cpu
    # all -0 sums to +0 (float32 identity)
    assert sf.platform_sum(np.full(5, 0x8000, np.uint16), "fp16", platform="torch_cuda") == 0
    # pairwise and sequential agree where the float32 sum is exact
    v = sf.to_bits(RNG.uniform(1, 2, 999), "bf16")
    assert sf.platform_sum(v, "bf16", platform="torch_cpu", order="pairwise") == \
        sf.platform_sum(v, "bf16", platform="torch_cpu", order="sequential") == \
        f2b(np.array([b2f(v).astype(np.float64).sum()], np.float32))[0]
    # axis
    m = sf.to_bits(RNG.uniform(1, 2, (4, 6)), "fp16")
    ref = f2h(h2f(m).astype(np.float64).sum(axis=0).astype(np.float32))
    assert np.array_equal(sf.platform_sum(m, "fp16", axis=0, platform="torch_cuda"), ref)


def test_matmul_model_against_float64():
    # with values whose float32 partial sums are exact, the model is the exact product
    f = FP16
    a = sf.to_bits(RNG.integers(-8, 8, (5, 7)).astype(np.float64), f)
    b = sf.to_bits(RNG.integers(-8, 8, (7, 3)).astype(np.float64) / 4, f)
    ref = sf.from_bits(a, f) @ sf.from_bits(b, f)
    got = sf.platform_matmul(a, b, f, platform="torch_cuda")
    assert np.array_equal(got, sf.to_bits(ref, f))
    with pytest.raises(ValueError, match="inner dimension"):
        sf.platform_matmul(a, a, f)


# ---------------------------------------------------------------------------
# torch CPU, directly (a small sample; the full sweep is validation/torch_crosscheck.py)
# ---------------------------------------------------------------------------
def _tt(bits, dt):
    import torch
    return torch.from_numpy(bits.view(np.int16)).view(dt)


def _tb(t):
    import torch
    return t.view(torch.int16).numpy().view(np.uint16)


@pytest.mark.parametrize("fmt,dtname", [("fp16", "float16"), ("bf16", "bfloat16")])
def test_torch_cpu_sample(fmt, dtname):
    torch = pytest.importorskip("torch")      # only this test needs torch
    dt = getattr(torch, dtname)
    f = sf.get_format(fmt)
    a, b, c = (finite16(f, 4000, -8, 8) for _ in range(3))
    ta, tb, tc = _tt(a, dt), _tt(b, dt), _tt(c, dt)
    plat = "torch_cpu"
    cases = [
        (torch.add(ta, tb), sf.platform_op("add", a, b, fmt=f, platform=plat)),
        (ta / tb, sf.platform_op("div", a, b, fmt=f, platform=plat)),
        (ta + 0.1, sf.platform_op("add", a, 0.1, fmt=f, platform=plat)),
        (ta * 0.1, sf.platform_op("mul", a, 0.1, fmt=f, platform=plat)),
        (ta / 0.3, sf.platform_op("div", a, 0.3, fmt=f, platform=plat)),
        (torch.add(ta, tb, alpha=0.3), sf.platform_op("add", a, b, fmt=f, platform=plat, alpha=0.3)),
        (torch.lerp(ta, tb, 0.7), sf.platform_op("lerp", a, b, 0.7, fmt=f, platform=plat)),
        (torch.lerp(ta, tb, tc), sf.platform_op("lerp", a, b, c, fmt=f, platform=plat)),
        (torch.addcmul(ta, tb, tc, value=0.3),
         sf.platform_op("addcmul", a, b, c, fmt=f, platform=plat, value=0.3)),
        (torch.addcdiv(ta, tb, tc, value=0.3),
         sf.platform_op("addcdiv", a, b, c, fmt=f, platform=plat, value=0.3)),
    ]
    for i, (t, ours) in enumerate(cases):
        assert np.array_equal(_tb(t), ours), (i, np.nonzero(_tb(t) != ours)[0][:5])
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40, math.pi, 1e-7, 7e4])
    assert np.array_equal(_tb(torch.from_numpy(x).to(dt)), sf.platform_to_bits(x, f, plat))


# ---------------------------------------------------------------------------
# the device table: every device the library describes, and where
# ---------------------------------------------------------------------------
def test_device_table_covers_every_record_and_each_lookup_returns_it():
    import importlib

    from softfloat.mma import ARCHS, MatrixUnit
    rows = P.devices()
    by_kind = {k: [d for d in rows if d.kind == k] for k in P.DEVICE_KINDS}
    # the three registries, read directly, against the table
    assert [d.name for d in by_kind["platform"]] == sf.platform_names()
    assert [d.name for d in by_kind["matrix unit"]] == list(ARCHS)
    assert [d.name for d in by_kind["block-FMA"]] == [f"{g}_blockfma"
                                                      for g in sf.TENSOR_CORE_PRESETS]
    assert [d.name for d in by_kind["fp8 GEMM"]] == list(sf.mx_gemm.FP8_GEMM_PRESETS)
    # one meaning per name: no name or alias names two rows
    names = [x for d in rows for x in (d.name,) + tuple(d.aliases)]
    assert len(names) == len(set(names)), sorted(x for x in names if names.count(x) > 1)
    assert sum(map(len, by_kind.values())) == len(rows) and P.devices("block-FMA") == \
        by_kind["block-FMA"]
    want = {"platform": P.Platform, "matrix unit": MatrixUnit, "block-FMA": sf.BlockFMA,
            "fp8 GEMM": sf.mx_gemm.FP8GemmModel}
    for d in rows:
        rec = eval(d.lookup, {"sf": sf})
        assert isinstance(rec, want[d.kind]), d
        *mod, fn = d.lookup[3:d.lookup.index("(")].split(".")
        ns = importlib.import_module(".".join(["softfloat"] + mod))
        assert getattr(importlib.import_module(d.module), fn) is getattr(ns, fn), d
        for a in d.aliases:                       # an alias names the same record
            assert eval(d.lookup.replace(repr(d.name), repr(a)), {"sf": sf}) == rec, (d, a)
        for f in d.formats:
            gpu = d.name.removesuffix("_blockfma")
            assert sf.block_fma_preset(gpu, f).width == sf.TENSOR_CORE_PRESETS[gpu][f][0]
    # a platform with transcribed models names their module; importing it registers them
    cpu = next(d for d in rows if d.name == "torch_cpu")
    from softfloat.model_hook import model_for
    assert importlib.import_module(cpu.models).torch_cpu_sum is model_for("torch_cpu", "sum")
    assert [d.models for d in rows if d.models] == [cpu.models]
    with pytest.raises(ValueError, match="kind must be"):
        P.devices("gpu")


def test_widening_fast_path_matches_the_general_kernel_on_every_encoding():
    """fp16/bf16 -> fp32 widening inside the platform interpreter (numpy's exact
    widening, the NaNs by the general kernel) against the general kernel alone, on
    all 65,536 encodings, under every platform's widen NaN rule."""
    from softfloat.platforms import ops as OPS
    from softfloat.platforms.presets import get_platform, platform_names
    allbits = np.arange(1 << 16, dtype=np.uint16)
    for name in platform_names():
        plat = get_platform(name)
        for src in (sf.FP16, sf.BF16):
            fast = OPS._widen(allbits, src, sf.FP32, plat)
            slow = OPS._widen_slow(allbits, src, sf.FP32, plat)
            assert fast.dtype == slow.dtype and np.array_equal(fast, slow), (name, src.name)
