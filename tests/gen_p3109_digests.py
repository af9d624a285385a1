"""Write tests/p3109_digests.json: for every P3109 format of the published value
tables (K = 3..16), the sha256 of its decoded values in code order (see
p3109_tables.digest_of_keys). Run: python tests/gen_p3109_digests.py"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from p3109_tables import all_names, digest_of_values, read_table, repo  # noqa: E402

if __name__ == "__main__":
    r = repo()
    if r is None:
        sys.exit("the P3109/Public repository is not here; set SOFTFLOAT_P3109_REPO")
    out = {}
    for name in all_names():
        rows = read_table(name, r)
        assert [c for c, _, _ in rows] == list(range(len(rows)))
        out[name] = digest_of_values([v for _, v, _ in rows])
    with open(os.path.join(os.path.dirname(__file__), "p3109_digests.json"), "w") as fh:
        json.dump(out, fh, indent=0, sort_keys=True)
        fh.write("\n")
    print(len(out), "formats")
