"""How deeply JSON data may nest when frostline keeps it.

Python's parsers and encoders handle deep nesting, but the things that read a run back do not
all: an HTTP response serializer refuses past about 255 levels, and a value that can be stored
but never shown again would turn every later read of its run into an error. So a committed
result, and an attempt's result, is refused at commit time past `MAX_JSON_DEPTH`, with an error
that says so, before anything is stored.
"""

from __future__ import annotations

from typing import Any

from frostline.errors import ResultTooDeep

MAX_JSON_DEPTH = 128


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of `value` (a scalar is 0, `[1]` is 1), counted up to `limit` + 1:
    the walk stops as soon as the limit is passed, so a hostile value costs little."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth) for child in children
                     if isinstance(child, dict | list | tuple))
    return deepest


def check_depth(value: Any, what: str, **fields: Any) -> None:
    """Raise ResultTooDeep when `value` nests deeper than MAX_JSON_DEPTH."""
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ResultTooDeep(
            f"{what} nests deeper than {MAX_JSON_DEPTH} levels of lists and objects; flatten it "
            "(or store it as an artifact and return the ref)", limit=MAX_JSON_DEPTH, **fields)
