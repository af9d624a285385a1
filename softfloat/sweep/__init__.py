"""The sweep engine: check an operation over every operand pattern (or a
sub-space, or a seeded random subset) against an oracle computed another way
(`softfloat.sweep_oracles`), comparing result bits, flags and the NaN bit
pattern the NaN policy promises.

The operand space of one sweep is a range of case indices ``0 .. total-1``, the
mixed-radix numbering of a product of operand sets (row-major, the last operand
fastest):

* binary ops (``add``, ``sub``, ``mul``, ``div``) of an n-bit format: every
  pair (2**32 for fp16 and bf16): case ``i`` is ``a = i >> n``, ``b = i & (2**n - 1)``;
* ``fma``: every triple (2**48 for fp16 and bf16), or a sub-space: a set of
  values per operand (``a=``, ``b=``, ``c=``: ranges, lists), or the
  structured ``c_family="cancel"``: for every (a, b) the 16 addends
  ``-RN(a*b) + d`` (d = -5..5 units in the last place, where the sum cancels),
  ``RN(a*b)``, both zeros and both largest finite values; or the smaller
  ``c_family="cancel4"``: for every (a, b) four addends, ``-RN(a*b)`` and its
  two neighbours (-1, +1 unit in the last place) plus one extreme value chosen
  by ``(a ^ b) & 3`` (+0, -0, +max, -max), so every pair meets each kind of
  hard addend and the whole 2**32 pairs make 2**34 triples;
* unary ops (``sqrt``) and conversions (``convert:<dst>``): every encoding
  (formats of at most 19 bits: tf32's 2**19 included);
* ``from_float32`` into a format: every float32 bit pattern (2**32), rounded
  by `softfloat.to_bits`.

Shard ``k`` of ``S`` is the index range ``[total*k//S, total*(k+1)//S)``: a pure
function of (k, S), so shards can run anywhere (local processes, a Dask
cluster), in any order, and merge. With ``sample=K`` each shard checks
``ceil(K/S)`` indices drawn from its range by a generator seeded with
``(seed, k)``.

Python::

    from softfloat.sweep import run_sweep
    report = run_sweep("add", "fp16", "nearest_even", out="my-sweeps", jobs=2)

Command line (without ``--out``, a new directory ``./sweep-<format>-<op>-<UTC
time>/`` per run; the committed ``sweeps/`` is written only with ``--out sweeps``)::

    python -m softfloat sweep fp16 add --rounding all --jobs 2 --out my-sweeps --resume
    python -m softfloat sweep bf16 convert:fp8_e4m3 --rounding nearest_even,toward_zero
    python -m softfloat sweep fp16 mul --sample 1000000 --mpfr 2000
    python -m softfloat sweep fp16 fma --c 0x3c00 --rounding all      # c fixed: 2**32 cases
    python -m softfloat sweep fp16 fma --c-family cancel --backend dask --scheduler tcp://host:8786
    python -m softfloat sweep table --out sweeps          # the whole table, then RESULTS.md
    python -m softfloat sweep --summarize sweeps          # writes sweeps/RESULTS.md

Results: one JSON file per shard under ``OUT/<name>.shards/`` naming its id,
its parameters and a SHA-256 checksum of its content (``--resume`` reuses the
shards whose file verifies and recomputes the others) and the merged report,
one line of ``OUT/reports.jsonl`` (one JSON object per run, sorted by run name;
a rerun replaces its own line only): op, format, mode, oracle, cases checked, mismatches (split
into result-bits mismatches and flag-only mismatches), the first mismatches
(operands, expected, got, flags) and seconds.

Exit statuses of the command: 0 no mismatch, 1 mismatches found, 2 could not
run (bad arguments, unwritable output, a missing optional extra, a Dask scheduler
that does not answer: one line on stderr), 130 after Ctrl-C.

The package, by job: `spaces` (the operand space, its shards and samples),
`engine` (checking shards against the oracle, merging them, `run_sweep`),
`files` (shard files, report files, resuming), `backends` (worker processes,
Dask, `run_parallel`, the progress line), `shards` (the shard engine that
sweeps and `softfloat.verify` share: argument checks, `run_shards`), `table` (the results table and ``RESULTS.md``),
`budget` (chunked runs under a shared time budget) and `cli` (the command
line). The names below are its public interface.
"""
from __future__ import annotations

from .backends import Progress, builtin_names, probe_scheduler, run_parallel
from .budget import BudgetResult, chunk_starts, run_within_budget
from .cli import default_out, main
from .engine import dask_shard, merge_shards, run_shard, run_sweep
from .files import (REPORT_KEYS, REPORTS, SHARD_FORMAT, ShardFileError, check_writable,
                    load_reports, report_name, seal, shard_path, split_resumed, store_report,
                    verify_shard_file, write_json)
from .shards import check_run_args, run_shards, sealed_call
from .spaces import (BLOCK, FAMILIES, FAMILY_SIZE, MAX_UNARY_BITS, OPS, SHARD_CASES, Space,
                     check_sizes, default_shards, parse_values, require, shard_cases,
                     shard_range, total_cases)
from .table import (TABLE_FORMATS8, TABLE_FORMATS16, run_table, summarize, table_runs,
                    write_results)

__all__ = ["run_sweep", "run_shard", "shard_cases", "shard_range", "total_cases",
           "load_reports", "store_report", "report_name", "REPORTS", "check_sizes",
           "probe_scheduler", "require", "default_out",
           "merge_shards", "default_shards", "summarize", "main", "OPS", "Space",
           "chunk_starts", "run_within_budget", "BudgetResult", "verify_shard_file",
           "ShardFileError", "table_runs", "run_table", "parse_values", "run_parallel",
           "dask_shard", "check_writable", "write_results", "REPORT_KEYS", "SHARD_FORMAT",
           "SHARD_CASES", "BLOCK", "FAMILIES", "FAMILY_SIZE", "MAX_UNARY_BITS",
           "TABLE_FORMATS16", "TABLE_FORMATS8", "Progress", "builtin_names", "seal",
           "shard_path", "split_resumed", "write_json", "check_run_args", "run_shards",
           "sealed_call"]
