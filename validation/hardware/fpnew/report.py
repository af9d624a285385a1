"""The Markdown report of an FPnew verification (from the JSON `runner` writes)."""
from __future__ import annotations

import json

_BENIGN = {"nan": "canonical"}


def _space(s) -> str:
    return s if isinstance(s, str) else f"random {int(s):,}"


def _best(r) -> str:
    d = r.get("diagnosis") or {}
    best = d.get("best")
    if best is None:
        return ""
    return ", ".join(f"{k}={v!r}" for k, v in best.items()) or "(IEEE defaults)"


def _beyond_canonical_nan(r) -> bool:
    """Mismatches that the RISC-V canonical NaN (and tininess after rounding, the
    library's default) do not explain."""
    if not r.get("mismatches"):
        return False
    d = r.get("diagnosis") or {}
    best = d.get("best") or {}
    if d.get("explained", 0) < 1.0:
        return True
    return any(k not in _BENIGN or best[k] != _BENIGN[k] for k in best if k != "rounding") \
        or best.get("rounding", r.get("rounding")) != r.get("rounding")


_OPS = ("div", "sqrt", "add", "sub", "mul", "fma", "fms", "fnma", "fnms", "fmin_riscv",
        "fmax_riscv", "eq", "lt_signaling", "le_signaling", "classify", "convert", "to_int32",
        "to_int64", "to_uint32", "to_uint64", "from_int32", "from_int64", "from_uint32",
        "from_uint64")
_FMTS = ("fp8_e5m2", "fp16", "bf16", "fp32")
_MODES = ("nearest_even", "toward_zero", "downward", "upward", "nearest_away", "odd")


def _idx(seq, x):
    return seq.index(x) if x in seq else len(seq)


def _order(r):
    op = r["op"].split(":")[0]
    return (_idx(_OPS, op), r["op"], _idx(_FMTS, r["format"]), r["unit"],
            _idx(_MODES, r["rounding"]))


def _groups(runs) -> list:
    """(unit, op, format, space) -> modes, cases, mismatches, modes beyond the NaN rule."""
    out = {}
    for r in runs:
        g = out.setdefault((r["unit"], r["op"], r["format"], _space(r["space"])),
                           {"modes": [], "cases": 0, "mismatches": 0, "beyond": [],
                            "refused": ""})
        if "cases" not in r:
            g["refused"] = (r.get("refused") or r.get("error", "")).split(": ", 1)[-1]
            continue
        g["modes"].append(r["rounding"])
        g["cases"] += r["cases"]
        g["mismatches"] += r["mismatches"]
        if _beyond_canonical_nan(r):
            g["beyond"].append(r["rounding"])
    return list(out.items())


def _example_line(op, e) -> str:
    gf = e.get("got_flags")
    return (f"`{op}({', '.join(e['operands'])})` expected `{e['expected']}` "
            f"{e.get('expected_flags')} got `{e['got']}` {gf if gf is not None else ''}"
            f" ({e.get('class', '')})")


def render(data: dict) -> str:
    meta, runs = data.get("meta", {}), data.get("runs", [])
    out = ["# FPnew checked with softfloat.verify", ""]
    out.append("The open-source RISC-V FPU FPnew (openhwgroup/cvfpu, `fpnew_top` in its "
               "RV64D_Xsflt configuration, combinational units `DEFAULT_NOREGS`), "
               "Verilated and driven through the SFV1 harness in `validation/hardware/fpnew/`, "
               "against the library's IEEE 754 defaults. Every row is one "
               "`softfloat.verify` run; the diagnosis names the library setting that "
               "reproduces FPnew on the most cases. Regenerate with "
               "`python -m validation.hardware.fpnew run` (see the README).")
    out.append("")
    out.append(f"- RTL: {meta.get('rtl_commit', '?')}; Verilator: {meta.get('verilator', '?')} "
               "(`-O0 -fno-dfg`: its optimiser miscompiles FPnew's multiplier)")
    if meta.get("build_s"):
        out.append("- build: " + ", ".join(f"{u} {s:.0f} s" for u, s in meta["build_s"].items())
                   + f" ({meta.get('cpus', '?')} CPUs, shared)")
    out.append(f"- plan: {meta.get('plan', '?')}; started {meta.get('started', '?')}, "
               f"finished {meta.get('finished', 'not yet (partial report)')}")
    if meta.get("note"):
        out.append(f"- {meta['note']}")
    out.append("")
    thr = data.get("throughput") or {}
    if thr:
        out += ["## Throughput (SFV1, random operands, best of 2)", "",
                "Wall-clock figures are from a shared, loaded 2-core machine (noisy); the "
                "CPU figures divide by the harness's own CPU time.", "",
                "| unit, op, format | cases | ops/s (wall) | ops/s (harness CPU) |",
                "|---|---:|---:|---:|"]
        for k, v in thr.items():
            out.append(f"| {k} | {v['cases']:,} | {v['ops_per_s_wall']:,} | "
                       f"{v['ops_per_s_cpu']:,} |")
        out.append("")
    runs = sorted(runs, key=_order)
    out += ["## Summary", "",
            "One line per unit, operation, format and space (for a conversion the format is "
            "the source, the op names the destination): the modes run, all their cases, the "
            "mismatches against IEEE defaults, and the modes where something other than "
            "RISC-V's canonical NaN differs (details below).", "",
            "| unit | op | format | space | modes | cases | mismatches | beyond canonical NaN |",
            "|---|---|---|---|---|---:|---:|---|"]
    for (unit, op, fmt, sp), g in _groups(runs):
        if g["refused"] and not g["modes"]:
            out.append(f"| {unit} | {op} | {fmt} | {sp} | - | - | - | not run: {g['refused']} |")
            continue
        modes = "all six" if len(g["modes"]) == 6 else ", ".join(g["modes"])
        out.append(f"| {unit} | {op} | {fmt} | {sp} | {modes} | {g['cases']:,} | "
                   f"{g['mismatches']:,} | {', '.join(g['beyond']) or 'none'} |")
    out.append("")
    out += ["## Runs", "",
            "| unit | op | format | rounding | space | cases | mismatches | diagnosis |",
            "|---|---|---|---|---|---:|---:|---|"]
    for r in runs:
        if "cases" not in r:
            why = r.get("refused") or r.get("error", "")
            out.append(f"| {r['unit']} | {r['op']} | {r['format']} | {r['rounding']} | "
                       f"{_space(r['space'])} | - | - | not run: {why.split(': ', 1)[-1]} |")
            continue
        d = r.get("diagnosis") or {}
        out.append(f"| {r['unit']} | {r['op']} | {r['format']} | {r['rounding']} | "
                   f"{_space(r['space'])} | {r['cases']:,} | {r['mismatches']:,} | "
                   f"{d.get('summary', '') if r['mismatches'] else 'bit-exact, flags too'} |")
    out.append("")
    bad = [r for r in runs if _beyond_canonical_nan(r)]
    nan_only = [r for r in runs if r.get("mismatches") and not _beyond_canonical_nan(r)]
    out += ["## Disagreements", ""]
    if nan_only:
        out.append(f"{len(nan_only)} runs differ only in NaN results: FPnew returns RISC-V's "
                   "canonical NaN (e.g. fp16 0x7e00) where the library's default propagates "
                   "the operand's payload, as IEEE 754 recommends but does not require; the "
                   "diagnosis `nan='canonical'` explains every case of those runs.")
        out.append("")
    if not bad:
        out.append("No other disagreement.")
    for r in bad:
        d = r.get("diagnosis") or {}
        out.append(f"### {r['unit']} {r['op']} {r['format']} {r['rounding']} "
                   f"({_space(r['space'])})")
        out.append("")
        out.append(f"{r['mismatches']:,} of {r['cases']:,} cases differ. Diagnosis: "
                   f"{d.get('summary', '')} (best setting: {_best(r)}; explains "
                   f"{100 * d.get('explained', 0):.2f}% of all cases).")
        if r.get("classes"):
            out.append("Classes: " + ", ".join(f"{k} {v:,}" for k, v in r["classes"].items())
                       + ".")
        if r.get("flag_differences"):
            out.append("Flags: " + ", ".join(f"{k} {v:,}" for k, v in
                                             r["flag_differences"].items()) + ".")
        un = d.get("unexplained") or {}
        if un:
            out.append("")
            out.append("Left unexplained by the best setting:")
            for cls, v in un.items():
                ex = v.get("example") if isinstance(v, dict) else None
                cnt = v.get("count") if isinstance(v, dict) else v
                line = f"- {cls}: {cnt:,}" if isinstance(cnt, int) else f"- {cls}: {cnt}"
                if ex:
                    line += " — e.g. " + (_example_line(r["op"], ex) if isinstance(ex, dict)
                                          and "operands" in ex else json.dumps(ex))
                out.append(line)
        if r.get("first_mismatches"):
            out.append("")
            out.append("Reproducers, the first of each class (operand encodings, the "
                       "library's IEEE answer, FPnew's):")
            seen = set()
            for e in r["first_mismatches"]:
                if e.get("class") in seen:
                    continue
                seen.add(e.get("class"))
                out.append(f"- case {e['case']}: " + _example_line(r["op"], e))
        out.append("")
    return "\n".join(out) + "\n"
