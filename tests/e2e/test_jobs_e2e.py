"""Background jobs in the browser: the Train page's job panel polls, shows
progress, can be cancelled, and turns into the usual result (a real worker
process runs the jobs; thresholds are set low so the input stays small).
The Counts page's job (a text over JOB_COUNTS_WORK) does the same: its panel,
then the table the inline path shows, with its sort buttons working."""

from __future__ import annotations

import re
from typing import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import served_with_worker, warmed
from webapp.tokenizer.reference import bpe_merges as literal_bpe_merges
from webapp.infra.storage import default_sqlite_url


@pytest.fixture(scope="module")
def job_server(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("e2e-jobs")
    settings = {"DATABASE_URL": default_sqlite_url(folder), "QUEUE_URL": f"sqlite:///{folder / 'queue.sqlite3'}",
                "JOB_TRAIN_MERGES": 5, "JOB_TIME_SECONDS": 60, "JOB_COUNTS_WORK": 10_000}
    with served_with_worker(settings, folder, "e2e-jobs") as url:
        yield warmed(url, "/counts")


def record_job_panels(page: Page) -> None:
    """Have the page note each job panel an htmx swap shows (call before `goto`). A small job's panel
    may be replaced by its result before a check of the page sees it: a test that looked for the
    panel itself found the result already there (a `make test` beside a busy loop)."""
    page.add_init_script("""
      window.jobPanelsShown = [];
      document.addEventListener("htmx:afterSwap", function () {
        var panel = document.querySelector(".job-panel");
        if (!panel) { return; }
        var cancel = panel.querySelector(".job-cancel");
        window.jobPanelsShown.push({
          state: panel.getAttribute("data-job-state"),
          visible: panel.getClientRects().length > 0,
          progress: !!panel.querySelector("progress.job-progress"),
          cancel: !!cancel && cancel.getClientRects().length > 0,
        });
      });
    """)


def wait_for_a_job_panel(page: Page) -> None:
    """Wait until a swap has shown a job panel. Before it, the page may still show the result of what it
    held before the typing (the Counts page's example text has its 13 rows too): a check of the result
    made then passed at once, and found no panel shown yet (a fresh-clone `make test`)."""
    page.wait_for_function("() => window.jobPanelsShown.length > 0", timeout=60_000)


def assert_a_running_panel_was_shown(page: Page) -> None:
    """The first panel the page showed was visible, for a job not yet finished, with its progress
    bar and its Cancel button."""
    shown = page.evaluate("window.jobPanelsShown")
    assert shown, "no job panel was shown"
    first = shown[0]
    assert first["state"] in ("queued", "running") and first["visible"] and first["progress"] and first["cancel"], shown


def test_train_job_panel_becomes_the_result(page: Page, console, screenshot, job_server):
    record_job_panels(page)
    page.goto(job_server + "/train")
    words = "low lower lowest newer wider new"
    page.fill("#f-words", words)
    page.fill("#f-num_merges", "8")
    wait_for_a_job_panel(page)
    # Polling swaps the panel for the usual result once the worker is done.
    expect(page.locator("#merge-list li")).to_have_count(8, timeout=20_000)
    expect(page.locator(".job-panel")).to_have_count(0)
    assert_a_running_panel_was_shown(page)
    shown = [re.sub(r"\s+", "", t) for t in page.locator("#merge-list li").all_inner_texts()]
    expected = literal_bpe_merges(words.split(), 8)
    assert all(m in s for m, s in zip(expected, shown)), (expected, shown)
    screenshot("train-job-done")


def test_counts_job_panel_becomes_the_table(page: Page, console, screenshot, job_server):
    record_job_panels(page)
    page.goto(job_server + "/counts")
    expect(page.locator("#counts-table")).to_be_visible()  # the example text: inline, under the threshold
    text = "Counted as a background job: every preset over this line. " * 15  # 885 x 13 presets > 10,000
    page.fill("#f-text", text)
    wait_for_a_job_panel(page)
    screenshot("counts-job-running")
    # the worker opens the presets, counts, and the poll swaps the panel for the table
    expect(page.locator("#counts-summary")).to_contain_text(f"{len(text):,} characters", timeout=60_000)
    expect(page.locator("#counts-table tbody tr")).to_have_count(13)
    expect(page.locator(".job-panel")).to_have_count(0)
    assert_a_running_panel_was_shown(page)
    assert page.input_value("#f-text") == text  # what the user typed stays
    page.locator('button[data-sort="tokens"]').click()
    expect(page.locator('th[aria-sort="ascending"] button[data-sort="tokens"]')).to_be_visible()
    counts = [int(t.replace(",", "")) for t in page.locator('td[data-col="tokens"]').all_inner_texts()]
    assert len(counts) >= 4 and counts == sorted(counts), counts  # (a preset not installed has no count)
    screenshot("counts-job-done")
