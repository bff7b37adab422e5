"""The JSON text the store keeps in its JSON columns: one encoder, one refusal.

Every JSON column of both stores is written through `json_text`, which is the contract's
`storable_json`: a value no store can hold (not JSON, a NUL or a lone surrogate in a string or
key, nested too deeply) is refused with ValueNotStorable before the database sees it, the same
way on SQLite and PostgreSQL.
"""

from __future__ import annotations

from typing import Any

from frostline.contract.jsonshape import storable_json


def json_text(value: Any, what: str) -> str:
    """The compact JSON text a store keeps for `value`; a value no store can hold is refused
    by name (ValueNotStorable)."""
    return storable_json(value, what)
