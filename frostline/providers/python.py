"""Python functions as a provider: the functions a configuration names, called on the host.

`PythonProviders.load(name, modules=..., entry_points=...)` imports the modules (or the
``frostline.capabilities`` entry points of installed packages) and collects the functions marked
with `frostline.capabilities.capability`. A sync function runs on a worker thread so the broker's
event loop keeps serving other calls; an async one is awaited. Results pass the same checks as
every user-declared capability (JSON, output schema), and `Artifact` values in a result are
stored content-addressed and replaced by their reference.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from frostline.capabilities.catalog import Capability
from frostline.capabilities.costs import reported_cost
from frostline.capabilities.functions import Artifact, FunctionCapability, collect
from frostline.capabilities.provider import ArtifactSink, CallContext, ProviderResult
from frostline.errors import CatalogError, ProviderError
from frostline.providers.output import check_output
from frostline.providers.provider_log import ProviderLog, log_call

ENTRY_POINT_GROUP = "frostline.capabilities"


class PythonProviders:
    """Answers the capabilities declared by `functions`.

    Example: ``PythonProviders.load("mine", modules=["mytools"])``
    """

    def __init__(self, name: str, functions: Iterable[FunctionCapability], *,
                 log_path: str | os.PathLike[str] | None = None) -> None:
        self.name = name
        self._functions: dict[str, FunctionCapability] = {}
        for fn in functions:
            if fn.name in self._functions:
                raise CatalogError(f"provider {name}: capability {fn.name} is declared twice "
                                   f"({self._functions[fn.name].function.__qualname__} and "
                                   f"{fn.function.__qualname__})", capability=fn.name)
            self._functions[fn.name] = fn
        self.log = ProviderLog.from_env(log_path)

    @classmethod
    def load(cls, name: str, *, modules: Sequence[str] = (),
             entry_points: bool | Sequence[str] = False, search_path: Path | None = None,
             log_path: str | os.PathLike[str] | None = None) -> PythonProviders:
        """Import `modules` (looked up in `search_path` first: the configuration file's
        folder, so ``module = "mytools"`` finds the mytools.py beside it whatever the working
        directory or the launcher) and the chosen entry points. Raises ImportError or
        LookupError naming what is missing, CatalogError for a module that declares nothing."""
        found: list[FunctionCapability] = []
        for module_name in modules:
            module = _import(module_name, search_path)
            declared = collect(module)
            if not declared:
                raise CatalogError(f"module {module_name} declares no capability; mark its "
                                   "functions with @frostline.capabilities.capability(...)")
            found.extend(declared)
        if entry_points:
            found.extend(_entry_point_functions(entry_points))
        return cls(name, found, log_path=log_path)

    def entries(self) -> list[Capability]:
        return [fn.entry for fn in self._functions.values()]

    # Provider protocol ---------------------------------------------------------------------
    def capabilities(self) -> frozenset[str]:
        return frozenset(self._functions)

    def honours_idempotency_keys(self, capability: str) -> bool:
        return False

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        fn = self._functions.get(capability)
        if fn is None:
            raise ProviderError(f"{capability}: not served by provider {self.name}", status=404,
                                error_code="UnknownCapability", capability=capability)
        try:
            result = await self._call(fn, payload, ctx)
        except ProviderError as exc:
            await log_call(self.log, capability, payload, ctx, ok=False,
                           error_code=exc.fields.get("error_code"),
                           status=exc.fields.get("status"), cost_usd=reported_cost(exc.fields))
            raise
        await log_call(self.log, capability, payload, ctx, ok=True, cost_usd=fn.entry.price_usd)
        return ProviderResult(result, {"cost_usd": fn.entry.price_usd, "tokens": 0})

    async def _call(self, fn: FunctionCapability, payload: Mapping[str, Any],
                    ctx: CallContext) -> Any:
        kwargs = dict(payload)
        if fn.context_param is not None:
            kwargs[fn.context_param] = ctx
        try:
            if fn.is_async:
                value = await fn.function(**kwargs)
            else:
                value = await asyncio.to_thread(fn.function, **kwargs)
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"{fn.name}: {fn.function.__qualname__} raised "
                                f"{type(exc).__name__}: {exc}", status=500,
                                error_code="FunctionFailed", capability=fn.name) from exc
        result = store_artifacts(value, ctx.artifacts)
        check_output(fn.name, fn.entry.output_schema, result)
        return result


def _import(module_name: str, search_path: Path | None) -> Any:
    if search_path is None:
        return importlib.import_module(module_name)
    folder = str(search_path)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        return importlib.import_module(module_name)
    finally:
        if added:
            sys.path.remove(folder)


def store_artifacts(value: Any, sink: ArtifactSink) -> Any:
    """`value` with every `Artifact` in it stored and replaced by {"artifact", "mime"}."""
    if isinstance(value, Artifact):
        return {"artifact": sink.put(value.data, value.mime), "mime": value.mime}
    if isinstance(value, dict):
        return {k: store_artifacts(v, sink) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [store_artifacts(v, sink) for v in value]
    return value


def _entry_point_functions(chosen: bool | Sequence[str]) -> list[FunctionCapability]:
    points = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    if chosen is not True:
        wanted = list(chosen) if not isinstance(chosen, bool) else []
        missing = sorted(set(wanted) - {p.name for p in points})
        if missing:
            raise LookupError(f"no installed package declares the {ENTRY_POINT_GROUP} entry "
                              f"point(s) {', '.join(missing)}; installed: "
                              f"{', '.join(sorted(p.name for p in points)) or 'none'}")
        points = [p for p in points if p.name in wanted]
    found: list[FunctionCapability] = []
    for point in points:
        declared = collect(point.load())
        if not declared:
            raise CatalogError(f"entry point {point.name} ({point.value}) names nothing marked "
                               "with @frostline.capabilities.capability(...)")
        found.extend(declared)
    return found
