"""The Python API (issue 29): `frostline.open(...)` and `open_async` over both stores, typed
results whose `to_dict()` is the command line's JSON, and the examples of docs/python-api.md
run as written. Model replies are scripted (`replay:`): plumbing, no model is called."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

import frostline
from frostline.errors import RunNotFound
from tests.cli.test_repair import FAILING, FIXED, RELOCATED

ROOT = Path(__file__).parents[1]
BOUNDED = (ROOT / "tests" / "repair" / "authoring" / "2_bounded.md").read_text()


def replies(tmp_path: Path, *contents: str) -> str:
    path = tmp_path / f"replies-{len(list(tmp_path.glob('replies-*')))}.json"
    path.write_text(json.dumps({"source": "scripted", "responses": [
        {"content": c, "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}}
        for c in contents]}))
    return f"replay:{path}"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # replay files are read from the working directory
    monkeypatch.delenv("FROSTLINE_CONFIG", raising=False)


def test_issue29_the_public_names_are_pinned() -> None:
    assert frostline.__all__ == ["AsyncFrostline", "Authored", "Client", "Frostline",
                                 "__version__", "open", "open_async"]
    for name in frostline.__all__:
        assert getattr(frostline, name) is not None
    with pytest.raises(AttributeError):
        frostline.nothing_here  # noqa: B018


def test_issue29_check_run_gate_repair_show(store_url: str, tmp_path: Path) -> None:
    with frostline.open(store=store_url, runner="process") as fl:
        report = fl.check("async def orchestrate(ctx, args):\n    while True:\n        pass\n")
        assert not report.ok and report.violations[0].rule == "R03"
        assert report.violations[0].line == 2 and report.violations[0].hint
        # The callsite gate's story: the run's envelope says relocation = stop.
        attempt = fl.run(FAILING, run_id="e5", args={"brief": "fox"},
                         envelope={"relocation": "stop"})
        assert attempt.status == "failed" and attempt.executed == 4 and attempt.replayed == 0
        assert attempt.to_dict()["status"] == "failed"
        moved = RELOCATED.split("```python\n")[1].split("```")[0]
        relocated = fl.gate("e5", moved)
        assert not relocated.accepted and relocated.counterexamples and relocated.trace is None
        # Under rebind, the dry replay admits the same candidate: it only moves the calls.
        rebound = fl.gate("e5", moved, relocation="rebind")
        assert rebound.accepted and rebound.counterexamples and rebound.trace is not None
        fixed = fl.repair("e5", model=replies(tmp_path, RELOCATED, FIXED))
        assert fixed.accepted is not None and [r.ok for r in fixed.rewrites] == [False, True]
        second = fl.run(fixed.accepted, run_id="e5")
        assert second.status == "succeeded" and second.replayed == 4 and second.executed == 1
        shown = fl.show("e5")
        assert [a["status"] for a in shown["attempts"]] == ["failed", "succeeded"]
        with pytest.raises(RunNotFound):
            fl.show("nope")


def test_issue29_author_with_a_run(store_url: str, tmp_path: Path) -> None:
    with frostline.open(store=store_url, runner="process") as fl:
        authored = fl.author("three shots for args.brief", model=replies(tmp_path, BOUNDED),
                             run_id="r2", args={"brief": "a fox"})
        assert authored.accepted is not None
        assert authored.execution is not None and authored.execution.status == "succeeded"
        data = authored.to_dict()
        assert data["run_id"] == "r2" and data["execution"]["executed"] == 4


def test_issue29_open_async(tmp_path: Path) -> None:
    async def main() -> tuple[bool, str]:
        async with frostline.open_async(store=f"sqlite:///{tmp_path / 'a.db'}",
                                        runner="process") as fl:
            report = await fl.check(FAILING)
            attempt = await fl.run(FAILING, "a1", args={"brief": "fox"})
            return report.ok, attempt.status

    assert asyncio.run(main()) == (True, "failed")


def test_issue29_docs_python_api_examples_run_as_written(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "python-api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/python-api.md", "exec"), {})


def test_issue29_submit_queues_a_job_for_workers(store_url: str) -> None:
    from frostline.errors import DefinitionError, ScriptRejected

    with frostline.open(store=store_url, runner="process") as fl:
        if not store_url.startswith("postgresql"):
            with pytest.raises(DefinitionError, match="PostgreSQL"):
                fl.submit(FAILING, "q1")
            return
        queued = fl.submit(FAILING, "q1", args={"brief": "fox"}, key="k1")
        again = fl.submit(FAILING, "q1", args={"brief": "fox"}, key="k1")
        assert queued.to_dict()["state"] == "queued" and again.ticket == queued.ticket
        with pytest.raises(ScriptRejected):
            fl.submit("import os\n", "q2")
        assert queued.run_id == "q1" and queued.queue_job_id is not None


def test_issue29_to_dict_is_the_command_lines_json(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from frostline.cli import main

    store = f"sqlite:///{tmp_path / 'same.db'}"
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    candidate = tmp_path / "relocated.py"
    candidate.write_text(RELOCATED.split("```python\n")[1].split("```")[0])

    def cli(*args: str) -> dict[str, object]:
        return json.loads(CliRunner().invoke(main, [*args, "--json"]).output)

    with frostline.open(store=store, runner="process") as fl:
        assert fl.check(FAILING).to_dict() == cli("check", str(script))
        fl.run(FAILING, run_id="e5", args={"brief": "fox"})
        assert fl.gate("e5", candidate.read_text()).to_dict() == cli(
            "gate", "e5", str(candidate), "--store", store)
        assert fl.show("e5") == cli("show", "e5", "--store", store)


WHILE = (ROOT / "tests" / "repair" / "authoring" / "1_while.md").read_text()


@pytest.mark.parametrize("replies, rewrites, fails", [
    (["500"], 0, True), (["garbage"], 0, True), ([WHILE, "500"], 1, True),
    (["no script here"] * 2, 1, False), ([WHILE] * 2, 1, False)],
    ids=["500", "not-json", "500-after-a-draft", "no-script", "refused"])
def test_issue29_a_failed_authoring_stores_no_run(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replies: list[str],
        rewrites: int, fails: bool) -> None:
    from frostline.errors import ModelError
    from frostline.store import open_store
    from tests.fakes.openai_server import FakeOpenAIServer, chat, malformed, server_error

    made = {"500": server_error(500), "garbage": malformed()}
    monkeypatch.setenv("FAST_KEY", "sk-api")
    with FakeOpenAIServer(api_key="sk-api") as model:
        config = tmp_path / "frostline.toml"
        config.write_text(f'[models.fast]\nbase_url = "{model.url}"\napi_key_env = "FAST_KEY"\n'
                          'model = "fast-model"\nmax_retries = 0\n')
        model.script(*[made.get(r) or chat(r) for r in replies])
        with frostline.open(store=store_url, config=config, runner="process") as fl:
            if fails:  # the model's error, with the drafts it was paid for
                with pytest.raises(ModelError) as caught:
                    fl.author("three shots", model="fast", run_id="r1", max_rewrites=rewrites)
                assert len(caught.value.fields["author"]["rewrites"]) == len(replies) - 1
            else:
                authored = fl.author("three shots", model="fast", run_id="r1",
                                     max_rewrites=rewrites)
                assert authored.accepted is None and authored.execution is None
                assert [d.ok for d in authored.result.rewrites] == [False] * (rewrites + 1)
            with pytest.raises(RunNotFound):
                fl.show("r1")
            with open_store(store_url) as store:  # nothing under the name
                assert store.list_runs() == [] and store.list_events("r1") == []
                assert store.list_attempts("r1") == [] and store.list_slots("r1") == []
            model.script(chat(BOUNDED))  # the name is free: the next authoring takes it
            again = fl.author("three shots", model="fast", run_id="r1", args={"brief": "fox"})
            assert again.execution is not None and again.execution.attempt == 1
