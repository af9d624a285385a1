"""The report of an ``sf.emulate`` region: per aten op and dtype, how many calls
ran under which model and what the result is worth (the claim level).

Claim levels (shared with softfloat.cublas's GemmInfo):

* ``validated`` -- exact, and checked against a named reference (MMA-Sim,
  mmaemu's hardware recordings, torch CUDA recordings);
* ``proof``     -- exact by a proof (IEEE correctly rounded operations: float32
  +, -, *, /, sqrt are equal on every IEEE machine; a 16-bit op computed in
  float32 and rounded once equals the correctly rounded op);
* ``modelled``  -- a model from documentation and source, not validated on the device;
* ``native``    -- run by torch on the CPU, no model;
* ``exact``     -- nothing rounds (data movement, views, comparisons, integer
  and bool ops, fills): the same bits on any device.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

CLAIMS = ("validated", "proof", "modelled", "native", "exact")


@dataclass(frozen=True)
class Row:
    op: str          # the aten overload, e.g. "aten.add.Tensor"
    dtype: str       # the torch dtype of the result ("float16", ...) or "-"
    claim: str       # one of CLAIMS
    model: str       # what computed it
    calls: int


class Report:
    """Rows of (op, dtype, claim, model, calls). ``str()`` is a table for the
    terminal; `as_dict` / `to_json` / `from_json` for files."""

    def __init__(self, device: str, rows, settings=None):
        self.device = device
        self.rows = sorted(rows, key=lambda r: (CLAIMS.index(r.claim), r.op, r.dtype))
        # as JSON gives them back (a tuple is a list), so that a report equals its round trip
        self.settings = json.loads(json.dumps(dict(settings or {})))

    # ---- queries ---------------------------------------------------------
    def calls(self, op=None, claim=None, dtype=None) -> int:
        """Calls counted for ``op`` (a name such as "aten.mm.default", or its
        prefix "aten.mm"), ``claim`` and ``dtype`` (None: any)."""
        return sum(r.calls for r in self.rows
                   if (op is None or r.op == op or r.op.startswith(op + "."))
                   and (claim is None or r.claim == claim)
                   and (dtype is None or r.dtype == dtype))

    def by_claim(self) -> dict:
        return {c: self.calls(claim=c) for c in CLAIMS}

    # ---- serialisation -----------------------------------------------------
    def as_dict(self) -> dict:
        return {"device": self.device, "settings": self.settings,
                "totals": self.by_claim(), "ops": [asdict(r) for r in self.rows]}

    def to_json(self, **kw) -> str:
        return json.dumps(self.as_dict(), **kw)

    @classmethod
    def from_json(cls, text: str) -> "Report":
        d = json.loads(text)
        return cls(d["device"], [Row(**r) for r in d["ops"]], d.get("settings"))

    def __eq__(self, other):
        return isinstance(other, Report) and self.as_dict() == other.as_dict()

    def __str__(self) -> str:
        head = ("op", "dtype", "calls", "claim", "model")
        body = [(r.op, r.dtype, str(r.calls), r.claim, r.model) for r in self.rows]
        w = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(head[:4])]
        line = lambda c: "  ".join(x.ljust(w[i]) if i < 4 else x for i, x in enumerate(c)).rstrip()
        tot = ", ".join(f"{c} {n}" for c, n in self.by_claim().items() if n)
        out = [f"softfloat.emulate report: {self.device}"
               + "".join(f", {k}={v}" for k, v in self.settings.items()),
               line(head), line(tuple("-" * x for x in w) + ("-----",))]
        out += [line(b) for b in body]
        out.append(f"calls by claim: {tot or 'none'}")
        return "\n".join(out)

    __repr__ = __str__


class Counter:
    """Accumulates the calls of one region (mutable; `Report` is its snapshot)."""

    def __init__(self):
        self._n = {}

    def add(self, op: str, dtype: str, claim: str, model: str):
        if claim not in CLAIMS:
            raise ValueError(f"claim must be one of {CLAIMS}, got {claim!r}")
        k = (op, dtype, claim, model)
        self._n[k] = self._n.get(k, 0) + 1

    def report(self, device: str, settings=None) -> Report:
        return Report(device, [Row(*k, n) for k, n in self._n.items()], settings)
