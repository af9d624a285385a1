"""The command line ``python -m softfloat sweep``: one op on one format in one
or several rounding modes (``FORMAT OP``), the whole results table (``table``)
and a directory's ``RESULTS.md`` (``--summarize DIR``). Every argument is
checked before the output directory is made; exit statuses: 0 no mismatch,
1 mismatches found, 2 could not run (one line on stderr, no traceback), 130
after Ctrl-C (the finished shards stay in ``--out`` for ``--resume``).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from .._cli import HelpFormatter
from ..rounding import DETERMINISTIC_MODES, get_rounding
from .engine import run_sweep
from .files import check_writable
from .spaces import FAMILIES, Space, _default_shards, _space_kw, check_sizes, require, total_cases
from .table import _line, run_table, table_runs, write_results


def _positive(name):
    def conv(s):
        try:
            v = int(s, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {s!r}")
        if v < 1:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {s!r}")
        return v
    return conv


class _Parser(argparse.ArgumentParser):
    def error(self, message):            # one line, status 2
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _positive_float(name):
    def conv(s):
        try:
            v = float(s)
        except ValueError:
            v = float("nan")
        if not 0 < v < float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be a positive number, got {s!r}")
        return v
    return conv


def _nonneg(name):
    def conv(s):
        try:
            v = int(s, 0)
        except ValueError:
            v = -1
        if v < 0:
            raise argparse.ArgumentTypeError(f"{name} must be a non-negative integer, "
                                             f"got {s!r}")
        return v
    return conv


def default_out(fmt, op) -> str:
    """The directory a command-line sweep writes to when no --out is given: a new
    one in the current directory named by the run (never the committed sweeps/)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = f"sweep-{fmt}-{str(op).replace(':', '-')}-{stamp}"
    d, i = base, 1
    while os.path.exists(d):
        i += 1
        d = f"{base}-{i}"
    return d


_OUT_HELP = ("directory for shard files and reports (default: a new directory "
             "./sweep-<format>-<op>-<UTC time>; '' keeps nothing on disk). Reports in "
             "the committed sweeps/ are written only when asked: --out sweeps")


def _parser():
    p = _Parser(
        prog="python -m softfloat sweep",
        formatter_class=HelpFormatter,
        description="Check an operation over every operand pattern (or a sub-space, or a "
                    "random sharded subset) against an independent oracle: bits, flags and "
                    "NaN patterns. 'python -m softfloat sweep table --out DIR' runs the whole "
                    "results table. Exit status: 0 no mismatch, 1 mismatches, 2 could not run.")
    p.add_argument("format", nargs="?", help="operand format (fp16, bf16, fp8_e4m3, ...); "
                   "the target format for from_float32")
    p.add_argument("op", nargs="?",
                   help="add, sub, mul, div, fma, sqrt, convert:<dst>, from_float32")
    p.add_argument("--rounding", default="nearest_even",
                   help="a mode, a comma-separated list, or 'all' (the six deterministic modes)")
    p.add_argument("--shards", type=_positive("--shards"), default=None,
                   help="number of shards, at most the cases (or sampled cases) they "
                        "divide (default: about 2**24 cases each, or 2**24 sampled "
                        "cases)")
    p.add_argument("--shard-ids", default=None, help="run only these shards (e.g. 0,5,7 or 0-15)")
    p.add_argument("--jobs", type=_positive("--jobs"), default=1,
                   help="worker processes (default 1: this process, on threads)")
    p.add_argument("--out", default=None, help=_OUT_HELP)
    p.add_argument("--resume", action="store_true",
                   help="reuse the shard files in --out that verify; recompute the others "
                        "(needs --out)")
    p.add_argument("--sample", type=_positive("--sample"), default=None,
                   help="check K random cases instead of all (at most the space's size)")
    p.add_argument("--seed", type=_nonneg("--seed"), default=0,
                   help="seed of the sample and of the MPFR cases")
    p.add_argument("--mpfr", type=_nonneg("--mpfr"), default=0, metavar="K",
                   help="also check K cases per shard against MPFR (needs gmpy2: "
                        "softfloat-lab[test])")
    p.add_argument("--oracle", default="auto", choices=("auto", "host", "ro53"),
                   help="auto: host for nearest_even where it applies, else ro53")
    p.add_argument("--any-nan", action="store_true",
                   help="accept any NaN for a NaN (default: the NaN bit pattern the NaN "
                        "policy promises)")
    p.add_argument("--check-nan", action="store_true", help=argparse.SUPPRESS)
    for n in "abc":
        p.add_argument(f"--{n}", default=None, metavar="SET",
                       help=f"operand {n} only from SET: values and ranges, e.g. "
                            f"0x3c00-0x3cff,0x8000 (default: every encoding)")
    p.add_argument("--c-family", default=None, choices=tuple(FAMILIES),
                   help="fma: for every (a, b), addends where the sum cancels: 'cancel' "
                        "16 (-RN(a*b) +- 5 ulps, RN(a*b), +-0, +-max), 'cancel4' 4 "
                        "(-RN(a*b) +- 1 ulp and one of +-0, +-max by (a^b)&3); bf16 needs "
                        "ml_dtypes (softfloat-lab[test])")
    p.add_argument("--backend", default="process", choices=("process", "dask"),
                   help="where shards run: local processes, or a Dask cluster (needs "
                        "softfloat-lab[dask])")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="with --backend dask: an existing scheduler, tcp://HOST:PORT "
                        "(default: a local cluster of --jobs workers)")
    p.add_argument("--timeout", type=_positive_float("--timeout"), default=30.0,
                   metavar="SECONDS",
                   help="with --backend dask: seconds to wait for the scheduler's answer "
                        "and a first worker")
    p.add_argument("--examples", type=_nonneg("--examples"), default=20,
                   help="mismatches kept in the report")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--summarize", metavar="DIR", default=None,
                   help="write DIR/RESULTS.md from the reports in DIR and exit")
    return p


def _table_parser():
    p = _Parser(prog="python -m softfloat sweep table",
                formatter_class=HelpFormatter,
                description="Run the whole results table (see softfloat.sweep.table_runs) "
                            "into --out and write --out/RESULTS.md.")
    p.add_argument("--out", default=None,
                   help="directory for the reports and RESULTS.md (default: a new "
                        "directory ./sweep-table-<UTC time>; the committed table is "
                        "rewritten only when asked: --out sweeps)")
    p.add_argument("--sample", type=_positive("--sample"), default=None,
                   help="a random sample of K cases per run instead of every case")
    p.add_argument("--jobs", type=_positive("--jobs"), default=1, help="worker processes")
    p.add_argument("--resume", action="store_true",
                   help="keep the finished runs' shard files in --out (needs --out)")
    p.add_argument("--only", default=None, help="only runs whose 'op format mode' contains this")
    p.add_argument("--fma", action="store_true", help="add fp8 fma (every triple)")
    p.add_argument("--max-cases", type=_positive("--max-cases"), default=None,
                   help="skip runs whose space has more cases (e.g. 16777216: every run "
                        "but the 2^32 ones); RESULTS.md still lists the earlier reports")
    p.add_argument("--mpfr", type=_nonneg("--mpfr"), default=0, metavar="K",
                   help="also check K cases per shard against MPFR (needs gmpy2)")
    p.add_argument("--list", action="store_true", help="list the runs and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _parse_ids(s):
    if s is None:
        return None
    ids = []
    try:
        for part in s.split(","):
            if "-" in part:
                a, b = part.split("-")
                ids.extend(range(int(a), int(b) + 1))
            elif part.strip():
                ids.append(int(part))
    except ValueError:
        raise ValueError(f"bad --shard-ids {s!r}: expected e.g. 0,5,7 or 0-15") from None
    if not ids:
        raise ValueError(f"--shard-ids {s!r} names no shard")
    return ids


def _say(text):
    """Print to stdout; a closed pipe (``| head``) ends the output quietly."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "table":
            return _main_table(argv[1:])
        return _main(argv)
    except KeyboardInterrupt:
        print("\ninterrupted: finished shards are in --out (rerun with --resume)",
              file=sys.stderr)
        return 130
    except SystemExit as exc:            # argparse: 0 for --help, 2 for usage errors
        return exc.code if isinstance(exc.code, int) else 2
    except BrokenPipeError:
        try:
            _say("")
        except OSError:
            pass
        return 0


def _main_table(argv):
    args = _table_parser().parse_args(argv)
    if args.list:
        for r in table_runs(args.fma):
            if (args.only is None or args.only in " ".join(r)) and (
                    args.max_cases is None or total_cases(r[0], r[1]) <= args.max_cases):
                _say(" ".join(r) + " " + str(total_cases(r[0], r[1])))
        return 0
    if args.resume and args.out is None:
        print("error: --resume needs --out (the directory of the earlier run)",
              file=sys.stderr)
        return 2
    out = args.out if args.out is not None else default_out("table", "all").replace(
        "sweep-table-all-", "sweep-table-")
    try:
        if args.mpfr:
            require("gmpy2", "test", "--mpfr (the MPFR witness)")
        bad = run_table(out, sample=args.sample, jobs=args.jobs, resume=args.resume,
                        only=args.only, fma=args.fma, mpfr=args.mpfr,
                        max_cases=args.max_cases, progress=not args.quiet, log=_say)
    except (ValueError, TypeError, OSError, RuntimeError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _say(f"wrote {os.path.join(out, 'RESULTS.md')}; runs with mismatches: {bad}")
    return 1 if bad else 0


def _main(argv):
    args = _parser().parse_args(argv)
    if args.summarize:
        try:
            table = write_results(args.summarize)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        _say(table.rstrip("\n"))
        return 0
    if not args.format or not args.op:
        print("python -m softfloat sweep: error: give a format and an op (or --summarize "
              "DIR, or 'table') (see --help)", file=sys.stderr)
        return 2
    if args.resume and args.out is None:
        print("error: --resume needs --out (the directory of the earlier run)",
              file=sys.stderr)
        return 2
    try:
        if args.rounding.strip() == "all":
            modes = list(DETERMINISTIC_MODES)
        else:
            modes = [m.strip() for m in args.rounding.split(",") if m.strip()]
        if not modes:
            raise ValueError(f"--rounding {args.rounding!r} names no rounding mode")
        modes = [get_rounding(m) for m in modes]
        ids = _parse_ids(args.shard_ids)
        # everything that can be checked is checked before the output directory is made
        sp = Space(args.op, args.format, **_space_kw(dict(a=args.a, b=args.b, c=args.c,
                                                          c_family=args.c_family)))
        if args.mpfr:
            require("gmpy2", "test", "--mpfr (the MPFR witness)")
        if sp.c_family and sp.f.name == "bf16":
            require("ml_dtypes", "test", "the bf16 cancel families")
        if args.backend == "dask":
            require("distributed", "dask", "--backend dask")
        shards = args.shards if args.shards is not None else _default_shards(sp.total,
                                                                              args.sample)
        check_sizes(sp.total, shards, args.sample, f"{args.op} on {sp.f.name}")
        out = args.out if args.out is not None else default_out(sp.f.name, args.op)
        if out:
            check_writable(out)
            if args.out is None:
                print(f"writing to {out}/", file=sys.stderr)
        worst = 0
        for mode in modes:
            rep = run_sweep(args.op, args.format, mode, shards=args.shards, jobs=args.jobs,
                            out=out, resume=args.resume, sample=args.sample,
                            seed=args.seed, oracle=args.oracle, check_nan=not args.any_nan,
                            mpfr=args.mpfr, max_examples=args.examples,
                            progress=not args.quiet, shard_ids=ids, a=args.a, b=args.b,
                            c=args.c, c_family=args.c_family, backend=args.backend,
                            scheduler=args.scheduler, timeout=args.timeout)
            _say(_line(rep))
            for e in rep["first_mismatches"][:5]:
                _say(f"  {e}")
            if rep["mismatches"] or rep.get("mpfr", {}).get("mismatches"):
                worst = 1
        return worst
    except (ValueError, TypeError, OSError, RuntimeError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
