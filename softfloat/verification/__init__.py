"""`softfloat.verification`: check any implementation of an operation against
the library, bit for bit and flag for flag, and diagnose what it does.

``sf.verify`` is this package's `verify`::

    rep = sf.verify(impl, op, fmt, rounding="nearest_even", space="exhaustive", **policies)

``impl`` takes operand encodings (NumPy unsigned arrays, one per operand) and
returns result encodings or ``(results, flags)`` (the library's flag bits);
adapters: `numpy_impl`, `torch_impl`, `ctypes_impl`, `exec_impl` (an external
program speaking the SFV1 protocol over stdin/stdout), `results_file` (raw
binary, ``.npy``/``.npz``, TestFloat lines). The report has ``cases``,
``mismatches``, ``classes`` (as ``testfloat ver`` classifies), the first
mismatches, and ``diagnosis``: the library setting that reproduces the
implementation on most cases (`softfloat.verification.diagnosis`). docs/verify.md
describes it all, the protocol included.

Modules: ``ops`` (the operations and the library's answers), ``spaces`` (operand
spaces), ``impls`` (adapters, SFV1 client), ``engine`` (shards, passes, the
report), ``diagnosis``, ``cli`` (``python -m softfloat verify``), ``peers`` (the
table of docs/peers.md).
"""
from .engine import Report, verify
from .impls import (ImplError, ctypes_impl, exec_impl, numpy_impl, results_file,
                    torch_impl)
from .ops import Op, get_op, op_names
from .spaces import make_space

__all__ = ["verify", "Report", "ImplError", "numpy_impl", "torch_impl", "ctypes_impl",
           "exec_impl", "results_file", "op_names", "get_op", "Op", "make_space", "main"]


def main(argv=None) -> int:
    from .cli import main as _main
    return _main(argv)
