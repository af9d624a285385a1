import os

from hypothesis import settings

# Keep the default suite inside CI's budget (2 cores): modest example counts,
# no deadline (the first call of a kernel may compile).
settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile("thorough", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


import pytest


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pyproject's addopts): one worker per core, at most 4. Every
    worker is a Python process with numpy, numba and the kernels it loads from
    the numba cache (the README's warmup fills it), so more workers cost memory
    and start-up for little gain; a single core runs one worker."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1)))


@pytest.fixture(scope="module", params=[True, False], ids=["fast_paths", "general_only"])
def fast_paths_both(request):
    """Run a module's tests twice: with the fast paths (the default) and with
    every fast path off (softfloat.Context.fast_paths = False), so that a fast
    kernel can never drift from the general one unseen. Modules opt in with
    ``pytestmark = pytest.mark.usefixtures("fast_paths_both")``."""
    import softfloat as sf
    old = sf.getcontext()
    ctx = old.copy()
    ctx.fast_paths = request.param
    sf.setcontext(ctx)
    yield request.param
    sf.setcontext(old)


@pytest.fixture
def fast_paths_on():
    """Fast paths on for the test, whatever the default context says (a run with
    SOFTFLOAT_FAST_PATHS=0 turns them off): for the tests that check the fast
    paths themselves. Modules opt in with ``pytestmark =
    pytest.mark.usefixtures("fast_paths_on")``."""
    import softfloat as sf
    with sf.localcontext(fast_paths=True):
        yield
