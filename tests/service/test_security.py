"""Attacks on the HTTP surface by a client that holds a valid token, over real HTTP.

Each test reproduces an attack that once worked and pins that it no longer does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sys as _sys
import threading
import time
from pathlib import Path

import pytest

from frostline.store import open_store
from tests.service.conftest import serving

FAILS = '''
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    b = await ctx.run("image.generate", {"prompt": "x", "size": args["size"]})
    return b["artifact"]
'''


def failed_run(c, run_id: str = "victim") -> str:
    r = c.post("/v1/runs", json={"script": FAILS, "args": {"size": "7x7"}, "run_id": run_id},
               params={"wait": 60})
    assert r.status_code == 200 and r.json()["outcome"]["status"] == "failed", r.text
    return run_id


def hostile_specs(store) -> list[str]:
    specs = [f"recorded:{f}" for f in store.local_files()]
    specs += ["recorded:/dev/zero", "recorded:/proc/self/fd/2", "recorded:/etc/shadow",
              "replay:/etc/passwd", "recorded:../../../../etc/passwd", "recorded:x.json",
              "replay:" + "a" * 200]
    return specs


def test_the_repair_route_never_opens_a_path_the_client_names(live_any):
    with live_any.client(live_any.alice) as c:
        run_id = failed_run(c)
        for spec in hostile_specs(live_any.store):
            started = time.monotonic()
            r = c.post(f"/v1/runs/{run_id}/repair", json={"model": spec})
            assert r.status_code == 422, (spec, r.status_code, r.text)
            assert "configured on the server" in r.text
            assert time.monotonic() - started < 10, f"{spec} held the request"
        # the run is untouched: still one failed attempt, nothing added
        detail = c.get(f"/v1/runs/{run_id}").json()
        assert [a["status"] for a in detail["attempts"]] == ["failed"]


def test_committed_runs_survive_the_old_store_file_attack(tmp_path):
    """Opening the store's SQLite file through the repair route used to drop the server's
    locks; the next process then deleted its WAL and runs acknowledged as finished were lost."""
    db = tmp_path / "api.db"
    with serving(open_store(f"sqlite:///{db}")) as live, live.client(live.alice) as c:
        run_id = failed_run(c)
        for f in (db, db.with_name("api.db-wal"), db.with_name("api.db-shm")):
            r = c.post(f"/v1/runs/{run_id}/repair", json={"model": f"recorded:{f}"})
            assert r.status_code == 422
        acknowledged = c.post("/v1/runs", json={"script": FAILS, "args": {"size": "512x512"},
                                                "run_id": "acknowledged"}, params={"wait": 60})
        assert acknowledged.status_code == 200
        # another process touches the store while the server still runs
        other = subprocess.run(
            [sys.executable, "-c", "import sys; from frostline.store import open_store; "
             "s = open_store(sys.argv[1]); print(len(s.list_runs(limit=1000))); s.close()",
             f"sqlite:///{db}"], capture_output=True, text=True, timeout=60,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
        assert other.returncode == 0, other.stderr
    with open_store(f"sqlite:///{db}") as reopened:  # after the server's restart
        run = reopened.find_run("alice", "acknowledged")
        assert run is not None
        assert reopened.list_attempts(run.run_id)[0].status == "succeeded"


# --- nothing but the store opens the store's files ---------------------------------------------

_watch: dict[str, object] = {"paths": frozenset(), "seen": []}
_hook_lock = threading.Lock()


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event not in ("open", "os.open", "sqlite3.connect", "sqlite3.connect/handle"):
        return
    paths = _watch["paths"]
    if not paths or not args or not isinstance(args[0], str | bytes | os.PathLike):
        return
    try:
        target = os.path.realpath(os.fsdecode(args[0]))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return
    if target in paths:  # type: ignore[operator]
        frame = _sys._getframe(1)
        module = ""
        while frame is not None:
            name = frame.f_globals.get("__name__", "")
            if name.startswith("frostline."):
                module = name
                break
            frame = frame.f_back
        with _hook_lock:
            _watch["seen"].append((event, target, module))  # type: ignore[union-attr]


_sys.addaudithook(_audit)


def test_the_store_files_are_opened_only_by_the_store(tmp_path):
    db = tmp_path / "api.db"
    with serving(open_store(f"sqlite:///{db}")) as live:
        files = {os.path.realpath(f) for f in live.store.local_files()}
        _watch["paths"], _watch["seen"] = frozenset(files), []
        try:
            with live.client(live.alice) as c:
                run_id = failed_run(c)
                for spec in hostile_specs(live.store):
                    c.post(f"/v1/runs/{run_id}/repair", json={"model": spec})
                fixed = FAILS.replace('args["size"]', '"512x512"')
                c.post(f"/v1/runs/{run_id}/attempts", json={"script": fixed}, params={"wait": 60})
                for path in ("", "/certificate", "/orphans", "/events?follow=false"):
                    c.get(f"/v1/runs/{run_id}{path}")
                c.get("/v1/runs")
                c.get("/")
        finally:
            _watch["paths"] = frozenset()
    seen = list(_watch["seen"])  # type: ignore[call-overload]
    assert seen, "the audit hook saw no opening of the store at all: the test watches nothing"
    outside = [s for s in seen if not str(s[2]).startswith("frostline.store.")]
    assert outside == []
    assert {s[0] for s in seen} <= {"sqlite3.connect", "sqlite3.connect/handle"}


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "openai:org/model-1.5"])
def test_configured_endpoints_are_still_accepted_by_validation(live, spec):
    with live.client(live.alice) as c:
        run_id = failed_run(c)
        r = c.post(f"/v1/runs/{run_id}/repair", json={"model": spec})
        # no endpoint is reachable in the test: the model call fails, the spec was not refused
        assert r.status_code != 422, r.text


def test_run_names_are_per_principal_not_an_existence_oracle(live_any):
    """Creating another principal's run id used to answer 409 "exists" while GET answered 404."""
    with live_any.client(live_any.alice) as alice, live_any.client(live_any.bob) as bob:
        a = alice.post("/v1/runs", json={"script": FAILS, "args": {"size": "512x512"},
                                         "run_id": "r1"}, params={"wait": 60})
        b = bob.post("/v1/runs", json={"script": FAILS, "args": {"size": "7x7"}, "run_id": "r1"},
                     params={"wait": 60})
        assert (a.status_code, b.status_code) == (200, 200), (a.text, b.text)
        assert a.json()["run_id"] == b.json()["run_id"] == "r1"  # the key never shows
        assert alice.get("/v1/runs/r1").json()["attempts"][0]["status"] == "succeeded"
        assert bob.get("/v1/runs/r1").json()["attempts"][0]["status"] == "failed"
        assert [r["run_id"] for r in bob.get("/v1/runs").json()["runs"]] == ["r1"]
        again = bob.post("/v1/runs", json={"script": FAILS, "args": {}, "run_id": "r1"})
        assert again.status_code == 409  # only the caller's own names are ever "taken"
        for path in ("", "/certificate", "/orphans", "/events?follow=false"):
            assert alice.get(f"/v1/runs/@bob%2Fr1{path}").status_code == 404


ALICE_DRAWS = '''
async def orchestrate(ctx, args):
    img = await ctx.run("image.generate", {"prompt": "alice's secret", "size": "512x512",
                                           "seed": 7})
    return img["artifact"]
'''

BOB_BORROWS = '''
async def orchestrate(ctx, args):
    echoed = await ctx.run("echo", {"ref": args["ref"]})
    try:
        seen = await ctx.run("review.visual", {"image": args["ref"]})
    except Exception as exc:
        seen = {"refused": str(exc)}
    return {"ref": echoed["ref"], "seen": seen}
'''


def test_another_principals_artifact_is_not_found(live_any):
    """Bob's run echoed alice's ref and then downloaded her PNG; `review.visual` on her ref
    returned her image's statistics."""
    with live_any.client(live_any.alice) as alice, live_any.client(live_any.bob) as bob:
        a = alice.post("/v1/runs", json={"script": ALICE_DRAWS, "run_id": "art"},
                       params={"wait": 60}).json()
        ref = a["outcome"]["result"]
        assert alice.get(f"/v1/runs/art/artifacts/{ref}").status_code == 200
        b = bob.post("/v1/runs", json={"script": BOB_BORROWS, "args": {"ref": ref},
                                       "run_id": "borrow"}, params={"wait": 60}).json()
        assert b["outcome"]["status"] == "succeeded", b
        assert b["outcome"]["result"]["ref"] == ref  # a script chooses its results...
        refused = b["outcome"]["result"]["seen"]["refused"]
        missing = "sha256:" + "0" * 64
        c = bob.post("/v1/runs", json={"script": BOB_BORROWS, "args": {"ref": missing},
                                       "run_id": "missing"}, params={"wait": 60}).json()
        # ...but a provider reads alice's ref exactly as it reads a ref that does not exist
        assert refused.replace(ref, "REF") == c["outcome"]["result"]["seen"]["refused"].replace(
            missing, "REF")
        stolen = bob.get(f"/v1/runs/borrow/artifacts/{ref}")
        nothing = bob.get(f"/v1/runs/missing/artifacts/{missing}")
        assert stolen.status_code == nothing.status_code == 404
        assert stolen.json()["error"]["message"].replace(ref, "REF").replace("borrow", "RUN") == \
            nothing.json()["error"]["message"].replace(missing, "REF").replace("missing", "RUN")
