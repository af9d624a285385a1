"""softfloat.updates.add_update (w + delta in float32 and the lost-update count,
one pass) against its slow twin: NumPy's float32 sum and the two counts."""
import numpy as np
import pytest

from softfloat.updates import add_update


def numpy_twin(w, d):
    new = w + d
    moved = d != 0
    return new, int(moved.sum()), int((moved & (new == w)).sum())


@pytest.mark.parametrize("n", [0, 1, 20000, 300001])
def test_equals_numpy(n):
    rng = np.random.default_rng(n)
    w = rng.standard_normal(n).astype(np.float32)
    d = (rng.standard_normal(n) * 10.0 ** rng.integers(-12, 0, n)).astype(np.float32)
    d[::5] = 0
    if n > 10:
        d[3] = np.nan
        w[4] = np.nan
        w[5] = np.inf
        d[6] = -0.0
        w[7], d[7] = -0.0, 0.0
    new, nz, lost = add_update(w, d)
    want, wnz, wlost = numpy_twin(w, d)
    assert new.dtype == np.float32 and new.shape == w.shape
    assert np.array_equal(new.view(np.uint32), want.view(np.uint32))
    assert (nz, lost) == (wnz, wlost)
    if n > 1000:
        assert 0 < lost < nz


def test_shapes_and_layouts():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((64, 33)).astype(np.float32)
    d = (rng.standard_normal((33, 64)) * 1e-9).astype(np.float32).T    # a transposed view
    new, nz, lost = add_update(w, d)
    want, wnz, wlost = numpy_twin(w, d)
    assert np.array_equal(new, want) and (nz, lost) == (wnz, wlost) and new.shape == (64, 33)


def test_refusals():
    w = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="float32"):
        add_update(w.astype(np.float64), w)
    with pytest.raises(TypeError, match="float32"):
        add_update(w, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="one shape"):
        add_update(w, np.ones(4, np.float32))


def test_module_examples_run():
    import doctest

    from softfloat import updates
    assert doctest.testmod(updates, raise_on_error=False).failed == 0
