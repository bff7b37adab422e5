"""The crash window with real processes killed by SIGKILL (the paper's E4, Proposition 5).

A host process runs an attempt and dies at a chosen point after the durable attempt record.
The next attempt must detect every unresolved side-effecting call before any provider runs,
and stay blocked until an operator reconciles: a known result replays with zero executions;
an abandoned call executes exactly once, and after that it is an ordinary replay.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from frostline.providers.local import LocalProviders
from frostline.store import open_store
from tests.runtime.helpers import logged, run

HOST = Path(__file__).with_name("crash_host.py")
ROOT = Path(__file__).resolve().parents[2]

ONE_IMAGE = """
async def orchestrate(ctx, args):
    img = await ctx.run("image.generate", {"prompt": "a red kite", "size": "512x512"})
    return img["artifact"]
"""
THREE_IMAGES = """
async def orchestrate(ctx, args):
    async def shot(i):
        return await ctx.run("image.generate", {"prompt": "kite " + str(i), "size": "512x512"})

    images = await ctx.parallel([shot(i) for i in range(3)])
    return [img["artifact"] for img in images[:3]]
"""
ONE_REVIEW = """
async def orchestrate(ctx, args):
    r = await ctx.run("text.generate", {"prompt": "describe a kite"})
    return r["text"]
"""


def host(url: str, run_id: str, source: str, mode: str, work: Path) -> subprocess.Popen[bytes]:
    script = work / f"{run_id}-{mode}.py"
    script.write_text(source)
    env = {"PATH": os.defpath, "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"}
    return subprocess.Popen([sys.executable, str(HOST), url, run_id, str(script), mode,
                             str(work)], env=env, cwd=str(ROOT), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def killed(proc: subprocess.Popen[bytes]) -> None:
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]


def wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def provider(work: Path) -> LocalProviders:
    return LocalProviders(log_path=work / "provider.jsonl")


def executions(work: Path, capability: str = "image.generate") -> int:
    return sum(1 for e in logged(work / "provider.jsonl") if e["capability"] == capability)


@pytest.fixture
def url(store_url):
    return store_url


def test_crash_after_the_attempt_write_blocks_until_reconciled_with_a_result(url, tmp_path):
    killed(host(url, "r", ONE_IMAGE, "before_provider", tmp_path))
    with open_store(url) as store:
        (pending,) = store.unresolved_calls("r")
        assert store.get_attempt("r", 1).status == "running"  # the host never finished it
        out = run(store, "r", ONE_IMAGE, provider(tmp_path))
        assert out.status == "unresolved" and out.exit_code == 5
        assert out.error["identities"] == [str(pending.identity)]
        crashed = store.get_attempt("r", 1)
        assert crashed.status == "failed" and crashed.error["code"] == "crashed"
        assert executions(tmp_path) == 0
        # the operator knows the provider did produce the image: write it back
        ref = store.put_artifact(b"\x89PNG\r\n\x1a\nknown-image", "image/png")
        store.reconcile_call("r", pending.identity, abandon=False,
                             result={"artifact": ref, "mime": "image/png", "size": "512x512"})
        out = run(store, "r", ONE_IMAGE, provider(tmp_path))
        assert (out.status, out.replayed, out.executed, out.result) == ("succeeded", 1, 0, ref)
        assert executions(tmp_path) == 0


def test_crash_during_a_sleeping_handler_then_abandon_executes_exactly_once(url, tmp_path):
    proc = host(url, "r", ONE_IMAGE, "sleep", tmp_path)
    with open_store(url) as store:
        wait_for(lambda: len(store.unresolved_calls("r")) == 1)
        proc.kill()  # the timeout: the parent kills the host mid-handler
        killed(proc)
        (pending,) = store.unresolved_calls("r")
        assert run(store, "r", ONE_IMAGE, provider(tmp_path)).status == "unresolved"
        store.reconcile_call("r", pending.identity, abandon=True)
        out = run(store, "r", ONE_IMAGE, provider(tmp_path))
        assert (out.status, out.executed) == ("succeeded", 1)
        again = run(store, "r", ONE_IMAGE, provider(tmp_path))
        assert (again.status, again.replayed, again.executed) == ("succeeded", 1, 0)
        assert executions(tmp_path) == 1
        kinds = [e.kind for e in store.list_events("r")]
        assert "call.abandoned" in kinds and "unresolved" in kinds


def test_three_parallel_attempts_behind_a_barrier_are_all_detected(url, tmp_path):
    killed(host(url, "r", THREE_IMAGES, "barrier3", tmp_path))
    with open_store(url) as store:
        pending = sorted(c.identity for c in store.unresolved_calls("r"))
        assert len(pending) == 3  # k = 3
        for _ in range(2):  # none re-executes before reconciliation, however often we try
            out = run(store, "r", THREE_IMAGES, provider(tmp_path))
            assert out.status == "unresolved" and len(out.error["identities"]) == 3
        assert executions(tmp_path) == 0
        ref = store.put_artifact(b"\x89PNG\r\n\x1a\nbranch-0", "image/png")
        store.reconcile_call("r", pending[0], abandon=False,
                             result={"artifact": ref, "mime": "image/png", "size": "512x512"})
        for ident in pending[1:]:
            store.reconcile_call("r", ident, abandon=True)
        out = run(store, "r", THREE_IMAGES, provider(tmp_path))
        assert (out.status, out.replayed, out.executed) == ("succeeded", 1, 2)
        assert out.result[0] == ref
        again = run(store, "r", THREE_IMAGES, provider(tmp_path))
        assert (again.replayed, again.executed) == (3, 0)
        assert executions(tmp_path) == 2


def test_an_idempotent_provider_closes_the_window_automatically(url, tmp_path):
    killed(host(url, "r", ONE_IMAGE, "after_provider", tmp_path))
    assert executions(tmp_path) == 1  # the provider ran; the commit was lost
    keyed = LocalProviders(log_path=tmp_path / "provider.jsonl", idempotent=True,
                           idempotency_path=tmp_path / "keys.db")
    with open_store(url) as store:
        out = run(store, "r", ONE_IMAGE, keyed)
        assert (out.status, out.executed) == ("succeeded", 1)
        assert executions(tmp_path) == 1  # same key: the provider answered from memory
        retry = [e.data for e in store.list_events("r") if e.kind == "unresolved_retry"]
        assert retry and retry[0]["reason"] == "idempotency key"
        assert [str(s.identity) for s in store.list_slots("r")] == [out.calls[0]["identity"]]
        # The crashed dispatch is resolved by the retry's commit: nothing is left pending.
        assert store.unresolved_calls("r") == []
        calls = store.list_calls("r")
        assert [c.status.value for c in calls] == ["reconciled", "committed"]
        resolved = [e.data for e in store.list_events("r") if e.kind == "call.reconciled"]
        assert resolved == [{"identity": out.calls[0]["identity"], "call_ids": [calls[0].call_id],
                             "capability": calls[0].capability, "digest": calls[0].digest,
                             "by": "retry", "committed_call": calls[1].call_id}]


def test_a_read_only_capability_may_re_execute_after_a_crash(url, tmp_path):
    killed(host(url, "r", ONE_REVIEW, "before_provider", tmp_path))
    with open_store(url) as store:
        out = run(store, "r", ONE_REVIEW, provider(tmp_path))
        assert (out.status, out.executed) == ("succeeded", 1)
        assert executions(tmp_path, "text.generate") == 1
        assert store.unresolved_calls("r") == []  # the re-execution resolved the crashed one
