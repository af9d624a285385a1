"""Implementations under test, and the adapters that make one of anything.

An implementation is a Python callable taking operand encodings (NumPy
unsigned arrays, one per operand) and returning result encodings, or
``(results, flags)`` with flags in the library's bits (inexact 1, underflow 2,
overflow 4, infinite 8, invalid 16; None or 0xFF everywhere: no flags).
Adapters build one from a NumPy-dtype function (`numpy_impl`), a torch function
on any device (`torch_impl`), a C function through ctypes (`ctypes_impl`), an
external program speaking SFV1 over stdin/stdout (`exec_impl`, docs/verify.md),
or a file of results (`results_file`: raw binary in case order, ``.npy`` /
``.npz``, TestFloat lines). ``"module:function"`` and ``"exec:COMMAND"``
strings name one (for worker processes and the command line).

Internally verify opens a *session* per shard: ``impl.open(op, rounding,
policies, total)`` returns a callable ``session(ops, lo) -> (results, flags or
None)`` (``lo``: the index of the first case) with a ``close()``.
"""
from __future__ import annotations

import importlib
import os
import shlex
import struct
import subprocess
import tempfile
import threading
import time

import numpy as np

from .ops import Op

__all__ = ["numpy_impl", "torch_impl", "ctypes_impl", "exec_impl", "results_file",
           "ImplError", "resolve_impl", "FLAGS_NONE", "DEFAULT_TIMEOUT", "MAX_BATCH"]

FLAGS_NONE = 0xFF
DEFAULT_TIMEOUT = 60.0
MAX_BATCH = 1 << 20


class ImplError(RuntimeError):
    """The implementation could not be run, or broke the interface (the message
    says how); the command line exits 2."""


def _policy_words(policies: dict) -> list:
    """The non-default policies as SFV1 ``key=value`` words (booleans 0/1, NaN
    patterns in hex)."""
    from .ops import DEFAULTS
    out = []
    for k in ("ftz", "daz", "tininess", "nan", "overflow", "saturation"):
        v = policies.get(k, DEFAULTS[k])
        if v == DEFAULTS[k] or v is None:
            continue
        if isinstance(v, (bool, np.bool_)):
            v = int(v)
        elif isinstance(v, (int, np.integer)):
            v = f"{int(v):#x}"
        out.append(f"{k}={v}")
    return out


def normalize_output(op: Op, out, n: int):
    """(results in op.out_dtype, flags uint8 or None) from what an implementation
    returned for ``n`` cases; ImplError says what was wrong."""
    flags = None
    if isinstance(out, tuple):
        if len(out) != 2:
            raise ImplError(f"implementation returned a tuple of {len(out)}; expected results "
                            f"or (results, flags)")
        out, flags = out
    r = np.asarray(out)
    if r.dtype.kind == "b":
        r = r.astype(np.uint8)
    if r.dtype.kind not in "ui":
        raise ImplError(f"implementation returned {r.dtype} values; expected unsigned result "
                        f"encodings ({op.out_dtype}), e.g. x.view(np.uint{8 * r.dtype.itemsize})")
    r = r.reshape(-1)
    if r.size != n:
        raise ImplError(f"implementation returned {r.size} results for {n} cases")
    if r.dtype.kind == "i":
        r = r.astype(np.int64).view(np.uint64)
    bits = op.out_bits
    if bits < 64 and r.size and int(r.max()) >= 1 << bits:
        raise ImplError(f"implementation returned {int(r.max()):#x}, out of range for "
                        f"{bits}-bit results of {op.name}")
    r = r.astype(op.out_dtype)
    if flags is not None:
        fl = np.asarray(flags)
        if fl.dtype.kind not in "ui":
            raise ImplError(f"flags must be unsigned integers, got {fl.dtype}")
        fl = fl.reshape(-1)
        if fl.size == 1 and n != 1:
            fl = np.full(n, fl[0])
        if fl.size != n:
            raise ImplError(f"implementation returned {fl.size} flags for {n} cases")
        if fl.size and (fl == FLAGS_NONE).all():
            flags = None
        else:
            if fl.size and int(fl.max()) > 31:
                raise ImplError(f"flag value {int(fl.max()):#x}: flags are bits 1..16 "
                                f"(0xFF: no flags)")
            flags = fl.astype(np.uint8)
    return r, flags


class _CallSession:
    def __init__(self, fn, op):
        self.fn, self.op = fn, op

    def __call__(self, ops, lo):
        return normalize_output(self.op, self.fn(*ops), ops[0].size if ops else 0)

    def close(self):
        pass


class Callable:
    """A Python callable as an implementation (the base of the adapters)."""

    def __init__(self, fn, name=None):
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", repr(fn))

    def __call__(self, *ops):
        return self.fn(*ops)

    def open(self, op, rounding, policies, total):
        return _CallSession(self, op)

    def __repr__(self):
        return f"<implementation {self.name}>"


def as_impl(impl):
    """An implementation object (with ``open``) for ``impl``."""
    if isinstance(impl, str):
        return resolve_impl(impl)
    if hasattr(impl, "open") and callable(getattr(impl, "open")):
        return impl
    if callable(impl):
        return Callable(impl)
    raise TypeError(f"impl must be a callable, an adapter, 'module:function' or "
                    f"'exec:COMMAND', got {type(impl).__name__}")


def resolve_impl(spec: str):
    """``"exec:COMMAND"`` or ``"module:function"`` (``module:function(arg)`` is not
    evaluated: name a callable)."""
    if spec.startswith("exec:"):
        return exec_impl(spec[5:])
    mod, sep, attr = spec.partition(":")
    if not sep or not mod or not attr:
        raise ValueError(f"--impl {spec!r}: expected module:function or exec:COMMAND")
    try:
        m = importlib.import_module(mod)
    except ImportError as exc:
        raise ValueError(f"--impl {spec!r}: cannot import {mod!r} ({exc})") from None
    obj = m
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"--impl {spec!r}: {mod} has no attribute {attr!r}")
        obj = getattr(obj, part)
    impl = as_impl(obj)
    if isinstance(impl, Callable):
        impl.name = spec
    return impl


# ---------------------------------------------------------------------------
# NumPy dtypes, torch
def numpy_impl(func, dtype, name=None):
    """``func`` applied to the operands viewed as ``dtype`` (np.float16, an
    ml_dtypes type, ...); its result is viewed back as encodings of its own
    itemsize (booleans as 0/1). No flags."""
    dt = np.dtype(dtype)

    def run(*ops):
        vals = [np.ascontiguousarray(x).view(dt) if x.dtype.itemsize == dt.itemsize
                else _bad_width(x, dt) for x in ops]
        with np.errstate(all="ignore"):
            r = np.asarray(func(*vals))
        if r.dtype.kind in "biu":
            return r
        return r.view(np.dtype(f"u{r.dtype.itemsize}"))
    return Callable(run, name or f"numpy {getattr(func, '__name__', func)} {dt.name}")


def _bad_width(x, dt):
    raise ImplError(f"operands of {x.dtype.itemsize} bytes cannot be viewed as {dt}")


_TORCH_INT = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


def torch_impl(func, dtype, device="cpu", name=None):
    """``func`` applied to torch tensors of ``dtype`` (torch.float16,
    torch.bfloat16, torch.float8_e4m3fn, ...) on ``device``; the result's bits
    come back to the host. No flags."""
    import torch
    dt = getattr(torch, dtype) if isinstance(dtype, str) else dtype

    def run(*ops):
        ts = []
        for x in ops:
            it = getattr(torch, _TORCH_INT[x.dtype.itemsize])
            h = torch.from_numpy(np.ascontiguousarray(x).view(f"i{x.dtype.itemsize}")
                                 if x.dtype.itemsize > 1 else np.ascontiguousarray(x))
            ts.append(h.to(it).view(dt).to(device))
        with torch.no_grad():
            r = func(*ts)
        r = r.to("cpu")
        if r.dtype == torch.bool:
            return r.numpy().astype(np.uint8)
        size = r.element_size()
        return r.view(getattr(torch, _TORCH_INT[size])).numpy().view(f"u{size}")
    return Callable(run, name or f"torch {getattr(func, '__name__', func)} {dt} {device}")


# ---------------------------------------------------------------------------
# ctypes
def ctypes_impl(cfunc, *, vectorized=False, flags=False, name=None):
    """A C function through ctypes.

    Scalar (default): ``result = f(a[, b[, c]])`` on encodings (declare
    ``f.argtypes``/``f.restype`` as unsigned integer types, e.g. ``c_uint16``);
    with ``flags=True`` the function's last argument is a ``uint8_t *`` it
    stores the case's flags into. Vectorized: ``void f(size_t n, const T *a[,
    const T *b, const T *c], R *out, uint8_t *flags)`` over whole arrays (flags
    pre-filled with 0xFF: an implementation without flags leaves them)."""
    import ctypes

    def run(*ops):
        n = ops[0].size if ops else 0
        out = []
        fl = np.full(n, FLAGS_NONE, np.uint8)
        cf = ctypes.c_uint8()
        for i in range(n):
            args = [int(x[i]) for x in ops]
            if flags:
                cf.value = 0
                out.append(cfunc(*args, ctypes.byref(cf)))
                fl[i] = cf.value
            else:
                out.append(cfunc(*args))
        return np.array(out, np.uint64), (fl if flags else None)

    class _Vec(Callable):
        def open(self, op, rounding, policies, total):
            return _CallSession(lambda *ops: _vec_call(cfunc, op, ops), op)

    if vectorized:
        return _Vec(run, name or f"ctypes {getattr(cfunc, '__name__', cfunc)}")
    return Callable(run, name or f"ctypes {getattr(cfunc, '__name__', cfunc)}")


def _vec_call(cfunc, op, ops):
    import ctypes
    n = ops[0].size
    out = np.zeros(n, op.out_dtype)
    fl = np.full(n, FLAGS_NONE, np.uint8)
    ins = [np.ascontiguousarray(x) for x in ops]
    cfunc(ctypes.c_size_t(n), *[x.ctypes.data_as(ctypes.c_void_p) for x in ins],
          out.ctypes.data_as(ctypes.c_void_p), fl.ctypes.data_as(ctypes.c_void_p))
    return out, fl


# ---------------------------------------------------------------------------
# an external program speaking SFV1
class exec_impl:
    """A program started with ``command`` (split like a shell line, no shell)
    speaking SFV1 over stdin/stdout (docs/verify.md): one header line, ``OK``,
    then batches of at most ``batch`` cases; every read waits at most
    ``timeout`` seconds."""

    def __init__(self, command, *, timeout=DEFAULT_TIMEOUT, batch=1 << 16, cwd=None,
                 env=None):
        if isinstance(command, str):
            if command.startswith("exec:"):
                command = command[5:]
            argv = shlex.split(command)
        else:
            argv = [str(x) for x in command]
        if not argv:
            raise ValueError("exec_impl: empty command")
        if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
                and 0 < timeout < float("inf")):
            raise ValueError(f"timeout must be a positive, finite number of seconds, got "
                             f"{timeout!r}")
        if not (isinstance(batch, int) and 1 <= batch <= MAX_BATCH):
            raise ValueError(f"batch must be an integer in [1, {MAX_BATCH}], got {batch!r}")
        self.argv, self.timeout, self.batch = argv, float(timeout), batch
        self.cwd, self.env = cwd, env
        self.name = "exec:" + (command if isinstance(command, str) else shlex.join(argv))

    def __repr__(self):
        return f"<implementation {self.name}>"

    def open(self, op, rounding, policies, total):
        return _ExecSession(self, op, rounding, policies)


class _ExecSession:
    def __init__(self, spec: exec_impl, op: Op, rounding, policies):
        self.spec, self.op = spec, op
        self.err = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(spec.argv, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self.err,
                                         cwd=spec.cwd, env=spec.env, bufsize=0)
        except OSError as exc:
            raise ImplError(f"{spec.name}: cannot start ({exc.strerror or exc})") from None
        words = ["SFV1", op.name, op.fmt.name, rounding, str(op.nops), str(op.in_bytes),
                 str(op.out_bytes)] + _policy_words(policies)
        self.header = " ".join(words)
        self._write(self.header.encode() + b"\n")
        line = self._readline()
        if line.startswith("ERR"):
            self._kill()
            raise ImplError(f"{spec.name} refused '{self.header}': {line[3:].strip()}")
        if line != "OK":
            self._kill()
            raise ImplError(f"{spec.name}: expected 'OK' or 'ERR <reason>' after the header, "
                            f"got {line[:80]!r}")

    # -- io with timeouts ----------------------------------------------------
    def _stderr_tail(self):
        try:
            self.err.seek(0)
            t = self.err.read()[-600:].decode(errors="replace").strip()
        except (OSError, ValueError):
            t = ""
        return f"; its stderr: {t}" if t else ""

    def _dead(self, what):
        try:
            rc = self.proc.wait(2)
        except subprocess.TimeoutExpired:
            rc = None
        self._kill()
        state = f"exited with status {rc}" if rc is not None else "stopped answering"
        return ImplError(f"{self.spec.name} {state} {what}{self._stderr_tail()}")

    def _write(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._dead("while reading its input") from None

    def _read(self, n, what):
        import selectors
        buf = bytearray()
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + self.spec.timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while len(buf) < n:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self._kill()
                    raise ImplError(f"{self.spec.name}: no answer within "
                                    f"{self.spec.timeout:g} s {what} (timeout){self._stderr_tail()}")
                chunk = os.read(fd, min(n - len(buf), 1 << 20))
                if not chunk:
                    try:
                        self.proc.wait(1)
                    except subprocess.TimeoutExpired:
                        pass
                    raise self._dead(f"{what} (after {len(buf)} of {n} bytes)")
                buf += chunk
        return bytes(buf)

    def _readline(self):
        import selectors
        buf = bytearray()
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + self.spec.timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while not buf.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self._kill()
                    raise ImplError(f"{self.spec.name}: no answer to the header within "
                                    f"{self.spec.timeout:g} s (timeout){self._stderr_tail()}")
                c = os.read(fd, 1)
                if not c:
                    raise self._dead("before answering the header")
                buf += c
                if len(buf) > 4096:
                    self._kill()
                    raise ImplError(f"{self.spec.name}: answer line to the header too long")
        return buf.decode(errors="replace").strip()

    def _pending(self, wait=0.0, limit=1 << 16):
        """How many bytes the program has written that nobody asked for: read
        what is there now (within ``wait`` seconds: until end of file)."""
        import selectors
        fd = self.proc.stdout.fileno()
        got = 0
        deadline = time.monotonic() + wait
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while got < limit:
                if not sel.select(max(0.0, deadline - time.monotonic())):
                    break
                chunk = os.read(fd, limit - got)
                if not chunk:
                    break
                got += len(chunk)
        return got

    def _kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass

    # -- batches ---------------------------------------------------------------
    def __call__(self, ops, lo):
        op = self.op
        n_all = ops[0].size
        res = np.empty(n_all, op.out_dtype)
        flg = np.empty(n_all, np.uint8)
        w = op.in_bytes
        idt = np.dtype(f"<u{w}")
        for s in range(0, n_all, self.spec.batch):
            e = min(n_all, s + self.spec.batch)
            n = e - s
            mat = np.empty((n, op.nops), idt)
            for j, x in enumerate(ops):
                mat[:, j] = x[s:e]
            payload = struct.pack("<I", n) + mat.tobytes()
            # a writer thread: a program that answers while still reading cannot
            # deadlock against a full pipe
            err = []

            def write():
                try:
                    self.proc.stdin.write(payload)
                    self.proc.stdin.flush()
                except (BrokenPipeError, OSError, ValueError) as exc:
                    err.append(exc)
            t = threading.Thread(target=write, daemon=True)
            t.start()
            data = self._read(n * op.out_bytes + n, f"to a batch of {n} cases (case {lo + s})")
            t.join(self.spec.timeout)
            if err:
                raise self._dead("while reading a batch")
            extra = self._pending()
            if extra:
                self._kill()
                raise ImplError(f"{self.spec.name}: wrote {extra} bytes more than the {n} "
                                f"answers ({n * (op.out_bytes + 1)} bytes) to the batch of {n} "
                                f"cases (case {lo + s}){self._stderr_tail()}")
            res[s:e] = np.frombuffer(data[:n * op.out_bytes], f"<u{op.out_bytes}")
            flg[s:e] = np.frombuffer(data[n * op.out_bytes:], np.uint8)
        bits = op.out_bits
        if bits < 64 and n_all and int(res.max()) >= 1 << bits:
            bad = int(np.flatnonzero(res >= np.uint64(1 << bits) if bits < 64 else 0)[0])
            raise ImplError(f"{self.spec.name}: result {int(res[bad]):#x} of case {lo + bad} is "
                            f"out of range for {bits}-bit results of {op.name}")
        if n_all and (flg == FLAGS_NONE).all():
            return res, None
        if n_all and int(flg.max()) > 31 and not (flg == FLAGS_NONE).all():
            bad = int(np.flatnonzero(flg > 31)[0])
            raise ImplError(f"{self.spec.name}: flag byte {int(flg[bad]):#x} of case {lo + bad}: "
                            f"flags are bits 1..16, or 0xFF in every byte for none")
        return res, flg

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(struct.pack("<I", 0))
                self.proc.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass
            try:
                rc = self.proc.wait(self.spec.timeout)
            except subprocess.TimeoutExpired:
                self._kill()
                raise ImplError(f"{self.spec.name}: did not exit within {self.spec.timeout:g} s "
                                f"after the end of the stream") from None
            if rc != 0:
                raise ImplError(f"{self.spec.name} exited with status {rc} at the end of the "
                                f"stream{self._stderr_tail()}")
        extra = self._pending(wait=1.0)
        self.proc.stdout.close()
        if extra:
            raise ImplError(f"{self.spec.name}: wrote {extra} bytes after the end of the "
                            f"stream (it should answer the 0-case batch by exiting)")
        self.err.close()

    def abort(self):
        """Stop the program now (an error or an interrupt in verify)."""
        self._kill()
        for fh in (self.proc.stdin, self.proc.stdout, self.err):
            try:
                fh.close()
            except (OSError, ValueError):
                pass


# ---------------------------------------------------------------------------
# results files
class results_file:
    """Results computed elsewhere, in a file.

    * raw binary (any other suffix): the results in case order, little-endian,
      ``out_bytes`` each, optionally followed by one flag byte per case;
    * ``.npy``: a 1-D array of result encodings; ``.npz``: arrays ``results``
      and (optional) ``flags``;
    * ``.txt`` / ``.tf`` / ``.lines``: TestFloat lines (operands, result, flags),
      which carry their own operands (the space is the file's cases).
    """

    def __init__(self, path, *, kind=None):
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise ValueError(f"results file {self.path!r} does not exist")
        ext = os.path.splitext(self.path)[1].lower()
        self.kind = kind or {".npy": "npy", ".npz": "npz", ".txt": "lines", ".tf": "lines",
                             ".lines": "lines"}.get(ext, "raw")
        if self.kind not in ("raw", "npy", "npz", "lines"):
            raise ValueError(f"kind must be raw, npy, npz or lines, got {kind!r}")
        self.name = f"results {self.path}"

    def __repr__(self):
        return f"<implementation {self.name}>"

    def _load_numpy(self):
        """(results, flags or None) of a .npy / .npz file; ValueError naming the
        file when it is not one NumPy can read."""
        import zipfile
        try:
            if self.kind == "npy":
                return np.load(self.path, mmap_mode="r", allow_pickle=False), None
            with np.load(self.path, allow_pickle=False) as z:
                if not hasattr(z, "files"):
                    raise ValueError("a single array, not an .npz archive")
                if "results" not in z.files:
                    raise ValueError(f"expected an array named 'results', it holds "
                                     f"{', '.join(z.files) or 'nothing'}")
                return z["results"], (z["flags"] if "flags" in z.files else None)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(f"results file {self.path}: not a readable "
                             f".{self.kind} file ({exc})") from None

    def lines(self, op: Op):
        """(operands, results, flags) of a TestFloat-lines file."""
        from ..testfloat.lineio import parse_lines
        if op.testfloat is None:
            raise ValueError(f"{op.name} has no TestFloat function name; give results as raw "
                             f"binary or .npy in case order")
        with open(self.path, "rb") as fh:
            ops, r, f = parse_lines(op.testfloat, fh.read())
        return tuple(np.asarray(x).astype(d) for x, d in zip(ops, op.in_dtypes)), r, f

    def open(self, op, rounding, policies, total):
        if self.kind == "lines":
            _, r, f = self.lines(op)
            res, flg = r, f
        elif self.kind in ("npy", "npz"):
            res, flg = self._load_numpy()
        else:
            size = os.path.getsize(self.path)
            w = op.out_bytes
            mm = np.memmap(self.path, np.uint8, "r") if size else np.zeros(0, np.uint8)
            if size == total * w:
                res, flg = mm.view(f"<u{w}"), None
            elif size == total * (w + 1):
                res = mm[:total * w].view(f"<u{w}")
                flg = mm[total * w:]
            else:
                raise ValueError(f"{self.path}: {size} bytes; expected {total} results of {w} "
                                 f"bytes ({total * w}), optionally followed by {total} flag "
                                 f"bytes ({total * (w + 1)})")
        res = np.asarray(res).reshape(-1)
        if res.size != total:
            raise ValueError(f"{self.path}: {res.size} results; the space has {total} cases")
        if flg is not None and np.asarray(flg).size != total:
            raise ValueError(f"{self.path}: {np.asarray(flg).size} flags for {total} cases")

        def session(ops, lo):
            n = ops[0].size
            out = np.asarray(res[lo:lo + n])
            fl = None if flg is None else np.asarray(flg[lo:lo + n])
            return normalize_output(op, (out, fl) if fl is not None else out, n)
        return _FileSession(session)


class _FileSession:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, ops, lo):
        return self.fn(ops, lo)

    def close(self):
        pass
