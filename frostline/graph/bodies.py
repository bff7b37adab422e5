"""State bodies of a phase graph, loaded from a module or a file by name.

A graph names its states; the code that runs in them (bodies, tools, the model client) lives in
the operator's own module. `frostline graph run --bodies` and a worker running a graph job both
load it here, by the same rules, so a graph job runs the same code on any host that has it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from frostline.errors import GraphBodiesInvalid


def load_bodies(spec: str) -> dict[str, Any]:
    """Import a bodies module (dotted name or .py file). It defines `build()` returning
    ``{"bodies": {...}, "tools": {...}, "model": client}``, or the attributes BODIES / TOOLS / MODEL."""
    path = Path(spec)
    module: ModuleType
    if spec.endswith(".py") or path.exists():
        if not path.is_file():
            raise GraphBodiesInvalid(f"bodies file {spec!r} does not exist")
        loader_spec = importlib.util.spec_from_file_location(f"frostline_bodies_{path.stem}", path)
        if loader_spec is None or loader_spec.loader is None:
            raise GraphBodiesInvalid(f"cannot import bodies file {spec!r}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[loader_spec.name] = module
        loader_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(spec)
        except ImportError as exc:
            raise GraphBodiesInvalid(f"cannot import bodies module {spec!r}: {exc}") from exc
    if callable(getattr(module, "build", None)):
        made = module.build()
    else:
        made = {"bodies": getattr(module, "BODIES", None), "tools": getattr(module, "TOOLS", {}),
                "model": getattr(module, "MODEL", None)}
    if not isinstance(made, Mapping) or not isinstance(made.get("bodies"), Mapping):
        raise GraphBodiesInvalid(f"{spec!r} must define build() -> {{'bodies': ...}} or a BODIES mapping "
                             "of state name -> body function")
    return dict(made)
