"""Matrix units under the policy: fast paths switched by the policy, the rules a
unit fixes refused when asked to change, NaN results from the NaN
specialization, shared operands not copied per batch entry, block-scale flags,
and junk arguments refused."""
import numpy as np
import pytest

import softfloat as sf
from softfloat import mma as M
from softfloat.specialize import all_ones_nan_bits

NVFP4 = ("blackwell", "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3")
MXF8 = ("blackwell", "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0")


def _bits(fmt, shape, rng, lo=-4.0, hi=4.0):
    return sf.to_bits(rng.uniform(lo, hi, size=shape), fmt)


def test_fast_paths_follow_the_policy_and_the_context():
    unit = M.tensor_core("hopper", "fp16", "fp32")
    rng = np.random.default_rng(1)
    a, b = _bits("fp16", (3, 24, 32), rng), _bits("fp16", (3, 32, 40), rng)
    fast = M.mma(unit, a, b)
    slow = M.mma(unit, a, b, policy=sf.Policy(fast_paths=False))
    np.testing.assert_array_equal(fast, slow)
    with sf.localcontext(fast_paths=False):
        np.testing.assert_array_equal(M.mma(unit, a, b), slow)


@pytest.mark.parametrize("change", [dict(rounding="toward_zero"), dict(ftz=True),
                                    dict(daz=True), dict(nan="canonical"),
                                    dict(overflow="saturate"), dict(tininess="before")])
def test_a_policy_that_changes_the_units_rules_is_refused(change):
    unit = M.tensor_core("hopper", "fp16", "fp32")
    a = sf.to_bits(np.ones((16, 16)), "fp16")
    b = sf.to_bits(np.ones((16, 8)), "fp16")
    with pytest.raises(ValueError, match="fast_paths only"):
        M.mma(unit, a, b, policy=sf.Policy(**change))


@pytest.mark.parametrize("kw", [dict(daz=True), dict(ftz=True), dict(nan="canonical"),
                                dict(block=4), dict(product_fmt="fp32")])
def test_matmul_with_a_matrix_unit_refuses_what_it_would_ignore(kw):
    a = sf.to_bits(np.full((4, 16), 2.0 ** -20), "fp16")          # subnormal inputs
    b = sf.to_bits(np.ones((16, 4)), "fp16")
    with pytest.raises(ValueError):
        sf.matmul(a, b, "fp16", acc="h100", **kw)


def test_unknown_device_names_the_devices():
    a = sf.to_bits(np.ones((2, 2)), "fp16")
    with pytest.raises(ValueError, match="neither a format nor a device") as e:
        sf.matmul(a, a, "fp16", acc="h1000")
    assert "h100" in str(e.value) and "hopper" in str(e.value)


def test_nan_results_are_the_units_nan():
    # the fp32 FMA chain (cdna3) and the fp64 one: inf - inf gives all ones but the sign
    for arch, fin in (("cdna3", "fp32"), ("hopper", "fp64")):
        unit = M.tensor_core(arch, fin, fin)

        def enc(v):
            v = np.asarray(v, np.float64)
            return v.view(np.uint64) if fin == "fp64" else sf.to_bits(v, fin)
        av = np.zeros((unit.m, unit.k))
        av[:, 0] = np.inf
        bv = np.zeros((unit.k, unit.n))
        bv[0] = 1.0
        c = enc(np.full((unit.m, unit.n), -np.inf))
        for fast in (True, False):
            d = M.mma(unit, enc(av), enc(bv), c, policy=sf.Policy(fast_paths=fast))
            assert (d == all_ones_nan_bits(unit.out_fmt)).all()


def test_flags_on_ue4m3_scaled_instructions():
    # (raised OverflowError: the sign mask of the ue4m3 scale was built as ~0x80)
    unit = M.tensor_core(NVFP4[0], instruction=NVFP4[1])
    rng = np.random.default_rng(2)
    a, b = _bits("fp4_e2m1", (8, 64), rng, -6, 6), _bits("fp4_e2m1", (64, 8), rng, -6, 6)
    sa = sf.to_bits(np.full((8, 4), 0.5), "fp8_e4m3")
    sb = sf.to_bits(np.full((4, 8), 2.0), "fp8_e4m3")
    d, fl = M.mma(unit, a, b, scale_a=sa, scale_b=sb, return_flags=True)
    np.testing.assert_array_equal(d, M.mma(unit, a, b, scale_a=sa, scale_b=sb))
    assert fl.shape == d.shape and fl.dtype == np.uint8


@pytest.mark.parametrize("ins", [NVFP4, MXF8])
def test_a_nan_block_scale_is_a_nan_operand_not_invalid(ins):
    unit = M.tensor_core(ins[0], instruction=ins[1])
    rng = np.random.default_rng(3)
    K = unit.k
    a, b = _bits(unit.a_fmt, (4, K), rng, -2, 2), _bits(unit.b_fmt, (K, 8), rng, -2, 2)
    nsb = K // unit.scale_block
    one = sf.to_bits(1.0, unit.scale_fmt)
    sa = np.full((4, nsb), one, unit.scale_fmt.dtype)
    sb = np.full((nsb, 8), one, unit.scale_fmt.dtype)
    sa[1, 0] = unit.scale_fmt.default_nan_bits if unit.scale_fmt.name == "e8m0" else 0x7F
    d, fl = M.mma(unit, a, b, scale_a=sa, scale_b=sb, return_flags=True)
    v = sf.from_bits(d, unit.out_fmt)
    assert np.isnan(v[1]).all() and not np.isnan(v[[0, 2, 3]]).any()
    assert not (fl & sf.Flags.INVALID).any()


@pytest.mark.parametrize("shared", ["a", "b"])
def test_a_shared_operand_is_not_copied_per_batch_entry(shared):
    # the batch folded into the columns (rows) of one product gives the bits and the
    # flags of the batch entry by entry
    unit = M.tensor_core("hopper", "fp16", "fp32")
    rng = np.random.default_rng(4)
    if shared == "a":
        a, b = _bits("fp16", (24, 48), rng), _bits("fp16", (5, 48, 16), rng)
    else:
        a, b = _bits("fp16", (5, 24, 48), rng), _bits("fp16", (48, 16), rng)
    c = _bits("fp32", (5, 24, 16), rng)
    d, fl = M.mma(unit, a, b, c, return_flags=True)
    for i in range(5):
        ai = a if shared == "a" else a[i]
        bi = b if shared == "b" else b[i]
        di, fi = M.mma(unit, ai, bi, c[i], return_flags=True)
        np.testing.assert_array_equal(d[i], di)
        np.testing.assert_array_equal(fl[i], fi)


def test_a_large_shared_batch_fits_in_memory():
    # one 256 x 2048 A against 400 B's: would be 400 copies of A (and of its decoding)
    unit = M.tensor_core("hopper", "fp16", "fp32")
    a = np.zeros((256, 2048), np.uint16)
    b = np.zeros((400, 2048, 8), np.uint16)
    assert M.mma(unit, a, b).shape == (400, 256, 8)


@pytest.mark.parametrize("kw,err", [
    (dict(a=np.ones((16, 16))), TypeError), (dict(return_flags="yes"), TypeError),
    (dict(return_flags=1), TypeError), (dict(policy={}), TypeError),
    (dict(c=np.zeros((2, 16, 8), np.uint32)), ValueError),
    (dict(a=np.ones((16, 16), bool)), TypeError)])
def test_junk_arguments_are_refused(kw, err):
    unit = M.tensor_core("hopper", "fp16", "fp32")
    args = dict(a=sf.to_bits(np.ones((16, 16)), "fp16"), b=sf.to_bits(np.ones((16, 8)), "fp16"))
    args.update(kw)
    a, b = args.pop("a"), args.pop("b")
    with pytest.raises(err):
        M.mma(unit, a, b, **args)
