"""What every provider of user-declared capabilities checks before a result may be committed:
the result is JSON, and it matches the capability's output schema when one is declared.

A result that breaks its schema is the provider's fault, not the script's: it is a
`ProviderError` (502 OutputSchemaViolation), recorded as a failed call and never committed, so
a repair calls the capability again instead of replaying a value nobody promised.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema

from frostline.errors import ProviderError

_validators: dict[str, jsonschema.protocols.Validator] = {}  # by the schema's canonical text
# By the schema object a catalog entry holds (kept here, so its id stays its own): the
# canonical text costs more than the check itself on a small result.
_by_object: dict[int, tuple[Mapping[str, Any], jsonschema.protocols.Validator]] = {}
_JSON = json.JSONEncoder(allow_nan=False)


def check_output(capability: str, schema: Mapping[str, Any] | None, value: Any) -> None:
    """Raise ProviderError unless `value` is JSON data that satisfies `schema` (if any)."""
    try:
        _JSON.encode(value)
    except (TypeError, ValueError) as exc:
        raise ProviderError(f"{capability}: the result is not JSON data ({exc})", status=502,
                            error_code="MalformedResult", capability=capability) from None
    if schema is None:
        return
    error = jsonschema.exceptions.best_match(_validator(capability, schema).iter_errors(value))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(result)"
        raise ProviderError(f"{capability}: the result breaks the declared output schema at "
                            f"{where}: {error.message}; nothing was committed", status=502,
                            error_code="OutputSchemaViolation", capability=capability,
                            where=where)


def _validator(capability: str, schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    known = _by_object.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    key = json.dumps(schema, sort_keys=True)
    validator = _validators.get(key)
    if validator is None:
        cls = jsonschema.validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ProviderError(f"{capability}: the declared output schema is not a JSON "
                                f"schema: {exc.message}", status=502,
                                error_code="OutputSchemaInvalid", capability=capability) from None
        validator = _validators[key] = cls(dict(schema))
    if len(_by_object) < 10_000:  # catalogs are small; a process that builds many stays bounded
        _by_object[id(schema)] = (schema, validator)
    return validator
