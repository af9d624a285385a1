"""The library's answer under a setting, and how a result is compared with it:
shared by the verification passes (`engine`) and the diagnosis (`diagnosis`)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..flags import Flags
from ..rounding import Rounding, get_rounding
from .ops import DEFAULTS, Op

FLAG_NAMES = ("invalid", "infinite", "overflow", "underflow", "inexact")
_FLAG_BITS = {n: int(Flags[n.upper()]) for n in FLAG_NAMES}


# ---------------------------------------------------------------------------
# the library under a setting
def op_policies(op: Op, setting: dict) -> dict:
    """The keywords of ``setting`` that ``op`` takes, non-default ones only."""
    return {k: setting[k] for k in op.policies
            if k in setting and setting[k] != DEFAULTS[k] and setting[k] is not None}


def evaluate(op: Op, ops, setting: dict):
    """The library's (results, flags) for ``ops`` under ``setting`` (rounding
    may be ``{"positive": m1, "negative": m2}``: m1 where the result is
    positive, m2 where negative, by the sign of m1's result; ``via``: double
    rounding through a wider format, see `through`)."""
    r = setting.get("rounding", "nearest_even")
    pol = op_policies(op, setting)
    if isinstance(r, dict):
        bp, fp = evaluate(op, ops, dict(setting, rounding=r["positive"]))
        bn, fn = evaluate(op, ops, dict(setting, rounding=r["negative"]))
        z = op.float_result
        if z is None or not z.has_sign:
            return bp, fp
        neg = (bp.astype(np.uint64) >> np.uint64(z.nbits - 1)) & np.uint64(1) == 1
        return np.where(neg, bn, bp), np.where(neg, fn, fp)
    if setting.get("via"):
        return through(op, ops, r, setting["via"], pol)
    return op.compute(ops, r if op.rounds else "nearest_even", **pol)


#: the wider formats a double rounding is looked for through
VIA_FORMATS = ("fp16", "bf16", "fp32")
#: the modes of the first rounding (into the wider format)
VIA_MODES = ("nearest_even", "toward_zero")


def via_formats(op: Op) -> list:
    """The formats `through` can take for ``op``: IEEE formats of
    `VIA_FORMATS` wider than the result (more significand bits, at least its
    exponent range) that hold every operand exactly (arithmetic) or that are
    narrower than the source (a conversion); [] for other operations."""
    from ..formats import get_format
    z = op.float_result
    if z is None or not op.rounds or op.name.startswith(("from_", "round_to_integral")):
        return []
    out = []
    for name in VIA_FORMATS:
        w = get_format(name)
        if not (w.mbits > z.mbits and w.ebits >= z.ebits):
            continue
        if op.name.startswith("convert:"):
            src = op.fmt
            if not (w.mbits < src.mbits or w.ebits < src.ebits):
                continue
        elif not (w.mbits >= op.fmt.mbits and w.ebits >= op.fmt.ebits):
            continue
        out.append(name)
    return out


def through(op: Op, ops, rounding, via, pol):
    """Double rounding: ``op`` computed in the wider format ``via["format"]``
    rounded by ``via["rounding"]``, that result rounded into the result format
    by ``rounding`` (the operands widened exactly first; ftz, overflow and
    tininess apply to the second rounding, daz to the operands, nan to both).
    Flags: those of both roundings, OR-ed. ValueError where it does not apply."""
    from .. import conversions as C
    from ..formats import get_format
    from .ops import get_op
    w = get_format(via["format"])
    if via["format"] not in via_formats(op):
        raise ValueError(f"no double rounding of {op.describe()} through {w.name}")
    first = {k: pol[k] for k in ("daz", "nan") if k in pol}
    if op.name.startswith("convert:"):
        rw, fw = C.convert(ops[0], op.fmt, w, via["rounding"], return_flags=True, **first)
    else:
        wide = [C.convert(x, op.fmt, w, "nearest_even", **first) for x in ops]
        rw, fw = get_op(op.name, w).compute(wide, via["rounding"],
                                            **{k: v for k, v in first.items() if k == "nan"})
    second = {k: pol[k] for k in ("ftz", "overflow", "tininess", "nan") if k in pol}
    r2, f2 = C.convert(rw, w, op.result, rounding, return_flags=True, **second)
    return np.asarray(r2).astype(op.out_dtype), (np.asarray(fw) | np.asarray(f2)).astype(np.uint8)


def _same_bits(op: Op, exp, got, check_nan):
    same = exp == got
    z = op.float_result
    if z is not None and not check_nan:
        same |= np.asarray(z.is_nan_bits(exp.astype(np.int64))) & np.asarray(
            z.is_nan_bits(got.astype(np.int64)))
    return same


def setting_label(setting: dict, op: Op | None = None) -> str:
    """``toward_zero``, ``nearest_even with ftz=True``, ``upward for positive and
    toward_zero for negative results``; ``the library`` for an operation that
    does not round."""
    r = setting.get("rounding", "nearest_even")
    if op is not None and not op.rounds:
        head = "the library"
    elif isinstance(r, dict):
        head = f"{r['positive']} for positive and {r['negative']} for negative results"
    else:
        head = r
    via = setting.get("via")
    if via:
        head = f"double rounding: {via['rounding']} in {via['format']}, then {head}"
    extra = [f"{k}={_show(v)}" for k, v in setting.items()
             if k not in ("rounding", "via") and v != DEFAULTS.get(k)
             and (op is None or k in op.policies)]
    return head + (" with " + ", ".join(extra) if extra else "")


def _show(v):
    from ..specialize import NanRule
    if isinstance(v, NanRule):
        return f"NanRule({v.mode!r}" + (f", {v.pattern!r})" if v.pattern is not None else ")")
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return f"{int(v):#x}"
    return repr(v) if isinstance(v, str) else str(v)


def keywords(setting: dict, op: Op) -> dict:
    """The setting as the library's keywords, those that differ from its
    defaults (rounding always when it is not nearest_even)."""
    out = {}
    r = setting.get("rounding", "nearest_even")
    if op.rounds and (isinstance(r, dict) or get_rounding(r) != Rounding.NEAREST_EVEN):
        out["rounding"] = dict(r) if isinstance(r, dict) else r
    for k in op.policies:
        v = setting.get(k, DEFAULTS[k])
        if v != DEFAULTS[k] and v is not None:
            out[k] = v
    if setting.get("via"):
        out["via"] = dict(setting["via"])
    return out


# ---------------------------------------------------------------------------
# classification (softfloat.testfloat.verify's classes and rules)
def classify_mismatches(op: Op, ops, exp, expf, got, gotf, setting, check_nan):
    """(class, detail) arrays for mismatching cases (arrays: those cases only),
    by `softfloat.testfloat.verify`'s classifier with this op's alternatives."""
    from ..testfloat import classify_mismatches as _tf_classify
    z = op.result if op.result != "class" else "bool"
    fn = SimpleNamespace(result=z, rounds=op.rounds, name=op.name)
    r = setting.get("rounding", "nearest_even")
    rlabel = r["positive"] if isinstance(r, dict) else r
    o = SimpleNamespace(rounding=rlabel, tininess=setting.get("tininess", "after"))

    def alt(**change):
        for k in change:
            if k != "rounding" and k not in op.policies:
                return None
            if k == "rounding" and not op.rounds:
                return None
        s = dict(setting)
        s.update(change)
        try:
            return evaluate(op, ops, s)
        except (ValueError, TypeError):
            return None
    return _tf_classify(fn, ops, exp, expf, got, gotf, o, check_nan, alt=alt)


def _hex(v, bits):
    return f"0x{int(v):0{max(1, (bits + 3) // 4)}x}"


def _example(op: Op, case, ops_at, got, gotf, exp, expf, cls, detail, flags_checked):
    from ..flags import flag_names
    ow = [(_bits_of(t)) for t in op.args]
    d = {"case": int(case), "operands": [_hex(x, w) for x, w in zip(ops_at, ow)],
         "expected": _hex(exp, op.out_bits), "got": _hex(got, op.out_bits),
         "expected_flags": flag_names(int(expf)),
         "got_flags": flag_names(int(gotf)) if flags_checked else None,
         "class": str(cls), "detail": str(detail)}
    return d


def _bits_of(t):
    from .spaces import _bits
    return _bits(t)


# ---------------------------------------------------------------------------
# statistics of one setting over a block
def _new_stats():
    return {"cases": 0, "bits_match": 0, "full_match": 0,
            "flags": {f: {"expected": 0, "got": 0, "missing": 0, "extra": 0}
                      for f in FLAG_NAMES},
            "classes": {}}


def _add_stats(st, other):
    st["cases"] += other["cases"]
    st["bits_match"] += other["bits_match"]
    st["full_match"] += other["full_match"]
    for f in FLAG_NAMES:
        for k in st["flags"][f]:
            st["flags"][f][k] += other["flags"][f][k]
    for c, v in other["classes"].items():
        if c in st["classes"]:
            st["classes"][c]["count"] += v["count"]
        else:
            st["classes"][c] = dict(v)
    return st


def block_stats(op: Op, ops, got, gotf, setting, check_nan, case0=0, positions=None,
                classify=True, masks=None):
    """Counts of ``setting`` on a block: cases, result bits reproduced, bits and
    flags reproduced, per flag (raised by the library / by the implementation,
    missing, extra), and the classes of the cases not reproduced with an example
    each. ``positions``: case numbers of the block's cases (default case0 + i)."""
    exp, expf = evaluate(op, ops, setting)
    same = _same_bits(op, exp, got, check_nan)
    st = _new_stats()
    n = exp.size
    st["cases"] = n
    st["bits_match"] = int(np.count_nonzero(same))
    flags_checked = gotf is not None
    gf = gotf if flags_checked else expf
    full = same & (gf == expf)
    st["full_match"] = int(np.count_nonzero(full))
    if masks is not None:
        masks.update(same=same, full=full)
        z = op.float_result
        if z is not None and z.has_nan:
            # NaN results whose bits differ from the library's NaN
            masks["nan_diff"] = (np.asarray(z.is_nan_bits(exp.astype(np.int64)))
                                 & np.asarray(z.is_nan_bits(got.astype(np.int64)))
                                 & (exp != got))
        else:
            masks["nan_diff"] = np.zeros(exp.shape, bool)
    if flags_checked:
        for f in FLAG_NAMES:
            b = _FLAG_BITS[f]
            e = (expf & b) != 0
            g = (gf & b) != 0
            st["flags"][f] = {"expected": int(np.count_nonzero(e)),
                              "got": int(np.count_nonzero(g)),
                              "missing": int(np.count_nonzero(e & ~g)),
                              "extra": int(np.count_nonzero(g & ~e))}
    bad = np.flatnonzero(~full)
    if classify and bad.size:
        sub = [x[bad] for x in ops]
        cls, det = classify_mismatches(op, sub, exp[bad], expf[bad], got[bad], gf[bad],
                                       setting, check_nan)
        for c in dict.fromkeys(cls.tolist()):
            m = np.flatnonzero(cls == c)
            j = int(m[0])
            i = int(bad[j])
            case = int(positions[i]) if positions is not None else case0 + i
            st["classes"][c] = {"count": int(m.size), "example": _example(
                op, case, [x[i] for x in ops], got[i], gf[i], exp[i], expf[i], c, det[j],
                flags_checked)}
    return st


# ---------------------------------------------------------------------------
# one shard
def _keep(store, key_rng, ops, got, gotf, pos, cap):
    """Keep a uniform random subset of at most ``cap`` cases (priority sampling:
    the ``cap`` smallest random keys)."""
    if pos.size == 0 or cap <= 0:
        return
    store["seen"] += pos.size
    keys = key_rng.random(pos.size)
    if store["keys"].size >= cap:
        sel = np.flatnonzero(keys < store["keys"].max())
    elif keys.size > cap:
        sel = np.argpartition(keys, cap - 1)[:cap]
    else:
        sel = None
    if sel is not None:
        sel.sort()
        keys, pos, got = keys[sel], pos[sel], got[sel]
        ops = [o[sel] for o in ops]
        gotf = None if gotf is None else gotf[sel]
    store["keys"] = np.concatenate([store["keys"], keys])
    store["pos"] = np.concatenate([store["pos"], pos.astype(np.int64)])
    store["ops"] = [np.concatenate([a, b.astype(np.uint64)]) for a, b in zip(store["ops"], ops)]
    store["got"] = np.concatenate([store["got"], got.astype(np.uint64)])
    store["gotf"] = np.concatenate([store["gotf"], (gotf if gotf is not None else
                                                    np.zeros(got.size, np.uint8))])
    if store["keys"].size > cap:
        k = np.argpartition(store["keys"], cap - 1)[:cap]
        k.sort()
        for f in ("keys", "pos", "got", "gotf"):
            store[f] = store[f][k]
        store["ops"] = [o[k] for o in store["ops"]]


def _empty_store(nops):
    return {"keys": np.empty(0), "pos": np.empty(0, np.int64), "ops": [np.empty(0, np.uint64)
                                                                      for _ in range(nops)],
            "got": np.empty(0, np.uint64), "gotf": np.empty(0, np.uint8), "seen": 0}


def _store_json(st):
    return {"seen": int(st["seen"]), "pos": st["pos"].tolist(),
            "ops": [o.tolist() for o in st["ops"]], "got": st["got"].tolist(),
            "gotf": st["gotf"].tolist()}
