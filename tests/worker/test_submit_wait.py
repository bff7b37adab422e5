"""Issue 27: `frostline submit --wait` with no live worker says so (and how to start one)
instead of waiting silently, and `--timeout` bounds the wait; the job stays queued."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from frostline.embedded.jobs import job_state
from tests.worker.conftest import ROOT

pytestmark = pytest.mark.postgres

SCRIPT = 'async def orchestrate(ctx, args):\n    return await ctx.run("echo", {"x": 1})\n'


def _submit(tmp_path, url, *extra):
    (tmp_path / "s.py").write_text(SCRIPT)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "frostline", "submit", "s.py", "--run", "r1",
                           "--store", url, *extra], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


def test_issue27_submit_wait_without_a_worker_says_so_and_times_out(tmp_path, pg_store_url,
                                                                   pg_store):
    done = _submit(tmp_path, pg_store_url, "--wait", "--timeout", "3")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no worker is alive" in done.stderr
    assert "frostline worker --store" in done.stderr
    assert "still queued after 3 s" in done.stderr
    ticket = done.stderr.split("job ", 2)[2].split()[0]
    state = job_state(pg_store, "r1", ticket)
    assert state is not None and not state.done  # still queued for a worker to take


def test_issue27_submit_wait_timeout_json_error(tmp_path, pg_store_url):
    done = _submit(tmp_path, pg_store_url, "--wait", "--timeout", "0", "--json")
    assert done.returncode == 1
    err = json.loads(done.stdout)["error"]
    assert err["code"] == "wait_timeout" and err["run_id"] == "r1" and err["job"]


def test_issue27_submit_timeout_needs_wait(tmp_path, pg_store_url):
    done = _submit(tmp_path, pg_store_url, "--timeout", "3")
    assert done.returncode == 2 and "--wait" in done.stderr
