"""Shard files, report files and resuming: one JSON file per shard under
``OUT/<name>.shards/`` naming its id, its parameters and a SHA-256 checksum of
its content (`verify_shard_file` says why a file does not verify, so that
``--resume`` recomputes exactly the shards it cannot trust), the run names of
reports (`report_name`) and the reports of a directory: one JSON object per run
in ``OUT/reports.jsonl``, sorted by run name, a rerun replacing its own line
only (`store_report`, `load_reports`), checked for the keys the results table
reads (`REPORT_KEYS`); and the check that an output directory is writable before
any work.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys

SHARD_FORMAT = 2           # version of the shard file layout


class ShardFileError(ValueError):
    """A shard file that does not verify (the message says why)."""


def _checksum(obj) -> str:
    body = {k: v for k, v in obj.items() if k != "checksum"}
    blob = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def seal(res: dict) -> dict:
    """A copy of a shard result with the SHA-256 checksum of its content (what
    `verify_shard_file` checks)."""
    res = dict(res)
    res["checksum"] = _checksum(res)
    return res


_seal = seal


def verify_shard_file(path, shard_id, cfg, lo, hi, expected_cases) -> dict:
    """Read and verify one shard file: JSON object, format version, checksum of
    its content, its id and range, its parameters (``cfg``), and consistent
    counts. Returns the result; raises ShardFileError saying what failed
    (``.other_settings`` is True when only the parameters differ)."""
    try:
        with open(path) as fh:
            r = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ShardFileError(f"{path}: unreadable or not JSON ({exc})") from None
    if not isinstance(r, dict):
        raise ShardFileError(f"{path}: expected a JSON object, got {type(r).__name__}")
    if r.get("format_version") != SHARD_FORMAT or "checksum" not in r:
        raise ShardFileError(f"{path}: not a version-{SHARD_FORMAT} shard file with a checksum")
    if r["checksum"] != _checksum(r):
        raise ShardFileError(f"{path}: checksum does not match its content")
    if r.get("shard") != shard_id:
        raise ShardFileError(f"{path}: holds shard {r.get('shard')!r}, expected {shard_id}")
    if r.get("config") != cfg:
        err = ShardFileError(f"{path} was written with other settings ({r.get('config')}); "
                             f"use another --out or drop --resume")
        err.other_settings = True
        raise err
    try:
        ok = (r["lo"] == lo and r["hi"] == hi and r["cases"] == expected_cases
              and all(isinstance(r[k], int) and r[k] >= 0
                      for k in ("mismatches", "bits_mismatches", "flag_mismatches"))
              and r["mismatches"] == r["bits_mismatches"] + r["flag_mismatches"]
              and r["mismatches"] <= r["cases"] and isinstance(r["examples"], list))
    except (KeyError, TypeError):
        ok = False
    if not ok:
        raise ShardFileError(f"{path}: inconsistent range or counts")
    return r


def _name(sp, mode):
    """The run name of a sweep of the space ``sp`` in ``mode``."""
    d = sp.describe()
    return report_name({"op": sp.op, "format": sp.f.name, "mode": mode.label,
                        **({"space": d} if d else {})})


REPORTS = "reports.jsonl"     # the reports of a directory: one line per run, sorted


def report_name(rep) -> str:
    """The run name of a report (``<op>_<format>_<mode>[_<space tag>]``): its
    key in `REPORTS` and the stem of its shard directory."""
    base = f"{rep['op'].replace(':', '-')}_{rep['format']}_{rep['mode']}"
    d = rep.get("space")
    if d:
        tag = hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:8]
        base += "_" + (d["c_family"] if d.get("c_family") else "sub") + "-" + tag
    return base


def _report_line(rep) -> str:
    return json.dumps(rep, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def load_reports(directory) -> dict:
    """The reports of ``directory``, by run name: its `REPORTS` file (one JSON
    object per line), and any ``<name>.json`` report of an older layout (the
    line wins when both hold a run). A line that is not a JSON object raises
    ValueError naming the file and line."""
    out = {}
    for fn in sorted(os.listdir(directory)):
        if not fn.endswith(".json"):
            continue
        path = os.path.join(directory, fn)
        try:
            with open(path) as fh:
                r = json.load(fh)
        except (OSError, ValueError):
            continue
        if not isinstance(r, dict) or "op" not in r:
            continue
        _check_report(r, path)
        out[report_name(r)] = r
    path = os.path.join(directory, REPORTS)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            for no, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                except ValueError as exc:
                    raise ValueError(f"{path} line {no}: not JSON ({exc})") from None
                if not isinstance(r, dict):
                    raise ValueError(f"{path} line {no}: not a JSON object")
                _check_report(r, f"{path} line {no}")
                out[report_name(r)] = r
    return out


def store_report(out, rep) -> str:
    """Put ``rep`` into ``out``'s `REPORTS` file: the line of its run is replaced
    (the others are kept, byte for byte), lines sorted by run name; under a file
    lock, written to a temporary file and renamed. Returns the file's path."""
    path = os.path.join(out, REPORTS)
    name = report_name(rep)
    lock = open(os.path.join(out, ".reports.lock"), "a")
    try:
        try:
            import fcntl
            fcntl.flock(lock, fcntl.LOCK_EX)
        except (ImportError, OSError):     # pragma: no cover (not POSIX)
            pass
        lines = {}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    if line.strip():
                        try:
                            lines[report_name(json.loads(line))] = line.rstrip("\n")
                        except (ValueError, KeyError, TypeError, AttributeError):
                            lines[f"~unreadable {len(lines)}"] = line.rstrip("\n")
        lines[name] = _report_line(rep)
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("".join(lines[k] + "\n" for k in sorted(lines)))
        os.replace(tmp, path)
    finally:
        lock.close()
    return path


def shard_path(out, name, k):
    """The file of shard ``k`` of run ``name`` under ``out``."""
    return os.path.join(out, name + ".shards", f"shard_{k:05d}.json")


def write_json(path, obj):
    """Write ``obj`` as JSON to ``path`` atomically (a temporary file renamed),
    making its directory."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        json.dump(obj, fh, indent=1)
    os.replace(tmp, path)


_shard_path, _write_json = shard_path, write_json


def split_resumed(out, name, ids, cfg, resume, expected):
    """The shards ``ids`` of run ``name`` split into those whose files in ``out``
    verify (with ``resume``; ``expected(k)`` is shard k's ``(lo, hi, cases)``)
    and those to compute: ``(results, todo, notes)``, ``todo`` as pairs (shard,
    its file's path, None without ``out``). A file that does not verify is
    recomputed, with a warning on stderr and a note; one of other settings
    raises `ShardFileError`."""
    results, todo, notes = [], [], []
    for k in ids:
        path = shard_path(out, name, k) if out else None
        if resume and path and os.path.exists(path):
            lo, hi, cases = expected(k)
            try:
                results.append(verify_shard_file(path, k, cfg, lo, hi, cases))
                continue
            except ShardFileError as exc:
                if getattr(exc, "other_settings", False):
                    raise
                notes.append(f"{exc}: recomputed")
                print(f"warning: {exc}; recomputing shard {k}", file=sys.stderr)
        todo.append((k, path))
    return results, todo, notes


_split_resumed = split_resumed


def check_writable(out) -> None:
    """Raise OSError (with the path) unless ``out`` is, or can be made, a writable
    directory; called before any work."""
    try:
        os.makedirs(out, exist_ok=True)
        probe = os.path.join(out, f".write-test-{os.getpid()}")
        with open(probe, "w") as fh:
            fh.write("ok")
        os.remove(probe)
    except OSError as exc:
        raise OSError(f"cannot write to --out {out!r}: {exc.strerror or exc}") from None


#: what `summarize` reads from a report, and the types it expects
REPORT_KEYS = {"op": str, "format": str, "mode": str, "oracle": str, "cases": int,
               "mismatches": int, "bits_mismatches": int, "flag_mismatches": int}


def _check_report(r, where):
    """Raise ValueError naming ``where`` unless r has every key `summarize` reads."""
    missing = [k for k in REPORT_KEYS if k not in r]
    if missing:
        raise ValueError(f"{where}: a sweep report without {', '.join(missing)}; "
                         f"expected the JSON report that a sweep writes")
    for k, t in REPORT_KEYS.items():
        if not isinstance(r[k], t) or isinstance(r[k], bool):
            raise ValueError(f"{where}: {k} should be {t.__name__}, got {r[k]!r}")
    if "seconds" not in r and "wall_seconds" not in r:
        raise ValueError(f"{where}: a sweep report without seconds or wall_seconds")
    m = r.get("mpfr")
    if m is not None and not (isinstance(m, dict) and isinstance(m.get("checked"), int)
                              and isinstance(m.get("mismatches"), int)):
        raise ValueError(f"{where}: mpfr should hold 'checked' and 'mismatches' counts")
    for k in ("space", "config"):
        if k in r and not isinstance(r[k], dict):
            raise ValueError(f"{where}: {k} should be an object, got {r[k]!r}")
