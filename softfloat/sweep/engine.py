"""The engine: one sweep, the library checked against an oracle over an operand
space. `run_shard` checks one shard block by block: the function under test is
the public API (`_subject`: ``sf.add`` & co., ``sf.convert``, ``sf.to_bits``),
the expectation comes from `softfloat.sweep_oracles` (result bits, flags and the
NaN bit pattern the NaN policy promises; ``check_nan=False`` accepts any NaN for
a NaN), optionally with an MPFR witness on a sample of the shard; `merge_shards`
adds shard results up into a report; `run_sweep` checks its arguments before any
work, reuses the shard files that verify (``resume``), runs the other shards
here, on worker processes or on Dask, and stores the report.
"""
from __future__ import annotations

import os
import platform
import time

import numpy as np

from .. import sweep_oracles as O
from ..rounding import Rounding, get_rounding
from .backends import Progress, _run_dask, _run_pool, builtin_names
from .files import (SHARD_FORMAT, ShardFileError, _name, check_writable, seal, shard_path,
                    split_resumed, store_report, verify_shard_file, write_json)
from .shards import check_run_args
from .spaces import (Space, _compact_space, _default_shards, _sample_indices, _space_kw,
                     require, shard_range)


def _subject(sp: Space, mode, ops):
    """Bits and flags of the library's operation, flat, in case order."""
    from .. import arith, conversions
    kind, op, f = sp.kind, sp.op, sp.f
    if kind in ("binary", "ternary"):
        r, fl = getattr(arith, op)(*ops, f, mode.label, return_flags=True)
    elif kind == "unary":
        r, fl = getattr(arith, op)(ops[0], f, mode.label, return_flags=True)
    elif kind == "convert":
        r, fl = conversions.convert(ops[0], f, sp.dst, mode.label, return_flags=True)
    else:
        r, fl = conversions.to_bits(ops[0].view(np.float32), f, mode.label, return_flags=True)
    return np.ascontiguousarray(r).ravel(), np.ascontiguousarray(fl).ravel()


def _example(sp: Space, case, ops_at, got, gotf, exp, expf, code):
    ow = 8 if sp.kind == "from_float32" else (sp.f.nbits + 3) // 4
    w = (sp.dst.nbits + 3) // 4
    return {"case": int(case), "operands": [f"0x{int(o):0{ow}x}" for o in ops_at],
            "expected": f"0x{int(exp):0{w}x}", "got": f"0x{int(got):0{w}x}",
            "expected_flags": int(expf), "got_flags": int(gotf),
            "kind": "bits" if code == 1 else "flags"}


def _mpfr_one(sp: Space, mode, ops_at):
    if sp.kind == "binary":
        return O.mpfr_binary(sp.op, int(ops_at[0]), int(ops_at[1]), sp.f, mode)
    if sp.kind == "ternary":
        return O.mpfr_fma(*(int(x) for x in ops_at), sp.f, mode)
    if sp.kind == "unary":
        return O.mpfr_unary(sp.op, int(ops_at[0]), sp.f, mode)
    return O.mpfr_convert(int(ops_at[0]), sp.src, sp.dst, mode)


def _mpfr_check(sp: Space, mode, lo, hi, k, seed, shard_id, max_examples):
    """Kernel vs MPFR on k cases of the shard."""
    idx = _sample_indices(lo, hi, k, seed + 0x5EED, shard_id)
    ops = sp.operands(idx)
    got, gotf = _subject(sp, mode, ops)
    n1 = n2 = 0
    ex = []
    for i in range(idx.size):
        at = [o[i] for o in ops]
        eb, ef = _mpfr_one(sp, mode, at)
        code = 1 if int(got[i]) != eb else (2 if int(gotf[i]) != ef else 0)
        n1 += code == 1
        n2 += code == 2
        if code and len(ex) < max_examples:
            ex.append(_example(sp, idx[i], at, got[i], gotf[i], eb, ef, code))
    return {"checked": int(idx.size), "mismatches": int(n1 + n2), "bits_mismatches": int(n1),
            "flag_mismatches": int(n2), "examples": ex}


def run_shard(shard_id, op, fmt, rounding="nearest_even", *, shards=None, sample=None,
              seed=0, oracle="auto", check_nan=True, mpfr=0, max_examples=20,
              progress=None, space=None) -> dict:
    """Check one shard; returns its result dict (see the module doc).
    ``space``: sub-space arguments (a=, b=, c=, c_family=). ``progress(cases_done)``
    is called after each block."""
    sw = _space_kw(space)
    sp = Space(op, fmt, **sw)
    mode = get_rounding(rounding)
    if mode == Rounding.STOCHASTIC:
        raise ValueError("sweeps cover the deterministic rounding modes only")
    method = O.default_method(sp.dst, mode, _op_kind(sp), sp.src) if oracle == "auto" \
        else oracle
    mcode = O.method_code(method, sp.dst, mode, _op_kind(sp), sp.src)
    total = sp.total
    shards = _default_shards(total, sample) if shards is None else int(shards)
    lo, hi = shard_range(shard_id, shards, total)
    idx = None
    if sample is not None:
        idx = _sample_indices(lo, hi, -(-int(sample) // shards), seed, shard_id)
    t0 = time.perf_counter()
    c0 = time.process_time()
    n = n1 = n2 = 0
    examples = []
    oracle_op = "convert" if sp.kind in ("convert", "from_float32") else op
    for part, ops, layout in sp.blocks(lo, hi, idx):
        got, gotf = _subject(sp, mode, ops)
        k1, k2, code = O.check_block(oracle_op, layout, sp.src, sp.dst, mode, mcode, got, gotf)
        if not check_nan and code is not None:
            k1, k2, code = _forgive_nans(sp, oracle_op, layout, mode, mcode, got, gotf, code)
        if (k1 or k2) and len(examples) < max_examples:
            bad = np.flatnonzero(code)[:max_examples - len(examples)]
            exp, expf = O.oracle_block(oracle_op, _sub_layout(layout, bad), sp.src, sp.dst,
                                       mode, mcode)
            flat = [np.broadcast_to(o, tuple(np.broadcast_shapes(*(x.shape for x in ops))))
                    .ravel() for o in ops] if not isinstance(part, np.ndarray) else ops
            for t, i in enumerate(bad):
                case = part[i] if isinstance(part, np.ndarray) else part + i
                examples.append(_example(sp, case, [o[i] for o in flat], got[i], gotf[i],
                                         exp[t], expf[t], code[i]))
        n += got.size
        n1 += int(k1)
        n2 += int(k2)
        if progress is not None:
            progress(got.size)
    res = {"format_version": SHARD_FORMAT, "shard": int(shard_id), "shards": shards,
           "lo": int(lo), "hi": int(hi), "cases": n, "mismatches": n1 + n2,
           "bits_mismatches": n1, "flag_mismatches": n2, "examples": examples,
           "seconds": round(time.perf_counter() - t0, 3),
           "cpu_seconds": round(time.process_time() - c0, 3),
           "config": _config(sp, mode, shards, sample, seed, method, check_nan, mpfr)}
    if mpfr:
        t1 = time.perf_counter()
        res["mpfr"] = _mpfr_check(sp, mode, lo, hi, int(mpfr), seed, shard_id, max_examples)
        res["mpfr"]["seconds"] = round(time.perf_counter() - t1, 3)
    return res


def _op_kind(sp):
    return "fma" if sp.kind == "ternary" else ("convert" if sp.kind in ("convert", "from_float32")
                                               else sp.op)


def _sub_layout(layout, positions):
    """A flat layout of the cases at ``positions`` of ``layout``."""
    k = np.asarray(positions, np.int64)
    arrs = [x[(k >> s) & m] for x, s, m in zip(layout.arrays, layout.shifts, layout.masks)]
    return O.Layout(arrs, [0, 0, 0], [-1, -1, -1], k.size)


def _forgive_nans(sp, oracle_op, layout, mode, mcode, got, gotf, code):
    """Opt-out (check_nan=False): a NaN result agrees with a NaN expectation of
    any pattern (then only the flags are compared)."""
    bad = np.flatnonzero(code == 1)
    exp, expf = O.oracle_block(oracle_op, _sub_layout(layout, bad), sp.src, sp.dst, mode, mcode)
    nan = sp.dst.is_nan_bits(got[bad].astype(np.int64)) & sp.dst.is_nan_bits(exp)
    code[bad[nan]] = np.where(gotf[bad[nan]] != expf[nan], 2, 0)
    k1, k2 = _recount(code)
    return k1, k2, code


def _recount(code):
    return int(np.count_nonzero(code == 1)), int(np.count_nonzero(code == 2))


def _config(sp: Space, mode, shards, sample, seed, method, check_nan, mpfr):
    cfg = {"op": sp.op, "format": sp.f.name, "mode": mode.label, "shards": int(shards),
           "sample": None if sample is None else int(sample), "seed": int(seed),
           "oracle": method, "check_nan": bool(check_nan), "mpfr": int(mpfr)}
    d = sp.describe()
    if d:
        cfg["space"] = d
    return cfg


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
    if "space" in cfg:
        rep["space"] = cfg["space"]
    if any("mpfr" in r for r in results):
        m = [r["mpfr"] for r in results if "mpfr" in r]
        rep["mpfr"] = {"checked": sum(x["checked"] for x in m),
                       "mismatches": sum(x["mismatches"] for x in m),
                       "bits_mismatches": sum(x["bits_mismatches"] for x in m),
                       "flag_mismatches": sum(x["flag_mismatches"] for x in m),
                       "examples": [e for x in m for e in x["examples"]][:max_examples],
                       "seconds": round(sum(x["seconds"] for x in m), 3)}
    return rep


def _worker(k, op, fname, mode, kw, path):
    """One shard in a worker process: run it, write its sealed file to ``path``
    (unless None), return the result."""
    r = seal(run_shard(k, op, fname, mode, **kw))
    if path:
        write_json(path, r)
    return r


def _merge_earlier(results, out, name, shards, cfg, expected, notes):
    """Add to ``results`` the shards of this run that were not run now but whose
    files in ``out`` verify (earlier ``shard_ids`` runs): the report covers
    every shard done so far. Files that do not verify are left out, with a note."""
    have = {r["shard"] for r in results}
    for k in range(shards):
        path = shard_path(out, name, k)
        if k in have or not os.path.exists(path):
            continue
        try:
            results.append(verify_shard_file(path, k, cfg, *expected(k)))
        except ShardFileError as exc:
            notes.append(f"{exc}: not merged")


def dask_shard(k, op, fname, mode, kw, path):
    """One shard on a Dask worker: run it, write its verified file to ``path`` (a
    directory the workers share), return the result."""
    return _worker(k, op, fname, mode, kw, path)


def run_sweep(op, fmt, rounding="nearest_even", *, shards=None, jobs=1, out=None,
              resume=False, sample=None, seed=0, oracle="auto", check_nan=True, mpfr=0,
              max_examples=20, progress=False, shard_ids=None, a=None, b=None, c=None,
              c_family=None, backend="process", scheduler=None, timeout=30.0) -> dict:
    """Run a sweep and return the merged report (see the module doc).

    Parameters
    ----------
    op : str
        ``add``, ``sub``, ``mul``, ``div``, ``fma``, ``sqrt``, ``convert:<dst>``
        or ``from_float32``.
    fmt : Format or str
        The operands' format (the target format for ``from_float32``).
    rounding : str
        One deterministic rounding mode.
    shards : int, optional
        Number of shards (default `default_shards`).
    jobs : int
        Worker processes (Dask: local workers); 1 runs in this process on threads.
    out : str, optional
        Directory for per-shard files and the report; None keeps everything in
        memory. Checked writable before any work.
    resume : bool
        Reuse the shard files in ``out`` that verify; recompute the others.
    sample : int, optional
        Check about ``sample`` random cases (split over the shards) instead of all.
    seed : int
        Seed of the sample (and of the MPFR cases).
    oracle : {"auto", "host", "ro53"}
        See `softfloat.sweep_oracles`; auto takes host for nearest_even where it applies.
    check_nan : bool
        Compare NaN results bit for bit with the pattern the NaN policy promises
        (default); False accepts any NaN for a NaN.
    mpfr : int
        Per shard, also check this many cases against MPFR (gmpy2).
    max_examples : int
        Mismatches kept in the report.
    progress : bool
        Progress bar on stderr.
    shard_ids : iterable of int, optional
        Run only these shards. With ``out``, the files of the run's other shards
        that verify (earlier runs of other ids) are merged into the report; the
        shards still missing are listed in ``missing_shards`` and the report
        says ``exhaustive: false`` until every shard is done.
    a, b, c : operand sets, optional
        A sub-space (see `parse_values`): ``c=0x3c00`` fixes c, ``a="0x3c00-0x3cff"``...
    c_family : {"cancel", "cancel4"}, optional
        fma only: the structured addends of the module doc (16 or 4 per pair).
    backend : {"process", "dask"}
        ``dask`` runs the shards on a Dask distributed cluster: a local one of
        ``jobs`` workers, or the one at ``scheduler``; shard files then need an
        ``out`` that every worker can write.
    timeout : float
        Dask: seconds to wait for the scheduler to answer (and for a first
        worker); a scheduler that does not answer, or answers in another
        protocol, raises RuntimeError saying so.
    """
    sw = _space_kw(dict(a=a, b=b, c=c, c_family=c_family))
    sp = Space(op, fmt, **sw)
    mode = get_rounding(rounding)
    if mode == Rounding.STOCHASTIC:
        raise ValueError("sweeps cover the deterministic rounding modes only")
    if oracle not in ("auto", "host", "ro53"):
        raise ValueError(f"oracle must be 'auto', 'host' or 'ro53', got {oracle!r}")
    check_run_args(jobs=jobs, backend=backend)
    if sample is not None and (isinstance(sample, bool) or not isinstance(
            sample, (int, np.integer)) or sample < 1):
        raise ValueError(f"sample must be a positive integer, got {sample!r}")
    if isinstance(mpfr, bool) or not isinstance(mpfr, (int, np.integer)) or mpfr < 0:
        raise ValueError(f"mpfr must be a non-negative integer, got {mpfr!r}")
    if isinstance(max_examples, bool) or not isinstance(max_examples, (int, np.integer)) \
            or max_examples < 0:
        raise ValueError(f"max_examples must be a non-negative integer, got {max_examples!r}")
    if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
            and 0 < timeout < float("inf")):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    method = O.default_method(sp.dst, mode, _op_kind(sp), sp.src) if oracle == "auto" \
        else oracle
    O.method_code(method, sp.dst, mode, _op_kind(sp), sp.src)
    total = sp.total
    if sample is None and total > (1 << 48):
        raise ValueError(f"{op} on {sp.f.name} has {total} cases; use sample=")
    shards = check_run_args(
        jobs=jobs, backend=backend,
        shards=_default_shards(total, sample) if shards is None else shards, total=total,
        sample=None if sample is None else int(sample),
        what=f"{op} on {sp.f.name}" + (f" {_compact_space(sp.describe())}"
                                       if sp.describe() else ""))
    if mpfr:
        require("gmpy2", "test", "--mpfr (the MPFR witness)")
    if sp.c_family and sp.f.name == "bf16":
        require("ml_dtypes", "test", "the bf16 cancel families")
    if backend == "dask":
        require("distributed", "dask", "--backend dask")
    ids = list(range(shards)) if shard_ids is None else [int(k) for k in shard_ids]
    if not ids:
        raise ValueError("no shards to run (empty shard_ids)")
    for k in ids:
        shard_range(k, shards, total)
    if out:
        check_writable(out)
    name = _name(sp, mode)
    cfg = _config(sp, mode, shards, sample, seed, method, check_nan, mpfr)
    kw = dict(shards=shards, sample=sample, seed=seed, oracle=method, check_nan=check_nan,
              mpfr=mpfr, max_examples=max_examples, space=sw or None)
    per = -(-int(sample) // shards) if sample is not None else None

    def size(k):
        lo, hi = shard_range(k, shards, total)
        return min(per, hi - lo) if per is not None else hi - lo
    results, todo, notes = split_resumed(out, name, ids, cfg, resume, lambda k: (
        *shard_range(k, shards, total), size(k)))
    bar = Progress(f"{op} {sp.f.name} {mode.label}", int(sum(size(k) for k, _ in todo)),
                    progress)
    t0 = time.perf_counter()
    fname = sp.f if sp.f.name not in builtin_names() else sp.f.name

    def done(r):
        bar.add(r["cases"])
        results.append(r)
    if backend == "dask":
        tasks = [(f"softfloat-shard-{fname}-{op}-{mode.label}-{k}-{time.time_ns()}",
                  (k, op, fname, mode.label, kw, path)) for k, path in todo]
        _run_dask(dask_shard, tasks, scheduler, jobs, done, timeout)
    elif jobs == 1 or len(todo) <= 1:
        for k, path in todo:
            r = seal(run_shard(k, op, sp.f, mode, progress=bar.add, **kw))
            if path:
                write_json(path, r)
            results.append(r)
    else:
        jobs = min(jobs, len(todo))          # no idle worker processes
        _run_pool(_worker, [(k, op, fname, mode.label, kw, path) for k, path in todo], jobs,
                  done)
    bar.close()
    if out and shard_ids is not None:
        _merge_earlier(results, out, name, shards, cfg, lambda k: (
            *shard_range(k, shards, total), size(k)), notes)
    rep = merge_shards(results, max_examples=max_examples)
    rep["exhaustive"] = sample is None and len(results) == shards and not sw
    missing = sorted(set(range(shards)) - {r["shard"] for r in results})
    if missing:
        rep["missing_shards"] = missing
    rep["wall_seconds"] = round(time.perf_counter() - t0, 3)
    rep["jobs"] = int(jobs)
    rep["backend"] = backend
    if notes:
        rep["notes"] = notes
    rep["machine"] = f"{platform.machine()} {os.cpu_count()} cpus, {platform.python_version()}"
    rep["date"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    if out:
        store_report(out, rep)
    return rep
