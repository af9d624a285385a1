"""`verify`: run an implementation over an operand space, shard by shard,
compare it with the library, classify every mismatch, and diagnose.

A shard is the case range ``[total*k//S, total*(k+1)//S)`` of the space
(`softfloat.sweep.shard_range`); each is a pure function of its arguments, runs
in this process, in worker processes or on Dask (`softfloat.sweep.run_parallel`),
and is written to a checksummed shard file that ``resume=True`` reuses
(`softfloat.sweep.verify_shard_file`).

Two passes at most: the first compares with the requested setting and keeps the
diagnosis material (the mismatching cases, up to a cap, and a random sample of
the matching ones; every case of a small space); `softfloat.verify.diagnosis`
searches the policies on that material; when the material was a sample, a second
pass runs the implementation again and counts the best candidates on every case.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import time
from collections import Counter

import numpy as np

from .. import sweep as SW
from ..sweep.backends import _Progress, _builtin_names
from ..sweep.files import _seal, _shard_path, _write_json
from ..rounding import Rounding, get_rounding
from ..stochastic import scheme_of
from .impls import as_impl
from .ops import DEFAULTS, Op, get_op, normalize_policies
from .compare import (FLAG_NAMES, _add_stats, _empty_store, _example, _keep, _new_stats,
                      _store_json, block_stats, classify_mismatches, evaluate, op_policies)
from .spaces import make_space

__all__ = ["verify", "Report", "evaluate", "run_shard", "BLOCK", "KEEP_ALL"]

BLOCK = 1 << 18                # cases per call of the implementation
KEEP_ALL = 1 << 17             # spaces up to this size keep every case for the diagnosis
KEEP_MISMATCHES = 100_000      # otherwise: mismatches kept (over all shards)
KEEP_MATCHES = 20_000          # and matching cases kept
VERIFY_FORMAT = 1




def run_shard(task: dict) -> dict:
    """Run one shard (``task``: see `verify`); returns its result dict."""
    op = get_op(task["op"], task["fmt"])
    sp = make_space(op, task["space"], task["seed"])
    impl = as_impl(task["impl"])
    lo, hi = SW.shard_range(task["shard"], task["shards"], sp.total)
    base = task["setting"]
    check_nan = task["check_nan"]
    settings = task.get("settings")
    t0 = time.perf_counter()
    sess = impl.open(op, base["rounding"], {k: base[k] for k in DEFAULTS}, sp.total)
    cap_m, cap_k = task["keep"]
    rng = np.random.default_rng([int(task["seed"]), 0xD1A6, int(task["shard"])])
    mism, match = _empty_store(op.nops), _empty_store(op.nops)
    n = n1 = n2 = 0
    flags_checked = None
    stats = _new_stats()
    cand = [_new_stats() for _ in settings] if settings else None
    try:
        for s in range(lo, hi, BLOCK):
            e = min(hi, s + BLOCK)
            ops = sp.chunk(s, e)
            got, gotf = sess(ops, s)
            flags_checked = (gotf is not None) if flags_checked is None else \
                (flags_checked and gotf is not None)
            if settings:
                for c, st in zip(cand, settings):
                    _add_stats(c, block_stats(op, ops, got, gotf, st, check_nan, case0=s))
                n += got.size
                continue
            mk = {}
            _add_stats(stats, block_stats(op, ops, got, gotf, base, check_nan, case0=s,
                                          masks=mk))
            same, full = mk["same"], mk["full"]
            n += got.size
            n1 += int(np.count_nonzero(~same))
            n2 += int(np.count_nonzero(same & ~full))
            bad = np.flatnonzero(~full)
            good = np.flatnonzero(full)
            take = lambda idx: ([o[idx] for o in ops], got[idx],
                                None if gotf is None else gotf[idx], s + idx)
            a, g, gf, p = take(bad)
            _keep(mism, rng, a, g, gf, p, cap_m)
            a, g, gf, p = take(good)
            _keep(match, rng, a, g, gf, p, cap_k)
    finally:
        sess.close()
    res = {"format_version": SW.SHARD_FORMAT, "verify_format": VERIFY_FORMAT,
           "shard": int(task["shard"]), "shards": int(task["shards"]), "lo": int(lo),
           "hi": int(hi), "cases": int(n), "seconds": round(time.perf_counter() - t0, 3),
           "flags_checked": bool(flags_checked), "config": task["config"]}
    if settings:
        res.update(mismatches=0, bits_mismatches=0, flag_mismatches=0, examples=[],
                   candidates=cand)
        return res
    res.update(mismatches=n1 + n2, bits_mismatches=n1, flag_mismatches=n2, examples=[],
               stats=stats, kept_mismatches=_store_json(mism), kept_matches=_store_json(match))
    return res


# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Report:
    """What `verify` found. ``cases``, ``mismatches`` (``bits_mismatches``:
    result encodings differ; ``flag_mismatches``: same result, other flags),
    ``classes`` (mismatches by `softfloat.testfloat.CLASSES` class),
    ``flag_differences`` (``"inexact missing"``: count), ``first_mismatches``
    (case, operands, expected, got, flags, class), ``diagnosis`` (see
    `softfloat.verify.diagnosis`), ``flags_checked`` (False: the
    implementation reports no flags; results only)."""
    op: str
    format: str
    rounding: str
    policies: dict
    space: object
    impl: str
    cases: int = 0
    mismatches: int = 0
    bits_mismatches: int = 0
    flag_mismatches: int = 0
    classes: dict = dataclasses.field(default_factory=dict)
    flag_differences: dict = dataclasses.field(default_factory=dict)
    first_mismatches: list = dataclasses.field(default_factory=list)
    diagnosis: dict = dataclasses.field(default_factory=dict)
    flags_checked: bool = True
    check_nan: bool = True
    exhaustive: bool = False
    shards: int = 1
    seconds: float = 0.0
    passes: int = 1

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["ok"] = self.ok
        return json.loads(json.dumps(d, default=_json_default))

    def to_json(self, **kw) -> str:
        kw.setdefault("indent", 1)
        return json.dumps(self.to_dict(), **kw)

    def summary(self) -> str:
        """A few lines: the counts, the classes, the diagnosis sentence."""
        head = (f"{self.op} {self.format} {self.rounding} [{self.impl}]: {self.cases:,} cases, "
                f"{self.mismatches:,} mismatches ({self.bits_mismatches:,} results, "
                f"{self.flag_mismatches:,} flags only)"
                + ("" if self.flags_checked else "; no flags reported: results only"))
        lines = [head]
        if self.classes:
            lines.append("classes: " + ", ".join(f"{k} {v:,}" for k, v in self.classes.items()))
        if self.flag_differences:
            lines.append("flags: " + ", ".join(f"{k} {v:,}" for k, v in
                                               self.flag_differences.items()))
        for e in self.first_mismatches[:5]:
            lines.append(f"  case {e['case']}: {self.op}({', '.join(e['operands'])}) expected "
                         f"{e['expected']} {e['expected_flags']} got {e['got']} "
                         f"{e['got_flags'] if e['got_flags'] is not None else ''} "
                         f"[{e['class']}]")
        if self.diagnosis:
            lines.append("diagnosis: " + self.diagnosis.get("summary", ""))
        return "\n".join(lines)

    def __str__(self):
        return self.summary()


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _impl_name(impl):
    if isinstance(impl, str):
        return impl
    return getattr(impl, "name", None) or getattr(impl, "__qualname__", None) or repr(impl)


def _space_key(space):
    if isinstance(space, (tuple, list)):
        h = hashlib.sha256()
        for x in space:
            h.update(np.ascontiguousarray(x).tobytes())
        return {"cases": int(np.asarray(space[0]).size), "sha256": h.hexdigest()[:16]}
    if isinstance(space, np.integer):
        return int(space)
    return space


def verify(impl, op, fmt, rounding="nearest_even", space="exhaustive", *, seed=0,
           shards=None, jobs=1, out=None, resume=False, backend="process", scheduler=None,
           check_nan=True, diagnose=True, max_examples=20, progress=False, **policies) -> Report:
    """Check an implementation of ``op`` on ``fmt`` against the library.

    Parameters
    ----------
    impl : callable, adapter, ``"module:function"`` or ``"exec:COMMAND"``
        Takes operand encodings (unsigned arrays, one per operand), returns
        result encodings or ``(results, flags)``; see `softfloat.verify.impls`.
    op : str
        An operation name (`softfloat.verify.op_names`).
    fmt : str or Format
        The operand format (the source format of a conversion).
    rounding : str
        The rounding mode the implementation is asked for (and the library's).
    space : "exhaustive", "level1", "level2", int, dict or tuple
        See `softfloat.verify.spaces`.
    seed : int
        Seed of random spaces (and of TestFloat's random cases).
    shards, jobs, out, resume, backend, scheduler
        As in `softfloat.sweep.run_sweep`: shard count (default: one per 2**24
        cases), worker processes, a directory for shard files and the report,
        reuse of verified shard files, ``"process"`` or ``"dask"``.
    check_nan : bool
        Compare NaN results bit for bit (default); False accepts any NaN for a NaN.
    diagnose : bool
        Search the policies for the setting that explains the implementation.
    **policies
        The library's policy keywords (``ftz``, ``daz``, ``subnormals``,
        ``tininess``, ``nan``, ``overflow``): the setting the implementation
        is checked against (also sent to an SFV1 program as key=value words).
    """
    if scheme_of(rounding) is not None or "random_nbits" in policies:
        # stochastic rounding with the random bits as an operand (verify/stochastic.py)
        from .stochastic import verify_stochastic
        return verify_stochastic(impl, op, fmt, rounding, space, seed=seed, check_nan=check_nan,
                                 diagnose_fails=diagnose, max_examples=max_examples, **policies)
    t0 = time.perf_counter()
    o = get_op(op, fmt)
    mode = get_rounding(rounding)
    if mode == Rounding.STOCHASTIC:
        raise ValueError("verify checks stochastic rounding given the random bits: pass "
                         "random_nbits=N (impl then takes them as its last operand)")
    setting = {"rounding": mode.label, **normalize_policies(policies)}
    for k in DEFAULTS:
        if setting[k] != DEFAULTS[k] and k not in o.policies:
            raise ValueError(f"{o.name} does not take the policy {k}= (it takes "
                             f"{', '.join(o.policies) or 'none'})")
    try:
        o.compute([np.zeros(1, d) for d in o.in_dtypes], mode.label, **op_policies(o, setting))
    except ValueError as exc:
        raise ValueError(f"{o.describe()}: {exc}") from None
    impl_obj = as_impl(impl)
    if isinstance(impl_obj, type(None)):
        raise TypeError("impl is None")
    from .impls import results_file
    if isinstance(impl_obj, results_file) and impl_obj.kind == "lines":
        ops_file, _, _ = impl_obj.lines(o)
        space = tuple(ops_file)
    sp = make_space(o, space, seed)
    if sp.total == 0:
        raise ValueError("the space has no cases")
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if backend not in ("process", "dask"):
        raise ValueError(f"backend must be 'process' or 'dask', got {backend!r}")
    nsh = max(1, sp.total >> 24) if shards is None else shards
    if isinstance(nsh, bool) or not isinstance(nsh, (int, np.integer)) or nsh < 1:
        raise ValueError(f"shards must be a positive integer, got {shards!r}")
    nsh = int(nsh)
    if out:
        SW.check_writable(out)
    keep_all = sp.total <= KEEP_ALL
    keep = (sp.total, sp.total) if keep_all else (-(-KEEP_MISMATCHES // nsh),
                                                  -(-KEEP_MATCHES // nsh))
    impl_spec = impl if isinstance(impl, str) else impl_obj
    cfg = {"tool": "verify", "op": o.name, "format": o.fmt.name, "setting": _jsonable(setting),
           "space": _jsonable(_space_key(space)), "seed": int(seed), "shards": nsh,
           "impl": _impl_name(impl_spec), "check_nan": bool(check_nan)}
    name = _run_name(o, mode, cfg)
    task0 = {"op": o.name, "fmt": o.fmt if o.fmt.name not in _builtin_names() else o.fmt.name,
             "space": space, "seed": seed, "impl": impl_spec, "shards": nsh,
             "setting": setting, "check_nan": bool(check_nan), "keep": keep, "config": cfg}
    results = _run_pass(task0, nsh, sp.total, out, name, resume, jobs, backend, scheduler,
                        progress, f"verify {o.name} {o.fmt.name} {mode.label}")
    results.sort(key=lambda r: r["shard"])
    rep = Report(o.name, o.fmt.name, mode.label, {k: setting[k] for k in DEFAULTS},
                 _jsonable(_space_key(sp.spec if not isinstance(space, (tuple, list))
                                      else space)),
                 _impl_name(impl_spec), check_nan=bool(check_nan), shards=nsh,
                 exhaustive=sp.exhaustive)
    rep.cases = sum(r["cases"] for r in results)
    rep.mismatches = sum(r["mismatches"] for r in results)
    rep.bits_mismatches = sum(r["bits_mismatches"] for r in results)
    rep.flag_mismatches = sum(r["flag_mismatches"] for r in results)
    rep.flags_checked = all(r["flags_checked"] for r in results)
    stats = _new_stats()
    for r in results:
        _add_stats(stats, r["stats"])
    rep.classes = dict(sorted(((c, v["count"]) for c, v in stats["classes"].items()),
                              key=lambda t: -t[1]))
    fd = Counter()
    if rep.flags_checked:
        for f in FLAG_NAMES:
            for k in ("missing", "extra"):
                if stats["flags"][f][k]:
                    fd[f"{f} {k}"] = stats["flags"][f][k]
    rep.flag_differences = dict(fd.most_common())
    rep.first_mismatches = _first_examples(o, setting, results, check_nan, max_examples,
                                           rep.flags_checked)
    if diagnose:
        from .diagnosis import diagnose as _diagnose
        rep.diagnosis = _diagnose(o, setting, results, rep, keep_all, check_nan,
                                  confirm=lambda settings: _confirm(
                                      task0, settings, nsh, sp.total, out, name, resume, jobs,
                                      backend, scheduler, progress, rep))
    rep.seconds = round(time.perf_counter() - t0, 3)
    if out:
        _write_json(os.path.join(out, name + ".json"), rep.to_dict())
    return rep


def _confirm(task0, settings, nsh, total, out, name, resume, jobs, backend, scheduler,
             progress, rep):
    rep.passes = 2
    t = dict(task0)
    t["settings"] = [dict(s) for s in settings]       # NanRule values stay NanRules
    t["config"] = dict(task0["config"], confirm=[_jsonable(s) for s in settings])
    res = _run_pass(t, nsh, total, out, name + ".confirm", resume, jobs, backend, scheduler,
                    progress, "verify (diagnosis: confirming on every case)")
    per = [_new_stats() for _ in settings]
    for r in res:
        for acc, c in zip(per, r["candidates"]):
            _add_stats(acc, c)
    return per


def _first_examples(o, setting, results, check_nan, max_examples, flags_checked):
    """The first mismatches in case order, rebuilt from the kept mismatching
    cases (classified under the requested setting)."""
    pos, ops, got, gotf = [], [[] for _ in range(o.nops)], [], []
    for r in results:
        km = r["kept_mismatches"]
        pos += km["pos"]
        for j in range(o.nops):
            ops[j] += km["ops"][j]
        got += km["got"]
        gotf += km["gotf"]
    if not pos:
        return []
    p = np.asarray(pos, np.int64)
    order = np.argsort(p, kind="stable")[:max_examples]
    sub = [np.asarray(x, np.uint64)[order].astype(d) for x, d in zip(ops, o.in_dtypes)]
    g = np.asarray(got, np.uint64)[order].astype(o.out_dtype)
    gf = np.asarray(gotf, np.uint8)[order]
    exp, expf = evaluate(o, sub, setting)
    if not flags_checked:
        gf = expf.copy()
    cls, det = classify_mismatches(o, sub, exp, expf, g, gf, setting, check_nan)
    return [_example(o, p[order[i]], [x[i] for x in sub], g[i], gf[i], exp[i], expf[i],
                     cls[i], det[i], flags_checked) for i in range(order.size)]


def _jsonable(x):
    return json.loads(json.dumps(x, default=_json_default))


def _run_name(o: Op, mode, cfg):
    tag = hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:8]
    return f"verify_{o.name.replace(':', '-')}_{o.fmt.name}_{mode.label}_{tag}"


def _run_pass(task0, nsh, total, out, name, resume, jobs, backend, scheduler, progress,
              label):
    results, todo = [], []
    cfg = _jsonable(task0["config"])
    for k in range(nsh):
        path = _shard_path(out, name, k) if out else None
        lo, hi = SW.shard_range(k, nsh, total)
        if resume and path and os.path.exists(path):
            try:
                results.append(SW.verify_shard_file(path, k, cfg, lo, hi, hi - lo))
                continue
            except SW.ShardFileError as exc:
                if getattr(exc, "other_settings", False):
                    raise
                print(f"warning: {exc}; recomputing shard {k}", file=sys.stderr)
        t = dict(task0, shard=k, config=cfg)
        todo.append((t, path))
    bar = _Progress(label, int(sum(SW.shard_range(t["shard"], nsh, total)[1]
                                   - SW.shard_range(t["shard"], nsh, total)[0]
                                   for t, _ in todo)), progress)

    def done(r):
        bar.add(r["cases"])
        results.append(r)
    if todo:
        if (jobs > 1 or backend == "dask") and not _picklable(task0["impl"]):
            raise ValueError("jobs > 1 and the Dask backend need an implementation that can "
                             "be sent to another process: a 'module:function' or "
                             "'exec:COMMAND' string, or a module-level function")
        SW.run_parallel(_shard_job, [(t, p) for t, p in todo], jobs=jobs, backend=backend,
                        scheduler=scheduler, on_result=done)
    bar.close()
    return results


def _picklable(obj):
    import pickle
    try:
        pickle.dumps(obj)
        return True
    except Exception:       # noqa: BLE001  (anything pickle refuses)
        return False


def _shard_job(task, path):
    """One shard, sealed (checksummed) and written to ``path`` when given."""
    r = _seal(run_shard(task))
    if path:
        _write_json(path, r)
    return r
