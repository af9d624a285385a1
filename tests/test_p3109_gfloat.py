"""P3109 formats against gfloat 0.5.2 (an independent implementation: decode,
round, encode; one boolean saturation flag, no arithmetic) where it covers the
same thing, and its documented disagreements with the report we follow
(docs/p3109.md, "Disagreements")."""
import numpy as np
import pytest

import softfloat as sf
from softfloat.formats import get_format

gfloat = pytest.importorskip("gfloat")
from gfloat import RoundMode, decode_float, encode_float, round_float  # noqa: E402
from gfloat.formats import format_info_p3109  # noqa: E402
from gfloat.types import Domain, Signedness  # noqa: E402

import p3109_reference as ref  # noqa: E402
from test_p3109_formats import probe_values  # noqa: E402

MODES = {"nearest_even": RoundMode.TiesToEven, "nearest_away": RoundMode.TiesToAway,
         "toward_zero": RoundMode.TowardZero, "upward": RoundMode.TowardPositive,
         "downward": RoundMode.TowardNegative}
NAMES = [f"binary{K}p{P}{s}{d}" for K in (3, 4, 5, 6) for s in "su"
         for P in range(1, K + (s == "u")) for d in "ef"] + \
    ["binary8p3se", "binary8p4se", "binary8p3sf", "binary8p4sf", "binary8p1uf", "binary8p5ue"]


def info(name):
    K, P, s, e = ref.parse_name(name)
    return format_info_p3109(K, P, Signedness.Signed if s else Signedness.Unsigned,
                             Domain.Extended if e else Domain.Finite)


@pytest.mark.parametrize("name", NAMES)
def test_decode_and_round_agree(name):
    fi, f = info(name), get_format(name)
    K, P, signed, ext = ref.parse_name(name)
    codes = np.arange(1 << f.nbits).astype(f.dtype)
    g = np.array([decode_float(fi, int(i)).fval for i in codes])
    assert np.array_equal(sf.from_bits(codes, f), g, equal_nan=True)
    # rounding of every probe value the two define alike: signed formats, and
    # non-negative values of unsigned ones; finite formats with saturation only
    # for values past the largest (gfloat's unsaturated overflow there is NaN)
    vals = [float(v) for v in probe_values(name) if signed or v >= 0]
    top = float(f.max)
    for mode, rm in MODES.items():
        for sat in (True, False):
            xs = [v for v in vals if sat or ext or abs(v) <= top]
            want = [encode_float(fi, round_float(fi, v, rm, sat)) for v in xs]
            got = sf.to_bits(np.array(xs), f, mode,
                             saturation="satfinite" if sat else "satnone")
            assert [int(v) for v in got] == want, (name, mode, sat)


def test_documented_disagreements():
    # 1. Finite domain, no saturation: the report (SatNone) clamps to Mhi, gfloat gives NaN
    fi = info("binary8p4sf")
    assert encode_float(fi, round_float(fi, 1e30, RoundMode.TiesToEven, False)) == 0x80
    assert sf.to_bits(1e30, "binary8p4sf", saturation="satnone") == 0x7F
    # 2. Unsigned formats, negative values: gfloat raises (extended) or gives NaN (finite)
    #    whatever the saturation; the report: SatFinite and SatPropagate 0, SatNone NaN
    #    (0 toward zero and upward)
    fi = info("binary8p3uf")
    assert encode_float(fi, round_float(fi, -1.0, RoundMode.TiesToEven, True)) == 0xFF
    assert sf.to_bits(-1.0, "binary8p3uf", saturation="satfinite") == 0
    fi = info("binary8p3ue")
    assert round_float(fi, -1.0, RoundMode.TiesToEven, False) == -1.0
    with pytest.raises(ValueError):
        encode_float(fi, -1.0)
    # 3. Unsigned extended: gfloat rounds -Inf to +Inf; the report (SatNone): NaN
    fi = info("binary8p3ue")
    assert encode_float(fi, round_float(fi, -np.inf, RoundMode.TiesToEven, False)) == 0xFE
    assert sf.to_bits(-np.inf, "binary8p3ue") == 0xFF
