"""In real Chromium, under the app's Content-Security-Policy, using every
page (typing, switching views, sharing, opening the link) triggers no policy
violation: the strict policy costs the playground nothing."""

from __future__ import annotations

import pytest

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', e => {
  window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sourceFile || '') + ':' + e.lineNumber);
});
"""


@pytest.mark.e2e
@pytest.mark.parametrize("tool, field, value", [
    ("bytes", "text", "hello <b>world</b>"),
    ("chars", "text", "lower newest"),
    ("train", "words", "low lower newest widest"),
])
def test_no_csp_violation_while_using_a_page(browser, sec_server, tool, field, value):
    context = browser.new_context()
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    messages: list[str] = []
    page.on("console", lambda m: messages.append(m.text) if "Content Security Policy" in m.text else None)
    response = page.goto(f"{sec_server}/{tool}")
    assert response is not None and "script-src 'self'" in response.headers["content-security-policy"]
    page.fill(f'#tool-form [name="{field}"]', value)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(600)  # the debounced live update
    tabs = page.locator("label.tab")
    if tool != "chars":  # (the chars example may show a missing-vocab error instead of results)
        assert tabs.count() >= 2  # the view tabs are there to be used
    for tab in tabs.all():
        tab.click()
    page.wait_for_load_state("networkidle")
    page.locator(".share-button").click()
    link = page.locator(".share-url").input_value(timeout=10_000)
    page.goto(link)
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.__csp") == []
    assert messages == []
    context.close()
