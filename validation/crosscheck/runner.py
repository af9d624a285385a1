"""One run of the cross-check: `Runner` holds the options, the platform checked,
the sample size (``full``, ``quick``, ``tiny``), the random stream, the shared
time budget of the 2^32 sweeps and the results, and runs each check (a generator
of result records, called as ``check(runner, dtype)``), recording a crash as a
failed check and `Skip` as a skipped one."""
from __future__ import annotations

import time
import traceback

import numpy as np

import softfloat as sf
from softfloat.budget import Budget


class Skip(Exception):
    """Raised by a check that does not apply to this run (with the reason)."""


class Runner:
    """The state of one run: its options, platform, sample size, random stream,
    time budget and results; runs each check function on it."""

    def __init__(self, args):
        self.args = args
        self.device = args.device
        self.plat = sf.get_platform(args.platform or
                                    ("torch_cuda" if args.device == "cuda" else "torch_cpu"))
        self.size = "full" if (args.device == "cuda" and not args.quick and not args.tiny) else \
            ("tiny" if args.tiny else "quick")
        self.rng = np.random.default_rng(args.seed)
        self.results = []
        self.t_start = time.perf_counter()
        self.budget = Budget(args.budget_s)
        # the 2^32 sweeps: on by default for cuda full runs; --sweep forces them (with
        # --chunk-log2/--max-chunks, so that the sweep code runs on the CPU in tests)
        self.sweep = self.size == "full" or args.sweep
        self.chunk = 1 << args.chunk_log2
        self.max_chunks = args.max_chunks
        self._tiles = {}
        self.luts = {}
        # input gain of the GradScaler check: bf16 needs large activations to overflow
        self.nn_gain = {"float16": 1.0, "bfloat16": 16.0}

    # sample sizes --------------------------------------------------------
    def n(self, quick, tiny, full=None):
        return {"quick": quick, "tiny": tiny, "full": full if full is not None else quick}[self.size]

    def claims_nan(self, what):
        return self.plat.claims_nan(what)

    def record(self, d):
        self.results.append(d)
        st = "ok " if d["passed"] else "FAIL"
        extra = f" max_ulp={d['max_ulp']}" if "max_ulp" in d else ""
        print(f"[{st}] {d['name']:<28} {d['dtype']:<9} cases={d['cases']:<11} "
              f"mismatches={d['mismatches']:<7} nan_pattern={d['nan_pattern_mismatches']:<6}"
              f"{extra} ({d['seconds']:.1f}s)", flush=True)

    def run_check(self, fn, dtype):
        name = fn.__name__[len("check_"):]
        try:
            for d in fn(self, dtype):
                self.record(d)
        except Skip as s:
            d = {"name": name, "dtype": dtype, "exact": False, "skipped": str(s), "cases": 0,
                 "mismatches": 0, "nan_pattern_mismatches": 0, "passed": True, "seconds": 0.0,
                 "causes": {}, "examples": []}
            print(f"[skip] {name:<28} {dtype:<9} {s}", flush=True)
            self.results.append(d)
        except Exception as ex:  # a crashing check is a failed check, not a crashed run
            d = {"name": name, "dtype": dtype, "exact": True, "error": repr(ex),
                 "traceback": traceback.format_exc(), "cases": 0, "mismatches": 0,
                 "nan_pattern_mismatches": 0, "passed": False, "seconds": 0.0,
                 "causes": {}, "examples": []}
            print(f"[ERR ] {name:<28} {dtype:<9} {ex!r}", flush=True)
            self.results.append(d)

    def run_sweep(self, r, starts, do_chunk, chunk):
        """Run ``do_chunk`` over the chunk ``starts`` within this sweep's share of
        the time budget (`softfloat.budget.Budget`). Returns the coverage."""
        cov, note = self.budget.run(starts, do_chunk, self.max_chunks)
        if note:
            r.d["note"] = note
        return cov
