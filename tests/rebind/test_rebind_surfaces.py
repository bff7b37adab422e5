"""Issue 30: every surface says a moved call was replayed, and from where: `frostline show`
(text and JSON), `frostline run`'s table, the HTTP API's timeline, and the web UI."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from frostline.cli import main
from frostline.contract.records import run_key
from frostline.runtime.execute import execute
from frostline.testing import InProcessRunner
from tests.rebind.test_rebind_runtime import ARGS, BRAND, MOVED
from tests.runtime.helpers import local

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def moved_run(store, tmp_path, owner=None) -> str:
    key = run_key(owner, "tour")
    p = local(tmp_path)
    execute(store, key, BRAND, args=ARGS, envelope={"relocation": "rebind"}, providers=p,
            runner=InProcessRunner(), owner=owner)
    out = execute(store, key, MOVED, providers=p, runner=InProcessRunner(), owner=owner)
    assert out.status == "succeeded", out.error
    return key


def test_issue30_show_says_replayed_moved_from(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    from frostline.store import open_store

    with open_store(url) as store:
        moved_run(store, tmp_path)
    shown = CliRunner().invoke(main, ["show", "tour", "--store", url, "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    moved = data["moved_from"]
    assert len(moved) == 3 and all(v["2"].startswith("orchestrate.render/#0@") for v in
                                   moved.values())
    text = CliRunner().invoke(main, ["show", "tour", "--store", url])
    assert text.output.count("(moved from orchestrate.render/#0@") == 3


def test_issue30_the_api_timeline_names_where_a_replay_was_moved_from(live_any, tmp_path):
    moved_run(live_any.store, tmp_path, owner="alice")
    with live_any.client(live_any.alice) as c:
        body = c.get("/v1/runs/tour").json()
    rows = [r for r in body["timeline"]["rows"] if r.get("moved_from")]
    assert len(rows) == 3 and all(r["attempts"]["2"] == "replayed" for r in rows)
    assert all(r["moved_from"]["2"].startswith("orchestrate.render/#0@") for r in rows)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_issue30_the_ui_timeline_says_replayed_moved_from(live, tmp_path):
    from tests.service.conftest import poll, signed_in

    moved_run(live.store, tmp_path, owner="alice")
    with signed_in(live, live.alice, CHROMIUM) as page:
        page.wait_for_selector("tr[data-run='tour']")
        page.click("tr[data-run='tour']")
        page.wait_for_selector("#timeline")
        poll(page, "() => document.querySelectorAll('#timeline [data-outcome]').length > 0",
             "the timeline")
        cells = page.eval_on_selector_all("#timeline [data-outcome]",
                                          "els => els.map(e => e.textContent)")
    assert sum("replayed (moved from orchestrate.render/#0@" in c for c in cells) == 3
