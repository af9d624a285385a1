"""sf.verify on stochastic rounding given the random bits: devices built from
the independent oracle of tests/sr_oracle.py, correct or with a known defect
(wrong N, add-and-truncate for P3109 A, the random bits one position off, a
saturating overflow); the diagnosis must name the defect."""
import numpy as np
import pytest

import softfloat as sf
from softfloat.verification.stochastic import verify_stochastic
from sr_oracle import Grid, expected_units

N = 4


def _space():
    c = np.arange(1 << 16, dtype=np.uint16)
    c = c[(((c >> 10) & 0x1F) != 0x1F) & ((c & 0x7FFF) != 0)]
    codes = np.repeat(c, 1 << N)
    R = np.tile(np.arange(1 << N, dtype=np.uint64), c.size)
    return codes, R


def _device(scheme, n, layout=lambda R: R, saturate=False):
    """fp16 -> fp8_e4m3 with ``scheme`` on n random bits read by ``layout``."""
    g = Grid(4, 3, 7, "fn")

    def impl(a, R):
        a = a.astype(np.int64)
        ef, fr = (a >> 10) & 0x1F, a & 0x3FF
        mag = np.where(ef == 0, fr, (fr | 0x400) << np.maximum(ef - 1, 0))
        out = expected_units(g, a >> 15, mag, 24, scheme, n, layout(R.astype(np.int64)))
        if saturate:
            out = np.where((out & 0x7F) == 0x7F, (out & 0x80) | 0x7E, out)
        return out.astype(np.uint8)
    return impl


@pytest.fixture(scope="module")
def space():
    return _space()


def _run(dev, space):
    return sf.verify(dev, "convert:fp8_e4m3", "fp16", "stochastic_a", space, random_nbits=N)


def test_correct_device_passes(space):
    rep = _run(_device("stochastic_a", N), space)
    assert rep.ok and rep.cases == space[0].size and rep.diagnosis is None


def test_wrong_n_named(space):
    rep = _run(_device("stochastic_a", 3, lambda R: R >> 1), space)
    assert not rep.ok
    b = rep.diagnosis["best"][0]
    assert rep.diagnosis["explained"] == 1.0
    assert (b["scheme"], b["random_nbits"]) == ("stochastic_a", 3) and "top 3" in b["layout"]


def test_add_and_truncate_named(space):
    rep = _run(_device("stochastic_add", N), space)
    assert not rep.ok
    b = rep.diagnosis["best"][0]
    assert rep.diagnosis["explained"] == 1.0
    assert (b["scheme"], b["random_nbits"], b["layout"]) == ("stochastic_add", N,
                                                           "the N bits as given")


def test_bits_one_position_too_low_named(space):
    rep = _run(_device("stochastic_a", N + 1), space)
    b = rep.diagnosis["best"][0]
    assert rep.diagnosis["explained"] == 1.0
    assert b["random_nbits"] == N + 1 and "1 bit too low" in b["layout"]
    assert b["scheme"] == "stochastic_a"


def test_scheme_b_and_saturation_named(space):
    rep = _run(_device("stochastic_b", N, saturate=True), space)
    b = rep.diagnosis["best"][0]
    assert rep.diagnosis["explained"] == 1.0
    assert (b["scheme"], b["random_nbits"], b["overflow"]) == ("stochastic_b", N, "saturate")
    assert "stochastic_b with N=4" in rep.summary()


def test_arith_device_and_input_checks():
    """A device's add in e4m3 (exhaustive over operands and R, N = 2): the
    library's own stochastic_c checked against stochastic_a names the scheme."""
    dev = lambda a, b, R: sf.add(a, b, "fp8_e4m3", "stochastic_c", random_bits=R,  # noqa: E731
                                 random_nbits=2)
    rep = sf.verify(dev, "add", "fp8_e4m3", "stochastic_a", random_nbits=2)
    assert rep.cases == 256 * 256 * 4 and not rep.ok
    assert rep.diagnosis["best"][0]["scheme"] == "stochastic_c"
    with pytest.raises(ValueError, match="random_nbits"):
        sf.verify(dev, "add", "fp8_e4m3", "stochastic")
    with pytest.raises(ValueError, match="more than"):
        verify_stochastic(dev, "add", "fp16", "stochastic_a", random_nbits=2)


def test_p3109_saturation_named():
    """A binary8p3se device that rounds by stochastic_c and saturates (SatFinite)
    checked against stochastic_a under SatNone: scheme and saturation named."""
    try:
        sf.get_format("binary8p3se")
    except ValueError:
        pytest.skip("P3109 formats not in this tree (branch p3109)")
    from sr_oracle import P3109Grid
    g = P3109Grid(8, 3, True, True, "satfinite")

    def dev(a, R):
        a = a.astype(np.int64)
        ef, fr = (a >> 10) & 0x1F, a & 0x3FF
        mag = np.where(ef == 0, fr, (fr | 0x400) << np.maximum(ef - 1, 0))
        return expected_units(g, a >> 15, mag, 24, "stochastic_c", 3,
                              R.astype(np.int64)).astype(np.uint8)

    c = np.arange(1 << 16, dtype=np.uint16)
    c = c[(((c >> 10) & 0x1F) != 0x1F) & ((c & 0x7FFF) != 0)]
    space = (np.repeat(c, 8), np.tile(np.arange(8, dtype=np.uint64), c.size))
    rep = sf.verify(dev, "convert:binary8p3se", "fp16", "stochastic_a", space, random_nbits=3)
    b = rep.diagnosis["best"][0]
    assert rep.diagnosis["explained"] == 1.0
    assert (b["scheme"], b["random_nbits"], b["saturation"]) == ("stochastic_c", 3, "satfinite")


def test_cli(tmp_path, monkeypatch, capsys):
    """python -m softfloat verify FMT OP --impl m:f --rounding S --random-nbits N."""
    (tmp_path / "srdev_cli.py").write_text(
        "import softfloat as sf\n"
        "def dev(a, R):\n"
        "    return sf.convert(a, 'fp8_e5m2', 'fp4_e2m1', 'stochastic_a', random_bits=R >> 1,\n"
        "                      random_nbits=2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from softfloat.verification import main
    rc = main(["fp8_e5m2", "convert:fp4_e2m1", "--impl", "srdev_cli:dev", "--rounding",
               "stochastic_a", "--random-nbits", "3"])
    out = capsys.readouterr().out
    assert rc == 1 and "2048 cases" in out and "stochastic_a with N=2 (its top 2" in out


def test_vendor_alignment_told_apart():
    """The open point of cvt.rs e4m3x4 (16 random bits, 20 discarded): a device
    that adds them at the f32's lowest bits (align="bottom"), checked against
    the default model, is named add-and-truncate with the 16 bits at the bottom
    of a 20-bit field."""
    from softfloat import sr_vendor as V
    rng = np.random.default_rng(4)
    x = (rng.uniform(0.1, 8, 20000) * rng.choice([-1, 1], 20000)).astype(np.float32)
    R = rng.integers(0, 1 << 16, x.size).astype(np.uint64)

    def dev(a, r):
        f = a.view(np.float32)
        return (V.ptx_cvt_rs_f8x4_f32(f, f, f, f, (r.astype(np.uint32) << 16) | r.astype(np.uint32),
                                      "e4m3", align="bottom") & 0xFF).astype(np.uint8)

    rep = sf.verify(dev, "convert:fp8_e4m3", "fp32", "stochastic_add",
                    (x.view(np.uint32), R), random_nbits=16)
    assert not rep.ok
    b = rep.diagnosis["best"][0]
    assert rep.diagnosis["explained"] == 1.0
    assert (b["scheme"], b["random_nbits"]) == ("stochastic_add", 20)
    assert "bottom of a 20-bit field (4 bits too low)" in b["layout"]
