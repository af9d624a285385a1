"""Mixed-precision iterative refinement: LU factorisation in fp16, residuals in fp64.

    python examples/iterative_refinement.py   # writes out/examples/iterative_refinement.png (--out DIR)

`lu` and `lu_solve` are written once with plain NumPy calls. Run on float64 arrays
they are an ordinary LU with partial pivoting; run on `softfloat.array(A, "fp16")`
every operation (division, the rank-1 update, the dot products of the triangular
solves) is rounded to fp16, with the array's accumulation model for the dots.

Iterative refinement (Wilkinson; Carson & Higham 2018 for the three-precision
version): x0 from the fp16 LU; repeat r = b - A x in fp64, solve A d = r with the
fp16 LU (r scaled into fp16's range first), x = x + d in fp64. While kappa(A) * u_fp16
is well below 1 the forward error falls to fp64 level in a few steps; as it nears 1
refinement slows and then fails.
"""
from __future__ import annotations

import numpy as np

import softfloat as sf
from _common import OUT, outdir_from_argv, pyplot, save

plt = pyplot("examples/iterative_refinement.py")


def lu(A):
    """LU with partial pivoting, in place on a copy: returns (LU, perm)."""
    A = A.copy()
    n = A.shape[0]
    perm = np.arange(n)
    for k in range(n - 1):
        p = k + int(np.argmax(np.abs(A[k:, k])))
        if p != k:
            A[[k, p]] = A[[p, k]]
            perm[[k, p]] = perm[[p, k]]
        A[k + 1:, k] = A[k + 1:, k] / A[k, k]
        A[k + 1:, k + 1:] = A[k + 1:, k + 1:] - np.outer(A[k + 1:, k], A[k, k + 1:])
    return A, perm


def lu_solve(LU, perm, b):
    """Solve with the factors: forward (unit lower), then backward substitution."""
    n = len(b)
    y = b[perm]
    for i in range(1, n):
        y[i] = y[i] - np.dot(LU[i, :i], y[:i])
    for i in reversed(range(n)):
        if i < n - 1:
            y[i] = y[i] - np.dot(LU[i, i + 1:], y[i + 1:])
        y[i] = y[i] / LU[i, i]
    return y


def test_matrix(n, cond, rng):
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    V, _ = np.linalg.qr(rng.standard_normal((n, n)))
    s = np.geomspace(1.0, 1.0 / cond, n)
    return (U * s) @ V.T * 4


def refine(A, b, x_true, fmt, acc, iters=8):
    LU, perm = lu(sf.array(A, fmt, acc=acc))
    x = np.asarray(lu_solve(LU, perm, sf.array(b, fmt, acc=acc)))
    errs = [np.abs(x - x_true).max() / np.abs(x_true).max()]
    for _ in range(iters):
        r = b - A @ x                                   # fp64 residual
        scale = np.abs(r).max()
        if scale == 0:
            break
        d = np.asarray(lu_solve(LU, perm, sf.array(r / scale, fmt, acc=acc))) * scale
        x = x + d
        errs.append(np.abs(x - x_true).max() / np.abs(x_true).max())
    return errs


def main(n=40, outdir=OUT):
    rng = np.random.default_rng(0)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for cond in (1e1, 1e2, 1e3):
        A = test_matrix(n, cond, rng)
        x_true = rng.standard_normal(n)
        b = A @ x_true
        # the same lu/lu_solve on float64 arrays
        LU64, p64 = lu(A)
        e64 = np.abs(lu_solve(LU64, p64, b.copy()) - x_true).max() / np.abs(x_true).max()
        for acc, ls in (("fp16", "-"), ("fp32", "--")):
            errs = refine(A, b, x_true, "fp16", acc)
            ax.semilogy(errs, ls, marker="o", ms=3,
                        label=f"kappa = 1e{int(np.log10(cond))}, fp16 LU, {acc} dots")
            print(f"kappa=1e{int(np.log10(cond))} acc={acc}: errors "
                  + " ".join(f"{e:.1e}" for e in errs) + f"   (fp64 LU: {e64:.1e})")
    ax.axhline(2.0 ** -11, color="k", ls=":", lw=0.8, label="u (fp16)")
    ax.set_xlabel("refinement step")
    ax.set_ylabel("forward error (inf-norm, relative)")
    ax.set_title(f"Iterative refinement, n = {n}: fp16 LU, fp64 residuals")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, outdir, "iterative_refinement.png")


if __name__ == "__main__":
    main(outdir=outdir_from_argv(__doc__))
