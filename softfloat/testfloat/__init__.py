"""TestFloat-compatible test vectors: generation (``gen``) and checking (``ver``).

Berkeley TestFloat's workflow, for every format softfloat simulates::

    python -m softfloat testfloat gen f16_add -rminMag > cases.txt     # operands, result, flags
    my_device < cases.txt > results.txt                                # same lines, its results
    python -m softfloat testfloat ver f16_add -rminMag < results.txt   # report every difference

Lines are TestFloat's: the operands, then the result, then the flags, in upper-case
hex separated by single spaces (a 16-bit value as 4 digits, an 8-bit one as 2, a
32-bit integer as 8, a Boolean as ``0``/``1``, the flags as 2 digits with
SoftFloat's bits: inexact 1, underflow 2, overflow 4, infinite 8, invalid 16).

Function names are TestFloat's where it has the function (``f16_add``,
``f16_mulAdd``, ``f16_sqrt``, ``f32_to_f16``, ``f16_to_i32``, ``f16_le``,
``f16_eq_signaling``, ``f16_roundToInt``, ...) and the same scheme for what it
lacks: ``bf16_add``, ``bf16_mulAdd``, ``f8e4m3_mul``, ``f32_to_bf16``,
``bf16_to_f8e5m2``, ``tf32_add``, ``e5m3_add`` (custom format). Type tokens:
f16, bf16, f32, tf32, f8e4m3 (OCP, fn), f8e5m2, f8e4m3fnuz, f8e5m2fnuz, f4e2m1,
f6e2m3, f6e3m2 (OCP MX elements, no NaN), e8m0 (the unsigned MX scale),
``e<E>m<M>[fn|fnuz]``; f64 as a conversion source/target; i32 ui32 i64 ui64.

The package, one job per module:

``names``     function names and type tokens (`parse_function`, `function_names`)
``options``   the environment of expected results (`Options`), TestFloat's -r* options
``cases``     TestFloat's operand patterns and the operand stream (`operands`,
              `minimum_cases`)
``expected``  expected results from softfloat's kernels (`expected`, `generate`)
``lineio``    the line format (`format_lines`, `parse_lines`)
``verify``    comparison and classification of mismatches (`verify`, `Report`)
``streams``   files of lines, chunk by chunk (`write_vectors`, `verify_stream`)
``cli``       ``python -m softfloat testfloat gen|ver|list`` (`main`)

See docs/testfloat.md.
"""
from .cases import minimum_cases, operands
from .cli import main
from .expected import Cases, expected, generate
from .lineio import format_lines, parse_lines
from .names import Function, function_names, parse_function
from .options import Options
from .streams import verify_stream, write_vectors
from .verify import CLASSES, Report, classify_mismatches, flag_letters, verify

__all__ = ["Function", "Options", "Cases", "Report", "CLASSES", "parse_function",
           "function_names", "minimum_cases", "operands", "expected", "generate",
           "format_lines", "parse_lines", "verify", "verify_stream", "write_vectors",
           "flag_letters", "main", "classify_mismatches"]
