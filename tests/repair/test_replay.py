"""Replayed model replies, and the policy that decides which files may be read at all."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from frostline.errors import DefinitionError
from frostline.repair import ModelError, ReplayClient, ReplayPolicy, Usage
from frostline.store import open_store

MSGS = [{"role": "system", "content": "write code"}, {"role": "user", "content": "fix it"}]


def write(tmp_path, data) -> str:
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def test_replay_client_replays_in_order_then_runs_out(tmp_path):
    path = write(tmp_path, {"model": "stored-model", "note": "two rewrites", "responses": [
        {"content": "first", "usage": {"prompt_tokens": 5, "completion_tokens": 1}},
        {"content": "second"},
    ]})
    c = ReplayClient(path, policy=ReplayPolicy((tmp_path,)))
    assert c.note == "two rewrites" and c.remaining == 2
    a, b = c.complete(MSGS), c.complete([*MSGS, {"role": "user", "content": "again"}])
    assert (a.text, b.text) == ("first", "second") and a.model == "stored-model"
    assert c.usage == Usage(5, 1, 6) and c.calls == 2 and c.remaining == 0
    assert c.requests[1][-1]["content"] == "again"
    with pytest.raises(ModelError) as info:
        c.complete(MSGS)
    assert info.value.fields["kind"] == "exhausted"
    assert "2 stored replies" in info.value.message and path in info.value.message


def test_replay_client_replays_errors(tmp_path):
    c = ReplayClient(policy=ReplayPolicy((tmp_path,)), path=write(tmp_path, {"responses": [
        {"error": {"kind": "rate_limited", "message": "slow down", "status": 429}},
        {"content": "ok"}]}))
    with pytest.raises(ModelError) as info:
        c.complete(MSGS)
    assert info.value.fields["kind"] == "rate_limited"
    assert c.complete(MSGS).text == "ok"


@pytest.mark.parametrize("content", [
    "not json", "[]", '{"responses": 3}', '{"responses": [{"usage": {}}]}',
    '{"responses": [{"content": "x", "usage": 5}]}', '{"responses": [7]}',
])
def test_replay_client_rejects_bad_files(tmp_path, content):
    with pytest.raises(DefinitionError):
        ReplayClient(write(tmp_path, content), policy=ReplayPolicy((tmp_path,)))


def test_replay_client_missing_file(tmp_path):
    with pytest.raises(DefinitionError, match="does not exist"):
        ReplayClient(str(tmp_path / "nope.json"), policy=ReplayPolicy((tmp_path,)))


def test_replies_say_whether_they_are_scripted_or_recorded(tmp_path):
    scripted = ReplayClient(write(tmp_path, {"responses": [{"content": "x"}]}),
                            policy=ReplayPolicy((tmp_path,)))
    assert scripted.source == "scripted"
    recorded = ReplayClient(write(tmp_path, {"source": "recorded", "model": "m-1",
                                             "recorded_at": "2026-11-30", "responses": []}),
                            policy=ReplayPolicy((tmp_path,)))
    assert (recorded.source, recorded.model) == ("recorded", "m-1")
    for bad in ({"source": "recorded", "responses": []},  # recorded by what, when?
                {"source": "made-up", "responses": []}):
        with pytest.raises(DefinitionError):
            ReplayClient(write(tmp_path, bad), policy=ReplayPolicy((tmp_path,)))


def test_a_file_outside_the_allowed_directories_is_never_opened(tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = tmp_path / "outside.json"
    outside.write_text('{"responses": []}')
    (allowed / "link.json").symlink_to(outside)  # a symlink does not carry a file inside
    policy = ReplayPolicy((allowed,))
    for path in (outside, allowed / "link.json", allowed / ".." / "outside.json", "/etc/shadow",
                 "/proc/self/environ"):
        with pytest.raises(DefinitionError, match="outside the directories"):
            policy.read(path)


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/null", "/proc/self/fd/2"])
def test_devices_and_proc_entries_are_refused_without_blocking(special):
    policy = ReplayPolicy((os.sep,))  # even with everything allowed
    with pytest.raises(DefinitionError):
        policy.read(special)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    done = []
    reader = threading.Thread(target=lambda: done.append(_refused(ReplayPolicy((tmp_path,)), fifo)))
    reader.start()
    reader.join(timeout=10)
    assert done == [True], "reading a FIFO blocked or was accepted"


def _refused(policy, path) -> bool:
    try:
        policy.read(path)
    except DefinitionError as exc:
        return "not a regular file" in exc.message
    return False


def test_size_cap(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2048)
    with pytest.raises(DefinitionError, match="cap"):
        ReplayPolicy((tmp_path,), max_bytes=1024).read(big)
    assert len(ReplayPolicy((tmp_path,), max_bytes=4096).read(big)) == 2048


def test_the_store_files_are_never_opened_as_replies(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.create_run("r1", {})
        policy = ReplayPolicy.for_cli(cwd=tmp_path, store_files=store.local_files())
        for name in ("runs.db", "runs.db-wal", "runs.db-shm"):
            if (tmp_path / name).exists():
                with pytest.raises(DefinitionError, match="file of the run store"):
                    policy.read(tmp_path / name)
        # the store still works after the refusals, and its WAL is intact
        store.create_run("r2", {})
        time.sleep(0)
        assert store.get_run("r1") is not None


def test_for_cli_reads_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("FROSTLINE_REPLAY_DIRS", f"{tmp_path}{os.pathsep}/nonexistent")
    policy = ReplayPolicy.for_cli(cwd=tmp_path / "elsewhere")
    assert tmp_path in policy.dirs
    path = write(tmp_path, {"responses": [{"content": "x"}]})
    assert ReplayClient(path, policy=policy).complete(MSGS).text == "x"
