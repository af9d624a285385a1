"""``python -m softfloat verify FMT OP (--impl module:function | --impl
exec:COMMAND | --results FILE) [options]``.

Exit statuses: 0 every case matches, 1 mismatches found, 2 could not run (a
bad argument, an unreadable results file, an implementation that failed,
refused the header, timed out or broke the protocol: one line on stderr, no
traceback), 130 interrupted (Ctrl-C or SIGTERM: a running SFV1 program is
killed). With ``--json -`` stdout holds the JSON only (the summary goes to
stderr).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys

from ..context import TININESS
from ..rounding import DETERMINISTIC_MODES, get_rounding
from .impls import DEFAULT_TIMEOUT, ImplError, exec_impl, resolve_impl, results_file

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, f"error: {message}\n")


def _parser():
    p = _Parser(prog="python -m softfloat verify",
                description="Check an implementation of an operation against the library "
                            "(result bits, flags, NaN patterns), classify every mismatch and "
                            "diagnose the setting that explains it. Exit status: 0 no "
                            "mismatch, 1 mismatches, 2 could not run, 130 interrupted.")
    p.add_argument("format", help="operand format (fp16, bf16, fp8_e5m2, fp32, ...; the "
                                  "source format of a conversion)")
    p.add_argument("op", help="operation (add, sub, mul, div, sqrt, fma, fms, fnma, fnms, "
                              "minimum, fmin_riscv, eq, lt_signaling, classify, "
                              "convert:bf16, to_int32, from_uint32, ...)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--impl", help="module:function (a Python callable) or exec:COMMAND "
                                    "(a program speaking SFV1 on stdin/stdout)")
    src.add_argument("--results", metavar="FILE",
                     help="results computed elsewhere: raw binary in case order (optionally "
                          "followed by one flag byte per case), .npy/.npz, or TestFloat lines "
                          "(.txt)")
    p.add_argument("--rounding", default="nearest_even",
                   help="a mode, a comma-separated list, or 'all' (the six deterministic "
                        "modes)")
    p.add_argument("--space", default="exhaustive",
                   help="exhaustive, level1, level2, or a number of random cases")
    for n in "abc":
        p.add_argument(f"--{n}", default=None, metavar="SET",
                       help="operand a only from SET (values and ranges, e.g. "
                            "0x3c00-0x3cff,0x8000); --b, --c likewise" if n == "a"
                       else argparse.SUPPRESS)
    p.add_argument("--c-family", default=None, choices=("cancel", "cancel4"),
                   help="fma: the sweep's cancelling addends for every (a, b)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of a random space and of TestFloat's random cases (default 0)")
    p.add_argument("--random-nbits", type=int, default=None, metavar="N",
                   help="stochastic rounding given the random bits (--rounding stochastic_a, "
                        "_b, _c, stochastic_add or stochastic): the impl takes N-bit random "
                        "integers as its last operand (softfloat.verification.stochastic)")
    for k in ("ftz", "daz"):
        p.add_argument(f"--{k}", action="store_true", help=f"the library's {k}=True")
    p.add_argument("--tininess", choices=TININESS, default=None,
                   help="the library's tininess detection (default: after rounding)")
    p.add_argument("--nan", default=None,
                   help="the library's NaN rule: propagate, propagate_last, canonical or "
                        "a pattern (0x7fff)")
    p.add_argument("--overflow", choices=("ieee", "saturate", "nan"), default=None,
                   help="the library's overflow rule (default: ieee)")
    nanchk = p.add_mutually_exclusive_group()
    nanchk.add_argument("--check-nan", action="store_true",
                        help="count NaN results whose bits differ from the library's NaN as "
                             "mismatches (default: any NaN is accepted for a NaN, as in "
                             "TestFloat; the report names the NaN rule either way)")
    nanchk.add_argument("--any-nan", action="store_true",
                        help="accept any NaN for a NaN (the default)")
    p.add_argument("--no-diagnosis", action="store_true",
                   help="skip the search for the setting that explains the mismatches")
    p.add_argument("--shards", type=int, default=None,
                   help="split the space into this many shards (default: one per 2**24 "
                        "cases; at most one per case)")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker processes running shards (default 1: this process)")
    p.add_argument("--backend", choices=("process", "dask"), default="process",
                   help="where shards run with --jobs: worker processes or Dask")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="dask: the scheduler's address (default: a local cluster)")
    p.add_argument("--out", default=None, help="directory for shard files and reports "
                                               "(with --resume: reuse finished shards)")
    p.add_argument("--resume", action="store_true",
                   help="with --out: reuse the shard files of an earlier run that verify")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"exec: seconds per read (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--batch", type=int, default=1 << 16, help="exec: cases per batch")
    p.add_argument("--json", metavar="OUT", default=None,
                   help="write the report(s) as JSON ('-': stdout)")
    p.add_argument("--examples", type=int, default=20, help="mismatches kept in the report")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    return p


def _space(args):
    sets = {k: getattr(args, k) for k in ("a", "b", "c", "c_family")
            if getattr(args, k) is not None}
    if sets:
        if args.space != "exhaustive":
            raise ValueError("give --space or operand sets (--a/--b/--c/--c-family), not both")
        return sets
    s = args.space
    if s in ("exhaustive", "level1", "level2"):
        return s
    try:
        n = int(s, 0)
    except ValueError:
        raise ValueError(f"--space {s!r}: expected exhaustive, level1, level2 or a number "
                         f"of random cases") from None
    return n


def _nan(v):
    if v is None:
        return None
    try:
        return int(v, 0)
    except ValueError:
        return v


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    from .engine import verify
    if args.random_nbits is not None:
        from .stochastic import cli_main
        return cli_main(args, _space(args))
    old_term = _on_sigterm()
    try:
        if args.rounding.strip() == "all":
            modes = list(DETERMINISTIC_MODES)
        else:
            modes = [get_rounding(m.strip()).label for m in args.rounding.split(",")
                     if m.strip()]
        if not modes:
            raise ValueError(f"--rounding {args.rounding!r} names no mode")
        if args.results:
            impl = results_file(args.results)
            if len(modes) > 1:
                raise ValueError("--results holds the results of one rounding mode")
        elif args.impl.startswith("exec:"):
            impl = exec_impl(args.impl[5:], timeout=args.timeout, batch=args.batch)
        else:
            impl = resolve_impl(args.impl)
        pol = {}
        if args.ftz:
            pol["ftz"] = True
        if args.daz:
            pol["daz"] = True
        for k in ("tininess", "overflow"):
            if getattr(args, k) is not None:
                pol[k] = getattr(args, k)
        if args.nan is not None:
            pol["nan"] = _nan(args.nan)
        space = _space(args)
        reps = []
        worst = 0
        for m in modes:
            rep = verify(impl, args.op, args.format, m, space, seed=args.seed,
                         shards=args.shards, jobs=args.jobs, out=args.out, resume=args.resume,
                         backend=args.backend, scheduler=args.scheduler,
                         check_nan=args.check_nan, diagnose=not args.no_diagnosis,
                         max_examples=args.examples, progress=not args.quiet, **pol)
            reps.append(rep)
            # with --json - stdout holds the JSON only
            print(rep.summary(), file=sys.stderr if args.json == "-" else sys.stdout)
            if not rep.ok:
                worst = 1
        if args.json:
            body = [r.to_dict() for r in reps]
            text = json.dumps(body[0] if len(body) == 1 else body, indent=1)
            if args.json == "-":
                print(text)
            else:
                d = os.path.dirname(args.json)
                if d:
                    os.makedirs(d, exist_ok=True)
                with open(args.json, "w") as fh:
                    fh.write(text + "\n")
        return worst
    except KeyboardInterrupt:
        print("\ninterrupted (with --out, rerun with --resume)", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError, RuntimeError, ImplError, MemoryError) as exc:
        msg = str(exc).strip().splitlines()
        print(f"error: {' '.join(msg) if msg else type(exc).__name__}", file=sys.stderr)
        return 2
    except Exception as exc:        # noqa: BLE001  (one line, never a traceback)
        msg = " ".join(str(exc).strip().splitlines())
        print(f"error: {type(exc).__name__}: {msg}", file=sys.stderr)
        return 2
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


def _on_sigterm():
    """SIGTERM interrupts like Ctrl-C (a running SFV1 program is killed, the
    command exits 130); returns the handler to restore, None when not in the
    main thread."""
    def stop(signum, frame):
        raise KeyboardInterrupt
    try:
        return signal.signal(signal.SIGTERM, stop)
    except ValueError:          # not the main thread
        return None
