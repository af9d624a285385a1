"""Seeded data sets: the 8x8 digits bundled with scikit-learn (optional extra, no
download) and a synthetic teacher-student regression with wide inputs."""
from __future__ import annotations

import numpy as np

__all__ = ["digits", "teacher_student", "batches"]


def digits(test_fraction=0.25, seed=0):
    """scikit-learn's 8x8 digits (1797 images, 10 classes), pixels scaled to [0, 1]
    as float32; a seeded shuffle split. Returns (x_train, y_train, x_test, y_test)."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as e:            # pragma: no cover - depends on the environment
        raise ImportError("the digits data needs scikit-learn (pip install "
                          "'softfloat-lab[data]')") from e
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    idx = np.random.default_rng(seed).permutation(len(x))
    n_test = int(round(len(x) * test_fraction))
    te, tr = idx[:n_test], idx[n_test:]
    return x[tr], y[tr], x[te], y[te]


def teacher_student(n_train=256, n_test=128, d_in=1024, d_out=4, d_hidden=None, seed=0,
                    positive=True, noise=0.0, return_teacher=False):
    """A random teacher labels inputs drawn uniformly from [0, 1) (``positive``:
    same-sign sums, the hard case for a narrow accumulator) or from N(0, 1).

    The teacher is linear, ``y = x @ W`` (W ~ N(0, 1/d_in)), or with ``d_hidden``
    an MLP d_in -> d_hidden (relu) -> d_out. Returns float32 arrays
    (x_train, y_train, x_test, y_test), and the teacher's float32 weights (a
    list, for an `MLP` of the same sizes without biases) with ``return_teacher``.
    """
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    x = rng.random((n, d_in)) if positive else rng.standard_normal((n, d_in))
    x = x.astype(np.float32).astype(np.float64)
    sizes = [d_in] + ([d_hidden] if d_hidden else []) + [d_out]
    ws = [(rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)
          for a, b in zip(sizes[:-1], sizes[1:])]
    h = x
    for i, w in enumerate(ws):
        h = h @ w.astype(np.float64)
        if i < len(ws) - 1:
            h = np.maximum(h, 0)
    y = (h + noise * rng.standard_normal(h.shape)).astype(np.float32)
    x = x.astype(np.float32)
    out = (x[:n_train], y[:n_train], x[n_train:], y[n_train:])
    return out + (ws,) if return_teacher else out


def batches(n, batch_size, rng):
    """Index arrays of a seeded shuffle of range(n) in minibatches (the last may be short)."""
    idx = rng.permutation(n)
    for i in range(0, n, batch_size):
        yield idx[i:i + batch_size]
