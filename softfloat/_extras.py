"""Optional dependencies: which extra of ``softfloat-lab`` installs which package,
and a check that names the extra when a feature needs one that is missing.

A plain install has numpy and numba only; the features listed in README.md
("Optional extras") import their package when first used, through `require`,
which raises `MissingExtra` (an ImportError) with the ``pip install`` line."""
from __future__ import annotations

import importlib
import importlib.util

#: import name -> (distribution, extra of softfloat-lab that installs it)
EXTRAS = {
    "ml_dtypes": ("ml_dtypes", "test"),
    "hypothesis": ("hypothesis", "test"),
    "gmpy2": ("gmpy2", "test"),
    "softfloatpy": ("softfloatpy", "test"),
    "matplotlib": ("matplotlib", "plots"),
    "sklearn": ("scikit-learn", "data"),
    "torch": ("torch", "torch"),
    "dask": ("dask", "dask"),
    "distributed": ("distributed", "dask"),
    "torchao": ("torchao", "crosscheck"),
    "gfloat": ("gfloat", "crosscheck"),
}


class MissingExtra(ImportError):
    """A feature needs an optional package that is not installed."""


def message(module: str, feature: str) -> str:
    dist, extra = EXTRAS.get(module.split(".")[0], (module, "all"))
    return f"{feature} needs {dist}, which is not installed: pip install 'softfloat-lab[{extra}]'"


def require(module: str, feature: str):
    """Import ``module`` (e.g. "ml_dtypes", "matplotlib.pyplot") or raise
    MissingExtra naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if isinstance(e, MissingExtra):
            raise
        top = module.split(".")[0]
        if getattr(e, "name", None) not in (None, top, module) and e.name.split(".")[0] != top:
            raise                      # the package is there but one of *its* imports failed
        raise MissingExtra(message(module, feature), name=top) from e


def available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it when it is absent)."""
    return importlib.util.find_spec(module.split(".")[0]) is not None
