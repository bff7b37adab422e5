"""The waits in the web UI, in a real headless Chromium (issue 16): a waiting run is listed as
waiting, its approval is shown with the payload in view, and approving it from the page lets
the service resume the run. The page's approve acts for the signed-in token: where the run's
owner may answer its own approvals (self_approval, issue 26) it resumes the run; by default the
page shows the refusal, which says who may."""

from __future__ import annotations

import shutil
import time

import pytest

from frostline.capabilities.approvals import ApprovalPolicy
from frostline.store import open_store
from tests.service.conftest import serving, signed_in

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="chromium is not installed (apt-get install chromium)")

SCRIPT = """
async def orchestrate(ctx, args):
    ok = await ctx.run("human.approve", {"ask": "delete the staging bucket?",
                                        "data": {"bucket": "staging-7"}})
    return ok["approved"]
"""


def _status(live, run: str) -> str:
    with live.client(live.alice) as c:
        return str(c.get(f"/v1/runs/{run}").json()["status"])


@pytest.fixture
def live(tmp_path):
    """The API over SQLite where a run's owner may answer its own approvals."""
    with serving(open_store(f"sqlite:///{tmp_path / 'ui.db'}"),
                 approvals=ApprovalPolicy.build(None, True, {})) as running:
        yield running


def test_approve_a_waiting_run_from_the_page(live, tmp_path):
    with live.client(live.alice) as c:
        for name in ("keep", "drop"):
            c.post("/v1/runs", json={"script": SCRIPT, "run_id": name}, params={"wait": 60})
    deadline = time.monotonic() + 60
    while {_status(live, "keep"), _status(live, "drop")} != {"waiting"}:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with signed_in(live, live.alice, CHROMIUM) as page:
        page.wait_for_selector("#waiting-runs [data-waiting='keep']")
        page.click("#waiting-runs [data-waiting='drop']")
        page.wait_for_selector("#waits .wait button.reject")
        assert "staging-7" in page.inner_text("#waits .payload")  # the payload is in view
        page.fill("#waits .reason", "not today")
        page.click("#waits button.reject")
        page.wait_for_selector("#waits .answer:has-text('rejected by alice: not today')")
        page.goto(live.url + "/#/runs/keep")
        page.wait_for_selector("#waits button.approve")
        page.click("#waits button.approve")
        page.wait_for_selector("#waits .answer:has-text('approved by alice')")
        shot = tmp_path / "waits.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
    deadline = time.monotonic() + 60
    while (_status(live, "keep"), _status(live, "drop")) != ("succeeded", "succeeded"):
        assert time.monotonic() < deadline, (_status(live, "keep"), _status(live, "drop"))
        time.sleep(0.05)
    with live.client(live.alice) as c:
        results = {n: c.get(f"/v1/runs/{n}").json()["attempts"][-1]["result"]
                   for n in ("keep", "drop")}
    assert results == {"keep": True, "drop": False}


def test_issue26_the_page_shows_who_may_approve_when_the_owner_may_not(tmp_path):
    with serving(open_store(f"sqlite:///{tmp_path / 'ui.db'}")) as live:
        with live.client(live.alice) as c:
            c.post("/v1/runs", json={"script": SCRIPT, "run_id": "keep"}, params={"wait": 60})
        deadline = time.monotonic() + 60
        while _status(live, "keep") != "waiting":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with signed_in(live, live.alice, CHROMIUM) as page:
            # Open the run from the waiting list once the signed-in page has drawn it (a
            # navigation sent before then raced the page's first render and could be lost).
            page.click("#waiting-runs [data-waiting='keep']")
            page.wait_for_selector("#waits button.approve")
            page.click("#waits button.approve")
            page.wait_for_selector("#waits .error:has-text('may not answer its own approval')")
            assert "role approver" in page.inner_text("#waits .error")
        with live.client(live.alice) as c:
            assert [w["answer"] for w in c.get("/v1/runs/keep/waits").json()["waits"]] == [None]


def test_issue27_the_timeline_shows_the_waiting_call(live):
    with live.client(live.alice) as c:
        c.post("/v1/runs", json={"script": SCRIPT, "run_id": "held"}, params={"wait": 60})
    deadline = time.monotonic() + 60
    while _status(live, "held") != "waiting":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with signed_in(live, live.alice, CHROMIUM) as page:
        page.click("#waiting-runs [data-waiting='held']")
        cell = page.wait_for_selector("#timeline [data-outcome='waiting']")
        assert cell.inner_text() == "waiting"
        row = page.inner_text("#timeline tbody tr:has([data-outcome='waiting'])")
        assert "orchestrate/#0@:0" in row and "human.approve" in row
