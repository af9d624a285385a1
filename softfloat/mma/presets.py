"""Every instruction MMA-Sim 2.1.1 models, as `MatrixUnit` presets.

`INSTRUCTIONS` maps each canonical architecture to the instruction strings it
offers (MMA-Sim's spelling; shapes and types from the PTX ISA and the AMD CDNA
ISA guides). `tensor_core` picks one by name, or the one a dense GEMM of the
given types uses (`DENSE_GEMM`).

Parameters (from MMA-Sim 2.1.1, ``mmasim/nv_ptx/sim.py`` and ``mmasim/amd/sim.py``,
and the paper arXiv:2511.10909, tables of NVIDIA and AMD results):

* NVIDIA fdpa: F (alignment fraction bits) Volta 23; Turing, Ampere, Ada 24;
  Hopper, Blackwell, RTX Blackwell 25 (B200 F = 25 also Khattak & Mikaitis,
  arXiv:2512.07004). Chunk: 8 bytes of operands (Volta), 16 (Turing, Ampere, Ada),
  32 (Hopper, Blackwell, RTX Blackwell), i.e. 4 / 8 / 16 fp16 products; never more
  than the instruction's k. Zero-term exponent e_zero: fp16 output -19 / -20 / -21,
  fp32 output -131 / -132 / -133 (same grouping). Output: nearest-even into fp16
  for an fp16 D, truncation into fp32 otherwise. Turing running Volta's m8n8k4
  shapes uses Volta's settings.
* fp8 on Ada (mma) and Hopper (wgmma): F = 13 and the chunk result truncated to
  e8m13 (fp32 D) or rounded to nearest-even fp16. Blackwell tcgen05 and RTX
  Blackwell fp8: F = 25, truncated into fp32.
* Block-scaled, k = 32 (mxf8f6f4): products times both e8m0 scales, F = 25,
  chunk 32, e_zero -133, RZ-FP32. k = 64 (mxf4, mxf4nvf4): groups of 16 products
  summed exactly, F = 35, chunk 64, e_zero -139, RZ-FP32.
* AMD CDNA1 fp16/bf16: exact fused dot products, chunk 4 (fp16) / 2 (bf16).
  CDNA2 fp16/bf16: flush-to-zero multiply-add chains, 4 products per step (fp16,
  bf16 ``_1k``), 2 (the older bf16 instructions). CDNA3 fp16/bf16: two-stage sums,
  F = 24, F2 = 31, chunk 8 (4 for xf32), nearest-even into fp32; fp8/bf8 the
  pairwise two-stage sum, chunk 16. fp32 and fp64 (every vendor): fused
  multiply-add chains.
"""
from __future__ import annotations

import functools
import re

from ..formats import (BF16, E8M0, FP4_E2M1, FP6_E2M3, FP6_E3M2, FP8_E4M3, FP8_E4M3FNUZ,
                       FP8_E5M2, FP8_E5M2FNUZ, FP16, FP32, FP64, TF32, get_format)
from .model import MatrixUnit

ARCHS = ("volta", "turing", "ampere", "ada", "hopper", "blackwell", "rtx_blackwell",
         "cdna1", "cdna2", "cdna3")

#: MMA-Sim's architecture names
MMASIM_ARCH = {"volta": "Volta", "turing": "Turing", "ampere": "Ampere",
               "ada": "Ada Lovelace", "hopper": "Hopper", "blackwell": "Blackwell",
               "rtx_blackwell": "RTX Blackwell", "cdna1": "CDNA1", "cdna2": "CDNA2",
               "cdna3": "CDNA3"}

#: GPU names accepted for each architecture (case, spaces, "-" and "_" ignored)
ARCH_ALIASES = {
    "volta": ("v100", "gv100", "titanv", "sm70"),
    "turing": ("t4", "rtx2080", "rtx2080ti", "rtx2070", "titanrtx", "quadrortx8000", "sm75"),
    "ampere": ("a100", "a800", "a10", "a30", "a40", "rtx3090", "rtx3080", "rtxa6000", "ga100",
               "sm80", "sm86"),
    "ada": ("adalovelace", "l4", "l40", "l40s", "rtx4090", "rtx4080", "rtx6000ada", "sm89"),
    "hopper": ("h100", "h800", "h200", "gh200", "h20", "sm90"),
    "blackwell": ("b200", "b100", "gb200", "sm100"),
    "rtx_blackwell": ("rtxblackwell", "rtx5090", "rtx5080", "rtxpro6000", "sm120"),
    "cdna1": ("mi100",),
    "cdna2": ("mi200", "mi210", "mi250", "mi250x"),
    "cdna3": ("mi300", "mi300x", "mi300a", "mi325x"),
}


def _norm(s: str) -> str:
    return re.sub(r"[\s_\-.]", "", str(s).lower())


_ARCH_KEYS = {}
for _a in ARCHS:
    _ARCH_KEYS[_norm(_a)] = _a
    for _al in ARCH_ALIASES[_a]:
        _ARCH_KEYS[_norm(_al)] = _a


def canonical_arch(arch) -> str:
    """The canonical architecture name of ``arch`` (an architecture or GPU name)."""
    if not isinstance(arch, str):
        raise TypeError(f"arch must be a str (one of {ARCHS} or a GPU name), got "
                        f"{type(arch).__name__}")
    key = _ARCH_KEYS.get(_norm(arch))
    if key is None:
        raise ValueError(f"unknown architecture {arch!r}; expected one of {list(ARCHS)} or a "
                         f"GPU name: " + ", ".join(f"{a}: {'/'.join(v)}"
                                                    for a, v in ARCH_ALIASES.items()))
    return key


# ---------------------------------------------------------------------------
# The instruction lists (PTX ISA: mma, wgmma, tcgen05.mma; AMD CDNA ISA: v_mfma)
# ---------------------------------------------------------------------------
_F8F6F4 = ("e5m2", "e4m3", "e3m2", "e2m3", "e2m1")
_SM70 = ["m8n8k4.f32.f16.f16.f32", "m8n8k4.f32.f16.f16.f16", "m8n8k4.f16.f16.f16.f16"]
_SM75 = ["m16n8k8.f32.f16.f16.f32", "m16n8k8.f16.f16.f16.f16"]
_SM80 = ["m8n8k4.f64.f64.f64.f64", "m16n8k8.f32.tf32.tf32.f32", "m16n8k4.f32.tf32.tf32.f32",
         "m16n8k16.f32.f16.f16.f32", "m16n8k16.f16.f16.f16.f16", "m16n8k16.f32.bf16.bf16.f32",
         "m16n8k8.f32.bf16.bf16.f32"]
_SM89 = [f"m16n8k{k}.{d}.{a}.{b}.{d}" for k in (32, 16) for d in ("f32", "f16")
         for a in ("e5m2", "e4m3") for b in ("e5m2", "e4m3")]
_SM90 = ["m16n8k16.f64.f64.f64.f64", "m16n8k8.f64.f64.f64.f64", "m16n8k4.f64.f64.f64.f64"]
_SM120 = [f"m16n8k32.kind::f8f6f4.{d}.{a}.{b}.{d}" for d in ("f32", "f16") for a in _F8F6F4
          for b in _F8F6F4]
_SM120_BS = ([f"m16n8k32.kind::mxf8f6f4.block32.f32.{a}.{b}.f32.ue8m0" for a in _F8F6F4
              for b in _F8F6F4]
             + ["m16n8k64.kind::mxf4.block32.f32.e2m1.e2m1.f32.ue8m0",
                "m16n8k64.kind::mxf4nvf4.block32.f32.e2m1.e2m1.f32.ue8m0",
                "m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue8m0",
                "m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3"])
_N256 = range(8, 257, 8)
_WGMMA = ([f"m64n{n}k8.f32.tf32.tf32" for n in _N256]
          + [f"m64n{n}k16.f32.f16.f16" for n in _N256]
          + [f"m64n{n}k16.f16.f16.f16" for n in _N256]
          + [f"m64n{n}k16.f32.bf16.bf16" for n in _N256]
          + [f"m64n{n}k32.{d}.{a}.{b}" for n in _N256 for d in ("f32", "f16")
             for a in ("e5m2", "e4m3") for b in ("e5m2", "e4m3")])
_TC_MN = [(m, n) for m in (64, 128) for n in _N256]
_TCGEN05 = ([f"m{m}n{n}k8.kind::tf32.f32.tf32.tf32" for m, n in _TC_MN]
            + [f"m{m}n{n}k16.kind::f16.f32.{t}.{t}" for m, n in _TC_MN for t in ("f16", "bf16")]
            + [f"m{m}n{n}k16.kind::f16.f16.f16.f16" for m, n in _TC_MN]
            + [f"m{m}n{n}k32.kind::f8f6f4.{d}.{a}.{b}" for m, n in _TC_MN
               for d in ("f32", "f16") for a in _F8F6F4 for b in _F8F6F4])
_TCGEN05_BS = ([f"m128n{n}k32.kind::mxf8f6f4.block32.f32.{a}.{b}.ue8m0" for n in _N256
                for a in _F8F6F4 for b in _F8F6F4]
               + [f"m128n{n}k64.kind::mxf4.block32.f32.e2m1.e2m1.ue8m0" for n in _N256]
               + [f"m128n{n}k64.kind::mxf4nvf4.block32.f32.e2m1.e2m1.ue8m0" for n in _N256]
               + [f"m128n{n}k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.{s}" for n in _N256
                  for s in ("ue8m0", "ue4m3")])
_CDNA1 = ["f32_32x32x2f32", "f32_32x32x1f32", "f32_16x16x4f32", "f32_16x16x1f32",
          "f32_4x4x1f32", "f32_32x32x8f16", "f32_32x32x4f16", "f32_16x16x16f16",
          "f32_16x16x4f16", "f32_4x4x4f16", "f32_32x32x4bf16", "f32_32x32x2bf16",
          "f32_16x16x8bf16", "f32_16x16x2bf16", "f32_4x4x2bf16"]
_CDNA2 = ["f64_16x16x4f64", "f64_4x4x4f64", "f32_32x32x8bf16_1k", "f32_32x32x4bf16_1k",
          "f32_16x16x16bf16_1k", "f32_16x16x4bf16_1k", "f32_4x4x4bf16_1k"]
_CDNA3 = (["f64_16x16x4_f64", "f64_4x4x4_4b_f64", "f32_32x32x1_2b_f32", "f32_16x16x1_4b_f32",
           "f32_4x4x1_16b_f32", "f32_32x32x2_f32", "f32_16x16x4_f32", "f32_16x16x8_xf32",
           "f32_32x32x4_xf32", "f32_32x32x4_2b_f16", "f32_16x16x4_4b_f16", "f32_4x4x4_16b_f16",
           "f32_32x32x8_f16", "f32_16x16x16_f16", "f32_32x32x4_2b_bf16", "f32_16x16x4_4b_bf16",
           "f32_4x4x4_16b_bf16", "f32_32x32x8_bf16", "f32_16x16x16_bf16"]
          + [f"f32_{s}_{a}_{b}" for s in ("16x16x32", "32x32x16") for a in ("bf8", "fp8")
             for b in ("bf8", "fp8")])

# (family, instruction list) per architecture, in lookup order
_TABLE = {
    "volta": [("mma", _SM70)],
    "turing": [("mma", _SM75 + _SM70)],
    "ampere": [("mma", _SM80 + _SM75)],
    "ada": [("mma", _SM89 + _SM80 + _SM75)],
    "hopper": [("wgmma", _WGMMA), ("mma", _SM90 + _SM80 + _SM75)],
    "blackwell": [("tcgen05", _TCGEN05), ("tcgen05_block_scale", _TCGEN05_BS),
                  ("mma", _SM80 + _SM75)],
    "rtx_blackwell": [("mma", _SM120 + _SM89 + _SM80 + _SM75),
                      ("mma_block_scale", _SM120_BS)],
    "cdna1": [("mfma", _CDNA1)],
    "cdna2": [("mfma", _CDNA2 + _CDNA1)],
    "cdna3": [("mfma", _CDNA3)],
}

#: every instruction per architecture (MMA-Sim 2.1.1's lists)
INSTRUCTIONS = {a: tuple(s for _, lst in fam for s in lst) for a, fam in _TABLE.items()}
_FAMILY = {(a, s): f for a, fam in _TABLE.items() for f, lst in fam for s in lst}

_NV_TYPES = {"f64": FP64, "f32": FP32, "tf32": TF32, "f16": FP16, "bf16": BF16,
             "e4m3": FP8_E4M3, "e5m2": FP8_E5M2, "e3m2": FP6_E3M2, "e2m3": FP6_E2M3,
             "e2m1": FP4_E2M1, "ue8m0": E8M0, "ue4m3": FP8_E4M3}
_AMD_TYPES = {"f64": FP64, "f32": FP32, "xf32": TF32, "f16": FP16, "bf16": BF16,
              "fp8": FP8_E4M3FNUZ, "bf8": FP8_E5M2FNUZ}

# MMA-Sim 2.1.1, nv_ptx/sim.py: F, chunk bytes, e_zero (fp16 D, fp32 D)
_NV_F = {"volta": 23, "turing": 24, "ampere": 24, "ada": 24, "hopper": 25, "blackwell": 25,
         "rtx_blackwell": 25}
_NV_CHUNK_BYTES = {"volta": 8, "turing": 16, "ampere": 16, "ada": 16, "hopper": 32,
                   "blackwell": 32, "rtx_blackwell": 32}
_NV_EZERO = {"volta": (-19, -131), "turing": (-20, -132), "ampere": (-20, -132),
             "ada": (-20, -132), "hopper": (-21, -133), "blackwell": (-21, -133),
             "rtx_blackwell": (-21, -133)}
_SRC_MMASIM = "MMA-Sim 2.1.1 (arXiv:2511.10909), "


def _itemsize(f) -> int:
    return {64: 8, 32: 4, 19: 4, 16: 2}.get(f.nbits, 1)


def _nv_shape(shape: str):
    m = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape)
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def _build(arch: str, ins: str) -> MatrixUnit:
    fam = _FAMILY[(arch, ins)]
    if fam == "mfma":
        return _build_amd(arch, ins)
    q = ins.split(".")
    kind = block = s_t = None
    if fam in ("mma_block_scale", "tcgen05_block_scale"):
        if fam == "mma_block_scale":
            shape, kind, block, d_t, a_t, b_t, c_t, s_t = q
        else:
            shape, kind, block, d_t, a_t, b_t, s_t = q
            c_t = d_t
    elif fam == "mma":
        if len(q) == 6:
            shape, kind, d_t, a_t, b_t, c_t = q
        else:
            shape, d_t, a_t, b_t, c_t = q
    elif fam == "tcgen05":
        shape, kind, d_t, a_t, b_t = q
        c_t = d_t
    else:  # wgmma
        shape, d_t, a_t, b_t = q
        c_t = d_t
    m, n, k = _nv_shape(shape)
    fa, fb, fc, fd = (_NV_TYPES[t] for t in (a_t, b_t, c_t, d_t))
    common = dict(arch=arch, instruction=ins, family=fam, m=m, n=n, k=k, a_fmt=fa, b_fmt=fb,
                  c_fmt=fc, out_fmt=fd)
    src = _SRC_MMASIM + f"nv_ptx/sim.py ({MMASIM_ARCH[arch]}, {fam})"
    if fa == FP64:
        return MatrixUnit(**common, algorithm="fma", chunk=1, sources=(src, "PTX ISA: DMMA "
                                                                       "is a chain of fp64 FMAs"))
    if s_t is not None:
        sb = int(block.removeprefix("block"))
        if k == 64:
            return MatrixUnit(**common, algorithm="grouped", chunk=64, frac_bits=35, e_zero=-139,
                              output_rounding="RZ-FP32", group=16, scale_fmt=_NV_TYPES[s_t],
                              scale_block=sb, sources=(src + ": MMA_GST_FDPA G=16 F=35",))
        return MatrixUnit(**common, algorithm="fdpa", chunk=32, frac_bits=25, e_zero=-133,
                          output_rounding="RZ-FP32", scale_fmt=_NV_TYPES[s_t], scale_block=sb,
                          sources=(src + ": MMA_ST_FDPA F=25",))
    fp16_out = fd == FP16
    if fam == "mma":
        F = _NV_F[arch]
        chunk = _NV_CHUNK_BYTES[arch] // _itemsize(fa)
        ez = _NV_EZERO[arch][0 if fp16_out else 1]
        rho = "RNE-FP16" if fp16_out else "RZ-FP32"
        if arch == "turing" and ins in _SM70:      # Volta's shapes keep Volta's settings
            F, chunk, ez = 23, 4, (-19 if fp16_out else -131)
        if arch == "ada" and fa in (FP8_E4M3, FP8_E5M2):
            F, rho = 13, ("RNE-FP16" if fp16_out else "RZ-E8M13")
    else:  # wgmma, tcgen05
        F, rho = 25, ("RNE-FP16" if fp16_out else "RZ-FP32")
        if fam == "wgmma" and fa in (FP8_E4M3, FP8_E5M2):
            F, rho = 13, ("RNE-FP16" if fp16_out else "RZ-E8M13")
        chunk = 32 // _itemsize(fa)
        ez = -21 if fp16_out else -133
    return MatrixUnit(**common, algorithm="fdpa", chunk=min(chunk, k), frac_bits=F, e_zero=ez,
                      output_rounding=rho, sources=(src + f": MMA_T_FDPA F={F}",))


def _build_amd(arch: str, ins: str) -> MatrixUnit:
    q = ins.split("_")
    if len(q) == 2:
        d_t, st = q
        if st.endswith("bf16"):
            a_t, shape = "bf16", st[:-4]
        else:
            a_t, shape = st[-3:], st[:-3]
        b_t = a_t
    elif len(q) == 3:
        if q[-1] == "1k":
            d_t, st, _ = q
            a_t = b_t = "bf16"
            shape = st[:-4]
        else:
            d_t, shape, a_t = q
            b_t = a_t
    elif q[-1] in ("fp8", "bf8"):
        d_t, shape, a_t, b_t = q
    else:
        d_t, shape, _, a_t = q
        b_t = a_t
    m, n, k = (int(x) for x in shape.split("x"))
    fa, fb, fd = _AMD_TYPES[a_t], _AMD_TYPES[b_t], _AMD_TYPES[d_t]
    common = dict(arch=arch, instruction=ins, family="mfma", m=m, n=n, k=k, a_fmt=fa, b_fmt=fb,
                  c_fmt=fd, out_fmt=fd)
    src = _SRC_MMASIM + f"amd/sim.py ({MMASIM_ARCH[arch]})"
    if a_t in ("f32", "f64"):
        return MatrixUnit(**common, algorithm="fma", chunk=1, sources=(src + ": MMA_FMA",))
    if a_t in ("fp8", "bf8"):
        return MatrixUnit(**common, algorithm="two_stage_pairs", chunk=min(16, k), frac_bits=24,
                          frac_bits2=31, output_rounding="RNE-FP32",
                          sources=(src + ": MMA_GTR_FDPA F=24 F2=31",))
    if arch == "cdna1":
        return MatrixUnit(**common, algorithm="exact", chunk=min(4 if a_t == "f16" else 2, k),
                          output_rounding="RNE-FP32", sources=(src + ": MMA_E_FDPA",))
    if arch == "cdna2":
        p = 2 if (a_t == "bf16" and not ins.endswith("_1k")) else 4
        return MatrixUnit(**common, algorithm="ftz_chain", chunk=p, products_per_step=p,
                          sources=(src + f": MMA_FTZ_MUL_ADD P={p}",))
    return MatrixUnit(**common, algorithm="two_stage", chunk=min(4 if a_t == "xf32" else 8, k),
                      frac_bits=24, frac_bits2=31, output_rounding="RNE-FP32",
                      sources=(src + ": MMA_TR_FDPA F=24 F2=31",))


@functools.lru_cache(maxsize=None)
def _unit(arch: str, ins: str) -> MatrixUnit:
    return _build(arch, ins)


# ---------------------------------------------------------------------------
# The instruction a dense GEMM uses (cuBLAS/CUTLASS and rocBLAS/hipBLASLt main loops)
# ---------------------------------------------------------------------------
_SCALED_INPUTS = ("mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "nvfp4")


def _dense_nv_mma(arch):
    d = {("fp16", "fp32"): "m16n8k16.f32.f16.f16.f32", ("fp16", "fp16"): "m16n8k16.f16.f16.f16.f16",
         ("bf16", "fp32"): "m16n8k16.f32.bf16.bf16.f32", ("tf32", "fp32"): "m16n8k8.f32.tf32.tf32.f32",
         ("fp64", "fp64"): "m8n8k4.f64.f64.f64.f64"}
    return d


def _dense_table():
    t = {}
    t["volta"] = {("fp16", "fp32"): "m8n8k4.f32.f16.f16.f32",
                  ("fp16", "fp16"): "m8n8k4.f16.f16.f16.f16"}
    t["turing"] = {("fp16", "fp32"): "m16n8k8.f32.f16.f16.f32",
                   ("fp16", "fp16"): "m16n8k8.f16.f16.f16.f16"}
    t["ampere"] = _dense_nv_mma("ampere")
    t["ada"] = dict(_dense_nv_mma("ada"))
    for a, n in (("fp8_e4m3", "e4m3"), ("fp8_e5m2", "e5m2")):
        t["ada"][(a, "fp32")] = f"m16n8k32.f32.{n}.{n}.f32"
        t["ada"][(a, "fp16")] = f"m16n8k32.f16.{n}.{n}.f16"
    t["hopper"] = {("fp16", "fp32"): "m64n8k16.f32.f16.f16", ("fp16", "fp16"): "m64n8k16.f16.f16.f16",
                   ("bf16", "fp32"): "m64n8k16.f32.bf16.bf16", ("tf32", "fp32"): "m64n8k8.f32.tf32.tf32",
                   ("fp64", "fp64"): "m16n8k16.f64.f64.f64.f64"}
    for a, n in (("fp8_e4m3", "e4m3"), ("fp8_e5m2", "e5m2")):
        t["hopper"][(a, "fp32")] = f"m64n8k32.f32.{n}.{n}"
        t["hopper"][(a, "fp16")] = f"m64n8k32.f16.{n}.{n}"
    t["blackwell"] = {("fp16", "fp32"): "m128n8k16.kind::f16.f32.f16.f16",
                      ("fp16", "fp16"): "m128n8k16.kind::f16.f16.f16.f16",
                      ("bf16", "fp32"): "m128n8k16.kind::f16.f32.bf16.bf16",
                      ("tf32", "fp32"): "m128n8k8.kind::tf32.f32.tf32.tf32",
                      ("fp64", "fp64"): "m8n8k4.f64.f64.f64.f64"}
    t["rtx_blackwell"] = dict(_dense_nv_mma("rtx_blackwell"))
    for fname, n in (("fp8_e4m3", "e4m3"), ("fp8_e5m2", "e5m2"), ("fp6_e2m3", "e2m3"),
                     ("fp6_e3m2", "e3m2"), ("fp4_e2m1", "e2m1")):
        for d, dn in (("fp32", "f32"), ("fp16", "f16")):
            t["blackwell"][(fname, d)] = f"m128n8k32.kind::f8f6f4.{dn}.{n}.{n}"
            t["rtx_blackwell"][(fname, d)] = f"m16n8k32.kind::f8f6f4.{dn}.{n}.{n}.{dn}"
    for s, n in (("mxfp8_e4m3", "e4m3"), ("mxfp8_e5m2", "e5m2"), ("mxfp6_e2m3", "e2m3"),
                 ("mxfp6_e3m2", "e3m2")):
        t["blackwell"][(s, "fp32")] = f"m128n8k32.kind::mxf8f6f4.block32.f32.{n}.{n}.ue8m0"
        t["rtx_blackwell"][(s, "fp32")] = f"m16n8k32.kind::mxf8f6f4.block32.f32.{n}.{n}.f32.ue8m0"
    t["blackwell"][("mxfp4", "fp32")] = "m128n8k64.kind::mxf4.block32.f32.e2m1.e2m1.ue8m0"
    t["blackwell"][("nvfp4", "fp32")] = "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3"
    t["rtx_blackwell"][("mxfp4", "fp32")] = "m16n8k64.kind::mxf4.block32.f32.e2m1.e2m1.f32.ue8m0"
    t["rtx_blackwell"][("nvfp4", "fp32")] = \
        "m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3"
    t["cdna1"] = {("fp16", "fp32"): "f32_32x32x8f16", ("bf16", "fp32"): "f32_32x32x4bf16",
                  ("fp32", "fp32"): "f32_32x32x2f32"}
    t["cdna2"] = {("fp16", "fp32"): "f32_32x32x8f16", ("bf16", "fp32"): "f32_32x32x8bf16_1k",
                  ("fp32", "fp32"): "f32_32x32x2f32", ("fp64", "fp64"): "f64_16x16x4f64"}
    t["cdna3"] = {("fp16", "fp32"): "f32_32x32x8_f16", ("bf16", "fp32"): "f32_32x32x8_bf16",
                  ("tf32", "fp32"): "f32_32x32x4_xf32", ("fp32", "fp32"): "f32_32x32x2_f32",
                  ("fp64", "fp64"): "f64_16x16x4_f64",
                  ("fp8_e4m3fnuz", "fp32"): "f32_32x32x16_fp8_fp8",
                  ("fp8_e5m2fnuz", "fp32"): "f32_32x32x16_bf8_bf8"}
    return t


#: (arch) -> {(input type, output type): instruction}: what a dense GEMM issues
DENSE_GEMM = _dense_table()


def _type_name(fmt) -> str:
    if isinstance(fmt, str) and _norm(fmt) in {_norm(s) for s in _SCALED_INPUTS}:
        return next(s for s in _SCALED_INPUTS if _norm(s) == _norm(fmt))
    if isinstance(fmt, str) and _norm(fmt) in ("fp64", "f64", "double", "float64", "binary64"):
        return "fp64"
    return get_format(fmt).name


def tensor_core(arch, in_fmt="fp16", out_fmt="fp32", *, instruction=None) -> MatrixUnit:
    """The `MatrixUnit` model of one GPU matrix instruction.

    ``arch``: "volta", "turing", "ampere", "ada", "hopper", "blackwell",
    "rtx_blackwell", "cdna1", "cdna2", "cdna3" or a GPU name (``ARCH_ALIASES``:
    "v100", "a100", "h100", "b200", "mi300x", ...; case, spaces and "-"/"_" ignored).
    ``instruction``: MMA-Sim's shape-and-type string ("m16n8k16.f32.f16.f16.f32",
    "m64n8k32.f32.e4m3.e4m3", "m64n8k32.kind::f8f6f4.f32.e4m3.e4m3",
    "f32_32x32x8_f16", ...; `INSTRUCTIONS` lists them), or None for the instruction
    a dense GEMM of ``in_fmt`` -> ``out_fmt`` issues on that architecture
    (`DENSE_GEMM`: Volta m8n8k4, Turing m16n8k8, Ampere/Ada/RTX Blackwell
    mma.sync m16n8k16 (fp8 m16n8k32), Hopper wgmma m64nNk16 (fp8 k32), Blackwell
    tcgen05.mma m128nNk16 (f8f6f4 k32), AMD v_mfma 32x32). ``in_fmt`` may also be
    a block-scaled type: "mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2",
    "mxfp4", "nvfp4" (Blackwell, RTX Blackwell). With an ``instruction``,
    ``in_fmt``/``out_fmt`` left at their defaults are ignored, and otherwise must
    agree with it. Unknown combinations: ValueError listing what is valid.
    """
    a = canonical_arch(arch)
    if instruction is not None:
        if not isinstance(instruction, str):
            raise TypeError(f"instruction must be a str, got {type(instruction).__name__}")
        ins = instruction.strip()
        if (a, ins) not in _FAMILY:
            shown = sorted({re.sub(r"n\d+k", "n{N}k", s) for s in INSTRUCTIONS[a]})
            raise ValueError(f"{a} has no instruction {instruction!r}; valid: {shown} "
                             f"(N = 8, 16, ..., 256)")
        unit = _unit(a, ins)
        if (in_fmt, out_fmt) != ("fp16", "fp32"):
            tin = _type_name(in_fmt)
            ok_in = tin in (unit.a_fmt.name,) or (tin in _SCALED_INPUTS and unit.scaled)
            if not ok_in or _type_name(out_fmt) != unit.out_fmt.name:
                raise ValueError(f"instruction {ins} takes {unit.a_fmt.name} x {unit.b_fmt.name}"
                                 f" -> {unit.out_fmt.name}, not {in_fmt} -> {out_fmt}")
        return unit
    tin = _type_name(in_fmt)
    tout = _type_name(out_fmt)
    table = DENSE_GEMM[a]
    ins = table.get((tin, tout))
    if ins is None:
        raise ValueError(f"{a} has no dense-GEMM instruction for {tin} -> {tout}; valid "
                         f"(input, output) types: {sorted(table)}; or pass instruction= "
                         f"(see softfloat.mma.INSTRUCTIONS[{a!r}])")
    return _unit(a, ins)
