"""MCP servers as providers: real servers written by others (mcp-server-time, mcp-server-git on a
throwaway repository) and a small server of our own for the failure modes (a SIGKILL in the
middle of a side-effecting call, a broken outputSchema, images, tool errors).

Third-party servers run behind `mcp_servers/tap.py`, which logs every message the client sends,
so the tests count real `tools/call`s without touching the servers.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from frostline.config import parse_config
from frostline.errors import ConfigError, ProviderUnavailable
from frostline.providers.mcp import effect_of
from frostline.providers.registry import open_registry, open_registry_async
from frostline.runtime.execute import execute_async
from frostline.testing import InProcessRunner
from tests.runtime.helpers import run

pytest.importorskip("mcp")
SERVERS = Path(__file__).with_name("mcp_servers")


def tapped(log: Path, *command: str) -> list[str]:
    return [sys.executable, str(SERVERS / "tap.py"), str(log), "--", *command]


def tool_calls(log: Path) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split(" ", 1)[1] for line in lines if line.startswith("tools/call ")]


def fake_config(log: Path, **capabilities: dict[str, object]) -> dict[str, object]:
    return {"providers": {"fake": {"kind": "mcp", "command": [
        sys.executable, str(SERVERS / "fake.py"), str(log)]}},
        "capabilities": capabilities}


TIME_V1 = """
async def orchestrate(ctx, args):
    paris = await ctx.run("time.get_current_time", {"timezone": "Europe/Paris"})
    tokyo = await ctx.run("time.convert_time", {"source_timezone": "Europe/Paris",
                                                "time": "12:00", "target_timezone": "Asia/Tokyo"})
    return paris["utc_offset"]
"""
TIME_V2 = TIME_V1.replace('return paris["utc_offset"]', 'return [paris["timezone"], '
                          'tokyo["target"]["timezone"]]')


def test_a_registry_opened_on_the_attempts_loop_serves_its_calls_there(store, tmp_path):
    """`open_registry_async`: the MCP session lives on the caller's loop (no thread of its
    own, no hop per call), and attempts run on that loop call the tools as usual."""
    log = tmp_path / "tap.log"
    config = parse_config({"providers": {"time": {"kind": "mcp", "command": tapped(
        log, sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")}}})

    async def host() -> tuple[Any, Any, set[str]]:
        before = {t.name for t in threading.enumerate()}
        async with await open_registry_async(config) as registry:
            started = {t.name for t in threading.enumerate()} - before
            first = await execute_async(store, "t", textwrap.dedent(TIME_V1),
                                        providers=registry, runner=InProcessRunner(),
                                        catalog=registry.catalog)
            repaired = await execute_async(store, "t", textwrap.dedent(TIME_V2),
                                           providers=registry, runner=InProcessRunner(),
                                           catalog=registry.catalog)
        return first, repaired, started

    first, repaired, started = asyncio.run(host())
    assert not any(name.startswith("frostline-mcp") for name in started)
    assert first.status == "failed" and first.executed == 2
    assert repaired.status == "succeeded", repaired.error
    assert (repaired.replayed, repaired.executed) == (2, 0)
    assert tool_calls(log) == ["get_current_time", "convert_time"]


def test_mcp_server_time_read_only_tools_replay_in_a_repair(store, tmp_path):
    log = tmp_path / "tap.log"
    config = parse_config({"providers": {"time": {"kind": "mcp", "command": tapped(
        log, sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")}}})
    with open_registry(config) as registry:
        cap = registry.catalog["time.get_current_time"]
        assert (cap.effect, cap.price_usd, cap.input_schema["required"]) == (
            "read_only", 0.0, ["timezone"])
        assert cap.output_schema is not None and "datetime" in cap.output_schema["properties"]
        first = run(store, "t", TIME_V1, registry, catalog=registry.catalog)
        assert first.status == "failed" and first.executed == 2  # KeyError after two calls
        repaired = run(store, "t", TIME_V2, registry, catalog=registry.catalog)
        assert repaired.status == "succeeded", repaired.error
        assert (repaired.replayed, repaired.executed) == (2, 0)
        assert repaired.result == ["Europe/Paris", "Asia/Tokyo"]
    assert tool_calls(log) == ["get_current_time", "convert_time"]  # never called again


GIT_V1 = """
async def orchestrate(ctx, args):
    repo = args["repo"]
    await ctx.run("git.git_status", {"repo_path": repo})
    await ctx.run("git.git_add", {"repo_path": repo, "files": ["notes.txt"]})
    done = await ctx.run("git.git_commit", {"repo_path": repo, "message": "add notes"})
    return done["summary"]
"""
GIT_V2 = GIT_V1.replace('return done["summary"]', 'log = await ctx.run("git.git_log", '
                        '{"repo_path": repo, "max_count": 5})\n    return [done["text"], '
                        'log["text"]]')


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    for argv in (["init", "-q"], ["config", "user.email", "t@example.com"],
                 ["config", "user.name", "Test"]):
        subprocess.run(["git", *argv], cwd=path, check=True)
    (path / "notes.txt").write_text("remember the milk\n")
    return path


def test_mcp_server_git_side_effects_happen_once_across_a_repair(store, tmp_path, repo):
    log = tmp_path / "tap.log"
    config = parse_config({"providers": {"git": {"kind": "mcp", "command": tapped(
        log, sys.executable, "-m", "mcp_server_git", "--repository", str(repo))}}})
    with open_registry(config) as registry:
        effects = {n: registry.catalog[n].effect for n in
                   ("git.git_status", "git.git_add", "git.git_commit", "git.git_reset")}
        assert effects == {"git.git_status": "read_only", "git.git_add": "idempotent",
                           "git.git_commit": "side_effecting",
                           "git.git_reset": "side_effecting"}  # destructiveHint outranks
        args = {"repo": str(repo)}
        first = run(store, "g", GIT_V1, registry, catalog=registry.catalog, args=args)
        assert first.status == "failed" and first.executed == 3
        repaired = run(store, "g", GIT_V2, registry, catalog=registry.catalog)
        assert repaired.status == "succeeded", repaired.error
        assert (repaired.replayed, repaired.executed) == (3, 1)
        assert "add notes" in repaired.result[1]
    commits = subprocess.run(["git", "log", "--format=%s"], cwd=repo, check=True,
                             capture_output=True, text=True).stdout.splitlines()
    assert commits == ["add notes"]  # one commit: the repair did not commit again
    assert tool_calls(log) == ["git_status", "git_add", "git_commit", "git_log"]


SLOW = """
async def orchestrate(ctx, args):
    return await ctx.run("fake.slow_write", {"text": "ledger entry", "seconds": 30})
"""


def kill_when_started(pid_file: Path) -> threading.Thread:
    def killer() -> None:
        deadline = time.monotonic() + 30
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(int(pid_file.read_text()), signal.SIGKILL)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    return thread


def test_sigkill_in_the_middle_of_a_side_effecting_call_stops_the_run_unresolved(store, tmp_path):
    log = tmp_path / "fake.log"
    config = parse_config(fake_config(log))
    with open_registry(config) as registry:
        killer = kill_when_started(Path(str(log) + ".pid"))
        out = run(store, "k", SLOW, registry, catalog=registry.catalog)
        killer.join()
        assert out.status == "unresolved" and out.exit_code == 5
        assert out.error["cause"]["error_code"] == "ServerDied"
        assert "fake" in out.error["message"]
    (pending,) = store.unresolved_calls("k")
    with open_registry(config) as registry:  # a new process, a new server
        again = run(store, "k", SLOW, registry, catalog=registry.catalog)
        assert again.status == "unresolved" and again.provider_calls == 0
        store.reconcile_call("k", pending.identity, abandon=False, result={"text": "wrote it"})
        done = run(store, "k", SLOW, registry, catalog=registry.catalog)
        assert (done.status, done.replayed, done.executed) == ("succeeded", 1, 0)
    assert log.read_text().splitlines() == ["slow_write ledger entry"]  # sent exactly once


def test_results_images_and_errors(store, tmp_path):
    log = tmp_path / "fake.log"
    with open_registry(parse_config(fake_config(log))) as registry:
        out = run(store, "p", """
        async def orchestrate(ctx, args):
            return await ctx.run("fake.picture", {})
        """, registry, catalog=registry.catalog)
        assert out.status == "succeeded"
        assert out.result["text"] == "a red square"
        data, mime = store.get_artifact(out.result["artifacts"][0])
        assert mime == "image/png" and data.startswith(b"\x89PNG")
        for run_id, tool, code in (("b", "bad_shape", "OutputSchemaViolation"),
                                   ("f", "fail", "ToolError")):
            out = run(store, run_id, f"""
            async def orchestrate(ctx, args):
                return await ctx.run("fake.{tool}", {{}})
            """, registry, catalog=registry.catalog)
            assert out.status == "failed" and out.calls[0]["error"]["error_code"] == code
            assert store.list_slots(run_id) == []  # nothing committed


def test_the_config_renames_prices_and_reclassifies_tools(tmp_path):
    data = fake_config(tmp_path / "fake.log", **{
        "ledger.write": {"provider": "fake", "tool": "slow_write", "price_usd": 0.25},
        "fake.tick": {"effect": "side_effecting"}})
    data["providers"]["fake"]["tools"] = ["slow_write", "tick"]  # type: ignore[index]
    with open_registry(parse_config(data)) as registry:
        assert sorted(c.name for c in registry.catalog if c.name.startswith(("fake", "ledger"))) \
            == ["fake.tick", "ledger.write"]
        assert registry.catalog["ledger.write"].price_usd == 0.25
        assert registry.catalog["fake.tick"].effect == "side_effecting"
        rows = {r["name"]: r for r in registry.describe()}
        assert (rows["ledger.write"]["provider"], rows["ledger.write"]["kind"]) == ("fake", "mcp")


def test_a_missing_or_crashing_server_is_named(tmp_path):
    missing = parse_config({"providers": {"ghost": {"kind": "mcp",
                                                    "command": ["/no/such/server"]}}})
    with pytest.raises(ProviderUnavailable, match=r"'ghost'.*No such file") as info:
        open_registry(missing)
    assert info.value.fields["provider"] == "ghost"
    crash = parse_config({"providers": {"crash": {"kind": "mcp", "command": [
        sys.executable, "-c", "import sys; print('bad flag', file=sys.stderr); sys.exit(2)"]}}})
    with pytest.raises(ProviderUnavailable, match=r"'crash'.*bad flag"):
        open_registry(crash)
    unknown = parse_config({"providers": {"fake": {"kind": "mcp", "tools": ["nope"], "command": [
        sys.executable, str(SERVERS / "fake.py"), str(tmp_path / "log")]}}})
    with pytest.raises(ConfigError, match="no tool 'nope'") as info:
        open_registry(unknown)
    assert info.value.fields["key"] == "providers.fake.tools"


@pytest.mark.parametrize(("hints", "effect"), [
    (None, "side_effecting"),
    ({"read_only_hint": True, "open_world_hint": True}, "read_only"),
    ({"idempotent_hint": True}, "idempotent"),
    ({"idempotent_hint": True, "destructive_hint": True}, "side_effecting"),
    ({"idempotent_hint": True, "open_world_hint": True}, "side_effecting"),
    ({"destructive_hint": False}, "side_effecting"),
])
def test_annotations_map_to_effect_classes(hints, effect):
    from mcp.types import ToolAnnotations

    assert effect_of(None if hints is None else ToolAnnotations(**hints)) == effect


def test_the_readme_time_example_is_what_the_catalog_lists(tmp_path):
    text = textwrap.dedent(f"""
        [providers.time]
        kind = "mcp"
        command = ["{sys.executable}", "-m", "mcp_server_time"]
    """)
    path = tmp_path / "frostline.toml"
    path.write_text(text)
    from frostline.config import read_config

    with open_registry(read_config(path)) as registry:
        assert {"time.get_current_time", "time.convert_time"} <= set(registry.catalog.names())
        assert "echo" in registry.catalog  # the built-ins stay beside it


def test_a_result_is_checked_against_the_catalog_schema_after_a_restart(store, tmp_path):
    """The SDK checks structured content against the schema its live session listed, which
    stands for frostline's own check only while it is the catalog's: a server that comes back
    from a crash listing another schema is checked against the catalog's again."""
    log = tmp_path / "fake.log"
    one = 'async def orchestrate(ctx, args):\n    return await ctx.run("fake.{}", {{}})\n'
    with open_registry(parse_config(fake_config(log))) as registry:
        assert registry.catalog["fake.shifty"].output_schema["properties"]["n"] == {
            "type": "integer"}
        first = run(store, "s1", one.format("shifty"), registry, catalog=registry.catalog)
        assert first.calls[0]["error"]["error_code"] == "OutputSchemaViolation"  # the SDK's
        died = run(store, "s2", one.format("exit"), registry, catalog=registry.catalog)
        assert died.calls[0]["error"]["error_code"] == "ServerDied"
        again = run(store, "s3", one.format("shifty"), registry, catalog=registry.catalog)
        # The restarted server lists n as a string, so the SDK lets {"n": "seven"} through.
        assert len((tmp_path / "fake.log.starts").read_text().splitlines()) == 2
        assert again.status == "failed"
        assert again.calls[0]["error"]["error_code"] == "OutputSchemaViolation", again.calls
        assert "integer" in again.calls[0]["error"]["message"]
        assert store.list_slots("s1") == store.list_slots("s3") == []  # nothing committed
