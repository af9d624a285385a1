"""Block-scaled quantization (softfloat.mx) against a reference written from the
formulas in softfloat/mx.py's docstring with exact Fraction arithmetic
(tests/exact_reference.py rounds every value), block by block with plain slicing of the
original array; plus per-tensor scaling, packing and input validation.
Cross-checks against torchao and gfloat are in tests/test_mx_crosscheck.py."""
import math
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import mx
from softfloat.context import random_key

import exact_reference as O

MX = ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "mxint8"]
ALL = MX + ["nvfp4"]
MODES = list(O.DETERMINISTIC)
F32 = (8, 23, 127, "ieee")
F64 = (11, 52, 1023, "ieee")


def _splitmix(key, idx, nbits):
    m = (1 << 64) - 1
    z = (key + (idx + 1) * 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    z ^= z >> 31
    return z >> (64 - nbits)


def _ceil_log2(v: Fraction) -> int:
    f = O._floor_log2(v)
    return f if Fraction(2) ** f == v else f + 1


def _round_int(v: Fraction, mode):
    """v >= 0 to an integer by a sign-independent mode."""
    n = v.numerator // v.denominator
    rem = v - n
    if rem == 0:
        return n
    if mode == "nearest_even":
        return n + 1 if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2) else n
    if mode == "nearest_away":
        return n + 1 if rem >= Fraction(1, 2) else n
    if mode == "toward_zero":
        return n
    assert mode == "odd"
    return n if n % 2 else n + 1


def ref_scale(bf, amax: Fraction, rule, host):
    """MX scale exponent (None for the NaN scale) from the docstring's formulas."""
    if amax == 0:
        return -127
    if rule == "floor":
        e = O._floor_log2(amax) - bf.emax_elem
    elif rule == "ceil":
        e = _ceil_log2(amax) - bf.emax_elem
    elif rule == "even":
        p = bf.elem_precision
        q = Fraction(2) ** (O._floor_log2(amax) - p + 1)
        n = amax / q
        n = (n.numerator * 2 + n.denominator) // (2 * n.denominator)   # floor(n + 1/2)
        e = O._floor_log2(n * q) - bf.emax_elem
    else:
        d = amax / Fraction(bf.max_elem)
        bits, _ = O.round_exact(0, d, F32 if host == np.float32 else F64, "nearest_even")
        dv = O.decode(bits, F32 if host == np.float32 else F64)
        if dv.cls == "zero":
            return -127
        e = _ceil_log2(dv.value)
    if e > 127:
        return None
    return max(e, -127)


def ref_element(bf, v: Fraction, sign, X: Fraction, mode, r=None, nb=32):
    """Code of one element v (magnitude) / X."""
    if bf.is_int:
        q = v / X * 64
        if mode in ("upward", "downward"):
            up = (mode == "upward") != bool(sign)
            n = q.numerator // q.denominator
            n = n + (1 if (up and q != n) else 0)
        elif mode == "stochastic":
            n = q.numerator // q.denominator
            frac = q - n
            n += 1 if r < math.ceil(frac * (1 << nb)) else 0
        else:
            n = _round_int(q, mode)
        n = min(n, 127)
        return (-n if sign else n) & 0xFF
    f = bf.elem
    if v == 0:
        return 0 if f.kind == "fnuz" else sign << (f.ebits + f.mbits)
    bits, _ = O.round_exact(sign, v / X, f, mode, overflow="saturate", sr_bits=nb, sr_random=r)
    return bits


def reference(x, fmt, *, axis=-1, block=None, scale_rule=None, rounding="nearest_even",
              seed=None, tensor_scale=None, sr_bits=32):
    """(codes, scales) computed block by block from slices of x."""
    bf = mx.block_format(fmt)
    nv = fmt == "nvfp4"
    rule = scale_rule or ("nearest" if nv else "floor")
    ts = Fraction(1) if tensor_scale is None else Fraction(tensor_scale)
    if block is None:
        block = bf.block
    if isinstance(block, tuple):
        axes = tuple(a % x.ndim for a in ((-2, -1) if axis == -1 else axis))
        bsz = block
    else:
        axes = (axis % x.ndim,)
        bsz = (block,)
    sshape = list(x.shape)
    for a, b in zip(axes, bsz):
        sshape[a] = -(-x.shape[a] // b)
    codes = np.zeros(x.shape, np.uint8)
    scales = np.zeros(sshape, np.uint8)
    # the stochastic stream index: position in the array with the blocked axes last
    moved = np.moveaxis(np.arange(x.size).reshape(np.moveaxis(np.empty(x.shape), axes,
                                                              range(-len(axes), 0)).shape),
                        range(-len(axes), 0), axes)
    key = random_key(seed) if rounding == "stochastic" else None
    for sidx in np.ndindex(*sshape):
        sl = list(sidx)
        for a, b in zip(axes, bsz):
            sl[a] = slice(sidx[a] * b, (sidx[a] + 1) * b)
        sl = tuple(sl)
        blk = x[sl]
        if not np.isfinite(blk).all():
            scales[sidx] = 0x7F if nv else 0xFF
            continue                                   # element codes 0
        vals = [Fraction(float(v)) for v in blk.reshape(-1)]
        amax = max(abs(v) for v in vals)
        if nv:
            if amax == 0:
                sb = 1
            else:
                sb, _ = O.round_exact(0, amax / (6 * ts), sf.get_format("fp8_e4m3"),
                                      "upward" if rule == "up" else "nearest_even",
                                      overflow="saturate")
                sb = max(sb, 1)
            scales[sidx] = sb
            X = ts * O.decode(sb, sf.get_format("fp8_e4m3")).value
        else:
            e = ref_scale(bf, amax, rule, x.dtype.type)
            if e is None:
                scales[sidx] = 0xFF
                continue
            scales[sidx] = e + 127
            X = Fraction(2) ** e
        out = []
        for v, idx in zip(blk.reshape(-1).tolist(), moved[sl].reshape(-1).tolist()):
            r = _splitmix(key, idx, sr_bits) if key is not None else None
            out.append(ref_element(bf, abs(Fraction(v)), int(math.copysign(1, v) < 0), X,
                                   rounding, r, sr_bits))
        codes[sl] = np.array(out, np.uint8).reshape(blk.shape)
    if bf.is_int:
        codes = codes.view(np.int8)
    return codes, scales


def ref_dequantize(codes, scales, fmt, tensor_scale=None, **kw):
    bf = mx.block_format(fmt)
    if bf.is_int:
        P = codes.astype(np.float64) / 64
    else:
        P = sf.from_bits(codes, bf.elem)
    S = sf.from_bits(scales, bf.scale) * (tensor_scale or 1.0)
    block = kw.get("block") or bf.block
    axis = kw.get("axis", -1)
    if isinstance(block, tuple):
        axes = tuple(a % codes.ndim for a in ((-2, -1) if axis == -1 else axis))
        for a, b in zip(axes, block):
            S = np.repeat(S, b, axis=a)
    else:
        S = np.repeat(S, block, axis=axis)
    S = S[tuple(slice(0, n) for n in codes.shape)]
    return P * S


def data(seed, shape, dtype=np.float32, kind="mixed"):
    """Random values with the cases that matter: zeros, exact powers of two,
    values at and around element-grid midpoints, binade edges, tiny and huge
    magnitudes, all-zero blocks."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-8, 9, shape))
    m = rng.random(shape)
    x = np.where(m < 0.05, 0.0, x)
    x = np.where((m > 0.05) & (m < 0.12), np.exp2(rng.integers(-10, 10, shape)) *
                 rng.choice([-1.0, 1.0], shape), x)
    # element midpoints (e.g. 1.25 * 2**k, 1.75 * 2**k, 6.5...) and max_elem edges
    mids = np.array([1.25, 1.75, 0.75, 1.125, 3.5, 7.0, 6.5, 448.0 / 256, 1.984375, 1.9921875])
    x = np.where((m > 0.12) & (m < 0.25), rng.choice(mids, shape) *
                 np.exp2(rng.integers(-6, 6, shape)) * rng.choice([-1.0, 1.0], shape), x)
    if kind == "extreme":
        x = x * np.exp2(rng.integers(-140, 130, shape[:-1] + (1,)))
    x = x.astype(dtype)
    if x.ndim >= 2 and x.shape[0] > 2:
        x[1] = 0.0                                      # an all-zero row of blocks
    return x


def _eq(got, want, what):
    g, w = got, want
    bad = np.argwhere(g != w)
    assert bad.size == 0, f"{what}: {len(bad)} differ, first at {bad[:3].tolist()}: " \
                          f"{g[tuple(bad[0])]} vs {w[tuple(bad[0])]}"


@pytest.mark.parametrize("fmt", ALL)
@pytest.mark.parametrize("rule", ["floor", "ceil", "even", "rceil", "nearest", "up"])
def test_against_reference_rules(fmt, rule):
    nv = fmt == "nvfp4"
    if (rule in ("nearest", "up")) != nv:
        pytest.skip("rule not for this format")
    for seed, dtype, kind, shape in ((1, np.float32, "mixed", (6, 70)),
                                     (2, np.float64, "extreme", (5, 40)),
                                     (3, np.float32, "extreme", (4, 33))):
        x = data(seed, shape, dtype, kind)
        got = mx.quantize(x, fmt, scale_rule=rule)
        want = reference(x, fmt, scale_rule=rule)
        _eq(got[1], want[1], f"{fmt} {rule} scales")
        _eq(got[0], want[0], f"{fmt} {rule} codes")
        y = mx.dequantize(*got, fmt)
        assert np.array_equal(y, ref_dequantize(*got, fmt), equal_nan=True)


@pytest.mark.parametrize("fmt", ALL)
@pytest.mark.parametrize("mode", MODES)
def test_every_rounding_mode(fmt, mode):
    x = data(11, (3, 48), np.float64)
    got = mx.quantize(x, fmt, rounding=mode)
    want = reference(x, fmt, rounding=mode)
    _eq(got[1], want[1], "scales")
    _eq(got[0], want[0], f"{fmt} {mode} codes")


@pytest.mark.parametrize("fmt", ["mxfp8_e4m3", "mxfp4", "mxint8", "nvfp4"])
def test_stochastic_against_reference(fmt):
    x = data(5, (3, 20, 7), np.float32)
    for axis, block in ((-1, None), (1, 8), ((1, 2), (4, 4))):
        got = mx.quantize(x, fmt, axis=axis, block=block, rounding="stochastic", seed=42)
        want = reference(x, fmt, axis=axis, block=block, rounding="stochastic", seed=42)
        _eq(got[0], want[0], f"{fmt} {axis} {block}")
        again = mx.quantize(x, fmt, axis=axis, block=block, rounding="stochastic", seed=42)
        assert np.array_equal(got[0], again[0])


@pytest.mark.parametrize("fmt", ["mxfp6_e3m2", "mxint8", "nvfp4"])
@pytest.mark.parametrize("axis, block", [(0, 16), (1, 128), (-1, 1), (2, 5),
                                         ((0, 2), (16, 16)), ((1, 0), (3, 2)),
                                         ((-2, -1), (128, 128))])
def test_axes_and_blocks(fmt, axis, block):
    x = data(7, (18, 9, 21), np.float32)
    got = mx.quantize(x, fmt, axis=axis, block=block)
    want = reference(x, fmt, axis=axis, block=block)
    _eq(got[1], want[1], "scales")
    _eq(got[0], want[0], "codes")
    kw = dict(axis=axis, block=block)
    y = mx.dequantize(*got, fmt, **kw)
    assert np.array_equal(y, ref_dequantize(*got, fmt, **kw), equal_nan=True)


def test_scale_rule_formulas_by_hand():
    """Worked cases: amax = 6.5 into mxfp4 (emax 2): floor 2**0, ceil 2**1,
    even (6.5 -> 6 at 2 bits) 2**0, rceil ceil(log2(6.5/6)) = 1; amax = 7:
    even (7 = 1.75 * 4, a tie, away -> 8) 2**1."""
    x = np.zeros(32, np.float32)
    x[0] = 7.0
    assert mx.quantize(x, "mxfp4", scale_rule="even")[1][0] == 128
    x[0] = 6.5
    for rule, e in (("floor", 0), ("ceil", 1), ("even", 0), ("rceil", 1)):
        c, s = mx.quantize(x, "mxfp4", scale_rule=rule)
        assert s[0] == 127 + e, rule
    c, s = mx.quantize(x, "mxfp4")
    assert sf.from_bits(c[:1], "fp4_e2m1")[0] == 6.0       # saturated (6.5 > 6)
    x[0] = 6.0                                               # exactly max: rceil 2**0
    assert mx.quantize(x, "mxfp4", scale_rule="rceil")[1][0] == 127
    x[0] = 5.0                                               # even: 5 -> 4 at 2 bits: 2**0
    assert mx.quantize(x, "mxfp4", scale_rule="even")[1][0] == 127
    x[0] = 448.0 * 2 ** 10
    assert mx.quantize(x, "mxfp8_e4m3")[1][0] == 127 + 10
    x[0] = 2.0 ** -140                                       # clamped to 2**-127
    c, s = mx.quantize(x, "mxfp8_e4m3")
    assert s[0] == 0 and c[0] == 0                           # 2**-140 / 2**-127 -> 0 in e4m3
    c, s = mx.quantize(np.full(32, 2.0 ** 200), "mxfp8_e4m3")  # float64: e = 192 > 127
    assert s[0] == 255 and np.isnan(mx.dequantize(c, s, "mxfp8_e4m3")).all()


def test_nan_inf_blocks():
    x = np.ones((2, 64), np.float32)
    x[0, 3] = np.nan
    x[1, 40] = -np.inf
    for fmt in MX:
        c, s = mx.quantize(x, fmt)
        e1 = 127 - mx.block_format(fmt).emax_elem          # the scale of a block of ones
        assert s.tolist() == [[255, e1], [e1, 255]], fmt
        y = mx.dequantize(c, s, fmt)
        assert np.isnan(y[0, :32]).all() and np.isnan(y[1, 32:]).all()
        assert (y[0, 32:] == 1).all() and (y[1, :32] == 1).all()
    c, s = mx.quantize(x, "nvfp4")
    assert s[0, 0] == 0x7F and s[1, 2] == 0x7F
    assert np.isnan(mx.dequantize(c, s, "nvfp4")[0, :16]).all()


def test_nvfp4_tensor_scale():
    x = data(9, (4, 64), np.float32)
    ts = mx.nvfp4_tensor_scale(x)
    assert ts == float(np.float32(np.abs(x).max() / 2688.0))
    got = mx.quantize(x, "nvfp4", tensor_scale=ts)
    want = reference(x, "nvfp4", tensor_scale=ts)
    _eq(got[1], want[1], "scales")
    _eq(got[0], want[0], "codes")
    y = mx.dequantize(*got, "nvfp4", tensor_scale=ts)
    assert np.array_equal(y, ref_dequantize(*got, "nvfp4", tensor_scale=ts))
    with pytest.raises(ValueError, match="float32"):
        mx.quantize(x, "nvfp4", tensor_scale=0.1)            # not a float32 value
    with pytest.raises(ValueError, match="nvfp4 only"):
        mx.quantize(x, "mxfp4", tensor_scale=1.0)


def test_partial_last_block():
    x = data(13, (2, 37), np.float32)
    c, s = mx.quantize(x, "mxfp8_e4m3")
    assert s.shape == (2, 2)
    # the partial block's scale comes from its own 5 elements
    c5, s5 = mx.quantize(np.ascontiguousarray(x[:, 32:]), "mxfp8_e4m3")
    assert np.array_equal(s[:, 1], s5[:, 0]) and np.array_equal(c[:, 32:], c5)


def test_pack_unpack_fp4():
    c = np.array([[1, 2, 3, 15, 7]], np.uint8)
    p = mx.pack_fp4(c)
    assert p.tolist() == [[0x21, 0xF3, 0x07]]
    assert np.array_equal(mx.unpack_fp4(p, 5), c)
    rng = np.random.default_rng(0)
    c = rng.integers(0, 16, (6, 8, 4)).astype(np.uint8)
    for ax in (0, 1, 2):
        assert np.array_equal(mx.unpack_fp4(mx.pack_fp4(c, axis=ax), axis=ax), c)
    with pytest.raises(ValueError):
        mx.pack_fp4(np.array([16], np.uint8))


def test_validation():
    x = np.ones(64, np.float32)
    with pytest.raises(ValueError, match="unknown block format"):
        mx.quantize(x, "mxfp5")
    with pytest.raises(TypeError, match="float"):
        mx.quantize(np.ones(64, np.int32), "mxfp4")
    with pytest.raises(ValueError, match="scale_rule"):
        mx.quantize(x, "mxfp4", scale_rule="round")
    with pytest.raises(ValueError, match="scale_rule"):
        mx.quantize(x, "nvfp4", scale_rule="floor")
    with pytest.raises(ValueError, match="block"):
        mx.quantize(x, "mxfp4", block=0)
    with pytest.raises(ValueError, match="axis"):
        mx.quantize(x, "mxfp4", axis=1)
    with pytest.raises(ValueError, match="rounding"):
        mx.quantize(x, "mxfp4", rounding="sideways")
    c, s = mx.quantize(x, "mxfp4")
    with pytest.raises(ValueError, match="shape"):
        mx.dequantize(c, s[:0], "mxfp4")
    with pytest.raises(TypeError, match="codes"):
        mx.dequantize(c.astype(np.int8), s, "mxfp4")
    with pytest.raises(ValueError, match="out of range"):
        mx.dequantize(np.full(64, 16, np.uint8), s, "mxfp4")


# --------------------------------------------------------------------------
# per-tensor fp8 scaling
# --------------------------------------------------------------------------
def test_per_tensor_names_in_both_modules():
    # softfloat.fp8_scaling holds per-tensor scaling; softfloat.mx offers its public
    # names (the documented path) as the very same objects
    from softfloat import fp8_scaling
    assert set(fp8_scaling.__all__) <= set(mx.__all__)
    for name in fp8_scaling.__all__:
        assert getattr(mx, name) is getattr(fp8_scaling, name)


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("mode", ["nearest_even", "toward_zero", "upward", "stochastic"])
def test_per_tensor_against_oracle(fmt, mode):
    f = sf.get_format(fmt)
    for dtype in (np.float32, np.float64):
        x = data(21, (300,), dtype)
        x[:3] = [np.inf, -np.inf, 1e30]
        codes, scale = mx.quantize_per_tensor(x, fmt, rounding=mode, seed=3)
        fin = x[np.isfinite(x)]
        assert scale == float(np.float32(f.max) / np.float32(np.abs(fin).max()))
        key = random_key(3)
        for i, v in enumerate(x.tolist()):
            if math.isinf(v):
                want = f.max_bits | (f.sign_mask if v < 0 else 0)
            elif v == 0:
                want = f.sign_mask if math.copysign(1, v) < 0 else 0
            else:
                r = _splitmix(key, i, 32) if mode == "stochastic" else None
                want, _ = O.round_exact(int(v < 0), abs(Fraction(v)) * Fraction(scale), f,
                                        mode, overflow="saturate", sr_random=r)
            assert int(codes[i]) == want, (i, v, mode)
    y = mx.dequantize_per_tensor(codes, scale, fmt)
    assert np.array_equal(y, sf.from_bits(codes, fmt) / scale)


def test_delayed_scaling_history():
    d = mx.DelayedScaling("fp8_e4m3", history_len=3)
    xs = [np.full(4, v, np.float32) for v in (2.0, 8.0, 1.0, 1.0, 1.0)]
    used = [d.quantize(x)[1] for x in xs]
    s = lambda a: float(np.float32(448.0) / np.float32(a))     # noqa: E731
    # step 0: initial scale 1; then max over the last 3 amaxes of earlier steps
    assert used == [1.0, s(2.0), s(8.0), s(8.0), s(8.0)]
    assert d.scale == s(1.0)
    d2 = mx.DelayedScaling("fp8_e4m3", algo="most_recent")
    used = [d2.quantize(x)[1] for x in xs[:3]]
    assert used == [1.0, s(2.0), s(8.0)]
    assert mx.fp8_scale(0.0, previous=3.0) == 3.0 and mx.fp8_scale(np.inf) == 1.0
    assert mx.fp8_scale(1.0, "fp8_e4m3", margin=1) == 224.0
