"""The child-process runner over real pipes, including frames forged by a hostile child."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from frostline.runtime.rpc import MAX_LOG
from frostline.runtime.runners import ChildProcessRunner
from frostline.testing import InProcessRunner
from tests.runtime.helpers import Flaky, echo_ns, local, run

ECHO = """
async def orchestrate(ctx, args):
    return await ctx.run("echo", {"n": 1})
"""
FORGER = Path(__file__).with_name("forger.py")


@pytest.fixture
def store(sqlite_store):
    """Process and pipe behaviour does not depend on the backend: SQLite only."""
    return sqlite_store


class Forger(ChildProcessRunner):
    """Runs the forger instead of the real child: the overridable command at work."""

    def __init__(self, mode: str, **kw):
        super().__init__(**kw)
        self.mode = mode

    def child_argv(self, read_fd: int, write_fd: int) -> list[str]:
        return [self.python, str(FORGER), self.mode, str(read_fd), str(write_fd)]


MIXED = """
async def orchestrate(ctx, args):
    async def shot(i):
        return await ctx.run("echo", {"n": i, "fail": i == 2})

    results = []
    try:
        results = await ctx.parallel([shot(i) for i in range(3)])
    except Exception as exc:
        results.append(str(exc))
    winner = await ctx.race([ctx.run("echo", {"n": 10}), ctx.run("echo", {"n": 11})])
    return [results, winner["n"] in [10, 11]]
"""


def test_child_process_runs_the_same_script_as_in_process(store, tmp_path):
    p = Flaky(local(tmp_path))
    child = run(store, "child", MIXED, p, runner=ChildProcessRunner(timeout_s=60))
    inproc = run(store, "inproc", MIXED, p, runner=InProcessRunner())
    assert child.status == inproc.status == "succeeded"
    assert child.result == inproc.result
    assert child.result[0][0].startswith("echo: rejected")
    assert [c["identity"] for c in child.calls][:3] == [c["identity"] for c in inproc.calls][:3]
    again = run(store, "child", MIXED, p, runner=ChildProcessRunner(timeout_s=60))
    assert again.result == child.result and again.executed == 0


def test_a_divergence_reaches_the_child_as_an_uncatchable_stop(store, tmp_path):
    src = """
    async def orchestrate(ctx, args):
        try:
            await ctx.run("echo", {"n": args["n"]})
        except Exception:
            return "swallowed"
        return "ok"
    """
    p = local(tmp_path)
    assert run(store, "r", src, p, args={"n": 1}, runner=ChildProcessRunner()).status == "succeeded"
    out = run(store, "r", src, p, args={"n": 2}, runner=ChildProcessRunner())
    assert out.status == "diverged" and out.result is None


def test_honest_frames_are_admitted(store, tmp_path):
    out = run(store, "r", ECHO, local(tmp_path), runner=Forger("honest"))
    assert out.status == "succeeded" and out.executed == 1
    assert out.result["ok"] is True and out.result["result"] == {"n": 1}


@pytest.mark.parametrize(("mode", "reason"), [
    ("wrong_nonce", "nonce"), ("unknown_site", "site"), ("wrong_capability", "capability"),
    ("bad_path", "path"),
])
def test_forged_frames_are_rejected_audited_and_never_dispatched(store, tmp_path, mode, reason):
    out = run(store, "r", ECHO, local(tmp_path), runner=Forger(mode))
    assert out.status == "failed" and out.error["code"] == "rpc_rejected"
    assert out.error["reason"] == reason
    assert out.provider_calls == 0 and echo_ns(tmp_path / "provider.jsonl") == []
    assert not (tmp_path / "provider.jsonl").exists()
    events = [e for e in store.list_events("r") if e.kind == "rpc_rejected"]
    assert [e.data["reason"] for e in events] == [reason]


def test_the_child_gets_a_minimal_environment(store, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    out = run(store, "r", ECHO, local(tmp_path), runner=Forger("env"))
    env = out.result
    assert "OPENAI_API_KEY" not in env and "HOME" not in env
    assert set(env) <= {"PATH", "LANG", "PYTHONPATH", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE",
                        "PYTHONNOUSERSITE", "LC_CTYPE"}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_wall_clock_timeout_kills_the_whole_process_group(store, tmp_path):
    out = run(store, "r", ECHO, local(tmp_path), runner=Forger("hang", timeout_s=2))
    assert out.status == "failed" and out.error["type"] == "Timeout"
    pid = int(out.logs.split("grandchild ")[1].split()[0])
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_a_child_that_stops_reading_cannot_stall_the_host(store, tmp_path):
    out = run(store, "r", ECHO, local(tmp_path), runner=Forger("no_read", timeout_s=3))
    assert out.status == "failed" and out.error["type"] == "Timeout"
    # every call it managed to dispatch completed and committed on the host
    assert len(store.list_slots("r")) == out.executed == 40


def test_an_oversized_frame_is_a_protocol_error(store, tmp_path):
    out = run(store, "r", ECHO, local(tmp_path), runner=Forger("oversized", timeout_s=30))
    assert out.status == "failed" and out.error["type"] == "ChildExited"
    assert "exceeds the cap" in out.error["message"]


def test_log_output_is_capped(store, tmp_path):
    out = run(store, "r", ECHO, local(tmp_path), runner=Forger("log_flood"))
    assert out.status == "succeeded" and MAX_LOG <= len(out.logs) <= MAX_LOG + 200


def test_child_command_runs_the_package_module():
    runner = ChildProcessRunner()
    argv = runner.child_argv(5, 6)
    assert argv[0] == sys.executable and argv[-3:] == ["frostline.runtime.child", "5", "6"]
    assert os.path.isdir(os.path.join(runner.child_env()["PYTHONPATH"], "frostline"))


@pytest.mark.parametrize("runner", [InProcessRunner(), ChildProcessRunner()],
                         ids=["in-process", "child"])
def test_a_result_over_the_cap_has_its_own_error(store, tmp_path, runner):
    big = """
async def orchestrate(ctx, args):
    return "x" * (4 * 1024 * 1024 + 1)
"""
    out = run(store, "r", big, local(tmp_path), runner=runner)
    assert out.status == "failed"
    assert (out.error["code"], out.error["type"]) == ("result_too_large", "ResultTooLarge")
    assert out.error["cap"] == 4 * 1024 * 1024 and out.error["size"] == 4 * 1024 * 1024 + 3
    assert "4 MiB" in out.error["message"] and str(out.error["size"]) in out.error["message"]
