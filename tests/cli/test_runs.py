"""`frostline runs`, `frostline artifacts` and run owners from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.cli import main
from frostline.contract.records import LOCAL_PRINCIPAL
from frostline.store import open_store

TWO_SHOTS = """
async def orchestrate(ctx, args):
    board = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 2})
    images = []
    for i in range(2):
        images.append(await ctx.run("image.generate",
                                    {"prompt": board["shots"][i]["prompt"], "size": "512x512"}))
    return [image["artifact"] for image in images]
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_url: str) -> dict[str, str]:
    monkeypatch.setenv("FROSTLINE_RUNNER", "process")
    monkeypatch.setenv("FROSTLINE_PROVIDER_LOG", str(tmp_path / "provider.jsonl"))
    monkeypatch.setenv("FROSTLINE_STORE", store_url)
    (tmp_path / "s.py").write_text(TWO_SHOTS)
    return {"script": str(tmp_path / "s.py"), "url": store_url, "dir": str(tmp_path)}


def cli(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_runs_from_the_command_line_have_an_owner(env: dict[str, str]) -> None:
    code, local = cli("run", env["script"], "--run", "r1", "--args", '{"brief": "fox"}')
    assert code == 0 and local["run_id"] == "r1"
    code, alices = cli("run", env["script"], "--run", "r1", "--owner", "alice",
                       "--args", '{"brief": "fox"}')
    assert code == 0 and alices["run_id"] == "@alice/r1"
    with open_store(env["url"]) as store:
        assert store.get_run("r1").owner == LOCAL_PRINCIPAL
        assert store.get_run("@alice/r1").owner == "alice"
    code, listed = cli("runs")
    assert code == 0
    assert [(r["run_id"], r["name"], r["owner"]) for r in listed["runs"]] == [
        ("@alice/r1", "r1", "alice"), ("r1", "r1", LOCAL_PRINCIPAL)]
    code, only = cli("runs", "--owner", "alice")
    assert [r["run_id"] for r in only["runs"]] == ["@alice/r1"]
    code, shown = cli("show", "@alice/r1")
    assert code == 0 and shown["committed"] == 3


def test_artifacts_lists_and_exports_what_the_run_produced(env: dict[str, str]) -> None:
    code, outcome = cli("run", env["script"], "--run", "r1", "--args", '{"brief": "fox"}')
    assert code == 0
    code, listed = cli("artifacts", "r1")
    assert code == 0 and listed["out_dir"] is None
    refs = [a["ref"] for a in listed["artifacts"]]
    assert sorted(refs) == sorted(outcome["result"])
    assert all(a["mime"] == "image/png" and a["bytes"] > 0 and "path" not in a
               for a in listed["artifacts"])
    assert all(len(a["identities"]) == 1 for a in listed["artifacts"])
    out = Path(env["dir"]) / "exported"
    code, exported = cli("artifacts", "r1", "-o", str(out))
    assert code == 0
    with open_store(env["url"]) as store:
        for item in exported["artifacts"]:
            data, _ = store.get_artifact(item["ref"])
            path = Path(item["path"])
            assert path.parent == out and path.suffix == ".png" and path.read_bytes() == data
    human = CliRunner().invoke(main, ["artifacts", "r1", "-o", str(out)])
    assert human.exit_code == 0 and "2 file(s) written" in human.output


def test_a_run_without_artifacts_and_an_empty_store(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "echo.py").write_text(
        'async def orchestrate(ctx, args):\n    return await ctx.run("echo", {"n": 1})\n')
    assert cli("run", str(tmp_path / "echo.py"), "--run", "e")[0] == 0
    assert cli("artifacts", "e")[1]["artifacts"] == []
    human = CliRunner().invoke(main, ["runs", "--owner", "nobody"])
    assert human.exit_code == 0 and "no runs of nobody" in human.output


def test_a_token_for_the_local_principal_sees_the_command_lines_runs(env: dict[str, str]):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from frostline.service.app import create_app

    assert cli("run", env["script"], "--run", "r1", "--args", '{"brief": "fox"}')[0] == 0
    code, token = cli("token", "create", LOCAL_PRINCIPAL)
    assert code == 0 and token["principal"] == LOCAL_PRINCIPAL
    with open_store(env["url"]) as store, TestClient(create_app(store)) as client:
        runs = client.get("/v1/runs", headers={"Authorization": f"Bearer {token['token']}"})
    assert runs.status_code == 200
    assert [r["run_id"] for r in runs.json()["runs"]] == ["r1"]
