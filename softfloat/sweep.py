"""The sweep engine: check an operation over every operand pattern (or a seeded
random subset) against an oracle computed another way, comparing result bits and
flags.

The operand space of one sweep is a range of case indices, ``0 .. total-1``:

* binary ops (``add``, ``sub``, ``mul``, ``div``) of an n-bit format: case
  ``i`` is the pair ``a = i >> n``, ``b = i & (2**n - 1)`` (2**32 pairs for
  fp16 and bf16);
* unary ops (``sqrt``) and conversions (``convert:<dst>``): case ``i`` is the
  encoding ``i`` of the format;
* ``from_float32`` into a format: case ``i`` is the float32 with bit pattern
  ``i`` (2**32 inputs), rounded by `softfloat.to_bits`.

Shard ``k`` of ``S`` is the index range ``[total*k//S, total*(k+1)//S)``: a pure
function of (k, S), so shards can run anywhere, in any order, and merge. With
``sample=K`` each shard checks ``ceil(K/S)`` indices drawn from its range by a
generator seeded with ``(seed, k)``.

Python::

    from softfloat.sweep import run_sweep
    report = run_sweep("add", "fp16", "nearest_even", out="sweeps", jobs=2)

Command line::

    python -m softfloat sweep fp16 add --rounding all --jobs 2 --out sweeps --resume
    python -m softfloat sweep bf16 convert:fp8_e4m3 --rounding nearest_even,toward_zero
    python -m softfloat sweep fp16 mul --sample 1000000 --mpfr 2000
    python -m softfloat sweep --summarize sweeps       # writes sweeps/RESULTS.md

Results: one JSON file per shard under ``OUT/<name>.shards/`` (``--resume``
skips shards whose file exists with the same settings) and the merged report
``OUT/<name>.json``: op, format, mode, oracle, cases checked, mismatches (split
into result-bits mismatches and flag-only mismatches), the first mismatches
(operands, expected, got, flags) and seconds. The oracles are in
`softfloat.oracles`.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np
from numba import njit, prange

from . import oracles as O
from ._kernels.specialize import is_nan_bits
from .formats import FP32, Format, get_format
from .rounding import DETERMINISTIC_MODES, Rounding, get_rounding

__all__ = ["run_sweep", "run_shard", "shard_cases", "shard_range", "total_cases",
           "merge_shards", "default_shards", "summarize", "main", "OPS"]

OPS = O.BINARY_OPS + O.UNARY_OPS + ("convert:<format>", "from_float32")
BLOCK = 1 << 20            # cases per kernel call


# ---------------------------------------------------------------------------
# the operand space
def _kind(op: str) -> str:
    if op in O.BINARY_OPS:
        return "binary"
    if op in O.UNARY_OPS:
        return "unary"
    if op.startswith("convert:"):
        return "convert"
    if op == "from_float32":
        return "from_float32"
    raise ValueError(f"unknown op {op!r}; expected one of {list(OPS)}")


def _check_op(op, fmt):
    if not isinstance(op, str):
        raise TypeError(f"op must be a string, got {type(op).__name__}")
    kind = _kind(op)
    f = get_format(fmt)
    dst = get_format(op.split(":", 1)[1]) if kind == "convert" else f
    if f.kind == "fnu" or dst.kind == "fnu":
        raise ValueError(f"sweeps do not cover fnu formats ({f.name if f.kind == 'fnu' else dst.name}: "
                         f"no sign, no zero); tests/test_mx_formats.py checks e8m0 against the "
                         f"exact reference")
    if kind in ("binary", "unary", "convert") and f.nbits > 16:
        # exhaustive index spaces of 32-bit operands are too large; sample them
        pass
    return kind, f


def total_cases(op, fmt) -> int:
    """Number of cases of the full operand space of ``op`` on ``fmt``."""
    kind, f = _check_op(op, fmt)
    if kind == "binary":
        return 1 << (2 * f.nbits)
    if kind == "from_float32":
        return 1 << 32
    return 1 << f.nbits


def default_shards(op, fmt) -> int:
    """256 shards of 2**24 cases for 16-bit binary ops; fewer for smaller spaces."""
    return max(1, min(256, total_cases(op, fmt) >> 24))


def shard_range(shard_id: int, shards: int, total: int) -> tuple:
    """Case indices [lo, hi) of shard ``shard_id`` of ``shards``."""
    if not isinstance(shards, (int, np.integer)) or shards < 1:
        raise ValueError(f"shards must be a positive integer, got {shards!r}")
    if not isinstance(shard_id, (int, np.integer)) or not 0 <= shard_id < shards:
        raise ValueError(f"shard_id must be an integer in [0, {shards}), got {shard_id!r}")
    return total * int(shard_id) // shards, total * (int(shard_id) + 1) // shards


def _sample_indices(lo, hi, k, seed, shard_id):
    rng = np.random.default_rng([int(seed), int(shard_id)])
    n = hi - lo
    if k >= n:
        return np.arange(lo, hi, dtype=np.int64)
    # 32-bit binary ops index 2**64 cases: draw them as uint64
    dt = np.int64 if hi <= 1 << 62 else np.uint64
    return np.sort(rng.integers(lo, hi, size=k, dtype=dt))


def _operands(kind, f: Format, idx):
    """Operand arrays for the case indices ``idx`` (int64)."""
    if kind == "binary":
        n = f.nbits
        sh, mask = idx.dtype.type(n), idx.dtype.type((1 << n) - 1)
        return ((idx >> sh).astype(f.dtype), (idx & mask).astype(f.dtype))
    if kind == "from_float32":
        return (idx.astype(np.uint32),)
    return (idx.astype(f.dtype),)


def shard_cases(shard_id, op, fmt, *, shards=None, sample=None, seed=0) -> tuple:
    """The operands of one shard: ``(a, b)`` encodings for binary ops, ``(a,)``
    for unary ops and conversions (``uint32`` float32 patterns for
    ``from_float32``). A pure function of its arguments."""
    kind, f = _check_op(op, fmt)
    total = total_cases(op, f)
    shards = default_shards(op, f) if shards is None else shards
    lo, hi = shard_range(shard_id, shards, total)
    if sample is not None:
        idx = _sample_indices(lo, hi, -(-int(sample) // shards), seed, shard_id)
    else:
        idx = np.arange(lo, hi, dtype=np.int64)
    return _operands(kind, f, idx)


def _blocks(kind, f, lo, hi, idx):
    """Yield (index array or None, operands, outer) per block of at most BLOCK cases."""
    if idx is not None:
        for s in range(0, idx.size, BLOCK):
            part = idx[s:s + BLOCK]
            yield part, _operands(kind, f, part), False
        return
    W = 1 << f.nbits
    for s in range(lo, hi, BLOCK):
        e = min(s + BLOCK, hi)
        if kind == "binary" and s % W == 0 and e % W == 0:
            rows = np.arange(s // W, e // W, dtype=np.int64).astype(f.dtype)
            cols = np.arange(W, dtype=np.int64).astype(f.dtype)
            yield None, (rows, cols, s), True
        else:
            part = np.arange(s, e, dtype=np.int64)
            yield part, _operands(kind, f, part), False


# ---------------------------------------------------------------------------
# the function under test and the oracle, per block
def _subject(kind, op, f, mode, ops, outer):
    import softfloat as sf
    if kind == "binary":
        a, b = (ops[0][:, None], ops[1][None, :]) if outer else ops[:2]
        r, fl = getattr(sf, op)(a, b, f, mode.label, return_flags=True)
    elif kind == "unary":
        r, fl = getattr(sf, op)(ops[0], f, mode.label, return_flags=True)
    elif kind == "convert":
        r, fl = sf.convert(ops[0], f, op.split(":", 1)[1], mode.label, return_flags=True)
    else:
        r, fl = sf.to_bits(ops[0].view(np.float32), f, mode.label, return_flags=True)
    return np.ascontiguousarray(r).ravel().astype(np.int64), np.ascontiguousarray(fl).ravel()


def _oracle(kind, op, f, dst, mode, ops, outer, method):
    if kind == "binary":
        return O._run(op, ops[0], ops[1], outer, f, f, mode, method)
    empty = np.empty(0, np.uint8)
    if kind == "unary":
        return O._run(op, ops[0], empty, False, f, f, mode, method)
    if kind == "convert":
        return O._run("convert", ops[0], empty, False, f, dst, mode, method)
    return O._run("convert", ops[0], empty, False, FP32, dst, mode, method)


@njit(parallel=True, cache=True)
def _compare(got, gotf, exp, expf, E, M, kind, check_nan, code):
    """code[i] = 0 (agree), 1 (result bits differ), 2 (only the flags differ).
    NaN results agree when both are NaN unless check_nan. Returns (n1, n2)."""
    n = got.size
    nch = (n + 65535) // 65536
    c1 = np.zeros(nch, np.int64)
    c2 = np.zeros(nch, np.int64)
    for c in prange(nch):
        k1 = 0
        k2 = 0
        for i in range(c * 65536, min(n, (c + 1) * 65536)):
            g = np.int64(got[i])
            e = np.int64(exp[i])
            same = g == e
            if not same and not check_nan:
                same = is_nan_bits(g, E, M, kind) and is_nan_bits(e, E, M, kind)
            if not same:
                code[i] = 1
                k1 += 1
            elif gotf[i] != expf[i]:
                code[i] = 2
                k2 += 1
            else:
                code[i] = 0
        c1[c] = k1
        c2[c] = k2
    return c1.sum(), c2.sum()


def _dst(kind, op, f):
    return get_format(op.split(":", 1)[1]) if kind == "convert" else f


def _example(kind, f, dst, case, got, gotf, exp, expf, code):
    if kind == "binary":
        n = f.nbits
        operands = [int(case >> n), int(case & ((1 << n) - 1))]
    else:
        operands = [int(case)]
    w = (dst.nbits + 3) // 4
    ow = 8 if kind == "from_float32" else (f.nbits + 3) // 4
    return {"case": int(case), "operands": [f"0x{o:0{ow}x}" for o in operands],
            "expected": f"0x{int(exp):0{w}x}", "got": f"0x{int(got):0{w}x}",
            "expected_flags": int(expf), "got_flags": int(gotf),
            "kind": "bits" if code == 1 else "flags"}


def _mpfr_check(kind, op, f, dst, mode, lo, hi, k, seed, shard_id, check_nan, max_examples):
    """Kernel vs MPFR on k cases of the shard."""
    idx = _sample_indices(lo, hi, k, seed + 0x5EED, shard_id)
    ops = _operands(kind, f, idx)
    got, gotf = _subject(kind, op, f, mode, ops, False)
    exp = np.empty(idx.size, np.int64)
    expf = np.empty(idx.size, np.uint8)
    for i in range(idx.size):
        if kind == "binary":
            r = O.mpfr_binary(op, int(ops[0][i]), int(ops[1][i]), f, mode)
        elif kind == "unary":
            r = O.mpfr_unary(op, int(ops[0][i]), f, mode)
        elif kind == "convert":
            r = O.mpfr_convert(int(ops[0][i]), f, dst, mode)
        else:
            r = O.mpfr_convert(int(ops[0][i]), FP32, dst, mode)
        exp[i], expf[i] = r
    code = np.empty(idx.size, np.uint8)
    n1, n2 = _compare(got, gotf, exp, expf, *dst.params[:2], dst.kind_code,
                      check_nan, code)
    bad = np.flatnonzero(code)[:max_examples]
    return {"checked": int(idx.size), "mismatches": int(n1 + n2),
            "bits_mismatches": int(n1), "flag_mismatches": int(n2),
            "examples": [_example(kind, f, dst, idx[i], got[i], gotf[i], exp[i], expf[i],
                                  code[i]) for i in bad]}


def run_shard(shard_id, op, fmt, rounding="nearest_even", *, shards=None, sample=None,
              seed=0, oracle="auto", check_nan=False, mpfr=0, max_examples=20,
              progress=None) -> dict:
    """Check one shard; returns its result dict (see the module doc).
    ``progress(cases_done)`` is called after each block."""
    kind, f = _check_op(op, fmt)
    mode = get_rounding(rounding)
    if mode == Rounding.STOCHASTIC:
        raise ValueError("sweeps cover the deterministic rounding modes only")
    dst = _dst(kind, op, f)
    method = O.default_method(dst, mode) if oracle == "auto" else oracle
    total = total_cases(op, f)
    shards = default_shards(op, f) if shards is None else int(shards)
    lo, hi = shard_range(shard_id, shards, total)
    idx = None
    if sample is not None:
        idx = _sample_indices(lo, hi, -(-int(sample) // shards), seed, shard_id)
    t0 = time.perf_counter()
    c0 = time.process_time()
    n = n1 = n2 = 0
    examples = []
    E, M, _, kc = dst.params
    for part, ops, outer in _blocks(kind, f, lo, hi, idx):
        if outer:
            rows, cols, start = ops
            ops = (rows, cols)
        got, gotf = _subject(kind, op, f, mode, ops, outer)
        exp, expf = _oracle(kind, op, f, dst, mode, ops, outer, method)
        code = np.empty(got.size, np.uint8)
        k1, k2 = _compare(got, gotf, exp, expf, E, M, kc, check_nan, code)
        if (k1 or k2) and len(examples) < max_examples:
            for i in np.flatnonzero(code)[:max_examples - len(examples)]:
                case = part[i] if part is not None else start + i
                examples.append(_example(kind, f, dst, case, got[i], gotf[i], exp[i],
                                         expf[i], code[i]))
        n += got.size
        n1 += int(k1)
        n2 += int(k2)
        if progress is not None:
            progress(got.size)
    res = {"shard": int(shard_id), "shards": shards, "lo": int(lo), "hi": int(hi),
           "cases": n, "mismatches": n1 + n2, "bits_mismatches": n1, "flag_mismatches": n2,
           "examples": examples, "seconds": round(time.perf_counter() - t0, 3),
           "cpu_seconds": round(time.process_time() - c0, 3),
           "config": _config(op, f, mode, shards, sample, seed, method, check_nan, mpfr)}
    if mpfr:
        t1 = time.perf_counter()
        res["mpfr"] = _mpfr_check(kind, op, f, dst, mode, lo, hi, int(mpfr), seed, shard_id,
                                  check_nan, max_examples)
        res["mpfr"]["seconds"] = round(time.perf_counter() - t1, 3)
    return res


def _config(op, f, mode, shards, sample, seed, method, check_nan, mpfr):
    return {"op": op, "format": f.name, "mode": mode.label, "shards": int(shards),
            "sample": None if sample is None else int(sample), "seed": int(seed),
            "oracle": method, "check_nan": bool(check_nan), "mpfr": int(mpfr)}


def merge_shards(results, *, max_examples=20) -> dict:
    """Merge shard results (of one sweep) into a report."""
    if not results:
        raise ValueError("no shard results to merge")
    cfg = results[0]["config"]
    results = sorted(results, key=lambda r: r["shard"])
    ex = [e for r in results for e in r["examples"]]
    rep = {"op": cfg["op"], "format": cfg["format"], "mode": cfg["mode"],
           "oracle": cfg["oracle"], "exhaustive": cfg["sample"] is None and
           len(results) == cfg["shards"],
           "cases": sum(r["cases"] for r in results),
           "mismatches": sum(r["mismatches"] for r in results),
           "bits_mismatches": sum(r["bits_mismatches"] for r in results),
           "flag_mismatches": sum(r["flag_mismatches"] for r in results),
           "first_mismatches": ex[:max_examples],
           "seconds": round(sum(r["seconds"] for r in results), 3),
           "cpu_seconds": round(sum(r.get("cpu_seconds", 0.0) for r in results), 3),
           "shards": cfg["shards"], "shards_done": len(results), "config": cfg}
    if any("mpfr" in r for r in results):
        m = [r["mpfr"] for r in results if "mpfr" in r]
        rep["mpfr"] = {"checked": sum(x["checked"] for x in m),
                       "mismatches": sum(x["mismatches"] for x in m),
                       "bits_mismatches": sum(x["bits_mismatches"] for x in m),
                       "flag_mismatches": sum(x["flag_mismatches"] for x in m),
                       "examples": [e for x in m for e in x["examples"]][:max_examples],
                       "seconds": round(sum(x["seconds"] for x in m), 3)}
    return rep


# ---------------------------------------------------------------------------
# running many shards
class _Progress:
    """A one-line progress bar on stderr (a line every 10 s when not a terminal)."""

    def __init__(self, label, total, enabled):
        self.label, self.total, self.enabled = label, total, enabled
        self.done = 0
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def add(self, n, force=False):
        self.done += n
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < (0.5 if self.tty else 10.0):
            return
        self.last = now
        frac = self.done / self.total if self.total else 1.0
        el = now - self.t0
        eta = el * (1 - frac) / frac if frac > 0 else float("nan")
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        line = (f"{self.label} [{bar}] {100 * frac:5.1f}% {self.done:,}/{self.total:,} "
                f"{el:6.1f}s ETA {eta:6.1f}s")
        sys.stderr.write(("\r" + line) if self.tty else (line + "\n"))
        sys.stderr.flush()

    def close(self):
        if self.enabled:
            self.add(0, force=True)
            if self.tty:
                sys.stderr.write("\n")


def _name(op, f, mode):
    return f"{op.replace(':', '-')}_{f.name}_{mode.label}"


def _shard_path(out, name, k):
    return os.path.join(out, name + ".shards", f"shard_{k:05d}.json")


def _write_json(path, obj):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        json.dump(obj, fh, indent=1)
    os.replace(tmp, path)


def _worker_init(threads):
    import numba
    numba.set_num_threads(max(1, threads))


def _worker(args):
    k, op, fname, mode, kw, path = args
    r = run_shard(k, op, fname, mode, **kw)
    if path:
        _write_json(path, r)
    return r


def run_sweep(op, fmt, rounding="nearest_even", *, shards=None, jobs=1, out=None,
              resume=False, sample=None, seed=0, oracle="auto", check_nan=False, mpfr=0,
              max_examples=20, progress=False, shard_ids=None) -> dict:
    """Run a sweep and return the merged report (see the module doc).

    Parameters
    ----------
    op : str
        ``add``, ``sub``, ``mul``, ``div``, ``sqrt``, ``convert:<dst>`` or
        ``from_float32``.
    fmt : Format or str
        The operands' format (the target format for ``from_float32``).
    rounding : str
        One deterministic rounding mode.
    shards : int, optional
        Number of shards (default `default_shards`).
    jobs : int
        Worker processes; 1 runs in this process with numba's threads.
    out : str, optional
        Directory for per-shard files and the report; None keeps everything in memory.
    resume : bool
        Skip shards whose result file exists in ``out`` with the same settings.
    sample : int, optional
        Check about ``sample`` random cases (split over the shards) instead of all.
    seed : int
        Seed of the sample (and of the MPFR cases).
    oracle : {"auto", "host", "ro53"}
        See `softfloat.oracles`; auto takes host for nearest_even where it applies.
    check_nan : bool
        Compare NaN result patterns too (default: both NaN is agreement).
    mpfr : int
        Per shard, also check this many cases against MPFR (gmpy2).
    max_examples : int
        Mismatches kept in the report.
    progress : bool
        Progress bar on stderr.
    shard_ids : iterable of int, optional
        Run only these shards (the report then says ``exhaustive: false``).
    """
    kind, f = _check_op(op, fmt)
    mode = get_rounding(rounding)
    if mode == Rounding.STOCHASTIC:
        raise ValueError("sweeps cover the deterministic rounding modes only")
    if oracle not in ("auto", "host", "ro53"):
        raise ValueError(f"oracle must be 'auto', 'host' or 'ro53', got {oracle!r}")
    if not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    dst = _dst(kind, op, f)
    method = O.default_method(dst, mode) if oracle == "auto" else oracle
    if method == "host" and not O.host_supported(dst, mode):
        raise ValueError(f"the host oracle covers nearest_even into fp16, bf16, fp32 and "
                         f"fp8 formats, not {mode.label} into {dst.name}")
    total = total_cases(op, f)
    if sample is None and total > (1 << 32):
        raise ValueError(f"{op} on {f.name} has {total} cases; use sample=")
    shards = default_shards(op, f) if shards is None else int(shards)
    ids = list(range(shards)) if shard_ids is None else [int(k) for k in shard_ids]
    for k in ids:
        shard_range(k, shards, total)
    name = _name(op, f, mode)
    cfg = _config(op, f, mode, shards, sample, seed, method, check_nan, mpfr)
    kw = dict(shards=shards, sample=sample, seed=seed, oracle=method, check_nan=check_nan,
              mpfr=mpfr, max_examples=max_examples)
    results, todo = [], []
    for k in ids:
        path = _shard_path(out, name, k) if out else None
        if resume and path and os.path.exists(path):
            with open(path) as fh:
                r = json.load(fh)
            if r.get("config") != cfg:
                raise ValueError(f"{path} was written with other settings ({r.get('config')}); "
                                 f"use another --out or drop --resume")
            results.append(r)
        else:
            todo.append((k, path))
    per = -(-int(sample) // shards) if sample is not None else None
    size = lambda k: (per if per is not None else  # noqa: E731
                      np.subtract(*shard_range(k, shards, total)[::-1]))
    bar = _Progress(f"{op} {f.name} {mode.label}", int(sum(min(size(k), total) for k, _ in todo)),
                    progress)
    t0 = time.perf_counter()
    if jobs == 1 or len(todo) <= 1:
        for k, path in todo:
            r = run_shard(k, op, f, mode, progress=bar.add, **kw)
            if path:
                _write_json(path, r)
            results.append(r)
    else:
        import concurrent.futures as cf
        import multiprocessing as mp
        threads = max(1, (os.cpu_count() or 1) // jobs)
        fname = f if f.name not in _builtin_names() else f.name
        with cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                                    initializer=_worker_init, initargs=(threads,)) as ex:
            futs = [ex.submit(_worker, (k, op, fname, mode.label, kw, path))
                    for k, path in todo]
            for fu in cf.as_completed(futs):
                r = fu.result()
                bar.add(r["cases"])
                results.append(r)
    bar.close()
    rep = merge_shards(results, max_examples=max_examples)
    rep["exhaustive"] = sample is None and len(results) == shards
    rep["wall_seconds"] = round(time.perf_counter() - t0, 3)
    rep["jobs"] = int(jobs)
    rep["machine"] = f"{platform.machine()} {os.cpu_count()} cpus, {platform.python_version()}"
    rep["date"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    if out:
        _write_json(os.path.join(out, name + ".json"), rep)
    return rep


def _builtin_names():
    from .formats import formats
    return {x.name for x in formats()}


# ---------------------------------------------------------------------------
# the results table
def summarize(directory) -> str:
    """A markdown table of every report ``*.json`` in ``directory``."""
    rows = []
    for fn in sorted(os.listdir(directory)):
        if not fn.endswith(".json"):
            continue
        with open(os.path.join(directory, fn)) as fh:
            r = json.load(fh)
        if "op" not in r or "cases" not in r:
            continue
        rows.append(r)
    order = {m: i for i, m in enumerate(DETERMINISTIC_MODES)}
    rows.sort(key=lambda r: (r["format"], r["op"], order.get(r["mode"], 9)))
    lines = ["| op | format | mode | oracle | cases | exhaustive | mismatches (bits / flags only) "
             "| MPFR cases (mismatches) | wall s | CPU s |",
             "|---|---|---|---|---:|---|---|---|---:|---:|"]
    for r in rows:
        m = r.get("mpfr")
        mp_ = f"{m['checked']:,} ({m['mismatches']})" if m else "-"
        lines.append(f"| {r['op']} | {r['format']} | {r['mode']} | {r['oracle']} | "
                     f"{r['cases']:,} | {'yes' if r.get('exhaustive') else 'sampled'} | "
                     f"{r['mismatches']} ({r['bits_mismatches']} / {r['flag_mismatches']}) | "
                     f"{mp_} | {r.get('wall_seconds', r['seconds'])} | "
                     f"{r.get('cpu_seconds', '-')} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# command line
def _parser():
    p = argparse.ArgumentParser(
        prog="python -m softfloat sweep",
        description="Check an operation over every operand pattern (or a random sharded "
                    "subset) against an independent oracle, bits and flags.")
    p.add_argument("format", nargs="?", help="operand format (fp16, bf16, fp8_e4m3, ...); "
                   "the target format for from_float32")
    p.add_argument("op", nargs="?", help="add, sub, mul, div, sqrt, convert:<dst>, from_float32")
    p.add_argument("--rounding", default="nearest_even",
                   help="a mode, a comma-separated list, or 'all' (the six deterministic modes)")
    p.add_argument("--shards", type=int, default=None, help="number of shards (default: "
                   "2**24 cases each, at most 256)")
    p.add_argument("--shard-ids", default=None, help="run only these shards (e.g. 0,5,7 or 0-15)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1: this "
                   "process, numba threads)")
    p.add_argument("--out", default="sweeps", help="directory for shard files and reports")
    p.add_argument("--resume", action="store_true", help="skip shards already done in --out")
    p.add_argument("--sample", type=int, default=None, help="check K random cases instead of all")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mpfr", type=int, default=0, metavar="K",
                   help="also check K cases per shard against MPFR (gmpy2)")
    p.add_argument("--oracle", default="auto", choices=("auto", "host", "ro53"))
    p.add_argument("--check-nan", action="store_true", help="compare NaN patterns too")
    p.add_argument("--examples", type=int, default=20, help="mismatches kept in the report")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--summarize", metavar="DIR", default=None,
                   help="write DIR/RESULTS.md from the reports in DIR and exit")
    return p


def _parse_ids(s):
    if s is None:
        return None
    ids = []
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            ids.extend(range(int(a), int(b) + 1))
        elif part:
            ids.append(int(part))
    return ids


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.summarize:
        table = summarize(args.summarize)
        path = os.path.join(args.summarize, "RESULTS.md")
        with open(path, "w") as fh:
            fh.write("# Sweep results\n\nProduced by `python -m softfloat sweep --summarize "
                     f"{args.summarize}` from the JSON reports in this directory (one per "
                     "op x format x mode; the per-shard files are not kept in git). "
                     "Mismatches count result bits and flags; NaN results compare as "
                     "both-NaN. *wall s* is elapsed time, *CPU s* the process CPU time "
                     "over all threads (CPU s / cores is about the wall time on an idle "
                     "machine).\n\n" + table)
        print(table, end="")
        return 0
    if not args.format or not args.op:
        _parser().print_usage(sys.stderr)
        print("error: give a format and an op (or --summarize DIR)", file=sys.stderr)
        return 2
    modes = (list(DETERMINISTIC_MODES) if args.rounding.strip() == "all"
             else [m.strip() for m in args.rounding.split(",") if m.strip()])
    try:
        modes = [get_rounding(m) for m in modes]
        worst = 0
        for mode in modes:
            rep = run_sweep(args.op, args.format, mode, shards=args.shards, jobs=args.jobs,
                            out=args.out, resume=args.resume, sample=args.sample,
                            seed=args.seed, oracle=args.oracle, check_nan=args.check_nan,
                            mpfr=args.mpfr, max_examples=args.examples,
                            progress=not args.quiet, shard_ids=_parse_ids(args.shard_ids))
            mp_ = ""
            if "mpfr" in rep:
                m = rep["mpfr"]
                mp_ = f", MPFR {m['checked']:,} cases: {m['mismatches']} mismatches"
            print(f"{rep['op']} {rep['format']} {rep['mode']} [{rep['oracle']}]: "
                  f"{rep['cases']:,} cases, {rep['mismatches']} mismatches "
                  f"({rep['bits_mismatches']} bits, {rep['flag_mismatches']} flags only){mp_}, "
                  f"{rep['wall_seconds']} s")
            for e in rep["first_mismatches"][:5]:
                print(f"  {e}")
            if rep["mismatches"] or rep.get("mpfr", {}).get("mismatches"):
                worst = 1
        return worst
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
