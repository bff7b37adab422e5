"""The README's tour, run as written: every `frostline` line of its command block, in order,
from a copy of the checkout's examples, with the exit code its comment states (else 0)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.cli import main
from frostline.store import open_store

ROOT = Path(__file__).resolve().parents[2]


def tour_commands() -> list[tuple[list[str], int]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## A short tour", 1)[1].split("```", 2)[1]
    commands = []
    for line in block.splitlines():
        if not line.startswith("frostline "):
            continue  # blank, or a comment continued from the line above
        command, _, comment = line.partition("  #")
        expected = re.search(r"exit (\d+)", comment)
        commands.append((shlex.split(command)[1:], int(expected.group(1)) if expected else 0))
    return commands


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FROSTLINE_STORE", raising=False)
    monkeypatch.delenv("FROSTLINE_REPLAY_DIRS", raising=False)
    monkeypatch.setenv("FROSTLINE_RUNNER", "process")  # the sandbox has its own tests
    monkeypatch.setenv("FROSTLINE_PROVIDER_LOG", str(tmp_path / "provider.jsonl"))
    return tmp_path


def test_the_tour_runs_as_written(checkout: Path) -> None:
    commands = tour_commands()
    assert len(commands) >= 15
    for args, expected in commands:
        result = CliRunner().invoke(main, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            args, result.output)
        assert result.exit_code == expected, (args, result.output)
    with open_store(None, create=False) as store:
        attempts = store.list_attempts("r1")
        assert [a.status for a in attempts] == ["failed", "succeeded"]
        assert (attempts[1].stats["replayed"], attempts[1].stats["executed"]) == (4, 1)
        assert [a.status for a in store.list_attempts("r2")] == ["failed", "succeeded"]
        repair = [e.data for e in store.list_events("r2") if e.kind == "repair"]
        # relocation rebind (the default, issue 30): the first reply only moves the image
        # call, payloads unchanged, so the dry replay admits it and no second rewrite is needed
        assert [r["ok"] for r in repair[0]["rewrites"]] == [True]
    assert len(list((checkout / "shots").glob("*.png"))) == 4
    assert (checkout / "graph.svg").read_text().startswith("<svg")


def test_the_tour_script_fails_at_the_fourth_shot_and_its_repairs_differ(checkout: Path):
    def run(*args: str) -> dict:
        result = CliRunner().invoke(main, [*args, "--json"])
        return {"code": result.exit_code, **json.loads(result.stdout)}

    first = run("run", "examples/tour/brand.py", "--run", "t", "--args", '{"brief": "x"}')
    assert (first["code"], first["executed"]) == (1, 4)
    assert first["error"]["status"] == 400 and "2048x2048" in first["error"]["message"]
    moved = run("gate", "t", "examples/tour/moved.py", "--relocation", "stop")
    assert moved["code"] == 3 and moved["counterexamples"][0]["site"] == "orchestrate.render/#0"
    admitted = run("gate", "t", "examples/tour/moved.py", "--runner", "process")  # rebind
    assert admitted["code"] == 0 and admitted["trace"]["rebound"] == 3
    assert run("gate", "t", "examples/tour/repaired.py")["code"] == 0


def test_check_shows_code_derived_text_literally(checkout: Path):
    result = CliRunner().invoke(main, ["run", "examples/tour/brand.py", "--run", "t",
                                       "--args", '{"brief": "x"}'])
    assert result.exit_code == 1
    result = CliRunner().invoke(main, ["gate", "t", "examples/tour/moved.py",
                                       "--relocation", "stop"])
    assert result.exit_code == 3
    # A committed line quoting SIZES[i] keeps its brackets, and no line is cut at 80 columns.
    assert '"size": SIZES[i], "seed": i})' in result.output
    assert max(len(line) for line in result.output.splitlines()) > 100
