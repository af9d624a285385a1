"""A reference program speaking SFV1 (docs/verify.md), in plain Python + NumPy.

It implements fp16 and fp32 ``add``, ``sub``, ``mul``, ``div`` and ``sqrt`` in
round-to-nearest-even with NumPy's own float16/float32 arithmetic (no flags),
and refuses everything else with ``ERR``: a template for a harness around a
simulator or a device. Run it through the verifier::

    python -m softfloat verify fp16 add --impl "exec:python examples/sfv1_reference.py"

``--library`` answers with softfloat itself instead (every operation verify
names, every mode and policy, with flags): the protocol's round trip, which
must show no mismatch.
"""
import struct
import sys

import numpy as np

_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "sqrt": np.sqrt}
_DTYPES = {"fp16": (np.float16, np.uint16), "fp32": (np.float32, np.uint32)}


def read_exact(stream, n):
    buf = b""
    while len(buf) < n:
        part = stream.read(n - len(buf))
        if not part:
            raise EOFError
        buf += part
    return buf


def main(argv):
    use_library = "--library" in argv
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    words = inp.readline().decode().split()
    if len(words) < 7 or words[0] != "SFV1":
        out.write(b"ERR expected an SFV1 header\n")
        return 2
    op, fmt, rounding = words[1:4]
    nops, in_bytes, out_bytes = (int(w) for w in words[4:7])
    policies = dict(w.split("=", 1) for w in words[7:])
    if use_library:
        from softfloat.verification.ops import get_op
        try:
            spec = get_op(op, fmt)
            kw = {k: (v == "1" if k in ("ftz", "daz") else
                      (int(v, 16) if k == "nan" and v.startswith("0x") else v))
                  for k, v in policies.items()}

            def compute(ops):
                return spec.compute(ops, rounding, **kw)
            spec.compute([np.zeros(1, d) for d in spec.in_dtypes], rounding, **kw)
        except (ValueError, TypeError) as exc:
            out.write(f"ERR {exc}\n".encode())
            out.flush()
            return 2
        in_dt = np.dtype(f"<u{in_bytes}")
    else:
        if op not in _NUMPY or fmt not in _DTYPES:
            out.write(f"ERR only fp16/fp32 add sub mul div sqrt, not {op} {fmt}\n".encode())
            out.flush()
            return 2
        if rounding != "nearest_even" or policies:
            out.write(b"ERR only nearest_even without policies\n")
            out.flush()
            return 2
        ftype, utype = _DTYPES[fmt]
        in_dt = np.dtype(utype).newbyteorder("<")

        def compute(ops):
            with np.errstate(all="ignore"):
                r = _NUMPY[op](*(x.view(ftype) for x in ops)).astype(ftype)
            return r.view(utype), np.full(r.size, 0xFF, np.uint8)     # 0xFF: no flags
    out.write(b"OK\n")
    out.flush()
    while True:
        try:
            (n,) = struct.unpack("<I", read_exact(inp, 4))
        except EOFError:
            return 1                      # the stream ended without N = 0
        if n == 0:
            return 0
        data = np.frombuffer(read_exact(inp, n * nops * in_bytes), in_dt).reshape(n, nops)
        res, flags = compute([np.ascontiguousarray(data[:, j]) for j in range(nops)])
        out.write(np.asarray(res).astype(f"<u{out_bytes}").tobytes()
                  + np.asarray(flags, np.uint8).tobytes())
        out.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
