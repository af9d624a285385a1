"""softfloat.probe: recover summation trees and partial-sum widths of black boxes
whose trees are known (written here independently of the probe)."""
import numpy as np
import pytest

import softfloat.probe as P


# ---------------------------------------------------------------------------
# black boxes with known trees
# ---------------------------------------------------------------------------
def tree_sum(tree, acc=np.float32):
    """A sum function evaluating ``tree`` (nested tuples of indices) with every
    addition rounded to ``acc`` (a NumPy float type)."""
    def ev(t, x):
        if isinstance(t, int):
            return acc(x[t])
        v = ev(t[0], x)
        for c in t[1:]:
            v = acc(v + ev(c, x))
        return v
    return lambda x: float(ev(tree, x.astype(np.float64)))


def fused_tree_sum(tree):
    """Nodes with more than two children add all children in one step as a
    tensor core does: each child truncated toward zero to a multiple of
    2**(E - 26) (E: the largest child's exponent), the truncated values added
    exactly (they fit in 30 bits), the sum rounded once to float32."""
    def ev(t, x):
        if isinstance(t, int):
            return np.float64(np.float32(x[t]))
        vals = np.array([ev(c, x) for c in t], dtype=np.float64)
        if len(t) > 2:
            nz = vals[vals != 0]
            if nz.size == 0:
                return np.float64(0.0)
            e = int(np.floor(np.log2(np.max(np.abs(nz)))))
            q = 2.0 ** (e - 26)
            trunc = np.trunc(vals / q) * q
            return np.float64(np.float32(np.sum(trunc)))
        return np.float64(np.float32(vals[0] + vals[1]))
    return lambda x: float(ev(tree, x.astype(np.float64)))


def sequential(n):
    t = 0
    for i in range(1, n):
        t = (t, i)
    return t


def pairwise(n):
    """softfloat.accumulate's pairwise order: adjacent pairs level by level, an odd
    last node moves up unchanged."""
    level = list(range(n))
    while len(level) > 1:
        nxt = [(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def blocked(n, b):
    blocks = []
    for s in range(0, n, b):
        blk = s
        for i in range(s + 1, min(n, s + b)):
            blk = (blk, i)
        blocks.append(blk)
    t = blocks[0]
    for blk in blocks[1:]:
        t = (t, blk)
    return t


def numpy_pairwise(lo, n):
    """NumPy's pairwise_sum (loops_utils.h): < 8 terms sequential; <= 128: 8
    accumulators over strided elements, combined ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)),
    then the remainder sequentially; larger: split at n/2 rounded down to a
    multiple of 8."""
    if n < 8:
        t = lo
        for i in range(lo + 1, lo + n):
            t = (t, i)
        return t
    if n <= 128:
        r = list(range(lo, lo + 8))
        for i in range(8, n - n % 8, 8):
            r = [(r[j], lo + i + j) for j in range(8)]
        t = (((r[0], r[1]), (r[2], r[3])), ((r[4], r[5]), (r[6], r[7])))
        for i in range(n - n % 8, n):
            t = (t, lo + i)
        return t
    n2 = n // 2
    n2 -= n2 % 8
    return (numpy_pairwise(lo, n2), numpy_pairwise(lo + n2, n - n2))


def random_tree(n, rng, fused=False):
    nodes = [int(i) for i in rng.permutation(n)]
    while len(nodes) > 1:
        k = 3 if fused and len(nodes) >= 3 and rng.random() < 0.3 else 2
        idx = sorted(rng.choice(len(nodes), k, replace=False))
        kids = tuple(nodes[i] for i in idx)
        nodes = [v for i, v in enumerate(nodes) if i not in idx] + [kids]
    return nodes[0]


def same(a, b):
    return P.canonical_tree(a) == P.canonical_tree(b)


# ---------------------------------------------------------------------------
# trees
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("n", [2, 3, 9, 33])
def test_sequential_pairwise_blocked(fmt, n):
    for tree in (sequential(n), pairwise(n), blocked(n, 4), blocked(n, 8)):
        r = P.probe_sum(tree_sum(tree), n, fmt, precision=False)
        assert same(r.tree, tree), (tree, r.tree)
        assert r.fused_nodes == 0


@pytest.mark.parametrize("n", [5, 20, 64, 129, 300])
def test_numpy_pairwise_sum(n):
    r = P.probe_sum(lambda x: np.add.reduce(x), n, "fp32", precision=False)
    assert same(r.tree, numpy_pairwise(0, n))


@pytest.mark.parametrize("seed", range(6))
def test_random_trees(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    tree = random_tree(n, rng)
    fmt = ["fp16", "bf16", "fp32"][seed % 3]
    r = P.probe_sum(tree_sum(tree), n, fmt, precision=False)
    assert same(r.tree, tree)


@pytest.mark.parametrize("seed", range(3))
def test_fused_multi_term_nodes(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(4, 25))
    tree = random_tree(n, rng, fused=True)
    r = P.probe_sum(fused_tree_sum(tree), n, "fp32", precision=False)
    assert same(r.tree, tree)
    want = sum(1 for t in _nodes(tree) if len(t) > 2)
    assert r.fused_nodes == want


def test_tensor_core_block_fma_model():
    # softfloat's own BlockFMA (V100: 4 products per block, truncating alignment):
    # blocks of 4 fused terms, each block's result the next block's first child
    import softfloat as sf
    n = 10
    acc = sf.tensor_core("v100", "fp16")

    def f(x):
        xb = sf.to_bits(x.astype(np.float64), "fp16")
        one = sf.to_bits(np.ones(n), "fp16")
        return float(sf.from_bits(sf.dot(xb, one, "fp16", acc=acc), "fp32"))
    r = P.probe_sum(f, n, "fp16", precision=False)
    assert same(r.tree, (((0, 1, 2, 3), 4, 5, 6, 7), 8, 9))
    assert r.fused_nodes == 3


def _nodes(t):
    if isinstance(t, int):
        return []
    out = [t]
    for c in t:
        out += _nodes(c)
    return out


def test_group_counting_for_narrow_results():
    # a bf16 result holds 8 bits: the probe counts units in groups of 255
    n = 300
    tree = pairwise(n)
    import ml_dtypes
    f = tree_sum(tree)
    r = P.probe_sum(lambda x: float(ml_dtypes.bfloat16(f(x))), n, "bf16", precision=False)
    assert same(r.tree, tree)


# ---------------------------------------------------------------------------
# partial-sum widths
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt,acc,bits", [
    ("fp16", np.float32, 24), ("fp16", np.float16, 11), ("fp32", np.float64, 53),
    ("fp32", np.float32, 24), ("bf16", np.float32, 24)])
def test_precision_of_partial_sums(fmt, acc, bits):
    n = 12
    r = P.probe_sum(tree_sum(pairwise(n), acc), n, fmt)
    got = set(r.precision.values())
    assert got == {bits}, r.precision
    assert len(r.precision) == n - 2           # every internal node but the root


def test_mixed_precision_is_reported_per_node():
    # sums of 4 in float32, the block sums rounded to float16 before the next addition
    n = 8

    def f(x):
        x = x.astype(np.float64)
        b = [np.float16(np.float32(np.float32(np.float32(x[i] + x[i + 1]) + x[i + 2]) + x[i + 3]))
             for i in (0, 4)]
        return float(np.float32(np.float32(b[0]) + np.float32(b[1])))
    r = P.probe_sum(f, n, "fp16")
    assert same(r.tree, ((((0, 1), 2), 3), (((4, 5), 6), 7)))
    top = {k: v for k, v in r.precision.items() if len(k) == 4}
    low = {k: v for k, v in r.precision.items() if len(k) < 4}
    assert set(top.values()) == {11} and set(low.values()) == {24}


# ---------------------------------------------------------------------------
# adapters, report, errors
# ---------------------------------------------------------------------------
def test_dot_and_matmul_adapters():
    tree = blocked(10, 3)
    f = tree_sum(tree)
    r = P.probe_dot(lambda a, b: f(a * b), 10, "fp32", precision=False)
    assert same(r.tree, tree)

    def mm(A, B):
        C = np.zeros((A.shape[0], B.shape[1]))
        for i in range(A.shape[0]):
            for j in range(B.shape[1]):
                C[i, j] = f(A[i] * B[:, j])
        return C
    r = P.probe_matmul(mm, 10, "fp16", m=2, n=3, row=1, col=2, precision=False)
    assert same(r.tree, tree)


def test_report_and_drawing():
    r = P.probe_sum(tree_sum(pairwise(6)), 6, "fp16")
    text = r.report()
    assert "6 terms of fp16" in text and "float32" in text
    for i in range(6):
        assert f"x[{i}]" in text
    assert P.draw_tree((0, (1, 2))).count("\n") == 4


def test_plot_tree(tmp_path):
    pytest.importorskip("matplotlib")
    path = P.plot_tree(numpy_pairwise(0, 20), str(tmp_path / "t.png"), title="numpy")
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_not_a_sum_raises():
    with pytest.raises(P.ProbeError):
        P.probe_sum(lambda x: float(np.max(x.astype(np.float64))), 8, "fp32")
    with pytest.raises(P.ProbeError):            # float64 accumulation of fp16: nothing absorbed
        P.probe_sum(lambda x: float(np.sum(x.astype(np.float64))), 8, "fp16")


def test_bad_arguments():
    with pytest.raises(ValueError):
        P.probe_sum(lambda x: 0.0, 0, "fp32")
    with pytest.raises(TypeError):
        P.probe_sum(3, 4, "fp32")
    with pytest.raises(ValueError):
        P.numpy_dtype("fp8_e4m3")


def test_tree_helpers():
    t = ((3, 1), (0, 2))
    assert P.canonical_tree(t) == ((0, 2), (1, 3))
    assert sorted(P.tree_leaves(t)) == [0, 1, 2, 3]
    assert P.tree_sizes(t)[(1, 3)] == 2 and P.tree_sizes(t)[(0, 1)] == 4
    assert P.binarize((0, 1, 2)) == ((0, 1), 2)


# ---------------------------------------------------------------------------
# junk arguments: refused before the first call, naming the argument
@pytest.mark.parametrize("kw, words", [
    (dict(m=1, row=5), "row"), (dict(n=2, col=2), "col"), (dict(row=-1), "row"),
    (dict(m=0), "m"), (dict(m=True), "m"), (dict(n=2.0), "n"), (dict(layout="c"), "layout"),
    (dict(precision="yes"), "precision"), (dict(group=0), "group"),
    (dict(group=2 ** 30), "group"), (dict(max_calls=-1), "max_calls"),
    (dict(max_calls=True), "max_calls"),
])
def test_probe_matmul_refuses_junk_arguments(kw, words):
    with pytest.raises((ValueError, TypeError), match=words):
        P.probe_matmul(np.matmul, 8, "fp32", **kw)


@pytest.mark.parametrize("other", [0.0, float("nan"), float("inf"), True, "1"])
def test_dot_adapter_refuses_junk_other(other):
    with pytest.raises((ValueError, TypeError), match="other"):
        P.dot_adapter(np.dot, other)


def test_adapters_refuse_what_is_not_callable():
    for make in (P.dot_adapter, P.matmul_adapter):
        with pytest.raises(TypeError, match="callable"):
            make("np.dot")
