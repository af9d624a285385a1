"""Fault injection for the sweep engine's tests: wrap `softfloat.sweep.engine._subject`
(the library side of a sweep) so that chosen cases come back wrong."""
import numpy as np

#: case index (a << 16 | b) -> (kind, xor): a flipped result bit on finite
#: operands, a flipped inexact flag, a wrong NaN payload (0x7E05 is a NaN)
FAULTS = {0x3C00 * 65536 + 0x4000: ("bits", 1), 0x3C00 * 65536 + 0x4001: ("flags", 0),
          0x3C01 * 65536 + 0x7E05: ("bits", 2)}


def inject(monkeypatch, E, bad=FAULTS):
    """Make E._subject (E: softfloat.sweep.engine) return ``bad``'s cases wrong; the
    case index is counted from the block's first a (the shard's a << 16)."""
    real = E._subject

    def subject(sp, mode, ops):
        r, fl = real(sp, mode, ops)
        r, fl = r.copy(), fl.copy()
        a0 = int(np.asarray(ops[0]).ravel()[0]) << 16
        for case, (kind, x) in bad.items():
            k = case - a0
            if 0 <= k < r.size:
                if kind == "bits":
                    r[k] ^= x
                else:
                    fl[k] ^= 1
        return r, fl
    monkeypatch.setattr(E, "_subject", subject)
