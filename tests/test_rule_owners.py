"""Who may read the rounding mode and who may spell a NaN: every read and every
NaN literal in the library is found (with ``ast``) and must be on the allow-list
below, with its reason. A new one outside the owners fails here: ask
`core.round_pack` / its branch-free twin (`core.round_masks`,
`increment_branchfree`, `addend_branchfree`) for a rounding, and
`softfloat.specialize` / `_kernels/specialize.py` (or the `Format`) for a NaN.

What counts as a read of the mode: an index ``pol[P_MODE]``, a comparison with a
rounding code (``RNE``, ``_RUP``, ``Rounding.STOCHASTIC`` ...) or of a variable
named ``mode``/``rm`` with an integer literal (a magic number). A NaN literal: an
integer constant that is a NaN pattern of fp16, bf16, fp32 or fp64 (0x7E00,
0x7FC0, 0x7FFF, 0x7FC00000, ...; their negative twins) or a read of
``.default_nan_bits`` (the encoding used as a result)."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

_CODES = {"RNE", "RNA", "RTZ", "RUP", "RDN", "RTO", "RSR"}
_ENUM = {"NEAREST_EVEN", "NEAREST_AWAY", "TOWARD_ZERO", "UPWARD", "DOWNWARD", "ODD",
         "STOCHASTIC"}
NAN_PATTERNS = {0x7E00, 0xFE00, 0x7FC0, 0xFFC0, 0x7FFF, 0x7FC00000, 0xFFC00000,
                0x7FF8000000000000, 0xFFF8000000000000}

_DISPATCH = "dispatch: which kernel or fast path serves a mode (Python level; rounds nothing)"
_ORACLE = "an independent oracle: rounds and makes NaNs another way, on purpose"

#: file -> {function (or "*" for the whole file): reason}
MODE_READS = {
    "softfloat/_kernels/core.py": {
        "round_pack": "the rounding", "_round_increment": "the rounding (round_pack's helper)",
        "round_masks": "the branch-free twin: the mode as 0/1 masks",
        "is_stochastic": "whether a loop draws random bits"},
    "softfloat/_kernels/arith.py": {
        "int_magnitude": "passes the mode on, in the policy of the integer pseudo-format"},
    "softfloat/_kernels/arith_fast.py": {
        f: "takes the mode apart once per chunk (round_masks)"
        for f in ("addsub_fast_chunk", "mul_fast_chunk", "div_fast_chunk")},
    "softfloat/_kernels/convert.py": {
        "_fast_chunk": "takes the mode apart once per chunk (round_masks)"},
    "softfloat/_kernels/convert_hw.py": {
        "f32_bf16_chunk": "a loop of its own for nearest-even (constant masks)",
        "fp16_chunk": "cvt16_block's rounding immediate is a literal: one loop per mode",
        "signed_thresholds": "the flag thresholds of the directed modes"},
    "softfloat/_kernels/hw.py": {
        "cvt16_block.codegen": "vcvtps2ph's rounding immediate per mode"},
    "softfloat/_kernels/eft.py": {
        f: "each kernel is built for one mode (a compile-time constant); the proofs "
           "differ per mode (module docstring)"
        for f in ("_elem_fma_near", "_elem_dir", "_make")},
    "softfloat/_kernels/accum.py": {
        "block_fma_fast_ok": "the float64 block-FMA model exists for nearest-even and toward zero",
        "block_fma_fast_chunk": "the float64 block-FMA model: nearest-even or toward zero"},
    "softfloat/accumulate.py": {
        f: _DISPATCH for f in ("Accumulator.__post_init__", "_accumulate", "_blas_check",
                               "_fast_ok", "_values_fast")},
    "softfloat/arith.py": {f: _DISPATCH for f in ("_blocked", "_binary_one", "_eft_ok",
                                                  "_setup")},
    "softfloat/conversions.py": {f: _DISPATCH for f in ("_run_convert", "_hw_kernel")},
    "softfloat/mx.py": {"_prepare": _DISPATCH},
    "softfloat/fp8_scaling.py": {"quantize_per_tensor": _DISPATCH},
    "softfloat/rounding.py": {"<module>": "the modes themselves (DETERMINISTIC_MODES)"},
    "softfloat/sweep.py": {f: "which modes a sweep covers" for f in ("run_shard", "run_sweep")},
    "softfloat/testfloat/options.py": {"Options.__post_init__": "TestFloat's mode options"},
    "softfloat/testfloat/verify.py": {"_classify": "TestFloat's report per mode"},
    "softfloat/verify/engine.py": {"verify": "refuses stochastic rounding (no single right answer)"},
    "softfloat/sweep_oracles/__init__.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/check.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/mpfr.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/nan_rules.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/ro53.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/simd.py": {"*": _ORACLE},
}

NAN_LITERALS = {
    "softfloat/_kernels/mx.py": {
        "f32_exact": "the quiet bit of a float64 NaN's exact float32 image (a cast of the "
                     "operand's payload, not a NaN the library makes)"},
    "softfloat/platforms/presets.py": {
        "<module>": "platform data: a preset states its NaN pattern (torch CUDA's 0x7FFF)"},
    "softfloat/_kernels/eft.py": {
        "_rn": "0x7FFF is the nearest-even addend of 16 dropped bits, no NaN"},
    "softfloat/fp8_scaling.py": {
        "quantize_per_tensor": "the scale kernel's NaN, passed in (to go through specialize)"},
    "softfloat/sweep_oracles/check.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/mpfr.py": {"*": _ORACLE},
}


def _is_code(n) -> bool:
    if isinstance(n, ast.Name):
        return n.id.lstrip("_") in _CODES
    return isinstance(n, ast.Attribute) and (n.attr in _CODES or n.attr in _ENUM)


def find(source: str):
    """(kind, function, line) of every mode read ("mode") and NaN literal ("nan")."""
    out = []

    def walk(node, fn):
        for ch in ast.iter_child_nodes(node):
            sub = fn
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                sub = ch.name if fn == "<module>" else fn + "." + ch.name
            if (isinstance(ch, ast.Subscript) and isinstance(ch.slice, ast.Name)
                    and ch.slice.id == "P_MODE"):
                out.append(("mode", fn, ch.lineno))
            elif isinstance(ch, ast.Compare):
                terms = [ch.left] + ch.comparators
                if any(_is_code(t) for t in terms) or (
                        any(isinstance(t, ast.Name) and t.id in ("mode", "rm") for t in terms)
                        and any(isinstance(t, ast.Constant) and type(t.value) is int
                                for t in terms)):
                    out.append(("mode", fn, ch.lineno))
            elif isinstance(ch, ast.Constant) and type(ch.value) is int \
                    and ch.value in NAN_PATTERNS:
                out.append(("nan", fn, ch.lineno))
            elif isinstance(ch, ast.Attribute) and ch.attr == "default_nan_bits":
                out.append(("nan", fn, ch.lineno))
            walk(ch, sub)

    walk(ast.parse(source), "<module>")
    return out


def _library():
    for top in ("softfloat", "nn"):
        for p in sorted((ROOT / top).rglob("*.py")):
            yield str(p.relative_to(ROOT)), p.read_text()


# the owners of the rules, where anything goes
_OWNERS = {"softfloat/formats.py", "softfloat/specialize.py", "softfloat/_kernels/specialize.py"}


@pytest.mark.parametrize("kind,table", [("mode", MODE_READS), ("nan", NAN_LITERALS)])
def test_every_read_is_on_the_allow_list(kind, table):
    bad = []
    for rel, src in _library():
        if rel in _OWNERS and kind == "nan":
            continue
        allowed = table.get(rel, {})
        for k, fn, line in find(src):
            if k == kind and "*" not in allowed and fn not in allowed:
                bad.append(f"{rel}:{line} in {fn}")
    assert not bad, (f"new {'reads of the rounding mode' if kind == 'mode' else 'NaN literals'}"
                     " outside the owners (see this file's docstring):\n" + "\n".join(bad))


@pytest.mark.parametrize("kind,table", [("mode", MODE_READS), ("nan", NAN_LITERALS)])
def test_allow_list_has_no_stale_entry(kind, table):
    # every entry still names a function that reads (an entry outlives no fix)
    found = {}
    for rel, src in _library():
        for k, fn, _ in find(src):
            if k == kind:
                found.setdefault(rel, set()).add(fn)
    stale = [f"{rel}: {fn}" for rel, fns in table.items() for fn in fns
             if fn != "*" and fn not in found.get(rel, set())]
    stale += [rel for rel, fns in table.items() if "*" in fns and rel not in found]
    assert not stale, "allow-list entries that read nothing now:\n" + "\n".join(stale)


def test_the_finder_sees_each_kind():
    src = ("def f(pol, mode, fmt):\n"
           "    a = pol[P_MODE]\n"
           "    b = mode == 3\n"
           "    c = mode == _RUP\n"
           "    d = 0x7E00\n"
           "    e = fmt.default_nan_bits\n")
    assert [k for k, _, _ in find(src)] == ["mode", "mode", "mode", "nan", "nan"]
    assert {fn for _, fn, _ in find(src)} == {"f"}
