"""What changed about capabilities between two recorded catalogs.

An attempt records the catalog it ran under. When a capability that already has committed calls
changes its payload schema, its result schema or its effect class before a later attempt, the
committed results were produced under other terms: the run still replays them (their digests
are unchanged), but `show` and the run's events say so, so an operator can decide whether the
prefix still means what it meant.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

WATCHED = ("input_schema", "output_schema", "effect")


def catalog_changes(before: Iterable[Mapping[str, Any]], after: Iterable[Mapping[str, Any]],
                    names: Iterable[str]) -> list[dict[str, Any]]:
    """One entry per capability in `names` whose watched fields differ, or that is gone:
    ``{"capability", "fields": [...], "before": {...}, "after": {...} | None}``."""
    old = {e.get("name"): e for e in before}
    new = {e.get("name"): e for e in after}
    changes = []
    for name in sorted(set(names)):
        was = old.get(name)
        if was is None:  # not in the earlier catalog: nothing to compare with
            continue
        now = new.get(name)
        if now is None:
            changes.append({"capability": name, "fields": ["removed"],
                            "before": _watched(was), "after": None})
            continue
        fields = [f for f in WATCHED if _field(was, f) != _field(now, f)]
        if fields:
            changes.append({"capability": name, "fields": fields,
                            "before": {f: _field(was, f) for f in fields},
                            "after": {f: _field(now, f) for f in fields}})
    return changes


def _field(entry: Mapping[str, Any], name: str) -> Any:
    if name == "effect" and "effect" not in entry:  # recorded before effect classes existed
        return "side_effecting" if entry.get("side_effecting", True) else "read_only"
    return entry.get(name)


def _watched(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {f: _field(entry, f) for f in WATCHED}
