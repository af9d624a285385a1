"""Integer codes shared by every kernel: rounding modes, flags, overflow and NaN
policies, format kinds, unpacked classes and the layout of the policy tuple.

`core` re-exports all of them (``from .core import P_MODE`` keeps working); they
live here so that `core` (rounding) and `specialize` (NaN rules) can both use
them without importing each other. The rounding, flag and kind codes are taken
from the enums they stand for (plain ints: numba freezes them as constants).
"""
from ..flags import Flags
from ..formats import KIND_CODES
from ..rounding import Rounding

# Rounding codes (softfloat.rounding.Rounding).
RNE, RNA, RTZ = int(Rounding.NEAREST_EVEN), int(Rounding.NEAREST_AWAY), int(Rounding.TOWARD_ZERO)
RUP, RDN, RTO, RSR = (int(Rounding.UPWARD), int(Rounding.DOWNWARD), int(Rounding.ODD),
                      int(Rounding.STOCHASTIC))
# Stochastic rounding schemes with explicit random bits (softfloat.stochastic):
# kernel codes only, read from pol[P_MODE] by core.round_pack (their Python names,
# rounding.STOCHASTIC_SCHEMES, resolve to Rounding.STOCHASTIC plus the scheme).
# P3109 StochasticA/B/C, and add-and-truncate (the random bits added below the
# last bit of the value's own binade at full precision, then truncation).
RSR_A, RSR_B, RSR_C, RSR_ADD = 16, 17, 18, 19
# Flag bits (softfloat.flags.Flags: SoftFloat's values).
F_INEXACT, F_UNDERFLOW, F_OVERFLOW = int(Flags.INEXACT), int(Flags.UNDERFLOW), int(Flags.OVERFLOW)
F_INFINITE, F_INVALID = int(Flags.INFINITE), int(Flags.INVALID)
# Overflow policies.
OVF_IEEE, OVF_SATURATE, OVF_NAN = 0, 1, 2
# Format kinds (softfloat.formats.KIND_CODES): K_FINITE has no infinity and no NaN
# (OCP fp4/fp6), K_FNU no sign, no zero, no subnormals and an all-ones NaN (OCP E8M0).
K_IEEE, K_FN, K_FNUZ = KIND_CODES["ieee"], KIND_CODES["fn"], KIND_CODES["fnuz"]
K_FINITE, K_FNU = KIND_CODES["finite"], KIND_CODES["fnu"]
# IEEE P3109 kinds (signed/unsigned x extended/finite); every kind >= K_P3109 is one.
K_P3SE, K_P3SF = KIND_CODES["p3109se"], KIND_CODES["p3109sf"]
K_P3UE, K_P3UF = KIND_CODES["p3109ue"], KIND_CODES["p3109uf"]
K_P3109 = K_P3SE
# P3109 saturation modes: for P3109 formats the overflow slot of the policy tuple
# (P_OVF) holds one of these (softfloat.context.kernel_policy), never an OVF_* code.
SAT_NONE, SAT_FINITE, SAT_PROPAGATE = 3, 4, 5
# Classes returned by unpack.
C_ZERO, C_FINITE, C_INF, C_QNAN, C_SNAN = 0, 1, 2, 3, 4
# NaN modes (pol[P_NAN]); what each one does is `specialize.make_nan`'s docstring.
NAN_PROPAGATE, NAN_CANONICAL, NAN_KEEP, NAN_PROPAGATE_LAST = 0, 1, 2, 3

# Policy tuple layout (built by softfloat.context.Policy.kernel_tuple):
#   P_MODE    rounding code (read by core.round_pack only)
#   P_FTZ     flush subnormal results to zero (after rounding)
#   P_DAZ     read subnormal operands as zero
#   P_OVF     overflow policy (OVF_*)
#   P_TINB    1: tininess detected before rounding
#   P_NAN     NaN mode (NAN_*)
#   P_NANBITS the NaN pattern: every NaN result under NAN_CANONICAL, the fresh
#             NaN (invalid operation without a NaN operand) otherwise
#   P_SRBITS  random bits per stochastic rounding
P_MODE, P_FTZ, P_DAZ, P_OVF, P_TINB, P_NAN, P_NANBITS, P_SRBITS = range(8)
