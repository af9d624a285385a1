"""TestFloat's Python API and `ver` on junk: values that do not fit their
column, unequal lengths, flags above 0x1F, a -json path that cannot be written,
a line too long to be a TestFloat line (bounded memory)."""
import io
import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from softfloat import testfloat as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H = np.array([0x3C00, 0x4000], np.uint16)


def test_format_lines_writes_good_columns():
    lines = tf.format_lines("f16_add", [H, H], [0x4000, 0x4400], [0, 0x1F])
    assert lines == b"3C00 3C00 4000 00\n4000 4000 4400 1F\n"
    assert tf.format_lines("f16_add", [[0x3C00], [0x1000]]) == b"3C00 1000\n"


@pytest.mark.parametrize("operands,result,flags,err,says", [
    ([np.array([70000]), H[:1]], None, None, ValueError, "does not fit f16"),
    ([np.array([-1]), H[:1]], None, None, ValueError, "unsigned bit patterns"),
    ([np.array([1.5]), H[:1]], None, None, TypeError, "got an array of float64"),
    ([np.array([2.0]), H[:1]], None, None, TypeError, "no silent conversion"),
    ([H[:1], H[:1]], [0x3C00], [300], ValueError, "does not fit flags"),
    ([H[:1], H[:1]], [0x3C00], [0x20], ValueError, "expected 0..0x1f"),
    ([H[:1], H[:1]], [0x3C00], [0.0], TypeError, "flags"),
    ([H, H[:1]], None, None, ValueError, "no broadcasting"),
    ([H, H], [0x4000], [0, 0], ValueError, "result has 1 values"),
    ([H], None, None, ValueError, "takes 2 operand"),
    ([H, H], [0x4000, 0x4400], None, ValueError, "both result and flags"),
])
def test_format_lines_refuses_what_does_not_fit(operands, result, flags, err, says):
    with pytest.raises(err, match=says):
        tf.format_lines("f16_add", operands, result, flags)


def test_verify_refuses_float_results_and_flags():
    with pytest.raises(TypeError, match="result"):
        tf.verify("f16_add", H, H, result=np.array([16384.0, 17408.0]), flags=[0, 0])
    with pytest.raises(ValueError, match="flags"):
        tf.verify("f16_add", H, H, result=[0x4000, 0x4400], flags=[0, 0x40])
    assert tf.verify("f16_add", H, H, result=[0x4000, 0x4400], flags=[0, 0]).ok


def test_parse_refuses_flags_above_0x1f():
    with pytest.raises(ValueError, match=r"line 2: field 4 value 0x20 out of range for flags"):
        tf.parse_lines("f16_add", b"3C00 3C00 4000 00\n3C00 3C00 4000 20\n")
    ops, res, flg = tf.parse_lines("f16_add", b"3C00 3C00 4000 1F\n")
    assert flg.tolist() == [0x1F]


def _ver(args, stdin, tmp_path, capsys):
    """``testfloat ver`` in this process, the lines from a file (-input)."""
    from softfloat.testfloat import main
    src = tmp_path / "in.txt"
    src.write_bytes(stdin)
    rc = main(["ver", "-input", str(src)] + args)
    return rc, capsys.readouterr().err


def test_ver_refuses_flags_0x20_to_0xff_and_checks_json_first(tmp_path, capsys):
    rc, err = _ver(["f16_add"], b"3C00 3C00 4000 FF\n", tmp_path, capsys)
    assert rc == 2 and "out of range for flags" in err
    # an unwritable -json path: status 2 before any line is read
    blocker = tmp_path / "file"
    blocker.write_text("x")
    rc, err = _ver(["-json", str(blocker / "r.json"), "f16_add"], b"not even a line\n",
                   tmp_path, capsys)
    assert rc == 2 and "-json" in err and "line 1" not in err
    rc, err = _ver(["-json", str(tmp_path), "f16_add"], b"", tmp_path, capsys)
    assert rc == 2 and "is a directory" in err
    out = tmp_path / "r.json"
    rc, err = _ver(["-json", str(out), "f16_add"], b"3C00 3C00 4000 00\n", tmp_path, capsys)
    assert rc == 0 and out.exists()


def test_ver_from_stdin_refuses_a_long_line():
    p = subprocess.run([sys.executable, "-m", "softfloat", "testfloat", "ver", "f16_add"],
                       input=b"3C00 3C00 4000 00\n" + b"3" * (3 << 20), capture_output=True,
                       cwd=ROOT, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 2 and b"line 2: longer than 1024 bytes" in p.stderr
    assert b"Traceback" not in p.stderr


class _Endless(io.RawIOBase):
    """A binary stream of ``n`` bytes with no newline, made as read (nothing held)."""

    def __init__(self, n):
        self.left = n

    def readable(self):
        return True

    def read(self, k=-1):
        k = self.left if k is None or k < 0 else min(k, self.left)
        self.left -= k
        return b"3" * k


def test_a_100_mb_line_is_refused_in_bounded_memory():
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="line 1: longer than 1024 bytes"):
            tf.verify_stream("f16_add", _Endless(100 << 20), chunk_lines=1 << 14)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, peak                        # 100 MB never held


def test_streams_read_in_chunks_count_lines_across_them():
    good = io.BytesIO(b"3C00 3C00 4000 00\n" * 3 + b"3C00 1000 3C00 01")   # no final newline
    rep = tf.verify_stream("f16_add", good, chunk_lines=1)
    assert rep.cases == 4 and rep.ok
    bad = io.BytesIO(b"3C00 3C00 4000 00\n3C00 3C00 4001 00\n")
    rep = tf.verify_stream("f16_add", bad, chunk_lines=1)
    assert rep.mismatches == 1 and rep.records[0]["case"] == 2


@pytest.mark.parametrize("text", [b"", b"\n\n"])
def test_ver_on_empty_input_reports_it_and_fails(tmp_path, capsys, text):
    # a testbench that crashed before writing anything must not pass
    out = tmp_path / "r.json"
    rc, err = _ver(["-json", str(out), "f16_add"], text, tmp_path, capsys)
    assert rc == 2 and "empty input" in err and err.count("\n") == 1
    import json
    rep = json.loads(out.read_text())
    assert rep["ok"] is False and rep["cases"] == 0 and rep["empty"] is True


def test_ver_from_dev_null_exits_2():
    p = subprocess.run([sys.executable, "-m", "softfloat", "testfloat", "ver", "f16_add"],
                       stdin=subprocess.DEVNULL, capture_output=True, cwd=ROOT, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 2 and b"empty input" in p.stderr and b"0 mismatches" not in p.stdout
