"""An A/B report recorded in the store (`record_report`) as its owner sees it: the arms and
their instruments, the decisions and the figures, over HTTP and in a real headless Chromium."""

from __future__ import annotations

import io
import shutil

import pytest
from PIL import Image, ImageDraw

from frostline.coding.recorded import latest_report, record_report
from frostline.errors import FrostlineError
from tests.service.conftest import poll, signed_in

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
REPORT = {
    "arms": {
        "arm4": {"tasks": 10, "resolve_rate": 0.9, "tokens": 0, "wall_s": 12.5, "llm_calls": 0,
                 "illegal_actions": 0, "redundant_actions": 1, "repeated_work": 0,
                 "regressions": 0, "stale_context": 0},
        "free_agent": {"tasks": 0, "not_run": "no model is configured"},
    },
    "decisions": [{"name": "no_lattice", "verdict": "kept", "evidence": "repeated work +3.1"}],
}


def _png(text: str) -> bytes:
    img = Image.new("RGB", (320, 200), "white")
    ImageDraw.Draw(img).text((10, 90), text, fill="black")
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def test_a_report_is_a_run_of_its_owner_with_its_files(live):
    key = record_report(live.store, "ab1", REPORT, {"resolve_vs_tokens.png": _png("tokens"),
                                                    "report.md": b"# report\n"},
                        config={"arms": ["arm4"]}, owner="alice")
    assert key == "@alice/ab1"
    alice, bob = live.client(live.alice), live.client(live.bob)
    got = alice.get("/v1/runs/ab1/report").json()
    assert got["report"] == REPORT and {f["name"] for f in got["files"]} == {
        "resolve_vs_tokens.png", "report.md"}
    png = next(f for f in got["files"] if f["mime"] == "image/png")
    served = alice.get(f"/v1/runs/ab1/artifacts/{png['artifact']}")
    assert served.status_code == 200 and served.content.startswith(b"\x89PNG")
    assert bob.get("/v1/runs/ab1/report").status_code == 404
    assert bob.get(f"/v1/runs/ab1/artifacts/{png['artifact']}").status_code == 404
    assert alice.get("/v1/runs/ab1").json()["kind"] == "ab"


def test_recording_again_adds_an_attempt_and_bad_reports_record_nothing(live):
    store = live.store
    record_report(store, "ab2", REPORT, {}, owner="alice")
    second = dict(REPORT, decisions=[])
    key = record_report(store, "ab2", second, {}, owner="alice")
    assert len(store.list_attempts(key)) == 2 and latest_report(store, key)["report"] == second
    with pytest.raises(FrostlineError, match="'arms'"):
        record_report(store, "ab3", {"decisions": []}, {}, owner="alice")
    assert store.find_run("alice", "ab3") is None
    store.create_run("taken", {}, owner="alice")
    with pytest.raises(FrostlineError, match="not an A/B report"):
        record_report(store, "taken", REPORT, {}, owner="alice")
    assert store.list_attempts("@alice/taken") == []
    r = live.client(live.alice).get("/v1/runs/taken/report")
    assert r.status_code == 404 and "not an A/B report" in r.json()["error"]["message"]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_a_report_in_the_browser(live, tmp_path):
    record_report(live.store, "ab1", REPORT, {"resolve_vs_tokens.png": _png("tokens"),
                                              "instruments.png": _png("ablations")}, owner="alice")
    with signed_in(live, live.alice, CHROMIUM) as page:
        page.wait_for_selector("tr[data-run='ab1']")
        page.click("tr[data-run='ab1']")
        page.wait_for_selector("#ab-arms")
        assert page.inner_text("tr[data-arm='arm4'] td:nth-child(3)") == "0.900"
        assert "no model is configured" in page.inner_text("tr[data-arm='free_agent']")
        assert "kept" in page.inner_text("#ab-decisions")
        poll(page, "() => [...document.querySelectorAll('#ab-figures img')]"
                   ".filter(i => i.src.startsWith('blob:') && i.naturalWidth > 0).length == 2",
             "both figures loading")
