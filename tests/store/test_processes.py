"""Cross-process behaviour with real child processes: run locks and a SIGKILL after begin_call."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from frostline.contract.identity import Identity, digest
from frostline.errors import RunBusy
from frostline.store import CallStatus, Store, open_store

from .helpers import CAP, call_and_commit, ident

CHILD = Path(__file__).with_name("_child.py")
ROOT = Path(__file__).resolve().parents[2]


def spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, str(CHILD), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)


def expect_line(proc: subprocess.Popen[str], want: str) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != want:
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"child said {line!r}, expected {want!r}; stderr:\n{err}")


def test_run_lock_excludes_another_process(store_url: str) -> None:
    with spawn("lock", store_url, "r1") as child, open_store(store_url) as store:
        expect_line(child, "locked")
        with pytest.raises(RunBusy) as info, store.run_lock("r1"):
            pass
        assert info.value.fields["run_id"] == "r1"
        with store.run_lock("r2"):  # another run is free
            pass
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
        expect_line(child, "released")
        assert child.wait(timeout=30) == 0
        with store.run_lock("r1"), spawn("lock", store_url, "r1") as other:
            expect_line(other, "busy")  # free again for us, so now the child is refused
            assert other.wait(timeout=30) == 0


def test_run_lock_is_released_when_the_holder_is_killed(store_url: str) -> None:
    with spawn("lock", store_url, "r1") as child:
        expect_line(child, "locked")
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    with open_store(store_url) as store, store.run_lock("r1"):
        pass


def test_run_lock_excludes_a_second_holder_in_one_process(store: Store) -> None:
    with store.run_lock("r1"), pytest.raises(RunBusy), store.run_lock("r1"):
        pass
    with store.run_lock("r1"):  # released by the with block
        pass


@pytest.mark.parametrize("k", [1, 3])
def test_sigkill_after_begin_call_leaves_pending_records(store_url: str, k: int) -> None:
    with open_store(store_url) as store:
        store.create_run("r1", {})
        committed = call_and_commit(store, "r1", ident(0, (), "orchestrate/#9"), {"a": 1}, "kept")
    with spawn("crash", store_url, "r1", str(k)) as child:
        expect_line(child, "begun")
        assert child.wait(timeout=30) == -signal.SIGKILL
    with open_store(store_url) as store:
        pending = store.unresolved_calls("r1")
        assert sorted(c.identity for c in pending) == [
            Identity("orchestrate/#0", (i,), 0) for i in range(k)]
        assert all(c.status is CallStatus.PENDING and c.capability == CAP for c in pending)
        assert {c.digest for c in pending} == {digest({"shot": i}) for i in range(k)}
        assert {c.idempotency_key for c in pending} == {f"r1/{i}" for i in range(k)}
        assert store.list_slots("r1") == [committed]
        # The operator resolves them: one written back, the others abandoned (audited).
        first = pending[0].identity
        store.reconcile_call("r1", first, abandon=False, result={"url": "known"})
        for call in pending[1:]:
            store.reconcile_call("r1", call.identity, abandon=True)
        assert store.unresolved_calls("r1") == []
        assert store.get_slot("r1", first).result == {"url": "known"}  # type: ignore[union-attr]
        assert len(store.list_events("r1")) == k
