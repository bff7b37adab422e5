"""A canary API key in the host's environment is used by the provider that needs it and appears
nowhere else: not in the store (its files, byte for byte), the events, the provider log, the
environment of the sandboxed script, nor that of an MCP server."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from frostline.capabilities import capability
from frostline.config import parse_config
from frostline.providers.registry import open_registry
from frostline.runtime.runners import ChildProcessRunner
from frostline.store import open_store
from tests.fakes.openai_server import FakeOpenAIServer
from tests.providers.test_mcp import SERVERS
from tests.runtime.helpers import run

CANARY = "sk-canary-" + os.urandom(12).hex()


def child_environments() -> list[bytes]:
    """The environments of this process's live script processes (frostline.runtime.child);
    other processes on the host may run scripts of their own."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"frostline.runtime.child" in cmdline and _parent(pid) == os.getpid():
                found.append(Path(f"/proc/{pid}/environ").read_bytes())
        except OSError:
            continue
    return found


def _parent(pid: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))


@capability("probe.sandbox_env", effect="read_only")
def probe() -> dict[str, int]:
    """Runs on the host while the script waits for its reply: the script's process is alive."""
    envs = child_environments()
    return {"children": len(envs), "canary": sum(CANARY.encode() in e for e in envs)}


SCRIPT = """
async def orchestrate(ctx, args):
    probe = await ctx.run("probe.sandbox_env", {})
    image = await ctx.run("image.generate", {"prompt": "a lighthouse", "size": "512x512"})
    env = await ctx.run("fake.environ", {})
    return {"probe": probe, "image": image["artifact"], "server_env": env["text"]}
"""


def test_a_canary_key_never_leaves_the_provider_that_uses_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CANARY_OPENAI_KEY", CANARY)
    provider_log = tmp_path / "provider.jsonl"
    db = tmp_path / "runs.db"
    with FakeOpenAIServer(api_key=CANARY) as server:
        config = parse_config({
            "providers": {
                "openai": {"kind": "openai", "base_url": server.url,
                           "api_key_env": "CANARY_OPENAI_KEY"},
                "fake": {"kind": "mcp", "command": [sys.executable, str(SERVERS / "fake.py"),
                                                    str(tmp_path / "fake.log")]},
                "probe": {"kind": "python", "module": __name__}},
            "capabilities": {"image.generate": {"provider": "openai", "model": "gpt-image-1"}}})
        with open_registry(config, log_path=provider_log) as registry, \
                open_store(f"sqlite:///{db}") as store:
            out = run(store, "c", SCRIPT, registry, catalog=registry.catalog,
                      runner=ChildProcessRunner(timeout_s=60))
            assert out.status == "succeeded", out.error
            assert out.result["probe"] == {"children": 1, "canary": 0}
            assert CANARY not in out.result["server_env"]
            events = repr([e.data for e in store.list_events("c")])
            attempts = repr(store.list_attempts("c"))
        used = [r.headers.get("authorization") for r in server.requests]
    assert used == [f"Bearer {CANARY}"]  # the provider did use it
    assert CANARY not in events and CANARY not in attempts
    assert CANARY not in provider_log.read_text()
    files = [p for p in tmp_path.glob("runs.db*") if p.is_file()]
    assert db in files
    for path in files:  # the database, its WAL and shared memory
        assert CANARY.encode() not in path.read_bytes(), path.name
