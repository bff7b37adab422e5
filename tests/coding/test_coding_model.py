"""The model generator, the free agent and the no-single-L ablation over real HTTP.

The model is frostline's OpenAI-compatible client pointed at the local fake server, whose
replies are scripted (written by hand for these tests): plumbing, never results.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from coding_repo import CORE, make_task

from frostline.coding.arms import arm
from frostline.coding.generate import GenerationRequest, ModelGenerator, parse_blocks
from frostline.coding.interface import FaultPlan, Task
from frostline.coding.resumable import solve_durable
from frostline.coding.setup import SolveSettings
from frostline.coding.solve import solve
from frostline.coding.testrun import SandboxSettings
from frostline.repair.clients import OpenAIChatClient
from frostline.store import open_store
from tests.fakes.openai_server import FakeOpenAIServer, chat

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
SETTINGS = SolveSettings(sandbox=SandboxSettings(wall_seconds=120, test_timeout=5), samples=1)
T = "tests/test_core.py::"
FIX = ("textkit/core.py\n<<<<<<< SEARCH\n    if value < high:\n=======\n"
       "    if value > high:\n>>>>>>> REPLACE\n")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


def client(server: FakeOpenAIServer) -> OpenAIChatClient:
    return OpenAIChatClient("scripted", base_url=server.url, api_key=server.api_key,
                            max_retries=0)


def task_for(tmp_path: Path) -> Task:
    return make_task(tmp_path / "src", "clamp_gt", visible=(f"{T}test_clamp_inside",),
                     hidden=(f"{T}test_clamp_above", f"{T}test_clamp_edges"))


def test_search_replace_blocks_are_parsed_and_garbage_is_counted(
        server: FakeOpenAIServer) -> None:
    assert parse_blocks("Here:\n" + FIX) == [{"file": "textkit/core.py",
                                              "search": "    if value < high:\n",
                                              "replace": "    if value > high:\n"}]
    assert parse_blocks("no blocks at all") == []
    other = FIX.replace("    if value > high:", "    if value >= high:")
    server.script(chat(FIX), chat("sorry, I cannot"), chat(other))
    gen = ModelGenerator(client(server))
    site = {"file": "textkit/core.py", "line": 10, "function": "clamp"}
    request = GenerationRequest([site], {"textkit/core.py": CORE}, n=2)
    result = gen.generate(request)
    # n samples, and one more for the malformed one
    assert result.model_calls == 3 and result.malformed == 1 and result.tokens == 45
    assert len(result.candidates) == 2
    server.script(chat(FIX), chat(FIX), chat(FIX))
    again = gen.generate(request)
    assert again.model_calls == 3 and len(again.candidates) == 1  # a repeat is offered once
    prompt = server.requests[0].body["messages"][1]["content"]
    assert "textkit/core.py around line 10" in prompt and "def clamp" in prompt


def test_the_model_generator_is_the_single_l_entry(server: FakeOpenAIServer,
                                                   tmp_path: Path) -> None:
    server.script(chat(FIX))
    out = solve(task_for(tmp_path), arm("arm4"), FaultPlan(), model=client(server),
                workdir=tmp_path / "w", settings=SETTINGS)
    assert out.status == "ACCEPT", out.reason
    assert out.instruments.resolved == 1
    assert out.instruments.llm_calls == 1 and out.instruments.tokens == 15
    assert len(server.requests) == 1


@pytest.mark.parametrize("faults", [None, FaultPlan(rate=1.0, kinds=("provider_error",))],
                         ids=["garbage", "provider-error"])
def test_a_model_that_answers_garbage_ends_in_terminal_reject(
        server: FakeOpenAIServer, tmp_path: Path, faults: FaultPlan | None) -> None:
    server.script(chat("I would rewrite the whole module."), chat("Still no blocks."))
    out = solve(task_for(tmp_path), arm("arm4"), faults or FaultPlan(), model=client(server),
                workdir=tmp_path / "w", settings=SETTINGS)
    assert out.status == "TERMINAL_REJECT"
    assert ("no new candidate" if faults is None else "provider_error") in out.reason
    assert out.details["path"][-2] == "GENERATE"


def test_a_resumed_durable_run_never_asks_the_model_again(server: FakeOpenAIServer,
                                                          tmp_path: Path) -> None:
    server.script(chat(FIX))
    task = task_for(tmp_path)
    with open_store(f"sqlite:///{tmp_path}/s.db") as store:
        _, first = solve_durable(store, "model-run", task, arm("arm4"), FaultPlan(),
                                 model=client(server), workdir=tmp_path / "w",
                                 settings=SETTINGS)
        assert first is not None and first.status == "ACCEPT"
        _, again = solve_durable(store, "model-run", task, arm("arm4"), FaultPlan(),
                                 model=client(server), workdir=tmp_path / "w",
                                 settings=SETTINGS)
    assert again is not None and again.status == "ACCEPT"
    assert again.instruments.llm_calls == 0 and len(server.requests) == 1


def action(**kw: object) -> object:
    return chat(json.dumps(kw))


def test_the_free_agent_owns_its_loop_and_its_illegal_actions_are_counted(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    edit = {"edits": [{"file": "textkit/core.py", "search": "    if value < high:\n",
                       "replace": "    if value > high:\n"}]}
    server.script(action(tool="trace.read"), action(tool="edit.apply", payload=edit),
                  action(tool="shell.run"), action(tool="test.run"),
                  action(tool="test.run"), action(done=True))
    out = solve(task_for(tmp_path), arm("free_agent"), FaultPlan(), model=client(server),
                workdir=tmp_path / "w", settings=SETTINGS)
    assert out.status == "ACCEPT" and out.instruments.resolved == 1, out.reason
    i = out.instruments
    assert i.llm_calls == 6 and i.tokens == 90
    # INIT->LOCALIZE, LOCALIZE->EDIT, EDIT->TEST are not edges; shell.run is no tool
    assert i.illegal_actions == 4
    assert i.redundant_actions == 1  # the same test run on the same tree, twice


def test_the_free_agent_gives_up_on_garbage(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.script(chat("hmm"), chat("let me think"), chat("no json here"))
    out = solve(task_for(tmp_path), arm("free_agent"), FaultPlan(), model=client(server),
                workdir=tmp_path / "w", settings=SETTINGS)
    assert out.status == "TERMINAL_REJECT" and "garbage" in out.reason
    assert out.instruments.llm_calls == 3


def test_without_the_single_l_contract_the_graph_still_refuses_illegal_actions(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.script(action(state="RECONNAISSANCE", tool="repo.manifest"),
                  action(state="TEST", tool="test.run"),
                  action(state="LOCALIZE", tool="edit.apply", payload={"edits": []}),
                  action(done=True))
    out = solve(task_for(tmp_path), arm("no_single_l"), FaultPlan(), model=client(server),
                workdir=tmp_path / "w", settings=SETTINGS)
    assert out.status == "ACCEPT" and out.instruments.resolved == 0  # it only claimed done
    assert out.instruments.illegal_actions == 2
    observations = [r.body["messages"][-1]["content"] for r in server.requests[2:4]]
    assert "ILLEGAL_TRANSITION" in observations[0] and "ILLEGAL_TOOL" in observations[1]


BREAKS_IMPORT = ('textkit/core.py\n<<<<<<< SEARCH\n"""Small text and number helpers."""\n=======\n'
                 '"""Small text and number helpers."""\nBROKEN = undefined_name\n'
                 '>>>>>>> REPLACE\n')


@pytest.mark.parametrize("name", ["arm2", "arm4"])
def test_a_new_diagnosis_makes_the_plan_stale_and_only_the_lattice_notices(
        server: FakeOpenAIServer, tmp_path: Path, name: str) -> None:
    """A first patch that breaks the import sends the run through TRACE and DEBUG, whose new
    Diagnosis invalidates the Plan and the Patch. Arm 4's lattice re-plans; arm 2 repairs on
    the stale plan, and the observer counts that decision."""
    server.script(chat(BREAKS_IMPORT), chat(FIX))
    out = solve(task_for(tmp_path), arm(name), FaultPlan(), model=client(server),
                workdir=tmp_path / "w", settings=SETTINGS)
    assert out.status == "ACCEPT" and out.instruments.resolved == 1, out.reason
    path = out.details["path"]
    assert path[path.index("EXECUTE") + 1] == "TRACE"
    after_debug = path[path.index("DEBUG", path.index("TRACE")) + 1]
    if name == "arm4":
        assert after_debug == "PLAN" and out.instruments.stale_context == 0
    else:
        assert after_debug == "REPAIR" and out.instruments.stale_context > 0
        assert {"Plan", "Patch"} <= {a for e in out.details["stale_events"] for a in e["stale"]}
    assert out.instruments.llm_calls == 2


def test_the_optional_model_review_adds_notes_never_verified_defects(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.script(chat(FIX), chat('{"concerns": ["the boundary case value == high"]}'))
    settings = SolveSettings(sandbox=SETTINGS.sandbox, samples=1, model_review=True)
    out = solve(task_for(tmp_path), arm("arm4"), FaultPlan(), model=client(server),
                workdir=tmp_path / "w", settings=settings)
    assert out.status == "ACCEPT" and out.instruments.llm_calls == 2, out.reason
    review_prompt = server.requests[1].body["messages"][1]["content"]
    assert "-    if value < high:" in review_prompt and "+    if value > high:" in review_prompt
