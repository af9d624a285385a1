"""Reading the P3109 value tables (P3109/Public, ``Value Tables/Hexadecimal``)
and the digests of each format's decoded values (tests/p3109_digests.json, made
by tests/gen_p3109_digests.py from the tables), shared by the tests."""
import hashlib
import os
import subprocess

import numpy as np

from p3109_reference import parse_hex_value, value_key

def repo():
    """The P3109/Public repository (a git directory or a checkout) named by
    $SOFTFLOAT_P3109_REPO, or None."""
    r = os.environ.get("SOFTFLOAT_P3109_REPO")
    return r if r and os.path.isdir(r) else None


def all_names():
    """Every format the tables cover: K = 3..16, signed P < K, unsigned P <= K."""
    out = []
    for K in range(3, 17):
        for P in range(1, K + 1):
            for s in ("s", "u"):
                if s == "s" and P == K:
                    continue
                for d in ("e", "f"):
                    out.append(f"binary{K}p{P}{s}{d}")
    return out


def table_path(name):
    K, rest = name[6:].split("p")
    P = rest[:-2]
    signed = rest[-2] == "s"
    return (f"Value Tables/Hexadecimal/K{K}/P{P}/{'signed' if signed else 'unsigned'}/"
            f"Binary{K}p{P}{rest[-2:]}.csv")


def read_table(name, r):
    """[(code, value, subnormal)] of one published table (values exact)."""
    path = table_path(name)
    if os.path.isdir(os.path.join(r, "objects")) or r.endswith(".git") or r.endswith("repo"):
        text = subprocess.run(["git", f"--git-dir={r}", "show", f"HEAD:{path}"], check=True,
                              capture_output=True, text=True).stdout
    else:
        with open(os.path.join(r, path)) as fh:
            text = fh.read()
    rows = []
    for line in text.splitlines()[1:]:
        code, val, sub = line.split(",")
        rows.append((int(code, 16), parse_hex_value(val), sub.strip() == "*"))
    return rows


def digest_of_keys(keys):
    """sha256 of the (kind, odd significand, exponent) triples, int64 little-endian."""
    a = np.asarray(keys, dtype="<i8").reshape(-1, 3)
    return hashlib.sha256(a.tobytes()).hexdigest()


def digest_of_values(values):
    return digest_of_keys([value_key(v) for v in values])
