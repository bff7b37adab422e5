"""`frostline gate`, `frostline cert`, `frostline orphans` through click's CliRunner."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.cli.contract import cert_command, gate_command, orphans_command
from frostline.providers.local import LocalProviders
from frostline.runtime.execute import execute
from frostline.store import open_store
from frostline.testing import InProcessRunner

SCRIPTS = Path(__file__).parent / "scripts"
FAILING = (Path(__file__).parent.parent / "repair" / "replies" / "failing.py").read_text()
FIXED = FAILING.replace('"999x999"', '"1024x1024"')
RELOCATED = '''
async def gen(ctx, p, size):
    return await ctx.run("image.generate", {"prompt": p, "size": size})


async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
    return [await gen(ctx, plan["shots"][i]["prompt"], "1024x1024") for i in range(4)]
'''


def _run(store_url: str, run_id: str, source: str) -> str:
    with open_store(store_url) as store:
        return execute(store, run_id, source, args={"brief": "fox"},
                       providers=LocalProviders(log_path=None), runner=InProcessRunner()).status


@pytest.fixture
def failed_run(store_url: str) -> str:
    assert _run(store_url, "e5", FAILING) == "failed"
    return store_url


def invoke(command, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(command, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def write(tmp_path: Path, text: str, name: str = "cand.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---------------------------------------------------------------------------------------- gate

def test_gate_accepts_a_tail_fix(failed_run: str, tmp_path: Path) -> None:
    code, out = invoke(gate_command, "e5", write(tmp_path, FIXED), "--store", failed_run, "--json")
    assert code == 0 and json.loads(out) == {"accepted": True, "counterexamples": []}
    code, out = invoke(gate_command, "e5", write(tmp_path, FIXED), "--store", failed_run)
    assert code == 0 and "accepted" in out and "2 frozen site(s)" in out


def test_gate_stops_a_relocation(failed_run: str, tmp_path: Path) -> None:
    # the callsite gate (relocation stop); under rebind, the default, see tests/rebind
    code, out = invoke(gate_command, "e5", write(tmp_path, RELOCATED), "--store", failed_run,
                       "--relocation", "stop", "--json")
    assert code == 3
    data = json.loads(out)
    assert data["accepted"] is False
    (ce,) = data["counterexamples"]
    assert ce["kind"] == "removed" and ce["site"] == "orchestrate/for#0.body/#0"
    assert ce["capability"] == "image.generate" and ce["line"] == 9
    assert ce["source_line"].strip().startswith("image = await ctx.run(")
    assert ce["nearest"]["site"] == "gen/#0"
    code, out = invoke(gate_command, "e5", write(tmp_path, RELOCATED), "--store", failed_run,
                       "--relocation", "stop")
    assert code == 3 and "gate stopped the candidate" in out and "removed" in out


def test_gate_bad_input(failed_run: str, tmp_path: Path) -> None:
    code, out = invoke(gate_command, "e5", write(tmp_path, "async def orchestrate(ctx, args:\n"),
                       "--store", failed_run, "--json")
    assert code == 2 and "does not parse" in json.loads(out)["error"]["message"]
    code, out = invoke(gate_command, "nope", write(tmp_path, FIXED), "--store", failed_run, "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "run_not_found"
    code, _ = invoke(gate_command, "e5", str(tmp_path / "missing.py"), "--store", failed_run)
    assert code == 2


def test_gate_reads_stdin(failed_run: str) -> None:
    result = CliRunner().invoke(gate_command, ["e5", "-", "--store", failed_run, "--json",
                                               "--relocation", "stop"], input=RELOCATED)
    assert result.exit_code == 3


# ---------------------------------------------------------------------------------------- cert

def test_cert_show_and_verify(failed_run: str) -> None:
    code, out = invoke(cert_command, "e5", "--store", failed_run, "--json")
    data = json.loads(out)
    assert code == 0 and data["persisted"] is True and data["attempt"] == 1
    assert data["entries"] == 4 and len(data["chain_digest"]) == 64
    assert data["frozen_sites"] == {"orchestrate/#0": "storyboard.plan",
                                    "orchestrate/for#0.body/#0": "image.generate"}
    assert data["consistent"] is True and data["differences"] == []
    code, out = invoke(cert_command, "e5", "--verify", "--store", failed_run, "--json")
    data = json.loads(out)
    assert code == 0 and data["consistent"] is True and data["differences"] == []
    assert data["certificate"]["chain_digest"] == data["chain_digest"]
    code, out = invoke(cert_command, "e5", "--verify", "--store", failed_run)
    assert code == 0 and "consistent" in out
    code, out = invoke(cert_command, "e5", "--store", failed_run)
    assert code == 0 and "persisted after attempt 1" in out and "entries: 4" in out


def test_cert_verify_reports_a_tampered_slot(sqlite_url: str) -> None:
    assert _run(sqlite_url, "e5", FAILING) == "failed"
    db = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER slots_immutable_update")
        conn.execute("UPDATE slots SET digest = 'forged' WHERE occurrence = 1 "
                     "AND site = 'orchestrate/for#0.body/#0'")
    code, out = invoke(cert_command, "e5", "--verify", "--store", sqlite_url, "--json")
    data = json.loads(out)
    assert code == 1 and data["consistent"] is False
    assert [(d["kind"], d["identity"]) for d in data["differences"]] == [
        ("changed", "orchestrate/for#0.body/#0@:1")]
    assert data["deep"] is False
    # the fast check compares the fields; the deep one also recomputes the link digests
    code, out = invoke(cert_command, "e5", "--deep", "--store", sqlite_url, "--json")
    data = json.loads(out)
    assert code == 1 and data["deep"] is True and len(data["differences"]) == 1
    assert data["chain_digest"] != data["certificate"]["chain_digest"]
    code, out = invoke(cert_command, "e5", "--verify", "--store", sqlite_url)
    assert code == 1 and "changed" in out and "forged" in out
    # without --verify: the persisted certificate and the same differences, exit 0
    code, out = invoke(cert_command, "e5", "--store", sqlite_url, "--json")
    data = json.loads(out)
    assert code == 0 and data["consistent"] is False and len(data["differences"]) == 1


def test_cert_deep_hashes_the_results_again(sqlite_url: str) -> None:
    """A result edited behind the store's back: the fast check (what the store recorded at
    commit time) cannot see it; --deep recomputes every digest from the stored results."""
    assert _run(sqlite_url, "e5", FAILING) == "failed"
    db = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER slots_immutable_update")
        conn.execute("UPDATE slots SET result = '{\"forged\": true}' WHERE occurrence = 1 "
                     "AND site = 'orchestrate/for#0.body/#0'")
    code, out = invoke(cert_command, "e5", "--verify", "--store", sqlite_url, "--json")
    assert code == 0 and json.loads(out)["consistent"] is True
    code, out = invoke(cert_command, "e5", "--deep", "--store", sqlite_url, "--json")
    data = json.loads(out)
    assert code == 1 and data["consistent"] is False and data["deep"] is True
    (diff,) = data["differences"]
    assert diff["identity"] == "orchestrate/for#0.body/#0@:1"
    assert set(diff["fields"]) == {"result_digest", "entry_digest"}
    code, out = invoke(cert_command, "e5", "--deep", "--store", sqlite_url)
    assert code == 1 and "every result hashed again" in out and "result_digest" in out


def test_cert_bad_input(sqlite_url: str) -> None:
    assert _run(sqlite_url, "e5", FAILING) == "failed"
    code, out = invoke(cert_command, "nope", "--store", sqlite_url, "--json")
    assert code == 2 and "no run 'nope'" in json.loads(out)["error"]["message"]
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        conn.execute("UPDATE certificates SET body = '[]'")
    for extra in ([], ["--verify"]):
        code, out = invoke(cert_command, "e5", *extra, "--store", sqlite_url, "--json")
        err = json.loads(out)["error"]
        assert code == 1 and err["code"] == "certificate_corrupted"
        assert "expected a JSON object" in err["message"]


def test_cert_of_a_run_without_certificate(sqlite_url: str) -> None:
    with open_store(sqlite_url) as store:
        store.create_run("blank", {})
    code, out = invoke(cert_command, "blank", "--store", sqlite_url, "--json")
    assert code == 0 and json.loads(out)["persisted"] is False and json.loads(out)["entries"] == 0


# ------------------------------------------------------------------------------------- orphans

ECHO_V1 = '''
async def orchestrate(ctx, args):
    for i in range(3):
        await ctx.run("echo", {"n": i})
    return await ctx.run("image.generate", {"prompt": "x", "size": "1x1"})
'''


def test_orphans_per_attempt(store_url: str) -> None:
    assert _run(store_url, "o1", ECHO_V1) == "failed"
    v2 = ECHO_V1.replace("range(3)", "range(2)").replace('"1x1"', '"512x512"')
    assert _run(store_url, "o1", v2) == "succeeded"  # the default orphan policy warns
    code, out = invoke(orphans_command, "o1", "--store", store_url, "--json")
    assert code == 0
    assert json.loads(out) == {"run_id": "o1", "attempts": [
        {"attempt": 1, "status": "failed", "orphans": []},
        {"attempt": 2, "status": "succeeded", "orphans": ["orchestrate/for#0.body/#0@:2"]}]}
    code, out = invoke(orphans_command, "o1", "--store", store_url)
    assert code == 0 and "orchestrate/for#0.body/#0@:2" in out
    code, _ = invoke(orphans_command, "nope", "--store", store_url)
    assert code == 2
