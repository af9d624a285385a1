"""Chunked runs under a shared time budget, by the import path that
validation/torch_crosscheck.py and validation/README.md use: `Budget` (seconds
shared among several runs, each thinned to an evenly strided subset of its
chunks when it would overrun its share) and `chunk_ranges` (an index range cut
into resumable chunks), both defined in `softfloat.sweep.budget`.
"""
from __future__ import annotations

from .sweep.budget import Budget, chunk_ranges

__all__ = ["Budget", "chunk_ranges"]
