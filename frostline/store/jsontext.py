"""The JSON text the store keeps in its JSON columns: one encoder, one refusal message."""

from __future__ import annotations

import json
from typing import Any

from frostline.errors import FrostlineError

# One encoder for every JSON column: json.dumps with options builds a new encoder per call.
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def json_text(value: Any, what: str) -> str:
    """The compact JSON text a store keeps for `value`; a value JSON cannot carry is refused
    by name."""
    try:
        return _encode(value)
    except (TypeError, ValueError) as exc:
        raise FrostlineError(
            f"{what} cannot be stored: it is not JSON ({exc}); store binary data with "
            "put_artifact and keep its ref in the result", field=what,
        ) from exc
