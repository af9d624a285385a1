"""The sweep engine and its oracles.

The oracles (softfloat.oracles) are checked against exact rational arithmetic
(tests/exact_reference.py's round_exact, Fractions) and against each other and MPFR; the
engine is checked on sampled slices, on injected faults (it must find them),
on sharding, resuming and the command line. The exhaustive runs are marked slow.
"""
import json
import os
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import oracles as O
from softfloat import sweep as S

import exact_reference as ref          # tests/exact_reference.py: Fraction reference

MODES = list(sf.DETERMINISTIC_MODES)
HAVE_ARITH = all(hasattr(sf, op) for op in ("add", "sub", "mul", "div", "sqrt"))
needs_arith = pytest.mark.skipif(not HAVE_ARITH, reason="arithmetic kernels not available")


def _nan(bits, fmt):
    return ref.is_nan_bits(int(bits), fmt)


def _exact(op, x, y):
    if op == "add":
        return x + y
    if op == "sub":
        return x - y
    if op == "mul":
        return x * y
    return x / y


def _reference_binary(op, a, b, fmt, mode):
    """Exact Fractions + round_exact, for finite nonzero results only (None else)."""
    da, db = ref.decode(int(a), fmt), ref.decode(int(b), fmt)
    if da.cls not in ("finite", "zero") or db.cls not in ("finite", "zero"):
        return None
    if op == "div" and db.cls == "zero":
        return None
    v = _exact(op, da.value, db.value)
    if v == 0:
        return None
    return ref.round_exact(int(v < 0), abs(v), fmt, mode)


# ---------------------------------------------------------------------------
# oracles against exact rational arithmetic
def _fp8_pairs(mode, n):
    if mode == "all":
        return [(i, j) for i in range(256) for j in range(256)]
    rng = np.random.default_rng(1)
    return list(zip(rng.integers(0, 256, n), rng.integers(0, 256, n)))


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("op", O.BINARY_OPS)
def test_ro53_oracle_matches_fractions_fp8(fmt, op, pairs=None):
    f = sf.get_format(fmt)
    allb = np.arange(256, dtype=np.uint8)
    for mode in MODES:
        bits, flg = O.oracle_binary(op, allb, allb, f, mode, method="ro53", outer=True)
        checked = 0
        for i, j in (pairs or _fp8_pairs(mode, 1500)):
            r = _reference_binary(op, i, j, f, mode)
            if r is None:
                continue
            checked += 1
            assert (int(bits[i, j]), int(flg[i, j])) == r, (op, mode, hex(i), hex(j))
        assert checked > 1000


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("op", O.BINARY_OPS)
def test_ro53_oracle_matches_fractions_fp8_all_pairs(fmt, op):
    test_ro53_oracle_matches_fractions_fp8(fmt, op, pairs=_fp8_pairs("all", 0))


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("op", O.BINARY_OPS)
def test_oracles_match_fractions_fp16_bf16_sample(fmt, op):
    f = sf.get_format(fmt)
    rng = np.random.default_rng(2)
    n = 600
    # random patterns plus operands close to each other (cancellation, ties)
    a = rng.integers(0, 1 << 16, n).astype(np.uint16)
    b = np.where(rng.random(n) < 0.3, a ^ rng.integers(0, 8, n).astype(np.uint16),
                 rng.integers(0, 1 << 16, n)).astype(np.uint16)
    for mode in MODES:
        methods = ["ro53", "host"] if mode == "nearest_even" else ["ro53"]
        for m in methods:
            bits, flg = O.oracle_binary(op, a, b, f, mode, method=m)
            for k in range(n):
                r = _reference_binary(op, a[k], b[k], f, mode)
                if r is not None:
                    assert (int(bits[k]), int(flg[k])) == r, (op, mode, m, hex(a[k]), hex(b[k]))


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3"])
def test_oracle_convert_matches_fractions(fmt):
    """fp32 -> fmt on random float32 patterns and values near fmt's grid."""
    f = sf.get_format(fmt)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 1 << 32, 1000, dtype=np.uint64).astype(np.uint32)
    grid = sf.from_bits(rng.integers(0, 1 << f.nbits, 1000).astype(f.dtype), f)
    with np.errstate(invalid="ignore"):
        near = (grid.astype(np.float32).view(np.uint32).astype(np.int64)
                + rng.integers(-3, 4, grid.size)).astype(np.uint32)
    x = np.concatenate([x, near])
    for mode in MODES:
        methods = ["ro53", "host"] if mode == "nearest_even" else ["ro53"]
        for m in methods:
            bits, flg = O.oracle_convert(x, "fp32", f, mode, method=m)
            with np.errstate(invalid="ignore"):
                v = x.view(np.float32).astype(np.float64)
            for k in range(x.size):
                if not np.isfinite(v[k]) or v[k] == 0:
                    continue
                r = ref.round_exact(int(v[k] < 0), abs(Fraction(float(v[k]))), f, mode)
                assert (int(bits[k]), int(flg[k])) == r, (mode, m, hex(x[k]))


def test_oracle_specials():
    f = sf.get_format("fp16")
    inf, ninf, qn, sn, one, z, nz = 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x3C00, 0x0000, 0x8000
    u = lambda *v: np.array(v, np.uint16)  # noqa: E731
    b, fl = O.oracle_binary("add", u(inf, one, sn, one, z, z), u(ninf, sn, one, 0xBC00, nz, nz), f)
    assert _nan(b[0], f) and fl[0] == 16                      # inf - inf invalid
    assert _nan(b[1], f) and fl[1] == 16 and b[1] == 0x7E01   # sNaN quieted, payload kept
    assert b[3] == 0 and fl[3] == 0                           # 1 + -1 = +0
    assert b[4] == 0                                          # +0 + -0 = +0
    b, _ = O.oracle_binary("add", u(z, one), u(nz, 0xBC00), f, "downward")
    assert list(b) == [0x8000, 0x8000]                        # -0 rounding downward
    b, fl = O.oracle_binary("div", u(one, z, one), u(z, z, nz), f)
    assert b[0] == inf and fl[0] == 8 and _nan(b[1], f) and fl[1] == 16 and b[2] == ninf
    b, fl = O.oracle_binary("mul", u(inf, 0x7BFF), u(z, 0x7BFF), f)
    assert _nan(b[0], f) and fl[0] == 16 and b[1] == inf and fl[1] == 5
    b, fl = O.oracle_binary("mul", u(0x7BFF), u(0x7BFF), f, "toward_zero")
    assert b[0] == 0x7BFF and fl[0] == 5
    b, fl = O.oracle_unary("sqrt", u(nz, 0xBC00, inf, 0x4400, 0x4000), f)
    assert b[0] == nz and _nan(b[1], f) and fl[1] == 16 and b[2] == inf
    assert b[3] == 0x4000 and fl[3] == 0 and b[4] == 0x3DA8 and fl[4] == 1   # sqrt(4), sqrt(2)
    # the seed notes' worked examples: 43008.111 -> 0x7940, 1.111 -> 0x3C72 / bf16 0x3F8E
    x = np.array([43008.111, 1.111, 65519.99, 65520.0, 2.0 ** -25], np.float32)
    bits, fl = O.oracle_convert(x.view(np.uint32), "fp32", "fp16")
    assert list(bits[:3]) == [0x7940, 0x3C72, 0x7BFF] and bits[3] == inf and fl[3] == 5
    assert bits[4] == 0 and fl[4] == 3
    bits, _ = O.oracle_convert(x[1:2].view(np.uint32), "fp32", "bf16")
    assert bits[0] == 0x3F8E


@pytest.mark.parametrize("op", O.BINARY_OPS)
def test_mpfr_agrees_with_ro53(op):
    rng = np.random.default_rng(4)
    for fmt in ("fp16", "bf16", "fp8_e5m2"):
        f = sf.get_format(fmt)
        a = rng.integers(0, 1 << f.nbits, 150).astype(f.dtype)
        b = rng.integers(0, 1 << f.nbits, 150).astype(f.dtype)
        for mode in MODES:
            bits, flg = O.oracle_binary(op, a, b, f, mode, method="ro53")
            for k in range(a.size):
                mb, mf = O.mpfr_binary(op, int(a[k]), int(b[k]), f, mode)
                assert mf == flg[k] and (mb == bits[k] or (_nan(mb, f) and _nan(bits[k], f))), \
                    (fmt, op, mode, hex(a[k]), hex(b[k]))


def test_mpfr_sqrt_and_host_sqrt_agree_with_ro53_all_fp16():
    f = sf.get_format("fp16")
    allb = np.arange(1 << 16, dtype=np.uint16)
    h, hf = O.oracle_unary("sqrt", allb, f, method="host")
    r, rf = O.oracle_unary("sqrt", allb, f, method="ro53")
    both_nan = np.isnan(sf.from_bits(h, f)) & np.isnan(sf.from_bits(r, f))
    assert np.array_equal(hf, rf)
    assert np.array_equal(h[~both_nan], r[~both_nan]) and both_nan.sum() > 1000
    rng = np.random.default_rng(5)
    for mode in MODES:
        r, rf = O.oracle_unary("sqrt", allb, f, mode, method="ro53")
        for k in rng.integers(0, 1 << 16, 200):
            mb, mf = O.mpfr_unary("sqrt", int(k), f, mode)
            assert mf == rf[k] and (mb == r[k] or (_nan(mb, f) and _nan(r[k], f))), (mode, hex(k))


def test_host_and_ro53_agree_fp16_bf16_rne_slice():
    """The two float64 oracles on 2**17 pairs per op (different rounding code)."""
    for fmt in ("fp16", "bf16"):
        f = sf.get_format(fmt)
        a = np.array([0x0001, 0x03FF, 0x3C00, 0x7BFF, 0x8400, 0x0080, 0x3F80, 0xC001],
                     f.dtype)[:2]
        b = np.arange(1 << 16, dtype=f.dtype)
        for op in O.BINARY_OPS:
            h, hf = O.oracle_binary(op, a, b, f, method="host", outer=True)
            r, rf = O.oracle_binary(op, a, b, f, method="ro53", outer=True)
            nan = np.isnan(sf.from_bits(h, f)) & np.isnan(sf.from_bits(r, f))
            assert np.array_equal(hf, rf), (fmt, op)
            assert np.array_equal(h[~nan], r[~nan]), (fmt, op)


def test_oracle_argument_errors():
    with pytest.raises(ValueError, match="binary op"):
        O.oracle_binary("pow", np.uint16(1), np.uint16(1), "fp16")
    with pytest.raises(TypeError, match="uint16"):
        O.oracle_binary("add", np.float32(1), np.uint16(1), "fp16")
    with pytest.raises(ValueError, match="deterministic"):
        O.oracle_binary("add", np.uint16(1), np.uint16(1), "fp16", "stochastic")
    with pytest.raises(ValueError, match="host oracle"):
        O.oracle_binary("add", np.uint16(1), np.uint16(1), "fp16", "toward_zero", method="host")


# ---------------------------------------------------------------------------
# the engine: sharding
def test_shards_partition_the_space():
    total = S.total_cases("add", "fp16")
    assert total == 1 << 32 and S.default_shards("add", "fp16") == 256
    for shards in (1, 3, 256, 1000):
        prev = 0
        for k in range(shards):
            lo, hi = S.shard_range(k, shards, total)
            assert lo == prev and hi > lo
            prev = hi
        assert prev == total
    a, b = S.shard_cases(5, "mul", "fp8_e4m3", shards=16)
    assert a.dtype == np.uint8 and a.size == 4096 and set(a) == set(range(80, 96))
    assert np.array_equal(b[:256], np.arange(256))
    # a pure function of its arguments, the sample too
    s1 = S.shard_cases(3, "add", "fp16", shards=64, sample=640, seed=7)
    s2 = S.shard_cases(3, "add", "fp16", shards=64, sample=640, seed=7)
    assert all(np.array_equal(x, y) for x, y in zip(s1, s2)) and s1[0].size == 10
    assert ((s1[0] >= 3 * 1024) & (s1[0] < 4 * 1024)).all()
    (x,) = S.shard_cases(0, "from_float32", "bf16", shards=256)
    assert x.dtype == np.uint32 and x.size == 1 << 24
    with pytest.raises(ValueError, match="shard_id"):
        S.shard_range(4, 4, 100)
    with pytest.raises(ValueError, match="unknown op"):
        S.total_cases("pow", "fp16")


# ---------------------------------------------------------------------------
# the engine on real kernels (sampled slices; the exhaustive runs are slow tests)
@pytest.mark.parametrize("src,dst", [("fp16", "bf16"), ("bf16", "fp16"), ("fp16", "fp8_e4m3"),
                                     ("bf16", "fp8_e5m2")])
def test_convert_sweeps_exhaustive(src, dst):
    for mode in ("nearest_even", "toward_zero", "odd"):
        rep = S.run_sweep(f"convert:{dst}", src, mode)
        assert rep["exhaustive"] and rep["cases"] == 1 << 16
        assert rep["mismatches"] == 0, rep["first_mismatches"]


def test_from_float32_sweep_slice():
    # 2**20 float32 patterns from the ranges around 1.0, +0 and -inf .. -NaN
    rep = S.run_sweep("from_float32", "fp16", "nearest_even", shards=4096,
                      shard_ids=[0, 1016, 4088])
    assert rep["cases"] == 3 << 20 and not rep["exhaustive"]
    assert rep["mismatches"] == 0, rep["first_mismatches"]
    rep = S.run_sweep("from_float32", "bf16", "upward", sample=1 << 18, shards=4, mpfr=50)
    assert rep["mismatches"] == 0 and rep["mpfr"]["mismatches"] == 0


@needs_arith
@pytest.mark.parametrize("op", O.BINARY_OPS)
def test_binary_sweep_sampled_slice(op):
    """Two shards of 2**16 pairs (one a-value range each) per format."""
    for fmt in ("fp16", "bf16"):
        rep = S.run_sweep(op, fmt, "nearest_even", shards=1 << 16, shard_ids=[0x3C00, 0x8001])
        assert rep["cases"] == 1 << 17 and rep["mismatches"] == 0, rep["first_mismatches"]
    rep = S.run_sweep(op, "fp16", "toward_zero", sample=1 << 15, mpfr=20, shards=4)
    assert rep["cases"] == 1 << 15 and rep["mismatches"] == 0, rep["first_mismatches"]
    assert rep["mpfr"]["checked"] == 80 and rep["mpfr"]["mismatches"] == 0


@needs_arith
def test_binary_sweeps_fp8_all_modes():
    for fmt in ("fp8_e4m3", "fp8_e5m2"):
        for op in O.BINARY_OPS:
            for mode in MODES:
                rep = S.run_sweep(op, fmt, mode)
                assert rep["exhaustive"] and rep["cases"] == 1 << 16
                assert rep["mismatches"] == 0, (fmt, op, mode, rep["first_mismatches"])


@needs_arith
def test_sqrt_sweep_fp16():
    for mode in MODES:
        rep = S.run_sweep("sqrt", "fp16", mode)
        assert rep["mismatches"] == 0, (mode, rep["first_mismatches"])


# ---------------------------------------------------------------------------
# the engine finds faults
def _faulty(monkeypatch, flip_bits=None, flip_flags=None):
    real = S._subject

    def subject(kind, op, f, mode, ops, outer):
        r, fl = real(kind, op, f, mode, ops, outer)
        r, fl = r.copy(), fl.copy()
        if flip_bits is not None and flip_bits < r.size:
            r[flip_bits] ^= 1
        if flip_flags is not None and flip_flags < r.size:
            fl[flip_flags] ^= 2
        return r, fl
    monkeypatch.setattr(S, "_subject", subject)


def test_engine_reports_injected_mismatches(monkeypatch):
    _faulty(monkeypatch, flip_bits=0x3C00, flip_flags=0x4000)
    rep = S.run_sweep("convert:fp8_e4m3", "fp16", "nearest_even", max_examples=5)
    assert rep["mismatches"] == 2 and rep["bits_mismatches"] == 1
    assert rep["flag_mismatches"] == 1
    e0, e1 = rep["first_mismatches"]
    assert e0["operands"] == ["0x3c00"] and e0["kind"] == "bits"
    assert int(e0["got"], 16) == int(e0["expected"], 16) ^ 1 == 0x38 ^ 1
    assert e1["operands"] == ["0x4000"] and e1["kind"] == "flags"
    assert e1["got_flags"] == e1["expected_flags"] ^ 2
    assert S.main(["fp16", "convert:fp8_e4m3", "--out", "", "--quiet"]) == 1


def test_nan_patterns_compare_as_nan_unless_checked(monkeypatch):
    real = S._subject

    def subject(kind, op, f, mode, ops, outer):
        r, fl = real(kind, op, f, mode, ops, outer)
        r = r.copy()
        r[0x7E00] = 0xFF           # a NaN of e4m3 with the other sign
        return r, fl
    monkeypatch.setattr(S, "_subject", subject)
    rep = S.run_sweep("convert:fp8_e4m3", "fp16", "nearest_even")
    assert rep["mismatches"] == 0
    rep = S.run_sweep("convert:fp8_e4m3", "fp16", "nearest_even", check_nan=True)
    assert rep["mismatches"] == 1 and rep["first_mismatches"][0]["operands"] == ["0x7e00"]


# ---------------------------------------------------------------------------
# files, resume, command line, processes
def test_resume_skips_finished_shards(tmp_path, monkeypatch):
    out = str(tmp_path)
    rep = S.run_sweep("convert:bf16", "fp16", "upward", shards=4, out=out)
    name = "convert-bf16_fp16_upward"
    assert os.path.exists(os.path.join(out, name + ".json"))
    files = sorted(os.listdir(os.path.join(out, name + ".shards")))
    assert files == [f"shard_{k:05d}.json" for k in range(4)]
    os.remove(os.path.join(out, name + ".shards", "shard_00002.json"))
    calls = []
    real = S.run_shard
    monkeypatch.setattr(S, "run_shard", lambda k, *a, **kw: calls.append(k) or real(k, *a, **kw))
    rep2 = S.run_sweep("convert:bf16", "fp16", "upward", shards=4, out=out, resume=True)
    assert calls == [2]
    assert rep2["cases"] == rep["cases"] == 1 << 16 and rep2["exhaustive"]
    with pytest.raises(ValueError, match="other settings"):
        S.run_sweep("convert:bf16", "fp16", "upward", shards=4, out=out, resume=True,
                    check_nan=True)


def test_command_line_and_summary(tmp_path, capsys):
    out = str(tmp_path)
    assert S.main(["fp16", "convert:bf16", "--rounding", "nearest_even,rtz", "--out", out,
                   "--quiet", "--mpfr", "30"]) == 0
    text = capsys.readouterr().out
    assert "convert:bf16 fp16 nearest_even [host]: 65,536 cases, 0 mismatches" in text
    assert "toward_zero [ro53]" in text and "MPFR 30 cases: 0 mismatches" in text
    rep = json.load(open(os.path.join(out, "convert-bf16_fp16_toward_zero.json")))
    assert rep["mismatches"] == 0 and rep["mpfr"]["checked"] == 30
    assert S.main(["--summarize", out]) == 0
    table = open(os.path.join(out, "RESULTS.md")).read()
    assert "| convert:bf16 | fp16 | toward_zero | ro53 | 65,536 | yes | 0 (0 / 0) |" in table
    assert S.main(["fp16", "convert:bf16", "--rounding", "stochastic", "--out", out]) == 2
    assert S.main(["fp16", "pow", "--out", out]) == 2
    import softfloat.__main__ as M
    assert M.main(["sweep", "fp8_e5m2", "convert:fp8_e4m3", "--out", out, "--quiet"]) == 0


def test_worker_processes(tmp_path):
    rep = S.run_sweep("convert:fp8_e5m2", "bf16", "downward", shards=4, jobs=2,
                      out=str(tmp_path))
    assert rep["cases"] == 1 << 16 and rep["mismatches"] == 0 and rep["shards_done"] == 4


# ---------------------------------------------------------------------------
# exhaustive (on demand: pytest -m slow)
@pytest.mark.slow
@needs_arith
@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("op", O.BINARY_OPS)
def test_exhaustive_binary_rne(fmt, op):
    rep = S.run_sweep(op, fmt, "nearest_even", progress=True)
    assert rep["cases"] == 1 << 32 and rep["mismatches"] == 0, rep["first_mismatches"]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_exhaustive_from_float32(fmt):
    for mode in MODES:
        rep = S.run_sweep("from_float32", fmt, mode, progress=True)
        assert rep["mismatches"] == 0, rep["first_mismatches"]
