"""numba's one-time set-up of its compiler, done when softfloat is imported.

The first kernel call of a process, even one whose machine code comes from the
cache, makes numba load its typing and lowering registries (dozens of modules;
with SciPy installed also ``scipy.linalg``, which numba imports to find a BLAS).
That costs about 0.4 s on a quiet core (0.8 s on a loaded one), and it used to
land on whichever public function ran first (a hypothesis test with the default
200 ms deadline then failed on its first example). Done at import instead, every
first call of a public function costs only the loading of its own kernel from
the cache (tens of milliseconds; ``benchmarks/bench_coldstart.py`` measures
both). ``SOFTFLOAT_LAZY_INIT=1`` leaves the set-up to the first kernel call (for
a process that imports softfloat but may never run a kernel)."""
from __future__ import annotations

from . import config


def prepare() -> None:
    if config.lazy_init():
        return
    from numba.core.registry import cpu_target
    cpu_target.target_context.refresh()      # idempotent; what load_overload would do
