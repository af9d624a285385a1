"""Check torch CPU's float16 and bfloat16 add and mul with TestFloat vectors.

The device under test here is torch on the CPU; the same loop drives any
simulator or accelerator that can take arrays of encodings. torch reports no
IEEE flags, so only results are compared (``flags=None``); NaN results match
any NaN (TestFloat's default; pass ``check_nans=True`` to compare patterns).

    python examples/testfloat_torch_cpu.py [--level 2] [--rounding nearest_even]
"""
import argparse

import numpy as np
import torch

from softfloat import testfloat as tf

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}
OPS = {"add": torch.add, "mul": torch.mul}


def device(fn_name: str, *operands: np.ndarray) -> np.ndarray:
    """Run one function on torch CPU; encodings in, encodings out."""
    tok, op = fn_name.split("_")
    dt = DTYPES[tok]
    a, b = (torch.from_numpy(x.view(np.int16).copy()).view(dt) for x in operands)
    z = OPS[op](a, b)
    return z.view(torch.int16).numpy().view(np.uint16)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--level", type=int, default=1, choices=(1, 2))
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    failed = 0
    for tok in DTYPES:
        for op in OPS:
            name = f"{tok}_{op}"
            total = None
            for cases in tf.generate(name, level=args.level, seed=args.seed):
                got = device(name, *cases.operands)
                rep = tf.verify(name, *cases.operands, result=got, flags=None,
                                start=cases.start)
                total = rep if total is None else total.merge(rep)
            print(total.format_text(), end="")
            failed += not total.ok
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
