"""One exit-code table, held by every command; one JSON error shape; no traceback anywhere.

Every command is run through the real `frostline` group against the failures a user meets
first: a store URL that is wrong, a store that cannot be reached, a store that does not exist
yet (reads must not create it), a missing file, malformed --args. Each exit code is checked
against `EXIT_CODES`, the table docs/cli.md prints.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from frostline.cli import COMMANDS, main
from frostline.cli.common import EXIT_CODES
from frostline.runtime import outcome as runtime_outcome

ROOT = Path(__file__).resolve().parents[2]
BOGUS = "bogus://x"
UNREACHABLE = "postgresql://nobody@127.0.0.1:1/x?connect_timeout=3"
CODE = {name: code for name, (code, _) in EXIT_CODES.items()}

OK_SCRIPT = """
async def orchestrate(ctx, args):
    return await ctx.run("echo", {"n": 1})
"""


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory, no store configured, scripts in plain child processes."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("FROSTLINE_STORE", raising=False)
    monkeypatch.setenv("FROSTLINE_RUNNER", "process")
    monkeypatch.setenv("FROSTLINE_PROVIDER_LOG", str(tmp_path / "provider.jsonl"))
    (work / "s.py").write_text(OK_SCRIPT)
    return work


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args, repr(result.exception))
    return result


def json_error(result: Result) -> dict[str, object]:
    body = json.loads(result.stdout)
    assert list(body) == ["error"], body
    error = body["error"]
    assert isinstance(error, dict) and error["code"] and error["message"], error
    return error


def test_the_table_is_the_readme_table_and_the_runtime_agrees():
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \| (.+) \|$", (ROOT / "docs" / "cli.md").read_text(),
                      re.MULTILINE)
    assert [(int(c), n, m) for c, n, m in rows] == [
        (code, name, meaning) for name, (code, meaning) in EXIT_CODES.items()]
    codes = [code for code, _ in EXIT_CODES.values()]
    assert codes == sorted(set(codes))  # one meaning per code
    statuses = {"succeeded": "ok", "failed": "failed", "gate_stopped": "stopped",
                "diverged": "diverged", "unresolved": "unresolved", "rejected": "rejected",
                "waiting": "waiting"}
    assert {s: CODE[n] for s, n in statuses.items()} == runtime_outcome.EXIT_CODES
    assert {
        "store_unavailable": CODE["store_unavailable"],
        "sandbox_unavailable": CODE["sandbox_unavailable"]} == runtime_outcome.FAILURE_EXIT_CODES


# Every command that takes --store, with the arguments it needs to get that far.
STORE_COMMANDS = [
    ("run", "s.py", "--run", "r"),
    ("show", "r"),
    ("reconcile", "r", "orchestrate/#0@:0", "--abandon"),
    ("approve", "r", "orchestrate/#0@:0"),
    ("signal", "r", "go", "--data", "{}"),
    ("resume", "r", "--runner", "process"),
    ("cancel", "r"),
    ("gate", "r", "s.py"),
    ("cert", "r"),
    ("orphans", "r"),
    ("repair", "r", "--model", "replay:none.json"),
    ("author", "a task", "--model", "replay:none.json", "--run", "r", "--runner", "process"),
    ("do", "a task", "--model", "replay:none.json", "--run", "r", "--runner", "process"),
    ("runs",),
    ("artifacts", "r"),
    ("token", "create", "alice"),
    ("token", "list"),
    ("token", "revoke", "alice"),
    ("serve", "--runner", "process"),
    ("demo", "--runner", "process"),
    ("graph", "run", "canonical", "--bodies", str(ROOT / "examples/graph/fix_failing_test.py"),
     "--run", "g1"),
    ("mcp", "--runner", "process"),
    ("worker", "--runner", "process"),
    ("submit", "s.py", "--run", "r"),
    ("workers",),
]
READS = [c for c in STORE_COMMANDS if c[0] in {"show", "reconcile", "gate", "cert", "orphans",
                                              "repair", "runs", "artifacts", "approve",
                                              "signal", "resume", "cancel"}
         or c[:2] in {("token", "list"), ("token", "revoke")}]


def test_every_command_with_a_store_is_covered():
    covered = {c[0] for c in STORE_COMMANDS}
    # the commands that need no store
    assert covered | {"check", "catalog", "tasks", "ab"} == set(COMMANDS)


@pytest.mark.parametrize("command", STORE_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_malformed_store_url_is_a_usage_error(cwd: Path, command: tuple[str, ...]):
    if command[0] == "mcp":
        pytest.importorskip("mcp", reason="frostline mcp needs the mcp extra")
    plain = invoke(*command, "--store", BOGUS)
    assert plain.exit_code == CODE["usage"], plain.output
    assert "unsupported store URL scheme 'bogus'" in plain.stderr
    assert len(plain.stderr.strip().splitlines()) == 1
    result = invoke(*command, "--store", BOGUS, "--json")
    assert result.exit_code == CODE["usage"]
    assert json_error(result)["code"] == "definition"
    assert not (cwd / ".frostline").exists()


@pytest.mark.parametrize("command", STORE_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_store_that_cannot_be_reached_has_its_own_code(cwd: Path, command: tuple[str, ...]):
    pytest.importorskip("psycopg", reason="postgresql:// URLs need the postgres extra")
    if command[0] == "mcp":
        pytest.importorskip("mcp", reason="frostline mcp needs the mcp extra")
    result = invoke(*command, "--store", UNREACHABLE, "--json")
    assert result.exit_code == CODE["store_unavailable"], result.output
    error = json_error(result)
    assert error["code"] == "store_unavailable" and "cannot open" in str(error["message"])


@pytest.mark.parametrize("command", READS, ids=lambda c: " ".join(c[:2]))
def test_a_read_never_creates_a_store(cwd: Path, command: tuple[str, ...]):
    for extra in ((), ("--json",)):
        result = invoke(*command, *extra)
        assert result.exit_code == CODE["usage"], result.output
        if extra:
            assert json_error(result)["code"] == "store_not_found"
        else:
            assert "no frostline store at .frostline/frostline.db" in result.stderr
    assert sorted(p.name for p in cwd.iterdir()) == ["s.py"]


def test_an_unknown_run_in_an_existing_store(cwd: Path):
    assert invoke("run", "s.py", "--run", "r1").exit_code == CODE["ok"]
    for command in [c for c in READS if c[0] not in {"runs", "token"}]:
        result = invoke(*command, "--json")
        assert result.exit_code == CODE["usage"], (command, result.output)
        error = json_error(result)
        assert error["code"] == "run_not_found" and "frostline runs" in str(error["message"])


@pytest.mark.parametrize("command", [
    ("run", "missing.py", "--run", "r"),
    ("run", "s.py", "--run", "r", "--envelope", "missing.json"),
    ("run", "s.py", "--run", "r", "--args", "@missing.json"),
    ("check", "missing.py"),
    ("check", "s.py", "--envelope", "missing.json"),
    ("graph", "check", "missing.json"),
    ("graph", "show", "missing.json"),
    ("graph", "run", "canonical", "--bodies", "missing.py"),
    ("catalog", "--config", "missing.toml"),
    ("run", "s.py", "--run", "r", "--config", "missing.toml"),
], ids=lambda c: " ".join(c))
def test_a_missing_file_is_a_usage_error_in_json_too(cwd: Path, command: tuple[str, ...]):
    assert invoke(*command).exit_code == CODE["usage"]
    result = invoke(*command, "--json")
    assert result.exit_code == CODE["usage"]
    assert "missing" in str(json_error(result)["message"])


def test_gate_with_a_missing_candidate(cwd: Path):
    assert invoke("run", "s.py", "--run", "r").exit_code == CODE["ok"]
    result = invoke("gate", "r", "missing.py", "--json")
    assert result.exit_code == CODE["usage"]
    assert "does not exist" in str(json_error(result)["message"])


@pytest.mark.parametrize("args", ["{bad", "[1, 2]", '"text"', "3", "null"])
@pytest.mark.parametrize("command", [("run", "s.py", "--run", "r"),
                                     ("repair", "r", "--model", "replay:x.json")],
                         ids=["run", "repair"])
def test_args_must_be_a_json_object(cwd: Path, command: tuple[str, ...], args: str):
    if command[0] == "repair":
        assert invoke("run", "s.py", "--run", "r").exit_code == CODE["ok"]
    result = invoke(*command, "--args", args, "--json")
    assert result.exit_code == CODE["usage"], result.output
    assert "--args" in str(json_error(result)["message"])
    if command[0] == "run":
        assert invoke("runs", "--json").exit_code == CODE["usage"]  # no store was created


def test_clicks_own_usage_errors_follow_json(cwd: Path):
    for command in (("run", "s.py", "--json"), ("graph", "show", "canonical", "--format", "x",
                                                "--json"), ("runs", "--limit", "0", "--json")):
        result = invoke(*command)
        assert result.exit_code == CODE["usage"]
        assert json_error(result)["code"] == "usage"


def test_run_statuses_and_the_checker(cwd: Path):
    assert invoke("run", "s.py", "--run", "r").exit_code == CODE["ok"]
    (cwd / "bad.py").write_text("import os\n" + OK_SCRIPT)
    assert invoke("check", "bad.py").exit_code == CODE["rejected"]
    result = invoke("run", "bad.py", "--run", "new", "--json")
    assert result.exit_code == CODE["rejected"]
    assert json.loads(result.stdout)["error"]["code"] == "rejected"
    assert invoke("show", "new").exit_code == CODE["usage"]  # a rejected script made no run


def test_a_stuck_graph_run_has_its_own_code(cwd: Path, monkeypatch: pytest.MonkeyPatch):
    from frostline.cli import graph as graph_cli
    from frostline.graph.engine import Engine
    from tests.graph.graph_helpers import ForbiddenModel, scripted_bodies

    # The seed graph, run unchecked, gets stuck where its liveness counterexample says.
    monkeypatch.setattr(graph_cli, "Engine", functools.partial(Engine, verify=False))
    monkeypatch.setattr(graph_cli, "load_bodies", lambda spec: {
        "bodies": scripted_bodies(), "model": ForbiddenModel()})
    result = invoke("graph", "run", "seed", "--bodies", "x", "--json")
    assert result.exit_code == CODE["stuck"] == 9
    assert json.loads(result.stdout.splitlines()[-1])["result"]["status"] == "stuck"


def test_a_sandbox_that_cannot_be_established_is_one_line_and_its_own_code(tmp_path: Path):
    # A fresh process (the sandbox probe caches its verdict per process), without bwrap.
    (tmp_path / "s.py").write_text(OK_SCRIPT)
    env = {**os.environ, "PATH": str(tmp_path / "no-bin"), "PYTHONPATH": str(ROOT),
           "FROSTLINE_STORE": str(tmp_path / "f.db")}
    env.pop("FROSTLINE_RUNNER", None)
    command = [sys.executable, "-m", "frostline", "run", "s.py", "--run", "r"]
    out = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == CODE["sandbox_unavailable"] == 8, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert "install bubblewrap" in out.stderr and "--runner process" in out.stderr
    assert not (tmp_path / "f.db").exists()  # refused before the store was opened
    out = subprocess.run([*command, "--json"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    error = json.loads(out.stdout)["error"]
    assert out.returncode == 8 and error["code"] == "sandbox_unavailable"
    assert "--runner process" in error["message"] and "bwrap" in error["detail"]


def test_every_command_takes_json():
    import click

    def leaves(command: click.Command, ctx: click.Context) -> list[tuple[str, click.Command]]:
        if isinstance(command, click.Group):
            return [leaf for name in command.list_commands(ctx)
                    for leaf in leaves(command.get_command(ctx, name), ctx)]
        return [(command.name or "?", command)]

    ctx = click.Context(main)
    commands = leaves(main, ctx)
    assert len(commands) >= len(COMMANDS)
    missing = [name for name, command in commands
               if "--json" not in {o for p in command.params for o in p.opts}]
    assert missing == []
