"""Property-based fuzzing of the HTTP API from its own OpenAPI description: no server error."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error


@pytest.fixture
def api_schema(live):
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    schema.live = live  # type: ignore[attr-defined]
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_error(case, live):
    for token in (live.alice, "wrong-token"):
        case.call_and_validate(headers={"Authorization": f"Bearer {token}"}, checks=[not_a_server_error])
