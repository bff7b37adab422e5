"""Issue 30: `frostline submit --relocation` reaches a real worker process over PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.worker.conftest import ROOT, eventually

pytestmark = pytest.mark.postgres
TOUR = Path(ROOT) / "examples" / "tour"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "frostline", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_issue30_submit_relocation_reaches_the_worker(pg_store_url, tmp_path):
    out = open(tmp_path / "worker.out", "wb")  # noqa: SIM115 -- the process owns it
    worker = subprocess.Popen(
        [sys.executable, "-m", "frostline", "worker", "--store", pg_store_url, "--runner",
         "process", "--concurrency", "1", "--heartbeat", "0.5", "--name", "rebind-w"],
        cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    envelope = tmp_path / "envelope.json"
    envelope.write_text(json.dumps({"relocation": "stop"}))
    try:
        eventually(lambda: (tmp_path / "worker.out").read_text(), what="health line")
        first = _cli("submit", str(TOUR / "brand.py"), "--run", "tour", "--store",
                     pg_store_url, "--args", '{"brief": "x"}', "--envelope", str(envelope),
                     "--wait", "--json")
        assert json.loads(first.stdout)["outcome"]["status"] == "failed", first.stderr
        stopped = _cli("submit", str(TOUR / "moved.py"), "--run", "tour", "--store",
                       pg_store_url, "--wait", "--json")
        assert json.loads(stopped.stdout)["outcome"]["status"] == "gate_stopped"
        moved = _cli("submit", str(TOUR / "moved.py"), "--run", "tour", "--store",
                     pg_store_url, "--relocation", "rebind", "--wait", "--json")
        outcome = json.loads(moved.stdout)["outcome"]
        assert (outcome["status"], outcome["replayed"], outcome["executed"]) == (
            "succeeded", 4, 1), moved.stdout + moved.stderr
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(30)
        out.close()
