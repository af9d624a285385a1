"""``python -m softfloat demo``: the worked examples of how values round into fp16
and bf16 (from the tutorial the project grew from, corrected where it slipped)."""
from __future__ import annotations

import numpy as np

from ._cli import Parser, UsageError, command
from .conversions import from_bits, to_bits
from .flags import flag_names
from .formats import get_format
from .rounding import ROUNDING_MODES, Rounding, get_rounding


def _fields(bits: int, fmt) -> str:
    b = format(bits, f"0{fmt.nbits}b")
    return f"{b[0]} {b[1:1 + fmt.ebits]} {b[1 + fmt.ebits:]}"


def explain(x: float, fmt="fp16", rounding="nearest_even", seed=0) -> str:
    """One line: x -> value, encoding (hex and fields), flags."""
    f = get_format(fmt)
    kw = {"seed": seed} if get_rounding(rounding) == Rounding.STOCHASTIC else {}
    bits, flags = to_bits(np.float64(x), f, rounding, return_flags=True, **kw)
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


@command("python -m softfloat demo")
def main(argv=None) -> int:
    p = Parser(prog="python -m softfloat demo",
               description="The worked examples of how values round into fp16 and bf16 "
                           "(and fp8): each value, the value it rounds to, its encoding in "
                           "hex and as sign, exponent and fraction fields, and the flags.")
    p.add_argument("values", nargs="*", type=float,
                   help="values to round (default: the worked examples)")
    p.add_argument("--format", default=None, metavar="FMT",
                   help="target format, a name such as fp16, bf16, fp8_e4m3 or e6m9 "
                        "(default: fp16 for the given values, each example's own format "
                        "for the worked examples)")
    p.add_argument("--rounding", default="nearest_even", metavar="MODE",
                   help=f"rounding mode, one of {', '.join(ROUNDING_MODES)} or an alias "
                        f"such as rtz (default: nearest_even)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed (>= 0) of the random source of stochastic rounding")
    a = p.parse_args(argv)
    if a.seed < 0:
        raise UsageError(f"--seed must be a non-negative integer, got {a.seed}")
    try:
        fmt = None if a.format is None else get_format(a.format)
        mode = get_rounding(a.rounding)
    except (ValueError, TypeError) as e:
        raise UsageError(str(e).split("\n")[0]) from None
    if fmt is not None and fmt.name == "e8m0":
        raise UsageError("--format: e8m0 is a scale format (no sign, no fraction); "
                         "the demo rounds into element formats")
    cases = [(v, fmt or "fp16") for v in a.values] if a.values else EXAMPLES
    if fmt is not None and not a.values:
        cases = [(v, fmt) for v, _ in EXAMPLES]
    print(f"rounding: {mode.label}")
    for v, f in cases:
        print(explain(v, f, mode.label, seed=a.seed), flush=True)
    return 0
