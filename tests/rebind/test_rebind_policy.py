"""Issue 30: relocation is a policy — the envelope field, `--relocation` on gate, run, repair
and submit, the API's envelope and attempt field, the MCP tools, and the repair loop."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from frostline.capabilities.envelope import Envelope, Relocation
from frostline.cli import main
from frostline.embedded.bodies import host_body
from frostline.embedded.jobs import JobSpec, run_job
from frostline.errors import EnvelopeError
from frostline.mcp import operations as ops
from frostline.repair.loop import repair_loop, task_from_store
from frostline.repair.prompt import RELOCATION_REBIND
from frostline.store import open_store
from frostline.testing import InProcessRunner
from tests.rebind.test_rebind_runtime import ARGS, BRAND, MOVED, paid
from tests.runtime.helpers import local, run

EDITED = MOVED.replace('"seed": seed', '"seed": seed + 1')


def failed_tour(store, tmp_path, relocation="stop"):
    out = run(store, "tour", BRAND, local(tmp_path), args=ARGS,
              envelope={"relocation": relocation})
    assert out.status == "failed"


def test_issue30_envelope_relocation_round_trips_and_a_bad_value_says_what_is_allowed():
    assert Envelope.from_dict({"relocation": "rebind"}).relocation is Relocation.REBIND
    assert Envelope().to_dict()["relocation"] == "rebind"  # the default: docs/contract.md
    with pytest.raises(EnvelopeError, match=r"stop \| rebind"):
        Envelope.from_dict({"relocation": "cache"})


def test_issue30_gate_relocation_flag_runs_the_dry_replay(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        failed_tour(store, tmp_path)
    script = tmp_path / "moved.py"
    script.write_text(MOVED)
    cli = CliRunner()
    stopped = cli.invoke(main, ["gate", "tour", str(script), "--store", url, "--json"])
    assert stopped.exit_code == 3 and "trace" not in json.loads(stopped.output)
    args = ["gate", "tour", str(script), "--store", url, "--relocation", "rebind",
            "--runner", "process"]
    admitted = cli.invoke(main, [*args, "--json"])
    assert admitted.exit_code == 0, admitted.output
    verdict = json.loads(admitted.output)
    assert verdict["accepted_by"] == "trace" and verdict["trace"]["rebound"] == 3
    shown = cli.invoke(main, args)
    assert shown.exit_code == 0 and "accepted by the dry replay" in shown.output
    script.write_text(EDITED)
    edited = cli.invoke(main, args)
    assert edited.exit_code == 3 and "lost" in edited.output
    assert paid(tmp_path / "provider.jsonl").count("image.generate") == 3  # nothing new paid


def test_issue30_run_relocation_flag_overrides_the_run_for_one_attempt(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        failed_tour(store, tmp_path)
    script = tmp_path / "moved.py"
    script.write_text(MOVED)
    cli = CliRunner()
    base = ["run", str(script), "--run", "tour", "--store", url, "--runner", "process", "--json"]
    assert json.loads(cli.invoke(main, base).output)["status"] == "gate_stopped"
    out = cli.invoke(main, [*base, "--relocation", "rebind"])
    assert out.exit_code == 0, out.output
    human = cli.invoke(main, [*base[:-1], "--relocation", "rebind"])  # an attempt more
    assert "accepted by the dry replay" in human.output and "moved from" in human.output
    body = json.loads(out.output)
    assert (body["status"], body["replayed"], body["executed"]) == ("succeeded", 4, 1)
    with open_store(url) as store:  # the run keeps its envelope
        assert store.get_run("tour").envelope["relocation"] == "stop"


def test_issue30_a_new_run_keeps_the_relocation_it_was_created_with(store, tmp_path):
    out = run(store, "fresh", BRAND, local(tmp_path), args=ARGS, relocation="rebind")
    assert out.status == "failed"
    assert store.get_run("fresh").envelope["relocation"] == "rebind"


def test_issue30_api_envelope_and_attempt_field(live_any, tmp_path):
    with live_any.client(live_any.alice) as c:
        bad = c.post("/v1/runs", json={"script": BRAND, "args": ARGS,
                                       "envelope": {"relocation": "cache"}})
        assert bad.status_code == 400 and "relocation" in bad.json()["error"]["message"]
        made = c.post("/v1/runs", json={"script": BRAND, "args": ARGS, "run_id": "tour",
                                        "envelope": {"relocation": "stop"}},
                      params={"wait": 60})
        assert made.json()["outcome"]["status"] == "failed"
        stopped = c.post("/v1/runs/tour/attempts", json={"script": MOVED},
                         params={"wait": 60}).json()["outcome"]
        assert stopped["status"] == "gate_stopped"
        admitted = c.post("/v1/runs/tour/attempts", json={"script": MOVED,
                                                           "relocation": "rebind"},
                          params={"wait": 60}).json()["outcome"]
        assert (admitted["status"], admitted["replayed"], admitted["executed"]) == (
            "succeeded", 4, 1)
        wrong = c.post("/v1/runs/tour/attempts", json={"script": MOVED, "relocation": "x"})
        assert wrong.status_code == 422


def test_issue30_mcp_gate_and_run_take_the_relocation(store, tmp_path):
    failed_tour(store, tmp_path)
    runner = InProcessRunner()
    plain = ops.gate_script(store, "tour", MOVED, runner=runner)
    assert not plain["accepted"] and "trace" not in plain
    traced = ops.gate_script(store, "tour", MOVED, runner=runner, relocation="rebind")
    assert traced["accepted"] and traced["trace"]["rebound"] == 3
    assert traced["frozen_sites"] == 2


def test_issue30_a_submitted_attempt_carries_its_relocation_to_the_worker(sqlite_store, tmp_path):
    failed_tour(sqlite_store, tmp_path)
    body = host_body(local(tmp_path), InProcessRunner())
    out = run_job(sqlite_store, JobSpec("attempt", "tour", {
        "source": MOVED, "args": None, "relocation": "rebind"}), body, worker="w1")
    assert out["status"] == "succeeded" and out["replayed"] == 4


def reply(source: str) -> str:
    return "```python\n" + source + "\n```"


def test_issue30_the_repair_loop_needs_no_rewrite_for_a_moved_call_under_rebind(store, tmp_path):
    failed_tour(store, tmp_path)
    task = task_from_store(store, "tour", relocation="rebind", runner=InProcessRunner())
    loop = repair_loop(task)
    prompt = next(loop)
    assert RELOCATION_REBIND in prompt[1]["content"]
    assert "relocation policy is `rebind`" in prompt[0]["content"]  # the skill document
    with pytest.raises(StopIteration) as done:
        loop.send(reply(MOVED))
    result = done.value.value
    assert result.accepted == MOVED and len(result.rewrites) == 1


def test_issue30_the_repair_loop_still_refuses_a_moved_call_under_stop_or_an_edit(store, tmp_path):
    failed_tour(store, tmp_path)
    stop = task_from_store(store, "tour", runner=InProcessRunner())
    loop = repair_loop(stop)
    assert RELOCATION_REBIND not in next(loop)[1]["content"]
    second = loop.send(reply(MOVED))
    assert "gate stopped it" in second[1]["content"]
    rebind = repair_loop(task_from_store(store, "tour", relocation="rebind",
                                         runner=InProcessRunner()))
    next(rebind)
    again = rebind.send(reply(EDITED))[1]["content"]
    assert "the dry replay did not admit it" in again and "gate trace lost" in again




def test_issue30_mcp_run_script_takes_the_relocation(store, tmp_path):
    from frostline.embedded import open_capabilities

    failed_tour(store, tmp_path)
    with open_capabilities(None, log_path=tmp_path / "provider.jsonl") as registry:
        stopped = ops.run_script(store, registry, InProcessRunner(), "tour", MOVED)
        assert stopped["status"] == "gate_stopped"
        out = ops.run_script(store, registry, InProcessRunner(), "tour", MOVED,
                             relocation="rebind")
    assert (out["status"], out["replayed"], out["executed"]) == ("succeeded", 4, 1)
    assert out["gate"]["accepted_by"] == "trace"
