"""The experiments' report: the table of runs, the gradient statistics and the
PNG figures (matplotlib, the [plots] extra) of `nn.experiments`."""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["table_rows", "print_table", "TABLE_HEAD", "grad_stats", "plots"]


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def table_rows(records):
    """The table's cells, as strings: one row per run. A recipe run (experiment 7)
    keeps its weights, activations and gradients in fp32 and quantizes the GEMM
    operands: its columns say which recipe, which GEMM model and how the
    gradients round, rather than the storage columns of the other runs."""
    rows = []
    for r in records:
        if r.get("recipe"):
            weights, master = r["recipe"], "-"
            acc = r.get("fp8_gemm") or "fp32"
            update = f"grad {r.get('grad_rounding') or 'nearest_even'}"
        else:
            weights = r["params_format"]
            master = "yes" if r["master_weights"] else ("-" if weights == "fp32" else "no")
            acc, update = r["accumulate"], r["rounding"]
        rows.append([str(r["experiment"]), r["name"], weights, master, r["loss_scaling"], acc,
                     update, _fmt(r["final_loss"], ".4g"), _fmt(r["final_accuracy"], ".3f"),
                     f"{r['lost_update_fraction']:.1%}", f"{r['underflow_fraction']:.1%}",
                     str(r["skipped_steps"]), f"{r['seconds']:.1f}"])
    return rows


TABLE_HEAD = ["#", "run", "weights", "master", "scaling", "accumulate", "rounding", "loss",
              "accuracy", "lost upd", "underflow", "skipped", "sec"]
_LEFT = {"run", "weights", "master", "scaling", "accumulate", "rounding"}


def print_table(records, file=None):
    """The runs as an aligned table (columns as wide as their longest cell)."""
    file = sys.stdout if file is None else file
    rows = table_rows(records)
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(TABLE_HEAD)]

    def line(cells):
        return " ".join(c.ljust(w) if h in _LEFT else c.rjust(w)
                        for c, w, h in zip(cells, widths, TABLE_HEAD)).rstrip()

    head = line(TABLE_HEAD)
    print(head, file=file)
    print("-" * len(head), file=file)
    for row in rows:
        print(line(row), file=file)


def grad_stats(weights, acts):
    """Shares of nonzero gradient values below fp16's smallest subnormal (2**-24) and
    smallest normal (2**-14), for weight and activation gradients."""
    out = {}
    for name, g in (("weight", weights), ("activation", acts)):
        a = np.abs(g[g != 0])
        out[name] = {"count": int(a.size),
                     "below_2^-24": float(np.mean(a < 2.0 ** -24)) if a.size else None,
                     "below_2^-14": float(np.mean(a < 2.0 ** -14)) if a.size else None,
                     "zero_share": float(np.mean(g == 0)) if g.size else None}
    return out


def plots(records, acc_rows, grads, outdir):
    """PNG figures: loss curves, gradient histograms (``grads``: {label: (weight,
    activation)}), loss-scale trajectories, lost updates per epoch, matmul errors."""
    import os

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(outdir, exist_ok=True)
    paths = []

    def save(fig, name):
        fig.tight_layout()
        paths.append(os.path.join(outdir, name))
        fig.savefig(paths[-1], dpi=110, bbox_inches="tight")
        plt.close(fig)

    # a 2 x 2 grid, one panel per experiment; curves that coincide stay visible:
    # each run has its own dash pattern, width and marker (drawn every few epochs)
    styles = [("-", 2.6, "o"), ("--", 2.0, "s"), (":", 2.2, "^"), ("-.", 1.6, "D"),
              ((0, (5, 1, 1, 1)), 1.4, "v"), ((0, (1, 1)), 1.2, "x")]
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    for ax, exps, title in ((axes[0, 0], (1, 2, 3), "master weights and stochastic rounding"),
                            (axes[0, 1], (4,), "loss scaling"),
                            (axes[1, 0], (5,), "accumulation (regression)"),
                            (axes[1, 1], (6,), "tensor-core accumulation")):
        runs = [r for r in records if r["experiment"] in exps and r["loss_curve"]]
        for i, r in enumerate(runs):
            ls, lw, mk = styles[i % len(styles)]
            n = len(r["loss_curve"])
            ax.plot(range(1, n + 1), [np.nan if v is None else v for v in r["loss_curve"]],
                    ls=ls, lw=lw, marker=mk, markevery=max(1, n // 8), markersize=5,
                    alpha=0.85, label=r["name"])
        ax.set_xlabel("epoch")
        ax.set_ylabel("training loss")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=11)
        ax.grid(True, which="major", alpha=0.3)
        if runs:
            ax.legend(fontsize=8, loc="upper right", framealpha=0.85)
    save(fig, "loss_curves.png")

    if grads:
        fig, axes = plt.subplots(len(grads), 1, figsize=(10, 4.6 * len(grads)), squeeze=False)
        # one line each, on alternating rows: neighbouring labels never overlap
        marks = ((-24, "fp16 min subnormal 2^-24\n"), (-14, "\nfp16 min normal 2^-14"),
                 (np.log2(65504.0), "fp16 max 65504\n"))
        for ax, (title, (gw, ga)) in zip(axes[:, 0], grads.items()):
            for g, label in ((ga, "activation gradients"), (gw, "weight gradients")):
                a = np.abs(g[g != 0])
                if a.size:
                    ax.hist(np.log2(a), bins=80, alpha=0.6, label=label)
            for x, _ in marks:
                ax.axvline(x, color="k", ls="--", lw=1)
            # the fp16 limits named above the plot, where nothing else is drawn
            top = ax.secondary_xaxis("top")
            top.set_xticks([x for x, _ in marks], labels=[lab for _, lab in marks],
                           fontsize=8)
            ax.set_xlabel("log2 |gradient|")
            ax.set_ylabel("count")
            ax.legend(fontsize=9, loc="upper left", framealpha=0.85)
            ax.set_title(title, fontsize=10, pad=28)
        save(fig, "grad_histogram.png")

    fig, axes = plt.subplots(1, 2, figsize=(14, 4))
    for r in records:
        if r.get("scale_history"):
            ax = axes[1] if r.get("loss_factor", 1.0) != 1.0 else axes[0]
            ax.step(range(len(r["scale_history"])), r["scale_history"], where="post",
                    label=r["name"])
    for ax, t in zip(axes, ("natural gradients, torch's default scaler",
                            "scaled-loss demonstration (loss x 2^-20)")):
        ax.set_yscale("log", base=2)
        ax.set_xlabel("step")
        ax.set_ylabel("loss scale")
        ax.set_title(t)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    save(fig, "loss_scale.png")

    fig, ax = plt.subplots(figsize=(10, 4.5))
    # tab10 without its grey, which the Adam baseline uses
    colours = iter([c for i, c in enumerate(plt.get_cmap("tab10").colors) if i != 7])
    for r in records:
        if r["experiment"] in (1, 2, 3) and r.get("lost_update_curve"):
            base = r["experiment"] == 1          # the fp32 baselines the text compares with
            ax.plot(range(1, len(r["lost_update_curve"]) + 1), r["lost_update_curve"],
                    "--" if base else "-", color="k" if base and "Adam" not in r["name"]
                    else "0.5" if base else next(colours, None), lw=1.2,
                    label=r["name"] + (" (fp32 weights)" if base else ""))
    ax.set_xlabel("epoch (learning rate: warm-up, then cosine to 0)")
    ax.set_ylabel("share of nonzero updates lost")
    ax.set_title("lost updates per epoch")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    save(fig, "lost_updates.png")

    if acc_rows:
        save(_accumulation_figure(plt, acc_rows), "accumulation_error.png")
    return paths


# one colour per accumulator, the same in every panel
_ACC_STYLE = {"fp32": ("fp32 sequential", "#1f77b4"), "fp32-blas": ("fp32 blas", "#2ca02c"),
              "v100": ("V100 block-FMA", "#9467bd"), "h100": ("H100 block-FMA", "#d62728"),
              "narrow": ("input format (fp16 / bf16)", "#7f7f7f")}


def _accumulation_figure(plt, acc_rows):
    """Three panels: the accumulator's own error for fp16 and for bf16 inputs (log
    scale: the narrow accumulators sit orders of magnitude above the fp32-class
    ones), and each fp32-class accumulator's error as a ratio to IEEE sequential
    fp32 (where fp32 blas, V100 and H100 differ: by factors, not orders). Solid:
    inputs in [0, 1); dotted: zero-mean. One legend, outside the axes."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))

    def series(fmt, acc, dist, key="relative_error_accumulator"):
        rows = sorted((r for r in acc_rows if r["format"] == fmt and r["inputs"] == dist
                       and r["accumulate"] == acc), key=lambda r: r["K"])
        return [r["K"] for r in rows], [r[key] for r in rows]

    handles = {}
    for ax, fmt in zip(axes[:2], ("fp16", "bf16")):
        for acc in ("fp32", "fp32-blas", "v100", "h100", fmt):
            label, colour = _ACC_STYLE["narrow" if acc == fmt else acc]
            for dist, ls in (("positive", "-"), ("zero-mean", ":")):
                k, e = series(fmt, acc, dist)
                if k:
                    (ln,) = ax.plot(k, e, ls, color=colour, marker="o", ms=3)
                    if ls == "-":
                        handles[label] = ln
        ax.set_title(f"{fmt} inputs: the accumulator's own value")
        ax.set_yscale("log")
        ax.set_ylabel("relative error vs float64")
    ax = axes[2]
    for fmt, marker in (("fp16", "o"), ("bf16", "s")):
        for acc in ("fp32-blas", "v100", "h100"):
            label, colour = _ACC_STYLE[acc]
            for dist, ls in (("positive", "-"), ("zero-mean", ":")):
                k, e = series(fmt, acc, dist)
                k0, e0 = series(fmt, "fp32", dist)
                if k and k == k0:
                    ax.plot(k, [a / b if b else np.nan for a, b in zip(e, e0)], ls,
                            color=colour, marker=marker, ms=4)
    ax.axhline(1.0, color=_ACC_STYLE["fp32"][1], lw=1)
    ax.set_yscale("log", base=2)
    ax.set_title("error / fp32 sequential error (o fp16, s bf16)")
    ax.set_ylabel("ratio")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("K (terms per dot product)")
    from matplotlib.lines import Line2D
    extra = [Line2D([], [], color="k", ls="-", label="inputs in [0, 1)"),
             Line2D([], [], color="k", ls=":", label="zero-mean inputs")]
    fig.legend([*handles.values(), *extra], [*handles, *(h.get_label() for h in extra)],
               loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
    return fig
