"""`frostline author` and `frostline do` over real HTTP against the fake OpenAI-compatible
server. These are plumbing tests: no model is reachable here, so every reply is scripted by
hand (a draft that breaks R03, a bounded one, prose, garbage); what is tested is what travels
to the endpoint, what comes back, and what is (not) stored."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.cli import main
from frostline.store import open_store
from tests.cli.test_repair import FAILING, FIXED, RELOCATED
from tests.fakes.openai_server import FakeOpenAIServer, chat, malformed, server_error

DRAFTS = Path(__file__).parents[1] / "repair" / "authoring"
WHILE = (DRAFTS / "1_while.md").read_text()
BOUNDED = (DRAFTS / "2_bounded.md").read_text()
TASK = "Plan a 3-shot storyboard for args.brief and generate one 512x512 image per shot."
TOOLS = '''
from frostline.capabilities import capability

@capability("mine.slugify", price_usd=0.003, effect="read_only")
def slugify(text: str) -> dict:
    """Lowercase words joined by dashes."""
    return {"slug": "-".join(text.lower().split())}
'''


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False, env=env)
    return result.exit_code, result.output


@pytest.fixture
def server():
    with FakeOpenAIServer(api_key="sk-author") as fake:
        yield fake


@pytest.fixture
def cfg(tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"authortools_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(TOOLS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("FAST_KEY", "sk-author")
    path = tmp_path / "frostline.toml"
    path.write_text(f'[providers.mine]\nkind = "python"\nmodule = "{name}"\n\n'
                    f'[models.fast]\nbase_url = "{server.url}"\napi_key_env = "FAST_KEY"\n'
                    'model = "fast-model"\nmax_retries = 0\n')
    yield str(path)
    sys.modules.pop(name, None)


def runs(store_url: str) -> list[str]:
    with open_store(store_url) as store:
        return [r.run_id for r in store.list_runs()]


def test_issue29_author_sends_skill_catalog_envelope_and_counterexample(
        server: FakeOpenAIServer, cfg: str, tmp_path: Path) -> None:
    server.script(chat(WHILE), chat(BOUNDED))
    out_file = tmp_path / "fox.py"
    code, out = invoke("author", TASK, "--model", "fast", "--config", cfg, "--args",
                       '{"brief": "a fox"}', "--out", str(out_file), "--json")
    assert code == 0, out
    data = json.loads(out)
    assert [r["ok"] for r in data["rewrites"]] == [False, True]
    assert data["rewrites"][0]["violations"][0]["rule"] == "R03"
    assert data["rewrites"][0]["usage"] == {"prompt_tokens": 10, "completion_tokens": 5,
                                            "total_tokens": 15}
    assert all(isinstance(r["wall_s"], float) for r in data["rewrites"])
    assert data["usage_total"]["total_tokens"] == 30
    assert out_file.read_text() == data["accepted"]
    first, second = (r.body["messages"] for r in server.requests)
    system = first[0]["content"]
    assert "## Rules" in system and "async def mine_slugify(*, text: str)" in system
    assert "async def storyboard_plan(" in system
    assert '"usd": 10.0' in first[1]["content"] and TASK in first[1]["content"]
    assert "- R03 at line 5:" in second[1]["content"]
    assert len(second[0]["content"]) == len(system)  # rebuilt from scratch, not grown


def test_issue29_author_rewrites_are_bounded(server: FakeOpenAIServer, cfg: str) -> None:
    server.script(chat(WHILE), chat(WHILE), chat(WHILE))
    code, out = invoke("author", TASK, "--model", "fast", "--config", cfg,
                       "--max-rewrites", "1", "--json")
    assert code == 3 and json.loads(out)["accepted"] is None
    assert len(server.requests) == 2 and server.pending == 1


def test_issue29_author_run_executes_the_first_attempt(server: FakeOpenAIServer, cfg: str,
                                                        store_url: str, tmp_path: Path) -> None:
    task_file = tmp_path / "task.txt"
    task_file.write_text(TASK)
    server.script(chat(BOUNDED))
    code, out = invoke("author", f"@{task_file}", "--model", "fast", "--config", cfg,
                       "--run", "fox", "--args", '{"brief": "a fox"}', "--runner", "process",
                       "--store", store_url, "--json")
    assert code == 0, out
    execution = json.loads(out)["execution"]
    assert execution["status"] == "succeeded" and execution["attempt"] == 1
    assert execution["executed"] == 4
    with open_store(store_url) as store:
        (event,) = [e for e in store.list_events("fox") if e.kind == "author"]
    assert event.data["accepted"] is True and event.data["model"] == "fast"
    # The run exists now: a second authoring is refused before any model call.
    code, out = invoke("author", TASK, "--model", "fast", "--config", cfg, "--run", "fox",
                       "--runner", "process", "--store", store_url, "--json")
    assert code == 2 and "already exists" in json.loads(out)["error"]["message"]
    assert len(server.requests) == 1


@pytest.mark.parametrize("reply, kind", [(server_error(500), "server_error"),
                                         (malformed(), "malformed")])
def test_issue29_a_failing_or_garbage_endpoint_stores_no_run(
        server: FakeOpenAIServer, cfg: str, store_url: str, reply: object, kind: str) -> None:
    server.script(reply)  # type: ignore[arg-type]
    code, out = invoke("author", TASK, "--model", "fast", "--config", cfg, "--run", "r1",
                       "--runner", "process", "--store", store_url, "--json")
    err = json.loads(out)["error"]
    assert code == 1 and err["code"] == "model" and err["kind"] == kind
    assert "r1" not in runs(store_url)


def test_issue29_prose_only_drafts_store_no_run(server: FakeOpenAIServer, cfg: str,
                                                 store_url: str) -> None:
    server.script(chat("I would plan a storyboard."), chat("Sure!"), chat("Done."))
    code, out = invoke("author", TASK, "--model", "fast", "--config", cfg, "--run", "r1",
                       "--runner", "process", "--store", store_url, "--json")
    data = json.loads(out)
    assert code == 3 and all("no code block" in r["reason"] for r in data["rewrites"])
    assert "execution" not in data and "r1" not in runs(store_url)


def test_issue29_do_authors_runs_repairs_and_never_pays_twice(
        server: FakeOpenAIServer, cfg: str, store_url: str) -> None:
    server.script(chat("```python\n" + FAILING + "```"), chat(RELOCATED), chat(FIXED))
    code, out = invoke("do", "Four 1024x1024 shots for args.brief", "--model", "fast",
                       "--config", cfg, "--run", "e5", "--args", '{"brief": "fox"}',
                       "--runner", "process", "--store", store_url, "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["status"] == "succeeded"
    first, second = data["attempts"]
    assert first["status"] == "failed" and first["executed"] == 4  # plan and three images
    assert second["replayed"] == 4 and second["executed"] == 1  # only the fourth image is new
    (rep,) = data["repairs"]
    assert [r["ok"] for r in rep["rewrites"]] == [False, True]
    assert len(server.requests) == 3


def test_issue29_do_stops_when_the_repair_budget_is_spent(
        server: FakeOpenAIServer, cfg: str, store_url: str) -> None:
    server.script(chat("```python\n" + FAILING + "```"))
    code, out = invoke("do", "Four shots", "--model", "fast", "--config", cfg, "--run", "e6",
                       "--args", '{"brief": "fox"}', "--max-repairs", "0", "--runner",
                       "process", "--store", store_url, "--json")
    data = json.loads(out)
    assert code == 1 and data["status"] == "failed" and data["repairs"] == []
    assert len(server.requests) == 1


FAILURES = [  # (the endpoint's answers, --max-rewrites, exit code, the error's code or None)
    ([server_error(500)], 0, 1, "model"),
    ([malformed()], 0, 1, "model"),  # not JSON
    ([chat(WHILE), server_error(500)], 1, 1, "model"),  # fails after a refused draft
    ([chat("Sure, here is the plan.")] * 2, 1, 3, None),  # JSON, but no script
    ([chat(WHILE)] * 2, 1, 3, None),  # every draft breaks R03, the rewrites spent
]


@pytest.mark.parametrize("command", ["author", "do"])
@pytest.mark.parametrize("replies, rewrites, exit_code, code", FAILURES,
                         ids=["500", "not-json", "500-after-a-draft", "no-script", "refused"])
def test_issue29_a_failed_authoring_stores_nothing_and_frees_the_name(
        server: FakeOpenAIServer, cfg: str, store_url: str, command: str,
        replies: list[object], rewrites: int, exit_code: int, code: str | None) -> None:
    server.script(*replies)  # type: ignore[arg-type]
    got, out = invoke(command, TASK, "--model", "fast", "--config", cfg, "--run", "r1",
                      "--max-rewrites", str(rewrites), "--runner", "process",
                      "--store", store_url, "--json")
    data = json.loads(out)
    assert got == exit_code, out
    if code is not None:  # the model's error, with the drafts it was paid for
        assert data["error"]["code"] == code
        assert len(data["error"]["author"]["rewrites"]) == len(replies) - 1
    else:
        drafts = data["rewrites"] if command == "author" else data["author"]["rewrites"]
        assert [d["ok"] for d in drafts] == [False] * (rewrites + 1)
        assert command == "author" or data["status"] == "not_authored"
    with open_store(store_url) as store:
        assert store.get_run("r1") is None and store.list_runs() == []
        assert store.list_events("r1") == [] and store.list_attempts("r1") == []
        assert store.list_slots("r1") == [] and store.list_calls("r1") == []
    # The name is free: the next authoring takes it.
    server.script(chat(BOUNDED))
    got, out = invoke(command, TASK, "--model", "fast", "--config", cfg, "--run", "r1",
                      "--args", '{"brief": "a fox"}', "--runner", "process",
                      "--store", store_url, "--json")
    assert got == 0, out
    assert runs(store_url) == ["r1"]
