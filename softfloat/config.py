"""The environment switches: every ``SOFTFLOAT_*`` variable, read here by one parser.

=========================  =======  =====================================================
variable                   default  what it does
=========================  =======  =====================================================
``SOFTFLOAT_FAST_PATHS``   on       off: every operation runs the general integer kernels
                                    only (the default of ``Context.fast_paths``; read when
                                    a context is made)
``SOFTFLOAT_HW``           on       off: no fast path that needs the CPU's F16C
                                    conversions or float32 arithmetic (the integer
                                    fast paths stay on); read at import
                                    (``softfloat._kernels.hw.FORCE_INTEGER``)
``SOFTFLOAT_AVX512``       on       off: the F16C conversion kernels use two 256-bit
                                    instructions where AVX-512F offers one; read when a
                                    kernel compiles (use a fresh ``NUMBA_CACHE_DIR``)
``SOFTFLOAT_SWEEP_SIMD``   on       off: the sweep oracles run their scalar kernels only;
                                    read at import (``sweep_oracles.check.USE_SIMD``)
``SOFTFLOAT_NUM_THREADS``  (CPUs)   threads of the chunk pool for large arrays (else
                                    ``NUMBA_NUM_THREADS``, else the CPUs this process
                                    may use); read at every call
``SOFTFLOAT_LAZY_INIT``    off      on: numba's one-time compiler set-up is left to the
                                    first kernel call instead of ``import softfloat``
                                    (``softfloat._startup``); read at import
=========================  =======  =====================================================

A boolean switch accepts ``1``/``true``/``yes``/``on`` and ``0``/``false``/``no``/``off``
in any case, with surrounding blanks; an unset or empty variable takes the default.
Anything else is refused with a ValueError that names the variable, never read as a
default.
"""
from __future__ import annotations

import os

__all__ = ["SWITCHES", "switch", "count", "check_all", "fast_paths", "hardware", "avx512", "sweep_simd",
           "num_threads", "lazy_init"]

#: name -> (kind, default, one line): the table above, as data
SWITCHES = {
    "SOFTFLOAT_FAST_PATHS": ("bool", True, "every fast path; off: the general kernels only"),
    "SOFTFLOAT_HW": ("bool", True, "the fast paths that need F16C or float32 arithmetic"),
    "SOFTFLOAT_AVX512": ("bool", True, "512-bit F16C conversions where AVX-512F is present"),
    "SOFTFLOAT_SWEEP_SIMD": ("bool", True, "the SIMD kernels of the sweep oracles"),
    "SOFTFLOAT_NUM_THREADS": ("count", None, "threads of the chunk pool (default: the CPUs)"),
    "SOFTFLOAT_LAZY_INIT": ("bool", False, "numba's set-up at the first kernel call, not at import"),
}

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _raw(name: str):
    if name not in SWITCHES:
        raise KeyError(f"{name} is not a softfloat switch; expected one of {sorted(SWITCHES)}")
    v = os.environ.get(name)
    return None if v is None or not v.strip() else v.strip()


def switch(name: str) -> bool:
    """The boolean switch ``name`` (its default when unset or empty)."""
    v = _raw(name)
    if v is None:
        return SWITCHES[name][1]
    if v.lower() in _TRUE:
        return True
    if v.lower() in _FALSE:
        return False
    raise ValueError(f"environment variable {name}={v!r}: expected one of "
                     f"{'/'.join(_TRUE)} (on) or {'/'.join(_FALSE)} (off), any case")


def count(name: str):
    """The positive integer switch ``name``, or None when unset or empty."""
    v = _raw(name)
    if v is None:
        return None
    if not (v.isdigit() and int(v) > 0):
        raise ValueError(f"environment variable {name}={v!r}: expected a positive integer")
    return int(v)


def check_all() -> None:
    """Read every switch: a ValueError naming the first one set to junk."""
    for name, (kind, _, _) in SWITCHES.items():
        switch(name) if kind == "bool" else count(name)


def fast_paths() -> bool:
    return switch("SOFTFLOAT_FAST_PATHS")


def hardware() -> bool:
    return switch("SOFTFLOAT_HW")


def avx512() -> bool:
    return switch("SOFTFLOAT_AVX512")


def sweep_simd() -> bool:
    return switch("SOFTFLOAT_SWEEP_SIMD")


def lazy_init() -> bool:
    return switch("SOFTFLOAT_LAZY_INIT")


def num_threads() -> int:
    """$SOFTFLOAT_NUM_THREADS, else numba's $NUMBA_NUM_THREADS (a positive integer,
    as numba itself requires), else the number of CPUs available to this process."""
    n = count("SOFTFLOAT_NUM_THREADS")
    if n is not None:
        return n
    v = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    if v.isdigit() and int(v) > 0:
        return int(v)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (not Linux)
        return os.cpu_count() or 1
