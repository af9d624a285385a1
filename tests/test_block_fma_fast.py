"""The block-FMA (tensor-core) model's fast kernel (float64, vectorised over
columns) against its slow twin (`block_fma_slow`: integer arithmetic, one output at
a time), bit for bit: results, per-output flags and the context's sticky flags.
Exhaustive over (a, b, c) drawn from structured sets of encodings (zeros,
subnormals, the binade edges, the largest values, infinities, NaNs), random over
many shapes, every preset, custom models and policies."""
import itertools

import numpy as np
import pytest

import softfloat as sf
import softfloat.accumulate.dispatch as acc_mod
from softfloat._kernels import accum as KA
from softfloat._kernels import block_fma as K

GPU_FMTS = [("v100", "fp16", "fp32"), ("v100", "fp16", "fp16"), ("a100", "fp16", "fp32"),
            ("a100", "bf16", "fp32"), ("a100", "tf32", "fp32"), ("h100", "fp16", "fp32"),
            ("h100", "fp16", "fp16"), ("h100", "bf16", "fp32"), ("h100", "tf32", "fp32"),
            ("b200", "fp16", "fp32"), ("b200", "bf16", "fp32")]


def structured(fmt):
    """Encodings at the edges of every class of ``fmt`` (both signs)."""
    f = sf.get_format(fmt)
    M, E = f.mbits, f.ebits
    emask = (1 << E) - 1
    fields = [(0, 0), (0, 1), (0, 2), (0, (1 << M) - 1), (1, 0), (1, 1), (1, (1 << M) - 1),
              (f.bias - 1, 0), (f.bias, 0), (f.bias, 1), (f.bias, (1 << M) - 1),
              (f.bias + 1, 1 << (M - 1)), (f.bias + 5, 3), (f.bias - 7, 5),
              (emask - 1, 0), (emask - 1, (1 << M) - 1), (emask, 0), (emask, 1 << (M - 1)),
              (emask, 1)]
    out = []
    for s in (0, 1):
        for e, m in fields:
            out.append((s << (E + M)) | (e << M) | m)
    return np.array(sorted(set(out)), np.uint32).astype(f.dtype)


def both(a, b, fmt, model, c=None, **pol):
    """(bits, flags, sticky) from the fast dispatcher and from the slow twin."""
    res = []
    for kern in (K.block_fma, K.block_fma_slow):
        saved = acc_mod.block_fma
        acc_mod.block_fma = kern
        try:
            with sf.localcontext() as ctx:
                ctx.flags = sf.Flags(0)
                r, f = sf.matmul(a, b, fmt, acc=model, c=c, return_flags=True, **pol)
                sticky1 = int(ctx.flags)
                ctx.flags = sf.Flags(0)
                r2 = sf.matmul(a, b, fmt, acc=model, c=c, **pol)
                sticky2 = int(ctx.flags)
        finally:
            acc_mod.block_fma = saved
        np.testing.assert_array_equal(r, r2)
        assert sticky1 == sticky2 == int(np.bitwise_or.reduce(f, axis=None))
        res.append((r, f, sticky1))
    return res


def check(a, b, fmt, model, c=None, **pol):
    (r1, f1, s1), (r2, f2, s2) = both(a, b, fmt, model, c, **pol)
    bad = np.argwhere(r1 != r2)
    assert bad.size == 0, (model, bad[:5], r1[tuple(bad[0])], r2[tuple(bad[0])])
    np.testing.assert_array_equal(f1, f2)
    assert s1 == s2
    return r1.size


@pytest.mark.parametrize("gpu,fin,fout", GPU_FMTS)
def test_all_structured_triples(gpu, fin, fout):
    """Every (a, b, c) of the structured sets, K = 1 (one product and c), and every
    (a1 b1, a2 b2) pair pattern at K = 2 over a subset."""
    model = sf.block_fma_preset(gpu, fin, fout)
    S = structured(fin)
    Cs = structured(fout)
    n = 0
    for c in Cs:
        C = np.full((S.size, S.size), c, model.fmt.dtype)
        n += check(S[:, None], S[None, :], fin, model, C)
    n += check(S[:, None], S[None, :], fin, model)
    # K = 2: rows (a1, a2) over S x S, columns (b1, b2) over a subset
    A = np.array(list(itertools.product(S, S)), np.uint32).astype(sf.get_format(fin).dtype)
    Bs = S[::3]
    B = np.array(list(itertools.product(Bs, Bs)), np.uint32).T.astype(A.dtype)
    n += check(A, B, fin, model)
    assert n > 20000


def _rand_bits(rng, fmt, shape, spread, specials=True):
    """Random encodings of fmt: values 2**N(0, spread) with random signs, some
    zeros, subnormals and specials sprinkled in."""
    v = np.ldexp(rng.uniform(1, 2, shape), rng.normal(0, spread, shape).astype(int))
    v *= rng.choice([-1.0, 1.0], shape)
    bits = sf.to_bits(v, fmt)
    if specials:
        S = structured(fmt)
        mask = rng.random(shape) < 0.03
        bits[mask] = rng.choice(S, mask.sum()).astype(bits.dtype)
    mask = rng.random(shape) < 0.05
    bits[mask] = 0
    return bits


@pytest.mark.parametrize("gpu,fin,fout", GPU_FMTS)
def test_random_shapes(gpu, fin, fout):
    rng = np.random.default_rng(hash((gpu, fin, fout)) % 2**32)
    model = sf.block_fma_preset(gpu, fin, fout)
    total = 0
    for trial in range(12):
        m, k, n = rng.integers(1, 40), rng.integers(1, 70), rng.integers(1, 40)
        spread = [0.5, 3, 8, 40][trial % 4]
        a = _rand_bits(rng, fin, (m, k), spread, specials=trial % 3 != 0)
        b = _rand_bits(rng, fin, (k, n), spread, specials=trial % 3 != 0)
        c = None
        if trial % 2:
            c = _rand_bits(rng, model.fmt.name, (m, n), spread)
        total += check(a, b, fin, model, c)
    assert total > 500


@pytest.mark.parametrize("pol", [dict(ftz=True), dict(daz=True), dict(ftz=True, daz=True),
                                 dict(overflow="saturate"), dict(subnormals=False)])
def test_policies(pol):
    rng = np.random.default_rng(5)
    for gpu, fin, fout in [("h100", "fp16", "fp16"), ("a100", "bf16", "fp32"),
                           ("v100", "fp16", "fp32")]:
        model = sf.block_fma_preset(gpu, fin, fout)
        a = _rand_bits(rng, fin, (17, 33), 12)
        b = _rand_bits(rng, fin, (33, 9), 12)
        try:
            check(a, b, fin, model, **pol)
        except (TypeError, ValueError) as e:          # a policy this build names otherwise
            pytest.skip(str(e))


@pytest.mark.parametrize("model", [
    sf.BlockFMA(5, 3, "fp32", "toward_zero"),
    sf.BlockFMA(7, 0, "fp32", "nearest_even"),
    sf.BlockFMA(3, 1, "bf16", "nearest_even"),
    sf.BlockFMA(4, 0, "fp16", "toward_zero", frame_bits=10, frame_emin=-14),
    sf.BlockFMA(64, 2, "fp32", "toward_zero"),
    sf.BlockFMA(1, 0, "fp32", "toward_zero"),
    sf.BlockFMA(8, 0, "fp32", "upward"),
    sf.BlockFMA(6, 1, "fp32", "downward"),
    sf.BlockFMA(4, 0, "fp16", "nearest_away", frame_bits=10, frame_emin=-14),
    sf.BlockFMA(8, 0, "fp32", "odd"),                  # not a fast mode: the slow kernel
])
@pytest.mark.parametrize("fin", ["fp16", "bf16", "e4m3", "e5m2"])
def test_custom_models(model, fin):
    rng = np.random.default_rng(11)
    a = _rand_bits(rng, fin, (13, 70), 6)
    b = _rand_bits(rng, fin, (70, 11), 6)
    c = _rand_bits(rng, model.fmt.name, (13, 11), 6)
    check(a, b, fin, model)
    check(a, b, fin, model, c)


def test_large_product_takes_the_fast_kernel_and_agrees():
    """A 96x200x150 product on several threads (the chunked path), fp16 and bf16."""
    rng = np.random.default_rng(2)
    for fin in ("fp16", "bf16"):
        a = sf.to_bits(rng.standard_normal((96, 200)), fin)
        b = sf.to_bits(rng.standard_normal((200, 150)), fin)
        assert K.block_fma_fast_masks((16, 2, 23, -126), sf.get_format(fin).params,
                                      sf.FP32.params, (2, 0, 0, 0, 0, 0, 0, 0)) is not None
        check(a, b, fin, sf.block_fma_preset("h100", fin))


@pytest.mark.parametrize("mode", list(sf.Rounding))
def test_fast_kernel_serves_the_branch_free_modes(mode):
    """The float64 kernel takes every mode `core.addend_branchfree` rounds in
    (odd and stochastic rounding go to the slow kernel); the modes it takes are
    compared with the slow twin above (presets: toward zero and nearest-even;
    custom models: upward, downward, nearest-away)."""
    pol = sf.context.kernel_policy(sf.context.resolve(mode), sf.FP32)
    masks = K.block_fma_fast_masks((8, 0, 23, -126), sf.FP16.params, sf.FP32.params, pol)
    fast = mode not in (sf.Rounding.ODD, sf.Rounding.STOCHASTIC)
    assert (masks is not None) == fast
    if fast:      # one of nearest-even, nearest-away, upward, downward masks, or none
        assert sum(masks) == (mode != sf.Rounding.TOWARD_ZERO) and masks[4] == 0


def test_one_compiled_signature_per_kernel():
    """Inputs stored in uint32 (fp32, tf32: the caller's arrays, read-only views once
    broadcast) and an initial c reach the kernels as the same array type as fp16
    inputs: each accumulation kernel is compiled once, not once per input layout."""
    rng = np.random.default_rng(4)
    for fin in ("fp16", "fp32", "tf32"):
        a = _rand_bits(rng, fin, (5, 9), 3)
        b = _rand_bits(rng, fin, (9, 4), 3)
        c = sf.to_bits(rng.standard_normal((5, 4)), "fp32")
        for acc in (sf.BlockFMA(4, 0), sf.BlockFMA(4, 0, rounding="odd"), "fp16"):
            sf.matmul(a, b, fin, acc=acc, return_flags=True)
            if acc != "fp16":
                sf.matmul(a, b, fin, acc=acc, c=c)
        sf.matmul(a, b, fin, acc="fp32", c=c, return_flags=True)
    for kern in (K.block_fma_fast_chunk, K.block_fma_chunk, KA.reduce_program_chunk):
        assert len(kern.signatures) == 1, (kern, kern.signatures)
