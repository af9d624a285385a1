"""nn stands on softfloat's public API: read from its own source (``ast``), no
module of nn imports an underscored softfloat module or name (softfloat._kernels,
_parallel, _validate, _cli, _extras, ...), imports numba, or compiles a kernel of
its own; each module holds one job in under 700 lines. And `nn.Precision` takes
its policy as a `softfloat.Policy`, parsed by softfloat."""
import ast
import pathlib

import numpy as np
import pytest

import nn
import softfloat as sf

NN = pathlib.Path(nn.__file__).resolve().parent
FILES = sorted(NN.glob("*.py"))


def _imports(tree):
    """(module, names) of every import in a module, at any depth."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module or "", [a.name for a in node.names]


def test_the_finder_sees_private_imports_and_kernels():
    src = ("import softfloat._kernels.core\nfrom softfloat import _validate as V\n"
           "from softfloat.mx import _static\nfrom numba import njit\n")
    assert _offences(ast.parse(src)) == ["softfloat._kernels.core", "softfloat._validate",
                                         "softfloat.mx._static", "numba", "numba.njit"]


def _offences(tree):
    bad = []
    for mod, names in _imports(tree):
        parts = mod.split(".")
        if parts[0] == "numba":
            bad.append(mod)
            bad += [f"{mod}.{n}" for n in names]
        elif parts[0] == "softfloat":
            if any(p.startswith("_") for p in parts):
                bad.append(mod)
            bad += [f"{mod}.{n}" for n in names if n.startswith("_")]
    for node in ast.walk(tree):          # a numba decorator however it was imported
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                f = d.func if isinstance(d, ast.Call) else d
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in ("njit", "jit", "vectorize", "guvectorize", "cfunc", "intrinsic",
                            "generated_jit", "overload"):
                    bad.append(f"@{name} on {node.name}")
    return bad


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_private_softfloat_import_and_no_kernel(path):
    assert not _offences(ast.parse(path.read_text(), str(path))), path.name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_modules_under_700_lines(path):
    assert len(path.read_text().splitlines()) < 700, path.name


def test_no_softfloat_attribute_reaches_a_private_name():
    """``sf._x`` / ``softfloat._x`` attribute reads count as well."""
    bad = []
    for path in FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name) and node.value.id in ("sf", "softfloat")):
                bad.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
    assert not bad, bad


def test_precision_takes_a_softfloat_policy():
    P = nn.Precision("fp16", policy=sf.Policy(ftz=True))
    assert P.policy.ftz and P.rounding == "nearest_even"
    x = np.float32([2.0 ** -20, 1.0 + 2.0 ** -12, -3e-8])
    # every rounding into the storage format follows the policy (here: flush to zero)
    np.testing.assert_array_equal(P.round(x, sf.FP16), sf.quantize(x, "fp16", ftz=True))
    assert P.round(x, sf.FP16)[0] == 0
    assert nn.Precision("fp16").round(x, sf.FP16)[0] == 2.0 ** -20
    # the words are softfloat's (aliases included); the policy's own rounding
    assert nn.Precision("bf16", rounding="rne").rounding == "nearest_even"
    assert nn.Precision("bf16", policy=sf.Policy(rounding="stochastic")).rounding == "stochastic"
    with pytest.raises(TypeError, match="not both"):
        nn.Precision("bf16", rounding="stochastic", policy=sf.Policy())
    with pytest.raises(TypeError, match="softfloat.Policy"):
        nn.Precision("bf16", policy={"ftz": True})
    with pytest.raises(ValueError, match="nearest_even' or 'stochastic"):
        nn.Precision("bf16", policy=sf.Policy(rounding="toward_zero"))
    with pytest.raises(ValueError, match="seed"):
        nn.Precision("bf16", policy=sf.Policy(seed=3))
    with pytest.raises(ValueError, match="recipe"):
        nn.Precision(recipe="mxfp8", policy=sf.Policy(ftz=True))
    # the repr names the policy's fields and evaluates to an equal one
    P = nn.Precision("bf16", update_rounding="stochastic",
                     policy=sf.Policy(nan="canonical", overflow="saturate"))
    Q = eval(repr(P), {"Precision": nn.Precision, "softfloat": sf})
    assert repr(Q) == repr(P) and Q.policy == P.policy


def test_policy_fast_paths_off_is_the_slow_twin_of_a_training_step():
    """A whole training step under ``policy=softfloat.Policy(fast_paths=False)``
    (every rounding by softfloat's general kernels) equals the default's."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 12)).astype(np.float32)
    y = rng.integers(0, 4, 16)
    out = []
    for pol in (sf.Policy(), sf.Policy(fast_paths=False)):
        for kw in (dict(params="fp16", master_weights=True, loss_scaling="dynamic"),
                   dict(params="bf16", update_rounding="stochastic", seed=3)):
            P = nn.Precision(policy=pol, **kw)
            m = nn.MLP([12, 10, 4], seed=1)
            opt = nn.SGD(m.parameters(), lr=0.1, momentum=0.9, precision=P)
            sc = nn.make_scaler(P)
            for _ in range(3):
                nn.train_step(m, opt, sc, x, y)
            out.append([p.data.copy() for p in m.parameters()] + [P.grad_underflow, opt.lost])
    half = len(out) // 2
    for a, b in zip(out[:half], out[half:]):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
