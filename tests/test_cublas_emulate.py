"""torch._scaled_mm under sf.emulate("h100_pcie") and sf.emulate("rtx4060") against
mmaemu 0.1.0's CPU reference model of the same call (recordings of those GPUs), bit
for bit: the dispatch mode's path into softfloat.cublas end to end."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
mmaemu = pytest.importorskip("mmaemu")

import softfloat as sf  # noqa: E402

PROFILE = {"h100_pcie": "hopper", "rtx4060": "ada"}
OUT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
       "e4m3": torch.float8_e4m3fn}


@pytest.fixture(autouse=True)
def _one_torch_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def fp8(shape, seed, dtype=torch.float8_e4m3fn):
    g = np.random.default_rng(seed)
    X = g.integers(0, 256, shape, dtype=np.uint8)
    nonfinite = (X & 0x7F) == 0x7F if dtype == torch.float8_e4m3fn else (X & 0x7C) == 0x7C
    X = np.where(nonfinite, X & 0x73, X)
    X[g.random(shape) < 0.2] = 0
    return torch.from_numpy(X).view(dtype)


def bits(t):
    iv = {4: torch.int32, 2: torch.int16, 1: torch.uint8}[t.element_size()]
    return t.view(iv)


def check(device, x8, w8, out_dtype, fast, split):
    sa, sb = torch.tensor(0.37), torch.tensor(2.0 ** -9)
    with sf.emulate(device, splitk=split):
        y = torch._scaled_mm(x8, w8.t(), sa, sb, out_dtype=out_dtype, use_fast_accum=fast)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = mmaemu.scaled_mm(x8, w8.t(), sa, sb, out_dtype=out_dtype, use_fast_accum=fast,
                               profile=PROFILE[device], splitk=split or 1, backend="reference")
    assert y.dtype == ref.dtype and torch.equal(bits(y), bits(ref)), (device, fast, split)
    return y.numel()


@pytest.mark.parametrize("device", sorted(PROFILE))
def test_scaled_mm_under_emulate_equals_mmaemu(device):
    n_out = 0
    for i, (fast, out, split) in enumerate(
            [(True, "bf16", None), (False, "fp32", None),
             (True, "e4m3", (3, "contiguous" if device == "h100_pcie" else "pairwise")),
             (False, "bf16", (2, "contiguous" if device == "h100_pcie" else "serial"))]):
        x8 = fp8((48, 512), 2 * i)
        w8 = fp8((64, 512), 2 * i + 1, torch.float8_e5m2 if i % 2 else torch.float8_e4m3fn)
        n_out += check(device, x8, w8, OUT[out], fast, split)
    assert n_out == 4 * 48 * 64


@pytest.mark.parametrize("device", sorted(PROFILE))
def test_scaled_mm_under_emulate_auto_split(device):
    """splitk="auto" on shapes of mmaemu's recorded tables (one split, one not)."""
    from test_cublas_parity import TORCH_FP8, TORCH_OUT, table_rows
    work = {"h100_pcie": 1 << 24, "rtx4060": 1 << 22}[device]
    rows = table_rows(device, 1, 31, work) + table_rows(device, 1, 32, work, split_only=False)
    for i, (m, n, K, fa, fb, out, fast) in enumerate(rows):
        x8 = fp8((m, K), 40 + i, TORCH_FP8[fa])
        w8 = fp8((n, K), 50 + i, TORCH_FP8[fb])
        check(device, x8, w8, TORCH_OUT[out], fast, "auto")
