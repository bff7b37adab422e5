"""The web UI in a real headless Chromium: sign in with a token, open the demo run, read the
timeline, take a screenshot."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


def test_login_demo_run_timeline(live, tmp_path):
    from playwright.sync_api import sync_playwright

    from frostline.demo.scenario import run_demo

    # The demo run, recorded in the served store and owned by alice.
    result = run_demo(store_url=live.store.url, out_dir=tmp_path / "demo", runner_name="process",
                      latency_s=0.0, owner="alice")
    run_id = result.run_id
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(live.url + "/")
        page.fill("#token", "wrong")
        page.click("button[type=submit]")
        page.wait_for_selector("#login-error:has-text('not accepted')")
        page.fill("#token", live.alice)
        page.click("button[type=submit]")
        page.wait_for_selector(f"tr[data-run='{run_id}']")
        page.click(f"tr[data-run='{run_id}']")
        page.wait_for_selector("#timeline")
        assert page.inner_text("#run-id") == run_id
        outcomes = page.eval_on_selector_all("#timeline [data-outcome]", "els => els.map(e => e.dataset.outcome)")
        assert outcomes.count("replayed") == 4  # storyboard + three committed shots
        assert "failed" in outcomes and outcomes.count("executed") >= 5
        page.wait_for_function("document.querySelectorAll('#artifacts img[src^=blob]').length >= 4")
        assert page.locator("#script .ln.frozen").count() >= 2
        shot = tmp_path / "run-page.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        browser.close()
