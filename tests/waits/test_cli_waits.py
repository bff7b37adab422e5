"""`frostline approve`, `signal` and `resume`: every attempt and answer in its own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from frostline.providers.provider_log import ProviderLog

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    ok = await ctx.run("human.approve", {"ask": "publish?"})
    t = await ctx.run("timer.sleep", {"seconds": args["sleep"]})
    b = await ctx.run("echo", {"n": 2, "approved": ok["approved"]})
    return {"approved": ok["approved"], "woke": t["woke_at"] >= t["due_at"]}
"""


class Cli:
    def __init__(self, tmp: Path) -> None:
        self.store = f"sqlite:///{tmp}/s.db"
        self.log = tmp / "providers.log"
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "FROSTLINE_PROVIDER_LOG": str(self.log)}
        self.script = tmp / "s.py"
        self.script.write_text(SCRIPT)

    def __call__(self, *args: str) -> tuple[int, Any]:
        proc = subprocess.run([sys.executable, "-m", "frostline", *args, "--store", self.store,
                               "--json"], capture_output=True, text=True, env=self.env,
                              timeout=120, check=False)
        return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None

    def echoes(self) -> list[Any]:
        lines = ProviderLog(self.log).read() if self.log.exists() else []
        return [e["payload"]["n"] for e in lines if e["capability"] == "echo" and e["ok"]]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_approve_resume_across_processes_executes_nothing_twice(cli: Cli) -> None:
    code, out = cli("run", str(cli.script), "--run", "r", "--args", '{"sleep": 0}',
                    "--runner", "process")
    assert code == 10 and out["status"] == "waiting"
    identity = out["error"]["identity"]
    shown = subprocess.run([sys.executable, "-m", "frostline", "show", "r", "--store", cli.store],
                           capture_output=True, text=True, env=cli.env, timeout=60, check=True)
    assert f"waits at {identity} for an approval" in shown.stdout
    code, out = cli("show", "r")
    assert [w["identity"] for w in out["waits"] if w["answer"] is None] == [identity]
    code, out = cli("resume", "r", "--runner", "process")  # nothing answered yet
    assert code == 10 and out["executed"] == 0
    code, out = cli("approve", "r", identity, "--reason", "ok")
    assert code == 0 and out["value"]["approved"] is True
    code, out = cli("approve", "r", identity, "--reject")  # the first answer stands
    assert code == 1 and out["error"]["code"] == "already_answered"
    code, out = cli("resume", "r", "--runner", "process")
    assert code == 0 and out["result"] == {"approved": True, "woke": True}
    assert cli.echoes() == [1, 2]


def test_a_timer_wakes_after_a_process_restart(cli: Cli) -> None:
    code, out = cli("run", str(cli.script), "--run", "r", "--args", '{"sleep": 1}',
                    "--runner", "process")
    code, out = cli("approve", "r", out["error"]["identity"])
    code, out = cli("resume", "r", "--runner", "process")
    if code == 10:  # the timer was reached by that process and is not due yet
        assert out["error"]["waits"][0]["kind"] == "timer"
    deadline = time.monotonic() + 60
    while code == 10 and time.monotonic() < deadline:  # each resume is a new process
        time.sleep(0.2)
        code, out = cli("resume", "r", "--runner", "process")
    assert code == 0, out
    assert out["result"]["woke"] is True and cli.echoes() == [1, 2]


def test_bad_input_is_refused_with_the_error_shape(cli: Cli) -> None:
    code, out = cli("run", str(cli.script), "--run", "r", "--args", '{"sleep": 0}',
                    "--runner", "process")
    code, out = cli("approve", "r", "orchestrate/#7@:0")
    assert code == 2 and out["error"]["code"] == "unknown_wait"
    code, out = cli("approve", "nope", "orchestrate/#1@:0")
    assert code == 2 and out["error"]["code"] == "run_not_found"
    code, out = cli("signal", "r", "go", "--data", "{not json")
    assert code == 2 and "error" in out
    code, out = cli("signal", "r", "no spaces", "--data", "{}")
    assert code == 2 and out["error"]["code"] == "answer_invalid"
    # the script waits for no event: a signal would be kept for ever (issue 26), so it is
    # refused (it used to be kept)
    code, out = cli("signal", "r", "go", "--data", '{"x": 1}')
    assert code == 2 and out["error"]["code"] == "no_event_wait"
    code, out = cli("resume", "missing", "--runner", "process")
    assert code == 2


def test_issue26_the_local_principal_approves_on_the_command_line_as_before(
        cli: Cli, tmp_path: Path) -> None:
    # A configuration that names other approvers and refuses self-approval over HTTP and MCP:
    # the command line is the one user of this machine, and keeps answering its own runs.
    config = tmp_path / "frostline.toml"
    config.write_text('[approvals]\napprovers = ["ops"]\nself_approval = false\n')
    cli.env["FROSTLINE_CONFIG"] = str(config)
    cli.script.write_text(SCRIPT.replace('t = await ctx.run("timer.sleep", {"seconds": '
                                         'args["sleep"]})', 't = await ctx.run("event.wait", '
                                         '{"event": "go"})').replace(
        '"woke": t["woke_at"] >= t["due_at"]', '"go": t'))
    code, out = cli("run", str(cli.script), "--run", "r", "--args", "{}", "--runner", "process")
    assert code == 10, out
    code, out = cli("approve", "r", out["error"]["identity"], "--reason", "mine")
    assert code == 0 and out["value"]["by"] == "local" and out["by"] == "local"
    assert cli("signal", "r", "go", "--data", "7")[0] == 0  # kept for the wait ahead
    code, out = cli("resume", "r", "--runner", "process")
    assert code == 0 and out["result"] == {"approved": True, "go": 7}
    code, out = cli("show", "r")
    assert [w["answer"]["by"] for w in out["waits"]] == ["local", "local"]


def test_issue27_a_waiting_attempt_is_a_state_not_an_error(cli: Cli) -> None:
    def human(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "frostline", *args, "--store", cli.store],
                              capture_output=True, text=True, env=cli.env, timeout=120)

    first = human("run", str(cli.script), "--run", "r", "--args", '{"sleep": 3600}',
                  "--runner", "process")
    assert first.returncode == 10
    out = first.stdout + first.stderr
    assert "error" not in out.lower(), out
    assert "waiting: orchestrate/#1@:0 waits for an approval" in out
    assert "frostline approve r orchestrate/#1@:0" in out and "frostline resume r" in out
    assert cli("approve", "r", "orchestrate/#1@:0")[0] == 0
    second = human("resume", "r", "--runner", "process")
    assert second.returncode == 10
    out = " ".join((second.stdout + second.stderr).split())
    assert "error" not in out.lower(), out
    assert "waits for a timer due at" in out and "the clock" not in out
    assert "once it is due, 'frostline resume r' goes on from here" in out
    assert "workers resume it themselves" in out
