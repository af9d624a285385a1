"""Every code block of the documentation runs as shown.

The documents are found by the patterns in ``DOC_PATTERNS`` (so a document added
under docs/, nn/, examples/ or validation/ is picked up without editing this
file). In each document, in order and in one namespace per document:

* a ``python`` block that shows ``>>>`` prompts is a doctest: the shown output
  must be the real output. An expected-output line may end in a comment that
  starts with two spaces and ``#`` (``array([1.])   # the tie``): the comment is
  not part of the output;
* any other ``python`` block is executed, and the ``test_*`` functions it defines
  (property tests, for instance) are called;
* a ``bash``/``sh``/``shell`` block is run by bash (``set -e``) in a fresh
  temporary directory that links the repository's source folders (so commands
  that name ``examples/...`` or ``validation/...`` run, and whatever a command
  writes stays in the temporary directory), with ``python`` meaning the
  interpreter running the tests and the repository first on ``PYTHONPATH``;
* a block without a language, or ``text``/``console``/``output``, is output
  shown to the reader and is not run (one that starts with a ``python ...``
  command is reported: label it ``bash``).

A marker comment on the line before a block (blank lines between are allowed)
changes what runs:

* ``<!-- doc-test: skip (reason) -->``: not run; the reason is required;
* ``<!-- doc-test: run COMMAND -->``: run the shell COMMAND instead of the block
  (the block's small variant, for commands that take minutes);
* ``<!-- doc-test: requires MODULE[, MODULE] -->``: not run where one of these
  (optional) modules is not installed;
* ``<!-- doc-test: slow -->``: run only with ``-m slow`` (with a ``run`` marker:
  the variant, with ``-m slow``). A block with a ``run`` variant is never run
  itself.
"""
from __future__ import annotations

import doctest
import glob
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Relative to the repository root; ``**`` reaches any depth.
DOC_PATTERNS = ("README.md", "docs/**/*.md", "nn/**/*.md", "examples/**/*.md",
                "validation/**/*.md")
# Generated reports (not documentation) are not run.
EXCLUDE = ("validation/reports/",)

PYTHON_LANGS = {"python", "py", "pycon"}
SHELL_LANGS = {"bash", "sh", "shell"}
TEXT_LANGS = {"", "text", "console", "output", "txt", "json", "markdown", "md", "c", "cuda"}
SHELL_TIMEOUT_S = 300

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,})\s*(?P<lang>[\w+-]*)[^`]*$")
_MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(?P<kind>skip|run|slow|requires)\b\s*(?P<arg>.*?)\s*-->\s*$")
_OUTPUT_COMMENT = re.compile(r"\s{2,}#.*$")


@dataclass
class Block:
    path: str          # relative to ROOT
    line: int          # 1-based line of the first line of code
    lang: str
    code: str
    markers: dict = None   # kind -> argument: skip / run / slow

    def __post_init__(self):
        self.markers = dict(self.markers or {})

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def doc_files() -> list[str]:
    found = set()
    for pat in DOC_PATTERNS:
        for p in glob.glob(os.path.join(ROOT, pat), recursive=True):
            rel = os.path.relpath(p, ROOT).replace(os.sep, "/")
            if os.path.isfile(p) and not rel.startswith(EXCLUDE):
                found.add(rel)
    return sorted(found)


def parse_blocks(path: str, text: str | None = None) -> list[Block]:
    """The fenced code blocks of a Markdown file, with the marker before each."""
    if text is None:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
    lines = text.splitlines()
    blocks, i, markers = [], 0, {}
    while i < len(lines):
        m = _FENCE.match(lines[i])
        mk = _MARKER.match(lines[i])
        if mk:
            markers[mk["kind"]] = mk["arg"]
        if not m:
            if lines[i].strip() and not mk:
                markers = {}
            i += 1
            continue
        fence, lang = m["fence"], m["lang"].lower()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        code = textwrap.dedent("\n".join(lines[i + 1:j])) + "\n"
        blocks.append(Block(path, i + 2, lang, code, markers))
        markers = {}
        i = j + 1
    return blocks


class _Checker(doctest.OutputChecker):
    """doctest's checker, with ``  # comment`` allowed at the end of an expected line."""

    def check_output(self, want, got, optionflags):
        want = "\n".join(_OUTPUT_COMMENT.sub("", ln) for ln in want.split("\n"))
        return super().check_output(want, got, optionflags)


def run_doctest(block: Block, ns: dict) -> str:
    """Run a ``>>>`` block in ``ns``; returns the failure report ('' when it passes)."""
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block.code, ns, block.where, block.path, block.line - 1)
    report = []
    runner = doctest.DocTestRunner(checker=_Checker(), verbose=False,
                                   optionflags=doctest.ELLIPSIS)
    runner.run(test, out=report.append, clear_globs=False)
    ns.update(test.globs)       # DocTest works on a copy: later blocks see these names
    return "".join(report)


def _shell_dir(tmp: str) -> dict:
    """Environment for shell blocks: ``python`` is this interpreter; the
    repository is importable; the source folders are linked into ``tmp``."""
    bindir = os.path.join(tmp, ".bin")
    os.makedirs(bindir, exist_ok=True)
    for name in ("python", "python3"):
        # a script, not a link: a virtual environment is found from the path the
        # interpreter was started by
        script = os.path.join(bindir, name)
        with open(script, "w") as f:
            f.write(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        os.chmod(script, 0o755)
    # the packages come from PYTHONPATH; the rest is linked for commands that name it
    for name in ("examples", "validation", "docs", "tests", "benchmarks", "pyproject.toml",
                 "README.md"):
        src, dst = os.path.join(ROOT, name), os.path.join(tmp, name)
        if os.path.exists(src) and not os.path.lexists(dst):
            os.symlink(src, dst)
    env = dict(os.environ)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["MPLBACKEND"] = "Agg"
    return env


def run_shell(block: Block, code: str) -> str:
    with tempfile.TemporaryDirectory(prefix="doc-test-") as tmp:
        env = _shell_dir(tmp)
        try:
            p = subprocess.run(["bash", "-c", "set -e\n" + code], cwd=tmp, env=env,
                               capture_output=True, text=True, timeout=SHELL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"{block.where}: timed out after {SHELL_TIMEOUT_S} s:\n{code}"
    if p.returncode != 0:
        return (f"{block.where}: exit status {p.returncode}:\n{code}\n--- stdout\n"
                f"{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}")
    return ""


def run_block(block: Block, ns: dict) -> str:
    """Run one block (its ``run`` variant if it has one); returns '' when it
    passes, else what went wrong."""
    if "run" in block.markers:
        if not block.markers["run"]:
            return f"{block.where}: 'doc-test: run' without a command"
        return run_shell(block, block.markers["run"])
    if block.lang in PYTHON_LANGS:
        if re.search(r"^\s*>>> ", block.code, re.M):
            return run_doctest(block, ns)
        before = set(ns)
        try:
            exec(compile(block.code, block.where, "exec"), ns)
            for name in sorted(set(ns) - before):
                if name.startswith("test_") and callable(ns[name]):
                    ns[name]()
        except Exception as e:  # noqa: BLE001 - reported with its location
            import traceback
            return f"{block.where}: {type(e).__name__}: {e}\n{traceback.format_exc(limit=-3)}"
        return ""
    if block.lang in SHELL_LANGS:
        return run_shell(block, block.code)
    return ""


def _check_block(block: Block) -> str:
    """Problems with a block that are independent of running it."""
    if "skip" in block.markers and not re.match(r"\(.+\)", block.markers["skip"]):
        return f"{block.where}: 'doc-test: skip' needs a reason in parentheses"
    if block.lang in TEXT_LANGS and "run" not in block.markers and \
            re.match(r"\s*(\$ )?python3? ", block.code):
        return f"{block.where}: an unlabelled block starts with a command: label it bash"
    if block.lang not in PYTHON_LANGS | SHELL_LANGS | TEXT_LANGS:
        return f"{block.where}: unknown block language {block.lang!r}"
    return ""


def _importable(names: str) -> bool:
    import importlib.util
    return all(importlib.util.find_spec(n.strip()) is not None
               for n in names.replace(",", " ").split())


def run_document(path: str, slow: bool) -> list[str]:
    """Run the blocks of ``path`` (the slow ones when ``slow``; every python
    block in any case, since later blocks use the names earlier ones define)."""
    import numpy as np
    failures = []
    ns = {"__name__": "__doc_test__"}
    cwd = os.getcwd()
    # NumPy's default print options (another test may have changed them)
    with tempfile.TemporaryDirectory(prefix="doc-test-py-") as tmp, np.printoptions(
            precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False,
            nanstr="nan", infstr="inf", sign="-", floatmode="maxprec", legacy=False):
        os.chdir(tmp)       # files a python block writes land here
        try:
            for b in parse_blocks(path):
                problem = _check_block(b)
                if problem:
                    failures.append(problem)
                    continue
                if "skip" in b.markers or not _importable(b.markers.get("requires", "")):
                    continue
                is_slow = "slow" in b.markers
                # with -m slow: the slow blocks, and the python blocks, whose
                # names later blocks use
                if is_slow != slow and not (slow and b.lang in PYTHON_LANGS
                                            and "run" not in b.markers):
                    continue
                r = run_block(b, ns)
                if r:
                    failures.append(r)
        finally:
            os.chdir(cwd)
    return failures


DOCS = doc_files()


@pytest.mark.parametrize("path", DOCS)
def test_doc_blocks(path):
    failures = run_document(path, slow=False)
    assert not failures, "\n\n".join(failures)


def _has_slow(path):
    return any("slow" in b.markers for b in parse_blocks(path))


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in DOCS if _has_slow(p)] or ["README.md"])
def test_doc_slow_blocks(path):
    failures = run_document(path, slow=True)
    assert not failures, "\n\n".join(failures)


def test_parser_markers_and_checker():
    """The machinery itself: markers attach to the next block only, comments
    after expected output are ignored, a wrong output is reported."""
    text = textwrap.dedent("""\
        <!-- doc-test: skip (needs a GPU) -->

        ```bash
        nvidia-smi
        ```

        ```python
        >>> 1 + 1          
        2                  # two
        ```
        <!-- doc-test: run echo small -->
        <!-- doc-test: slow -->
        ```sh
        long command
        ```
        ```
        python -m softfloat demo
        ```
        """)
    bs = parse_blocks("x.md", text)
    assert [(b.lang, sorted(b.markers)) for b in bs] == [
        ("bash", ["skip"]), ("python", []), ("sh", ["run", "slow"]), ("", [])]
    assert bs[0].markers["skip"] == "(needs a GPU)" and bs[2].markers["run"] == "echo small"
    assert run_doctest(bs[1], {}) == ""
    bad = Block("x.md", 1, "python", ">>> 1 + 1\n3\n")
    assert "Expected:" in run_doctest(bad, {})
    assert "label it bash" in _check_block(bs[3])
    assert "needs a reason" in _check_block(Block("x.md", 1, "bash", "ls", {"skip": ""}))
