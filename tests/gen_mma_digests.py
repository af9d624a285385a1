"""Regenerate tests/mma_digests.json: MMA-Sim's outputs (hashed) on the fixed
inputs of tests/mmasim_harness.digest_case, for one instruction per family of
every architecture. Needs the ``mmasim`` extra; about 10 minutes on one core.

    PYTHONPATH=$PWD python tests/gen_mma_digests.py
"""
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.dirname(__file__))
import mmasim_harness as H  # noqa: E402
from softfloat.mma import ARCHS  # noqa: E402


def main():
    out = {}
    for arch in ARCHS:
        for ins in H.families(arch):
            unit, (a, b, c, sa, sb) = H.digest_case(arch, ins)
            theirs = H.run_mmasim(unit, a, b, c, sa, sb)
            mask = H.deviation_mask(unit, a, b, c, sa, sb)
            out[f"{arch}|{ins}"] = {"digest": H.digest(unit, theirs, mask),
                                    "masked": int(mask.sum())}
            print(arch, ins, out[f"{arch}|{ins}"], flush=True)
    path = os.path.join(os.path.dirname(__file__), "mma_digests.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
