"""Acceptance: the RPC runner inside real bubblewrap, end to end through `execute`.

A "hostile child" replaces ``frostline.runtime.child`` in some tests: it is what a script would
become if it escaped every Python-level restriction — code in the sandbox that holds the pipe
descriptors and writes whatever frames it likes. The host must still refuse and audit.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from frostline.capabilities.envelope import Envelope
from frostline.providers.local import LocalProviders
from frostline.runtime.execute import AttemptOutcome, execute
from frostline.runtime.runners import Job
from frostline.runtime.sandbox import SandboxProfile, SandboxUnavailable
from frostline.runtime.sandbox_runner import SandboxRunner, default_runner
from frostline.store.base import Store
from tests.runtime.helpers import Gauge


def run_in_sandbox(store: Store, run_id: str, source: str, providers: Any, *,
                   runner: SandboxRunner, **kwargs: Any) -> AttemptOutcome:
    return execute(store, run_id, textwrap.dedent(source), providers=providers, runner=runner,
                   **kwargs)


@pytest.fixture
def runner(profile: SandboxProfile) -> SandboxRunner:
    return SandboxRunner(profile)


@pytest.fixture
def providers(tmp_path: Path) -> LocalProviders:
    return LocalProviders(log_path=tmp_path / "provider.jsonl")


def provider_log(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "provider.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


TEN_CALLS = """
async def orchestrate(ctx, args):
    out = []
    for i in range(10):
        r = await ctx.run("echo", {"n": i})
        out.append(r["n"])
    return out
"""


def test_script_runs_in_the_sandbox_and_every_call_is_audited(sqlite_store, runner, providers,
                                                              tmp_path):
    out = run_in_sandbox(sqlite_store, "r", TEN_CALLS, providers, runner=runner)
    assert out.status == "succeeded", out.error
    assert out.result == list(range(10))
    assert out.executed == 10 and out.provider_calls == 10
    executed = [e for e in sqlite_store.list_events("r") if e.kind == "executed"]
    assert [e.data["capability"] for e in executed] == ["echo"] * 10
    assert sorted(e.data["identity"] for e in executed) == sorted(c["identity"] for c in out.calls)
    assert [e["payload"]["n"] for e in provider_log(tmp_path)] == list(range(10))
    # a replay in a fresh sandbox serves all ten from the store
    again = run_in_sandbox(sqlite_store, "r", TEN_CALLS, providers, runner=runner)
    assert (again.executed, again.replayed, again.result) == (0, 10, list(range(10)))


def test_artifact_export_from_the_sandbox(sqlite_store, runner, providers):
    src = """
    async def orchestrate(ctx, args):
        img = await ctx.run("image.generate", {"prompt": "a red fox", "size": "512x512"})
        review = await ctx.run("review.visual", {"image": img["artifact"]})
        return {"artifact": img["artifact"], "verdict": review["verdict"]}
    """
    out = run_in_sandbox(sqlite_store, "r", src, providers, runner=runner)
    assert out.status == "succeeded", out.error
    ref = out.result["artifact"]
    data, mime = sqlite_store.get_artifact(ref)
    assert mime == "image/png" and data.startswith(b"\x89PNG\r\n\x1a\n")
    # a replay in a new sandbox returns the same content-addressed artifact
    again = run_in_sandbox(sqlite_store, "r", src, providers, runner=runner)
    assert again.replayed == 2 and again.result["artifact"] == ref


def test_budget_exhaustion_denies_further_calls(sqlite_store, runner, providers, tmp_path):
    env = {"budget": {"usd": 10.0, "calls": 3}}
    out = run_in_sandbox(sqlite_store, "r", TEN_CALLS, providers, runner=runner, envelope=env,
                         skip_checker=True)  # the static bound would refuse before running
    assert out.status == "failed"
    assert out.error["type"] == "BudgetExceeded"
    assert out.provider_calls == 3
    assert len(provider_log(tmp_path)) == 3
    assert any(e.kind == "denied" for e in sqlite_store.list_events("r"))


def test_concurrency_cap_holds_across_the_sandbox_boundary(sqlite_store, runner, providers):
    gauge = Gauge(providers, target=2, total=6)
    env = Envelope(concurrency=2)
    src = """
    async def orchestrate(ctx, args):
        jobs = [ctx.run("echo", {"n": i}) for i in range(6)]
        return await ctx.parallel(jobs)
    """
    out = run_in_sandbox(sqlite_store, "r", src, gauge, runner=runner, envelope=env)
    assert out.status == "succeeded", out.error
    assert gauge.started == 6
    assert gauge.max_in_flight == 2


# A child that speaks the protocol but lies. argv: MODE READ_FD WRITE_FD.
HOSTILE_CHILD = r'''
import json, os, sys
from frostline.runtime.rpc import Channel
mode, r, w = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ch = Channel(r, w)
job = ch.receive()
nonce = job["nonce"]
site = job["source"].split('_site="', 1)[1].split('"', 1)[0]
# (NUL-separated: as newlines, so the dump is a value a store can hold and travels all the way)
env_dump = {"environ": open("/proc/self/environ", "rb").read().decode(errors="replace")
                       .replace("\0", "\n"),
            "pid1": open("/proc/1/environ", "rb").read().decode(errors="replace")
                    .replace("\0", "\n"),
            "os": dict(os.environ)}
frames = {
    "nonce": {"type": "call", "id": 1, "nonce": "f" * 32, "site": site, "path": [],
              "capability": "echo", "payload": {"n": 1}},
    "site": {"type": "call", "id": 1, "nonce": nonce, "site": "orchestrate/#99", "path": [],
             "capability": "echo", "payload": {"n": 1}},
    "capability": {"type": "call", "id": 1, "nonce": nonce, "site": site, "path": [],
                   "capability": "image.generate", "payload": {"prompt": "x", "size": "512x512"}},
    "secret": {"type": "call", "id": 1, "nonce": nonce, "site": site, "path": [],
               "capability": "echo", "payload": {"n": 1, "leak": env_dump}},
}
ch.send(frames[mode])
reply = ch.receive()
print("hostile child got", json.dumps(reply)[:300], env_dump, flush=True)
ch.send({"type": "log", "nonce": nonce, "text": json.dumps(env_dump)})
ch.send({"type": "done", "nonce": nonce, "ok": True, "result": {"reply": reply, "env": env_dump}})
'''

ONE_CALL = """
async def orchestrate(ctx, args):
    r = await ctx.run("echo", {"n": 1})
    return r
"""


class HostileRunner(SandboxRunner):
    def __init__(self, profile: SandboxProfile, mode: str) -> None:
        super().__init__(profile)
        self.mode = mode

    def child_argv(self, read_fd: int, write_fd: int) -> list[str]:
        return ["-c", HOSTILE_CHILD, self.mode, str(read_fd), str(write_fd)]


@pytest.mark.parametrize("mode", ["nonce", "site", "capability"])
def test_forged_frames_are_rejected_and_audited(sqlite_store, profile, providers, tmp_path, mode):
    out = run_in_sandbox(sqlite_store, "r", ONE_CALL, providers,
                         runner=HostileRunner(profile, mode))
    assert out.status == "failed", out
    assert out.provider_calls == 0 and provider_log(tmp_path) == []
    rejected = [e for e in sqlite_store.list_events("r") if e.kind == "rpc_rejected"]
    assert [e.data["reason"] for e in rejected] == [mode]


def test_secret_never_reaches_results_logs_or_store(sqlite_store, sqlite_url, profile, providers,
                                                    secret_env, tmp_path, caplog):
    out = run_in_sandbox(sqlite_store, "r", ONE_CALL, providers,
                         runner=HostileRunner(profile, "secret"))
    # The hostile child did everything it could: read every environment and shipped it out
    # through a payload, a log frame, stdout and its result.
    assert out.status == "succeeded", out.error
    assert "PYTHONPATH" in json.dumps(out.result["env"])  # the dump really happened
    everything = json.dumps(out.to_dict()) + out.logs + caplog.text
    assert secret_env not in everything
    assert "OPENAI_API_KEY" not in everything
    db = Path(sqlite_url.removeprefix("sqlite:///"))
    sqlite_store.close()
    for path in db.parent.iterdir():
        if path.is_file():
            assert secret_env.encode() not in path.read_bytes(), path


def test_the_sandbox_child_uses_the_inherited_pipes_only(sqlite_store, profile, providers):
    """The hostile child's reply arrived: the two pipe fds work inside bubblewrap."""
    out = run_in_sandbox(sqlite_store, "r", ONE_CALL, providers,
                         runner=HostileRunner(profile, "secret"))
    assert out.result["reply"]["ok"] is True and out.result["reply"]["result"]["n"] == 1
    # and it ran inside: its environment is exactly the sandbox's minimal one
    from frostline.runtime.sandbox import minimal_environment

    seen = out.result["env"]["os"]
    assert {k: v for k, v in seen.items() if k not in ("PWD", "LC_CTYPE")} == \
        minimal_environment(profile)


def test_wall_clock_timeout_stops_the_script(sqlite_store, profile, providers):
    short = dataclasses.replace(profile, wall_seconds=1.0)
    src = """
    async def orchestrate(ctx, args):
        x = 0
        for i in range(10 ** 9):
            x = x + i
        return x
    """
    out = run_in_sandbox(sqlite_store, "r", src, providers, runner=SandboxRunner(short),
                         skip_checker=True)
    assert out.status == "failed"
    assert out.error["type"] == "Timeout"


def test_unavailable_sandbox_runs_nothing(sqlite_store, providers, tmp_path):
    broken = SandboxRunner(SandboxProfile(bwrap="frostline-no-such-bwrap"))
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        asyncio.run(broken.run(Job(ONE_CALL, None), None))  # type: ignore[arg-type]
    # Through execute, the attempt fails with the reason and the fix; nothing ran.
    out = run_in_sandbox(sqlite_store, "r", ONE_CALL, providers, runner=broken)
    assert out.status == "failed" and out.error["type"] == "SandboxUnavailable"
    assert "apt-get install bubblewrap" in out.error["message"]
    assert out.provider_calls == 0 and provider_log(tmp_path) == []


def test_default_runner_is_the_sandbox_on_linux():
    assert isinstance(default_runner(), SandboxRunner)
