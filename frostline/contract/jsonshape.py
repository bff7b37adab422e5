"""What JSON data frostline keeps: the one check every stored value passes, on either store.

A value is stored only if every store can hold it and every reader can show it again, so the
store you choose never changes what a script may return or a client may send:

- it is JSON (no NaN or infinities, no bytes, no objects);
- no string or key holds a NUL character (U+0000): PostgreSQL's text and jsonb cannot keep it
  ("\\u0000 cannot be converted to text"), so SQLite refuses it too;
- no string or key holds a lone surrogate (U+D800-U+DFFF): it is not Unicode text, and neither
  database driver can encode it;
- it nests at most `MAX_JSON_DEPTH` levels: Python's parsers and encoders handle deep nesting,
  but the things that read a run back do not all (an HTTP response serializer refuses past
  about 255 levels), and a value that can be stored but never shown again would turn every
  later read of its run into an error.

`storable_json` is that check, and the store's JSON encoder (`frostline.store.jsontext`) is
built on it, so nothing reaches either database without it. The surfaces call the same check
earlier (`check_storable`), where a refusal can still be a clear answer: args before a run is
created, a payload before a call is dispatched, a result before it is committed.

The common case costs one C-level encode and two scans of its text; the value is walked only
when the text hints at a problem (an escaped NUL, a surrogate, many brackets).
"""

from __future__ import annotations

import json
import re
from typing import Any

from frostline.errors import ResultTooDeep, ValueNotStorable

MAX_JSON_DEPTH = 128

# One encoder for every stored value: json.dumps with options builds a new encoder per call.
# With ensure_ascii=False a lone surrogate stays a raw code point in the text (so a scan of the
# text finds it exactly), and a NUL becomes the escape \u0000.
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
_SURROGATE = re.compile("[\ud800-\udfff]")
_NUL_ESCAPE = "\\u0000"
_CONTAINERS = (dict, list, tuple)


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of `value` (a scalar is 0, `[1]` is 1), counted up to `limit` + 1:
    the walk stops as soon as the limit is passed, so a hostile value costs little. Level by
    level: each container is visited once, with the per-item work in C (list.extend and a
    comprehension), several times faster than a stack of (item, depth) pairs."""
    level = [value] if isinstance(value, _CONTAINERS) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return depth
        children: list[Any] = []
        for item in level:
            children.extend(item.values() if isinstance(item, dict) else item)
        level = [child for child in children if isinstance(child, _CONTAINERS)]
    return depth


def text_problem(text: str) -> str | None:
    """Why no store can hold the string `text` ("nul" or "surrogate"), or None."""
    if "\x00" in text:
        return "nul"
    if not text.isascii() and _SURROGATE.search(text) is not None:
        return "surrogate"
    return None


_WHY = {
    "nul": "contains a NUL character (U+0000), which PostgreSQL cannot keep in text; remove "
           "it, or carry binary data as base64 or an artifact",
    "surrogate": "contains a lone surrogate (U+D800-U+DFFF), which is not Unicode text; "
                 "pair it or remove it",
}


def storable_json(value: Any, what: str, *,
                  too_deep: type[ValueNotStorable] = ValueNotStorable, **fields: Any) -> str:
    """The compact JSON text a store keeps for `value`, or ValueNotStorable naming `what`,
    the problem (`reason`) and where it is (`at`, a path like ``$["s"][2]``). A value too
    deep raises `too_deep` (ResultTooDeep for results)."""
    try:
        text = _encode(value)
    except RecursionError:  # deeper than the interpreter's stack: far past the limit
        raise _too_deep(too_deep, what, fields) from None
    except (TypeError, ValueError) as exc:
        raise ValueNotStorable(
            f"{what} cannot be stored: it is not JSON ({exc}); store binary data with "
            "put_artifact and keep its ref in the result", field=what, reason="not_json",
            **fields) from exc
    if (text.count("[") + text.count("{") > MAX_JSON_DEPTH
            and json_depth(value) > MAX_JSON_DEPTH):
        raise _too_deep(too_deep, what, fields)
    if _NUL_ESCAPE in text or (not text.isascii() and _SURROGATE.search(text) is not None):
        found = _bad_string(value)
        if found is not None:  # (a backslash before "u0000" in a string is no NUL)
            reason, at = found
            raise ValueNotStorable(f"{what} cannot be stored: {at} {_WHY[reason]}; nothing "
                                   "was stored", field=what, reason=reason, at=at, **fields)
    return text


def check_storable(value: Any, what: str, *,
                   too_deep: type[ValueNotStorable] = ValueNotStorable, **fields: Any) -> None:
    """Raise ValueNotStorable when no store can hold `value` (see `storable_json`)."""
    storable_json(value, what, too_deep=too_deep, **fields)


def storable_refusal(value: Any, what: str, *,
                     too_deep: type[ValueNotStorable] = ValueNotStorable,
                     **fields: Any) -> ValueNotStorable | None:
    """`check_storable`'s refusal of `value`, returned rather than raised (None: storable)."""
    try:
        storable_json(value, what, too_deep=too_deep, **fields)
    except ValueNotStorable as exc:
        return exc
    return None


def check_depth(value: Any, what: str, **fields: Any) -> None:
    """Raise ResultTooDeep when `value` nests deeper than MAX_JSON_DEPTH."""
    if json_depth(value) > MAX_JSON_DEPTH:
        raise _too_deep(ResultTooDeep, what, fields)


def storable_copy(value: Any) -> Any:
    """`value` with every NUL and lone surrogate in its strings and keys replaced by U+FFFD,
    and anything nested past MAX_JSON_DEPTH replaced by a marker: for diagnostics that must be
    recorded whatever they quote (an error message, a log), never for data. A value that is
    storable already is returned as it is (the common case: one encode)."""
    try:
        storable_json(value, "a diagnostic")
    except ValueNotStorable as exc:
        if exc.reason == "not_json":
            return value  # not ours to repair: the store names it
        return _scrub(value, 0)
    return value


def _scrub(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return _clean(value)
    if depth >= MAX_JSON_DEPTH and isinstance(value, dict | list | tuple):
        return "(nested too deeply to keep)"
    if isinstance(value, dict):
        return {_clean(k) if isinstance(k, str) else k: _scrub(v, depth + 1)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v, depth + 1) for v in value]
    return value


def _clean(text: str) -> str:
    if text_problem(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text.replace("\x00", "\ufffd"))


def _too_deep(cls: type[ValueNotStorable], what: str, fields: dict[str, Any]) -> ValueNotStorable:
    return cls(f"{what} nests deeper than {MAX_JSON_DEPTH} levels of lists and objects; "
               "flatten it (or store it as an artifact and return the ref)",
               limit=MAX_JSON_DEPTH, field=what, reason="too_deep", **fields)


def _bad_string(value: Any) -> tuple[str, str] | None:
    """The first string or key no store can hold, as (reason, path), in document order."""
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            reason = text_problem(item)
            if reason is not None:
                return reason, f"the string at {path}"
        elif isinstance(item, dict):
            children: list[tuple[Any, str]] = []
            for key, child in item.items():
                shown = _key(key)
                if isinstance(key, str) and (reason := text_problem(key)) is not None:
                    return reason, f"the key {shown} of {path}"
                children.append((child, f"{path}[{shown}]"))
            stack.extend(reversed(children))
        elif isinstance(item, list | tuple):
            stack.extend(reversed([(child, f"{path}[{i}]") for i, child in enumerate(item)]))
    return None


def _key(key: Any) -> str:
    """A key as a path shows it: JSON-quoted, ASCII only (so the message itself is storable),
    and short."""
    shown = json.dumps(str(key))
    return shown if len(shown) <= 40 else shown[:37] + '..."'
