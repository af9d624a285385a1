"""A tiny SFV1 program in Python, for testing the protocol logic without Verilator:
``python -m validation.hardware.fpnew.fake_fpu [--fault NAME]`` answers add, sub, mul
and div of any library format with `softfloat`'s answer, optionally with a planted
fault: ``toward_zero`` (every result rounded toward zero), ``no_inexact`` (the inexact
flag never raised), ``refuse`` (answers ERR to every header), ``die`` (exits after the
header), ``no_flags`` (0xFF flag bytes: "reports no flags")."""
from __future__ import annotations

import argparse
import struct
import sys

import numpy as np


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none", choices=("none", "toward_zero", "no_inexact",
                                                        "refuse", "die", "no_flags"))
    a = p.parse_args(argv)
    import softfloat as sf
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    words = inp.readline().decode().split()
    if len(words) < 7 or words[0] != "SFV1":
        out.write(b"ERR expected an SFV1 header\n")
        return 2
    op, fmt, mode = words[1:4]
    nops, in_b, out_b = map(int, words[4:7])
    if a.fault == "refuse" or op not in ("add", "sub", "mul", "div") or words[7:]:
        out.write(f"ERR {op} {' '.join(words[7:])} not offered by the fake FPU\n".encode())
        out.flush()
        return 2
    out.write(b"OK\n")
    out.flush()
    if a.fault == "die":
        return 3
    dt = np.dtype(f"<u{in_b}")
    fn = getattr(sf, op)
    rmode = "toward_zero" if a.fault == "toward_zero" else mode
    while True:
        (n,) = struct.unpack("<I", inp.read(4))
        if n == 0:
            return 0
        ops = np.frombuffer(inp.read(n * nops * in_b), dt).reshape(n, nops)
        res, flg = fn(ops[:, 0], ops[:, 1], fmt, rmode, return_flags=True)
        flg = np.asarray(flg, np.uint8)
        if a.fault == "no_inexact":
            flg = flg & np.uint8(0xFE)
        if a.fault == "no_flags":
            flg = np.full(n, 0xFF, np.uint8)
        out.write(np.asarray(res).astype(f"<u{out_b}").tobytes() + flg.tobytes())
        out.flush()


if __name__ == "__main__":
    raise SystemExit(main())
