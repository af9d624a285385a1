"""`verify`: run an implementation over an operand space, shard by shard,
compare it with the library, classify every mismatch, and diagnose.

A shard is the case range ``[total*k//S, total*(k+1)//S)`` of the space
(`softfloat.sweep.shard_range`); each is a pure function of its arguments, runs
in this process, in worker processes or on Dask (`softfloat.sweep.run_parallel`),
and is written to a checksummed shard file that ``resume=True`` reuses
(`softfloat.sweep.verify_shard_file`).

Two passes at most: the first compares with the requested setting and keeps the
diagnosis material (the mismatching cases, up to a cap, and a random sample of
the matching ones; every case of a small space); `softfloat.verification.diagnosis`
searches the policies on that material; when the material was a sample, a second
pass runs the implementation again and counts the best candidates on every case.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections import Counter

import numpy as np

from .. import sweep as SW
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
    n = n1 = n2 = nn = 0
    flags_checked = None
    stats = _new_stats()
    cand = [_new_stats() for _ in settings] if settings else None
    finished = False
    try:
        for s in range(lo, hi, BLOCK):
            e = min(hi, s + BLOCK)
            ops = sp.chunk(s, e)
            # the implementation gets copies: one that computes in place on its
            # operands (np.add(x, y, out=x)) changes neither the library's
            # operands nor the caller's arrays
            got, gotf = sess(tuple(x.copy() for x in ops), s)
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
            same, full, nd = mk["same"], mk["full"], mk["nan_diff"]
            n += got.size
            n1 += int(np.count_nonzero(~same))
            n2 += int(np.count_nonzero(same & ~full))
            nn += int(np.count_nonzero(nd))
            # the diagnosis material keeps NaN results of other bits with the
            # mismatches (whether they count or not): the NaN rule is diagnosed
            strict = full & ~nd
            bad = np.flatnonzero(~strict)
            good = np.flatnonzero(strict)
            take = lambda idx: ([o[idx] for o in ops], got[idx],
                                None if gotf is None else gotf[idx], s + idx)
            a, g, gf, p = take(bad)
            _keep(mism, rng, a, g, gf, p, cap_m)
            a, g, gf, p = take(good)
            _keep(match, rng, a, g, gf, p, cap_k)
        finished = True
    finally:
        _end_session(sess, finished)
    res = {"format_version": SW.SHARD_FORMAT, "verify_format": VERIFY_FORMAT,
           "shard": int(task["shard"]), "shards": int(task["shards"]), "lo": int(lo),
           "hi": int(hi), "cases": int(n), "seconds": round(time.perf_counter() - t0, 3),
           "flags_checked": bool(flags_checked), "config": task["config"]}
    if settings:
        res.update(mismatches=0, bits_mismatches=0, flag_mismatches=0, examples=[],
                   candidates=cand)
        return res
    res.update(mismatches=n1 + n2, bits_mismatches=n1, flag_mismatches=n2, examples=[],
               nan_differences=nn, stats=stats, kept_mismatches=_store_json(mism), kept_matches=_store_json(match))
    return res


def _end_session(sess, finished):
    """Close a session after its last block; after an error or an interrupt,
    stop it at once (an SFV1 program is killed, not waited for) without hiding
    the exception on its way."""
    if finished:
        sess.close()
        return
    stop = getattr(sess, "abort", None) or sess.close
    try:
        stop()
    except Exception:       # noqa: BLE001  (the exception in flight is the news)
        pass


# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Report:
    """What `verify` found. ``cases``, ``mismatches`` (``bits_mismatches``:
    result encodings differ; ``flag_mismatches``: same result, other flags),
    ``classes`` (mismatches by `softfloat.testfloat.CLASSES` class),
    ``flag_differences`` (``"inexact missing"``: count), ``first_mismatches``
    (case, operands, expected, got, flags, class), ``diagnosis`` (see
    `softfloat.verification.diagnosis`), ``flags_checked`` (False: the
    implementation reports no flags; results only), ``check_nan`` (NaN result
    bits compared; False, the default: any NaN for a NaN, as TestFloat),
    ``nan_differences`` (NaN results whose bits differ from the library's NaN,
    counted as mismatches only with ``check_nan``)."""
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
    check_nan: bool = False
    nan_differences: int = 0
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
        nr = (self.diagnosis or {}).get("nan_rule")
        if nr:
            line = f"NaN results: {nr['description']}"
            if self.nan_differences:
                line += (f"; {self.nan_differences:,} NaN results differ from the library's "
                         f"nan={_nan_word(self.policies.get('nan'))} in their bits"
                         + ("" if self.check_nan else " (not counted: any NaN is accepted "
                            "for a NaN; check_nan=True / --check-nan counts them)"))
            lines.append(line)
        return "\n".join(lines)

    def __str__(self):
        return self.summary()


def _nan_word(v):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return f"{int(v):#x}"
    return str(v)


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
           check_nan=False, diagnose=True, max_examples=20, progress=None, **policies) -> Report:
    """Check an implementation of ``op`` on ``fmt`` against the library.

    Parameters
    ----------
    impl : callable, adapter, ``"module:function"`` or ``"exec:COMMAND"``
        Takes operand encodings (unsigned arrays, one per operand), returns
        result encodings or ``(results, flags)``; see `softfloat.verification.impls`.
    op : str
        An operation name (`softfloat.verification.op_names`).
    fmt : str or Format
        The operand format (the source format of a conversion).
    rounding : str
        The rounding mode the implementation is asked for (and the library's).
    space : "exhaustive", "level1", "level2", int, dict or tuple
        See `softfloat.verification.spaces`.
    seed : int
        Seed of random spaces (and of TestFloat's random cases).
    shards, jobs, out, resume, backend, scheduler
        As in `softfloat.sweep.run_sweep`: shard count (default: one per 2**24
        cases), worker processes, a directory for shard files and the report,
        reuse of verified shard files, ``"process"`` or ``"dask"``.
    check_nan : bool
        Count NaN results whose bits differ from the library's NaN as
        mismatches. Default False: any NaN is accepted for a NaN, as in
        TestFloat; either way the report says which NaN rule the
        implementation follows (``diagnosis["nan_rule"]``) and how many NaN
        results differ (``nan_differences``).
    diagnose : bool
        Search the policies for the setting that explains the implementation.
    **policies
        The library's policy keywords (``ftz``, ``daz``, ``subnormals``,
        ``tininess``, ``nan``, ``overflow``, ``saturation``) or ``policy=``, a
        `softfloat.Policy` (its rounding too): the setting the implementation
        is checked against (also sent to an SFV1 program as key=value words).
    """
    if scheme_of(rounding) is not None or "random_nbits" in policies:
        # stochastic rounding with the random bits as an operand (verify/stochastic.py)
        from .stochastic import verify_stochastic
        return verify_stochastic(impl, op, fmt, rounding, space, seed=seed, check_nan=check_nan,
                                 diagnose_fails=diagnose, max_examples=max_examples, **policies)
    t0 = time.perf_counter()
    o = get_op(op, fmt)
    if policies.get("policy") is not None:
        if rounding != "nearest_even" and get_rounding(rounding) != policies["policy"].rounding:
            raise TypeError("give policy= or rounding=, not both (the policy holds the rounding)")
        rounding = policies["policy"].rounding
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
    nsh = SW.check_run_args(jobs=jobs, backend=backend,
                            shards=max(1, sp.total >> 24) if shards is None else shards,
                            total=sp.total, what=o.describe())
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
    task0 = {"op": o.name, "fmt": o.fmt if o.fmt.name not in SW.builtin_names() else o.fmt.name,
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
    rep.nan_differences = sum(r.get("nan_differences", 0) for r in results)
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
        SW.write_json(os.path.join(out, name + ".json"), rep.to_dict())
    return rep


def _confirm(task0, settings, nsh, total, out, name, resume, jobs, backend, scheduler,
             progress, rep):
    rep.passes = 2
    t = dict(task0)
    t["settings"] = [dict(s) for s in settings]       # NanRule values stay NanRules
    t["check_nan"] = True                             # the diagnosis compares NaN bits
    t["config"] = dict(task0["config"], confirm=[_jsonable(s) for s in settings],
                       nan_bits=True)
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
    """One pass over every shard on the sweep's shard engine
    (`softfloat.sweep.run_shards`): shard files reused with ``resume``."""
    if (jobs > 1 or backend == "dask") and not _picklable(task0["impl"]):
        raise ValueError("jobs > 1 and the Dask backend need an implementation that can "
                         "be sent to another process: a 'module:function' or "
                         "'exec:COMMAND' string, or a module-level function")
    cfg = _jsonable(task0["config"])

    def expected(k):
        lo, hi = SW.shard_range(k, nsh, total)
        return lo, hi, hi - lo
    results, _ = SW.run_shards(run_shard, range(nsh), lambda k: (dict(task0, shard=k,
                                                                      config=cfg),),
                               expected=expected, out=out, name=name, cfg=cfg, resume=resume,
                               jobs=jobs, backend=backend, scheduler=scheduler,
                               progress=progress, label=label)
    return results


def _picklable(obj):
    import pickle
    try:
        pickle.dumps(obj)
        return True
    except Exception:       # noqa: BLE001  (anything pickle refuses)
        return False
