"""What the plotting examples share: matplotlib (or a one-line message and exit
status 2 without it), the output folder, and their command line."""
from __future__ import annotations

import argparse
import os
import sys

OUT = os.path.join("out", "examples")    # relative to the working directory; untracked


def pyplot(script: str):
    """matplotlib.pyplot on the Agg backend; without matplotlib, one line naming
    the extra that installs it, and exit status 2."""
    try:
        import matplotlib
    except ImportError:
        print(f"{script} needs matplotlib, which is not installed: "
              f"pip install 'softfloat-lab[plots]'", file=sys.stderr)
        sys.exit(2)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, outdir: str, name: str) -> str:
    """Write ``fig`` to ``outdir/name`` (the folder made if needed) and say so."""
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, name)
    fig.savefig(out, dpi=120)
    print("wrote", out)
    return out


def outdir_from_argv(doc: str) -> str:
    """The ``--out DIR`` option of an example's command line (default `OUT`); a
    bad option is one line and exit status 2."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.error = lambda msg: ap.exit(2, f"{ap.prog}: error: {msg} (see --help)\n")
    ap.add_argument("--out", default=OUT, metavar="DIR",
                    help=f"where the PNG goes (default: {OUT})")
    return ap.parse_args().out
