"""benchmarks/table.py runs and writes the page's shape: its --quick run has the
header lines and the four sections with their rows and columns, every cell of
the right kind (timings positive numbers, ratios numbers or the empty-cell dash,
MMA-Sim's bits the same as softfloat's where it is installed), and the committed
docs/benchmarks.md has the same sections, columns and row labels, so the page
cannot drift from the script that makes it. Timings are not checked."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "table.py"
PAGE = ROOT / "docs" / "benchmarks.md"
SECTIONS = ["Conversions", "Arithmetic", "Sums and matrix products", "GPU matrix units"]
DASH = "–"


def parse(text):
    """{section: (header cells, [row cells])} and the '- ' header lines."""
    sections, header, cur = {}, [], None
    for line in text.splitlines():
        if line.startswith("## "):
            cur = line[3:].strip()
            sections[cur] = (None, [])
        elif line.startswith("- ") and cur is None:
            header.append(line[2:])
        elif line.startswith("|") and cur is not None:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            head, rows = sections[cur]
            if head is None:
                sections[cur] = (cells, rows)
            elif not set(line) <= set("|-"):
                rows.append(cells)
    return header, sections


def _num(c):
    return float(c) if re.fullmatch(r"\d+(\.\d+)?", c) else None


@pytest.fixture(scope="module")
def quick_page():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)            # the script finds its own checkout
    r = subprocess.run([sys.executable, str(SCRIPT), "--quick"], capture_output=True,
                       text=True, env=env, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_quick_run_has_the_tables_shape(quick_page):
    header, sections = parse(quick_page)
    assert quick_page.startswith("# Benchmarks\n")
    assert [h.split(":")[0].split(" (")[0] for h in header[:3]] == ["Machine", "Threads",
                                                                   "Load average"]
    assert header[3].startswith("Taken ") and "--quick" in quick_page.splitlines()[2]
    assert "softfloat" in header[3] and "numpy" in header[3]
    assert list(sections) == SECTIONS
    for name, (head, rows) in sections.items():
        assert head and rows, name
        for r in rows:
            assert len(r) == len(head), (name, r)
    conv = sections["Conversions"][1]
    assert len(conv) == 14 and conv[0][0] == "float32 → fp16" and conv[-1][0] == "float64 → fp4_e2m1"
    for name in SECTIONS[:3]:
        for r in sections[name][1]:
            assert _num(r[1]) is not None and _num(r[1]) > 0, (name, r)
            assert all(c == DASH or _num(c) is not None for c in r[2:]), (name, r)
    units = sections["GPU matrix units"][1]
    assert {r[0].split()[0] for r in units} == {"hopper", "ampere", "cdna1", "cdna3"}
    for r in units:
        assert _num(r[2]) > 0, r
        assert r[5] in ("yes", DASH), r      # MMA-Sim, where installed, agrees bit for bit
        assert (r[3] == DASH) == (r[4] == DASH) == (r[5] == DASH), r


def test_committed_page_matches_the_script(quick_page):
    """The committed page has the script's sections, columns and row labels
    (the sizes in them aside: 4,000,000 or 256³)."""
    def shape(text):
        _, sections = parse(text)
        out = {}
        for name, (head, rows) in sections.items():
            norm = lambda s: re.sub(r"\d{1,3}(,\d{3})+|\d+³", "N", s)  # noqa: E731
            out[name] = ([norm(h) for h in head], [norm(r[0]) for r in rows])
        return out
    assert PAGE.exists(), "docs/benchmarks.md: run python benchmarks/table.py --out docs/benchmarks.md"
    page = PAGE.read_text()
    assert "--quick" not in page.splitlines()[2], "the committed page is a --quick run"
    assert shape(page) == shape(quick_page)
