"""The diagnosis: which of the library's own settings reproduces the
implementation on the most cases.

The search runs over the library's keywords: ``rounding`` (the six
deterministic modes, and one mode per sign of the result, written
``{"positive": m1, "negative": m2}``), ``ftz``, ``daz``, ``tininess``,
``nan`` (``"propagate"``, ``"propagate_last"`` (the operand-order choice:
the last NaN operand wins), ``"canonical"``, x86's negative fresh NaN with
either order, and the NaN patterns the implementation delivered), ``overflow``
(``"saturate"`` and the default), ``saturation`` for P3109 results (SatNone,
SatFinite, SatPropagate), those that the operation takes, and ``via``:
double rounding through a wider format (``{"format": "fp32", "rounding":
"nearest_even"}``: the operation rounded into fp32 first, then into the result
format by ``rounding``; `softfloat.verification.compare.through`), for the formats of
`softfloat.verification.compare.via_formats`. It is a coordinate search from the requested
setting: each round tries every single change and takes the one that
reproduces most cases (result bits first, then bits and flags; a tie keeps
the current setting, so the simplest explanation wins), until nothing
improves.

It is cheap: settings are evaluated on the diagnosis material of the first pass
only (the mismatching cases, up to a cap, and a random sample of the matching
ones, each weighted by how many cases it stands for; every case of a space of
at most `softfloat.verification.engine.KEEP_ALL` cases). When the material was a
sample, the three best settings are then counted on every case by a second
pass, and the best of those is the answer.

``rep.diagnosis`` holds:

``best``
    the setting as the library's keywords that differ from its defaults
    (``{"rounding": "toward_zero"}``, ``{"ftz": True}``; ``{}``: the defaults);
``setting``
    every keyword of that setting;
``explained``
    the share of all cases it reproduces (result and flags; the result only
    when the implementation reports no flags); ``explained_values``: the share
    whose result it reproduces;
``flags``
    per flag that differs under it: how often the library raises it
    (``expected``), how often the implementation does (``got``), ``missing`` and
    ``extra``;
``unexplained``
    the classes of the cases still not reproduced, each with a count and an
    example;
``summary``
    a sentence: "matches toward_zero except 9 cases (wrong_value 9); inexact
    missing in 8,255 of 30,721 inexact cases";
``nan_rule``
    where the implementation delivered NaN results: the NaN rule of the best
    setting (``rule``), in words (``description``, e.g. "the last NaN operand
    in argument order (b before a), quieted; an invalid operation gives
    0xfe00"), and ``differs``: how many NaN results differ in their bits from
    the library's requested rule (counted as mismatches only with
    ``check_nan``).

The diagnosis always compares NaN bits (whatever ``check_nan`` says of the
mismatch count), so that it names the NaN rule too.
``estimated``
    True only when no confirmation pass ran over a sampled material
    (``confirm`` unavailable); ``candidates`` the runners-up with their shares.
"""
from __future__ import annotations

import json

import numpy as np

from ..context import TININESS, localcontext
from ..rounding import DETERMINISTIC_MODES
from ..specialize import describe_nan
from .compare import (FLAG_NAMES, VIA_MODES, _same_bits, block_stats, evaluate, keywords,
                      setting_label, via_formats)
from .ops import Op

__all__ = ["diagnose", "candidate_values"]

_VALUE_CLASSES_EXCLUDED = ("flags_only", "tininess")


def _material(op: Op, results):
    """(ops, got, gotf, weights) of the kept cases of all shards."""
    parts = []
    for key in ("kept_mismatches", "kept_matches"):
        ops = [[] for _ in range(op.nops)]
        got, gotf = [], []
        seen = 0
        for r in results:
            k = r[key]
            seen += k["seen"]
            for j in range(op.nops):
                ops[j] += k["ops"][j]
            got += k["got"]
            gotf += k["gotf"]
        if got:
            w = seen / len(got)        # each kept case stands for this many
            parts.append(([np.asarray(x, np.uint64) for x in ops], np.asarray(got, np.uint64),
                          np.asarray(gotf, np.uint8), np.full(len(got), w)))
    if not parts:
        return None
    ops = [np.concatenate([p[0][j] for p in parts]).astype(d)
           for j, d in enumerate(op.in_dtypes)]
    got = np.concatenate([p[1] for p in parts]).astype(op.out_dtype)
    gotf = np.concatenate([p[2] for p in parts])
    w = np.concatenate([p[3] for p in parts])
    return ops, got, gotf, w


def candidate_values(op: Op, got, flags_checked) -> dict:
    """The values each keyword is tried with (see the module doc)."""
    dims = {}
    if op.rounds:
        modes = list(DETERMINISTIC_MODES)
        vals = list(modes)
        z = op.float_result
        if z is not None and z.has_sign:
            vals += [{"positive": p, "negative": n} for p in modes for n in modes if p != n]
        dims["rounding"] = vals
    z = op.float_result
    if "ftz" in op.policies and z is not None:
        dims["ftz"] = [False, True]
    if "daz" in op.policies:
        dims["daz"] = [False, True]
    if "tininess" in op.policies and flags_checked and z is not None:
        dims["tininess"] = list(TININESS)
    if "overflow" in op.policies and z is not None:
        dims["overflow"] = [None, "saturate"]
    if "saturation" in op.policies and z is not None:
        dims["saturation"] = [None, "satfinite", "satpropagate"]      # None: SatNone
    if "nan" in op.policies and z is not None and z.has_nan:
        from ..specialize import NanRule
        vals = ["propagate", "propagate_last", "canonical"]
        if z.kind == "ieee":
            vals += [NanRule("propagate", "negative"),          # x86's fresh NaN
                     NanRule("propagate_last", "negative")]
        nanm = np.asarray(z.is_nan_bits(got.astype(np.int64)), bool)
        if nanm.any():
            pats, counts = np.unique(got[nanm], return_counts=True)
            for p in pats[np.argsort(-counts, kind="stable")][:3]:
                vals.append(int(p))
        dims["nan"] = vals
    vf = via_formats(op)
    if vf:
        dims["via"] = [None] + [{"format": w, "rounding": m} for w in vf for m in VIA_MODES]
    return dims


def _key(s):
    return json.dumps(s, sort_keys=True, default=str)


class _Scorer:
    """Weighted (result bits, bits and flags) reproduced by a setting on the material."""

    def __init__(self, op, ops, got, gotf, w, flags_checked, check_nan):
        self.op, self.ops, self.got, self.gotf, self.w = op, ops, got, gotf, w
        self.flags_checked, self.check_nan = flags_checked, check_nan
        self.cache = {}
        self.settings = {}
        self.uniform = {}

    def _eval(self, s):
        r = s.get("rounding", "nearest_even")
        if isinstance(r, dict):
            bp, fp = self._eval(dict(s, rounding=r["positive"]))
            bn, fn = self._eval(dict(s, rounding=r["negative"]))
            z = self.op.float_result
            neg = (bp.astype(np.uint64) >> np.uint64(z.nbits - 1)) & np.uint64(1) == 1
            return np.where(neg, bn, bp), np.where(neg, fn, fp)
        k = _key(s)
        if k not in self.uniform:
            self.uniform[k] = evaluate(self.op, self.ops, s)
        return self.uniform[k]

    def score(self, s):
        k = _key(s)
        self.settings.setdefault(k, s)
        if k not in self.cache:
            try:
                exp, expf = self._eval(s)
            except (ValueError, TypeError):
                self.cache[k] = (-1.0, -1.0)
                return self.cache[k]
            same = _same_bits(self.op, exp, self.got, self.check_nan)
            full = same & (self.gotf == expf) if self.flags_checked else same
            self.cache[k] = (round(float(self.w[same].sum()), 6),
                             round(float(self.w[full].sum()), 6))
        return self.cache[k]


def _search(sc: _Scorer, start: dict, dims: dict):
    cur = dict(start)
    cur_sc = sc.score(cur)
    for _ in range(6):
        best, best_sc = None, cur_sc
        for d, vals in dims.items():
            for v in vals:
                if v == cur.get(d):
                    continue
                cand = dict(cur, **{d: v})
                s = sc.score(cand)
                if s > best_sc:
                    best, best_sc = cand, s
        if best is None:
            break
        cur, cur_sc = best, best_sc
    return cur


def diagnose(op: Op, setting: dict, results, rep, keep_all, check_nan, confirm=None) -> dict:
    """The diagnosis of a verify run (see the module doc). NaN bits are
    always compared here (``check_nan`` is the report's business)."""
    check_nan = True
    flags_checked = rep.flags_checked
    n = rep.cases
    mat = _material(op, results)
    if rep.mismatches == 0 and rep.nan_differences == 0:
        d = _result(op, setting, n, _perfect_stats(n), flags_checked, False, [])
        return _with_nan_rule(d, op, setting, mat, rep)
    ops, got, gotf, w = mat
    with localcontext(fast_paths=False):
        sc = _Scorer(op, ops, got, gotf, w, flags_checked, check_nan)
        dims = candidate_values(op, got, flags_checked)
        best = _search(sc, setting, dims)
        ranked = sorted(sc.cache.items(), key=lambda kv: kv[1], reverse=True)
    top = [best]
    for k, v in ranked:
        if k != _key(best) and len(top) < 3 and v[0] >= 0:
            top.append(sc.settings[k])
    if keep_all:
        stats = [block_stats(op, ops, got, gotf if flags_checked else None, s, check_nan,
                             positions=_positions(results)) for s in top]
        estimated = False
    elif confirm is not None:
        stats = confirm(top)
        estimated = False
    else:
        stats = [block_stats(op, ops, got, gotf if flags_checked else None, s, check_nan)
                 for s in top]
        estimated = True
    order = sorted(range(len(top)), key=lambda i: (stats[i]["bits_match"],
                                                   stats[i]["full_match"], -i), reverse=True)
    bi = order[0]
    runners = [{"setting": keywords(top[i], op),
                "explained": _share(stats[i], flags_checked, n)} for i in order[1:]]
    d = _result(op, top[bi], n, stats[bi], flags_checked, estimated, runners)
    return _with_nan_rule(d, op, top[bi], mat, rep)


def _with_nan_rule(d, op, s, mat, rep):
    """``d`` with its ``nan_rule`` (see the module doc) where the material holds
    NaN results of the implementation."""
    z = op.float_result
    if z is None or not z.has_nan or mat is None or "nan" not in op.policies:
        return d
    got = mat[1]
    if not np.asarray(z.is_nan_bits(got.astype(np.int64))).any():
        return d
    rule = s.get("nan", "propagate")
    try:
        text = describe_nan(rule, z)
    except ValueError:
        return d
    d["nan_rule"] = {"rule": rule, "description": text, "differs": int(rep.nan_differences)}
    return d


def _positions(results):
    pos = []
    for key in ("kept_mismatches", "kept_matches"):
        for r in results:
            pos += r[key]["pos"]
    return np.asarray(pos, np.int64)


def _perfect_stats(n):
    return {"cases": n, "bits_match": n, "full_match": n,
            "flags": {f: {"expected": 0, "got": 0, "missing": 0, "extra": 0}
                      for f in FLAG_NAMES}, "classes": {}}


def _share(st, flags_checked, n):
    return round((st["full_match"] if flags_checked else st["bits_match"]) / n, 6) if n else 1.0


def _result(op, s, n, st, flags_checked, estimated, runners):
    if st["cases"] != n and st["cases"]:
        # material statistics are weighted estimates: scale to the cases
        f = n / st["cases"]
    else:
        f = 1.0
    flags = {}
    if flags_checked:
        for name in FLAG_NAMES:
            v = st["flags"][name]
            if v["missing"] or v["extra"]:
                flags[name] = {k: int(round(x * f)) for k, x in v.items()}
    unexplained = {c: {"count": int(round(v["count"] * f)), "example": v["example"]}
                   for c, v in sorted(st["classes"].items(), key=lambda t: -t[1]["count"])}
    value_bad = n - int(round(st["bits_match"] * f))
    label = setting_label(s, op)
    if value_bad == 0:
        head = f"matches {label} on every case" + ("" if flags_checked or True else "")
    else:
        vc = [(c, v["count"]) for c, v in unexplained.items()
              if c not in _VALUE_CLASSES_EXCLUDED]
        head = (f"matches {label} except {value_bad:,} case{'s' if value_bad != 1 else ''}"
                + (" (" + ", ".join(f"{c} {k:,}" for c, k in vc) + ")" if vc else ""))
    tail = []
    for name, v in flags.items():
        if v["missing"]:
            tail.append(f"{name} missing in {v['missing']:,} of {v['expected']:,} {name} cases")
        if v["extra"]:
            tail.append(f"{name} raised in {v['extra']:,} cases where the library does not")
    if not flags_checked:
        tail.append("no flags reported (results compared only)")
    summary = "; ".join([head] + tail) + (" (estimated on a sample)" if estimated else "")
    return {"best": keywords(s, op), "setting": {k: (v if not isinstance(v, np.integer)
                                                      else int(v)) for k, v in s.items()},
            "explained": _share(st, flags_checked, st["cases"] or n),
            "explained_values": round(st["bits_match"] / (st["cases"] or n), 6) if n else 1.0,
            "cases": n, "flags": flags, "unexplained": unexplained, "summary": summary,
            "estimated": estimated, "candidates": runners}
