"""Typing benchmark: keystroke -> token spans updated, in real Chromium.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_typing.py [--keys 20] [--preset cl100k_base]

What it measures: the app is served on loopback (a thread, as in the browser
tests) and opened in Chromium (`CHROMIUM_PATH`, default /usr/bin/chromium)
on the Bytes page with a real tokenizer preset. For each of `--keys` key
presses, one at a time, the time from the keydown event to the moment htmx
has swapped in the new token spans (`htmx:afterSwap` on #results), read
with `performance.now()` inside the page. It waits for each update (and
for the debounce window to pass) before the next key. Two settings:

- short: a one-line sentence, a key typed at its end;
- 50k: 50,000 characters of mixed text (English prose, code, non-Latin
  text from benchmarks/data), a key typed at its end.

For each it prints the median and p95 in ms, and how much of the median is
the server answering the fragment request (Resource Timing: request start to
response end). The reference measured in the same run is the round trip of
an empty fetch to /healthz from the same page: the ratios say how far above
that floor typing is. Goals (issue "The first screen"): median <= 150 ms
short, <= 300 ms for 50k characters with cl100k_base.

No downloads: the preset comes from the npm package installed at setup.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from playwright.sync_api import sync_playwright  # noqa: E402
from serving import serve_app  # noqa: E402

from webapp import create_app  # noqa: E402
from webapp.infra.storage import default_sqlite_url  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
SHORT = "The quick brown fox jumps over the lazy dog"

# Installed once per page: keydown time, and the swap time of the next update.
PROBE = """() => {
  window.__typing = [];
  let pressed = null;
  document.addEventListener('keydown', () => { pressed = performance.now(); }, true);
  document.addEventListener('htmx:afterSwap', (e) => {
    if (pressed !== null && e.detail.target && e.detail.target.id === 'results') {
      window.__typing.push(performance.now() - pressed);
      pressed = null;
    }
  });
}"""


def long_text(size: int) -> str:
    """`size` characters of mixed text: prose and code from the standard library, non-Latin text."""
    import corpus

    text = corpus.mixed_text(size) if hasattr(corpus, "mixed_text") else ""
    if len(text) < size:
        base = (Path(__file__).parent / "data" / "non_latin.txt").read_text(encoding="utf-8")
        prose = Path(statistics.__file__).read_text(encoding="utf-8")
        text = (prose + "\n" + base) * (size // (len(prose) + len(base)) + 1)
    return text[:size]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def measure(page, keys: int) -> tuple[list[float], list[float]]:
    """Type `keys` letters at the end of the text box; (keystroke -> swap ms, server ms) per key."""
    box = page.locator("#f-text")
    box.focus()
    page.keyboard.press("End")
    page.evaluate("() => { const t = document.getElementById('f-text'); t.selectionStart = t.selectionEnd = t.value.length; }")
    page.evaluate("() => performance.clearResourceTimings()")
    page.evaluate(PROBE)
    for n in range(keys):
        page.keyboard.type("abcdefghijklmnopqrstuvwxyz"[n % 26])
        page.wait_for_function(f"window.__typing.length >= {n + 1}", timeout=30_000)
        page.wait_for_timeout(150)  # let the debounce window pass: one update per key
    totals = page.evaluate("window.__typing")
    server = page.evaluate(
        """() => performance.getEntriesByType('resource')
             .filter(e => e.name.includes('/fragments/bytes'))
             .map(e => e.responseEnd - e.requestStart)"""
    )
    return totals, server


def floor_ms(page, times: int = 20) -> float:
    """Median round trip of an empty request from the page (the reference)."""
    values = page.evaluate(
        """async (n) => { const out = [];
             for (let i = 0; i < n; i++) { const t = performance.now();
               await fetch('/healthz', {cache: 'no-store'}); out.push(performance.now() - t); }
             return out; }""",
        times,
    )
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--preset", default="cl100k_base")
    parser.add_argument("--size", type=int, default=50_000)
    args = parser.parse_args()

    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"DATABASE_URL": default_sqlite_url(Path(tmp))})
        with serve_app(app, "bench-typing") as url, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            # bypass_csp: Playwright's wait_for_function evaluates strings, which the app's CSP forbids
            page = browser.new_page(base_url=url, viewport={"width": 1366, "height": 900}, bypass_csp=True)
            rows = []
            for label, text in (("short", SHORT), (f"{args.size // 1000}k", long_text(args.size))):
                page.goto(f"/bytes?tokenizer={args.preset}")
                page.fill("#f-text", text)
                page.wait_for_function(
                    "n => { const d = document.querySelector('[data-stat=chars] dd'); return d && d.textContent.replace(/,/g, '') == n; }",
                    arg=str(len(text)), timeout=60_000,
                )
                totals, server = measure(page, args.keys)
                floor = floor_ms(page)
                rows.append((label, len(text), totals, server, floor))
            browser.close()
    print(f"keystroke -> spans updated, {args.keys} keys, preset {args.preset}, Chromium on loopback")
    print(f"{'text':>6} {'chars':>7} {'median':>8} {'p95':>8} {'server median':>14} {'floor':>7} {'median/floor':>13}")
    for label, chars, totals, server, floor in rows:
        med = statistics.median(totals)
        print(f"{label:>6} {chars:>7,} {med:>6.0f}ms {percentile(totals, 0.95):>6.0f}ms "
              f"{statistics.median(server) if server else float('nan'):>12.0f}ms {floor:>5.1f}ms {med / floor:>12.1f}x")


if __name__ == "__main__":
    main()
