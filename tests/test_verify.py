"""softfloat.verify: the interface, the operations, the spaces, the adapters, the
SFV1 protocol through exec_impl (the reference program of examples/ and
programs that misbehave), results files, shards and resume, the command line."""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import softfloat as sf
from softfloat.verification import ImplError, get_op, op_names
from softfloat.verification.ops import classify

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF = os.path.join(ROOT, "examples", "sfv1_reference.py")
PY = sys.executable


def ref(*args):
    return "exec:" + " ".join([PY, REF, *args])


def cli(*args, capsys=None):
    """The command line in this process (``softfloat.verification.cli.main``): (status,
    stdout, stderr)."""
    from softfloat.verification.cli import main
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def program(tmp_path, body, name="prog.py"):
    """A small SFV1 program (plain Python, no softfloat) written to tmp_path."""
    p = tmp_path / name
    p.write_text("import struct, sys, time\n" + textwrap.dedent(body))
    return f"exec:{PY} {p}"


# ---------------------------------------------------------------------------
# interface
def test_verify_is_a_plain_function_of_the_verification_package():
    import types

    import softfloat.verification as V
    assert isinstance(sf.verify, types.FunctionType) and sf.verify is V.verify
    assert sf.verification is V and sf.verification.numpy_impl is V.numpy_impl
    assert type(V) is types.ModuleType           # an ordinary module, not a callable one
    rep = sf.verify(lambda a, b: sf.mul(a, b, "fp16", return_flags=True), "mul", "fp16",
                    space=3000)
    assert rep.ok and rep.cases == 3000 and rep.flags_checked
    d = rep.to_dict()
    assert json.loads(rep.to_json())["cases"] == 3000 and d["ok"] is True
    assert d["diagnosis"]["best"] == {} and d["diagnosis"]["explained"] == 1.0


def test_bad_arguments_say_what_was_expected():
    f = lambda a, b: a       # noqa: E731
    with pytest.raises(ValueError, match="unknown operation"):
        sf.verify(f, "addd", "fp16")
    with pytest.raises(ValueError, match="does not take the policy ftz"):
        sf.verify(f, "eq", "fp16", space=10, ftz=True)
    with pytest.raises(TypeError, match="unknown keyword"):
        sf.verify(f, "add", "fp16", space=10, flush=True)
    with pytest.raises(ValueError, match="stochastic"):
        sf.verify(f, "add", "fp16", "stochastic", space=10)
    with pytest.raises(ValueError, match="2\\*\\*64"):
        sf.verify(f, "add", "fp32")
    with pytest.raises(ValueError, match="unknown space"):
        sf.verify(f, "add", "fp16", space="level3")
    with pytest.raises(ImplError, match="float16 values"):
        sf.verify(lambda a, b: a.view(np.float16), "add", "fp16", space=10)
    with pytest.raises(ImplError, match="5 results for 10 cases"):
        sf.verify(lambda a, b: a[:5], "add", "fp16", space=10)
    with pytest.raises(ValueError, match="jobs > 1"):
        sf.verify(lambda a, b: a, "add", "fp16", space=10, jobs=2, shards=2)


def _round_trip(names):
    # each operation through the SFV1 round trip (the reference program's
    # --library mode): no mismatch, flags included; policies travel as words
    for n in names:
        fmt = "bf16" if n.startswith(("to_", "from_", "convert")) else "fp8_e5m2"
        o = get_op(n, fmt)
        pol = {"ftz": True} if "ftz" in o.policies else {}
        rep = sf.verify(sf.verification.exec_impl(ref("--library")), n, fmt, "upward",
                        space=600, seed=3, **pol)
        assert rep.ok and rep.flags_checked, (n, rep.summary())


@pytest.mark.slow
def test_protocol_round_trip():
    _round_trip(["fma"])                  # three operands, a policy word (ftz=1), flags


@pytest.mark.slow
def test_protocol_round_trip_of_every_op():
    # 1-, 2-, 4-, 8-byte operands and results, 1 to 3 operands
    _round_trip([n for n in op_names() if n != "convert:<format>"] + ["convert:fp8_e4m3"])


def test_classify_masks():
    enc = {0xFC00: 0, 0xBC00: 1, 0x8001: 2, 0x8000: 3, 0x0000: 4, 0x03FF: 5, 0x3C00: 6,
           0x7C00: 7, 0x7D00: 8, 0x7E00: 9, 0xFE01: 9}
    got = classify(np.array(list(enc), np.uint16), "fp16")
    assert got.tolist() == [1 << b for b in enc.values()]
    # e4m3 (fn): no infinity, one NaN kind (quiet)
    got = classify(np.array([0x7F, 0x7E, 0x80, 0x01], np.uint8), "fp8_e4m3")
    assert got.tolist() == [1 << 9, 1 << 6, 1 << 3, 1 << 5]


# ---------------------------------------------------------------------------
# spaces
def test_spaces():
    o = get_op("add", "fp8_e4m3")
    seen = []
    rep = sf.verify(lambda a, b: (seen.append((a.copy(), b.copy())) or
                                  sf.add(a, b, "fp8_e4m3", return_flags=True)),
                    "add", "fp8_e4m3")
    assert rep.ok and rep.cases == 1 << 16 and rep.exhaustive
    a, b = seen[0]
    assert a[257] == 1 and b[257] == 1          # case i: a = i >> 8, b = i & 255
    assert sf.verification.make_space(o, "level1").total == 38400
    assert sf.verification.make_space(get_op("fma", "fp8_e5m2"), "exhaustive").total == 1 << 24
    r1 = sf.verification.make_space(o, 1000, seed=4).chunk(0, 1000)
    r2 = sf.verification.make_space(o, 1000, seed=4).chunk(500, 1000)
    assert np.array_equal(r1[0][500:], r2[0])
    sub = sf.verification.make_space(get_op("fma", "fp16"), {"a": "0x3c00-0x3c0f",
                                                       "c_family": "cancel4"})
    assert sub.total == 16 * 65536 * 4
    ops = (np.array([1, 2, 3], np.uint8), np.array([4, 5, 6], np.uint8))
    assert sf.verification.make_space(o, ops).chunk(1, 3)[1].tolist() == [5, 6]


# ---------------------------------------------------------------------------
# SFV1 programs
def test_reference_program_numpy_fp16():
    rep = sf.verify(ref(), "add", "fp16", space="level1", check_nan=True)
    assert not rep.flags_checked
    assert rep.mismatches > 0 and set(rep.classes) == {"nan_payload"}
    assert sf.verify(ref(), "add", "fp16", space="level1").ok
    assert sf.verify(ref(), "sqrt", "fp16", check_nan=False).ok       # all 65536 inputs


def test_program_refusing_the_header(tmp_path, capsys):
    prog = program(tmp_path, """
        sys.stdin.buffer.readline()
        sys.stdout.buffer.write(b"ERR no toward_zero here\\n"); sys.stdout.flush()
    """)
    with pytest.raises(ImplError, match="refused 'SFV1 add fp16 toward_zero 2 2 2': no "
                                        "toward_zero here"):
        sf.verify(prog, "add", "fp16", "toward_zero", space=10)
    from softfloat.__main__ import main       # python -m softfloat verify ...
    rc = main(["verify", "fp16", "add", "--impl", prog, "--rounding", "toward_zero",
               "--space", "10"])
    err = capsys.readouterr().err
    assert rc == 2 and "no toward_zero here" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_header_words_and_program_dying_in_a_batch(tmp_path):
    log = tmp_path / "header.txt"
    prog = program(tmp_path, f"""
        h = sys.stdin.buffer.readline()
        open({str(log)!r}, "wb").write(h)
        sys.stdout.buffer.write(b"OK\\n"); sys.stdout.flush()
        n, = struct.unpack("<I", sys.stdin.buffer.read(4))
        sys.stderr.write("simulator crashed\\n")
        sys.exit(3)
    """)
    with pytest.raises(ImplError, match="exited with status 3.*simulator crashed"):
        sf.verify(prog, "fma", "bf16", "downward", space=10, ftz=True, tininess="before",
                  nan=0x7FFF)
    assert log.read_text() == ("SFV1 fma bf16 downward 3 2 2 ftz=1 tininess=before "
                               "nan=0x7fff\n")


def test_program_stalling_times_out(tmp_path, capsys):
    prog = program(tmp_path, """
        sys.stdin.buffer.readline()
        sys.stdout.buffer.write(b"OK\\n"); sys.stdout.flush()
        time.sleep(30)
    """)
    with pytest.raises(ImplError, match="no answer within 0.5 s"):
        sf.verify(sf.verification.exec_impl(prog[5:], timeout=0.5), "add", "fp16", space=10)
    rc, _, err = cli("fp16", "add", "--impl", prog, "--space", "10", "--timeout", "0.5",
                     capsys=capsys)
    assert rc == 2 and "timeout" in err and len(err.strip().splitlines()) == 1


def test_program_with_bad_flag_bytes_and_small_batches(tmp_path):
    prog = program(tmp_path, """
        sys.stdin.buffer.readline()
        sys.stdout.buffer.write(b"OK\\n"); sys.stdout.flush()
        while True:
            n, = struct.unpack("<I", sys.stdin.buffer.read(4))
            if n == 0:
                sys.exit(0)
            data = sys.stdin.buffer.read(n * 2)
            sys.stdout.buffer.write(data + bytes([0x40] * n)); sys.stdout.flush()
    """)
    with pytest.raises(ImplError, match="flag byte 0x40"):
        sf.verify(sf.verification.exec_impl(prog[5:], batch=7), "sqrt", "fp16", space=20)


# ---------------------------------------------------------------------------
# results files
def test_results_files(tmp_path, capsys):
    o = get_op("mul", "bf16")
    sp = sf.verification.make_space(o, 5000, seed=2)
    a, b = sp.chunk(0, sp.total)
    r, f = sf.mul(a, b, "bf16", "upward", return_flags=True)
    r = r.copy()
    r[17] ^= 1
    (tmp_path / "res.bin").write_bytes(r.astype("<u2").tobytes() + f.tobytes())
    np.save(tmp_path / "res.npy", r)
    np.savez(tmp_path / "res.npz", results=r, flags=f)
    for name, flags in (("res.bin", True), ("res.npy", False), ("res.npz", True)):
        rep = sf.verify(sf.verification.results_file(tmp_path / name), "mul", "bf16", "upward",
                        space=5000, seed=2)
        assert rep.mismatches == 1 and rep.first_mismatches[0]["case"] == 17, name
        assert rep.flags_checked == flags
    with pytest.raises(ValueError, match="bytes; expected 4000 results"):
        sf.verify(sf.verification.results_file(tmp_path / "res.bin"), "mul", "bf16", space=4000)
    # TestFloat lines carry their operands
    from softfloat.testfloat import write_vectors
    with open(tmp_path / "lines.txt", "wb") as fh:
        n = write_vectors("bf16_mul", fh, level=1, rounding="upward")
    lines = (tmp_path / "lines.txt").read_bytes().splitlines()
    lines[3] = lines[3][:-2] + b"1F"           # flags all set
    (tmp_path / "lines.txt").write_bytes(b"\n".join(lines) + b"\n")
    rep = sf.verify(sf.verification.results_file(tmp_path / "lines.txt"), "mul", "bf16", "upward")
    assert rep.cases == n and rep.mismatches == 1 and rep.flag_mismatches == 1
    rc, _, err = cli("bf16", "mul", "--results", str(tmp_path / "lines.txt"), "--rounding",
                     "upward", "--json", str(tmp_path / "rep.json"), "--quiet", capsys=capsys)
    assert rc == 1, err
    d = json.loads((tmp_path / "rep.json").read_text())
    assert d["cases"] == n and d["mismatches"] == 1 and d["first_mismatches"][0]["case"] == 3


# ---------------------------------------------------------------------------
# shards, resume, the command line
def test_shards_and_resume(tmp_path):
    calls = []

    def impl(a, b):
        calls.append(a.size)
        r, f = sf.div(a, b, "fp16", "toward_zero", return_flags=True)
        return r, f
    rep = sf.verify(impl, "div", "fp16", space=9000, shards=3, out=str(tmp_path))
    assert rep.shards == 3 and sum(calls) == 9000
    assert rep.diagnosis["best"] == {"rounding": "toward_zero"}
    files = sorted(os.listdir(tmp_path))
    assert any(f.endswith(".json") for f in files) and any(f.endswith(".shards") for f in files)
    # resume: every shard file verifies, the implementation is not called again
    again = sf.verify(impl, "div", "fp16", space=9000, shards=3, out=str(tmp_path),
                      resume=True, diagnose=False)
    assert sum(calls) == 9000
    assert again.cases == rep.cases and again.mismatches == rep.mismatches
    assert again.classes == rep.classes


def test_cli_exit_statuses(tmp_path, capsys):
    rc, out, err = cli("fp16", "add", "--impl", ref(), "--space", "level1", "--any-nan",
                       "--quiet", capsys=capsys)
    assert rc == 0, err
    assert "46,464 cases, 0 mismatches" in out
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    try:
        rc, out, err = cli("fp16", "mul", "--impl", "verify_faults:truncating_mul", "--space",
                           "2000", "--rounding", "nearest_even,upward", "--json", "-",
                           "--quiet", capsys=capsys)
    finally:
        sys.path.remove(os.path.join(ROOT, "tests"))
    assert rc == 1, err
    assert "diagnosis: matches toward_zero" in err
    d = json.loads(out)
    assert [x["diagnosis"]["best"] for x in d] == [{"rounding": "toward_zero"}] * 2
    assert [x["rounding"] for x in d] == ["nearest_even", "upward"]
    for bad in (["fp16", "add", "--impl", "nosuchmodule:f"], ["fp17", "add", "--impl", ref()],
                ["fp16", "add", "--impl", ref(), "--space", "many"],
                ["fp16", "add", "--impl", "exec:/nonexistent/program"],
                ["fp16", "add", "--impl", ref(), "--results", "x.bin"]):
        rc, out, err = cli(*bad, capsys=capsys)
        assert rc == 2 and "Traceback" not in err, (bad, err)


# ---------------------------------------------------------------------------
# ctypes: an fclass written in C, checked on every fp16 encoding
@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_ctypes_scalar_and_vectorized(tmp_path):
    src = tmp_path / "fclass.c"
    src.write_text(textwrap.dedent("""
        #include <stdint.h>
        #include <stddef.h>
        uint16_t f16_class(uint16_t x) {
            int s = x >> 15, e = (x >> 10) & 31, m = x & 1023;
            if (e == 31) return m ? ((m & 512) ? 1u << 9 : 1u << 8) : (s ? 1u : 1u << 7);
            if (e == 0) return m ? (s ? 1u << 2 : 1u << 5) : (s ? 1u << 3 : 1u << 4);
            return s ? 1u << 1 : 1u << 6;
        }
        void f16_class_vec(size_t n, const uint16_t *a, uint16_t *out, uint8_t *flags) {
            for (size_t i = 0; i < n; i++) { out[i] = f16_class(a[i]); flags[i] = 0; }
        }
    """))
    lib = tmp_path / "libfclass.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    so = ctypes.CDLL(str(lib))
    so.f16_class.argtypes = [ctypes.c_uint16]
    so.f16_class.restype = ctypes.c_uint16
    rep = sf.verify(sf.verification.ctypes_impl(so.f16_class), "classify", "fp16", space=3000)
    assert rep.ok and not rep.flags_checked
    rep = sf.verify(sf.verification.ctypes_impl(so.f16_class_vec, vectorized=True), "classify",
                    "fp16")
    assert rep.ok and rep.cases == 65536 and rep.flags_checked


# ---------------------------------------------------------------------------
@pytest.mark.slow
def test_worker_processes_and_dask(tmp_path):
    for kw in (dict(jobs=2), dict(jobs=2, backend="dask")):
        rep = sf.verify(ref("--library"), "mul", "fp16", "downward", space=40000, shards=4,
                        **kw)
        assert rep.ok and rep.cases == 40000 and rep.shards == 4, kw
        rep = sf.verify("verify_faults:truncating_mul", "mul", "fp16", space=40000,
                        shards=4, **kw)
        assert rep.diagnosis["best"] == {"rounding": "toward_zero"}, kw


def test_verify_takes_the_library_policy():
    pol = sf.Policy("toward_zero", ftz=True, daz=True)
    impl = lambda a, b: sf.mul(a, b, "fp16", "toward_zero", subnormals=False)  # noqa: E731
    rep = sf.verify(impl, "mul", "fp16", space=4000, policy=pol, diagnose=False)
    assert rep.ok and rep.rounding == "toward_zero"
    assert rep.policies["ftz"] and rep.policies["daz"]
    assert not sf.verify(impl, "mul", "fp16", space=4000, diagnose=False).ok
    with pytest.raises(TypeError, match="policy= or rounding="):
        sf.verify(impl, "mul", "fp16", "upward", space=10, policy=pol)
    with pytest.raises(TypeError, match="policy= or the policy keywords"):
        sf.verify(impl, "mul", "fp16", space=10, policy=pol, ftz=True)
