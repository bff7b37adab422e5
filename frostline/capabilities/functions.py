"""Python functions declared as capabilities: the `capability` decorator and its schema inference.

The decorator only marks a function (the function itself is returned unchanged, so it stays
callable and testable on its own); nothing is registered globally. A provider collects marked
functions from the modules or entry points a configuration names. Everything is checked when
the decorator runs, so a bad declaration fails at import, naming the function and parameter.

A payload schema comes from the signature unless one is given: ``str``, ``int``, ``float``,
``bool``, ``None``, ``list[X]``, ``dict[str, X]``, ``Literal[...]``, ``X | None`` and ``Any``;
parameters without a default are required, and unknown keys are refused unless the function
takes ``**kwargs``. A parameter annotated ``CallContext`` receives the call's context (run id,
identity, the artifact store) instead of a payload value.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, get_args, get_origin

from frostline.capabilities.catalog import EFFECTS, Capability
from frostline.capabilities.provider import CallContext
from frostline.errors import CatalogError

F = TypeVar("F", bound=Callable[..., Any])
MARK = "__frostline_capability__"
_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"},
    bool: {"type": "boolean"}, type(None): {"type": "null"}, Any: {},
    list: {"type": "array"}, dict: {"type": "object"},
}


@dataclass(frozen=True)
class Artifact:
    """Binary output of a function capability; stored content-addressed, and the result carries
    ``{"artifact": "sha256:…", "mime": …}`` in its place.

    Example: ``return Artifact(png_bytes, "image/png")``
    """

    data: bytes
    mime: str


@dataclass(frozen=True)
class FunctionCapability:
    """A marked function and the catalog entry it declares."""

    entry: Capability
    function: Callable[..., Any] = field(compare=False)
    context_param: str | None = None  # the parameter that receives the CallContext

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.function)


def capability(name: str, *, price_usd: float = 0.0, effect: str = "side_effecting",
               input_schema: Mapping[str, Any] | None = None,
               output_schema: Mapping[str, Any] | None = None,
               description: str | None = None) -> Callable[[F], F]:
    """Declare a sync or async function as the capability `name`.

    Example::

        @capability("weather.lookup", price_usd=0.001, effect="read_only")
        async def lookup(city: str, days: int = 1) -> dict[str, Any]:
            ...
    """
    if effect not in EFFECTS:
        raise CatalogError(f"capability {name}: effect must be one of {', '.join(EFFECTS)}, "
                           f"not {effect!r}", capability=name)

    def mark(fn: F) -> F:
        if not callable(fn):
            raise CatalogError(f"@capability({name!r}) decorates a function, not {fn!r}",
                               capability=name)
        schema, context_param = _signature_schema(name, fn)
        doc = inspect.getdoc(fn) or ""
        entry = Capability(
            name, True, dict(input_schema) if input_schema is not None else schema,
            float(price_usd), description=description if description is not None
            else doc.split("\n\n")[0].strip(),
            output_schema=dict(output_schema) if output_schema is not None else None,
        ).with_effect(effect)
        setattr(fn, MARK, FunctionCapability(entry, fn, context_param))
        return fn

    return mark


def declared(obj: Any) -> FunctionCapability | None:
    """The declaration a function carries, or None when it is not marked."""
    spec = getattr(obj, MARK, None)
    return spec if isinstance(spec, FunctionCapability) else None


def collect(obj: Any) -> list[FunctionCapability]:
    """Marked functions in a module (in definition order), a marked function, or a list of
    them: what an entry point or a `module =` may name."""
    spec = declared(obj)
    if spec is not None:
        return [spec]
    if isinstance(obj, types.ModuleType):
        found = [declared(v) for v in vars(obj).values()]
        unique = {id(s.function): s for s in found if s is not None}
        return list(unique.values())
    if isinstance(obj, list | tuple):
        return [s for item in obj for s in collect(item)]
    return []


def _signature_schema(name: str, fn: Callable[..., Any]) -> tuple[dict[str, Any], str | None]:
    try:
        hints = typing.get_type_hints(fn)
    except Exception as exc:  # unresolvable forward references and the like
        raise CatalogError(f"capability {name}: cannot read the annotations of "
                           f"{fn.__qualname__}: {exc}", capability=name) from exc
    props: dict[str, Any] = {}
    required: list[str] = []
    context_param = None
    extra = False
    for param in inspect.signature(fn).parameters.values():
        hint = hints.get(param.name, Any)
        if hint is CallContext:
            context_param = param.name
            continue
        if param.kind is param.VAR_KEYWORD:
            extra = True
            continue
        if param.kind in (param.VAR_POSITIONAL, param.POSITIONAL_ONLY):
            raise CatalogError(f"capability {name}: parameter {param.name!r} of "
                               f"{fn.__qualname__} cannot be filled from a JSON payload "
                               "(use ordinary or keyword-only parameters)", capability=name)
        props[param.name] = _schema_of(name, param.name, hint)
        if param.default is param.empty:
            required.append(param.name)
    schema = {"type": "object", "properties": props, "required": required,
              "additionalProperties": extra}
    return schema, context_param


def _schema_of(name: str, param: str, hint: Any) -> dict[str, Any]:
    if hint in _SCALARS:
        return dict(_SCALARS[hint])
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal and all(isinstance(a, str | int | bool) for a in args):
        return {"enum": list(args)}
    if origin in (types.UnionType, typing.Union):
        return {"anyOf": [_schema_of(name, param, a) for a in args]}
    if origin is list and len(args) == 1:
        return {"type": "array", "items": _schema_of(name, param, args[0])}
    if origin is dict and len(args) == 2 and args[0] is str:
        return {"type": "object", "additionalProperties": _schema_of(name, param, args[1])}
    raise CatalogError(f"capability {name}: parameter {param!r} is annotated {hint!r}, which has "
                       "no JSON schema here; use str, int, float, bool, list[...], dict[str, "
                       "...], Literal[...], X | None or Any, or pass input_schema=",
                       capability=name, param=param)
