"""`POST /v1/runs/{id}/gate` (issue 29): the verdict `frostline gate --json` prints, over
real HTTP on both stores; it spends and records nothing, and another principal's run is 404."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from frostline.runtime.dry_replay import gate_with_trace
from frostline.runtime.runners import ChildProcessRunner
from frostline.service.operations import Services
from frostline.store import open_store
from tests.cli.test_repair import FAILING, RELOCATED
from tests.service.conftest import Live, serving

MOVED = RELOCATED.split("```python\n")[1].split("```")[0]


@pytest.fixture
def api(store_url: str) -> Iterator[Live]:
    with serving(open_store(store_url), services=Services.default(runner_name="process")) as live:
        yield live


def _recorded(live: Live, key: str) -> tuple[Any, ...]:
    store = live.store
    return (len(store.list_events(key, limit=100_000)), len(store.list_attempts(key)),
            len(store.list_slots(key)), store.get_run(key).status)  # type: ignore[union-attr]


def test_issue29_gate_route_answers_the_clis_verdict(api: Live) -> None:
    with api.client(api.alice) as http:
        r = http.post("/v1/runs?wait=60", json={"script": FAILING, "run_id": "e5",
                                                "args": {"brief": "fox"},
                                                "envelope": {"relocation": "stop"}})
        assert r.status_code == 200 and r.json()["outcome"]["status"] == "failed", r.text
        key = api.store.find_run("alice", "e5").run_id
        before = _recorded(api, key)
        stopped = http.post("/v1/runs/e5/gate", json={"script": MOVED})
        assert stopped.status_code == 200, stopped.text
        verdict = stopped.json()
        assert not verdict["accepted"] and verdict["counterexamples"]
        assert "trace" not in verdict and verdict["relocation"] == "stop"
        rebound = http.post("/v1/runs/e5/gate", json={"script": MOVED, "relocation": "rebind"})
        assert rebound.status_code == 200, rebound.text
        assert rebound.json()["accepted"] and rebound.json()["trace"]["admitted"]
        same = http.post("/v1/runs/e5/gate", json={"script": FAILING}).json()
        assert same == {"accepted": True, "counterexamples": []}
        assert _recorded(api, key) == before  # nothing spent, nothing recorded
    # What the CLI computes (`frostline gate --json`) for the same candidate.
    cli = gate_with_trace(api.store, key, MOVED, runner=ChildProcessRunner())
    assert verdict == cli.to_dict()


@pytest.mark.parametrize("body", [
    {"script": "async def orchestrate(ctx, args):\n    return (\n"},
    {"script": FAILING, "relocation": "sideways"},
    {"script": FAILING, "extra": 1},
    {},
])
def test_issue29_gate_route_refuses_bad_bodies(api: Live, body: dict[str, Any]) -> None:
    with api.client(api.alice) as http:
        assert http.post("/v1/runs?wait=60", json={"script": FAILING, "run_id": "e5",
                                                   "args": {"brief": "fox"}}).status_code == 200
        r = http.post("/v1/runs/e5/gate", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["message"]


def test_issue29_gate_route_is_owner_scoped(api: Live) -> None:
    with api.client(api.alice) as alice, api.client(api.bob) as bob:
        assert alice.post("/v1/runs?wait=60", json={"script": FAILING, "run_id": "e5",
                                                    "args": {"brief": "fox"}}).status_code == 200
        theirs = bob.post("/v1/runs/e5/gate", json={"script": MOVED})
        nobody = alice.post("/v1/runs/none/gate", json={"script": MOVED})
    assert theirs.status_code == 404 and theirs.json()["error"]["code"] == nobody.json()[
        "error"]["code"]
    assert nobody.status_code == 404
