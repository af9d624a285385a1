"""The command line: ``python -m softfloat testfloat gen|ver|list ...``.

Exit status: 0 all cases agree (or the command ran), 1 mismatches found, 2 the
command could not run (usage, unreadable, malformed or empty input)."""
from __future__ import annotations

import json
import os
import sys

from ..context import get_tininess
from ..formats import FP64
from .cases import stream
from .names import Function, function_names, parse_function, type_of
from ..rounding import testfloat_rounding
from .options import Options
from .streams import verify_stream, write_vectors

__all__ = ["main"]

_USAGE = """\
usage: python -m softfloat testfloat gen [<option>...] <function> | <type> [<num>]
       python -m softfloat testfloat ver [<option>...] <function>   < results
       python -m softfloat testfloat list [<type>...]

gen writes TestFloat lines (operands, expected result, flags; hex) to stdout;
ver reads lines (operands, the device's result and flags) from stdin (or -input
FILE), recomputes and reports each mismatch, with a summary by class.
Exit status: 0 all cases agree, 1 mismatches found, 2 usage or input error
(empty input included: nothing verified is not a pass).

options (TestFloat's spelling; * = default):
  -help                 this message
  -seed <num>           random seed (* 1)                              [gen]
  -level <1|2>          testing level (* 1); -level1, -level2          [gen]
  -n <num>              number of cases (at least the level's minimum)  [gen]
  -forever              cases indefinitely (level 2)                   [gen]
  -prefix <text>        write <text> as the first line                 [gen]
  -rnear_even*  -rnear_maxMag  -rminMag  -rmin  -rmax  -rodd
  -tininessafter*  -tininessbefore
  -notexact*  -exact    inexact flag when rounding to an integer
  -errors <num>         report at most <num> mismatches (* 20; 0 = all) [ver]
  -checkNaNs            NaN results must match bit for bit             [ver]
  -checkInvInts         invalid integer results must match exactly    [ver]
ours:
  -exhaustive           every operand combination (spaces of <= 2^32)  [gen]
  -offset <num>         start at case <num> (shards of a stream)       [gen]
  -nan <propagate|canonical|0xHEX>   NaN result policy (* propagate: 8086-SSE)
  -platform <name>      NaN rules of a softfloat platform (x86_sse, riscv, ...)
  -ftz / -daz           flush subnormal results / read subnormal inputs as zero
  -overflow <ieee|saturate|nan>      overflow policy (* format default)
  -chunk <num>          cases per chunk (* 1048576)
  -json <file>          write a JSON report                            [ver]
  -input <file>         read results from <file> instead of stdin      [ver]
  -quiet                summary only                                   [ver]

functions: <float>_{add,sub,mul,div,mulAdd,sqrt,roundToInt,eq,le,lt,
           eq_signaling,le_quiet,lt_quiet}, <float>_to_<float>, <float>_to_<int>,
           <int>_to_<float>
<float>: f16 bf16 f32 tf32 f8e4m3 f8e5m2 f8e4m3fnuz f8e5m2fnuz e<E>m<M>[fn|fnuz]
         (f64 as a conversion source/target)
<int>:   i32 ui32 i64 ui64
"""


class _UsageError(Exception):
    pass


def _parse_argv(argv):
    a = dict(level=1, n=None, seed=1, forever=False, prefix=None, rounding="nearest_even",
             tininess="after", exact=False, errors=20, check_nans=False, check_inv_ints=False,
             exhaustive=False, offset=0, nan="propagate", ftz=False, daz=False, overflow=None,
             platform=None,
             chunk=1 << 20, json=None, input=None, quiet=False, args=[])
    it = iter(argv)

    def value(opt):
        try:
            return next(it)
        except StopIteration:
            raise _UsageError(f"option -{opt} needs a value") from None

    def integer(opt, lo=0):
        v = value(opt)
        try:
            x = int(v, 0)
        except ValueError:
            raise _UsageError(f"-{opt} expects an integer, got {v!r}") from None
        if x < lo:
            raise _UsageError(f"-{opt} expects an integer >= {lo}, got {x}")
        return x

    for arg in it:
        if not arg.startswith("-") or arg == "-":
            a["args"].append(arg)
            continue
        opt = arg.lstrip("-")
        if opt in ("help", "h"):
            a["help"] = True
        elif opt == "seed":
            a["seed"] = integer(opt)
        elif opt == "level":
            a["level"] = integer(opt, 1)
            if a["level"] not in (1, 2):
                raise _UsageError(f"-level expects 1 or 2, got {a['level']}")
        elif opt in ("level1", "level2"):
            a["level"] = int(opt[-1])
        elif opt == "n":
            a["n"] = integer(opt, 1)
        elif opt == "forever":
            a["forever"], a["level"] = True, 2
        elif opt == "prefix":
            a["prefix"] = value(opt)
        elif testfloat_rounding(opt) is not None:
            a["rounding"] = testfloat_rounding(opt).label
        elif opt in ("tininessbefore", "tininessafter"):
            a["tininess"] = get_tininess(opt)
        elif opt in ("exact", "notexact"):
            a["exact"] = opt == "exact"
        elif opt == "errors":
            a["errors"] = integer(opt)
        elif opt == "checkNaNs":
            a["check_nans"] = True
        elif opt == "checkInvInts":
            a["check_inv_ints"] = True
        elif opt == "exhaustive":
            a["exhaustive"] = True
        elif opt == "offset":
            a["offset"] = integer(opt)
        elif opt == "nan":
            v = value(opt)
            if v in ("propagate", "canonical"):
                a["nan"] = v
            else:
                try:
                    a["nan"] = int(v, 16)
                except ValueError:
                    raise _UsageError(f"-nan expects propagate, canonical or a hex NaN "
                                      f"encoding, got {v!r}") from None
        elif opt == "platform":
            a["platform"] = value(opt)
        elif opt in ("ftz", "daz"):
            a[opt] = True
        elif opt == "overflow":
            v = value(opt)
            if v not in ("ieee", "saturate", "nan"):
                raise _UsageError(f"-overflow expects ieee, saturate or nan, got {v!r}")
            a["overflow"] = v
        elif opt == "chunk":
            a["chunk"] = integer(opt, 1)
        elif opt == "json":
            a["json"] = value(opt)
        elif opt == "input":
            a["input"] = value(opt)
        elif opt == "quiet":
            a["quiet"] = True
        elif opt in ("precision32", "precision64", "precision80"):
            pass                                  # extF80 only: ignored, as TestFloat does
        else:
            raise _UsageError(f"unknown option {arg!r} (see -help)")
    return a


def _opts(a) -> Options:
    return Options(rounding=a["rounding"], tininess=a["tininess"], exact=a["exact"],
                   nan=a["nan"], ftz=a["ftz"], daz=a["daz"], overflow=a["overflow"],
                   platform=a["platform"])


def _gen(a, out) -> int:
    args = a["args"]
    if not args:
        raise _UsageError("gen needs a <function> or a <type> [<num>]")
    name = args[0]
    num = None
    if len(args) == 2 and args[1] in ("1", "2", "3"):
        num = int(args[1])
    elif len(args) > 1:
        raise _UsageError(f"unexpected arguments {args[1:]}")
    is_type = "_" not in name
    if is_type:
        t = type_of(name)
        if t == FP64 and num is None:
            num = 1
        fn = Function(f"{name} {num or 1}", "type", (t,) * (num or 1), t)
        if isinstance(t, str) and (num or 1) != 1:
            raise _UsageError("integer types take one operand per line")
    else:
        fn = parse_function(name)
    n = a["n"]
    if a["forever"] and n is None:
        n = 1 << 62
    o = _opts(a)
    kw = dict(level=a["level"], n=n, seed=a["seed"], exhaustive=a["exhaustive"],
              offset=a["offset"], chunk=a["chunk"])
    if not a["exhaustive"] and n is not None:
        total = stream(fn, a["level"], a["seed"], False).total
        if n < total:
            raise _UsageError(f"too few cases; the minimum for {name} at level "
                              f"{a['level']} is {total}")
    if is_type:
        return write_vectors(fn, out, operands_only=True, prefix=a["prefix"], **kw)
    return write_vectors(fn, out, prefix=a["prefix"], options=o, **kw)


def _check_output(path) -> None:
    """Raise OSError naming ``path`` unless a file can be written there (an
    existing file is left as it is; a new one is not left behind)."""
    if os.path.isdir(path):
        raise OSError(f"-json {path!r} is a directory")
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        raise OSError(f"-json {path!r}: cannot write ({exc.strerror or exc})") from None
    if not existed:
        os.remove(path)


def _ver(a) -> int:
    args = a["args"]
    if len(args) != 1:
        raise _UsageError("ver needs exactly one <function>")
    fn = parse_function(args[0])
    if a["json"]:
        _check_output(a["json"])              # before the work, not after it
    src = open(a["input"], "rb") if a["input"] else sys.stdin.buffer
    try:
        rep = verify_stream(fn, src, errors=a["errors"], check_nans=a["check_nans"],
                            check_inv_ints=a["check_inv_ints"], options=_opts(a))
    finally:
        if a["input"]:
            src.close()
    if rep.cases == 0:
        # nothing verified (a testbench that wrote nothing): not a pass
        if a["json"]:
            with open(a["json"], "w") as f:
                f.write(json.dumps(dict(rep.to_dict(), ok=False, empty=True), indent=1))
        where = repr(a["input"]) if a["input"] else "stdin"
        raise _UsageError(f"{fn.name}: empty input: no TestFloat lines on {where}; "
                          f"nothing verified")
    text = rep.format_text()
    if a["quiet"]:
        text = "".join(ln + "\n" for ln in text.splitlines()
                       if not ln.startswith("\t") and "=>" not in ln)
    sys.stdout.write(text)
    if a["json"]:
        with open(a["json"], "w") as f:
            f.write(rep.to_json(indent=1))
    return 0 if rep.ok else 1


def main(argv=None) -> int:
    """``python -m softfloat testfloat gen|ver|list ...`` (see `_USAGE`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-help", "--help", "-h", "help"):
        sys.stdout.write(_USAGE)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    try:
        a = _parse_argv(rest)
        if a.get("help"):
            sys.stdout.write(_USAGE)
            return 0
        if cmd == "gen":
            out = sys.stdout.buffer
            try:
                _gen(a, out)
                out.flush()
            except BrokenPipeError:                  # e.g. `... | head`
                try:
                    sys.stdout = None
                except Exception:
                    pass
            return 0
        if cmd == "ver":
            return _ver(a)
        if cmd == "list":
            toks = tuple(a["args"]) or ("f16", "bf16", "f8e4m3", "f8e5m2", "f32", "tf32")
            sys.stdout.write("\n".join(function_names(toks)) + "\n")
            return 0
        raise _UsageError(f"unknown subcommand {cmd!r}; expected gen, ver or list")
    except (_UsageError, ValueError, TypeError, NotImplementedError, OverflowError,
            OSError) as e:
        sys.stderr.write(f"testfloat: {e}\n")
        return 2
