"""softfloat.config: one parser for every SOFTFLOAT_* switch, and the README's
table of them."""
import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest

from softfloat import config

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("word,want", [("1", True), ("on", True), ("ON", True), (" Yes ", True),
                                       ("TRUE", True), ("0", False), ("OFF", False),
                                       ("no", False), ("False", False), ("", True)])
def test_boolean_words(monkeypatch, word, want):
    for name, (kind, default, _) in config.SWITCHES.items():
        if kind == "bool":
            monkeypatch.setenv(name, word)
            expect = default if word == "" else want     # empty: the switch's default
            assert config.switch(name) is expect, (name, word)


@pytest.mark.parametrize("word", ["2", "maybe", "of", "0n", "-1"])
def test_junk_is_refused_naming_the_variable(monkeypatch, word):
    monkeypatch.setenv("SOFTFLOAT_HW", word)
    with pytest.raises(ValueError, match="SOFTFLOAT_HW"):
        config.hardware()
    monkeypatch.setenv("SOFTFLOAT_NUM_THREADS", word)
    if word != "2":
        with pytest.raises(ValueError, match="SOFTFLOAT_NUM_THREADS"):
            config.num_threads()
    with pytest.raises(KeyError, match="SOFTFLOAT_NOPE"):
        config.switch("SOFTFLOAT_NOPE")


def test_num_threads(monkeypatch):
    monkeypatch.setenv("SOFTFLOAT_NUM_THREADS", "3")
    assert config.num_threads() == 3
    monkeypatch.delenv("SOFTFLOAT_NUM_THREADS")
    monkeypatch.setenv("NUMBA_NUM_THREADS", "2")
    assert config.num_threads() == 2
    monkeypatch.delenv("NUMBA_NUM_THREADS")
    assert config.num_threads() == len(os.sched_getaffinity(0))


def test_context_default_reads_the_switch(monkeypatch):
    import softfloat as sf
    monkeypatch.setenv("SOFTFLOAT_FAST_PATHS", "Off")
    assert sf.Context().fast_paths is False
    monkeypatch.setenv("SOFTFLOAT_FAST_PATHS", "yes")
    assert sf.Context().fast_paths is True


def test_hw_off_in_capitals_turns_the_hardware_paths_off():
    # read at import: a fresh process, as a user would set it
    code = "import softfloat._kernels.hw as h; print(h.FORCE_INTEGER, h.use_hw())"
    env = dict(os.environ, SOFTFLOAT_HW="OFF", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "False"]
    env["SOFTFLOAT_HW"] = "sometimes"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "SOFTFLOAT_HW='sometimes'" in r.stderr


def _env_reads(tree):
    """Names of SOFTFLOAT_* variables read (os.environ.get / [] / os.getenv) in a module."""
    def is_environ(n):
        return isinstance(n, ast.Attribute) and n.attr == "environ"
    for n in ast.walk(tree):
        arg = None
        if isinstance(n, ast.Call) and n.args and isinstance(n.func, ast.Attribute) and (
                (n.func.attr == "get" and is_environ(n.func.value)) or n.func.attr == "getenv"):
            arg = n.args[0]
        elif isinstance(n, ast.Subscript) and is_environ(n.value) and isinstance(n.ctx, ast.Load):
            arg = n.slice
        if isinstance(arg, ast.Constant) and str(arg.value).startswith("SOFTFLOAT_"):
            yield n.lineno, arg.value


def test_no_switch_is_read_outside_config():
    # every SOFTFLOAT_* variable the library reads goes through softfloat.config
    # (setting one for a child process is no read)
    hits = []
    for p in sorted((ROOT / "softfloat").rglob("*.py")) + sorted((ROOT / "nn").rglob("*.py")):
        if p.name != "config.py":
            hits += [f"{p.relative_to(ROOT)}:{line}: {name}"
                     for line, name in _env_reads(ast.parse(p.read_text()))]
    assert not hits, "read these through softfloat.config:\n" + "\n".join(hits)
    # the check sees a read
    assert list(_env_reads(ast.parse("import os\nv = os.environ.get('SOFTFLOAT_HW')")))


def test_readme_table_lists_every_switch():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Environment switches"):]
    rows = re.findall(r"^\| `(SOFTFLOAT_\w+)` \| ([^|]+) \|", section, re.M)
    assert [r[0] for r in rows] == list(config.SWITCHES)
    for name, default in rows:
        kind, want, _ = config.SWITCHES[name]
        assert default.strip() == ("on" if want else "off") if kind == "bool" else True
    doc = config.__doc__
    assert all(f"``{name}``" in doc for name in config.SWITCHES)


def test_no_kernel_uses_numbas_threading():
    # the chunk pool (SOFTFLOAT_NUM_THREADS) is the only parallelism: no kernel is
    # compiled with parallel=True, so numba's own thread count has nothing to set
    me = pathlib.Path(__file__).resolve()
    hits = []
    for top in ("softfloat", "nn", "benchmarks", "tests", "validation", "examples"):
        for p in sorted((ROOT / top).rglob("*.py")):
            if p.resolve() == me:
                continue
            for i, line in enumerate(p.read_text().splitlines(), 1):
                if re.search(r"numba\.set_num_threads\(|jit\(.*parallel\s*=\s*True", line):
                    hits.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not hits, "\n".join(hits)
