"""Sweep oracles: the correct result bits and flags of an operation, computed
another way than the library's kernels, for the sweep engine (`softfloat.sweep`).

Nothing here imports the kernels (``softfloat/_kernels``): decoding, exact error
terms, rounding, encoding and the NaN rules are written again, differently.
(Not to be confused with the tests' exact rational reference, which rounds
Python Fractions.)

Modules, one oracle each:

``host`` (`host.py`)
    float64 + the FPU's own round-to-nearest-even (a magic-constant addition at
    the target's quantum), valid by the innocuous-double-rounding theorem for
    + - * / sqrt and conversions; nearest_even only; branch-free rounding.
``ro53`` (`ro53.py`)
    float64 + exact error term = the result rounded to odd at 55 bits, then an
    integer rounding into the format written here; every deterministic mode;
    the only float64 oracle for fma (exact product, TwoSum).
``mpfr`` (`mpfr.py`)
    GNU MPFR through gmpy2: scalar, slow, a sampled third witness.
``simd`` (`simd.py`)
    branch-free twins of ``host`` and ``ro53`` for + - * / that LLVM
    vectorizes, fused with the compare; the sweep engine's kernels for those
    ops (operands that are not finite nonzero numbers go to the scalar oracle;
    ``SOFTFLOAT_SWEEP_SIMD=0`` turns them off).
``simd_fma`` (`simd_fma.py`)
    the branch-free twin of the ``ro53`` fma oracle, fused with the compare:
    the sweep engine's kernel for every fma block (operands that are
    infinite or NaN go to the scalar oracle; ``SOFTFLOAT_SWEEP_SIMD=0`` too).

``nan_rules.py`` holds the special cases and the NaN pattern the library's
default NaN policy promises (checked bit for bit); ``check.py`` the array
kernels and the sweep engine's fused oracle + compare kernel.

Conventions: the project's defaults (subnormals kept, tininess after rounding,
IEEE overflow; formats without infinity give NaN on overflow and for an
infinite result, with invalid; NaN policy ``propagate``). Stochastic rounding
is not covered (it needs the kernel's random stream).
"""
from __future__ import annotations

import numpy as np

from ..formats import Format, get_format
from ..rounding import Rounding, get_rounding
from ._bits import M_HOST, M_RO53
from .check import Layout, check_block, oracle_block
from .mpfr import mpfr_binary, mpfr_convert, mpfr_fma, mpfr_unary

__all__ = ["BINARY_OPS", "UNARY_OPS", "TERNARY_OPS", "METHODS", "oracle_binary",
           "oracle_unary", "oracle_convert", "oracle_fma", "mpfr_binary", "mpfr_unary",
           "mpfr_convert", "mpfr_fma", "host_supported", "default_method", "method_code",
           "Layout", "check_block", "oracle_block"]

BINARY_OPS = ("add", "sub", "mul", "div")
UNARY_OPS = ("sqrt",)
TERNARY_OPS = ("fma",)
METHODS = ("auto", "host", "ro53", "mpfr")


def host_supported(fmt, rounding, op=None, src=None) -> bool:
    """Whether the ``host`` oracle applies: nearest_even, not fma, and operands of
    at most 25 significant bits (53 >= 2p + 2)."""
    f = get_format(fmt)
    s = f if src is None else get_format(src)
    return (get_rounding(rounding) == Rounding.NEAREST_EVEN and op not in TERNARY_OPS
            and s.precision <= 25 and f.precision <= 25)


def default_method(fmt, rounding, op=None, src=None) -> str:
    """``host`` where it applies (see `host_supported`), else ``ro53``."""
    return "host" if host_supported(fmt, rounding, op, src) else "ro53"


def method_code(method, fmt, rounding, op=None, src=None) -> int:
    """Kernel code of a method name, checking that it applies."""
    mode = get_rounding(rounding)
    if mode == Rounding.STOCHASTIC:
        raise ValueError("the oracles cover the deterministic rounding modes only")
    if method == "auto":
        method = default_method(fmt, mode, op, src)
    if method == "host":
        if not host_supported(fmt, mode, op, src):
            raise ValueError(f"the host oracle covers nearest_even for + - * / sqrt and "
                             f"conversions of formats of at most 25 bits of precision; got "
                             f"{op or 'op'} in {mode.label} into {get_format(fmt).name}")
        return M_HOST
    if method == "ro53":
        return M_RO53
    raise ValueError(f"unknown oracle method {method!r}; expected 'auto', 'host' or 'ro53' "
                     f"(MPFR: use mpfr_binary/mpfr_unary/mpfr_convert/mpfr_fma)")


def _bits_arg(x, fmt: Format, name):
    a = np.asarray(x)
    if a.dtype != fmt.dtype:
        raise TypeError(f"{name}: expected {fmt.dtype} encodings of {fmt.name}, got {a.dtype}")
    return a


def _check_precision(*fmts):
    if max(f.precision for f in fmts) > 26:
        raise ValueError("the float64 oracles need formats of at most 26 significant bits "
                         "(float32 only as a conversion source)")


def oracle_binary(op, a, b, fmt, rounding="nearest_even", *, method="auto", outer=False):
    """Correct (bits, flags) of ``a op b`` on encodings of ``fmt`` (broadcasting;
    ``outer=True``: every pair of the 1-D ``a`` and ``b``, shape (a.size, b.size))."""
    if op not in BINARY_OPS:
        raise ValueError(f"unknown binary op {op!r}; expected one of {BINARY_OPS}")
    f = get_format(fmt)
    a = _bits_arg(a, f, "a")
    b = _bits_arg(b, f, "b")
    _check_precision(f)
    mode = get_rounding(rounding)
    mc = method_code(method, f, mode, op)
    if outer:
        A, B = a.ravel(), b.ravel()
        shape = (A.size, B.size)
        A = np.repeat(A, B.size)
        B = np.tile(B, shape[0])
    else:
        A, B = np.broadcast_arrays(a, b)
        shape = A.shape
    bits, flg = oracle_block(op, Layout.flat(A.ravel(), B.ravel()), f, f, mode, mc)
    return bits.astype(f.dtype).reshape(shape), flg.reshape(shape)


def oracle_unary(op, a, fmt, rounding="nearest_even", *, method="auto"):
    """Correct (bits, flags) of a unary op (``sqrt``) on encodings of ``fmt`` (a
    format of at most 19 bits: tf32 included)."""
    if op not in UNARY_OPS:
        raise ValueError(f"unknown unary op {op!r}; expected one of {UNARY_OPS}")
    f = get_format(fmt)
    a = _bits_arg(a, f, "a")
    _check_precision(f)
    if f.nbits > 19:
        raise ValueError(f"unary oracles cover formats of at most 19 bits, not {f.name}")
    mode = get_rounding(rounding)
    bits, flg = oracle_block(op, Layout.flat(a.ravel()), f, f, mode,
                             method_code(method, f, mode, op))
    return bits.astype(f.dtype).reshape(a.shape), flg.reshape(a.shape)


def oracle_convert(bits, src, dst, rounding="nearest_even", *, method="auto"):
    """Correct (bits, flags) of converting encodings of ``src`` into ``dst``
    (``src`` a format of at most 19 bits, tf32 included, or ``"fp32"``: float32
    bit patterns as uint32)."""
    s, d = get_format(src), get_format(dst)
    a = _bits_arg(bits, s, "bits")
    _check_precision(d)
    if s.nbits > 19 and s.name != "fp32":
        raise ValueError("conversion sources: formats of at most 19 bits (tf32), or fp32")
    mode = get_rounding(rounding)
    out, flg = oracle_block("convert", Layout.flat(a.ravel()), s, d, mode,
                            method_code(method, d, mode, "convert", s if s.nbits <= 19 else d))
    return out.astype(d.dtype).reshape(a.shape), flg.reshape(a.shape)


def oracle_fma(a, b, c, fmt, rounding="nearest_even", *, method="auto"):
    """Correct (bits, flags) of ``a * b + c`` with one rounding on encodings of
    ``fmt`` of at most 16 bits (broadcasting); the ro53 oracle (exact product,
    TwoSum, round to odd, final rounding), every deterministic mode."""
    f = get_format(fmt)
    a, b, c = (_bits_arg(x, f, n) for x, n in ((a, "a"), (b, "b"), (c, "c")))
    if f.nbits > 16:
        raise ValueError("the fma oracle covers formats of at most 16 bits")
    mode = get_rounding(rounding)
    mc = method_code(method, f, mode, "fma")
    A, B, C = np.broadcast_arrays(a, b, c)
    bits, flg = oracle_block("fma", Layout.flat(A.ravel(), B.ravel(), C.ravel()), f, f, mode, mc)
    return bits.astype(f.dtype).reshape(A.shape), flg.reshape(A.shape)
