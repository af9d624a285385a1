"""Checking a device's results: `verify` compares them with `expected`,
classifies every mismatch (`CLASSES`) and returns a `Report`."""
from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter

import numpy as np

from ..flags import Flags
from ..formats import FP64, Format
from ..rounding import TESTFLOAT_NAMES, Rounding, get_rounding
from .expected import expected, is_nan, is_snan, values
from .lineio import _column
from .names import INT_TYPES, Function, hex_width, parse_function
from .options import Options, make_options

__all__ = ["Report", "CLASSES", "verify", "flag_letters", "classify_mismatches"]

_FLAG_LETTERS = ((Flags.INVALID, "v"), (Flags.INFINITE, "i"), (Flags.OVERFLOW, "o"),
                 (Flags.UNDERFLOW, "u"), (Flags.INEXACT, "x"))

#: Mismatch classes, most specific first (see `verify`).
CLASSES = {
    "flags_only": "the result is right, the flags differ",
    "nan_payload": "both NaN, different NaN encodings (only with -checkNaNs)",
    "nan_vs_number": "a NaN where a number was expected, or a number for a NaN",
    "signed_zero": "zero of the wrong sign",
    "flush_to_zero": "a subnormal result flushed to zero (FTZ)",
    "subnormal_input_flushed": "subnormal operands read as zero (DAZ)",
    "tie_rule": "a tie rounded by the other nearest rule (ties-to-even vs ties-away)",
    "rounding_mode": "the result of another rounding mode",
    "tininess": "underflow flag of the other tininess rule",
    "saturation": "largest finite value where infinity (or NaN) was expected, or back",
    "one_ulp": "one unit in the last place off (adjacent encodings)",
    "invalid_int": "an integer conversion's invalid result has another value",
    "wrong_value": "a different value, none of the above",
}


def flag_letters(f: int) -> str:
    """TestFloat's 5-character flags notation (``v i o u x``, ``.`` for clear)."""
    return "".join(c if int(f) & b else "." for b, c in _FLAG_LETTERS)


def _flag_list(f: int) -> list:
    return [b.name.lower() for b, _ in _FLAG_LETTERS if int(f) & b]


def _testfloat_repr(bits: int, t) -> str:
    """TestFloat's decomposed notation: sign, exponent field, '.', fraction."""
    if t == "bool":
        return str(int(bits))
    if isinstance(t, str):
        return f"{int(bits):0{hex_width(t)}X}"
    E, M = t.ebits, t.mbits
    s = "-" if (int(bits) >> (E + M)) & 1 else "+"
    e = (int(bits) >> M) & ((1 << E) - 1)
    f = int(bits) & ((1 << M) - 1)
    return f"{s}{e:0{(E + 3) // 4}X}.{f:0{(M + 3) // 4}X}"


def _value_repr(bits: int, t) -> str:
    if t == "bool":
        return "true" if int(bits) else "false"
    if isinstance(t, str):
        nb, signed = INT_TYPES[t]
        v = int(bits)
        return str(v - (1 << nb) if signed and v >> (nb - 1) else v)
    b = np.array([bits], np.uint64)
    if is_nan(b, t)[0]:
        kind = "sNaN" if is_snan(b, t)[0] else "NaN"
        sign = "-" if (int(bits) >> (t.nbits - 1 if t != FP64 else 63)) & 1 else ""
        return f"{sign}{kind}"
    return repr(float(values(b, t, False)[0]))


def _ordinal(bits: np.ndarray, t) -> np.ndarray:
    """Monotone integer of an encoding (adjacent values differ by 1; -0 == +0)."""
    b = bits.astype(np.int64)
    nb = 64 if t == FP64 else t.nbits
    sign = (b >> (nb - 1)) & 1
    mag = b & ((1 << (nb - 1)) - 1)
    return np.where(sign == 1, -mag, mag)


def _is_zero(bits, t):
    nb = 64 if t == FP64 else t.nbits
    return (bits.astype(np.uint64) & np.uint64((1 << (nb - 1)) - 1)) == 0


@dataclasses.dataclass
class Report:
    """The outcome of `verify`: counts, classes and the first ``errors`` mismatches.

    ``counts`` maps each class (`CLASSES`) to its number of mismatches;
    ``flag_counts`` counts flag differences (``"underflow missing"``, ...);
    ``records`` are dicts with the case number (1-based line), operands, expected
    and got (hex, value, TestFloat notation, flags), the flag difference, the
    class and a detail sentence.
    """
    function: str
    options: dict
    cases: int = 0
    mismatches: int = 0
    counts: Counter = dataclasses.field(default_factory=Counter)
    flag_counts: Counter = dataclasses.field(default_factory=Counter)
    records: list = dataclasses.field(default_factory=list)
    errors: int = 20
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    def merge(self, other: "Report") -> "Report":
        self.cases += other.cases
        self.mismatches += other.mismatches
        self.counts.update(other.counts)
        self.flag_counts.update(other.flag_counts)
        room = (self.errors - len(self.records)) if self.errors else len(other.records)
        self.records += other.records[:max(room, 0)]
        self.seconds += other.seconds
        return self

    def to_dict(self) -> dict:
        return {"function": self.function, "options": self.options, "cases": self.cases,
                "mismatches": self.mismatches, "ok": self.ok,
                "classes": dict(self.counts.most_common()),
                "flag_differences": dict(self.flag_counts.most_common()),
                "records": self.records, "seconds": round(self.seconds, 3)}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    def format_text(self) -> str:
        lines = []
        for r in self.records:
            ops = "  ".join(f"{o['testfloat']}" for o in r["operands"])
            lines.append(f"{ops}  => {r['got']['testfloat']} {r['got']['flag_letters']}"
                         f"  expected: {r['expected']['testfloat']} "
                         f"{r['expected']['flag_letters']}")
            opv = ", ".join(f"{o['hex']} ({o['value']})" for o in r["operands"])
            lines.append(f"\tcase {r['case']}: {self.function}({opv})")
            for k in ("expected", "got"):
                v = r[k]
                lines.append(f"\t  {k:8s} {v['hex']} ({v['value']})  flags "
                             f"{v['flag_letters']} {v['flags']}")
            fd = r["flag_difference"]
            extra = ""
            if fd["missing"] or fd["extra"]:
                extra = (f"; flags missing: {', '.join(fd['missing']) or '-'}, extra: "
                         f"{', '.join(fd['extra']) or '-'}")
            lines.append(f"\t  class    {r['class']}: {r['detail']}{extra}")
        lines.append(f"{self.function}: {self.cases} cases, {self.mismatches} mismatches"
                     + ("" if self.ok else
                        " (" + ", ".join(f"{k} {v}" for k, v in self.counts.most_common()) + ")"))
        if self.flag_counts:
            lines.append("flag differences: " + ", ".join(
                f"{k} {v}" for k, v in self.flag_counts.most_common()))
        if self.errors and self.mismatches > len(self.records):
            lines.append(f"(first {len(self.records)} mismatches shown; -errors 0 shows all)")
        return "\n".join(lines) + "\n"


def _alt(fn, ops, o: Options, **change):
    """Expected results under changed options, or None where they do not apply."""
    try:
        return expected(fn, *ops, options=o.replace(**change))
    except (ValueError, NotImplementedError, TypeError):
        return None


def classify_mismatches(fn, ops, expected, expected_flags, got, got_flags, options,
                        check_nans=False, alt=None):
    """The class and a detail sentence of each mismatching case (arrays: those
    cases only), as ``testfloat ver`` reports them (`CLASSES`). ``fn``: a
    `Function` (or any object with its ``result``, ``rounds`` and ``name``);
    ``options``: the `Options` (``rounding``, ``tininess``) the expectation
    was computed under; ``alt(**change)``: the expected (results, flags) of
    these cases under changed options, or None where a change does not apply
    (default: the TestFloat expectation with them). Returns ``(classes,
    details)``, object arrays."""
    return _classify(fn, ops, expected, expected_flags, got, got_flags, options, check_nans,
                     alt=alt)


def _classify(fn: Function, ops, er, ef, gr, gf, o: Options, check_nans: bool, alt=None):
    """(class, detail) for each mismatching case (arrays hold mismatches only).
    ``alt(**change)``: the expected (result, flags) of these cases under changed
    options, or None where they do not apply (default: `expected` with them)."""
    if alt is None:
        def alt(**change):
            return _alt(fn, ops, o, **change)
    n = er.size
    cls = np.array(["wrong_value"] * n, dtype=object)
    det = np.array([""] * n, dtype=object)
    done = np.zeros(n, bool)
    z = fn.result

    def mark(mask, c, d):
        m = mask & ~done
        cls[m] = c
        det[m] = d
        done[m] = True

    if isinstance(z, Format):
        en, gn = is_nan(er, z), is_nan(gr, z)
        same = (er == gr) | (en & gn & (not check_nans))
    else:
        same = er == gr
    # 1. Right value, wrong flags (with a named cause where one fits).
    if same.any():
        for tn in ("before", "after"):
            if tn != o.tininess:
                tn_alt = alt(tininess=tn)
                if tn_alt is not None:
                    m = same & (np.asarray(tn_alt[1]) == gf)
                    mark(m, "tininess", f"flags are those of tininess detected {tn} rounding")
        mark(same, "flags_only", "the result is right, the flags differ")
    if isinstance(z, Format):
        mark(en & gn, "nan_payload", "both NaN, different encodings")
        mark(en & ~gn, "nan_vs_number", "a number delivered where NaN was expected")
        mark(gn & ~en, "nan_vs_number", "a NaN delivered where a number was expected")
        ez, gz = _is_zero(er, z), _is_zero(gr, z)
        mark(ez & gz, "signed_zero", "zero of the wrong sign")
    # 2. The result of another policy: each candidate is first matched on result
    #    and flags, then on the result alone.
    cands = []
    if isinstance(z, Format):
        cands += [(dict(ftz=True), "flush_to_zero", "subnormal result flushed to zero"),
                  (dict(daz=True), "subnormal_input_flushed",
                   "the result of reading subnormal operands as zero (DAZ)")]
    mode = get_rounding(o.rounding)
    if fn.rounds:
        if mode in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY):
            r = Rounding.NEAREST_AWAY if mode == Rounding.NEAREST_EVEN else Rounding.NEAREST_EVEN
            cands.append((dict(rounding=r.label), "tie_rule",
                          "a tie rounded " + ("away from zero" if r == Rounding.NEAREST_AWAY
                                              else "to even")))
        for r in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.TOWARD_ZERO,
                  Rounding.UPWARD, Rounding.DOWNWARD, Rounding.ODD):
            if r != mode:
                cands.append((dict(rounding=r.label), "rounding_mode",
                              f"the result of rounding {r.label} (-r{TESTFLOAT_NAMES[r]})"))
    if isinstance(z, Format):
        if z.kind == "ieee" or z == FP64:
            cands += [(dict(overflow="saturate"), "saturation",
                       "largest finite value where infinity was expected (saturation)"),
                      (dict(overflow="ieee"), "saturation",
                       "infinity where the largest finite value was expected")]
        else:
            cands.append((dict(overflow="saturate"), "saturation",
                          "largest finite value where NaN was expected (saturation)"))
    alts = [(alt(**ch), c, d) for ch, c, d in cands]
    for strict in (True, False):
        for got_alt, c, d in alts:
            if got_alt is not None:
                m = np.asarray(got_alt[0]) == gr
                if strict:
                    m &= np.asarray(got_alt[1]) == gf
                mark(m, c, d)
    if isinstance(z, Format):
        tiny = (~ez) & ((er.astype(np.uint64) & np.uint64((1 << (z.nbits - 1)) - 1))
                        < np.uint64(1 << z.mbits)) if z != FP64 else np.zeros(n, bool)
        mark(tiny & gz, "flush_to_zero", "subnormal result flushed to zero")
        near = (np.abs(_ordinal(er, z) - _ordinal(gr, z)) == 1) & ~en & ~gn
        mark(near, "one_ulp", "one ulp off")
    elif isinstance(z, str) and z != "bool":
        if (ef & Flags.INVALID).any():
            mark((ef & Flags.INVALID) != 0, "invalid_int",
                 "invalid conversion: another integer value")
        d = er.astype(np.int64) - gr.astype(np.int64)
        mark(np.abs(d) == 1, "one_ulp", "off by one")
    return cls, det


def _int_lenient(fn, er, ef, gr, gf):
    """TestFloat's leniency without -checkInvInts: for an invalid conversion to
    an integer any of the type's sentinel values (largest positive, most
    negative, or zero/largest for unsigned) is accepted."""
    nb, signed = INT_TYPES[fn.result]
    g = gr.astype(np.uint64)
    if signed:
        sentinel = (g == np.uint64((1 << (nb - 1)) - 1)) | (g == np.uint64(1 << (nb - 1)))
    else:
        sentinel = (g == np.uint64((1 << nb) - 1)) | (g == 0)
    return (ef == Flags.INVALID) & (gf == Flags.INVALID) & sentinel


def verify(function, *ops, result, flags=None, options: Options | None = None,
           check_nans=False, check_inv_ints=False, errors=20, start=0, **opts) -> Report:
    """Check a device's results against softfloat's.

    ``ops`` are operand arrays, ``result``/``flags`` the device's results and
    flags (integer arrays of the same length, encodings of the result type and
    flags 0 .. 0x1F, never converted: floats or values out of range raise;
    ``flags=None`` for a device that cannot report them: only results are
    compared). NaN results match any NaN unless
    ``check_nans``; an invalid integer conversion matches any of TestFloat's
    accepted values unless ``check_inv_ints``. Every mismatch is classified
    (`CLASSES`); the first ``errors`` (0: all) are kept as records. ``start``
    numbers the cases (records say ``case = start + index + 1``, the line).
    """
    t0 = time.perf_counter()
    fn = parse_function(function)
    o = make_options(options, opts)
    er, ef = expected(fn, *ops, options=o)
    er = np.asarray(er).reshape(-1)
    ef = np.asarray(ef, np.uint8).reshape(-1)
    gr = _column(result, fn.result, "result").astype(er.dtype)
    check_flags = flags is not None
    gf = _column(flags, "flags", "flags").astype(np.uint8) if check_flags else ef.copy()
    if gr.size != er.size or gf.size != er.size:
        raise ValueError(f"{fn.name}: {er.size} cases but {gr.size} results and "
                         f"{gf.size} flags")
    ops = [np.broadcast_to(np.asarray(x), er.shape).reshape(-1) for x in ops]
    z = fn.result
    same = er == gr
    if isinstance(z, Format) and not check_nans:
        same |= is_nan(er, z) & is_nan(gr, z)
    bad = ~same | (ef != gf)
    if fn.op == "to_int" and not check_inv_ints:
        bad &= ~_int_lenient(fn, er, ef, gr, gf)
    rep = Report(fn.name, dict(o.as_dict(), check_nans=check_nans,
                               check_inv_ints=check_inv_ints, check_flags=check_flags),
                 cases=int(er.size),
                 errors=errors)
    idx = np.flatnonzero(bad)
    rep.mismatches = int(idx.size)
    if idx.size:
        sub = [x[idx] for x in ops]
        cls, det = _classify(fn, sub, er[idx], ef[idx], gr[idx], gf[idx], o, check_nans)
        rep.counts.update(cls.tolist())
        missing = ef[idx] & ~gf[idx]
        extra = gf[idx] & ~ef[idx]
        for b, _ in _FLAG_LETTERS:
            nm = int(np.count_nonzero(missing & b))
            nx = int(np.count_nonzero(extra & b))
            if nm:
                rep.flag_counts[f"{b.name.lower()} missing"] += nm
            if nx:
                rep.flag_counts[f"{b.name.lower()} extra"] += nx
        keep = idx.size if not errors else min(errors, idx.size)
        for j in range(keep):
            i = int(idx[j])
            rep.records.append({
                "case": start + i + 1,
                "operands": [{"hex": f"{int(x[i]):0{hex_width(t)}X}",
                              "value": _value_repr(int(x[i]), t),
                              "testfloat": _testfloat_repr(int(x[i]), t)}
                             for x, t in zip(ops, fn.args)],
                "expected": _side(int(er[i]), int(ef[i]), z),
                "got": _side(int(gr[i]), int(gf[i]), z),
                "flag_difference": {"missing": _flag_list(int(missing[j])),
                                    "extra": _flag_list(int(extra[j]))},
                "class": str(cls[j]), "detail": str(det[j])})
    rep.seconds = time.perf_counter() - t0
    return rep


def _side(bits: int, flags: int, t) -> dict:
    return {"hex": f"{bits:0{hex_width(t)}X}", "value": _value_repr(bits, t),
            "testfloat": _testfloat_repr(bits, t), "flags": f"{flags:02X}",
            "flag_letters": flag_letters(flags)}

