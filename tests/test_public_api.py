"""softfloat.__all__ is the public API: complete and importable."""
from __future__ import annotations

import importlib
import types

import softfloat as sf
from softfloat import testfloat as tf


def _public_names(mod):
    return {n for n in dir(mod) if not n.startswith("_")
            and not isinstance(getattr(mod, n), types.ModuleType)}


def test_all_is_complete_and_importable():
    names = _public_names(sf)
    assert names <= set(sf.__all__), sorted(names - set(sf.__all__))
    assert len(sf.__all__) == len(set(sf.__all__))
    for n in sf.__all__:
        assert getattr(sf, n) is not None
        exec(f"from softfloat import {n}", {})
    for n in ("add", "sum", "matmul", "array", "platform_op", "to_bits", "fma", "dot",
              "LPArray", "BlockFMA", "Accumulator", "get_platform", "round_to_integral"):
        assert n in sf.__all__


def test_star_import_gives_exactly_all():
    ns = {}
    exec("from softfloat import *", ns)
    assert set(ns) - {"__builtins__"} == set(sf.__all__)


def test_submodule_all_lists_are_exported():
    for sub in ("arith", "accumulate", "lparray", "platforms", "conversions", "flags",
                "rounding"):
        mod = importlib.import_module(f"softfloat.{sub}")
        for n in getattr(mod, "__all__", []):
            assert hasattr(sf, n), (sub, n)


def test_testfloat_package_api():
    assert _public_names(tf) <= set(tf.__all__) | {"annotations"}
    for n in tf.__all__:
        assert getattr(tf, n) is not None
    for mod in ("names", "options", "cases", "expected", "lineio", "verify", "streams", "cli"):
        importlib.import_module(f"softfloat.testfloat.{mod}")
