"""softfloat.mma against MMA-Sim 2.1.1, bit for bit.

* Every family (one instruction per architecture, family, k and operand/output
  types: tests/mmasim_harness.families), 10,240 outputs each over two chained
  instructions, against MMA-Sim's outputs stored as digests
  (tests/mma_digests.json, made by tests/gen_mma_digests.py): runs without the
  extra. NaN results compare as NaN where MMA-Sim's NaN bits are the host CPU's
  (AMD CDNA1/CDNA2 fp16/bf16 and the fp32/fp64 FMA chains), and the outputs of
  MMA-Sim's documented deviation (CDNA3 fp8 with an infinite/NaN accumulator,
  docs/matrix-units.md) are masked.
* Live runs against ``mmasim`` (skipped when it is not importable): a sample of
  families in the default suite, 10**6 outputs of every family in ``slow``
  (about 3 s a family; the fp64 ones longer).
"""
import json
import os
import sys
import warnings

import numpy as np
import pytest

from softfloat import mma as M

sys.path.insert(0, os.path.dirname(__file__))
import mmasim_harness as H  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "mma_digests.json")) as _f:
    DIGESTS = json.load(_f)

needs_mmasim = pytest.mark.skipif(not H.HAVE_MMASIM, reason="mmasim (test extra) not importable")


def _ours_digest(arch, ins):
    unit, (a, b, c, sa, sb) = H.digest_case(arch, ins)
    ours = M.mma(unit, a, b, c, scale_a=sa, scale_b=sb)
    mask = H.deviation_mask(unit, a, b, c, sa, sb)
    return H.digest(unit, ours, mask), int(mask.sum())


@pytest.mark.parametrize("arch", M.ARCHS)
def test_every_family_matches_mmasim_digests(arch):
    fams = H.families(arch)
    assert all(f"{arch}|{ins}" in DIGESTS for ins in fams)
    bad = []
    for ins in fams:
        want = DIGESTS[f"{arch}|{ins}"]
        got, masked = _ours_digest(arch, ins)
        if got != want["digest"] or masked != want["masked"]:
            bad.append(ins)
    assert not bad, f"{arch}: outputs differ from MMA-Sim's for {bad} (rerun " \
                    f"tests/mmasim_harness.compare for details)"


LIVE_SAMPLE = [("ampere", "m16n8k16.f16.f16.f16.f16"), ("hopper", "m64n8k32.f32.e5m2.e4m3"),
               ("ada", "m16n8k16.f16.e4m3.e4m3.f16"),
               ("blackwell", "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3"),
               ("rtx_blackwell", "m16n8k32.kind::mxf8f6f4.block32.f32.e3m2.e2m3.f32.ue8m0"),
               ("cdna3", "f32_32x32x8_bf16"), ("cdna2", "f32_32x32x8bf16_1k"),
               ("cdna1", "f32_32x32x8f16")]


def _live(arch, ins, m, n, nk, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs, (unit, a, b, c, sa, sb) = H.compare(arch, ins, m=m, n=n, nk=nk, seed=seed)
    mask = H.deviation_mask(unit, a, b, c, sa, sb)
    o, t = H.normalise(unit, ours, mask), H.normalise(unit, theirs, mask)
    bad = np.argwhere(o != t)
    assert bad.size == 0, (arch, ins, len(bad), [(hex(int(ours[tuple(x)])),
                                                 hex(int(theirs[tuple(x)]))) for x in bad[:3]])
    return ours.size


@needs_mmasim
@pytest.mark.parametrize("arch,ins", LIVE_SAMPLE)
def test_live_sample_against_mmasim(arch, ins):
    assert _live(arch, ins, 48, 40, 3, 2026) == 1920


@needs_mmasim
def test_documented_mmasim_deviation_cdna3_fp8_drops_a_nan_accumulator():
    """MMA-Sim's CDNA3 fp8/bf8 model reads an infinite or NaN c at exponent -1
    and drops it when the products lie 26 or more binades above: a NaN or
    infinite accumulator comes out finite. Ours keeps it (docs/matrix-units.md)."""
    import torch
    from mmasim.amd import MFMA
    op = MFMA("CDNA3", "f32_16x16x32_bf8_bf8")
    a = torch.full((1, 32), 16384.0).to(torch.float8_e5m2fnuz)
    b = torch.full((32, 1), 16384.0).to(torch.float8_e5m2fnuz)
    for cv in (float("nan"), float("inf")):
        theirs = float(op(a, b, torch.full((1, 1), cv))[0, 0])
        assert theirs == 32 * 2.0 ** 28                 # the NaN / infinity is gone
    unit = M.tensor_core("cdna3", instruction="f32_16x16x32_bf8_bf8")
    A, B = a.view(torch.uint8).numpy(), b.view(torch.uint8).numpy()
    ours = M.mma(unit, A, B, np.array([[0x7FC00000, 0x7F800000]], np.uint32)[:, :1])
    assert int(ours[0, 0]) == 0x7FFFFFFF
    ours = M.mma(unit, A, B, np.array([[0x7F800000]], np.uint32))
    assert int(ours[0, 0]) == 0x7F800000
    # CDNA3 fp16 (two_stage) keeps the NaN in MMA-Sim too
    op16 = MFMA("CDNA3", "f32_32x32x8_f16")
    x = torch.full((1, 8), 16384.0, dtype=torch.float16)
    assert torch.isnan(op16(x, x.T.contiguous(), torch.full((1, 1), float("nan")))).all()


ALL_FAMILIES = [(a, ins) for a in M.ARCHS for ins in H.families(a)]


@pytest.mark.slow
@needs_mmasim
@pytest.mark.parametrize("arch,ins", ALL_FAMILIES)
def test_million_outputs_against_mmasim(arch, ins):
    total = 0
    for seed in range(10):                      # 10 x 100,000 outputs, two instructions each
        total += _live(arch, ins, 400, 250, 2, seed)
    assert total == 10 ** 6
