"""Provider log (evidence of executions across threads and processes) and idempotent mode."""

from __future__ import annotations

import asyncio
import json
import pathlib
import signal
import subprocess
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.errors import ProviderError
from frostline.providers.local import LocalProviders
from frostline.providers.provider_log import ProviderLog
from tests.fakes.artifacts import MemoryArtifacts, call_context

ROOT = str(pathlib.Path(__file__).resolve().parents[2])


@pytest.fixture(autouse=True)
def _no_env_log(monkeypatch):
    monkeypatch.delenv("FROSTLINE_PROVIDER_LOG", raising=False)


def run(p: LocalProviders, cap: str, payload: dict, **kw):
    return asyncio.run(p.invoke(cap, payload, call_context(kw.pop("artifacts", None), **kw)))


def test_each_execution_and_each_rejection_appends_one_line(tmp_path):
    log = tmp_path / "calls.jsonl"
    p = LocalProviders(log_path=str(log))
    run(p, "echo", {"n": 1}, identity="orchestrate/#0@:0")
    with pytest.raises(ProviderError):
        run(p, "image.generate", {"prompt": "x", "size": "999x999"}, identity="orchestrate/#1@:0")
    lines = ProviderLog(log).read()
    assert [(line["capability"], line["ok"]) for line in lines] == [
        ("echo", True), ("image.generate", False)]
    assert lines[0]["payload"] == {"n": 1} and lines[0]["identity"] == "orchestrate/#0@:0"
    assert lines[1]["error_code"] == "InvalidParameter" and lines[1]["status"] == 400
    assert lines[1]["payload"] == {"prompt": "x", "size": "999x999"}
    assert all(line["run_id"] == "run-1" for line in lines)


def test_env_var_selects_the_log_and_argument_wins(tmp_path, monkeypatch):
    env_log, arg_log = tmp_path / "env.jsonl", tmp_path / "arg.jsonl"
    monkeypatch.setenv("FROSTLINE_PROVIDER_LOG", str(env_log))
    run(LocalProviders(), "echo", {"a": 1})
    run(LocalProviders(log_path=str(arg_log)), "echo", {"b": 2})
    assert [line["payload"] for line in ProviderLog(env_log).read()] == [{"a": 1}]
    assert [line["payload"] for line in ProviderLog(arg_log).read()] == [{"b": 2}]


def test_log_lines_never_interleave_across_threads(tmp_path):
    log = ProviderLog(tmp_path / "t.jsonl")
    big = "x" * 70000  # larger than a pipe buffer: a torn write would show

    def writer(t: int) -> None:
        for i in range(25):
            log.append("echo", {"t": t, "i": i, "pad": big}, ok=True)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    lines = log.read()
    assert len(lines) == 100
    assert sorted((line["payload"]["t"], line["payload"]["i"]) for line in lines) == [
        (t, i) for t in range(4) for i in range(25)]


_WRITER = """
import asyncio, sys
from frostline.providers.local import LocalProviders
from tests.fakes.artifacts import call_context
p = LocalProviders(log_path=sys.argv[1])
async def main():
    await asyncio.gather(*(p.invoke("echo", {"proc": sys.argv[2], "i": i, "pad": "y" * 5000},
                                    call_context()) for i in range(40)))
asyncio.run(main())
"""


def test_log_is_safe_across_two_processes(tmp_path):
    log = tmp_path / "p.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(log), tag], cwd=ROOT)
             for tag in ("a", "b")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    raw = log.read_text().splitlines()
    assert len(raw) == 80
    parsed = [json.loads(line) for line in raw]  # every line is whole JSON
    assert sorted((d["payload"]["proc"], d["payload"]["i"]) for d in parsed) == [
        (tag, i) for tag in ("a", "b") for i in range(40)]
    assert len({d["pid"] for d in parsed}) == 2


def test_idempotent_mode_returns_the_first_result_without_executing(tmp_path):
    log, keys = tmp_path / "calls.jsonl", tmp_path / "keys.db"
    p = LocalProviders(log_path=str(log), idempotent=True, idempotency_path=str(keys))
    assert p.honours_idempotency_keys("image.generate")
    arts = MemoryArtifacts()
    payload = {"prompt": "mesa", "size": "512x512", "seed": 2}
    first = run(p, "image.generate", payload, artifacts=arts, key="run-1/orchestrate/#0@:0")
    again = run(p, "image.generate", payload, artifacts=arts, key="run-1/orchestrate/#0@:0")
    assert again.result == first.result
    assert again.usage["idempotent_replay"] is True
    assert len(ProviderLog(log).read()) == 1
    # A different key executes; no key at all executes.
    run(p, "image.generate", payload, artifacts=arts, key="run-1/orchestrate/#0@:1")
    run(p, "image.generate", payload, artifacts=arts)
    assert len(ProviderLog(log).read()) == 3


def test_a_reused_key_with_another_payload_is_refused(tmp_path):
    p = LocalProviders(idempotent=True, idempotency_path=str(tmp_path / "k.db"))
    run(p, "echo", {"v": 1}, key="k1")
    with pytest.raises(ProviderError) as info:
        run(p, "echo", {"v": 2}, key="k1")
    assert info.value.fields["status"] == 422
    assert info.value.fields["error_code"] == "IdempotencyKeyReused"


def test_a_failed_execution_is_not_remembered(tmp_path):
    p = LocalProviders(idempotent=True, idempotency_path=str(tmp_path / "k.db"))
    with pytest.raises(ProviderError):
        run(p, "image.generate", {"prompt": "x", "size": "1x1"}, key="k")
    assert len(p.memory or []) == 0


def test_concurrent_requests_with_one_key_execute_once(tmp_path):
    log = tmp_path / "c.jsonl"
    p = LocalProviders(log_path=str(log), latency_s=0.01, idempotent=True,
                       idempotency_path=str(tmp_path / "k.db"))

    async def main():
        return await asyncio.gather(*(p.invoke("echo", {"v": 1}, call_context(key="same"))
                                      for _ in range(5)))

    results = asyncio.run(main())
    assert {json.dumps(r.result) for r in results} == {json.dumps({"v": 1})}
    assert len(ProviderLog(log).read()) == 1


_CRASHER = """
import asyncio, json, os, signal, sys
from frostline.providers.local import LocalProviders
from tests.fakes.artifacts import MemoryArtifacts, call_context
p = LocalProviders(log_path=sys.argv[1], idempotent=True, idempotency_path=sys.argv[2])
r = asyncio.run(p.invoke("image.generate", {"prompt": "crash", "size": "512x512"},
                         call_context(MemoryArtifacts(), key="run-9/orchestrate/#0@:0")))
print(json.dumps(r.result), flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # dies before any caller could commit the result
"""


def test_remembered_keys_survive_a_killed_process(tmp_path):
    log, keys = tmp_path / "calls.jsonl", tmp_path / "keys.db"
    proc = subprocess.run([sys.executable, "-c", _CRASHER, str(log), str(keys)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    child_result = json.loads(proc.stdout)
    p = LocalProviders(log_path=str(log), idempotent=True, idempotency_path=str(keys))
    retry = run(p, "image.generate", {"prompt": "crash", "size": "512x512"},
                key="run-9/orchestrate/#0@:0")
    assert retry.result == child_result
    assert len(ProviderLog(log).read()) == 1  # executed once, in the killed process


def test_a_cancelled_waiter_does_not_leave_the_key_locked(tmp_path):
    p = LocalProviders(latency_s=0.05, idempotent=True, idempotency_path=str(tmp_path / "k.db"))

    async def main():
        first = asyncio.create_task(p.invoke("echo", {"v": 1}, call_context(key="k")))
        await asyncio.sleep(0)
        waiter = asyncio.create_task(p.invoke("echo", {"v": 1}, call_context(key="k")))
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        await first
        return await asyncio.wait_for(p.invoke("echo", {"v": 1}, call_context(key="k")), 10)

    assert asyncio.run(main()).usage["idempotent_replay"] is True


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)


@settings(max_examples=50, deadline=None)
@given(payload=st.dictionaries(st.text(max_size=10), _json, max_size=5))
def test_log_round_trips_any_json_payload(tmp_path_factory, payload):
    log = ProviderLog(tmp_path_factory.mktemp("log") / "l.jsonl")
    log.append("echo", payload, ok=True, identity="orchestrate/#0@:0")
    (line,) = log.read()
    assert line["payload"] == payload and line["ok"] is True


def test_unserialisable_values_do_not_lose_the_line(tmp_path):
    log = ProviderLog(tmp_path / "l.jsonl")
    log.append("echo", {"blob": b"\x00\x01"}, ok=True)
    assert log.read()[0]["payload"] == {"blob": "b'\\x00\\x01'"}
