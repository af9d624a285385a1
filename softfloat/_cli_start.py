"""The start of a command (``python -m softfloat ...``, ``python -m nn.experiments``,
``python -m softfloat.verification.peers``): what happens before the command's own code
runs, while the package is imported, still ends in one line and an exit status.

* Ctrl-C while the package and numba are imported: one line, exit status 130
  (a KeyboardInterrupt raised there would print a traceback, or be lost inside
  llvmlite's callbacks and let the command finish with status 0). The command's
  own code gets Python's KeyboardInterrupt back (`restore_sigint`).
* a junk ``SOFTFLOAT_*`` switch: one line, exit status 2 (a library user gets
  the ValueError naming the variable instead).
* Ctrl-C while the command runs: Python's KeyboardInterrupt, which the command
  turns into one line and status 130. Raised inside one of llvmlite's ctypes
  callbacks (numba compiling a kernel), the exception would be printed and
  dropped ("Exception ignored on calling ctypes callback function") and the
  command would go on as if nothing had happened; `restore_sigint` installs an
  unraisable-exception hook that delivers the interrupt again a moment later,
  back in ordinary Python code.
"""
from __future__ import annotations

import os
import signal
import sys
import threading

_state = {"prog": None}


def starting_command() -> bool:
    """Whether this import is the start of ``python -m <module>`` (Python sets
    ``sys.argv[0]`` to ``-m`` while it locates the module)."""
    return sys.argv[:1] == ["-m"]


def _prog() -> str:
    argv = getattr(sys, "orig_argv", None) or []
    if "-m" in argv[:-1]:
        i = argv.index("-m")
        return " ".join(["python", "-m"] + argv[i + 1:i + 3 if argv[i + 1] == "softfloat"
                                                  else i + 2])
    return "softfloat"


def _interrupted(signum, frame):
    try:
        os.write(2, f"\n{_state['prog']}: interrupted\n".encode())
    finally:
        os._exit(130)


def begin() -> None:
    """Called by ``softfloat/__init__`` first when `starting_command`."""
    _state["prog"] = _prog()
    try:
        signal.signal(signal.SIGINT, _interrupted)
    except (ValueError, OSError):              # not the main thread: leave it
        pass
    from . import config
    try:
        config.check_all()
    except ValueError as e:
        sys.stderr.write(f"{_state['prog']}: error: {e}\n")
        raise SystemExit(2) from None


def restore_sigint() -> None:
    """Hand Ctrl-C back to the command (Python's KeyboardInterrupt), and make sure
    that an interrupt dropped inside a ctypes callback is delivered again."""
    if signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if sys.unraisablehook is not _unraisable:
        _state["previous_hook"] = sys.unraisablehook
        sys.unraisablehook = _unraisable


def _unraisable(unraisable) -> None:
    """sys.unraisablehook: a KeyboardInterrupt that could not propagate (raised in
    a ctypes callback) is sent again as SIGINT after 50 ms, from a timer thread,
    so that it lands in code that can raise it; anything else goes to the hook
    that was installed before."""
    t = getattr(unraisable, "exc_type", None)
    if isinstance(t, type) and issubclass(t, KeyboardInterrupt):
        timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
        timer.daemon = True
        timer.start()
        return
    (_state.get("previous_hook") or sys.__unraisablehook__)(unraisable)
