"""IEEE 754 exception flags, with Berkeley SoftFloat's bit values so that test
vectors interoperate with TestFloat."""
from __future__ import annotations

import enum

import numpy as np

__all__ = ["Flags", "flag_names"]


class Flags(enum.IntFlag):
    NONE = 0
    INEXACT = 1
    UNDERFLOW = 2
    OVERFLOW = 4
    INFINITE = 8       # divide by zero: an exact infinite result from finite operands
    INVALID = 16


def flag_names(flags) -> list:
    """Names of the flags set in one flag value (an int or a 0-d array)."""
    v = int(np.asarray(flags))
    return [f.name.lower() for f in (Flags.INVALID, Flags.INFINITE, Flags.OVERFLOW,
                                     Flags.UNDERFLOW, Flags.INEXACT) if v & f]
