"""Order probe: recover the accumulation tree of a black-box sum, dot or matrix product.

Given a function that sums a vector (or a dot / matrix product, through
`dot_adapter` / `matmul_adapter`), `probe_sum` finds **which terms are added
together first** -- the whole summation tree -- and **how wide the partial sums
are** (rounded to float32, to the input format, or kept wider), using only
calls on crafted inputs. The idea is FPRev's (Xie et al., USENIX ATC 2025):
masks of huge and tiny values make the result count how many terms were absorbed.
The design here is our own:

**Tree.** For two positions ``i`` and ``j`` put ``+M`` at ``i``, ``-M`` at ``j``,
and a tiny unit ``u`` at every other position. Every partial sum that holds ``M``
(or ``-M``) absorbs the units added into it (``M`` is so large that
``M + c*u`` rounds to ``M`` in the accumulator); at the lowest common ancestor
of ``i`` and ``j`` the two cancel exactly to 0, and every unit outside that
subtree survives. So the result is ``(n - L(i, j)) * u`` where ``L(i, j)`` is
the number of leaves under the common ancestor. From ``L`` the tree follows:
for a node with leaf set ``S`` and its smallest leaf ``r``, the values
``L(r, j)`` for ``j`` in ``S`` are the sizes of the nested subtrees on the path
from ``r`` up to the node (the spine); the leaves first met at one spine level
form the other children of that level's node, split among themselves by the same
test. Every level is checked for consistency (a subtree of size ``s`` must have
exactly ``s`` leaves), so an accumulation that is not a tree of additions, or
an accumulator so wide that nothing is absorbed, raises `ProbeError` instead of
returning a wrong tree. Nodes with more than two children are multi-term fused
additions (all children enter one rounding), as in tensor cores.

The units are counted only while their sums are exact: the count is taken over
groups of at most ``2**p - 1`` positions (``p`` the input format's precision),
so sums rounded to a narrow format (bfloat16 results) still count exactly; one
pair then costs ``ceil((n-2) / group)`` calls.

**Precision.** At an internal node ``N`` with children ``C1``, ``C2``: ``B`` at
a leaf of ``C1``, ``B * 2**-t`` at a leaf of ``C2``, ``-B`` at a leaf of a sibling
subtree of ``N`` (the parent's other child), zeros elsewhere. The node computes
``round(B + B*2**-t)``; the parent cancels ``B`` exactly, so the result is
``B*2**-t`` if the node kept ``t`` more bits than ``B``'s leading one and 0 if it
rounded them away. The largest such ``t`` plus one is the node's precision
(24: float32; the input format's: rounded to the input format; more: kept
wider). The root has no sibling: its precision is hidden by the output rounding
and is not reported.

Use::

    import numpy as np, softfloat.probe as P
    res = P.probe_sum(lambda x: np.add.reduce(x), 64, "fp32")
    print(res.report())          # text report with an ASCII drawing of the tree
    res.tree                      # nested tuples of indices (softfloat.accumulate's format)

The function receives a NumPy array of the format's NumPy dtype (float16,
``ml_dtypes.bfloat16``, float32, float64) and must return one number (or a
0-d/1-element array). `torch_adapter` wraps a torch function.
"""
from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np

from ._extras import require
from .formats import Format, get_format

__all__ = ["ProbeError", "ProbeResult", "probe_sum", "probe_dot", "probe_matmul",
           "dot_adapter", "matmul_adapter", "torch_adapter", "numpy_dtype", "draw_tree",
           "tree_sizes", "tree_leaves", "canonical_tree", "plot_tree"]


class ProbeError(RuntimeError):
    """The function's results are not those of a tree of additions that the probe
    can read (e.g. the accumulator is too wide for the format's range)."""


def numpy_dtype(fmt):
    """The NumPy dtype that carries values of ``fmt`` (fp16, bf16, fp32, fp64)."""
    name = fmt if isinstance(fmt, str) else fmt.name
    if name in ("fp64", "float64"):
        return np.dtype(np.float64)
    f = get_format(fmt)
    if f.name == "fp16":
        return np.dtype(np.float16)
    if f.name == "fp32":
        return np.dtype(np.float32)
    if f.name == "bf16":
        ml_dtypes = require("ml_dtypes", "the order probe on bf16 (its NumPy dtype)")
        return np.dtype(ml_dtypes.bfloat16)
    raise ValueError(f"probe: no NumPy dtype carries {f.name}; use fp16, bf16, fp32 or fp64")


@dataclasses.dataclass(frozen=True)
class _Fmt:
    """What the probe needs to know of a format."""
    name: str
    dtype: np.dtype
    precision: int
    emax: int
    emin_sub: int          # exponent of the smallest subnormal
    emin: int              # exponent of the smallest normal


def _fmt(fmt) -> _Fmt:
    name = fmt if isinstance(fmt, str) else getattr(fmt, "name", str(fmt))
    if name in ("fp64", "float64"):
        return _Fmt("fp64", np.dtype(np.float64), 53, 1023, -1074, -1022)
    f = get_format(fmt)
    if not isinstance(f, Format):
        raise TypeError(f"fmt must be a format or format name, got {fmt!r}")
    return _Fmt(f.name, numpy_dtype(f), f.precision, f.emax, f.emin - f.mbits, f.emin)


# ---------------------------------------------------------------------------
# Trees: nested tuples of leaf indices
# ---------------------------------------------------------------------------
def tree_leaves(tree) -> list:
    """The leaf indices of a tree, left to right (iterative: trees of any depth)."""
    out = []
    stack = [tree]
    while stack:
        t = stack.pop()
        if isinstance(t, (int, np.integer)):
            out.append(int(t))
        else:
            stack.extend(reversed(t))
    return out


def tree_sizes(tree) -> dict:
    """``{(i, j): L}``: leaves under the lowest common ancestor of every pair."""
    out = {}

    def walk(t):
        if isinstance(t, (int, np.integer)):
            return [int(t)]
        kids = [walk(c) for c in t]
        allv = [v for k in kids for v in k]
        for a in range(len(kids)):
            for b in range(a + 1, len(kids)):
                for i in kids[a]:
                    for j in kids[b]:
                        out[(min(i, j), max(i, j))] = len(allv)
        return allv

    walk(tree)
    return out


def canonical_tree(tree):
    """The tree with the children of every node sorted by their smallest leaf and
    one-child nodes removed. Addition is commutative, so two trees with the same
    canonical form round identically when every node has at most two children
    (a node with more children is a fused multi-term addition; order inside it
    does not matter either). Iterative (a sequential sum of n terms is n deep)."""
    done = {}                       # id(node) -> (canonical form, smallest leaf)
    stack = [(tree, False)]
    while stack:
        t, ready = stack.pop()
        if isinstance(t, (int, np.integer)):
            done[id(t)] = (int(t), int(t))
            continue
        if not ready:
            stack.append((t, True))
            stack.extend((c, False) for c in t)
            continue
        kids = sorted((done[id(c)] for c in t), key=lambda cm: cm[1])
        if len(kids) == 1:
            done[id(t)] = kids[0]
        else:
            done[id(t)] = (tuple(k for k, _ in kids), kids[0][1])
    return done[id(tree)][0]


def binarize(tree):
    """A tree whose nodes each add two children: a node with children
    ``(c0, c1, c2, ...)`` becomes ``((c0, c1), c2), ...`` -- the left-to-right
    sequential reading that `softfloat.accumulate` gives explicit trees.
    Iterative (trees of any depth)."""
    done = {}
    stack = [(tree, False)]
    while stack:
        t, ready = stack.pop()
        if isinstance(t, (int, np.integer)):
            done[id(t)] = int(t)
            continue
        if not ready:
            stack.append((t, True))
            stack.extend((c, False) for c in t)
            continue
        kids = [done[id(c)] for c in t]
        acc = kids[0]
        for c in kids[1:]:
            acc = (acc, c)
        done[id(t)] = acc
    return done[id(tree)]


def draw_tree(tree, labels=None) -> str:
    """ASCII drawing of a tree (one line per node, children indented)."""
    lines = []

    def walk(t, prefix, last, top):
        conn = "" if top else ("`-- " if last else "|-- ")
        if isinstance(t, (int, np.integer)):
            lab = labels[int(t)] if labels is not None else f"x[{int(t)}]"
            lines.append(prefix + conn + lab)
            return
        n = len(tree_leaves(t))
        kind = "+" if len(t) == 2 else f"+{len(t)} (fused)"
        lines.append(prefix + conn + f"{kind}  [{n} terms]")
        ext = "" if top else ("    " if last else "|   ")
        for k, c in enumerate(t):
            walk(c, prefix + ext, k == len(t) - 1, False)

    walk(tree, "", True, True)
    return "\n".join(lines)


def plot_tree(tree, path, title=None):
    """Draw the tree (nested tuples, or the `ProbeResult` a probe returns) with
    matplotlib into ``path`` (PNG); leaves on the x axis, each internal node at
    the height of its leaf count's order of addition."""
    if isinstance(tree, ProbeResult):
        title = title if title is not None else f"{tree.n} terms of {tree.fmt}"
        tree = tree.tree
    matplotlib = require("matplotlib", "probe.plot_tree")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(max(4, len(tree_leaves(tree)) * 0.35), 4))

    def walk(t):
        if isinstance(t, (int, np.integer)):
            x, y = float(int(t)), 0.0
            ax.plot([x], [y], "o", color="C0", ms=4)
            ax.annotate(str(int(t)), (x, y), textcoords="offset points", xytext=(0, -12),
                        ha="center", fontsize=7)
            return x, y
        pts = [walk(c) for c in t]
        x = sum(p[0] for p in pts) / len(pts)
        y = max(p[1] for p in pts) + 1
        for px, py in pts:
            ax.plot([px, x], [py, y], "-", color="C1" if len(t) > 2 else "0.3", lw=1)
        return x, y

    walk(tree)
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------
# Adapters
# ---------------------------------------------------------------------------
def _count(name, v, lo=1):
    """An int argument >= lo (bools and floats refused), naming ``name``."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {v!r}")
    if v < lo:
        raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")
    return int(v)


def _callable(fn):
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")


def dot_adapter(fn, other=1.0):
    """A sum function from a dot product ``fn(a, b)``: ``x -> fn(x, other * ones)``.
    The probe's values enter as products with ``other`` (1 by default; a power of
    two keeps them exact), exact."""
    _callable(fn)
    if isinstance(other, (bool, np.bool_)) or not isinstance(other, (int, float, np.number)) \
            or not np.isfinite(other) or other == 0:
        raise ValueError(f"other must be a finite nonzero number, got {other!r}")

    def f(x):
        return fn(x, np.full(x.shape, other, dtype=x.dtype))
    return f


def matmul_adapter(fn, m=1, n=1, row=0, col=0, layout="a"):
    """A sum function from a matrix product ``fn(A, B)``: the probed vector is
    row ``row`` of ``A`` (shape (m, k)), column ``col`` of ``B`` (shape (k, n)) is
    all ones, every other entry zero, and the result is ``C[row, col]``. With
    ``layout="b"`` the vector goes into ``B``'s column and ``A``'s row is ones."""
    _callable(fn)
    m, n = _count("m", m), _count("n", n)
    row, col = _count("row", row, 0), _count("col", col, 0)
    if row >= m:
        raise ValueError(f"row {row} is outside A's {m} row(s) (m={m})")
    if col >= n:
        raise ValueError(f"col {col} is outside B's {n} column(s) (n={n})")
    if layout not in ("a", "b"):
        raise ValueError(f"layout must be 'a' or 'b', got {layout!r}")

    def f(x):
        k = x.shape[0]
        A = np.zeros((m, k), x.dtype)
        B = np.zeros((k, n), x.dtype)
        if layout == "a":
            A[row] = x
            B[:, col] = 1
        else:
            A[row] = 1
            B[:, col] = x
        return np.asarray(fn(A, B))[row, col]
    return f


_TORCH_DTYPES = {"float16": "float16", "bfloat16": "bfloat16", "float32": "float32",
                 "float64": "float64"}


def torch_adapter(fn, device="cpu"):
    """Wrap a torch function of tensors as a function of NumPy arrays: every
    array argument becomes a tensor of the same dtype (bfloat16 through its bits)
    on ``device``; the result comes back as float64."""
    torch = require("torch", "probe.torch_adapter")

    def to_t(a):
        a = np.asarray(a)
        if a.dtype.name == "bfloat16":
            t = torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).view(torch.bfloat16)
        else:
            t = torch.from_numpy(np.ascontiguousarray(a))
        return t.to(device)

    def f(*args):
        out = fn(*[to_t(a) for a in args])
        return out.detach().to("cpu", torch.float64).numpy()
    return f


def _scalar(v) -> float:
    a = np.asarray(v, dtype=np.float64)
    if a.size != 1:
        raise ProbeError(f"the function returned {a.size} values; a sum function returns one")
    return float(a.reshape(-1)[0])


# ---------------------------------------------------------------------------
# The probe
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class ProbeResult:
    """What `probe_sum` found.

    tree : nested tuples of leaf indices (children sorted by their smallest leaf)
    n : number of terms
    fmt : the input format's name
    precision : {node (as a tuple of its sorted leaves): bits kept by that addition}
        (internal nodes other than the root; None where it could not be measured)
    calls : number of calls to the function
    unit, big : the probe's tiny and huge values
    """
    tree: object
    n: int
    fmt: str
    precision: dict
    calls: int
    unit: float
    big: float
    fused_nodes: int = 0

    def summary(self) -> str:
        """One line: the accumulator's width as found."""
        ps = [p for p in self.precision.values() if p is not None]
        if not ps:
            return "partial sums: not measured (no internal node with a sibling)"
        c = Counter(ps)
        words = []
        fin = _fmt(self.fmt).precision
        for p, k in sorted(c.items()):
            words.append(f"{k} node(s) with {p} bits ({precision_name(p, fin)})")
        return "partial sums: " + "; ".join(words)

    def report(self, draw=True, max_draw=64) -> str:
        lines = [f"order probe: {self.n} terms of {self.fmt}, {self.calls} calls "
                 f"(huge {self.big:g}, unit {self.unit:g})",
                 f"tree: {self.tree}",
                 f"nodes: {self.n - 1 if not self.fused_nodes else 'with'} "
                 f"{'binary additions' if not self.fused_nodes else f'{self.fused_nodes} fused multi-term node(s)'}",
                 self.summary()]
        if draw and self.n <= max_draw:
            lines += ["", draw_tree(self.tree)]
        return "\n".join(lines)


def precision_name(p: int, p_in: int) -> str:
    """Words for a partial sum kept to ``p`` significant bits (inputs: ``p_in``)."""
    if p == 24:
        return "float32" + (", the input format" if p_in == 24 else "")
    if p == p_in:
        return "rounded to the input format"
    if p == 53:
        return "float64"
    if p > 53:
        return "wider than float64"
    if p > 24:
        return "wider than float32"
    return f"{p}-bit significand"


class _Prober:
    def __init__(self, fn, n, fmt, group=None, max_calls=None):
        self.fn = fn
        self.n = int(n)
        self.f = _fmt(fmt)
        self.calls = 0
        self.max_calls = max_calls
        self.group = group or (2 ** min(self.f.precision, 24) - 1)
        self.cache = {}
        self._calibrate()

    def call(self, x):
        self.calls += 1
        if self.max_calls is not None and self.calls > self.max_calls:
            raise ProbeError(f"more than {self.max_calls} calls")
        return _scalar(self.fn(x.astype(self.f.dtype)))

    def _calibrate(self):
        f = self.f
        n = self.n
        big = 2.0 ** f.emax
        cands = [2.0 ** f.emin_sub, 2.0 ** f.emin, 1.0]
        k = max(1, min(n - 2, self.group))
        for u in cands:
            x = np.zeros(n)
            x[:k] = u
            try:
                s = self.call(x)
            except ProbeError:
                raise
            if s != k * u:
                continue                       # units flushed or not summed exactly
            x = np.full(n, u)
            x[0], x[-1] = big, -big
            if n > 2:
                x[1:n - 1] = 0
                x[1:1 + k] = u
            s = self.call(x)
            c = s / u
            if c == int(c) and 0 <= c <= k:
                self.unit, self.big = u, big
                return
        raise ProbeError(f"could not find a huge/tiny pair for {f.name}: units are not summed "
                         f"exactly, or huge values do not absorb them (accumulator wider "
                         f"than {f.emax - f.emin_sub} bits?)")

    def lca(self, i, j) -> int:
        """Leaves under the common ancestor of i and j."""
        key = (min(i, j), max(i, j))
        if key in self.cache:
            return self.cache[key]
        n, u = self.n, self.unit
        others = [k for k in range(n) if k != i and k != j]
        lost = 0
        for s in range(0, max(1, len(others)), self.group):
            grp = others[s:s + self.group]
            x = np.zeros(n)
            x[grp] = u
            x[i], x[j] = self.big, -self.big
            r = self.call(x)
            c = r / u
            if c != int(c) or not 0 <= c <= len(grp):
                raise ProbeError(f"pair ({i}, {j}): result {r!r} is not a count of units "
                                 f"(0..{len(grp)} x {u:g})")
            lost += len(grp) - int(c)
        L = lost + 2
        self.cache[key] = L
        return L

    def build(self, leaves, size=None):
        """The subtree over ``leaves`` (a full subtree). Iterative, with an explicit
        stack: a subtree is expanded into its spine levels and their children,
        then assembled once every child is built (no recursion depth limit)."""
        results = {}
        next_id = [1]
        stack = [("expand", 0, sorted(leaves))]
        while stack:
            kind, tid, data = stack.pop()
            if kind == "assemble":
                r, plan = data
                node = r
                for ids in plan:
                    node = (node, *[results.pop(i) for i in ids])
                results[tid] = node
                continue
            lv = data
            if len(lv) == 1:
                results[tid] = lv[0]
                continue
            r = lv[0]
            Ls = {j: self.lca(r, j) for j in lv[1:]}
            top = len(lv)
            if max(Ls.values()) != top:
                raise ProbeError(f"inconsistent sizes: subtree of {top} leaves {lv[:8]}... "
                                 f"has largest common-ancestor size {max(Ls.values())}")
            have = 1
            plan, tasks = [], []
            for v in sorted(set(Ls.values())):
                new = [j for j in lv[1:] if Ls[j] == v]
                if have + len(new) != v:
                    raise ProbeError(f"inconsistent sizes: the ancestor of x[{r}] with {v} "
                                     f"leaves has {have + len(new)}")
                ids = []
                for k in self.split(new, v):
                    ids.append(next_id[0])
                    tasks.append(("expand", next_id[0], sorted(k)))
                    next_id[0] += 1
                plan.append(ids)
                have = v
            stack.append(("assemble", tid, (r, plan)))
            stack.extend(reversed(tasks))
        return results[0]

    def split(self, leaves, v):
        """Partition ``leaves`` (met at an ancestor of size v) into child subtrees."""
        rest = sorted(leaves)
        out = []
        while rest:
            a = rest[0]
            grp = [a] + [j for j in rest[1:] if self.lca(a, j) < v]
            out.append(grp)
            gs = set(grp)
            rest = [j for j in rest if j not in gs]
        return out

    def check_fused(self, node, tests=8):
        """A node with more than two children must behave as one fused addition:
        its children's values (one nonzero leaf per child, random signs and
        magnitudes, the same for every call) each truncated toward zero to a
        multiple of 2**(E - W) (E: the largest one's exponent; W >= p fixed),
        added exactly and rounded once (to nearest even or toward zero, to p, 24
        or 53 bits, then perhaps to the input format). A function whose order
        depends on the values (a sort, then a sum) gives the same masks as a fused
        node but rounds between its additions: it matches no such W and raises
        ProbeError instead of being reported as a fused node."""
        from fractions import Fraction
        f = self.f
        leaves = [tree_leaves(c)[0] for c in node]
        rng = np.random.default_rng(len(leaves) * 1000003 + leaves[0])
        # exponents spread over about p binades: sums of such terms round
        lo = max(f.emin, -(f.precision // 2))
        hi = min(f.emax - 4, f.precision // 2)
        cases = []
        for _ in range(tests):
            e = rng.integers(lo, hi + 1, len(leaves))
            m = rng.integers(0, 1 << (f.precision - 1), len(leaves))
            sgn = rng.choice([-1.0, 1.0], len(leaves))
            v = sgn * (1.0 + m / 2.0 ** (f.precision - 1)) * 2.0 ** e.astype(float)
            x = np.zeros(self.n)
            x[leaves] = v
            y = self.call(x)
            cases.append(([Fraction(float(t)) for t in v], Fraction(y)))

        def rnd(q, p, mode):
            if q == 0:
                return q
            a = abs(q)
            k = a.numerator.bit_length() - a.denominator.bit_length()
            k = k if Fraction(2) ** k <= a else k - 1
            step = Fraction(2) ** (k - p + 1)
            n_, r_ = divmod(a / step, 1)
            n_ = int(n_)
            if mode == "rne" and (r_ > Fraction(1, 2) or (r_ == Fraction(1, 2) and n_ % 2)):
                n_ += 1
            return (n_ * step) if q > 0 else -(n_ * step)

        def fused_value(vals, W, p, mode):
            nz = [abs(t) for t in vals if t != 0]
            if not nz:
                return Fraction(0)
            big = max(nz)
            E = big.numerator.bit_length() - big.denominator.bit_length()
            E = E if Fraction(2) ** E <= big else E - 1
            q = Fraction(2) ** (E - W)
            tot = sum((int(t / q) * q) for t in vals)        # int() truncates toward 0
            r = rnd(tot, p, mode)
            return r

        for W in range(f.precision, 64):
            for p in sorted({f.precision, 24, 53}):
                for mode in ("rne", "rz"):
                    ok = True
                    for vals, y in cases:
                        r = fused_value(vals, W, p, mode)
                        if r != y and rnd(r, f.precision, "rne") != y:
                            ok = False
                            break
                    if ok:
                        return
        raise ProbeError(f"a node of {len(node)} children (leaves {leaves[:8]}) looks fused "
                         f"in the masks but does not add its terms in one rounding: the order "
                         f"of the additions depends on the values (a sort before the sum?), "
                         f"which no tree of additions describes")

    def node_precision(self, c1, c2, sib, max_t=None):
        """Bits kept by the addition of subtrees c1 and c2 (leaf lists), with a
        leaf ``sib`` outside their node but inside its parent."""
        f = self.f
        B = 2.0 ** (f.emax - 1)
        a, b = c1[0], c2[0]
        hi = min(f.emax - 1 - f.emin_sub, 300) if max_t is None else max_t

        def kept(t):
            x = np.zeros(self.n)
            x[a], x[b], x[sib] = B, B * 2.0 ** -t, -B
            r = self.call(x)
            return r == B * 2.0 ** -t

        if not kept(1):
            return None
        lo = 1                       # kept(lo) is True
        if kept(hi):
            return hi + 1            # at least; the format's range ends here
        while hi - lo > 1:           # kept is monotone in t: find the last kept t
            mid = (lo + hi) // 2
            if kept(mid):
                lo = mid
            else:
                hi = mid
        return lo + 1


#: the most terms `probe_sum` takes (its calls each build an input of n values and
#: it makes O(n) of them at least)
MAX_TERMS = 1 << 20


def probe_sum(fn, n, fmt="fp32", *, precision=True, group=None, max_calls=None) -> ProbeResult:
    """Recover the accumulation tree of ``fn`` summing ``n`` values of ``fmt``.

    Parameters
    ----------
    fn : callable
        ``fn(x) -> number`` for a 1-D NumPy array ``x`` of ``numpy_dtype(fmt)``.
    n : int
        Number of terms (>= 1).
    fmt : str or Format
        ``"fp16"``, ``"bf16"``, ``"fp32"`` or ``"fp64"``.
    precision : bool
        Also measure how many bits each internal addition keeps.
    group : int, optional
        Units counted per call (default ``2**p - 1``, exact in the input format).
    max_calls : int, optional
        Stop with `ProbeError` past this many calls.
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or not 1 <= n <= MAX_TERMS:
        raise ValueError(f"n must be an int in [1, {MAX_TERMS}] (each call builds an "
                         f"n-element input), got {n!r}")
    _callable(fn)
    if not isinstance(precision, (bool, np.bool_)):
        raise TypeError(f"precision must be True or False, got {precision!r}")
    f = _fmt(fmt)
    if group is not None:
        top = 2 ** min(f.precision, 24) - 1
        if _count("group", group) > top:
            raise ValueError(f"group must be at most {top} (counts exact in {f.name}), "
                             f"got {group!r}")
    if max_calls is not None:
        _count("max_calls", max_calls)
    if n == 1:
        return ProbeResult(0, 1, _fmt(fmt).name, {}, 0, 0.0, 0.0)
    P = _Prober(fn, n, fmt, group, max_calls)
    tree = canonical_tree(P.build(list(range(n))))
    got = set(tree_leaves(tree))
    if got != set(range(n)):
        raise ProbeError("the recovered tree does not hold every term once")
    fused = 0
    prec = {}
    stack = [(tree, None)]                  # iterative: trees of any depth
    while stack:
        t, parent = stack.pop()
        if isinstance(t, int):
            continue
        if len(t) > 2:
            fused += 1
            P.check_fused(t)
        if parent is not None and precision:
            sib = [v for c in parent if c is not t for v in tree_leaves(c)]
            p = P.node_precision(tree_leaves(t[0]), tree_leaves(t[1]), sib[0]) if sib else None
            prec[tuple(sorted(tree_leaves(t)))] = p
        stack.extend((c, t) for c in reversed(t))
    return ProbeResult(tree, n, P.f.name, prec, P.calls, P.unit, P.big, fused)


def probe_dot(fn, n, fmt="fp32", **kw) -> ProbeResult:
    """`probe_sum` of a dot product ``fn(a, b)`` (``b`` all ones)."""
    return probe_sum(dot_adapter(fn), n, fmt, **kw)


def probe_matmul(fn, k, fmt="fp32", *, m=1, n=1, row=0, col=0, layout="a", **kw) -> ProbeResult:
    """`probe_sum` of the k-reduction of ``C[row, col]`` in ``fn(A, B)`` with
    ``A`` (m, k) and ``B`` (k, n) (see `matmul_adapter`)."""
    return probe_sum(matmul_adapter(fn, m, n, row, col, layout), k, fmt, **kw)
