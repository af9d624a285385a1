"""The sweep engine (softfloat.sweep): the operand space and its shards,
sub-spaces and the fma family, sampled slices of real kernels, injected faults
(it must find them, NaN patterns included), verified shard files and resume,
exit statuses and I/O errors, worker processes (and their death with the
parent), Ctrl-C, the results table command and the Dask backend. The
exhaustive runs are marked slow. The oracles: tests/test_sweep_oracles.py.
"""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from procs import alive, children

import softfloat as sf
from sweep_faults import inject
from softfloat import sweep as S
from softfloat.sweep import engine as E
from softfloat.sweep.spaces import _family
from softfloat import sweep_oracles as O

MODES = list(sf.DETERMINISTIC_MODES)
HAVE_ARITH = all(hasattr(sf, op) for op in ("add", "sub", "mul", "div", "sqrt", "fma"))
needs_arith = pytest.mark.skipif(not HAVE_ARITH, reason="arithmetic kernels not available")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


@needs_arith
def test_tf32_sweeps_exhaustive(monkeypatch):
    """tf32 (19 bits): sqrt and conversions to and from fp16 / bf16 over every
    encoding, NaN patterns compared; binary ops of tf32 are refused (2**38
    pairs), as are wider sources."""
    runs = [("convert:fp16", "tf32", 1 << 19), ("convert:bf16", "tf32", 1 << 19),
            ("convert:tf32", "bf16", 1 << 16), ("sqrt", "tf32", 1 << 19)]
    for mode in ("nearest_even", "upward", "odd"):
        for op, fmt, n in runs:
            rep = S.run_sweep(op, fmt, mode)
            assert rep["exhaustive"] and rep["cases"] == n
            assert rep["mismatches"] == 0, (op, fmt, mode, rep["first_mismatches"])
    with pytest.raises(ValueError, match="at most 16 bits"):
        S.Space("add", "tf32")
    with pytest.raises(ValueError, match="at most 19 bits"):
        S.Space("convert:fp16", "fp32")
    # a NaN payload dropped in tf32 -> fp16 (signaling NaN 0x3fc01: expected
    # 0x7e01, the quieted payload) is a mismatch unless any NaN is accepted
    real = E._subject

    def subject(sp, mode, ops):
        r, fl = real(sp, mode, ops)
        r = r.copy()
        r[0x3FC01] = 0x7E00
        return r, fl
    monkeypatch.setattr(E, "_subject", subject)
    rep = S.run_sweep("convert:fp16", "tf32", "nearest_even")
    assert rep["mismatches"] == 1 and rep["first_mismatches"][0]["expected"] == "0x7e01"
    assert rep["first_mismatches"][0]["operands"] == ["0x3fc01"]
    assert S.run_sweep("convert:fp16", "tf32", "nearest_even", check_nan=False)["mismatches"] == 0


# ---------------------------------------------------------------------------
# the engine finds faults
def _faulty(monkeypatch, flip_bits=None, flip_flags=None):
    real = E._subject

    def subject(sp, mode, ops):
        r, fl = real(sp, mode, ops)
        r, fl = r.copy(), fl.copy()
        if flip_bits is not None and flip_bits < r.size:
            r[flip_bits] ^= 1
        if flip_flags is not None and flip_flags < r.size:
            fl[flip_flags] ^= 2
        return r, fl
    monkeypatch.setattr(E, "_subject", subject)


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


@needs_arith
def test_engine_finds_binary_faults_through_the_simd_kernels(monkeypatch):
    """A flipped result bit (finite operands: the SIMD kernel), a flipped flag and
    a wrong NaN payload (a NaN operand: the scalar special pass) in fp16 division
    sweeps are all reported, with their operands and expectations."""
    inject(monkeypatch, E)
    for mode in ("nearest_even", "upward"):
        rep = S.run_sweep("div", "fp16", mode, shards=1 << 16, shard_ids=[0x3C00, 0x3C01])
        assert (rep["bits_mismatches"], rep["flag_mismatches"]) == (2, 1), rep
        ex = {e["case"]: e for e in rep["first_mismatches"]}
        assert ex[0x3C00 * 65536 + 0x4000]["operands"] == ["0x3c00", "0x4000"]
        assert ex[0x3C00 * 65536 + 0x4000]["expected"] == "0x3800"        # 1 / 2
        assert ex[0x3C00 * 65536 + 0x4001]["kind"] == "flags"
        nan = ex[0x3C01 * 65536 + 0x7E05]
        assert nan["expected"] == "0x7e05" and nan["got"] == "0x7e07"     # b's payload


def test_nan_patterns_are_compared_unless_any_nan(monkeypatch):
    real = E._subject

    def subject(sp, mode, ops):
        r, fl = real(sp, mode, ops)
        r = r.copy()
        r[0x7E00] = 0xFF           # a NaN of e4m3 with the other sign
        return r, fl
    monkeypatch.setattr(E, "_subject", subject)
    rep = S.run_sweep("convert:fp8_e4m3", "fp16", "nearest_even")
    assert rep["mismatches"] == 1 and rep["first_mismatches"][0]["operands"] == ["0x7e00"]
    assert rep["first_mismatches"][0]["expected"] == "0x7f"
    rep = S.run_sweep("convert:fp8_e4m3", "fp16", "nearest_even", check_nan=False)
    assert rep["mismatches"] == 0
    assert S.main(["fp16", "convert:fp8_e4m3", "--out", "", "--quiet"]) == 1
    assert S.main(["fp16", "convert:fp8_e4m3", "--out", "", "--quiet", "--any-nan"]) == 0


# ---------------------------------------------------------------------------
# files, resume, command line, processes
def test_resume_skips_finished_shards(tmp_path, monkeypatch):
    out = str(tmp_path)
    rep = S.run_sweep("convert:bf16", "fp16", "upward", shards=4, out=out)
    name = "convert-bf16_fp16_upward"
    assert list(S.load_reports(out)) == [name]
    files = sorted(os.listdir(os.path.join(out, name + ".shards")))
    assert files == [f"shard_{k:05d}.json" for k in range(4)]
    os.remove(os.path.join(out, name + ".shards", "shard_00002.json"))
    calls = []
    real = E.run_shard
    monkeypatch.setattr(E, "run_shard", lambda k, *a, **kw: calls.append(k) or real(k, *a, **kw))
    rep2 = S.run_sweep("convert:bf16", "fp16", "upward", shards=4, out=out, resume=True)
    assert calls == [2]
    assert rep2["cases"] == rep["cases"] == 1 << 16 and rep2["exhaustive"]
    with pytest.raises(ValueError, match="other settings"):
        S.run_sweep("convert:bf16", "fp16", "upward", shards=4, out=out, resume=True,
                    check_nan=False)


def test_command_line_and_summary(tmp_path, capsys):
    out = str(tmp_path)
    assert S.main(["fp16", "convert:bf16", "--rounding", "nearest_even,rtz", "--out", out,
                   "--quiet", "--mpfr", "30"]) == 0
    text = capsys.readouterr().out
    assert "convert:bf16 fp16 nearest_even [host]: 65,536 cases, 0 mismatches" in text
    assert "toward_zero [ro53]" in text and "MPFR 30 cases: 0 mismatches" in text
    rep = S.load_reports(out)["convert-bf16_fp16_toward_zero"]
    assert rep["mismatches"] == 0 and rep["mpfr"]["checked"] == 30
    assert S.main(["--summarize", out]) == 0
    table = open(os.path.join(out, "RESULTS.md")).read()
    assert "| convert:bf16 | fp16 | toward_zero | ro53 | 65,536 | yes | checked | 0 (0 / 0) |" \
        in table
    assert S.main(["fp16", "convert:bf16", "--rounding", "stochastic", "--out", out]) == 2
    assert S.main(["fp16", "pow", "--out", out]) == 2
    import softfloat.__main__ as M
    assert M.main(["sweep", "fp8_e5m2", "convert:fp8_e4m3", "--out", out, "--quiet"]) == 0


def test_worker_processes(tmp_path):
    rep = S.run_sweep("convert:fp8_e5m2", "bf16", "downward", shards=4, jobs=2,
                      out=str(tmp_path))
    assert rep["cases"] == 1 << 16 and rep["mismatches"] == 0 and rep["shards_done"] == 4


# ---------------------------------------------------------------------------
# sub-spaces, fma, the cancel family
def test_space_boxes_match_the_case_numbering():
    """A block's outer-product operands (the fast layout) are exactly the
    operands of its case indices, for full spaces, sub-spaces and the family."""
    for op, fmt, kw in [("add", "fp16", {}), ("fma", "fp16", {}), ("fma", "bf16", {"c": 0x3F80}),
                        ("fma", "fp16", {"a": "0x3c00-0x3c0f", "b": "0x0-0x3"}),
                        ("fma", "fp16", {"c_family": "cancel"}), ("from_float32", "bf16", {}),
                        ("convert:bf16", "fp16", {})]:
        sp = S.Space(op, fmt, **kw)
        for s in (0, 1 << 20, sp.total - (1 << 20)) if sp.total > 1 << 20 else (0,):
            e = min(s + (1 << 20), sp.total)
            n = 0
            for start, ops, layout in sp.blocks(s, e):
                idx = (start if isinstance(start, np.ndarray)
                       else np.arange(start, start + layout.n, dtype=np.int64))
                want = sp.operands(idx)
                shape = np.broadcast_shapes(*(o.shape for o in ops))
                for w, o, arr, sh, m in zip(want, ops, layout.arrays, layout.shifts,
                                            layout.masks):
                    assert np.array_equal(np.broadcast_to(o, shape).ravel(), w), (op, kw)
                    k = np.arange(layout.n, dtype=np.int64)
                    assert np.array_equal(arr[(k >> sh) & m], w.astype(np.int64)), (op, kw)
                n += layout.n
            assert n == e - s


def test_operand_sets_and_family():
    assert list(S.parse_values("0x3c00-0x3c02,0x8000,5", "fp16")) == [5, 0x3C00, 0x3C01,
                                                                      0x3C02, 0x8000]
    for bad in ("0x3c00-0x3b00", "zz", "", "0x10000"):
        with pytest.raises(ValueError):
            S.parse_values(bad, "fp16")
    assert S.total_cases("fma", "fp16") == 1 << 48
    assert S.total_cases("fma", "fp16", c=0x3C00) == 1 << 32
    assert S.total_cases("fma", "bf16", c_family="cancel") == 1 << 36
    with pytest.raises(ValueError, match="no operand"):
        S.Space("add", "fp16", c=1)
    with pytest.raises(ValueError, match="c_family"):
        S.Space("fma", "fp16", c=1, c_family="cancel")
    a = sf.to_bits(np.array([3.0]), "fp16")
    b = sf.to_bits(np.array([5.0]), "fp16")
    c = _family(a, b, np.arange(16), sf.FP16)
    v = sf.from_bits(c, "fp16")
    assert v[5] == -15.0 and v[11] == 15.0 and list(v[12:]) == [0.0, 0.0, 65504.0, -65504.0]
    assert np.signbit(v[13]) and v[4] == -15.0 + 2 ** -7 and v[6] == -15.0 - 2 ** -7
    # cancel4: -RN(a*b) and its two neighbours, then one extreme chosen by (a ^ b) & 3
    assert S.total_cases("fma", "fp16", c_family="cancel4") == 1 << 34
    c4 = _family(a, b, np.arange(4), sf.FP16, "cancel4")
    assert list(c4) == list(c[[4, 5, 6, 12 + ((int(a[0]) ^ int(b[0])) & 3)]])
    aa = np.arange(4, dtype=np.uint16)
    ext = _family(aa, np.zeros(4, np.uint16), np.full(4, 3), sf.FP16, "cancel4")
    assert [int(x) for x in ext] == [0, 0x8000, 0x7BFF, 0xFBFF]
    with pytest.raises(ValueError, match="unknown c_family"):
        S.Space("fma", "fp16", c_family="cancel8")


@needs_arith
def test_fma_sweeps_sub_spaces():
    for fmt in ("fp16", "bf16"):
        one = int(sf.to_bits(np.array([1.0]), fmt)[0])
        rep = S.run_sweep("fma", fmt, "nearest_even", c=one, shards=1 << 16,
                          shard_ids=[one, 0x8001, 0xFE00 if fmt == "fp16" else 0xFF80])
        assert rep["cases"] == 3 << 16 and rep["mismatches"] == 0, rep["first_mismatches"]
        assert rep["space"] == {"c": hex(one)} and not rep["exhaustive"]
        for mode in ("toward_zero", "odd"):
            rep = S.run_sweep("fma", fmt, mode, c_family="cancel", sample=1 << 16, shards=8,
                              mpfr=10)
            assert rep["mismatches"] == 0 and rep["mpfr"]["mismatches"] == 0, rep
        # cancel4, one exhaustive shard: every b and family member for 4 values of a
        rep = S.run_sweep("fma", fmt, "nearest_even", c_family="cancel4", shards=1 << 14,
                          shard_ids=[0x3C00 >> 2], mpfr=10)
        assert rep["cases"] == 1 << 20 and rep["mismatches"] == 0, rep["first_mismatches"]
        assert rep["space"] == {"c_family": "cancel4"}
    rep = S.run_sweep("fma", "fp16", "upward", a="0x3c00-0x3c03", b="0x3555,0x8001",
                      c="0x0-0x7")
    assert rep["cases"] == 4 * 2 * 8 and rep["mismatches"] == 0


@needs_arith
def test_fma_sweep_fp8_all_triples():
    rep = S.run_sweep("fma", "fp8_e5m2", "downward")
    assert rep["cases"] == 1 << 24 and rep["exhaustive"] and rep["mismatches"] == 0


@needs_arith
def test_engine_finds_fma_faults(monkeypatch):
    _faulty(monkeypatch, flip_bits=7)
    rep = S.run_sweep("fma", "fp16", "nearest_even", c=0x3C00, shards=1 << 16, shard_ids=[1])
    assert rep["mismatches"] == 1
    e = rep["first_mismatches"][0]
    assert e["operands"] == ["0x0001", "0x0007", "0x3c00"] and e["case"] == (1 << 16) + 7


# ---------------------------------------------------------------------------
# shard files: each names its id, its parameters and a checksum
def _one_sweep(out, **kw):
    return S.run_sweep("convert:fp8_e5m2", "fp16", "upward", shards=4, out=str(out), **kw)


def _shard(out, k):
    return os.path.join(str(out), "convert-fp8_e5m2_fp16_upward.shards", f"shard_{k:05d}.json")


def _recomputed(monkeypatch):
    calls = []
    real = E.run_shard
    monkeypatch.setattr(E, "run_shard", lambda k, *a, **kw: calls.append(k) or real(k, *a, **kw))
    return calls


def test_shard_files_name_id_parameters_checksum(tmp_path):
    _one_sweep(tmp_path)
    r = json.load(open(_shard(tmp_path, 2)))
    assert r["shard"] == 2 and r["config"]["op"] == "convert:fp8_e5m2"
    assert r["config"]["mode"] == "upward" and r["checksum"].startswith("sha256:")
    assert S.verify_shard_file(_shard(tmp_path, 2), 2, r["config"], r["lo"], r["hi"],
                               r["cases"]) == r


def test_resume_recomputes_copied_over_shard(tmp_path, monkeypatch):
    _one_sweep(tmp_path)
    import shutil
    shutil.copy(_shard(tmp_path, 1), _shard(tmp_path, 3))     # 3 now claims to be 1
    calls = _recomputed(monkeypatch)
    rep = _one_sweep(tmp_path, resume=True)
    assert calls == [3] and rep["cases"] == 1 << 16 and rep["mismatches"] == 0
    assert "holds shard 1" in rep["notes"][0]
    assert json.load(open(_shard(tmp_path, 3)))["shard"] == 3


def test_resume_recomputes_forged_shard(tmp_path, monkeypatch):
    _one_sweep(tmp_path)
    r = json.load(open(_shard(tmp_path, 0)))
    r["mismatches"] = -5
    json.dump(r, open(_shard(tmp_path, 0), "w"))
    calls = _recomputed(monkeypatch)
    rep = _one_sweep(tmp_path, resume=True)
    assert calls == [0] and rep["mismatches"] == 0 and "checksum" in rep["notes"][0]


def test_resume_recomputes_corrupt_and_list_shards(tmp_path, monkeypatch, capsys):
    _one_sweep(tmp_path)
    open(_shard(tmp_path, 1), "w").write('{"shard": 1, "cas')
    json.dump([1, 2, 3], open(_shard(tmp_path, 2), "w"))
    calls = _recomputed(monkeypatch)
    rep = _one_sweep(tmp_path, resume=True)
    assert sorted(calls) == [1, 2] and rep["cases"] == 1 << 16
    err = capsys.readouterr().err
    assert _shard(tmp_path, 1) in err and "not JSON" in err and "JSON object" in err


def test_resume_recomputes_old_unsigned_shard(tmp_path, monkeypatch):
    _one_sweep(tmp_path)
    r = json.load(open(_shard(tmp_path, 0)))
    del r["checksum"]
    json.dump(r, open(_shard(tmp_path, 0), "w"))
    calls = _recomputed(monkeypatch)
    _one_sweep(tmp_path, resume=True)
    assert calls == [0]


# ---------------------------------------------------------------------------
# exit statuses: 0 good, 1 mismatches, 2 could not run
def test_unwritable_out_is_status_2_before_any_work(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setattr(E, "run_shard", lambda *a, **k: pytest.fail("work started"))
    assert S.main(["fp16", "convert:bf16", "--out", str(blocker / "sub"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "cannot write to --out" in err and "Traceback" not in err
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        if os.access(ro, os.W_OK):          # root ignores permissions
            pytest.skip("running as root")
        assert S.main(["fp16", "convert:bf16", "--out", str(ro), "--quiet"]) == 2
    finally:
        os.chmod(ro, 0o700)


@pytest.mark.parametrize("args", [["--shards", "0"], ["--sample", "0"], ["--rounding", ""],
                                  ["--rounding", " , "], ["--jobs", "0"], ["--shard-ids", ","],
                                  ["--sample", "-3"], ["--c", "1"]])
def test_empty_or_bad_arguments_are_status_2(args, tmp_path, capsys):
    assert S.main(["fp16", "convert:bf16", "--out", str(tmp_path), "--quiet"] + args) == 2
    assert "error" in capsys.readouterr().err


def _sweep_child(tmp_path, extra=()):
    code = ("import sys; sys.path.insert(0, %r); from softfloat import sweep as S; "
            "sys.exit(S.main(sys.argv[1:]))" % ROOT)
    return subprocess.Popen([sys.executable, "-c", code, "bf16", "add", "--sample",
                             str(1 << 30), "--shards", "64", "--out", str(tmp_path), "--quiet",
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
def test_workers_die_with_a_killed_parent(tmp_path):
    p = _sweep_child(tmp_path, ["--jobs", "2"])
    workers = []
    deadline = time.time() + 300
    while time.time() < deadline and len(workers) < 2:
        time.sleep(0.5)
        workers = [c for c in children(p.pid) if alive(c)]
        assert p.poll() is None, p.communicate()
    assert len(workers) >= 2
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    deadline = time.time() + 30
    while time.time() < deadline and any(alive(w) for w in workers):
        time.sleep(0.2)
    left = [w for w in workers if alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, "workers outlived their parent"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_is_a_short_message(tmp_path, jobs):
    out = tmp_path / "out"
    p = _sweep_child(out, ["--jobs", jobs])
    deadline = time.time() + 300
    while not out.exists() and time.time() < deadline:     # --out is made once running
        time.sleep(0.2)
        assert p.poll() is None, p.communicate()
    time.sleep(2)
    assert p.poll() is None, p.communicate()
    os.kill(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err


# ---------------------------------------------------------------------------
# the results table
def test_table_command_sampled(tmp_path, capsys):
    runs = S.table_runs()
    assert len([r for r in runs if r[0] in O.BINARY_OPS and r[1] in ("fp16", "bf16")]) == 48
    assert ("from_float32", "bf16", "odd") in runs and ("convert:fp8_e4m3", "bf16", "upward") in runs
    assert ("sqrt", "fp8_e5m2", "downward") in runs
    assert ("convert:fp16", "tf32", "odd") in runs and ("convert:tf32", "bf16", "upward") in runs
    assert ("sqrt", "tf32", "nearest_even") in runs
    assert S.main(["table", "--out", str(tmp_path), "--sample", "5000", "--only", "mul bf16",
                   "--quiet"]) == 0
    table = open(tmp_path / "RESULTS.md").read()
    assert table.count("| mul | bf16 |") == 6 and "sweep table --out" in table
    capsys.readouterr()
    assert S.main(["table", "--list", "--only", "from_float32 fp16"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 6
    assert S.main(["table", "--list", "--max-cases", str(1 << 16)]) == 0
    listed = capsys.readouterr().out.strip().splitlines()
    assert listed and all(int(x.split()[-1]) <= 1 << 16 for x in listed)
    assert S.main(["table", "--out", str(tmp_path), "--only", "nothing-like-this"]) == 2


# ---------------------------------------------------------------------------
# public helpers reused by validation/torch_crosscheck.py
def test_budget_helpers():
    assert S.chunk_starts(0, 10, 4) == [0, 4, 8]
    t = [0.0]
    done = []

    def clock():
        return t[0]

    def work(x):
        done.append(x)
        t[0] += 1.0
    r = S.run_within_budget(range(100), work, 10.0, clock=clock)
    assert r.done == len(done) < 100 and "every" in r.note and done[:2] == [0, 1]
    r = S.run_within_budget(range(5), lambda x: None, 10.0)
    assert r.done == 5 and r.note == "" and r.coverage == 1.0


def test_budget_import_path_and_chunks():
    """softfloat.budget (validation's import path) is the package's budget module's
    Budget; chunk_ranges cuts [0, total) by shard_range, covering it exactly."""
    from softfloat import budget as B
    from softfloat.sweep import budget as SB
    assert B.Budget is SB.Budget and B.chunk_ranges is SB.chunk_ranges
    got = B.chunk_ranges(10, 4, offset=100)
    assert got == [(100, 103), (103, 106), (106, 110)]
    assert got == [tuple(100 + v for v in S.shard_range(k, 3, 10)) for k in range(3)]


def test_worker_functions_pickle_by_module_path():
    """What a spawned worker or a Dask worker receives (the shard function, the
    pool initializer, verify's shard job) is pickled by module path and resolves
    to the same function in a fresh interpreter."""
    import pickle
    from softfloat.sweep import backends
    from softfloat.verification import engine as VE
    fns = [E._worker, E.dask_shard, backends._worker_init, VE.run_shard]
    blob = pickle.dumps(fns).hex()
    code = ("import pickle, sys; fns = pickle.loads(bytes.fromhex(sys.argv[1])); "
            "print(' '.join(f.__module__ + '.' + f.__qualname__ for f in fns))")
    p = subprocess.run([sys.executable, "-c", code, blob], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": ROOT}, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["softfloat.sweep.engine._worker",
                                "softfloat.sweep.engine.dask_shard",
                                "softfloat.sweep.backends._worker_init",
                                "softfloat.verification.engine.run_shard"]


# ---------------------------------------------------------------------------
# the Dask backend
def test_dask_backend_gives_the_process_report(tmp_path):
    pytest.importorskip("dask")
    pytest.importorskip("distributed")
    kw = dict(shards=4, sample=1 << 14, seed=3, check_nan=True)
    p = S.run_sweep("mul", "bf16", "toward_zero", out=str(tmp_path / "p"), jobs=2, **kw)
    d = S.run_sweep("mul", "bf16", "toward_zero", out=str(tmp_path / "d"), jobs=2,
                    backend="dask", **kw)
    strip = lambda r: {k: v for k, v in r.items() if k not in (  # noqa: E731
        "seconds", "cpu_seconds", "wall_seconds", "date", "backend")}
    assert strip(p) == strip(d) and d["backend"] == "dask"
    names = sorted(os.listdir(tmp_path / "d" / "mul_bf16_toward_zero.shards"))
    assert names == [f"shard_{k:05d}.json" for k in range(4)]
    # resume on the process backend accepts the Dask shard files
    r = S.run_sweep("mul", "bf16", "toward_zero", out=str(tmp_path / "d"), resume=True, **kw)
    assert strip(r) == strip(p) or r["cases"] == p["cases"]


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
