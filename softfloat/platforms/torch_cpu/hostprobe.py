"""Where `torch_cpu_matmul` is claimed bit-exact: on the paths, and k ranges, that
this host's torch reproduces bit for bit.

Which kernel torch 2.13 takes for a half or bfloat16 product depends on the CPU
(oneDNN's half path needs avx512_fp16 or amx_fp16, its bfloat16 path runs on
avx512_bf16 or on AMX tiles, in different orders), so a claim made on one CPU
does not carry over to another. `host_probe` therefore runs torch's ``mm``,
``addmm`` and ``linear`` on this CPU for a fixed set of shapes covering every
path and k range the model distinguishes (`probe_shapes`), in every layout the
model reads, with 1 and 2 threads and torch's own thread count, and compares each
output with the model. `matmul_claimed` claims a (format, path, k range) only
where that comparison found no difference; without torch nothing is claimed.
The probe runs once per process (a few seconds), on the first claim asked."""
from __future__ import annotations

import numpy as np

from ...conversions import to_bits
from ...formats import get_format
from .matmul import ONEDNN_MAX_K, matmul_path, torch_cpu_matmul

#: the shapes (m, k, n) the probe runs; each falls in one (path, k range) on a host
CANDIDATES = ((2, 1, 2), (4, 7, 4), (16, 16, 16), (9, 129, 3), (5, 70, 6),
              (8, 300, 8), (7, 512, 9), (20, 513, 12), (32, 1024, 32),
              (8, 1025, 8), (12, 2048, 20), (6, 4096, 5))

_LAYOUTS = ("rowmajor", "a_T", "both_T", "linear", "linear_bias", "addmm", "addmm_a_T")

#: (fmt name, path, k range) -> bool, filled by `host_probe`; {} when torch is missing
_RESULTS: dict = {}


def regime(m: int, k: int, n: int, fmt) -> tuple | None:
    """(path, k range) of an (m, k) @ (k, n) product on this host, as the claim is
    kept: ``("cpublas", "any")`` for torch's own kernels (whose choice among the
    `matmul_path` orders follows the layout; all layouts are probed), the oneDNN
    paths by k range (``"k<=512"``, ``"512<k<=1024"``, ``"1024<k<=4096"``); None
    past `ONEDNN_MAX_K` on oneDNN (its chunking there is not modelled)."""
    path = matmul_path(m, k, n, fmt)
    if not path.startswith("onednn"):
        return ("cpublas", "any")
    if k > ONEDNN_MAX_K:
        return None
    return (path, "k<=512" if k <= 512 else "512<k<=1024" if k <= 1024 else "1024<k<=4096")


def probe_shapes(fmt, path: str, k_range: str) -> list:
    """The probe's shapes that fall in (``path``, ``k_range``) on this host."""
    return [s for s in CANDIDATES if regime(*s, fmt) == (path, k_range)]


def _values(rng, f, n):
    v = np.exp2(rng.uniform(-8, 4, n)) * rng.choice([-1.0, 1.0], n)
    big = rng.random(n) < 0.05
    v[big] *= 2.0 ** rng.integers(6, 11, int(big.sum()))
    return to_bits(v, f)


def _compare(torch, f, shape, rng, threads) -> bool:
    m, k, n = shape
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[f.name]

    def t(x):
        return torch.from_numpy(np.ascontiguousarray(x).view(np.int16)).view(dt)

    def bits(x):
        return x.contiguous().view(torch.int16).numpy().view(np.uint16)

    a = _values(rng, f, m * k).reshape(m, k)
    bt = _values(rng, f, n * k).reshape(n, k)
    bias = _values(rng, f, n)
    b, aT = np.ascontiguousarray(bt.T), np.ascontiguousarray(a.T)
    ta, tb, tbt, taT, tbias = t(a), t(b), t(bt), t(aT), t(bias)
    for layout in _LAYOUTS:
        want = {"rowmajor": lambda: torch_cpu_matmul(a, b, f),
                "a_T": lambda: torch_cpu_matmul(aT.T, b, f),
                "both_T": lambda: torch_cpu_matmul(aT.T, bt.T, f),
                "linear": lambda: torch_cpu_matmul(a, bt.T, f),
                "linear_bias": lambda: torch_cpu_matmul(a, bt.T, f, bias=bias),
                "addmm": lambda: torch_cpu_matmul(a, b, f, bias=bias),
                "addmm_a_T": lambda: torch_cpu_matmul(aT.T, b, f, bias=bias)}[layout]()
        for th in threads:
            torch.set_num_threads(th)
            got = {"rowmajor": lambda: ta @ tb,
                   "a_T": lambda: taT.t() @ tb,
                   "both_T": lambda: taT.t() @ tbt.t(),
                   "linear": lambda: torch.nn.functional.linear(ta, tbt),
                   "linear_bias": lambda: torch.nn.functional.linear(ta, tbt, tbias),
                   "addmm": lambda: torch.addmm(tbias, ta, tb),
                   "addmm_a_T": lambda: torch.addmm(tbias, taT.t(), tb)}[layout]()
            if not np.array_equal(bits(got), want):
                return False
    return True


def host_probe(refresh: bool = False) -> dict:
    """{(fmt, path, k range): bool}: whether torch on this CPU matched the model on
    every probe shape of that path and k range (`probe_shapes`), in every layout,
    with 1 and 2 threads and torch's thread count. Empty when torch cannot be
    imported (nothing is claimed then). Computed once per process."""
    global _RESULTS
    if _RESULTS and not refresh:
        return dict(_RESULTS)
    try:
        import torch
    except ImportError:
        return {}
    keep = torch.get_num_threads()
    threads = sorted({1, 2, keep})
    out = {}
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            for name in ("fp16", "bf16"):
                f = get_format(name)
                rng = np.random.default_rng(2013)
                for shape in CANDIDATES:
                    key = regime(*shape, f)
                    if key is None:
                        continue
                    key = (name,) + key
                    if out.get(key, True):
                        out[key] = _compare(torch, f, shape, rng, threads)
    finally:
        torch.set_num_threads(keep)
    _RESULTS = out
    return dict(out)


def matmul_claimed(m: int, k: int, n: int, fmt) -> bool:
    """Whether `torch_cpu_matmul` is claimed bit-exact for this shape on this CPU:
    m, n >= 2, the oneDNN paths only up to k = `ONEDNN_MAX_K`, and only where
    torch on this CPU matched the model on the probe shapes of the same path and k
    range (`host_probe`, run once per process: every layout, 1 and 2 threads and
    torch's thread count). A path this CPU takes differently (oneDNN's half path
    on avx512_fp16, its bfloat16 path on AMX tiles) is thereby not claimed unless
    the probe confirms it; without torch nothing is claimed."""
    if m < 2 or n < 2:
        return False
    key = regime(m, k, n, fmt)
    if key is None:
        return False
    return bool(host_probe().get((get_format(fmt).name,) + key, False))
