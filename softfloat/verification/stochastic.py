"""Verify and diagnose a device's stochastic rounding, given its random bits.

A stochastic conversion or operation is a function of its operands *and* the
random integer R it was given; with R an operand, it has one right answer and
can be checked bit for bit::

    rep = sf.verify(impl, "convert:fp8_e4m3", "fp16", "stochastic_a", random_nbits=4)

``impl(*operands, random_bits)`` returns the result encodings (or ``(results,
flags)``; flags are not compared). The operand space crosses the value operands
with every R < 2**N (``space="exhaustive"``: every encoding of each operand
times every R), or draws ``space=n`` random cases, or takes a tuple of operand
arrays whose last one is R.

The diagnosis (`diagnose`) names what the device does when it is not the
declared rounding: the scheme (``stochastic_a``, ``_b``, ``_c``,
``stochastic_add``, or the seeded mode's rule ``stochastic``), the number of
random bits n it really uses and how it reads the N given (its low n bits, its
top n bits, or all N placed in a wider n-bit field at the bottom or the top: a
layout off by n - N bits), and its overflow rule (as asked, or saturating; for
a P3109 format its saturation mode: SatNone, SatFinite or SatPropagate). It
scores every candidate on a sample of the cases (the mismatches first), then
confirms the best on all of them; candidates that explain every case equally
are all reported (the space cannot tell them apart).
"""
from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from .. import arith as A
from .. import conversions as C
from ..formats import get_format
from ..rounding import STOCHASTIC_SCHEMES
from ..stochastic import max_random_nbits, scheme_of

__all__ = ["verify_stochastic", "SRReport", "diagnose", "SR_SCHEMES"]

#: every scheme a device's stochastic rounding is compared with
SR_SCHEMES = STOCHASTIC_SCHEMES + ("stochastic",)
_ARITY = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "sqrt": 1}
MAX_CASES = 1 << 26
_SAMPLE = 4096


@dataclasses.dataclass
class SRReport:
    """What `verify_stochastic` found; ``ok`` when every result matched."""
    op: str
    fmt: str
    rounding: str
    random_nbits: int
    cases: int
    mismatches: int
    examples: list
    diagnosis: dict | None

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    def summary(self) -> str:
        head = (f"{self.op} {self.fmt} {self.rounding} N={self.random_nbits}: {self.cases} cases, "
                f"{self.mismatches} mismatches")
        if self.diagnosis:
            head += "\n  diagnosis: " + self.diagnosis["summary"]
        return head

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _op_parts(op, fmt):
    f = get_format(fmt)
    if op.startswith("convert:"):
        return "convert", f, get_format(op.split(":", 1)[1]), 1
    if op not in _ARITY:
        raise ValueError(f"stochastic verify takes convert:<format>, {', '.join(_ARITY)}; got "
                         f"{op!r}")
    return op, f, f, _ARITY[op]


def library(op, fmt, operands, R, rounding, nbits, **policies):
    """The library's results for the cases (operand arrays and R, equal lengths)."""
    kind, f, dst, _ = _op_parts(op, fmt)
    R = np.asarray(R).astype(np.uint64)
    if kind == "convert":
        return C.convert(operands[0], f, dst, rounding, random_bits=R, random_nbits=nbits,
                         **policies)
    return getattr(A, kind)(*operands, f, rounding, random_bits=R, random_nbits=nbits,
                            **policies)


def _space(op, fmt, nbits, space, seed):
    kind, f, _, nops = _op_parts(op, fmt)
    if isinstance(space, tuple):
        *ops, R = (np.asarray(x) for x in space)
        return [o.astype(f.dtype) for o in ops], R.astype(np.uint64)
    if space == "exhaustive":
        total = (1 << (f.nbits * nops)) << nbits
        if total > MAX_CASES:
            raise ValueError(f"the exhaustive space of {op} on {f.name} with N={nbits} has "
                             f"{total} cases (more than {MAX_CASES}); give space=n (random)")
        codes = np.arange(1 << f.nbits, dtype=np.uint64)
        grids = np.meshgrid(*([codes] * nops), np.arange(1 << nbits, dtype=np.uint64),
                            indexing="ij")
        *ops, R = (g.reshape(-1) for g in grids)
        return [o.astype(f.dtype) for o in ops], R
    if isinstance(space, (int, np.integer)) and not isinstance(space, bool) and space > 0:
        rng = np.random.default_rng(seed)
        ops = [rng.integers(0, 1 << f.nbits, int(space), dtype=np.uint64).astype(f.dtype)
               for _ in range(nops)]
        return ops, rng.integers(0, 1 << nbits, int(space), dtype=np.uint64)
    raise ValueError(f"space must be 'exhaustive', a positive int or a tuple of operand arrays "
                     f"(R last), got {space!r}")


def _equal(dst, got, want, check_nan):
    eq = got.astype(np.int64) == want.astype(np.int64)
    if not check_nan:
        eq |= dst.is_nan_bits(got.astype(np.int64)) & dst.is_nan_bits(want.astype(np.int64))
    return eq


def _layouts(N, n):
    """(name, R -> the device's n-bit integer) for a device that uses n bits."""
    if n == N:
        return [("the N bits as given", lambda R: R)]
    if n < N:
        return [(f"its low {n} of the {N} bits", lambda R: R & np.uint64((1 << n) - 1)),
                (f"its top {n} of the {N} bits", lambda R: R >> np.uint64(N - n))]
    k = n - N
    return [(f"the {N} bits at the bottom of a {n}-bit field ({k} bit{'s' * (k > 1)} too low)",
             lambda R: R),
            (f"the {N} bits at the top of a {n}-bit field, zeros below",
             lambda R: R << np.uint64(k))]


def diagnose(op, fmt, operands, R, got, rounding, nbits, *, check_nan=True, policies=None,
             span=8, sample=_SAMPLE, seed=0):
    """The settings (scheme, bits used and their layout, overflow rule) that
    reproduce ``got``; see the module doc. Returns a dict with ``best`` (a list
    of equally good candidates), ``explained`` (their share of the cases) and
    ``summary`` (a sentence)."""
    kind, f, dst, _ = _op_parts(op, fmt)
    policies = dict(policies or {})
    want0 = library(op, fmt, operands, R, rounding, nbits, **policies)
    bad = np.flatnonzero(~_equal(dst, got, want0, check_nan))
    rng = np.random.default_rng(seed)
    n_all = got.size
    pick = bad[:sample // 2] if bad.size else bad
    rest = rng.choice(n_all, min(n_all, sample - pick.size), replace=False)
    idx = np.unique(np.concatenate([pick, rest]))
    sub_ops = [o[idx] for o in operands]
    sub_R, sub_got = R[idx], got[idx]
    lim = max_random_nbits(kind, dst.params[1])
    # the overflow rule: overflow= (ieee as asked, or saturating), or for a P3109
    # format its saturation= mode (SatNone, SatFinite, SatPropagate)
    okey = "saturation" if getattr(dst, "is_p3109", False) else "overflow"
    ovfs = [policies.get(okey)]
    for v in (("satnone", "satfinite", "satpropagate") if okey == "saturation"
              else ("saturate",)):
        if v not in ovfs and not (v == "satnone" and ovfs[0] is None):
            ovfs.append(v)
    scored = []
    for scheme, n, ovf in itertools.product(SR_SCHEMES, range(max(1, nbits - span),
                                                              min(lim, nbits + span) + 1), ovfs):
        for lname, fn in _layouts(nbits, n):
            pol = dict(policies, **{okey: ovf})
            try:
                w = library(op, fmt, sub_ops, fn(sub_R), scheme, n, **pol)
            except ValueError:
                continue                      # e.g. overflow='saturate' not for this format
            share = float(_equal(dst, sub_got, w, check_nan).mean())
            cost = ((scheme != rounding) + (n != nbits) + (ovf != ovfs[0]), abs(n - nbits))
            scored.append((share, cost, scheme, n, lname, ovf, fn))
    top = max(s[0] for s in scored)
    finalists = sorted((s for s in scored if s[0] == top), key=lambda s: s[1])[:6]
    best, best_share = [], -1.0
    for share, cost, scheme, n, lname, ovf, fn in finalists:
        pol = dict(policies, **{okey: ovf})
        full = float(_equal(dst, got, library(op, fmt, operands, fn(R), scheme, n, **pol),
                            check_nan).mean())
        cand = {"scheme": scheme, "random_nbits": n, "layout": lname,
                okey: ovf if ovf is not None else "the format's default",
                "explained": full}
        if full > best_share + 1e-12:
            best, best_share = [cand], full
        elif abs(full - best_share) <= 1e-12:
            best.append(cand)
    declared = {"scheme": rounding, "random_nbits": nbits,
                "explained": float(1 - bad.size / max(n_all, 1))}
    b = best[0]
    what = (f"{b['scheme']} with N={b['random_nbits']} ({b['layout']}), {okey} "
            f"{b[okey]}")
    if best_share == 1.0:
        summary = f"the device rounds by {what}: every case explained"
    else:
        summary = (f"closest: {what}, explaining {best_share:.4%} of the cases; no candidate "
                   f"explains them all")
    if len(best) > 1:
        summary += (" (also explained as well by: "
                    + "; ".join(f"{c['scheme']} N={c['random_nbits']} ({c['layout']}), "
                                f"{okey} {c[okey]}" for c in best[1:]) + ")")
    return {"declared": declared, "best": best, "explained": best_share, "summary": summary}


def _import(spec):
    import importlib
    mod, sep, attr = spec.partition(":")
    if not sep or spec.startswith("exec:"):
        raise ValueError(f"impl {spec!r}: stochastic verify takes module:function (the SFV1 "
                         f"protocol carries no random bits)")
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def verify_stochastic(impl, op, fmt, rounding="stochastic_a", space="exhaustive", *,
                      random_nbits, seed=0, check_nan=True, diagnose_fails=True,
                      max_examples=20, **policies) -> SRReport:
    """Check ``impl`` (``impl(*operands, random_bits)`` -> result encodings) on
    ``op`` (``"convert:<dst>"``, add, sub, mul, div, fma, sqrt) of ``fmt`` (the
    source format of a conversion) against the library's ``rounding`` (a scheme
    of softfloat.stochastic, or ``"stochastic"``) with ``random_nbits`` = N."""
    if scheme_of(rounding) is None and rounding != "stochastic":
        raise ValueError(f"rounding must be one of {list(SR_SCHEMES)}, got {rounding!r}")
    rounding = scheme_of(rounding) or "stochastic"
    kind, f, dst, _ = _op_parts(op, fmt)
    if isinstance(impl, str):
        impl = _import(impl)
    if not callable(impl):
        raise TypeError(f"impl must be a callable impl(*operands, random_bits) or "
                        f"'module:function', got {type(impl).__name__}")
    operands, R = _space(op, fmt, int(random_nbits), space, seed)
    want = library(op, fmt, operands, R, rounding, int(random_nbits), **policies)
    out = impl(*operands, R.copy())
    if isinstance(out, tuple):
        out = out[0]
    got = np.asarray(out).reshape(-1)
    if got.size != want.size:
        raise ValueError(f"impl returned {got.size} results for {want.size} cases")
    eq = _equal(dst, got, want, check_nan)
    bad = np.flatnonzero(~eq)
    examples = [{"operands": [int(o[i]) for o in operands], "random_bits": int(R[i]),
                 "got": int(got[i]), "want": int(want[i])} for i in bad[:max_examples]]
    diag = None
    if bad.size and diagnose_fails:
        diag = diagnose(op, fmt, operands, R, got, rounding, int(random_nbits),
                        check_nan=check_nan, policies=policies, seed=seed)
    return SRReport(op, f.name, rounding, int(random_nbits), int(got.size), int(bad.size),
                    examples, diag)


def cli_main(args, space) -> int:
    """``python -m softfloat verify FMT OP --impl module:function --rounding
    stochastic_a --random-nbits N``: the report's summary (and --json)."""
    import json
    import sys
    try:
        if args.results or not args.impl:
            raise ValueError("--random-nbits takes --impl module:function")
        rep = verify_stochastic(args.impl, args.op, args.format, args.rounding, space,
                                random_nbits=args.random_nbits, seed=args.seed,
                                check_nan=args.check_nan, diagnose_fails=not args.no_diagnosis,
                                max_examples=args.examples)
    except (ValueError, TypeError, ImportError, AttributeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(rep.summary())
    if args.json:
        text = json.dumps(rep.to_dict(), indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as fh:
                fh.write(text + "\n")
    return 0 if rep.ok else 1
