"""The vendor stochastic-rounding conversions (softfloat.sr_vendor) against
oracles written from the instructions' own definitions: integer addition of the
random bits to the source's bits and truncation (where the document says so),
or the Fraction oracle of tests/sr_oracle.py; and the operand layouts."""
from fractions import Fraction

import numpy as np

import softfloat as sf
from softfloat import sr_vendor as V
from sr_oracle import Grid, expected_fraction

RNG = np.random.default_rng(2024)


def _f32_patterns(n):
    u = RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    u[: n // 4] = (u[: n // 4] & 0x807FFFFF)                      # subnormals
    u[n // 4: n // 2] = (u[n // 4: n // 2] & 0x80FFFFFF) | 0x7E800000  # near overflow
    x = u.view(np.float32)
    return x[np.isfinite(x)]


def test_ptx_bf16x2_integer_definition():
    """cvt.rs.bf16x2.f32: bf16 = top half of (f32 magnitude bits + 16 random bits)."""
    x = _f32_patterns(4000)
    y = x[::-1].copy()
    r = RNG.integers(0, 1 << 32, x.size, dtype=np.uint64).astype(np.uint32)
    for sat in (False, True):
        d = V.ptx_cvt_rs_bf16x2_f32(x, y, r, satfinite=sat)
        for lane, v, rr in ((d >> 16, x, r >> 16), (d & 0xFFFF, y, r & 0xFFFF)):
            u = v.view(np.uint32).astype(np.int64)
            s = (u & 0x7FFFFFFF) + rr.astype(np.int64)
            want = ((u >> 31) << 15) | (s >> 16)
            if sat:
                want = np.where((s >> 16) >= 0x7F80, ((u >> 31) << 15) | 0x7F7F, want)
            np.testing.assert_array_equal(lane.astype(np.int64), want)


def test_ptx_f16x2_layout_and_rounding():
    """cvt.rs.f16x2.f32: a takes rbits[28:16], b rbits[12:0]; each rounds by
    adding its 13 bits below f16's last bit (Fraction oracle); satfinite clamps."""
    g = Grid(5, 10, 15, "ieee")
    x = (RNG.standard_normal(500) * np.exp2(RNG.integers(-20, 17, 500))).astype(np.float32)
    y = (RNG.standard_normal(500) * np.exp2(RNG.integers(-20, 17, 500))).astype(np.float32)
    r = RNG.integers(0, 1 << 32, 500, dtype=np.uint64).astype(np.uint32)
    d = V.ptx_cvt_rs_f16x2_f32(x, y, r)
    for lane, v, rr in ((d >> 16, x, (r >> 16) & 0x1FFF), (d & 0xFFFF, y, r & 0x1FFF)):
        want = [expected_fraction(g, Fraction(float(t)), "stochastic_add", 13, int(q))
                for t, q in zip(v, rr)]
        assert lane.astype(np.int64).tolist() == want
    big = np.float32(65520.0)
    assert V.ptx_cvt_rs_f16x2_f32(big, -big, np.uint32(0x1FFF1FFF), satfinite=True) \
        == (0x7BFF << 16) | 0xFBFF
    assert V.ptx_cvt_rs_f16x2_f32(big, np.float32(np.nan), np.uint32(0x1FFF1FFF)) \
        == (0x7C00 << 16) | 0x7FFF


def test_ptx_x4_layouts():
    """e4m3x4/e2m3x4: a, b share rbits[31:16], e, f rbits[15:0]; e2m1x4: a
    rbits[31:24], b rbits[15:8], e rbits[23:16], f rbits[7:0]; Fraction oracle
    (add-and-truncate, the 16 or 8 random bits just below the kept bits)."""
    x = [(RNG.uniform(0.1, 4, 300) * RNG.choice([-1, 1], 300)).astype(np.float32)
         for _ in range(4)]
    r = RNG.integers(0, 1 << 32, 300, dtype=np.uint64).astype(np.uint32)
    for dt, fmt, kind in (("e4m3", "fp8_e4m3", "fn"), ("e2m3", "fp6_e2m3", "finite")):
        E, M, bias, _ = sf.get_format(fmt).params
        g = Grid(E, M, bias, kind)
        d = V.ptx_cvt_rs_f8x4_f32(*x, r, dt)
        for k, rr in enumerate(((r >> 16), (r >> 16), r & 0xFFFF, r & 0xFFFF)):
            lane = (d >> (24 - 8 * k)) & 0xFF
            want = [expected_fraction(g, Fraction(float(t)), "stochastic_add", 16, int(q) & 0xFFFF)
                    for t, q in zip(x[k], rr)]
            assert lane.astype(np.int64).tolist() == want, (dt, k)
    g = Grid(2, 1, 1, "finite")
    d = V.ptx_cvt_rs_e2m1x4_f32(*x, r)
    assert d.dtype == np.uint16
    for k, rr in enumerate(((r >> 24), (r >> 8), (r >> 16), r)):
        lane = (d >> (12 - 4 * k)) & 0xF
        want = [expected_fraction(g, Fraction(float(t)), "stochastic_add", 8, int(q) & 0xFF)
                for t, q in zip(x[k], rr)]
        assert lane.astype(np.int64).tolist() == want, k


def test_intel_bias_bf8_integer_definition():
    """VCVTBIASPH2BF8[S]: BF8 = top byte of (FP16 magnitude bits + bias byte),
    sign kept; S saturates finite overflow to 0x7B. Every non-NaN FP16, 32 biases."""
    h = np.arange(1 << 16, dtype=np.uint16)
    h = h[(h & 0x7FFF) <= 0x7C00]
    bias = np.arange(0, 256, 8, dtype=np.uint16) | 7
    hh, bb = np.meshgrid(h, bias, indexing="ij")
    for sat in (False, True):
        got = V.intel_vcvtbiasph2bf8(bb, hh, saturate=sat).astype(np.int64)
        mag = hh.astype(np.int64) & 0x7FFF
        s = mag + (bb.astype(np.int64) & 0xFF)
        want = ((hh.astype(np.int64) >> 15) << 7) | (s >> 8)
        if sat:
            want = np.where((mag < 0x7C00) & ((s >> 8) >= 0x7C),
                            ((hh.astype(np.int64) >> 15) << 7) | 0x7B, want)
        np.testing.assert_array_equal(got, want)


def test_intel_bias_hf8_and_amd():
    g = Grid(4, 3, 7, "fn")
    h = sf.to_bits(RNG.standard_normal(400) * np.exp2(RNG.integers(-12, 8, 400)), "fp16")
    bias = RNG.integers(0, 1 << 16, 400).astype(np.uint16)
    got = V.intel_vcvtbiasph2hf8(bias, h, saturate=True)
    vals = sf.from_bits(h, "fp16")
    want = [expected_fraction(g, Fraction(float(v)), "stochastic_add", 7, (int(b) & 0xFF) >> 1)
            for v, b in zip(vals, bias)]
    want = [0x7E | (w & 0x80) if (w & 0x7F) == 0x7F else w for w in want]   # S: saturate
    assert got.astype(np.int64).tolist() == want
    # AMD CDNA3: the seed's low 20 bits added below E4M3FNUZ's last bit; OPSEL byte
    g = Grid(4, 3, 8, "fnuz")
    x = (RNG.standard_normal(300) * np.exp2(RNG.integers(-10, 6, 300))).astype(np.float32)
    seed = RNG.integers(0, 1 << 32, 300, dtype=np.uint64).astype(np.uint32)
    reg = V.amd_v_cvt_sr_fp8_f32(x, seed, old=np.uint32(0xAABBCCDD), byte_sel=2)
    assert ((reg & 0xFF00FFFF) == 0xAA00CCDD).all()
    want = [expected_fraction(g, Fraction(float(v)), "stochastic_add", 20, int(s) & 0xFFFFF)
            for v, s in zip(x, seed)]
    assert ((reg >> 16) & 0xFF).astype(np.int64).tolist() == want
    # CDNA4 scaled: the same as converting src / scale
    a = V.amd_v_cvt_scalef32_sr_fp8_f32(x, seed, np.float32(4.0))
    b = sf.to_bits(x.astype(np.float64) / 4, "fp8_e4m3", "stochastic_add",
                   random_bits=seed & 0xFFFFF, random_nbits=20, overflow="saturate")
    np.testing.assert_array_equal(a & 0xFF, b)
