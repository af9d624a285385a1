"""softfloat.cublas against mmaemu 0.1.0's CPU reference model of torch._scaled_mm
(built from recordings of an H100 PCIe and an RTX 4060, cuBLASLt 12.8.3.14).

mmaemu computes the accumulator with its own torch/float64 chain model and plan
executor and its own epilogue; softfloat.cublas chains the MMA-Sim instruction
models of softfloat.mma. Every output is compared bit for bit (NaN included: both
sides return the canonical NaN). The default tests compare more than 10^5
outputs; the slow ones more than 10^7.
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
mmaemu = pytest.importorskip("mmaemu")

from softfloat import cublas  # noqa: E402

DEVICES = {"h100_pcie": "hopper", "rtx4060": "ada"}


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """mmaemu's torch ops on one thread: on a loaded machine OpenMP's barriers make
    small multi-threaded ops a hundred times slower."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
TORCH_FP8 = {"fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}
TORCH_OUT = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16,
             "fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}
INT_VIEW = {4: (torch.int32, 0xFFFFFFFF), 2: (torch.int16, 0xFFFF), 1: (torch.uint8, 0xFF)}
# (a format, b format, output formats); e4m3 x e4m3 -> e5m2 is refused by cuBLASLt,
# e5m2 x e5m2 by torch
COMBOS = (("fp8_e4m3", "fp8_e4m3", ("bf16", "fp16", "fp32", "fp8_e4m3")),
          ("fp8_e4m3", "fp8_e5m2", ("bf16", "fp8_e5m2")),
          ("fp8_e5m2", "fp8_e4m3", ("fp32", "fp16", "fp8_e4m3")))
KINDS = ("random", "finite", "subnormal", "spread", "zeros", "nan")
# per-tensor scales: plain, tiny (subnormal and zero outputs), huge (saturation,
# overflow to infinity), negative and odd
SCALES = ((1.0, 1.0), (2.0 ** -70, 2.0 ** -62), (3.1e10, 7.7e12), (-0.37, 1.3e-3),
          (0.0117, 1.7e-5), (448.0, 0.125))
SPLITS = {"h100_pcie": ((2, "contiguous"), (3, "contiguous"), (5, "contiguous"),
                        (4, "contiguous")),
          "rtx4060": ((2, "serial"), (3, "pairwise"), (4, "pairwise"), (5, "serial"),
                      (6, "pairwise"))}


def codes(rng, shape, fmt, kind):
    """fp8 encodings of one of the input kinds."""
    X = rng.integers(0, 256, shape, dtype=np.uint8)
    nonfinite = (X & 0x7F) == 0x7F if fmt == "fp8_e4m3" else (X & 0x7C) == 0x7C
    sign = (rng.integers(0, 2, shape) << 7).astype(np.uint8)
    if kind == "random":                        # every code, NaN/Inf made rare
        keep = rng.random(shape) < 0.0005
        X = np.where(nonfinite & ~keep, X & 0x73, X)
    elif kind == "finite":
        X = np.where(nonfinite, X & 0x73, X)
    elif kind == "subnormal":                   # subnormals, zeros and the smallest normals
        X = rng.integers(0, 12, shape).astype(np.uint8) | sign
    elif kind == "spread":                      # mostly tiny, a few near the maximum
        big = rng.random(shape) < 0.08
        hi = 0x76 if fmt == "fp8_e4m3" else 0x7A
        X = np.where(big, rng.integers(hi - 6, hi + 1, shape), rng.integers(0, 0x18, shape))
        X = X.astype(np.uint8) | sign
    elif kind == "zeros":                       # zero rows, zero columns, scattered zeros
        X = np.where(nonfinite, X & 0x73, X)
        X[rng.random(shape) < 0.4] = 0
        X[::5] = 0x80
    elif kind == "nan":                         # NaN and (e5m2) Inf scattered
        X = np.where(nonfinite, X & 0x73, X)
        hit = rng.random(shape) < 0.004
        X[hit] = 0x7F if fmt == "fp8_e4m3" else rng.choice([0x7C, 0xFC, 0x7E])
    return X


def mmaemu_scaled_mm(A, B, sa, sb, fa, fb, out, fast, profile, splitk):
    a = torch.from_numpy(A).view(TORCH_FP8[fa])
    b = torch.from_numpy(np.ascontiguousarray(B.T)).view(TORCH_FP8[fb]).t()   # column-major
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = mmaemu.scaled_mm(a, b, torch.tensor(np.float32(sa)), torch.tensor(np.float32(sb)),
                             out_dtype=TORCH_OUT[out], use_fast_accum=fast, profile=profile,
                             splitk=splitk, backend="reference")
    iv, mask = INT_VIEW[r.element_size()]
    return r.view(iv).numpy().astype(np.int64) & mask


def compare(rng, device, m, n, K, fa, fb, out, fast, splitk, kind, scales):
    A = codes(rng, (m, K), fa, kind)
    B = codes(rng, (K, n), fb, kind)
    sa, sb = scales
    got = cublas.scaled_mm(A, B, np.float32(sa), np.float32(sb), device=device, out_fmt=out,
                           a_fmt=fa, b_fmt=fb, fast_accum=fast, splitk=splitk)
    ref = mmaemu_scaled_mm(A, B, sa, sb, fa, fb, out, fast, DEVICES[device],
                           1 if splitk is None else splitk)
    bad = np.argwhere(ref != got.astype(np.int64))
    assert bad.size == 0, (f"{device} {fa}x{fb}->{out} fast={fast} split={splitk} {kind} "
                           f"scales={scales}: {len(bad)} of {ref.size} differ, first at "
                           f"{tuple(bad[0])}: mmaemu {ref[tuple(bad[0])]:#x}, ours "
                           f"{int(got[tuple(bad[0])]):#x}")
    return ref.size


def sweep(seed, device, fast, split_mode, m, n, reps):
    rng = np.random.default_rng(seed)
    total = 0
    i = 0
    for _ in range(reps):
        for fa, fb, outs in COMBOS:
            for out in outs:
                kind = KINDS[i % len(KINDS)]
                scales = SCALES[(i // 2) % len(SCALES)]
                if split_mode == "S1":
                    split, K = None, int(rng.choice([128, 256, 384, 512, 656]))
                else:
                    split = SPLITS[device][i % len(SPLITS[device])]
                    K = int(rng.choice([320, 512, 640, 784, 1024]))
                total += compare(rng, device, m, n, K, fa, fb, out, fast, split, kind, scales)
                i += 1
    return total


@pytest.mark.parametrize("split_mode", ["S1", "explicit"])
@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("device", sorted(DEVICES))
def test_scaled_mm_parity(device, fast, split_mode):
    seed = sum(map(ord, device + split_mode)) + 7 * fast
    # 9 output combinations x 2 rounds x 24 x 80 outputs: 34,560 per test, 276,480 in all
    assert sweep(seed, device, fast, split_mode, 24, 80, 2) == 34560


def table_rows(device, count, seed, max_work=1 << 22, split_only=True):
    """Rows of mmaemu's recorded heuristics table for the device's profile (torch's
    1 MiB workspace): (M, N, K, fa, fb, out, fast) of shapes torch._scaled_mm accepts."""
    from mmaemu.platform.profiles import get_profile
    from mmaemu.platform.splitk_table import DATA
    prof = get_profile(DEVICES[device])
    z = np.load(DATA / f"{prof.splitk_table}.npz")
    meta = json.loads((DATA / f"{prof.splitk_table}.json").read_text())
    ws = np.asarray(meta["codes"]["ws"])[z["ws"]]
    fmt = {int(k): "fp8_" + v for k, v in meta["codes"]["fa/fb"].items()}
    outs = {int(k): v for k, v in meta["codes"]["out"].items()}
    name = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16",
            "float8_e4m3fn": "fp8_e4m3", "float8_e5m2": "fp8_e5m2"}
    M, N, K = (z[c].astype(np.int64) for c in ("M", "N", "K"))
    ok = (ws == prof.workspace_bytes) & (M * N * K <= max_work) & (K % 16 == 0) & (N % 16 == 0)
    ok &= ~((z["fa"] == 1) & (z["fb"] == 1))
    ok &= ~((z["fa"] == 0) & (z["fb"] == 0) & (z["out"] == 4))
    ok &= (z["splitK"] > 1) if split_only else (z["splitK"] == 1)
    idx = np.nonzero(ok)[0]
    idx = np.random.default_rng(seed).choice(idx, size=min(count, len(idx)), replace=False)
    return [(int(M[j]), int(N[j]), int(K[j]), fmt[int(z["fa"][j])], fmt[int(z["fb"][j])],
             name[outs[int(z["out"][j])]], bool(z["fast"][j])) for j in idx]


def check_auto(rng, device, row, kind, scales):
    m, n, K, fa, fb, out, fast = row
    A = codes(rng, (m, K), fa, kind)
    B = codes(rng, (K, n), fb, kind)
    got, info = cublas.scaled_mm(A, B, np.float32(scales[0]), np.float32(scales[1]),
                                 device=device, out_fmt=out, a_fmt=fa, b_fmt=fb,
                                 fast_accum=fast, splitk="auto", return_info=True)
    a = torch.from_numpy(A).view(TORCH_FP8[fa])
    b = torch.from_numpy(np.ascontiguousarray(B.T)).view(TORCH_FP8[fb]).t()
    plan = mmaemu.explain(a, b, torch.tensor(np.float32(scales[0])),
                          torch.tensor(np.float32(scales[1])), out_dtype=TORCH_OUT[out],
                          use_fast_accum=fast, profile=DEVICES[device], splitk="auto")
    want = (plan.split.S, plan.split.scheme if plan.split.S > 1 else "none")
    assert info.split_source == "mmaemu heuristics" and info.splitk == want, (row, info)
    ref = mmaemu_scaled_mm(A, B, scales[0], scales[1], fa, fb, out, fast, DEVICES[device],
                           "auto")
    bad = np.argwhere(ref != got.astype(np.int64))
    assert bad.size == 0, (f"{device} {row} {kind}: {len(bad)} of {ref.size} differ "
                           f"(split {info.splitk})")
    return ref.size


@pytest.mark.parametrize("device", sorted(DEVICES))
def test_auto_split_from_recorded_tables(device):
    rng = np.random.default_rng(11 if device == "rtx4060" else 12)
    work = {"h100_pcie": 1 << 24, "rtx4060": 1 << 22}[device]   # the H100 splits from 2^22.5
    n_split = {"h100_pcie": 4, "rtx4060": 14}[device]
    rows = table_rows(device, n_split, 5, work) + \
        table_rows(device, 2, 6, work, split_only=False)
    total = 0
    for i, row in enumerate(rows):
        total += check_auto(rng, device, row, KINDS[i % len(KINDS)], SCALES[i % len(SCALES)])
    assert total > 1000


@pytest.mark.parametrize("device", sorted(DEVICES))
def test_ragged_k_accumulator(device):
    """K not a multiple of 16 (torch._scaled_mm refuses it): the fp32 accumulator
    against mmaemu.accumulate, unsplit and split."""
    rng = np.random.default_rng(3)
    for i, K in enumerate((1, 17, 100, 333, 700)):
        for fast in (True, False):
            split = None if i % 2 else SPLITS[device][i % len(SPLITS[device])]
            A = codes(rng, (20, K), "fp8_e4m3", KINDS[i])
            B = codes(rng, (K, 36), "fp8_e5m2", KINDS[i])
            got = cublas.gemm(A, B, device=device, a_fmt="fp8_e4m3", b_fmt="fp8_e5m2",
                              out_fmt="fp32", fast_accum=fast, splitk=split)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = mmaemu.accumulate(torch.from_numpy(A).view(torch.float8_e4m3fn),
                                        torch.from_numpy(np.ascontiguousarray(B.T))
                                        .view(torch.float8_e5m2),
                                        use_fast_accum=fast, profile=DEVICES[device],
                                        splitk=1 if split is None else split,
                                        backend="reference")
            ref = ref.view(torch.int32).numpy().view(np.uint32)
            assert np.array_equal(ref, got), (device, K, fast, split)


@pytest.mark.slow
@pytest.mark.parametrize("split_mode", ["S1", "explicit"])
@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("device", sorted(DEVICES))
def test_scaled_mm_parity_slow(device, fast, split_mode):
    seed = 1000 + sum(map(ord, device + split_mode)) + 7 * fast
    # 9 combinations x 12 rounds x 96 x 128 outputs: 1,327,104 per test, 10,616,832 in all
    assert sweep(seed, device, fast, split_mode, 96, 128, 12) == 1327104


@pytest.mark.slow
@pytest.mark.parametrize("device", sorted(DEVICES))
def test_auto_split_from_recorded_tables_slow(device):
    rng = np.random.default_rng(21)
    work = {"h100_pcie": 1 << 26, "rtx4060": 1 << 24}[device]
    rows = table_rows(device, 300, 7, work) + table_rows(device, 40, 8, work, split_only=False)
    for i, row in enumerate(rows):
        check_auto(rng, device, row, KINDS[i % len(KINDS)], SCALES[i % len(SCALES)])
