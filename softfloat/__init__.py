"""softfloat: bit-exact simulation of low-precision floating point (fp16, bf16,
fp8, tf32 and custom formats) in every rounding mode, with IEEE flags.

Two faces: **bits** (unsigned integer arrays of encodings, for verification) and
**values** (float64 arrays holding exactly representable values).
"""
from . import _cli_start
if _cli_start.starting_command():
    _cli_start.begin()   # `python -m ...`: Ctrl-C or a junk switch now is one line, 130 or 2
from . import _jitcache
_jitcache.install()   # before any kernel module: numba picks the cache place at decoration

from .context import Context, Policy, getcontext, localcontext, setcontext
from .conversions import convert, from_bits, quantize, to_bits
from .flags import Flags, flag_names
from .formats import (BF16, E8M0, FP4_E2M1, FP6_E2M3, FP6_E3M2, FP8_E4M3, FP8_E4M3FNUZ,
                      FP8_E5M2, FP8_E5M2FNUZ, FP16, FP32, TF32, Format, formats, get_format)
from .rounding import (DETERMINISTIC_MODES, ROUNDING_MODES, STOCHASTIC_SCHEMES, Rounding,
                       get_rounding)
from .stochastic import stochastic_bits
from . import arith as _arith, accumulate as _accumulate, lparray as _lparray, platforms as _platforms
from .arith import *  # noqa: F401,F403  (arithmetic on encodings)
from .accumulate import *  # noqa: F401,F403  (sum, dot, matmul models)
from .lparray import *  # noqa: F401,F403  (the low-precision array type)
from .platforms import *  # noqa: F401,F403  (platform descriptions)
from .model_hook import register_model  # noqa: F401
from . import encodings as _encodings
from .encodings import Fields, explain, fields  # noqa: F401  (an encoding, readable)
from . import mx, mx_gemm, cublas  # noqa: F401,E402  (block formats, fp8 GEMMs, cuBLAS GEMMs)
from . import p3109  # noqa: F401,E402  (IEEE P3109 operations)

__version__ = "0.1.0"

from . import _startup  # noqa: E402
_startup.prepare()    # numba's one-time compiler set-up now, not in the first kernel call

# Every public name, built from the submodules' own lists so that a name added
# there is exported here too (tests/test_public_api.py checks both directions).
__all__ = [
    "Context", "Policy", "getcontext", "setcontext", "localcontext",
    "to_bits", "from_bits", "quantize", "convert",
    "Flags", "flag_names",
    "Format", "formats", "get_format", "FP16", "BF16", "FP32", "TF32", "FP8_E5M2",
    "FP8_E4M3", "FP8_E4M3FNUZ", "FP8_E5M2FNUZ", "FP4_E2M1", "FP6_E2M3", "FP6_E3M2", "E8M0",
    "Rounding", "get_rounding", "ROUNDING_MODES", "DETERMINISTIC_MODES", "STOCHASTIC_SCHEMES",
    "stochastic_bits",
    *_arith.__all__, *_accumulate.__all__, *_lparray.__all__, *_platforms.__all__,
    *_encodings.__all__, "register_model", "verify", "emulate",
]


def __getattr__(name):
    # The verifier (it loads the sweep engine) and the torch emulation are
    # loaded on first use; sf.verify and sf.emulate are plain functions.
    if name == "verify":
        from .verification import verify as obj
    elif name == "emulate":
        from .emulation import emulate as obj
    elif name == "verification":
        from . import verification as obj
    elif name == "emulation":
        from . import emulation as obj
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = obj
    return obj
