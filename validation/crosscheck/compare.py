"""The comparison of torch's encodings with a model's: distances in units in the
last place on the ordered encodings, and `Result`, one check's outcome over its
chunks (cases, mismatches, NaN-pattern differences counted where the platform
claims them, each mismatch classified by cause, examples; for bounded checks the
largest ulp distance and a histogram)."""
from __future__ import annotations

import time

import numpy as np


def _isnan(bits, f):
    return f.is_nan_bits(np.asarray(bits).astype(np.int64))


def ordered(bits: np.ndarray, f) -> np.ndarray:
    """Encodings mapped to integers that are consecutive along the real line (+0 = -0)."""
    b = bits.astype(np.int64)
    mag = b & (f.sign_mask - 1)
    return np.where(b & f.sign_mask, -mag, mag)


def ulp_distance(got, exp, f) -> np.ndarray:
    return np.abs(ordered(got, f) - ordered(exp, f))


def _is_sub(b, f):
    b = b.astype(np.int64) & (f.sign_mask - 1)
    return (b > 0) & (b < (1 << f.mbits))


def _is_zero(b, f):
    return (b.astype(np.int64) & (f.sign_mask - 1)) == 0


class Result:
    """One check's accumulated outcome (merged over chunks)."""

    def __init__(self, name, dtype, exact, nan_claimed, what, bounded=False):
        self.d = {"name": name, "dtype": dtype, "exact": bool(exact),
                  "nan_claimed": bool(nan_claimed), "what": what, "cases": 0,
                  "mismatches": 0, "nan_pattern_mismatches": 0, "causes": {},
                  "examples": []}
        self.bounded = bounded
        if bounded:
            self.d["max_ulp"] = 0
            self.d["max_ulp_normal"] = 0      # over results that are normal numbers on both sides
            self.d["ulp_histogram"] = {}
        self.t0 = time.perf_counter()

    def add(self, got, exp, f, inputs=(), alts=None):
        """Compare encodings ``got`` (torch) with ``exp`` (model). ``inputs``: arrays
        (encodings or floats) shown in examples; ``alts``: {cause: callable(mask) ->
        encodings of an alternative model on the masked elements}; a mismatch equal
        to an alternative is filed under that cause."""
        got = np.asarray(got).reshape(-1)
        exp = np.asarray(exp).reshape(-1)
        inputs = [np.broadcast_to(np.asarray(i), got.shape).reshape(-1) if np.ndim(i) else
                  np.full(got.shape, i) for i in inputs]
        d = self.d
        d["cases"] += int(got.size)
        diff = got != exp
        if self.bounded:
            both = ~(_isnan(got, f) | _isnan(exp, f))
            u = ulp_distance(got[both], exp[both], f)
            if u.size:
                d["max_ulp"] = max(d["max_ulp"], int(u.max()))
                nrm = ~(_is_sub(got[both], f) | _is_zero(got[both], f) |
                        _is_sub(exp[both], f) | _is_zero(exp[both], f))
                if nrm.any():
                    d["max_ulp_normal"] = max(d["max_ulp_normal"], int(u[nrm].max()))
                vals, counts = np.unique(np.minimum(u, 16), return_counts=True)
                for v, c in zip(vals, counts):
                    k = str(int(v)) if v < 16 else ">=16"
                    d["ulp_histogram"][k] = d["ulp_histogram"].get(k, 0) + int(c)
        if not diff.any():
            return
        idx = np.nonzero(diff)[0]
        g, e = got[idx], exp[idx]
        gn, en = _isnan(g, f), _isnan(e, f)
        cause = np.full(idx.size, "", dtype=object)
        nanpat = gn & en
        cause[nanpat] = "nan_pattern"
        cause[(gn ^ en) & (cause == "")] = "nan_vs_number"
        zz = _is_zero(g, f) & _is_zero(e, f) & (cause == "")
        cause[zz] = "signed_zero"
        fl = (cause == "") & ((_is_zero(g, f) & _is_sub(e, f)) | (_is_zero(e, f) & _is_sub(g, f)))
        cause[fl] = "subnormal_flush"
        for name, fn in (alts or {}).items():
            open_ = cause == ""
            if not open_.any():
                break
            m = np.zeros(got.size, bool)
            m[idx[open_]] = True
            try:
                alt = np.asarray(fn(m)).reshape(-1)
            except Exception as ex:  # an alternative model must not break the check
                d.setdefault("alt_errors", []).append(f"{name}: {ex!r}")
                continue
            hit = alt == g[open_]
            sel = np.nonzero(open_)[0][hit]
            cause[sel] = name
        rest = cause == ""
        u = ulp_distance(g[rest], e[rest], f)
        cause[rest] = np.where(u == 1, "one_ulp_other", "other")
        counted = ~nanpat | d["nan_claimed"]
        d["mismatches"] += int(counted.sum())
        d["nan_pattern_mismatches"] += int(nanpat.sum())
        for c in np.unique(cause):
            d["causes"][c] = d["causes"].get(c, 0) + int((cause == c).sum())
        # a few examples, the counted ones first
        order = np.argsort(~counted, kind="stable")[:max(0, 8 - len(d["examples"]))]
        w = 4 if f.nbits <= 16 else 8
        for j in order:
            i = idx[j]
            ex = {"cause": cause[j], "torch": f"{int(g[j]):#0{w + 2}x}",
                  "model": f"{int(e[j]):#0{w + 2}x}", "inputs": []}
            for arr in inputs:
                v = arr[i]
                ex["inputs"].append(f"{int(v):#x}" if arr.dtype.kind == "u" else repr(float(v)))
            d["examples"].append(ex)

    def finish(self, **extra):
        self.d.update(extra)
        self.d["seconds"] = round(time.perf_counter() - self.t0, 3)
        self.d["passed"] = (not self.d["exact"]) or self.d["mismatches"] == 0
        return self.d
