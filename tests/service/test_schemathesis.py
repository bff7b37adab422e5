"""Property-based fuzzing of the HTTP API from its own OpenAPI description: no server error.

Each operation is fuzzed with its own hypothesis strategy rather than through schemathesis's
pytest plugin, whose fixture support reaches into pytest internals that pytest 9.2 removed.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error


def test_no_server_error(live):
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    for operation in operations:
        _fuzz(operation, live)


def _fuzz(operation: Any, live: Any) -> None:
    @given(case=operation.as_strategy())
    @settings(max_examples=12, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def no_server_error(case: Any) -> None:
        for token in (live.alice, "wrong-token"):
            case.call_and_validate(headers={"Authorization": f"Bearer {token}"},
                                   checks=[not_a_server_error])

    try:
        no_server_error()
    except Exception as exc:
        exc.add_note(f"operation: {operation.label}")
        raise
