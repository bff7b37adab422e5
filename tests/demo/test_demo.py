"""`frostline demo` end to end on a real SQLite store, local providers and real child processes."""

from __future__ import annotations

import json

from click.testing import CliRunner
from PIL import Image

from frostline.cli.demo import demo


def test_demo_json_figures(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(demo, ["--json", "--runner", "process"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout.strip().splitlines()[-1])
    for key in ("contract_calls", "naive_calls", "replayed", "executed", "gate_stops", "images", "spend_usd"):
        assert key in data
    # attempt 1: storyboard + 4 image attempts (one rejected); attempt 2: one new image
    assert data["contract_calls"] == 6
    # naive: attempt 1 again, then a full rerun of the repaired script (storyboard + 4 images)
    assert data["naive_calls"] == 10
    assert data["replayed"] == 4 and data["executed"] == 1
    assert data["gate_stops"] == 1 and data["counterexamples"][0]["kind"] == "removed"
    assert data["images"] == 4 and data["naive_images"] == 7
    assert abs(data["spend_usd"] - (0.002 + 4 * 0.02)) < 1e-9
    # compared byte for byte: the three shots attempt 1 committed, as attempt 2 received them
    assert data["byte_identical"] is True and data["byte_identical_shots"] == 3
    out = tmp_path / "frostline-demo"
    pngs = sorted(out.glob("shot-*.png"))
    assert len(pngs) == 4
    for p in pngs:
        with Image.open(p) as im:
            im.verify()
    assert (out / "report.md").read_text().count("|") > 8
    assert (tmp_path / ".frostline").is_dir()


def test_issue30_demo_moved_repair_stops_under_stop_and_replays_three_shots_under_rebind(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(demo, ["--json", "--runner", "process"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout.strip().splitlines()[-1])
    stop, rebind = data["relocation"]["stop"], data["relocation"]["rebind"]
    assert (stop["status"], stop["provider_calls"]) == ("gate_stopped", 0)
    # the storyboard and the three committed shots replay; only the failed fourth is paid
    assert (rebind["status"], rebind["rebound"], rebind["replayed"]) == ("succeeded", 3, 4)
    assert (rebind["executed"], rebind["provider_calls"]) == (1, 1)
    assert data["contract_calls"] == 6  # the main run's figures are its own
    report = (tmp_path / "frostline-demo" / "report.md").read_text()
    assert "| rebind | succeeded | 4 | 3 | 1 | 1 |" in report


def test_demo_human_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(demo, ["--runner", "process"])
    assert res.exit_code == 0, res.output
    assert "stopped by the gate" in res.output and "naive full rerun" in res.output
    assert "relocation rebind: the moved repair is succeeded (3 moved" in res.output


def test_demo_run_belongs_to_its_owner(tmp_path, monkeypatch):
    from frostline.store import open_store

    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(demo, ["--json", "--runner", "process", "--owner", "alice"])
    assert res.exit_code == 0, res.output
    name = json.loads(res.stdout.strip().splitlines()[-1])["run_id"]  # as alice sees it
    with open_store(None, create=False) as store:
        run = store.find_run("alice", name)
        assert run is not None and run.run_id == f"@alice/{name}"
        # the demo's run, and the run of its own that shows the relocation policies
        assert sorted(r.run_id for r in store.list_runs(owner="alice")) == [
            run.run_id, f"{run.run_id}-moved"]


def test_demo_with_an_out_path_that_is_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("")
    res = CliRunner().invoke(demo, ["--json", "--runner", "process", "--out", "taken"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert json.loads(res.stdout)["error"]["code"] == "usage"


def test_demo_with_a_configuration_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "priced.toml").write_text('[capabilities."image.generate"]\nprice_usd = 0.04\n')
    res = CliRunner().invoke(demo, ["--json", "--runner", "process", "--config", "priced.toml"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout.strip().splitlines()[-1])
    assert data["contract_calls"] == 6 and data["replayed"] == 4
    assert abs(data["spend_usd"] - (0.002 + 4 * 0.04)) < 1e-9  # the configured price


def test_byte_identical_compares_the_bytes_not_the_refs():
    from frostline.demo.scenario import replayed_bytes_identical

    before = {0: b"\x89PNG one", 1: b"\x89PNG two", 2: b"\x89PNG three"}
    assert replayed_bytes_identical(before, {**before, 3: b"new"}) == [0, 1, 2]
    # one byte changed in what attempt 2 received: that shot is not identical
    assert replayed_bytes_identical(before, {0: b"\x89PNG one", 1: b"\x89PNG twO",
                                             2: b"\x89PNG three"}) == [0, 2]
    assert replayed_bytes_identical(before, {0: before[0], 2: before[2]}) == [0, 2]
    assert replayed_bytes_identical({}, before) == []


def test_the_bytes_attempt_two_received_are_attempt_ones(tmp_path):
    """The demo's figure, recomputed from outside: the PNGs written for attempt 2's shots
    are, byte for byte, the ones the store held right after attempt 1 committed them."""
    from frostline.demo.scenario import committed_shot_bytes, run_demo
    from frostline.store import open_store

    url = f"sqlite:///{tmp_path / 'demo.db'}"
    result = run_demo(store_url=url, out_dir=tmp_path / "out", runner_name="process",
                      latency_s=0.0)
    with open_store(url, create=False) as store:
        before = committed_shot_bytes(store, result.run_id, 1)
    assert sorted(before) == [0, 1, 2]
    written = {i: (tmp_path / "out" / f"shot-{i + 1}.png").read_bytes() for i in range(4)}
    assert all(written[i] == data for i, data in before.items())
    assert result.byte_identical and result.byte_identical_shots == 3


def test_issue27_the_demo_prints_the_provider_s_whole_message(tmp_path, monkeypatch):
    from frostline.providers.local import IMAGE_SIZES

    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(demo, ["--runner", "process"])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "supported values: " + ", ".join(IMAGE_SIZES) in flat
    assert "…" not in flat.split("rejected shot 4:", 1)[1].split("2.1")[0]


def test_issue29_demo_authors_its_script_from_scripted_replies(tmp_path, monkeypatch):
    """The demo's authoring step (plumbing: the replies are scripted, labelled so, no model
    is called): draft 1 is refused by the checker, its counterexample goes back, draft 2 is
    accepted and becomes attempt 1."""
    from frostline.demo.scenario import script_text

    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(demo, ["--json", "--runner", "process"])
    assert res.exit_code == 0, res.output
    authoring = json.loads(res.stdout.strip().splitlines()[-1])["authoring"]
    assert authoring["model"]["source"] == "scripted"
    first, second = authoring["rewrites"]
    assert not first["ok"] and "R05" in {v["rule"] for v in first["violations"]}
    assert second["ok"] and authoring["accepted"] == script_text("brand_video_v1.py")
    assert authoring["usage_total"]["total_tokens"] == 2828 + 3341
    res = CliRunner().invoke(demo, ["--runner", "process"])
    assert "refused by the checker" in res.output and "Scripted draft 2" in res.output
