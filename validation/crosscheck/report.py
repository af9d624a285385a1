"""The report of a run: ``report.json`` (``{"meta": {...}, "checks": [...]}``) and
``report.md`` (a table of every check, the ulp histograms of the bounded checks,
the notes and the meaning of each cause)."""
from __future__ import annotations

import json
import os


def write_report(out, meta, results):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.json"), "w") as fh:
        json.dump({"meta": meta, "checks": results}, fh, indent=1, sort_keys=False)
    lines = [f"# torch cross-check: {meta['device']} ({meta['size']})", "",
             f"torch {meta['torch']} · softfloat {meta['softfloat']} · platform "
             f"`{meta['platform']}` · {meta['device_name']} · {meta['date']} · "
             f"{meta['seconds']:.0f} s · threads {meta['threads']}", "",
             f"**{meta['failed']} exact check(s) failed** of {meta['exact_checks']} claiming "
             f"bit-exactness; {meta['bounded_checks']} bounded.", "",
             "| check | dtype | exact | cases | mismatches | NaN-pattern | max ulp (normal) | causes | coverage |",
             "|---|---|---|---:|---:|---:|---:|---|---:|"]
    for d in results:
        causes = ", ".join(f"{k} {v}" for k, v in sorted(d.get("causes", {}).items()))
        if d.get("skipped"):
            causes = "skipped: " + d["skipped"]
        if d.get("error"):
            causes = "ERROR: " + d["error"]
        ex = "yes" if d["exact"] else "bounded"
        if d["exact"] and not d.get("nan_claimed", True):
            ex += " (NaN as NaN)"
        mark = "" if d["passed"] else " **FAIL**"
        cov = d.get("coverage")
        lines.append(f"| {d['name']}{mark} | {d['dtype']} | {ex} | {d['cases']} | "
                     f"{d['mismatches']} | {d['nan_pattern_mismatches']} | "
                     f"{_ulp_cell(d)} | {causes} | {'' if cov is None else cov} |")
    lines += ["", "## Bounded checks: ulp histograms", ""]
    for d in results:
        if "ulp_histogram" in d:
            h = d["ulp_histogram"]
            keys = sorted(h, key=lambda k: 99 if k.startswith(">") else int(k))
            lines.append(f"- {d['name']} {d['dtype']}: " + ", ".join(f"{k} ulp: {h[k]}" for k in keys))
    lines += ["", "## Notes", ""]
    for d in results:
        if d.get("note"):
            lines.append(f"- {d['name']} {d['dtype']}: {d['note']}")
        if "scale_trajectory_torch" in d:
            lines.append(f"- {d['name']} {d['dtype']}: loss scale (torch) "
                         f"{d['scale_trajectory_torch']}; equal in nn: "
                         f"{d['scale_trajectory_ours'] == d['scale_trajectory_torch']}; weights "
                         f"max |diff| {d['weights_max_abs_diff']:.3g}, bound: {d['weights_bound']}"
                         f" ({'within' if d['weights_within_bound'] else 'OUTSIDE'})")
    lines += ["- `NaN-pattern`: both results NaN with different bits; counted as mismatches "
              "only where the platform claims its NaN pattern for that path.",
              "- causes: `nan_pattern`, `nan_vs_number`, `signed_zero`, `subnormal_flush`, "
              "`tie_rule` (matches round-half-away), `double_rounding` (matches a direct "
              "rounding), `scalar_narrowing` (matches the other scalar rule), "
              "`reciprocal_division`, `unfused`, `mean_rule`, `order_of_accumulation`, "
              "`one_ulp_other`, `other`."]
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def _ulp_cell(d):
    if "max_ulp" not in d:
        return ""
    return f"{d['max_ulp']} ({d['max_ulp_normal']})"
