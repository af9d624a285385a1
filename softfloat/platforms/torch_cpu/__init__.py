"""Bit-exact models of torch 2.13.0's CPU reductions and GEMM: ``sum``, ``mean``,
``cumsum``, ``mm``/``matmul``/``linear`` (the ``torch_cpu`` platform's registered
models; the preset itself is ``softfloat.platforms.TORCH_CPU``).

Built from torch's source (``aten/src/ATen/native/cpu/SumKernel.cpp``,
``TensorIteratorReduce.cpp``, ``ReduceOps.cpp`` ``mean_out``, ``cumsum`` in
``ReduceOpsKernel.cpp``) and checked against what `softfloat.probe` recovers
from torch itself (`validation/torch_crosscheck.py`, check ``torch_models``).

What torch does (x86-64; this build dispatches the sum kernel at AVX2 widths,
as the probe shows: 8 float lanes, 16-element half/bfloat16 vectors):

* **sum** (``cascade_sum``): the output starts at +0 in the tensor's dtype and
  receives ``out += acc`` (rounded to the dtype) for each accumulated piece;
  the pieces are float32 sums (``acc_type`` is float for half, bfloat16 and
  float) in one of these orders, picked by the layout that TensorIterator gives
  the loop (reduced dimensions first, sorted by input stride; contiguous
  dimensions coalesced):

  - ``inner``: the reduced dimension is contiguous and has at least 16 (half,
    bf16) / 8 (float) elements: vectors are loaded (half/bf16: 16 values ->
    8 float lanes, lane ``i`` = ``x[i] + x[i+8]``; float: 8 lanes), the
    vectors are summed by ``row_sum`` (4 interleaved partial sums over the
    vectors, each a 4-level cascade with 16-vector chunks), then a scalar
    ``final_acc`` takes the elements past the last full vector sequentially,
    then the 8 lanes in order;
  - ``ilp``: ``row_sum`` on scalars: 4 interleaved partial sums (elements
    ``4i + k``), each a cascade, the tail added to partial 0, then
    ``p0 + p1 + p2 + p3``;
  - ``plain``: one cascade per output (``multi_row_sum``), the order of the
    first 32 * floor(m / 32) columns of a contiguous dim-0 reduction (and of
    the first 4 * floor(m / 4) outputs of a strided one); the other columns
    take ``ilp``.

  A cascade of ``s`` terms: chunks of ``2**lp`` terms (``lp = max(4,
  ceil(log2 s) // 4)``) are summed sequentially into level 0; after each chunk,
  level ``j`` is added into level ``j + 1`` while the chunk count is a multiple
  of ``2**(lp*j)``; at the end the leftover terms go into level 0, and levels
  1, 2, 3 are added to it in turn.

  When the reduced dimensions cannot be coalesced (a strided view such as
  ``x[:, ::2]`` summed over all elements), float32 input adds each row's sum to
  the output in turn (partial sums rounded to float32 between rows), while
  half/bfloat16 input is summed as a float32 copy in logical order (the probe
  finds no rounding to the dtype there) and rounded once. With more than one
  thread and at least 32,768 elements summed into **one** output, torch splits
  the range in ``ceil(n / threads)`` pieces, each summed into its own
  dtype-typed buffer, and the buffers are summed at the end (partials rounded
  to the dtype): modelled for any thread count given to the model.
  Reductions with several outputs split the outputs among the threads along
  128-byte column blocks, which does not change any output's order.

* **mean** of half/bfloat16: ``x.to(float32)`` (strides kept when the view is
  dense, else contiguous), the float32 sum (same kernel), ``/ N`` in float32,
  then one rounding to the dtype. float32: the float32 sum, ``/ N``.
* **cumsum**: sequential, the running sum kept in the CPU accumulate type
  (float for half/bfloat16, **double** for float32), each output rounded to
  the dtype.

* **mm / matmul / addmm / linear** (half, bfloat16; m, n >= 2): the kernel
  depends on the layouts (``addmm_impl_cpu_`` reads them for a row-major
  result): both operands row-major or both transposed -> ``sum`` with 4
  interleaved partial sums (k % 4), tail into partial 0; ``b`` stored
  k-contiguous (``linear``'s ``w.T``) -> the vectorised fp32 dot (64-element
  iterations over 8 registers x 8 lanes, register and lane reduction trees,
  16-element tail vectors, scalar tail); ``a`` stored k-major -> one sequential
  chain. bfloat16 with m*n*k > 4096 goes to oneDNN (avx512_bf16 ``vdpbf16ps``:
  per pair of k the odd product, then the even one, FTZ/DAZ; k in chunks of
  512 (k <= 1024, or ``a`` transposed) or 1024, each its own chain, the chunk
  sums added in order); half with m*n*k > 4096 goes to oneDNN only on CPUs with
  avx512_fp16 or amx_fp16 (modelled with the same chunks, sequential chains).
  Products are exact in float32 for these inputs; a bias is added to the
  float32 dot product before the single rounding.

Files: ``values.py`` (the float32 steps and the store in the dtype),
``cascade.py`` (the sum kernels: the numba cascade, ``row_sum``, the ``inner`` /
``ilp`` / ``plain`` orders), ``orders.py`` (the same orders as trees,
`cascade_order`), ``layout.py`` (TensorIterator's reading of a layout),
``reductions.py`` (`torch_cpu_sum`, `torch_cpu_mean`, `torch_cpu_cumsum`),
``matmul.py`` (`torch_cpu_matmul`, `matmul_path`, `matmul_claimed`),
``hostprobe.py`` (`host_probe`: the matmul claim holds where torch on the running
CPU matches the model, path by path and k range by k range).

Importing this package registers the four models for ``platform="torch_cpu"``
with `softfloat.model_hook` (which imports it by name on first use), so
`softfloat.platform_sum` & co. route there; ``softfloat.torch_models`` exposes the
same public names.
"""
from .cascade import TORCH_CPU_WIDTHS
from .hostprobe import host_probe, matmul_claimed, probe_shapes
from .matmul import (MKLDNN_MIN_SIZE, ONEDNN_MAX_K, host_has_amx_bf16, host_has_fp16_gemm,
                     matmul_path, onednn_fp16_k_block, onednn_k_block,
                     torch_cpu_matmul)
from .orders import cascade_order
from .reductions import GRAIN_SIZE, torch_cpu_cumsum, torch_cpu_mean, torch_cpu_sum

__all__ = ["torch_cpu_sum", "torch_cpu_mean", "torch_cpu_cumsum", "torch_cpu_matmul",
           "matmul_path", "matmul_claimed", "onednn_k_block", "onednn_fp16_k_block",
           "host_has_fp16_gemm", "host_has_amx_bf16", "host_probe", "probe_shapes",
           "MKLDNN_MIN_SIZE", "ONEDNN_MAX_K",
           "cascade_order",
           "TORCH_CPU_WIDTHS", "GRAIN_SIZE"]


def _register():
    from ...model_hook import register_model
    register_model("torch_cpu", "sum", torch_cpu_sum)
    register_model("torch_cpu", "mean", torch_cpu_mean)
    register_model("torch_cpu", "cumsum", torch_cpu_cumsum)
    register_model("torch_cpu", "matmul", torch_cpu_matmul)


_register()
