"""Issue 30: SIGKILL during the dry replay and between admission and the first dispatch leaves
nothing paid and nothing pending; the rebinding survives the restart (both stores)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from frostline.store import open_store
from tests.rebind.test_rebind_runtime import ARGS, BRAND, MOVED, paid
from tests.runtime.helpers import local, run

HOST = Path(__file__).with_name("crash_rebind_host.py")
ROOT = Path(__file__).resolve().parents[2]


def crash(url: str, mode: str, work: Path) -> None:
    script = work / "moved.py"
    script.write_text(MOVED)
    env = {"PATH": os.defpath, "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"}
    proc = subprocess.Popen([sys.executable, str(HOST), url, "tour", str(script), mode,
                             str(work)], env=env, cwd=str(ROOT), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]


@pytest.mark.parametrize("mode", ["during_dry_replay", "after_admission"])
def test_issue30_sigkill_in_the_trace_check_pays_nothing_and_leaves_nothing_pending(
        store_url, tmp_path, mode):
    with open_store(store_url) as store:
        v1 = run(store, "tour", BRAND, local(tmp_path), args=ARGS,
                 envelope={"relocation": "rebind"})
        assert v1.status == "failed"
    before = paid(tmp_path / "provider.jsonl")
    crash(store_url, mode, tmp_path)
    log = tmp_path / "provider.jsonl"
    assert paid(log) == before  # nothing was dispatched by the killed host
    with open_store(store_url) as store:
        assert store.unresolved_calls("tour") == []
        attempts = store.list_attempts("tour")
        kept = store.list_rebindings("tour")
        if mode == "during_dry_replay":
            assert len(attempts) == 1 and kept == []  # no attempt was opened
        else:
            assert attempts[-1].status == "running" and len(kept) == 3  # durable, survived
            assert {r["attempt"] for r in kept} == {attempts[-1].number}
        again = run(store, "tour", MOVED, local(tmp_path))
        assert again.status == "succeeded" and again.executed == 1 and again.replayed == 4
        assert paid(log)[len(before):] == ["image.generate"]
        if mode == "after_admission":
            assert store.get_attempt("tour", attempts[-1].number).error["code"] == "crashed"
