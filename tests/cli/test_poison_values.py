"""Issue 26 on the command line: a value no store can hold exits 2 with a message that says
what and where, on both stores, and nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frostline.store import open_store
from tests.cli.test_exit_codes import CODE, invoke, json_error

WAITS = """
async def orchestrate(ctx, args):
    return await ctx.run("event.wait", {"event": "paid"})
"""


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FROSTLINE_PROVIDER_LOG", str(tmp_path / "provider.jsonl"))
    (tmp_path / "ok.py").write_text("async def orchestrate(ctx, args):\n    return 1\n")
    (tmp_path / "waits.py").write_text(WAITS)
    return tmp_path


def test_issue26_args_no_store_holds_exit_2_and_store_nothing(work: Path, store_url: str
                                                              ) -> None:
    for args in ('{"s": "a\\u0000b"}', '{"s": "\\ud800"}', '{"a":' * 300 + "1" + "}" * 300):
        got = invoke("run", "ok.py", "--run", "p", "--store", store_url, "--runner", "process",
                     "--args", args, "--json")
        assert got.exit_code == CODE["usage"], got.output
        error = json_error(got)
        assert error["code"] == "value_not_storable" and error["field"] == "args", error
    with open_store(store_url) as store:
        assert store.get_run("p") is None


def test_issue26_a_signal_no_store_holds_exits_2(work: Path, store_url: str) -> None:
    ran = invoke("run", "waits.py", "--run", "w", "--store", store_url, "--runner", "process")
    assert ran.exit_code == CODE["waiting"], ran.output
    for data in ('"a\\u0000b"', json.dumps(json.loads("[" * 600 + "]" * 600))):
        got = invoke("signal", "w", "paid", "--data", data, "--store", store_url, "--json")
        assert got.exit_code == CODE["usage"], got.output
        assert json_error(got)["code"] == "value_not_storable"
    plain = invoke("signal", "w", "paid", "--data", '"a\\u0000b"', "--store", store_url)
    assert plain.exit_code == CODE["usage"] and "NUL" in plain.output
    with open_store(store_url) as store:
        assert [a is None for _, a in store.list_waits("w")] == [True]

