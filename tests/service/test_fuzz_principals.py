"""Stateful fuzzing across two principals: sequences of calls follow the OpenAPI links from a
created run to every operation on it, each call made as alice or bob. Whatever the sequence:
no server error, and no principal ever reads or changes another principal's run.

schemathesis generates the requests from the server's own OpenAPI description; a third of run
creations get a valid script (random text is mostly refused by the checker, and a refused
script creates no run to chain from).
"""

from __future__ import annotations

import os
from typing import ClassVar

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis.errors import FlakyStrategyDefinition

VALID = [
    "async def orchestrate(ctx, args):\n    return await ctx.run(\"echo\", {\"n\": 1})\n",
    "async def orchestrate(ctx, args):\n"
    "    img = await ctx.run(\"image.generate\", {\"prompt\": \"p\", \"size\": \"7x7\"})\n"
    "    return img\n",
]
EXAMPLES = int(os.environ.get("FROSTLINE_FUZZ_EXAMPLES", "15"))


def fuzz_machine(live):
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    principals = (("alice", live.alice), ("bob", live.bob))
    store = live.store

    class TwoPrincipals(schema.as_state_machine()):  # type: ignore[misc]
        calls = 0
        violations: ClassVar[list[str]] = []
        created: ClassVar[dict[str, list[str]]] = {"alice": ["r1", "shared"],
                                                   "bob": ["r1", "shared"]}
        ok_on_runs = 0

        def before_call(self, case):
            n = TwoPrincipals.calls = TwoPrincipals.calls + 1
            self.who, token = principals[n % 2]
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}
            creating = case.method == "POST" and case.path == "/v1/runs"
            if creating and isinstance(case.body, dict) and n % 3:
                case.body = {"script": VALID[n % 2], "args": {}, "envelope": {},
                                 **({"run_id": case.body["run_id"]}
                                    if isinstance(case.body.get("run_id"), str) else {})}
            if case.path.endswith("/events"):  # the backlog only: a followed stream never ends
                case.query = {**(case.query or {}), "follow": "false"}
            if case.path_parameters and "run_id" in case.path_parameters and n % 2:
                # aim at a name the other principal created (or one both have)
                other = TwoPrincipals.created["bob" if self.who == "alice" else "alice"]
                case.path_parameters["run_id"] = other[n % len(other)]

        def after_call(self, response, case):
            if case.path == "/v1/runs" and case.method == "POST" and response.status_code in (
                    200, 202):
                TwoPrincipals.created[self.who].append(response.json()["run_id"])
            name = (case.path_parameters or {}).get("run_id")
            if name is not None and 200 <= response.status_code < 300:
                TwoPrincipals.ok_on_runs += 1
                if store.find_run(self.who, str(name)) is None:
                    TwoPrincipals.violations.append(
                        f"{self.who} got {response.status_code} for {case.method} "
                        f"{case.formatted_path}, a run that is not theirs")
            if case.path == "/v1/runs" and case.method == "GET" and response.status_code == 200:
                for run in response.json().get("runs", []):
                    if store.find_run(self.who, run["run_id"]) is None:
                        TwoPrincipals.violations.append(
                            f"{self.who} listed {run['run_id']!r}, not theirs")

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            # Recorded, not raised: against a live server a replay cannot reproduce the
            # sequence (the server's state moved on), so hypothesis could only report it
            # as flaky; the test asserts on the record instead.
            if response.status_code >= 500:
                TwoPrincipals.violations.append(
                    f"{case.method} {case.formatted_path} as {self.who}: "
                    f"{response.status_code} {response.text[:300]}")

    return TwoPrincipals


@pytest.mark.timeout(600)
def test_two_principals_never_cross(live_any):
    live = live_any
    machine = fuzz_machine(live)
    # the same names in both namespaces, so a crossed lookup would find something
    for who, token in (("alice", live.alice), ("bob", live.bob)):
        with live.client(token) as c:
            for name in ("r1", "shared"):
                assert c.post("/v1/runs", json={"script": VALID[0], "run_id": name},
                              params={"wait": 60}).status_code == 200, who
    # database=None: an example saved from an earlier run cannot be replayed against a live
    # server whose state has moved on. For the same reason hypothesis may find, while it
    # extends an earlier sequence, that the server now answers it differently (a name taken
    # since, a run grown) and stop as "flaky"; every call made until then was checked, and
    # the assertions below are on that record, so a stopped round is followed by another.
    for _ in range(3):
        try:
            machine.run(settings=settings(max_examples=EXAMPLES, stateful_step_count=6,
                                          deadline=None, database=None,
                                          suppress_health_check=list(HealthCheck)))
        except FlakyStrategyDefinition:
            continue
        break
    assert machine.calls > EXAMPLES, "the state machine made almost no calls"
    assert machine.ok_on_runs > 0, "no call ever reached a run: the fuzz tested nothing"
    assert machine.violations == []
