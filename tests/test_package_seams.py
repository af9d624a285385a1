"""The packages verify, sweep and testfloat use each other through public
names only."""
from __future__ import annotations

import ast
import os

import softfloat

PKGS = ("verify", "sweep", "testfloat")
ROOT = os.path.dirname(softfloat.__file__)


def _target(pkg, mod, node):
    """The package (of PKGS) an ImportFrom in softfloat/<pkg>/<mod>.py reaches."""
    if node.level == 0:
        parts = (node.module or "").split(".")
        return parts[1] if len(parts) > 1 and parts[0] == "softfloat" else None
    if node.level == 1:
        return pkg
    if node.level == 2:
        return (node.module or "").split(".")[0] or None
    return None


def test_no_underscored_name_is_imported_across_packages():
    bad = []
    for pkg in PKGS:
        d = os.path.join(ROOT, pkg)
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".py"):
                continue
            tree = ast.parse(open(os.path.join(d, fn)).read())
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom):
                    continue
                t = _target(pkg, fn, node)
                if t in PKGS and t != pkg:
                    names = [a.name for a in node.names if a.name.startswith("_")]
                    mods = [m for m in (node.module or "").split(".") if m.startswith("_")]
                    if names or mods:
                        bad.append(f"softfloat/{pkg}/{fn}:{node.lineno} {node.module} "
                                   f"{names or mods}")
    assert not bad, bad


def test_the_shard_engine_is_public():
    from softfloat import sweep
    for name in ("run_shards", "check_run_args", "seal", "shard_path", "write_json",
                 "split_resumed", "Progress", "builtin_names"):
        assert name in sweep.__all__ and callable(getattr(sweep, name))
    from softfloat.testfloat import classify_mismatches
    assert callable(classify_mismatches)
