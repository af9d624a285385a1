"""TestFloat's line format: operands, result and flags in upper-case hex.

A 16-bit value is 4 digits, an 8-bit one 2, a 9-bit one 3, a 32-bit integer 8,
a Boolean 1 digit, the flags 2 digits; fields are separated by single spaces.
`format_lines` writes them vectorised; `parse_lines` reads them strictly: each
field must have exactly its type's number of hex digits (no sign, no ``0x``) and
a value in range, and an error names its line (``first_line`` numbers the first
line of ``data``, so a reader of chunks reports absolute line numbers).
"""
from __future__ import annotations

import re

import numpy as np

from .names import Function, bit_width, dtype_of, hex_width, parse_function, token

__all__ = ["format_lines", "parse_lines", "columns", "FLAGS_MAX", "MAX_LINE_BYTES"]

#: the largest flags value: the five IEEE flags (invalid, infinite, overflow,
#: underflow, inexact) in bits 0-4
FLAGS_MAX = 0x1F
#: the longest line a reader accepts (the longest valid line, four 64-bit
#: fields and the flags, is under 80 bytes; the rest is room for spacing)
MAX_LINE_BYTES = 1024

_HEX = np.frombuffer(b"0123456789ABCDEF", np.uint8)


def columns(fn: Function) -> list:
    """The types of a line's fields: operands, result, ``"flags"``."""
    return list(fn.args) + [fn.result, "flags"]


def format_lines(function, operands, result=None, flags=None) -> bytes:
    """TestFloat lines (bytes) for arrays of cases: operands, then result and
    flags (omit both to write operands only, as ``testfloat_gen <type>`` does).
    Every column is an integer array (or a sequence of ints) of the same length
    (no broadcasting) whose values are encodings of its type: 0 .. 2**bits - 1
    (integer types as their unsigned bit patterns), flags 0 .. 0x1F; anything
    else raises ValueError or TypeError naming the column. Vectorized: no
    per-line Python."""
    fn = parse_function(function)
    if isinstance(operands, np.ndarray) or not isinstance(operands, (list, tuple)):
        raise TypeError(f"operands must be a list or tuple of {len(fn.args)} arrays "
                        f"for {fn.name}, got {type(operands).__name__}")
    cols = list(operands)
    types = list(fn.args)
    if len(cols) != len(types):
        raise ValueError(f"{fn.name} takes {len(types)} operand(s), got {len(cols)}")
    if (result is None) != (flags is None):
        raise ValueError("give both result and flags, or neither (operands only)")
    if result is not None:
        cols += [result, flags]
        types += [fn.result, "flags"]
    names = [f"operand {j + 1}" for j in range(len(fn.args))] + ["result", "flags"]
    cols = [_column(c, t, what) for c, t, what in zip(cols, types, names)]
    n = cols[0].size
    for c, what in zip(cols, names):
        if c.size != n:
            raise ValueError(f"{fn.name}: {what} has {c.size} values but operand 1 has {n} "
                             f"(every column needs one value per line; no broadcasting)")
    widths = [hex_width(t) for t in types]
    W = sum(widths) + len(widths)
    out = np.empty((n, W), np.uint8)
    pos = 0
    for c, w in zip(cols, widths):
        x = np.asarray(c).reshape(-1)
        # the top (w % 4 or 4) digits first, then groups of 4, from lookup tables
        k = w % 4 or 4
        shift = 4 * (w - k)
        if shift == 0 and x.dtype.kind == "u" and x.dtype.itemsize <= 2:
            out[:, pos:pos + k] = _hex_table(k)[x]
            pos += k
        else:
            x = x.astype(np.uint64)
            while True:
                part = (x >> np.uint64(shift)) & np.uint64((1 << 4 * k) - 1)
                out[:, pos:pos + k] = _hex_table(k)[part.astype(np.intp)]
                pos += k
                if not shift:
                    break
                shift -= 16
                k = 4
        out[:, pos] = 32
        pos += 1
    out[:, -1] = 10
    return out.tobytes()


def _column(c, t, what) -> np.ndarray:
    """A column as a 1-D integer array whose values fit type ``t`` (checked)."""
    x = np.asarray(c)
    if x.dtype == np.bool_ and t == "bool":
        x = x.astype(np.uint8)
    if x.dtype.kind not in "ui":
        raise TypeError(f"{what}: expected integer encodings of "
                        f"{'flags' if t == 'flags' else token(t)}, got an array of "
                        f"{x.dtype} (no silent conversion: use .view() or .astype() on "
                        f"exact values)")
    x = x.reshape(-1)
    hi = FLAGS_MAX if t == "flags" else (1 << bit_width(t)) - 1
    if x.size:
        lo_v, hi_v = int(x.min()), int(x.max())
        if lo_v < 0 or hi_v > hi:
            bad = lo_v if lo_v < 0 else hi_v
            kind = "flags" if t == "flags" else f"{token(t)} ({bit_width(t)} bits)"
            raise ValueError(f"{what}: value {bad} does not fit {kind}: expected "
                             f"0..{hi:#x}" + (" (integers as unsigned bit patterns)"
                                              if lo_v < 0 else ""))
    return x


_TABLES = {}


def _hex_table(k: int) -> np.ndarray:
    """Upper-case hex digits of 0 .. 16**k - 1 as a (16**k, k) uint8 table."""
    if k not in _TABLES:
        v = np.arange(16 ** k, dtype=np.int64)
        sh = np.arange(k - 1, -1, -1) * 4
        _TABLES[k] = _HEX[(v[:, None] >> sh) & 15]
    return _TABLES[k]


_HEXVAL = np.full(256, -1, np.int64)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEXVAL[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _HEXVAL[_c] = 10 + _i


def _parse_fixed(buf: bytes, widths: list):
    """Fast path: every line has the same length and its fields have exactly
    ``widths`` hex digits at the same columns; None where that does not hold
    (the line-by-line path then parses, or names the first bad line)."""
    a = np.frombuffer(buf, np.uint8)
    if a.size == 0:
        return None
    if a[-1] != 10:
        a = np.concatenate([a, np.array([10], np.uint8)])
    nl = np.flatnonzero(a == 10)
    L = int(nl[0]) + 1
    n = nl.size
    if n * L != a.size or not np.all(nl == np.arange(L - 1, n * L, L)):
        return None
    m = a.reshape(n, L)[:, :L - 1]
    if m.shape[1] and np.all(m[:, -1] == 13):
        m = m[:, :-1]
    sp = m == 32
    colsp = sp[0]
    if not np.array_equal(sp, np.broadcast_to(colsp, sp.shape)):
        return None
    # token spans: maximal runs of non-space columns
    spans, start = [], None
    for j, s in enumerate(colsp.tolist() + [True]):
        if not s and start is None:
            start = j
        elif s and start is not None:
            spans.append((start, j))
            start = None
    if [e - s for s, e in spans] != list(widths):
        return None
    out = []
    for s, e in spans:
        d = _HEXVAL[m[:, s:e]]
        if (d < 0).any():
            return None
        v = np.zeros(n, np.uint64)
        for j in range(e - s):
            v = (v << np.uint64(4)) | d[:, j].astype(np.uint64)
        out.append(v)
    return out


_HEXDIGITS = re.compile(rb"[0-9A-Fa-f]+")


def _parse_slow(data: bytes, fn: Function, types: list, widths: list, first_line: int):
    """Line by line: blank lines skipped; the first malformed line raises."""
    cols = [[] for _ in types]
    lines = []
    for no, line in enumerate(data.splitlines(), first_line):
        toks = line.split()
        if not toks:
            continue
        if len(toks) != len(types):
            raise ValueError(f"line {no}: expected {len(types)} hex fields for {fn.name} "
                             f"(operands, result, flags), got {len(toks)}: {line[:80]!r}")
        for j, (tok, t, w) in enumerate(zip(toks, types, widths)):
            if not _HEXDIGITS.fullmatch(tok) or len(tok) != w:
                what = "flags" if t == "flags" else token(t)
                raise ValueError(f"line {no}: field {j + 1} {tok[:40]!r} is not {w} hex "
                                 f"digit(s) (type {what}; no sign, no 0x prefix): "
                                 f"{line[:80]!r}")
            cols[j].append(int(tok, 16))
        lines.append(no)
    return [np.array(c, np.uint64) for c in cols], np.array(lines, np.int64)


def parse_lines(function, data, *, first_line: int = 1) -> tuple:
    """Parse TestFloat lines (bytes or str): returns ``(operands, result, flags)``
    as arrays in the operand/result types' dtypes. Blank lines are skipped. A
    malformed line (wrong number of fields, a field that is not exactly its
    type's number of hex digits, a value out of range) raises ValueError naming
    its line number, counted from ``first_line`` for the first line of ``data``."""
    fn = parse_function(function)
    if isinstance(data, str):
        data = data.encode()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"expected bytes or str lines, got {type(data).__name__}")
    data = bytes(data)
    types = columns(fn)
    widths = [hex_width(t) for t in types]
    cols = _parse_fixed(data, widths)
    line_no = None
    if cols is None:
        cols, line_no = _parse_slow(data, fn, types, widths, first_line)
    out = []
    for j, (c, t) in enumerate(zip(cols, types)):
        width = bit_width(t)
        top = FLAGS_MAX if t == "flags" else (1 << width) - 1
        if c.size and width < 64 and int(c.max()) > top:
            bad = int(np.flatnonzero(c > np.uint64(top))[0])
            no = first_line + bad if line_no is None else int(line_no[bad])
            raise ValueError(f"line {no}: field {j + 1} value {int(c[bad]):#x} out of range "
                             f"for {'flags' if t == 'flags' else token(t)} "
                             f"(expected 0..{top:#x})")
        out.append(c.astype(np.uint8 if t == "flags" else dtype_of(t)))
    return tuple(out[:-2]), out[-2], out[-1]
