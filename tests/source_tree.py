"""The project's modules by dotted name, for the tests that read the sources
(the layer table, the package seams)."""
from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def modules(tops=("softfloat", "nn", "validation")) -> dict:
    """{dotted module name: path} of every .py file under ``tops``; a package is
    named by its ``__init__.py``."""
    out = {}
    for top in tops:
        for p in sorted((ROOT / top).rglob("*.py")):
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = p
    return out
