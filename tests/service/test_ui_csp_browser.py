"""The web UI under its Content-Security-Policy, in a real headless Chromium: the pages render
(styles, the spend bar, artifact images from blob: URLs) with no policy violation, and a
script injected into the page is refused."""

from __future__ import annotations

import shutil

import pytest

from frostline.service.headers import UI_POLICY

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")

# Every violation the page sees, recorded by the page itself (registered before any script).
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
    (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));
"""


def test_the_ui_renders_under_its_policy(live, tmp_path):
    from playwright.sync_api import sync_playwright

    from frostline.demo.scenario import run_demo

    run_id = run_demo(store_url=live.store.url, out_dir=tmp_path / "demo", runner_name="process",
                      latency_s=0.0, owner="alice").run_id
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.add_init_script(RECORD_VIOLATIONS)
        console = []
        page.on("console", lambda m: console.append(m.text))
        response = page.goto(live.url + "/")
        assert response is not None and response.headers["content-security-policy"] == UI_POLICY
        page.fill("#token", live.alice)
        page.click("button[type=submit]")
        page.click(f"tr[data-run='{run_id}']")
        page.wait_for_selector("#timeline")
        wait_until(page, "document.querySelectorAll('#artifacts img[src^=blob]').length >= 4")
        wait_until(page, "[...document.querySelectorAll('#artifacts img')].every(i => i.naturalWidth > 0)")
        # the stylesheet applied, and the spend bar got its width through the CSSOM
        assert page.eval_on_selector("header.top", "e => getComputedStyle(e).display") == "flex"
        assert page.eval_on_selector(".bar span", "e => e.style.width").endswith("%")
        assert page.evaluate("window.__violations") == []
        assert not [m for m in console if "Content Security Policy" in m]

        # an injected inline script and a style attribute are refused by the policy
        page.evaluate("""() => {
            const s = document.createElement('script');
            s.textContent = 'window.__injected = true';
            document.body.append(s);
            document.body.insertAdjacentHTML('beforeend', '<p id=styled style="color: red">x</p>');
        }""")
        wait_until(page, "window.__violations.length >= 2")
        assert page.evaluate("window.__injected === undefined")
        assert page.eval_on_selector("#styled", "e => getComputedStyle(e).color") != "rgb(255, 0, 0)"
        violated = page.evaluate("window.__violations")
        assert any(v.startswith("script-src") for v in violated)
        assert any(v.startswith("style-src") for v in violated)
        browser.close()


def wait_until(page, expression: str, timeout_s: float = 30.0) -> None:
    """Poll `expression` with page.evaluate, which the page's CSP allows; Playwright's own
    wait_for_function re-checks with a string eval, which the CSP (rightly) blocks."""
    import time

    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        time.sleep(0.05)
