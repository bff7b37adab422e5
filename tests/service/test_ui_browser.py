"""The web UI in a real headless Chromium: sign in with a token, open the demo run, read the
timeline, take a screenshot."""

from __future__ import annotations

import shutil

import pytest

from tests.service.test_ui_csp_browser import wait_until

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
        # the spend the demo's table gives is the spend the page shows
        assert page.inner_text(".stat .v").startswith(f"${result.contract.spend_usd:.3f} / ")
        outcomes = page.eval_on_selector_all("#timeline [data-outcome]", "els => els.map(e => e.dataset.outcome)")
        assert outcomes.count("replayed") == 4  # storyboard + three committed shots
        assert "failed" in outcomes and outcomes.count("executed") >= 5
        wait_until(page, "document.querySelectorAll('#artifacts img[src^=blob]').length >= 4")
        assert page.locator("#script .ln.frozen").count() >= 2
        shot = tmp_path / "run-page.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        browser.close()


LONG_ERROR = ("provider for image.generate failed: HTTP 400 InvalidParameter "
              + "x" * 260 + " at https://images.example.test/v1/generations?" + "q=" * 60)


def _run_with_long_error_and_branches_out_of_order(store) -> str:
    """A run of alice's whose timeline events arrive as parallel branches finish (@3, @1, @0,
    @2) and whose attempt failed with a long error without spaces to break at."""
    run = store.create_run("long-error", {}, owner="alice")
    store.start_attempt(run.run_id, source="async def orchestrate(ctx, args):\n    return 1\n",
                        annotated="", report={})
    store.append_event(run.run_id, "executed", {"attempt": 1, "identity": "orchestrate/#0@:0",
                                                "capability": "storyboard.plan"})
    for branch in (3, 1, 0, 2, 10):
        store.append_event(run.run_id, "executed", {
            "attempt": 1, "identity": f"orchestrate.render/#0@{branch}:0",
            "capability": "image.generate"})
    store.finish_attempt(run.run_id, 1, status="failed",
                         error={"type": "ProviderError", "code": "provider_error",
                                "message": LONG_ERROR})
    store.set_run_status(run.run_id, "failed")
    return run.name


def test_timeline_sorted_and_a_long_error_wraps_inside_its_card(live):
    from playwright.sync_api import sync_playwright

    name = _run_with_long_error_and_branches_out_of_order(live.store)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        for width in (1440, 1100, 800):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(live.url + "/")
            page.fill("#token", live.alice)
            page.click("button[type=submit]")
            page.click(f"tr[data-run='{name}']")
            page.wait_for_selector("#timeline")
            rows = page.eval_on_selector_all("#timeline tbody tr td:first-child",
                                             "els => els.map(e => e.textContent)")
            assert rows == ["orchestrate/#0@:0"] + [
                f"orchestrate.render/#0@{b}:0" for b in (0, 1, 2, 3, 10)]
            box = page.evaluate("""() => {
                const cell = document.querySelector('td.err');
                const card = cell.closest('.card');
                const c = cell.getBoundingClientRect(), k = card.getBoundingClientRect();
                const line = parseFloat(getComputedStyle(cell).lineHeight) || 16;
                return {cell_left: c.left, cell_right: c.right, cell_width: c.width,
                        card_left: k.left, card_right: k.right,
                        card_overflow: card.scrollWidth - card.clientWidth,
                        page_overflow: document.documentElement.scrollWidth - window.innerWidth,
                        lines: c.height / line, text: cell.textContent.length};
            }""")
            # inside the card: nothing sticks out of it, and the page does not scroll sideways
            assert box["card_left"] <= box["cell_left"] and box["cell_right"] <= box["card_right"], box
            assert box["card_overflow"] <= 0 and box["page_overflow"] <= 0, box
            # wrapped in lines of words, not a column of single letters
            assert box["cell_width"] >= 120, box
            assert box["lines"] <= box["text"] / 12, box
            page.close()
        browser.close()
