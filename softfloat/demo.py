"""``python -m softfloat demo``: the worked examples of how values round into fp16
and bf16 (from the tutorial the project grew from, corrected where it slipped)."""
from __future__ import annotations

import argparse

import numpy as np

from .conversions import from_bits, to_bits
from .flags import flag_names
from .formats import get_format


def _fields(bits: int, fmt) -> str:
    b = format(bits, f"0{fmt.nbits}b")
    return f"{b[0]} {b[1:1 + fmt.ebits]} {b[1 + fmt.ebits:]}"


def explain(x: float, fmt="fp16", rounding="nearest_even") -> str:
    """One line: x -> value, encoding (hex and fields), flags."""
    f = get_format(fmt)
    bits, flags = to_bits(np.float64(x), f, rounding, return_flags=True)
    v = float(from_bits(bits, f))
    names = ",".join(flag_names(flags)) or "exact"
    return (f"{x!r:>24} -> {f.name:<5} {v!r:<24} {int(bits):#0{2 + (f.nbits + 3) // 4}x}  "
            f"{_fields(int(bits), f)}  [{names}]")


EXAMPLES = [
    (43008.111, "fp16"), (43024.0, "fp16"), (43024.001, "fp16"), (1.111, "fp16"),
    (1.111, "bf16"), (65504.0, "fp16"), (65519.99, "fp16"), (65520.0, "fp16"),
    (65520.0, "bf16"), (2.0 ** -25, "fp16"), (2.0 ** -25 * (1 + 2 ** -40), "fp16"),
    (1 + 2 ** -11 + 2 ** -40, "fp16"), (448.0, "fp8_e4m3"), (470.0, "fp8_e4m3"),
]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m softfloat demo", description=__doc__)
    p.add_argument("values", nargs="*", type=float, help="values to round (default: the worked examples)")
    p.add_argument("--format", default=None, help="target format for the given values (default fp16)")
    p.add_argument("--rounding", default="nearest_even")
    a = p.parse_args(argv)
    cases = [(v, a.format or "fp16") for v in a.values] if a.values else EXAMPLES
    if a.format and not a.values:
        cases = [(v, a.format) for v, _ in EXAMPLES]
    print(f"rounding: {a.rounding}")
    for v, f in cases:
        print(explain(v, f, a.rounding))
    return 0
