"""`frostline ab` through click's CliRunner: the JSON contract, the results folder, clear errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.cli.ab import ab
from frostline.coding.arms import ALL_NAMES
from frostline.coding.interface import INSTRUMENT_KEYS
from frostline.coding.tasks.split import SEAL_FILE, TASKS_FILE
from tests.coding.ab_fixtures import sealed_tasks

DOUBLE = "tests.coding.ab_doubles:scripted_solve_double"


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    return sealed_tasks(tmp_path / "tasks", 6)


def _invoke(*args: str) -> tuple[int, dict]:
    r = CliRunner().invoke(ab, [*args, "--json"])
    return r.exit_code, json.loads(r.stdout)


def test_json_maps_every_arm_to_its_nine_instruments(tasks_dir: Path, tmp_path: Path) -> None:
    code, out = _invoke("--tasks", str(tasks_dir), "--solver", DOUBLE, "--jobs", "2",
                        "--faults", "0.2", "--out", str(tmp_path / "res"))
    assert code == 0
    assert list(out["arms"]) == list(ALL_NAMES)
    for name in ("free_agent", "no_single_l"):
        assert out["arms"][name]["not_run"] and out["arms"][name]["tasks"] == 0
    assert "model" in out["arms"]["free_agent"]["not_run"]
    for name in ("arm1", "arm2", "arm3", "arm4", "no_gates", "no_allowlists", "no_lattice",
                 "no_failure_edges"):
        assert set(out["arms"][name]) == {"tasks", *INSTRUMENT_KEYS}
        assert out["arms"][name]["tasks"] == 6
    assert {d["verdict"] for d in out["decisions"]} <= {"kept", "removed", "deleted", "undecided"}
    assert out["run"]["faults"]["rate"] == 0.2
    files = {p.name for p in (tmp_path / "res").iterdir()}
    assert {"report.md", "report.json", "outcomes.jsonl", "resolve_vs_tokens.png",
            "resolve_vs_wall.png", "ablations.png"} <= files


def test_limit_and_arms_select(tasks_dir: Path, tmp_path: Path) -> None:
    code, out = _invoke("--tasks", str(tasks_dir), "--solver", DOUBLE, "--limit", "3",
                        "--arms", "arm4,no_lattice", "--no-figures", "--out", str(tmp_path / "r"))
    assert code == 0 and out["arms"]["arm4"]["tasks"] == 3
    assert out["arms"]["arm1"]["not_run"] == "not asked for (--arms)"
    assert not (tmp_path / "r" / "ablations.png").exists()


def test_a_configured_model_runs_the_model_arms(tasks_dir: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "frostline.toml"
    config.write_text('[models.local]\nbase_url = "http://127.0.0.1:9/v1"\n'
                      'api_key_env = "AB_TEST_KEY"\nmodel = "m"\n')
    code, out = _invoke("--tasks", str(tasks_dir), "--config", str(config), "--no-figures")
    assert code == 2 and "AB_TEST_KEY" in out["error"]["message"]  # the key is not set
    monkeypatch.setenv("AB_TEST_KEY", "k")
    code, out = _invoke("--tasks", str(tasks_dir), "--solver", DOUBLE, "--config", str(config),
                        "--arms", "free_agent,arm4", "--no-figures", "--out", str(tmp_path / "r"))
    assert code == 0 and out["arms"]["free_agent"]["tasks"] == 6
    assert out["arms"]["free_agent"]["tokens"] > 0 and out["run"]["model"] == "local"
    code, out = _invoke("--tasks", str(tasks_dir), "--config", str(config), "--model", "other")
    assert code == 2 and "no [models.other]" in out["error"]["message"]


def _break_seal(d: Path) -> None:
    rows = [json.loads(x) for x in (d / TASKS_FILE).read_text().splitlines()]
    held = next(r for r in rows if r["split"] == "heldout")
    held["hidden"] = ["tests/other.py::test_easier"]
    (d / TASKS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize(("case", "message"), [
    ("missing", "does not exist"), ("split", "unknown split"), ("seal", "seal"),
    ("no_seal", "no seal.json"), ("arm", "unknown arm"), ("faults", "--faults")])
def test_bad_input_exits_2_with_the_error_shape(tasks_dir: Path, tmp_path: Path, case: str,
                                               message: str) -> None:
    args = ["--tasks", str(tasks_dir), "--solver", DOUBLE, "--no-figures"]
    if case == "missing":
        args[1] = str(tmp_path / "absent")
    elif case == "split":
        args += ["--split", "train"]
    elif case == "seal":
        _break_seal(tasks_dir)
    elif case == "no_seal":
        (tasks_dir / SEAL_FILE).unlink()
    elif case == "arm":
        args += ["--arms", "arm4,arm9"]
    else:
        args += ["--faults", "1.5"]
    code, out = _invoke(*args)
    assert code == 2
    assert set(out["error"]) >= {"code", "message"} and message in out["error"]["message"]
    if case == "seal":
        assert out["error"]["reason"] == "tasks_altered"
    r = CliRunner().invoke(ab, args)
    assert r.exit_code == 2 and "error:" in r.stderr


def test_missing_matplotlib_is_a_clear_error(tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out = _invoke("--tasks", str(tasks_dir), "--solver", DOUBLE)
    assert code == 2 and out["error"]["code"] == "missing_extra"
    assert "frostline[ab]" in out["error"]["message"]


def test_record_keeps_the_report_in_the_store(tasks_dir: Path, tmp_path: Path) -> None:
    from frostline.coding.recorded import latest_report
    from frostline.store import open_store

    url = f"sqlite:///{tmp_path}/s.db"
    code, out = _invoke("--tasks", str(tasks_dir), "--solver", DOUBLE, "--arms", "arm4",
                        "--out", str(tmp_path / "r"), "--record", "ab1", "--owner", "alice",
                        "--store", url)
    assert code == 0 and out["recorded"] == "@alice/ab1"
    with open_store(url) as store:
        kept = latest_report(store, "@alice/ab1")
        assert kept is not None and kept["report"]["arms"] == out["arms"]
        assert {f["name"] for f in kept["files"]} == {"report.md", "report.json",
                                                      "resolve_vs_tokens.png",
                                                      "resolve_vs_wall.png", "ablations.png",
                                                      "precision.png"}
