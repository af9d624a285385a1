"""Input checks shared by the public functions: nothing is silently cast."""
from __future__ import annotations

import numpy as np

from .formats import FP16, FP32, FP64, Format, get_format

# Host float dtypes accepted as values, and the format each one is.
HOST_FORMATS = {np.dtype(np.float64): FP64, np.dtype(np.float32): FP32,
                np.dtype(np.float16): FP16}


def as_values(x, name="x") -> np.ndarray:
    """A float16/32/64 array from an array, scalar or list; ints, bools, complex refused."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name}: expected float values (float64, float32 or float16), got bool")
    if isinstance(x, (int, np.integer)):
        raise TypeError(f"{name}: expected float values (float64, float32 or float16), got an "
                        f"integer {x!r}; write it as a float (e.g. {x}.0) to convert it")
    if hasattr(x, "bits") and hasattr(x, "format") and not isinstance(x, np.ndarray):
        raise TypeError(f"{name}: got a softfloat array; use its .bits with the bits functions "
                        f"or np.asarray(...) for its float64 values")
    _refuse_masked(x, name)
    if isinstance(x, (list, tuple)):
        _check_float_leaves(x, name)
    a = np.asarray(x)
    if a.dtype.kind == "f" and not a.dtype.isnative and a.dtype.newbyteorder("=") in HOST_FORMATS:
        a = a.astype(a.dtype.newbyteorder("="))     # byte order only: exact
    if a.dtype not in HOST_FORMATS:
        kind = {"i": "integer", "u": "unsigned integer", "b": "bool", "c": "complex",
                "O": "object", "U": "string"}.get(a.dtype.kind, str(a.dtype))
        raise TypeError(f"{name}: expected float64, float32 or float16 values, got {kind} "
                        f"dtype {a.dtype}; convert explicitly (e.g. .astype(np.float64)) "
                        f"if that is what you mean")
    return a


def boolean(v, name: str) -> bool:
    """A boolean option: True/False (or a numpy bool) only. Strings such as "no",
    numbers and None are refused: a truthy string must never switch a policy on."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    raise TypeError(f"{name} must be True or False, got {type(v).__name__} {v!r}")


def optional_boolean(v, name: str):
    """None (use the context's setting) or a boolean option (see `boolean`)."""
    return None if v is None else boolean(v, name)


def _refuse_masked(x, name):
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{name}: masked arrays are not accepted (the mask would be lost); "
                        f"pass x.filled(value) or x.compressed() explicitly")


def _check_float_leaves(x, name):
    """Lists and tuples of floats only: the documented rule refuses ints and bools,
    so a list that mixes them with floats ([1, 2.5], [True, 2.5]) is refused too,
    and so are None and strings (np.asarray would read None as NaN and "1.5" as 1.5)."""
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, (float, np.floating)):
            continue
        elif isinstance(v, np.ndarray) and v.dtype.kind == "f" and not isinstance(
                v, np.ma.MaskedArray):
            continue
        else:
            what = ("a bool" if isinstance(v, (bool, np.bool_)) else
                    "an integer" if isinstance(v, (int, np.integer)) else
                    f"a {type(v).__name__}")
            raise TypeError(f"{name}: expected a list of floats, got {what} element {v!r}; "
                            f"write integers as floats (2.0) and convert other values "
                            f"explicitly")


def int_view(a: np.ndarray) -> np.ndarray:
    """The bit patterns of a host float array as signed/unsigned ints (no copy)."""
    return a.view({8: np.int64, 4: np.uint32, 2: np.uint16}[a.dtype.itemsize])


def as_bits(bits, fmt: Format, name="bits") -> np.ndarray:
    """An array of encodings of ``fmt``: its storage dtype, every value in range."""
    if isinstance(bits, (bool, np.bool_)):
        raise TypeError(f"{name}: expected {fmt.dtype} encodings of {fmt.name}, got bool")
    _refuse_masked(bits, name)
    if isinstance(bits, int):           # a Python int: any in-range encoding
        a = np.asarray(bits)
        if not 0 <= int(bits) < (1 << fmt.nbits):
            raise ValueError(f"{name}: {int(bits):#x} is not an encoding of {fmt.name} "
                             f"(expected 0..{(1 << fmt.nbits) - 1:#x})")
        return a.astype(fmt.dtype)
    a = np.asarray(bits)
    if a.dtype.kind == "u" and not a.dtype.isnative and a.dtype.newbyteorder("=") == fmt.dtype:
        a = a.astype(fmt.dtype)                     # byte order only: exact
    if a.dtype != fmt.dtype:
        if a.dtype.kind == "f":
            raise TypeError(f"{name}: expected {fmt.dtype} encodings of {fmt.name}, got float "
                            f"values ({a.dtype}); use softfloat.to_bits to round values into "
                            f"{fmt.name}")
        if a.dtype.kind in "iu" and a.size and (a.min() < 0 or int(a.max()) >= 1 << fmt.nbits):
            raise ValueError(f"{name}: got {a.dtype} values out of range for {fmt.name} "
                             f"encodings (expected {fmt.dtype} in 0..{(1 << fmt.nbits) - 1:#x}); "
                             f"are these encodings of another format?")
        raise TypeError(f"{name}: expected a {fmt.dtype} array of {fmt.name} encodings, got "
                        f"dtype {a.dtype}; convert with .astype(np.{fmt.dtype})")
    if fmt.nbits not in (8, 16, 32) and a.size and int(a.max()) >= 1 << fmt.nbits:
        raise ValueError(f"{name}: values out of range for {fmt.name} encodings "
                         f"(expected 0..{(1 << fmt.nbits) - 1:#x})")
    return a


def target_format(fmt) -> Format:
    return get_format(fmt)


def source_format(fmt) -> Format:
    """Formats that may be converted from include fp64."""
    if isinstance(fmt, Format):
        return fmt
    if isinstance(fmt, str) and fmt.strip().lower() in ("fp64", "double", "binary64", "float64", "f64"):
        return FP64
    return get_format(fmt)


def flat(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1)


def writable(a: np.ndarray) -> np.ndarray:
    """a, or a copy if it is read-only (numba compiles read-only arrays apart)."""
    return a if a.flags.writeable else a.copy()


#: the one element type of the general kernels' encoding arrays (see kernel_io)
KERNEL_BITS = np.dtype(np.uint32)


def kernel_io(src: np.ndarray, n: int):
    """(int64 copy or view of the flat ``src``, uint32 output of n elements): the
    general conversion kernels take these types only, so that each compiles once
    (a signature per dtype pair would cost a compilation each)."""
    return src.astype(np.int64, copy=False), np.empty(n, KERNEL_BITS)


# Elements per chunk of a parallel loop.
CHUNK = 1 << 14
# Elements per block where a public function works through a large array in blocks
# (so that widened working copies stay a block long: bounded peak memory)
BLOCK = 1 << 18


def kernel_bits(x, f, name, dtype=KERNEL_BITS):
    """Validated encodings of f, in the kernels' dtype, writable (a read-only
    array would make numba compile another specialization)."""
    b = as_bits(x, f, name).astype(dtype, copy=False)
    return b if b.flags.writeable else b.copy()


def broadcast_operands(arrays, f, names, dtype=KERNEL_BITS):
    """Validate encodings and bring them to a common shape: returns
    (shape, [(flat array, index mask)]), mask 0 for a single element (the loops
    broadcast it), -1 for a full flat array. The arithmetic's and the
    explicit-bit stochastic rounding's operands."""
    bs = [kernel_bits(x, f, nm, dtype) for x, nm in zip(arrays, names)]
    try:
        shape = np.broadcast_shapes(*(b.shape for b in bs))
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(str(b.shape) for b in bs)) from None
    out = []
    for b in bs:
        if b.size == 1:
            out.append((np.ascontiguousarray(b).reshape(1), 0))
        elif b.shape == shape:
            out.append((flat(b), -1))
        else:
            out.append((np.array(np.broadcast_to(b, shape), copy=True).reshape(-1), -1))
    return shape, out


def matrix_operands(who: str, A, B, *, k: str = "k", vectors: bool = False):
    """``(A, B, m, K, n, batch)`` of a product of (..., m, K) by (..., K, n)
    encodings, the batch axes broadcast, or a ValueError naming ``who`` and the
    shapes. With ``vectors``, a 1-D A is one row and a 1-D B one column (as in
    NumPy's matmul; the caller drops those axes from the result); without, both
    need two axes. ``k`` is how the message names the inner dimension."""
    if vectors:
        if A.ndim == 0 or B.ndim == 0:
            raise ValueError(f"{who}: operands must have at least one dimension")
        A = A[None, :] if A.ndim == 1 else A
        B = B[:, None] if B.ndim == 1 else B
    elif A.ndim < 2 or B.ndim < 2:
        raise ValueError(f"{who}: a must be (..., m, {k}) and b (..., {k}, n), got shapes "
                         f"{A.shape} and {B.shape}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"{who}: shapes {A.shape} and {B.shape} do not align "
                         f"({k} = {A.shape[-1]} vs {B.shape[-2]})")
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    return A, B, A.shape[-2], A.shape[-1], B.shape[-1], batch
