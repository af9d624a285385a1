"""Where numba keeps softfloat's compiled kernels: one directory per version of
the package's sources, in the first writable place.

Why: numba's ``cache=True`` checks only the file that defines a kernel, so an
edit to a callee in another file (``round_pack`` in ``_kernels/core.py`` is
compiled into the kernels of ``convert.py``, ``arith.py``, ``accum.py``) would
leave the old machine code in use. Here every kernel of the package is cached
under a directory named by a hash of all the package's ``.py`` files (and of the
numba, llvmlite, numpy and Python versions), so any edit moves every kernel to
a fresh directory. (Hashing every file rather than the kernel files alone also
covers Python constants that numba freezes into machine code.) Kernels of the
sibling package ``nn`` get a hash that also covers softfloat's, since they may
call softfloat's kernels.

Where (the first one that can be written):

1. ``$NUMBA_CACHE_DIR/softfloat-lab/<package>/<hash>`` when NUMBA_CACHE_DIR is set;
2. ``<package>/__pycache__/jit/<hash>`` next to the sources (numba's default
   place; removing ``__pycache__`` clears it);
3. ``$XDG_CACHE_HOME/softfloat-lab/<package>/<hash>`` (default ``~/.cache``),
   for read-only installs;
4. a temporary directory of this process, removed at exit: no caching across
   processes, but every call works.

Old hash directories are pruned when a new one is made: the ``KEEP`` most
recently used are kept (so switching between a few versions stays cheap).

What is loaded is verified: every index (``.nbi``) and data file (``.nbc``) of
softfloat's cache is written with a SHA-256 checksum of its bytes at its end,
checked before anything in it is unpickled. A file that fails the check or
cannot be read back (zero-length, truncated, junk, a few flipped bytes: numba
would raise EOFError or UnpicklingError, or load damaged machine code that
crashes the process, on every later run) is removed, and the kernel is compiled
again and its files written anew, with a warning (`CacheRepairWarning`) naming
the file.

Only functions defined in the package's own files are affected: a locator
placed first in numba's list answers for those files and declines the others,
which numba then caches as usual. (With NUMBA_CACHE_LOCATOR_CLASSES set, numba
uses that list instead, and softfloat's kernels get numba's default behaviour.)
"""
from __future__ import annotations

import atexit
import hashlib
import io
import os
import pickle
import shutil
import sys
import tempfile
import threading
import warnings

#: hash directories kept per location (the current one included)
KEEP = 4

_BASE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
_PACKAGES = ("softfloat", "nn")      # nn: only when it sits next to softfloat

_lock = threading.Lock()
_hashes: dict[str, str] = {}         # package -> source hash
_dirs: dict[str, str] = {}           # package -> chosen cache directory
_tmpdir: list[str] = []


def _versions() -> bytes:
    import llvmlite
    import numba
    import numpy
    return (f"numba {numba.__version__} llvmlite {llvmlite.__version__} numpy "
            f"{numpy.__version__} python {sys.version} {sys.platform}").encode()


def _hash_tree(h, root: str) -> None:
    """Feed the relative path and bytes of every .py file under root, in a fixed order."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                p = os.path.join(dirpath, fn)
                h.update(os.path.relpath(p, root).replace(os.sep, "/").encode() + b"\0")
                with open(p, "rb") as f:
                    h.update(f.read())
                h.update(b"\0")


def source_hash(package: str = "softfloat") -> str:
    """Hash (16 hex digits) of the sources a package's kernels are compiled from."""
    with _lock:
        return _source_hash(package)


def _source_hash(package: str) -> str:
    if package not in _hashes:
        h = hashlib.sha256(_versions())
        if package != "softfloat":
            h.update(_source_hash("softfloat").encode())
        _hash_tree(h, os.path.join(_BASE, package))
        _hashes[package] = h.hexdigest()[:16]
    return _hashes[package]


def _user_cache_root() -> str:
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return xdg
    return os.path.join(os.path.expanduser("~"), ".cache")


def candidate_dirs(package: str = "softfloat") -> list[str]:
    """The places tried for a package's cache, in order (see the module docstring)."""
    from numba.core import config
    hs = source_hash(package)
    out = []
    if config.CACHE_DIR:
        out.append(os.path.join(config.CACHE_DIR, "softfloat-lab", package, hs))
    out.append(os.path.join(_BASE, package, "__pycache__", "jit", hs))
    out.append(os.path.join(_user_cache_root(), "softfloat-lab", package, hs))
    return out


def _writable(d: str) -> tuple[bool, bool]:
    """(usable, newly made): make d if needed and check that a file can be written."""
    new = not os.path.isdir(d)
    try:
        os.makedirs(d, exist_ok=True)
        tempfile.TemporaryFile(dir=d).close()
    except OSError:
        return False, False
    return True, new


def _prune(hash_dir: str) -> None:
    """Remove all but the KEEP most recently used hash directories beside hash_dir."""
    parent = os.path.dirname(hash_dir)
    try:
        entries = [os.path.join(parent, e) for e in os.listdir(parent)]
        dirs = [d for d in entries if os.path.isdir(d) and d != hash_dir]
        dirs.sort(key=lambda d: os.stat(d).st_mtime, reverse=True)
    except OSError:
        return
    for d in dirs[KEEP - 1:]:
        shutil.rmtree(d, ignore_errors=True)


def _process_tmpdir() -> str:
    if not _tmpdir:
        d = tempfile.mkdtemp(prefix="softfloat-jit-")
        atexit.register(shutil.rmtree, d, True)
        _tmpdir.append(d)
    return _tmpdir[0]


def cache_dir(package: str = "softfloat") -> str:
    """The directory holding a package's compiled kernels in this process
    (chosen once, on first use)."""
    with _lock:
        if package in _dirs:
            return _dirs[package]
    cands = candidate_dirs(package)
    chosen = None
    for d in cands:
        ok, new = _writable(d)
        if ok:
            chosen = d
            if new:
                _prune(d)
            else:
                try:
                    os.utime(d)              # most recently used: kept by _prune
                except OSError:
                    pass
            break
    if chosen is None:
        chosen = os.path.join(_process_tmpdir(), package, source_hash(package))
        os.makedirs(chosen, exist_ok=True)
    with _lock:
        return _dirs.setdefault(package, chosen)


def _package_of(py_file: str):
    """(package, directory of the file relative to the package) or None."""
    try:
        p = os.path.realpath(py_file)
    except (OSError, ValueError):
        return None
    for pkg in _PACKAGES:
        root = os.path.join(_BASE, pkg)
        if p.startswith(root + os.sep) and p.endswith(".py"):
            if pkg != "softfloat" and not os.path.isfile(os.path.join(root, "__init__.py")):
                return None
            return pkg, os.path.relpath(os.path.dirname(p), root)
    return None


def _make_locator_class():
    from numba.core import caching
    base = getattr(caching, "_CacheLocator")

    class SoftfloatCacheLocator(base):
        """numba cache locator for the kernels of softfloat (and nn): a directory
        per source hash (see softfloat._jitcache)."""

        def __init__(self, py_func, py_file, package, rel):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._package = package
            d = cache_dir(package)
            self._cache_path = d if rel in ("", ".") else os.path.join(d, rel)

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            # the directory is already per hash; the stamp repeats it in the index
            return source_hash(self._package)

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            where = _package_of(py_file)
            if where is None:
                return None                  # not ours: numba's own locators decide
            self = cls(py_func, py_file, *where)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    return SoftfloatCacheLocator


class CacheRepairWarning(UserWarning):
    """A cache file of softfloat's kernels could not be read; it was removed and
    the kernel is compiled again."""


#: what reading a damaged cache file raises (EOFError: zero-length or cut
#: short; UnpicklingError and the others: junk bytes)
_DAMAGED = (EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError,
            ImportError, IndexError, KeyError, MemoryError, OverflowError, UnicodeDecodeError)


def _ours(cache_path: str) -> bool:
    """Whether a numba cache directory is one of softfloat's (a chosen cache dir
    or below one)."""
    p = os.path.realpath(cache_path)
    with _lock:
        roots = list(_dirs.values())
    return any(p == r or p.startswith(os.path.realpath(r) + os.sep) for r in roots)


class _ChecksumError(ValueError):
    """A cache file whose bytes do not match the checksum written with them."""


#: what follows a file's bytes: a marker and the SHA-256 digest of the bytes
_SEAL = b"softfloat-lab sha256"


def _seal(data: bytes) -> bytes:
    return data + _SEAL + hashlib.sha256(data).digest()


def _unseal(raw: bytes) -> bytes:
    """The bytes written by `_seal`; _ChecksumError if they were changed."""
    n = len(_SEAL) + 32
    if len(raw) < n or raw[-n:-32] != _SEAL:
        raise _ChecksumError("no checksum (cut short, or not written by softfloat)")
    body = raw[:-n]
    if hashlib.sha256(body).digest() != raw[-32:]:
        raise _ChecksumError("checksum mismatch (damaged bytes)")
    return body


def _discard(path: str, exc: BaseException) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError:
        return                               # cannot repair: numba recompiles each time
    warnings.warn(f"softfloat: removed the unreadable kernel cache file {path} "
                  f"({type(exc).__name__}: {exc}); compiling it again",
                  CacheRepairWarning, stacklevel=3)


def _install_verified_loads(caching) -> None:
    """Wrap numba's index and data loads (IndexDataCacheFile) so that a damaged
    file of softfloat's cache is removed and treated as missing: numba then
    compiles and saves a fresh one. Other caches keep numba's behaviour."""
    cls = caching.IndexDataCacheFile
    if getattr(cls, "_softfloat_verified", False):
        return
    load_index, load_data = cls._load_index, cls._load_data
    save_index, save_data = cls._save_index, cls._save_data

    def _read_index(self):
        # numba's _load_index on the checked bytes: the numba version, then the
        # pickled (source stamp, overloads)
        try:
            with open(self._index_path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return {}
        buf = io.BytesIO(_unseal(raw))
        if pickle.load(buf) != self._version:
            return {}
        stamp, overloads = pickle.loads(buf.read())
        return overloads if stamp == self._source_stamp else {}

    def _save_index(self, overloads):
        if not _ours(self._cache_path):
            return save_index(self, overloads)
        data = pickle.dumps(self._version, protocol=-1) + self._dump(
            (self._source_stamp, overloads))
        with self._open_for_write(self._index_path) as f:
            f.write(_seal(data))

    def _save_data(self, name, data):
        if not _ours(self._cache_path):
            return save_data(self, name, data)
        with self._open_for_write(self._data_path(name)) as f:
            f.write(_seal(self._dump(data)))

    def _load_index(self):
        try:
            overloads = (_read_index(self) if _ours(self._cache_path)
                         else load_index(self))
            if not isinstance(overloads, dict):
                raise TypeError(f"index holds a {type(overloads).__name__}, not a dict")
            return overloads
        except _DAMAGED as exc:
            if not _ours(self._cache_path):
                raise
            _discard(self._index_path, exc)
            return {}

    def _load_data(self, name):
        try:
            if not _ours(self._cache_path):
                return load_data(self, name)
            with open(self._data_path(name), "rb") as f:
                return pickle.loads(_unseal(f.read()))
        except _DAMAGED as exc:
            if not _ours(self._cache_path):
                raise
            _discard(self._data_path(name), exc)
            # IndexDataCacheFile.load treats OSError as "no entry": compile again
            raise OSError(f"damaged cache file {name} removed") from None

    cls._load_index, cls._load_data = _load_index, _load_data
    cls._save_index, cls._save_data = _save_index, _save_data
    cls._softfloat_verified = True


_installed: list = []


def install() -> None:
    """Put softfloat's locator first in numba's list (idempotent). Call before
    any kernel module is imported: numba picks a function's locator when the
    function is decorated."""
    if _installed:
        return
    from numba.core import caching
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
    cls = _make_locator_class()
    impl._locator_classes = [cls] + [c for c in impl._locator_classes
                                     if c.__name__ != cls.__name__]
    _install_verified_loads(caching)
    _installed.append(cls)
