"""frostline: model-written workflows whose committed work is frozen.

The Python API (`frostline.api`, imported on first use so that `import frostline` stays
light for the command line)::

    import frostline
    with frostline.open(store="sqlite:///runs.db", config="frostline.toml") as fl:
        attempt = fl.run(source, run_id="r1", args={"brief": "a trail shoe"})

`open_async` gives the same methods as coroutines. Errors are the `frostline.errors` tree.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

__all__ = ["AsyncFrostline", "Authored", "Client", "Frostline", "__version__", "open",
           "open_async"]

_API = {"AsyncFrostline", "Authored", "Frostline", "open", "open_async"}


def __getattr__(name: str) -> Any:
    if name in _API:
        # By name, not an import statement: the facade sits on top of every layer, and the
        # modules below that read `frostline.__version__` must not depend on it.
        return getattr(importlib.import_module("frostline.api"), name)
    if name == "Client":
        return importlib.import_module("frostline.client").Client
    raise AttributeError(f"module 'frostline' has no attribute {name!r}")
