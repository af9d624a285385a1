"""The kernel cache (softfloat._jitcache): keyed on the package's sources, and
working where nothing can be written. Each test runs a copy of the package in
fresh processes."""
import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Prints the cache directory, whether from_bits's kernel came from the cache,
# and a value computed by a kernel (convert.py) that calls core.unpack.
PROBE = r"""
import json, numpy as np, softfloat as sf
from softfloat import _jitcache
from softfloat._kernels import convert
v = sf.from_bits(np.array([0x3C00, 0xC500], np.uint16), "fp16")
st = convert.to_float64_chunk.stats
print("PROBE " + json.dumps({"dir": _jitcache.cache_dir(), "hits": sum(st.cache_hits.values()),
                             "misses": sum(st.cache_misses.values()), "v": v.tolist()}))
"""


def _copy_package(tmp_path):
    dst = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "softfloat"), dst / "softfloat",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _probe(src, env_extra, code=PROBE):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    env.update(env_extra)
    env["PYTHONPATH"] = str(src)
    p = subprocess.run([sys.executable, "-c", code], cwd=str(src), env=env,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("PROBE ")]
    return json.loads(line[-1][6:])


def test_edit_to_a_callee_in_another_file_invalidates_the_cache(tmp_path):
    src = _copy_package(tmp_path)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    first = _probe(src, env)
    assert first["v"] == [1.0, -5.0] and first["misses"] >= 1
    assert first["dir"].startswith(str(tmp_path / "cache"))
    again = _probe(src, env)                     # unchanged sources: from the cache
    assert again["dir"] == first["dir"] and again["hits"] >= 1 and again["misses"] == 0
    # Edit unpack in core.py (called by convert.py's kernel): normal values doubled.
    core = src / "softfloat" / "_kernels" / "core.py"
    text = core.read_text()
    # the normal-value return at the function's own level (4 spaces), not the e8m0 one
    old = "\n    return C_FINITE, sign, efield - bias - M, frac | (np.int64(1) << M)"
    assert text.count(old) == 1
    core.write_text(text.replace(old, old.replace("bias - M", "bias - M + 1")))
    edited = _probe(src, env)
    assert edited["dir"] != first["dir"]         # a new directory for the new sources
    assert edited["misses"] >= 1 and edited["hits"] == 0
    assert edited["v"] == [2.0, -10.0]           # the edit is in effect, not old code


def test_prune_keeps_the_most_recent_hash_directories(tmp_path, monkeypatch):
    from softfloat import _jitcache
    parent = tmp_path / "softfloat"
    for i in range(7):
        d = parent / f"old{i}"
        d.mkdir(parents=True)
        os.utime(d, (1000 + i, 1000 + i))
    cur = parent / "current"
    cur.mkdir()
    _jitcache._prune(str(cur))
    left = sorted(p.name for p in parent.iterdir())
    assert left == ["current"] + [f"old{i}" for i in range(7 - (_jitcache.KEEP - 1), 7)]


def _blocker(path):
    """A regular file where a directory would have to be made: unwritable even for root."""
    path.write_text("not a directory")
    return path


def test_read_only_install_falls_back_to_the_user_cache(tmp_path):
    src = _copy_package(tmp_path)
    _blocker(src / "softfloat" / "__pycache__")      # no in-tree cache possible
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    r = _probe(src, env)
    assert r["v"] == [1.0, -5.0]
    assert r["dir"].startswith(str(tmp_path / "xdg" / "softfloat-lab" / "softfloat"))
    r2 = _probe(src, env)
    assert r2["hits"] >= 1 and r2["misses"] == 0


def test_nothing_writable_still_works_without_a_persistent_cache(tmp_path):
    src = _copy_package(tmp_path)
    _blocker(src / "softfloat" / "__pycache__")
    blocked = _blocker(tmp_path / "blocked")
    env = {"NUMBA_CACHE_DIR": str(blocked / "numba"), "XDG_CACHE_HOME": str(blocked / "xdg"),
           "HOME": str(blocked)}
    code = PROBE + (
        "d = _jitcache.cache_dir()\n"
        "print('PROBE ' + json.dumps({'dir': d, 'v': v.tolist()}))\n")
    r = _probe(src, env, code)
    assert r["v"] == [1.0, -5.0]
    assert "softfloat-jit-" in r["dir"]              # the process's temporary directory
    assert not os.path.exists(r["dir"])              # removed at exit


def test_functions_outside_the_package_keep_numba_s_own_cache(tmp_path):
    user = tmp_path / "user_mod.py"
    user.write_text("from numba import njit\n@njit(cache=True)\ndef f(x):\n    return x + 1\n")
    code = ("import json, softfloat, user_mod\n"
            "print('PROBE ' + json.dumps({'dir': user_mod.f._cache.cache_path, 'v': user_mod.f(1)}))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), ROOT])
    p = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    r = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("PROBE ")][-1][6:])
    assert r["v"] == 2
    assert r["dir"] == str(tmp_path / "__pycache__")  # numba's in-tree default, untouched


def test_warmup_task_lists():
    from softfloat import warmup
    common = [n for n, _ in warmup.tasks()]
    everything = [n for n, _ in warmup.tasks(True)]
    assert len(set(everything)) == len(everything)
    assert everything[:len(common)] == common and len(everything) > len(common)
    for n, fn in warmup.tasks(True):
        assert callable(fn), n


def test_warmup_command_compiles_the_common_set():
    # Same cache as the rest of the suite: what it compiles, later tests load.
    p = subprocess.run([sys.executable, "-m", "softfloat", "warmup", "--times"], cwd=ROOT,
                       capture_output=True, text=True, timeout=3600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "done in" in p.stderr and "FAILED" not in p.stderr
    assert p.stderr.count(" s CPU)") == len(__import__("softfloat.warmup").warmup.tasks())


def _check_eft_requests(monkeypatch, make):
    """Run warmup --all's arith and eft groups with ``eft.kernel`` spied on
    (``make(params, op, mode)`` gives the kernel returned): every fp16/bf16 (op,
    mode) is asked for, each from one group only."""
    from softfloat import warmup
    from softfloat._kernels import eft
    seen = {}
    group = [None]

    def spy(params, op, mode):
        seen.setdefault((tuple(params), int(op), int(mode)), set()).add(group[0])
        return make(params, op, mode)

    monkeypatch.setattr(eft, "kernel", spy)
    for name, fn in warmup.tasks(True):
        g = warmup.group_of(name)
        if g == "arith" or g.startswith("eft"):
            group[0] = g
            fn()
    want = {(P, op, m) for P in (eft.FP16, eft.BF16) for op in eft.OPS for m in range(6)}
    assert set(seen) == want, sorted(want - set(seen))
    assert all(len(gs) == 1 for gs in seen.values()), {k: v for k, v in seen.items()
                                                        if len(v) > 1}


def test_warmup_all_asks_for_each_eft_kernel_from_one_group(monkeypatch, fast_paths_on):
    """The fast twin of the test below: the same requests recorded, but the spy
    hands back a kernel that refuses (as under FTZ/DAZ), so the calls take the
    general kernels (the common set's) and none of the 72 pass-1 kernels is
    compiled here."""
    _check_eft_requests(monkeypatch, lambda params, op, mode: lambda lo, hi, *a: -1)


@pytest.mark.slow      # compiles all 72 pass-1 kernels (minutes on a cold cache)
def test_warmup_all_compiles_each_eft_kernel_in_one_group(monkeypatch, fast_paths_on):
    """`warmup --all` asks for every fp16/bf16 pass-1 kernel (format x op x mode:
    softfloat._kernels.eft.kernel), each from one --jobs group only, so that no
    kernel compiles in two processes at once."""
    from softfloat._kernels import eft
    _check_eft_requests(monkeypatch, eft.kernel)


# ---------------------------------------------------------------------------
# damaged cache files are detected, removed and rebuilt
def _damage(path, how):
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif how == "flipped":                   # two bytes of the machine code changed
        raw = bytearray(data)
        raw[len(raw) // 2] ^= 0x5A
        raw[len(raw) // 2 + 7] ^= 0xA5
        path.write_bytes(bytes(raw))
    else:
        path.write_bytes(b"\x80\x04junk that is not a pickle" * 3)


@pytest.mark.parametrize("suffix,how", [
    pytest.param(".nbi", "empty", marks=pytest.mark.slow),
    pytest.param(".nbc", "junk", marks=pytest.mark.slow),
    pytest.param(".nbi", "truncated", marks=pytest.mark.slow),
    pytest.param(".nbi", "junk", marks=pytest.mark.slow),
    pytest.param(".nbc", "empty", marks=pytest.mark.slow),
    pytest.param(".nbc", "truncated", marks=pytest.mark.slow),
    pytest.param(".nbc", "flipped", marks=pytest.mark.slow)])
def test_a_damaged_cache_file_is_removed_and_rebuilt(tmp_path, suffix, how):
    src = _copy_package(tmp_path)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    first = _probe(src, env)
    assert first["v"] == [1.0, -5.0]
    # the cache files of from_bits's kernel (convert.to_float64_chunk)
    files = sorted(p for p in (tmp_path / "cache").rglob("*to_float64_chunk*" + suffix))
    assert files, sorted(str(p) for p in (tmp_path / "cache").rglob("*"))
    for f in files:
        _damage(f, how)
    code = PROBE.replace("import json,", "import warnings; warnings.simplefilter('always')"
                                         "\nimport json,")
    env_py = {k: v for k, v in os.environ.items()
              if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    env_py.update(env, PYTHONPATH=str(src))
    p = subprocess.run([sys.executable, "-c", code], cwd=str(src), env=env_py,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr           # no EOFError/UnpicklingError
    r = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("PROBE ")][-1][6:])
    assert r["v"] == [1.0, -5.0] and r["misses"] >= 1       # compiled again
    assert "CacheRepairWarning" in p.stderr and "unreadable kernel cache file" in p.stderr
    again = _probe(src, env)                                # and the files were replaced
    assert again["v"] == [1.0, -5.0] and again["hits"] >= 1 and again["misses"] == 0
    for f in files:
        assert f.exists() and f.stat().st_size > 0


@pytest.mark.parametrize("content", [b"", b"\x80\x04\x95junk", b"not a pickle at all"])
def test_verified_loads_remove_a_damaged_file_of_softfloat_s_cache(tmp_path, monkeypatch,
                                                                   content):
    """The same repair in this process (no compilation): numba's IndexDataCacheFile
    on a directory of softfloat's cache reads a damaged index as empty and a
    damaged data file as missing, removing both; other caches are left alone."""
    from numba.core import caching
    from softfloat import _jitcache
    _jitcache.install()
    ours = tmp_path / "ours"
    ours.mkdir()
    monkeypatch.setitem(_jitcache._dirs, "test-package", str(ours))
    f = caching.IndexDataCacheFile(str(ours / "sub"), "k-1.py311", "stamp")
    os.makedirs(ours / "sub")
    idx = ours / "sub" / "k-1.py311.nbi"
    data = ours / "sub" / "k-1.py311.1.nbc"
    idx.write_bytes(content)
    data.write_bytes(content)
    with pytest.warns(_jitcache.CacheRepairWarning, match="unreadable kernel cache file"):
        assert f._load_index() == {}
    assert not idx.exists()
    with pytest.warns(_jitcache.CacheRepairWarning):
        with pytest.raises(OSError):                 # numba's load() reads this as "no entry"
            f._load_data("k-1.py311.1.nbc")
    assert not data.exists()
    f.save("key", (1, 2))                            # rebuilt: a fresh index and data file
    assert f.load("key") == (1, 2) and idx.stat().st_size > 0
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    g = caching.IndexDataCacheFile(str(theirs), "k-1.py311", "stamp")
    (theirs / "k-1.py311.nbi").write_bytes(b"")
    with pytest.raises(EOFError):                    # not softfloat's: numba's behaviour
        g._load_index()


def test_a_kernel_file_with_flipped_bytes_is_caught_before_it_is_loaded(tmp_path, monkeypatch):
    """Flipped bytes inside a data file may still unpickle (into machine code that
    crashes the process when loaded): every file of softfloat's cache carries a
    checksum, checked before the bytes are unpickled."""
    from numba.core import caching
    from softfloat import _jitcache
    _jitcache.install()
    ours = tmp_path / "ours"
    ours.mkdir()
    monkeypatch.setitem(_jitcache._dirs, "test-package", str(ours))
    f = caching.IndexDataCacheFile(str(ours), "k-1.py311", "stamp")
    payload = (b"machine code " * 100, 7)
    f.save("key", payload)
    assert f.load("key") == payload
    for name in ("k-1.py311.1.nbc", "k-1.py311.nbi"):
        path = ours / name
        raw = bytearray(path.read_bytes())
        mid = len(raw) // 2
        raw[mid] ^= 0x10
        raw[mid + 1] ^= 0x01
        path.write_bytes(bytes(raw))
        with pytest.warns(_jitcache.CacheRepairWarning, match="checksum"):
            assert f.load("key") is None                 # compiled again, never loaded
        assert not path.exists()
        f.save("key", payload)
        assert f.load("key") == payload
