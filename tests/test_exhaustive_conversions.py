"""Exhaustive: every one of the 2^32 float32 bit patterns -> fp16 and -> bf16
(nearest_even) equals numpy's astype(float16) and ml_dtypes' astype(bfloat16)
bit for bit (NaN <-> NaN), in chunks of 2^24. Also the inexact and overflow
flags against what the reference result implies.

Slow (minutes): run with ``python -m pytest tests/test_exhaustive_conversions.py -m slow -s``.
"""
import time

import ml_dtypes
import numpy as np
import pytest

from softfloat import to_bits

CHUNK = 1 << 24

REFS = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16}


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_all_float32_to(fmt):
    host = REFS[fmt]
    t0 = time.perf_counter()
    counts = dict(inputs=0, nan_inputs=0, bit_mismatches=0, nan_mismatches=0,
                  flag_mismatches=0)
    first_bad = []
    for start in range(0, 1 << 32, CHUNK):
        x = np.arange(start, start + CHUNK, dtype=np.uint64).astype(np.uint32).view(np.float32)
        got, flags = to_bits(x, fmt, "nearest_even", return_flags=True)
        with np.errstate(over="ignore", invalid="ignore"):   # inf/NaN casts are expected
            ref = x.astype(host)
        refb = ref.view(np.uint16)
        nan = np.isnan(x)
        ok = nan | (got == refb)
        # NaN inputs give NaN: exponent all ones and a nonzero fraction
        gexp = (got & 0x7FFF) > (0x7C00 if fmt == "fp16" else 0x7F80)
        bad_nan = nan & ~gexp
        # flags: inexact iff the result differs from x; overflow iff finite -> inf
        back = ref.astype(np.float32)
        want_inexact = ~nan & (back != x)
        want_ovf = ~nan & np.isinf(back) & np.isfinite(x)
        bad_flags = ~nan & ((((flags & 1) != 0) != want_inexact)
                            | (((flags & 4) != 0) != want_ovf))
        counts["inputs"] += x.size
        counts["nan_inputs"] += int(nan.sum())
        counts["bit_mismatches"] += int((~ok).sum())
        counts["nan_mismatches"] += int(bad_nan.sum())
        counts["flag_mismatches"] += int(bad_flags.sum())
        if len(first_bad) < 5:
            for i in np.flatnonzero(~ok | bad_nan | bad_flags)[:5]:
                first_bad.append((hex(int(x.view(np.uint32)[i])), hex(int(got[i])),
                                  hex(int(refb[i])), int(flags[i])))
    wall = time.perf_counter() - t0
    print(f"\nexhaustive float32 -> {fmt}: {counts} in {wall:.1f} s")
    assert counts["inputs"] == 1 << 32
    assert counts["bit_mismatches"] == 0 and counts["nan_mismatches"] == 0, first_bad
    assert counts["flag_mismatches"] == 0, first_bad
