"""A minimal SFV1 client: start a program, send the header, stream batches, read results.

This is the protocol logic the FPnew runner and its tests need on their own (the
verifier, `softfloat.verify`, has its own exec adapter): ``Program(cmd).run(op, fmt,
rounding, operands)`` returns ``(results, flags)`` as NumPy arrays.
"""
from __future__ import annotations

import os
import select
import struct
import subprocess
import time

import numpy as np

MAX_BATCH = 1 << 20


class ProtocolError(RuntimeError):
    """The program refused the header, died, stalled or sent a malformed answer."""


def _dtype(nbytes: int) -> np.dtype:
    if nbytes not in (1, 2, 4, 8):
        raise ValueError(f"operand/result width: expected 1, 2, 4 or 8 bytes, got {nbytes}")
    return np.dtype(f"<u{nbytes}")


def _read(proc, n: int, timeout: float) -> bytes:
    fd = proc.stdout.fileno()
    chunks, got, deadline = [], 0, time.monotonic() + timeout
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise ProtocolError(f"no answer within {timeout:g} s ({got} of {n} bytes)")
        b = os.read(fd, min(n - got, 1 << 22))
        if not b:
            err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
            raise ProtocolError(f"the program ended after {got} of {n} bytes"
                                + (f": {err.splitlines()[-1]}" if err else ""))
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def _readline(proc, timeout: float) -> str:
    out = b""
    while not out.endswith(b"\n"):
        out += _read(proc, 1, timeout)
        if len(out) > 4096:
            raise ProtocolError("header answer longer than 4096 bytes")
    return out.decode("ascii", errors="replace").rstrip("\n")


def run(cmd, op: str, fmt: str, rounding: str, operands, out_bytes: int,
        policies: dict | None = None, batch: int = 1 << 16, timeout: float = 60.0):
    """Run one SFV1 session: ``operands`` is a list of equal-length unsigned arrays (one
    per operand; their itemsize is in_bytes). Returns (results uint array, flags uint8)."""
    ops = [np.ascontiguousarray(np.asarray(a).ravel()) for a in operands]
    if not ops or any(a.dtype.kind not in "ui" for a in ops):
        raise TypeError("operands: expected integer arrays of encodings")
    n = ops[0].size
    if any(a.size != n for a in ops) or len({a.dtype.itemsize for a in ops}) != 1:
        raise ValueError("operands: expected arrays of one length and one width")
    in_bytes = ops[0].dtype.itemsize
    src = np.stack([a.astype(_dtype(in_bytes), copy=False) for a in ops], axis=1)
    rdt = _dtype(out_bytes)
    if not 1 <= batch <= MAX_BATCH:
        raise ValueError(f"batch: expected 1..{MAX_BATCH}, got {batch}")
    extra = "".join(f" {k}={v}" for k, v in (policies or {}).items())
    header = f"SFV1 {op} {fmt} {rounding} {len(ops)} {in_bytes} {out_bytes}{extra}\n"
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, shell=isinstance(cmd, str))
    try:
        proc.stdin.write(header.encode("ascii"))
        proc.stdin.flush()
        answer = _readline(proc, timeout)
        if answer.startswith("ERR"):
            raise ProtocolError(f"the program refused {header.strip()!r}: {answer[3:].strip()}")
        if answer != "OK":
            raise ProtocolError(f"expected 'OK' or 'ERR reason', got {answer[:80]!r}")
        res = np.empty(n, rdt)
        flg = np.empty(n, np.uint8)
        for lo in range(0, n, batch):
            hi = min(n, lo + batch)
            proc.stdin.write(struct.pack("<I", hi - lo) + src[lo:hi].tobytes())
            proc.stdin.flush()
            raw = _read(proc, (hi - lo) * (out_bytes + 1), timeout)
            res[lo:hi] = np.frombuffer(raw, rdt, hi - lo)
            flg[lo:hi] = np.frombuffer(raw, np.uint8, hi - lo, (hi - lo) * out_bytes)
        proc.stdin.write(struct.pack("<I", 0))
        proc.stdin.flush()
        proc.stdin.close()
        if proc.wait(timeout) != 0:
            raise ProtocolError(f"the program exited with status {proc.returncode}")
        return res, flg
    except (BrokenPipeError, subprocess.TimeoutExpired) as e:
        raise ProtocolError(f"the program stopped reading: {e}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for s in (proc.stdin, proc.stdout, proc.stderr):
            try:
                s.close()
            except Exception:
                pass
