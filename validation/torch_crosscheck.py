#!/usr/bin/env python
"""Cross-check softfloat's platform models against torch, bit for bit.

    python validation/torch_crosscheck.py --device {cuda,cpu} [--quick|--tiny] --out DIR

Writes ``DIR/report.json`` (``{"meta": {...}, "checks": [...]}``) and
``DIR/report.md``, and exits 1 when a check that claims bit-exactness finds a
mismatch (2 on a usage error). Every check runs for float16 and bfloat16; each
compares torch's result with `softfloat.platform_op` & co. under the platform
``torch_cuda`` or ``torch_cpu``.

Sizes. ``--device cuda`` (full): conversion from float32 over all 2^32 inputs, and
tensor-tensor add/sub/mul/div over all 2^32 operand pairs, in chunks generated on
the GPU with ``torch.arange``; torch's results come back to the host and our side
is computed by the numba kernels on the host's cores, chunk by chunk. A time budget
(``--budget-s``, default 300 s for the sweeps together) guards the 8-minute limit:
if the chunks done so far project past a sweep's share, the sweep continues on an
evenly strided subset of the chunks and the report says so (``coverage`` < 1). ``--device cpu --quick``:
a large random sample plus every boundary (CI-sized); ``--tiny``: a small sample
for the unit tests.

What the checks claim: ``exact`` checks count every differing bit pattern as a
mismatch, except that two NaNs of different patterns count only where the
platform claims its NaN patterns for that path (``nan_claimed``); both kinds are
reported, classified by cause. Bounded checks (transcendentals, sums of general
data, matmul) report the largest distance in units in the last place and a
histogram.

The parts, in validation/crosscheck/: ``torch_io.py`` (encodings in and out of
torch), ``cases.py`` (the inputs), ``compare.py`` (ulp distances and `Result`,
the classification of mismatches), ``runner.py`` (one run's state), the checks in
``elementwise.py``, ``reductions.py`` and ``training.py``, and ``report.py``
(report.json and report.md). This file is the command line and the list of checks
(`CHECKS`); ``python -m validation.torch_crosscheck`` runs it too.
"""
from __future__ import annotations

import argparse
import os
import platform as _pyplatform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import softfloat as sf  # noqa: E402
from validation.crosscheck import elementwise, reductions, training  # noqa: E402
from validation.crosscheck.cases import DTYPES  # noqa: E402
from validation.crosscheck.report import write_report  # noqa: E402
from validation.crosscheck.runner import Runner  # noqa: E402
from validation.crosscheck.torch_io import torch  # noqa: E402

#: the checks, in the order they run: name (``--only``) -> check(runner, dtype)
CHECKS = {
    "from_float32": elementwise.check_from_float32,
    "from_float64": elementwise.check_from_float64,
    "to_float32": elementwise.check_to_float32,
    "binary": elementwise.check_binary,
    "unary": elementwise.check_unary,
    "scalar": elementwise.check_scalar,
    "fused": elementwise.check_fused,
    "transcendental": elementwise.check_transcendental,
    "reduce": reductions.check_reduce,
    "matmul": reductions.check_matmul,
    "gradscaler_step": training.check_gradscaler_step,
    "torch_models": reductions.check_torch_models,
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=("cuda", "cpu"), required=True)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="sampled sweeps (CI-sized)")
    g.add_argument("--tiny", action="store_true", help="small samples (unit tests)")
    ap.add_argument("--out", required=True, help="directory for report.json and report.md")
    ap.add_argument("--only", nargs="*", choices=list(CHECKS), help="run only these checks")
    ap.add_argument("--dtypes", nargs="*", choices=DTYPES, default=list(DTYPES))
    ap.add_argument("--seed", type=int, default=20260101)
    ap.add_argument("--budget-s", type=float, default=300.0,
                    help="seconds for the 2^32 sweeps together (cuda full run)")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (cpu)")
    ap.add_argument("--luts", action="store_true",
                    help="save DIR/luts.npz (always on for cuda)")
    ap.add_argument("--platform", default=None,
                    help="softfloat platform to check against (default: torch_<device>)")
    ap.add_argument("--sweep", action="store_true",
                    help="run the 2^32 sweep code (default only for a cuda full run)")
    ap.add_argument("--chunk-log2", type=int, default=26, help="sweep chunk size, log2")
    ap.add_argument("--max-chunks", type=int, default=0,
                    help="sweep only this many evenly spaced chunks (0: all; for testing)")
    args = ap.parse_args(argv)
    t = torch()
    if args.device == "cuda" and not t.cuda.is_available():
        print("error: --device cuda but torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    if args.threads:
        t.set_num_threads(args.threads)
    runner = Runner(args)
    checks = args.only or CHECKS
    runner.budget.runs = max(1, len(args.dtypes) * (("from_float32" in checks) +
                                                    4 * ("binary" in checks)))
    t0 = time.perf_counter()
    for name in checks:
        for dtype in args.dtypes:
            runner.run_check(CHECKS[name], dtype)
    res = runner.results
    failed = sum(1 for d in res if not d["passed"])
    meta = {
        "device": args.device, "size": runner.size, "platform": runner.plat.name,
        "torch": t.__version__, "softfloat": sf.__version__, "numpy": np.__version__,
        "python": _pyplatform.python_version(),
        "device_name": (t.cuda.get_device_name(0) if args.device == "cuda"
                        else (_pyplatform.processor() or _pyplatform.machine())),
        "cpu_capability": getattr(t.backends.cpu, "get_cpu_capability", lambda: "")(),
        "threads": t.get_num_threads(), "seed": args.seed, "sweep": runner.sweep,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seconds": time.perf_counter() - t0, "failed": failed,
        "exact_checks": sum(1 for d in res if d["exact"]),
        "bounded_checks": sum(1 for d in res if not d["exact"] and not d.get("skipped")),
    }
    if args.device == "cuda":
        meta["cuda"] = t.version.cuda
        meta["sm"] = ".".join(map(str, t.cuda.get_device_capability(0)))
    write_report(args.out, meta, res)
    if runner.luts and (args.device == "cuda" or args.luts):
        # torch's result for every 16-bit input: a per-device lookup table
        np.savez_compressed(os.path.join(args.out, "luts.npz"), **runner.luts)
    print(f"{failed} failed of {len(res)} checks; report in {args.out} "
          f"({meta['seconds']:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
