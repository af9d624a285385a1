"""Rounding modes and their names: the one place a mode's name, alias or
TestFloat option (``-rnear_even``, ``-rminMag`` ...) is read (`get_rounding`).

The integer codes are what the kernels read; only ``round_pack`` interprets them.
"""
from __future__ import annotations

import enum

__all__ = ["Rounding", "get_rounding", "ROUNDING_MODES", "DETERMINISTIC_MODES",
           "STOCHASTIC_SCHEMES"]


class Rounding(enum.IntEnum):
    NEAREST_EVEN = 0   # IEEE roundTiesToEven (default)
    NEAREST_AWAY = 1   # IEEE roundTiesToAway
    TOWARD_ZERO = 2    # IEEE roundTowardZero (truncation)
    UPWARD = 3         # IEEE roundTowardPositive
    DOWNWARD = 4       # IEEE roundTowardNegative
    ODD = 5            # round to odd (von Neumann jamming): inexact results get an odd last bit
    STOCHASTIC = 6     # up with probability (x - lower) / (upper - lower)

    @property
    def label(self) -> str:
        return self.name.lower()


_ALIASES = {
    "nearest_even": Rounding.NEAREST_EVEN, "rne": Rounding.NEAREST_EVEN,
    "near_even": Rounding.NEAREST_EVEN, "nearest": Rounding.NEAREST_EVEN,
    "nearest_away": Rounding.NEAREST_AWAY, "rna": Rounding.NEAREST_AWAY,
    "near_maxmag": Rounding.NEAREST_AWAY,
    "toward_zero": Rounding.TOWARD_ZERO, "rtz": Rounding.TOWARD_ZERO,
    "minmag": Rounding.TOWARD_ZERO, "truncate": Rounding.TOWARD_ZERO,
    "upward": Rounding.UPWARD, "rup": Rounding.UPWARD, "max": Rounding.UPWARD,
    "toward_positive": Rounding.UPWARD, "ceil": Rounding.UPWARD,
    "downward": Rounding.DOWNWARD, "rdn": Rounding.DOWNWARD, "min": Rounding.DOWNWARD,
    "toward_negative": Rounding.DOWNWARD, "floor": Rounding.DOWNWARD,
    "odd": Rounding.ODD, "rto": Rounding.ODD,
    "stochastic": Rounding.STOCHASTIC, "sr": Rounding.STOCHASTIC,
    # TestFloat's spellings (its -r options: -rnear_even, -rminMag, -rmin ...; an
    # option with its leading "r", or "-r", is read by get_rounding too)
    "neareven": Rounding.NEAREST_EVEN, "nearmaxmag": Rounding.NEAREST_AWAY,
    "nearest_maxmag": Rounding.NEAREST_AWAY,
}

# TestFloat's name of each mode, as its -r options spell them (-rnear_even ...).
# -rodd is round to odd everywhere, integer rounding included (roundToInt,
# to_i32/to_i64 jam: SoftFloat 3e's code and TestFloat 3e's programs).
TESTFLOAT_NAMES = {Rounding.NEAREST_EVEN: "near_even", Rounding.NEAREST_AWAY: "near_maxMag",
                   Rounding.TOWARD_ZERO: "minMag", Rounding.DOWNWARD: "min",
                   Rounding.UPWARD: "max", Rounding.ODD: "odd"}
# the spellings TestFloat's programs accept after -r (any case)
_TESTFLOAT_WORDS = ("near_even", "neareven", "nearest_even", "near_maxmag", "nearmaxmag",
                    "nearest_maxmag", "minmag", "min", "max", "odd")

ROUNDING_MODES = tuple(r.label for r in Rounding)
DETERMINISTIC_MODES = tuple(r.label for r in Rounding if r != Rounding.STOCHASTIC)
# Stochastic rounding with explicit random bits (softfloat.stochastic,
# docs/stochastic.md): P3109's StochasticA/B/C and add-and-truncate. Each is
# Rounding.STOCHASTIC with a scheme; the conversions and + - * / fma sqrt take them.
STOCHASTIC_SCHEMES = ("stochastic_a", "stochastic_b", "stochastic_c", "stochastic_add")


def get_rounding(mode) -> Rounding:
    """Return the `Rounding` for a name, alias or `Rounding` member."""
    if isinstance(mode, Rounding):
        return mode
    if isinstance(mode, str):
        key = mode.strip().lower().replace("-", "_")
        if key in _ALIASES:
            return _ALIASES[key]
        if key in STOCHASTIC_SCHEMES:
            raise ValueError(f"rounding {mode!r} (stochastic rounding with explicit random bits) "
                             f"is taken by to_bits, quantize, convert and add, sub, mul, div, "
                             f"fma, sqrt only; see softfloat.stochastic")
        opt = key.lstrip("_")
        if opt.startswith("r") and opt[1:] in _ALIASES:    # TestFloat's -r<mode> option
            return _ALIASES[opt[1:]]
    raise ValueError(f"unknown rounding mode {mode!r}; expected one of {list(ROUNDING_MODES)} "
                     f"or an alias (rne, rna, rtz, rup, rdn, rto, sr)")


def testfloat_rounding(option: str):
    """The `Rounding` of one of TestFloat's rounding options (``"rnear_even"``,
    ``"-rminMag"``, ...), or None for any other option."""
    key = option.strip().lstrip("-").lower()
    if key.startswith("r") and key[1:] in _TESTFLOAT_WORDS:
        return _ALIASES[key[1:]]
    return None
