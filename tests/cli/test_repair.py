"""`frostline repair` through click's CliRunner: replayed and HTTP models, bad input, --execute."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.cli.repair import repair_command
from frostline.providers.local import LocalProviders
from frostline.runtime.execute import execute
from frostline.store import open_store
from frostline.testing import InProcessRunner
from tests.fakes.openai_server import FakeOpenAIServer, chat, slow

REPLIES = Path(__file__).parents[1] / "repair" / "replies"
FAILING = (REPLIES / "failing.py").read_text()
PROSE = (REPLIES / "1_prose.md").read_text()
RELOCATED = (REPLIES / "4_relocated.md").read_text()
FIXED = (REPLIES / "5_fixed.md").read_text()


@pytest.fixture
def failed_run(store_url: str) -> str:
    with open_store(store_url) as store:
        outcome = execute(store, "e5", FAILING, args={"brief": "fox"},
                          providers=LocalProviders(log_path=None), runner=InProcessRunner())
    assert outcome.status == "failed"
    return store_url


@pytest.fixture(autouse=True)
def replies_may_be_read_from_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FROSTLINE_REPLAY_DIRS", str(tmp_path))


def recorded(tmp_path: Path, *contents: str) -> str:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"model": "recorded-test", "responses": [
        {"content": c, "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}}
        for c in contents]}))
    return f"recorded:{path}"


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(repair_command, list(args), catch_exceptions=False, env=env)
    return result.exit_code, result.output


def snapshot(store_url: str) -> tuple[list[object], list[int]]:
    with open_store(store_url) as store:
        return store.list_slots("e5"), [a.number for a in store.list_attempts("e5")]


def test_repair_accepts_after_a_gate_stop(failed_run: str, tmp_path: Path) -> None:
    before = snapshot(failed_run)
    # the callsite gate (relocation stop); under rebind a moved call may pass (tests/rebind)
    code, out = invoke("e5", "--model", recorded(tmp_path, RELOCATED, FIXED), "--store",
                       failed_run, "--json", "--out", str(tmp_path / "fixed.py"),
                       "--relocation", "stop")
    assert code == 0
    data = json.loads(out)
    assert [r["ok"] for r in data["rewrites"]] == [False, True]
    assert data["rewrites"][0]["counterexamples"][0]["kind"] == "removed"
    assert data["usage_total"] == {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    assert (tmp_path / "fixed.py").read_text() == data["accepted"]
    assert snapshot(failed_run) == before  # nothing written to the prefix or the attempts
    with open_store(failed_run) as store:
        (event,) = [e for e in store.list_events("e5") if e.kind == "repair"]
    assert event.data["accepted"] is True and len(event.data["rewrites"]) == 2


def test_repair_human_output(failed_run: str, tmp_path: Path) -> None:
    code, out = invoke("e5", "--model", recorded(tmp_path, RELOCATED, FIXED), "--store",
                       failed_run, "--relocation", "stop")
    assert code == 0 and "refused" in out and "accepted" in out and "1024x1024" in out


def test_prose_only_model_is_a_non_zero_exit(failed_run: str, tmp_path: Path) -> None:
    before = snapshot(failed_run)
    code, out = invoke("e5", "--model", recorded(tmp_path, PROSE, PROSE, PROSE), "--max-rewrites",
                       "2", "--store", failed_run, "--json")
    data = json.loads(out)
    assert code == 3 and data["accepted"] is None and len(data["rewrites"]) == 2
    assert all(r["reason"].startswith("no code block") for r in data["rewrites"])
    assert snapshot(failed_run) == before


def test_execute_runs_the_accepted_candidate(sqlite_url: str, tmp_path: Path) -> None:
    with open_store(sqlite_url) as store:
        execute(store, "e5", FAILING, args={"brief": "fox"},
                providers=LocalProviders(log_path=None), runner=InProcessRunner())
    code, out = invoke("e5", "--model", recorded(tmp_path, FIXED), "--execute", "--args",
                       '{"brief": "fox"}', "--runner", "process", "--store", sqlite_url, "--json")
    data = json.loads(out)
    assert code == 0, out
    assert data["execution"]["status"] == "succeeded"
    assert (data["execution"]["replayed"], data["execution"]["executed"]) == (4, 1)
    slots, attempts = snapshot(sqlite_url)
    assert len(slots) == 5 and attempts == [1, 2]


def test_execute_without_args_reuses_the_failed_attempts_args(sqlite_url: str, tmp_path: Path) -> None:
    with open_store(sqlite_url) as store:
        execute(store, "e5", FAILING, args={"brief": "fox"},
                providers=LocalProviders(log_path=None), runner=InProcessRunner())
    code, out = invoke("e5", "--model", recorded(tmp_path, FIXED), "--execute",
                       "--runner", "process", "--store", sqlite_url, "--json")
    data = json.loads(out)
    assert code == 0, out
    assert (data["execution"]["replayed"], data["execution"]["executed"]) == (4, 1)
    with open_store(sqlite_url) as store:
        assert [a.args for a in store.list_attempts("e5")] == [{"brief": "fox"}] * 2


def test_unknown_run_and_bad_spec(failed_run: str, tmp_path: Path) -> None:
    code, out = invoke("nope", "--model", recorded(tmp_path, FIXED), "--store", failed_run, "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "run_not_found"
    code, out = invoke("e5", "--model", "gemini:x", "--store", failed_run, "--json")
    assert code == 2 and "openai:MODEL" in json.loads(out)["error"]["message"]
    code, out = invoke("e5", "--model", f"recorded:{tmp_path}/none.json", "--store", failed_run)
    assert code == 2 and "does not exist" in out
    code, out = invoke("e5", "--model", recorded(tmp_path, FIXED), "--args", "{bad",
                       "--store", failed_run, "--json")
    assert code == 2 and "--args must be JSON" in json.loads(out)["error"]["message"]


def test_corrupted_certificate_refuses(sqlite_url: str, tmp_path: Path) -> None:
    with open_store(sqlite_url) as store:
        execute(store, "e5", FAILING, args={"brief": "fox"},
                providers=LocalProviders(log_path=None), runner=InProcessRunner())
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        conn.execute("""UPDATE certificates SET body = '{"version": 1}'""")
    code, out = invoke("e5", "--model", recorded(tmp_path, FIXED), "--store", sqlite_url, "--json")
    err = json.loads(out)["error"]
    assert code == 1 and err["code"] == "certificate_corrupted" and "missing field" in err["message"]


def test_tampered_prefix_refuses(sqlite_url: str, tmp_path: Path) -> None:
    with open_store(sqlite_url) as store:
        execute(store, "e5", FAILING, args={"brief": "fox"},
                providers=LocalProviders(log_path=None), runner=InProcessRunner())
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        conn.execute("DROP TRIGGER slots_immutable_delete")
        conn.execute("DELETE FROM slots WHERE occurrence = 2")
    code, out = invoke("e5", "--model", recorded(tmp_path, FIXED), "--store", sqlite_url, "--json")
    err = json.loads(out)["error"]
    assert code == 1 and err["code"] == "prefix_conflict"
    assert "no longer matches its certificate" in err["message"]


def test_model_endpoint_timeout_is_a_clear_error(failed_run: str) -> None:
    before = snapshot(failed_run)
    with FakeOpenAIServer() as server:
        server.script(slow(2.0, chat("```python\npass\n```")))
        env = {"FROSTLINE_MODEL_BASE_URL": server.url, "FROSTLINE_MODEL_API_KEY": server.api_key or "k"}
        code, out = invoke("e5", "--model", "openai:fake-model", "--timeout", "0.2",
                           "--max-retries", "0", "--store", failed_run, "--json", env=env)
    err = json.loads(out)["error"]
    assert code == 1 and err["kind"] == "timeout" and "timed out" in err["message"]
    assert snapshot(failed_run) == before


def test_openai_compatible_endpoint_end_to_end(failed_run: str) -> None:
    with FakeOpenAIServer() as server:
        server.script(chat(RELOCATED), chat(FIXED))
        env = {"FROSTLINE_MODEL_BASE_URL": server.url, "FROSTLINE_MODEL_API_KEY": server.api_key or "k"}
        code, out = invoke("e5", "--model", "openai:fake-model", "--store", failed_run, "--json",
                           "--relocation", "stop", env=env)
        requests = list(server.requests)
    assert code == 0 and json.loads(out)["accepted"] is not None
    assert len(requests) == 2
    second = requests[1].body["messages"][1]["content"]
    assert "gate removed" in second and "orchestrate/for#0.body/#0" in second


def test_replies_outside_the_allowed_directories_are_refused(tmp_path, failed_run, monkeypatch):
    monkeypatch.delenv("FROSTLINE_REPLAY_DIRS")
    code, out = invoke("e5", "--model", recorded(tmp_path, FIXED), "--store", failed_run, "--json")
    assert code == 2 and "outside the directories" in out
