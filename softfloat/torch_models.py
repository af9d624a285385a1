"""The torch 2.13.0 CPU models under the name ``softfloat.torch_models``: the public
names of `softfloat.platforms.torch_cpu`, where the models of torch CPU's ``sum``,
``mean``, ``cumsum`` and ``mm``/``linear`` are defined and documented (importing
either registers them for ``platform="torch_cpu"``)."""
from .platforms.torch_cpu import *  # noqa: F401,F403
from .platforms.torch_cpu import __all__  # noqa: F401
