"""What the first call of an arithmetic operation compiles (softfloat/_kernels/arith.py,
arith_fast.py): one kernel per operation family, one signature per kernel and
helper. Structural checks in a fresh process (no timing): numba's dispatchers
list the signatures they compiled or loaded from the cache. The results
themselves are checked against oracles in tests/test_arith.py and
tests/test_fast_paths.py."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = r"""
import json, sys
import numpy as np
import softfloat as sf
from softfloat._kernels import arith as A, arith_fast as AF, core as C, specialize as S

def sigs(mod, names):
    return {n: [str(s) for s in getattr(mod, n).signatures] for n in names}

FAMILY = ["addsub_chunk", "mul_chunk", "div_chunk", "minmax_chunk", "add_one", "mul_one",
          "div_one", "minmax_one", "add_pre", "mul_pre", "div_pre", "minmax_pre"]
FAST = ["addsub_fast_chunk", "mul_fast_chunk", "div_fast_chunk"]
# encodings made by numpy, so that no conversion kernel runs
with np.errstate(all="ignore"):
    x = np.array([1.0, 65504.0, 0.0, -0.0, np.inf, np.nan, 6e-8, -3.0, 2.0**-11], np.float64)
h = x.astype(np.float16).view(np.uint16)
g = h[::-1].copy()
out = {}
sf.add(h, g, "fp16")
out["after_add"] = sigs(A, FAMILY)
out["fast_after_add"] = sigs(AF, FAST)
if sys.argv[1] == "all":
    f32 = x.astype(np.float32).view(np.uint32)
    e4 = (f32 >> 24).astype(np.uint8) & 0x7F
    for fmt, a in (("fp16", h), ("bf16", (f32 >> 16).astype(np.uint16)), ("fp32", f32),
                   ("fp8_e4m3", e4), ("fp8_e5m2", e4)):
        b = a[::-1].copy()
        for fp in (True, False):
            with sf.localcontext(fast_paths=fp):
                for op in (sf.add, sf.sub, sf.mul, sf.div):
                    op(a, b, fmt)
                    op(a, b, fmt, return_flags=True)
                    op(a, b[:1], fmt, "upward", ftz=True)
                    op(a, b, fmt, "stochastic", seed=1)
                for op in (sf.minimum, sf.maximum_number):
                    op(a, b, fmt)
                    op(a[:1], b, fmt, return_flags=True, daz=True)
                sf.fma(a, b, a, fmt)
                sf.sqrt(a, fmt)
                sf.round_to_integral(a, fmt, exact=True)
                sf.lt(a, b, fmt)
                sf.to_int32(a, fmt)
                sf.from_int(np.arange(-3, 4), fmt)
    out["general"] = sigs(A, ["addsub_chunk", "mul_chunk", "div_chunk", "minmax_chunk",
                              "fma_chunk", "unary_chunk", "compare_chunk", "to_int_chunk",
                              "from_int_chunk"])
    out["helpers"] = dict(sigs(A, FAMILY[4:] + ["finish", "add_finite", "fma_pre", "sqrt_pre",
                                                "rint_pre", "int_magnitude", "compare_one",
                                                "to_int_one", "from_int_one"]),
                          **sigs(C, ["round_pack", "unpack", "zero_bits", "inf_bits"]),
                          **sigs(S, ["make_nan", "nan_operands", "fresh_nan", "signed_nan"]))
print("PROBE " + json.dumps(out))
"""


def _probe(what, cache_dir=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)   # empty: everything compiles here
    p = subprocess.run([sys.executable, "-c", PROBE, what], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stdout + p.stderr
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("PROBE ")]
    return json.loads(line[-1][6:])


def test_first_add_compiles_the_add_family_only(tmp_path):
    # an empty cache, so that every function the first add needs is compiled (a
    # kernel loaded from the cache brings no callee with it)
    r = _probe("add", tmp_path / "cache")["after_add"]
    # the operands (zeros, infinities, NaN, a subnormal, an overflow) reach the
    # general path: add's own loop and helpers, nothing of mul, div, min/max
    for name in ("addsub_chunk", "add_one", "add_pre"):
        assert len(r[name]) == 1, (name, r[name])
    for name in ("mul_chunk", "div_chunk", "minmax_chunk", "mul_one", "div_one",
                 "minmax_one", "mul_pre", "div_pre", "minmax_pre"):
        assert r[name] == [], (name, r[name])


def _check_signatures(r, helpers_compiled):
    # every general loop: one array signature whatever the format, storage dtype,
    # broadcasting, flags, mode and fast-path setting
    for name, s in r["general"].items():
        assert len(s) == 1, (name, s)
    # helpers: no literal re-specialisation (a Python int constant argument would
    # compile a second copy of the callee and of everything it calls)
    for name, s in r["helpers"].items():
        assert len(s) == 1 if helpers_compiled else len(s) <= 1, (name, s)
        assert not any("Literal" in x for x in s), (name, s)


def test_one_signature_per_general_kernel():
    # the default cache: kernels may come from it (then their helpers are not loaded)
    _check_signatures(_probe("all"), False)


@pytest.mark.slow
def test_one_signature_per_general_kernel_and_helper_cold(tmp_path):
    _check_signatures(_probe("all", tmp_path / "cache"), True)
