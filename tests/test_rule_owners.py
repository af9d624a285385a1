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
0x7FC0, 0x7FFF, 0x7FC00000, ...; their negative twins), a read of
``.default_nan_bits`` (the encoding used as a result), or a NaN built from the
field widths: an OR of an all-ones exponent field (``((1 << E) - 1) << M``, or a
name such as ``mask_exp`` / ``exp_mask``) with a quiet bit (``1 << (M - 1)``, or a
name with ``quiet`` in it), or the GPUs' all-ones NaN built from the field widths,
``(1 << (E + M)) - 1``, returned as a result (by a function whose name says no
magnitude or mask). (Infinities, ``sign | ((1 << E) - 1) << M``, and the masks
themselves are no NaN and are not reported.)"""
import ast
import pathlib

import pytest

from softfloat import rounding as R
from softfloat.mma.model import OUTPUT_ROUNDINGS

ROOT = pathlib.Path(__file__).resolve().parent.parent

_CODES = {"RNE", "RNA", "RTZ", "RUP", "RDN", "RTO", "RSR", "RSR_A", "RSR_B", "RSR_C", "RSR_ADD"}
_ENUM = {"NEAREST_EVEN", "NEAREST_AWAY", "TOWARD_ZERO", "UPWARD", "DOWNWARD", "ODD",
         "STOCHASTIC"}
NAN_PATTERNS = {0x7E00, 0xFE00, 0x7FC0, 0xFFC0, 0x7FFF, 0x7FC00000, 0xFFC00000,
                0x7FF8000000000000, 0xFFF8000000000000}
# all ones but the sign (the GPUs' NaN): a NaN where it is a value, a magnitude
# mask where it is an operand of & or the value of a name with mag/mask/abs in it
ALL_ONES_NANS = {0x7FFFFFFF, 0x7FFFFFFFFFFFFFFF}
# the words of rounding modes (names, aliases, the matrix units' RNE-/RZ- output
# roundings): a string comparison with one of them reads a mode outside get_rounding
# (the aliases that are everyday words, "max", "min", "ceil", "floor", "truncate",
# are left out: an amax algorithm "max" is no rounding)
MODE_WORDS = (({k for k in R._ALIASES} - {"max", "min", "ceil", "floor", "truncate"})
              | {"rn", "rne", "rz", "rd", "ru", "rna", "rto"}
              | {r.split("-")[0].lower() for r in OUTPUT_ROUNDINGS}
              | {r.lower() for r in OUTPUT_ROUNDINGS})
# the flag words: a name with one of them bound to an int restates a flag bit
FLAG_WORDS = ("INEXACT", "UNDERFLOW", "OVERFLOW", "INFINITE", "INVALID")

_DISPATCH = "dispatch: which kernel or fast path serves a mode (Python level; rounds nothing)"
_ORACLE = "an independent oracle: rounds and makes NaNs another way, on purpose"

#: file -> {function (or "*" for the whole file): reason}
MODE_READS = {
    "softfloat/_kernels/core.py": {
        "round_pack": "the rounding", "_round_increment": "the rounding (round_pack's helper)",
        "round_masks": "the branch-free twin: the mode as 0/1 masks",
        "is_stochastic": "whether a loop draws random bits",
        "p3109_saturate": "round_pack's overflow step for P3109 formats: which modes "
                          "give the largest finite value under each saturation rule"},
    "softfloat/_kernels/arith.py": {
        "int_magnitude": "passes the mode on, in the policy of the integer pseudo-format"},
    "softfloat/_kernels/arith_fast.py": {
        f: "takes the mode apart once per chunk (round_masks)"
        for f in ("addsub_fast_chunk", "mul_fast_chunk", "div_fast_chunk")},
    "softfloat/_kernels/convert.py": {
        "_fast_chunk": "takes the mode apart once per chunk (round_masks)",
        "_ne_chunk": "takes the mode apart once per chunk (round_masks): a loop of its "
                     "own for nearest-even"},
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
    "softfloat/_kernels/block_fma.py": {
        "block_fma_fast_masks": "the float64 block-FMA model exists for the modes of "
                                "addend_branchfree; takes the mode apart once per call "
                                "(round_masks)"},
    "softfloat/_kernels/mma_round.py": {
        "round_out": "the matrix units' output rounding (MMA-Sim's RNE-/RZ- roundings of an "
                     "exact integer sum S * 2**q, no flags): the same results as round_pack "
                     "(tests/test_mma.py: test_output_rounding_matches_round_pack), measured "
                     "10-24x faster (1.2 against 12-29 ns per rounding, one thread, two "
                     "runs on a loaded 2-core machine; benchmarks/bench_mma_round.py)"},
    "softfloat/_kernels/mma_fast.py": {
        f: "the fast fdpa kernels' output rounding of a block of 64 sums (float64 "
           "scalings, rint or trunc, vectorised; inline in fdpa_fast_chunk's loop): the "
           "same results as round_pack (tests/test_mma.py: "
           "test_output_rounding_matches_round_pack), measured 2.3-9.7x faster than "
           "round_pack element by element (2.7-6 against 10-30 ns per rounding, one "
           "thread, two runs on a loaded 2-core machine; benchmarks/bench_mma_round.py)"
        for f in ("round_block", "fdpa_fast_chunk")},
    "softfloat/demo.py": {"explain": _DISPATCH},
    "softfloat/p3109.py": {"_run": _DISPATCH},
    "softfloat/probe.py": {"_Prober.check_fused.rnd": _ORACLE},
    "softfloat/verification/compare.py": {"keywords": _DISPATCH},
    "nn/fp8.py": {"FP8Recipe.__init__": _DISPATCH},
    "nn/precision.py": {f: _DISPATCH for f in ("Precision.__init__", "Precision._set_policy")},
    "softfloat/mma/fused.py": {"run_fused": "dispatch: the model's output rounding "
                                          "(MatrixUnit.output_mode) handed to the kernels"},
    "softfloat/accumulate/models.py": {"Accumulator.__post_init__": _DISPATCH},
    "softfloat/accumulate/dispatch.py": {
        f: _DISPATCH for f in ("_accumulate", "_blas_check", "_fast_ok", "_values_fast")},
    "softfloat/arith.py": {f: _DISPATCH for f in ("_blocked", "_binary_one", "_eft_ok",
                                                  "_setup")},
    "softfloat/conversions.py": {f: _DISPATCH for f in ("_run_convert", "_hw_kernel",
                                                       "_p3109_via_float32",
                                                       "_quantize_fast_spec")},
    "softfloat/mx.py": {"_prepare": _DISPATCH},
    "softfloat/_kernels/sr_schemes.py": {
        "is_sr_code": "round_pack's helper: which codes round stochastically",
        "scheme_round_up": "round_pack's step 3 for the explicit-bit schemes"},
    "softfloat/stochastic.py": {"_setup": _DISPATCH},
    "softfloat/verification/stochastic.py": {"verify_stochastic": "the scheme a device is checked "
                                                            "against (a name, not a rounding)"},
    "softfloat/fp8_scaling.py": {f: _DISPATCH for f in ("quantize_per_tensor", "_values_fast")},
    "softfloat/rounding.py": {"<module>": "the modes themselves (DETERMINISTIC_MODES)"},
    "softfloat/sweep/engine.py": {f: "which modes a sweep covers"
                                   for f in ("run_shard", "run_sweep")},
    "softfloat/testfloat/options.py": {"Options.__post_init__": "TestFloat's mode options"},
    "softfloat/testfloat/verify.py": {"_classify": "TestFloat's report per mode"},
    "softfloat/verification/engine.py": {"verify": "stochastic rounding: handed to verify/stochastic.py"},
    "softfloat/sweep_oracles/__init__.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/check.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/mpfr.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/nan_rules.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/ro53.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/simd.py": {"*": _ORACLE},
}

#: restated flag bits: only softfloat/flags.py (the owner) states them
FLAG_BITS = {
    "softfloat/flags.py": {"Flags": "the owner: SoftFloat's flag bits"},
    "softfloat/sweep_oracles/_bits.py": {"<module>": _ORACLE},
}

NAN_LITERALS = {
    "softfloat/_kernels/mx_elem.py": {
        "f32_exact": "the quiet bit of a float64 NaN's exact float32 image (a cast of the "
                     "operand's payload, not a NaN the library makes)"},
    "softfloat/p3109.py": {
        f: "a P3109 format has one NaN encoding (its own, `Format.default_nan_bits`): "
           "results are set to it and tested against it"
        for f in ("_ieee_fixup", "_binary", "recip")},
    "softfloat/p3109_compare.py": {
        f: "a P3109 format has one NaN encoding (its own, `Format.default_nan_bits`): "
           "results are set to it and tested against it"
        for f in ("_isnan", "_minmax", "_next", "max_subnormal_of")},
    "softfloat/platforms/presets.py": {
        "<module>": "platform data: a preset states its NaN pattern (torch CUDA's 0x7FFF)"},
    "softfloat/_kernels/eft.py": {
        "_rn": "0x7FFF is the nearest-even addend of 16 dropped bits, no NaN; core's "
               "addend_branchfree (int64 arithmetic) measured up to 25% slower on bf16 "
               "add/mul/div in nearest-even, so the int32-lane copy stays"},
    "softfloat/_kernels/convert.py": {
        "convert_host_branchfree": "the branch-free converter's propagated NaN (sign, exponent "
                                   "all ones, quiet bit, payload), selected per vector lane: "
                                   "make_nan's propagate rule without a call; an edit of the "
                                   "converter kernel, not made with this list"},
    "softfloat/fp8_scaling.py": {
        "quantize_per_tensor": "the scale kernel's NaN, passed in (to go through specialize)"},
    "softfloat/sweep_oracles/check.py": {"*": _ORACLE},
    "softfloat/sweep_oracles/mpfr.py": {"*": _ORACLE},
    "softfloat/_kernels/core.py": {
        "p3109_nan": "round_pack's P3109 overflow step (p3109_saturate) and inf_bits: the "
                     "one NaN of a P3109 format, the pattern make_nan gives those formats"},
    "softfloat/sr_vendor.py": {"_ptx_pair": "PTX's canonical NaN of .f16/.bf16 results: the "
                                            "instruction's own constant (PTX ISA, cvt)"},
}


def _is_code(n) -> bool:
    if isinstance(n, ast.Name):
        return n.id.lstrip("_") in _CODES
    return isinstance(n, ast.Attribute) and (n.attr in _CODES or n.attr in _ENUM)


def _one(n) -> bool:
    """1 as a literal, np.int64(1) / np.int32(1) ..., or a name for it (one, _1, _I1)."""
    if isinstance(n, ast.Constant):
        return n.value == 1 and type(n.value) is int
    if isinstance(n, ast.Call) and len(n.args) == 1 and not n.keywords:
        return _one(n.args[0])
    return isinstance(n, ast.Name) and n.id in ("one", "_1", "_I1", "_ONE")


def _ones(n) -> bool:
    """An all-ones field: (1 << w) - 1 (perhaps wrapped in np.int64(...))."""
    if isinstance(n, ast.Call) and len(n.args) == 1 and not n.keywords:
        return _ones(n.args[0])
    return (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and _one(n.right)
            and isinstance(n.left, ast.BinOp) and isinstance(n.left.op, ast.LShift)
            and _one(n.left.left))


def _name(n) -> str:
    if isinstance(n, ast.Call) and len(n.args) == 1 and not n.keywords:
        return _name(n.args[0])
    if isinstance(n, ast.Name):
        return n.id.lower()
    return n.attr.lower() if isinstance(n, ast.Attribute) else ""


def _exp_field(n) -> bool:
    """An all-ones exponent field in place: ((1 << E) - 1) << M, or a name for one."""
    if isinstance(n, ast.Call) and len(n.args) == 1 and not n.keywords:
        return _exp_field(n.args[0])
    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.LShift) and _ones(n.left):
        return True
    nm = _name(n)
    return "exp" in nm and "mask" in nm


def _quiet_bit(n) -> bool:
    """The quiet bit: 1 << (M - 1), or a name for it."""
    if isinstance(n, ast.Call) and len(n.args) == 1 and not n.keywords:
        return _quiet_bit(n.args[0])
    if (isinstance(n, ast.BinOp) and isinstance(n.op, ast.LShift) and _one(n.left)
            and isinstance(n.right, ast.BinOp) and isinstance(n.right.op, ast.Sub)
            and _one(n.right.right)):
        return True
    return "quiet" in _name(n)


def _all_ones_below_sign(n) -> bool:
    """(1 << (E + M)) - 1: every bit set but the sign, from the field widths."""
    if not _ones(n):
        return False
    inner = n.args[0] if isinstance(n, ast.Call) else n
    sh = inner.left.right
    return isinstance(sh, ast.BinOp) and isinstance(sh.op, ast.Add)


def _or_terms(n) -> list:
    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
        return _or_terms(n.left) + _or_terms(n.right)
    return [n]


def _built_nan(n) -> bool:
    """An OR (the outermost of a chain) of an exponent field and a quiet bit."""
    terms = _or_terms(n)
    return (len(terms) > 1 and any(_exp_field(t) for t in terms)
            and any(_quiet_bit(t) for t in terms))


def _mode_word(n) -> bool:
    """A string constant that names a rounding mode (or a tuple/list/set of them)."""
    if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
        return any(_mode_word(e) for e in n.elts)
    return (isinstance(n, ast.Constant) and isinstance(n.value, str)
            and n.value.strip().lower().replace("-", "_") in
            {w.replace("-", "_") for w in MODE_WORDS})


def _masky(n) -> bool:
    return any(w in _name(n) for w in ("mag", "mask", "abs"))


def _flag_target(t) -> bool:
    names = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(isinstance(x, ast.Name) and any(w in x.id.upper() for w in FLAG_WORDS)
               for x in names)


def _flag_dict(d) -> bool:
    """A dict from flag names to ints ({"invalid": 16, ...})."""
    return (isinstance(d, ast.Dict) and any(
        isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.upper() in FLAG_WORDS
        and _int_value(v) for k, v in zip(d.keys, d.values)))


def _int_value(v) -> bool:
    if isinstance(v, ast.Tuple):
        return any(_int_value(e) for e in v.elts)
    if isinstance(v, ast.Call) and len(v.args) == 1 and not v.keywords:
        return _int_value(v.args[0])
    return isinstance(v, ast.Constant) and type(v.value) is int


def find(source: str):
    """(kind, function, line) of every mode read ("mode"), NaN literal ("nan") and
    restated flag bit ("flag")."""
    out = []

    def walk(node, fn, in_or=False, mask=False):
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
                                for t in terms)) or any(_mode_word(t) for t in terms):
                    out.append(("mode", fn, ch.lineno))
            elif (isinstance(ch, ast.Call) and isinstance(ch.func, ast.Attribute)
                  and ch.func.attr in ("startswith", "endswith")
                  and any(_mode_word(a) for a in ch.args)):
                out.append(("mode", fn, ch.lineno))         # a mode name by its spelling
            elif (isinstance(ch, (ast.If, ast.IfExp, ast.While)) and isinstance(ch.test, ast.Name)
                  and ch.test.id == "rne"):
                out.append(("mode", fn, ch.lineno))         # a rounding of one's own
            elif isinstance(ch, ast.Constant) and type(ch.value) is int \
                    and (ch.value in NAN_PATTERNS
                         or (ch.value in ALL_ONES_NANS and not mask)):
                out.append(("nan", fn, ch.lineno))
            elif (isinstance(ch, (ast.Assign, ast.AnnAssign))
                  and any(_flag_target(t) for t in (ch.targets if isinstance(ch, ast.Assign)
                                                    else [ch.target]))
                  and ch.value is not None and _int_value(ch.value)):
                out.append(("flag", fn, ch.lineno))
            elif _flag_dict(ch):
                out.append(("flag", fn, ch.lineno))
            elif isinstance(ch, ast.Attribute) and ch.attr == "default_nan_bits":
                out.append(("nan", fn, ch.lineno))
            elif (isinstance(ch, ast.BinOp) and isinstance(ch.op, ast.BitOr) and not in_or
                  and _built_nan(ch)):
                out.append(("nan", fn, ch.lineno))
            elif (isinstance(ch, ast.Return) and ch.value is not None and not mask
                  and _all_ones_below_sign(ch.value)
                  and not any(w in fn.lower() for w in ("mag", "mask"))):
                out.append(("nan", fn, ch.lineno))         # the GPUs' NaN from the widths
            m = mask or (isinstance(ch, ast.BinOp) and isinstance(ch.op, ast.BitAnd)) or (
                isinstance(ch, ast.UnaryOp) and isinstance(ch.op, ast.USub)) or (
                isinstance(ch, ast.Assign) and any(_masky(t) for t in ch.targets))
            walk(ch, sub, isinstance(ch, ast.BinOp) and isinstance(ch.op, ast.BitOr), m)

    walk(ast.parse(source), "<module>")
    return out


def _library():
    for top in ("softfloat", "nn"):
        for p in sorted((ROOT / top).rglob("*.py")):
            yield str(p.relative_to(ROOT)), p.read_text()


# the owners of the rules, where anything goes
_OWNERS = {"softfloat/formats.py", "softfloat/specialize.py", "softfloat/_kernels/specialize.py"}


@pytest.mark.parametrize("kind,table", [("mode", MODE_READS), ("nan", NAN_LITERALS),
                                        ("flag", FLAG_BITS)])
def test_every_read_is_on_the_allow_list(kind, table):
    bad = []
    for rel, src in _library():
        if rel in _OWNERS and kind == "nan":
            continue
        allowed = table.get(rel, {})
        for k, fn, line in find(src):
            if k == kind and "*" not in allowed and fn not in allowed:
                bad.append(f"{rel}:{line} in {fn}")
    what = {"mode": "reads of the rounding mode", "nan": "NaN literals",
            "flag": "restated flag bits"}[kind]
    assert not bad, f"new {what} outside the owners (see this file's docstring):\n" + "\n".join(bad)


@pytest.mark.parametrize("kind,table", [("mode", MODE_READS), ("nan", NAN_LITERALS),
                                        ("flag", FLAG_BITS)])
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


def test_the_finder_sees_nans_built_from_field_widths():
    # a NaN from the field widths (exponent all ones, the quiet bit) is found once
    # per expression, however it is spelled; an infinity or a bare mask is not
    nans = ("def g(E, M, sign, one, mask_exp, quiet_bit):\n"
            "    a = (((1 << E) - 1) << M) | (1 << (M - 1))\n"
            "    b = (sign << (E + M)) | (((np.int64(1) << E) - 1) << M) | (one << (M - 1)) | 5\n"
            "    c = mask_exp | quiet_bit\n")
    assert [(k, fn, line) for k, fn, line in find(nans)] == [
        ("nan", "g", 2), ("nan", "g", 3), ("nan", "g", 4)]
    gpu = ("def special_bits(nan, E, M):\n"
           "    if nan:\n"
           "        return (np.int64(1) << (E + M)) - 1\n"
           "def max_mag(E, M):\n"
           "    return (np.int64(1) << (E + M)) - 1\n")
    assert find(gpu) == [("nan", "special_bits", 3)]
    others = ("def h(E, M, sign):\n"
              "    inf = (sign << (E + M)) | (((1 << E) - 1) << M)\n"
              "    mag = (1 << (E + M)) - 1\n"
              "    big = ((E + 127) << 23) | (((1 << M) - 1) << (23 - M))\n")
    assert find(others) == []


def test_the_finder_sees_mode_words_gpu_nans_and_flag_bits():
    # a mode read by its spelling (==, in, startswith; the matrix units' RNE-/RZ-
    # words), a rounding of one's own (if rne:), the GPUs' all-ones NaN used as a
    # value, and a flag bit restated; not: an amax algorithm "max", the all-ones
    # pattern as a magnitude mask or under a minus, a flag read from Flags
    src = ("def f(r, model, u, out, rne):\n"
           "    a = r == 'nearest_even'\n"
           "    b = r in ('rtz', 'stochastic')\n"
           "    c = model.output_rounding.startswith('RNE')\n"
           "    if rne:\n"
           "        pass\n"
           "    out[0] = 0x7FFFFFFF\n"
           "    _F_INVALID = 16\n"
           "    bits = {'invalid': 16, 'inexact': 1}\n")
    assert [(k, line) for k, _, line in find(src)] == [
        ("mode", 2), ("mode", 3), ("mode", 4), ("mode", 5), ("nan", 7), ("flag", 8),
        ("flag", 9)]
    clean = ("def g(algo, u, v):\n"
             "    a = algo == 'max'\n"
             "    m = u & 0x7FFFFFFF\n"
             "    _MAG32 = np.int32(0x7FFFFFFF)\n"
             "    lo = -9223372036854775807 - 1\n"
             "    f = Flags.INVALID\n")
    assert find(clean) == []
