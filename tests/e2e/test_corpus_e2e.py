"""Training on a corpus in real Chromium: upload, progress, results, open on Bytes.

The app is served with its own database and queue, and a real job worker
(`python -m webapp.worker`) runs the job. The merges shown must be the
literal byte-level trainer's; the Bytes page must encode with them.
Console errors (a CSP violation included) fail the test.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import regex
from playwright.sync_api import Page, expect

from webapp.tokenizer import reference
from webapp.tokenizer.pretokenize.patterns import PATTERNS

_rnd = random.Random(5)
CORPUS = ("the lower the newest, the wider the widest: lowering lowers the lowest newer widths.\n" * 20
          + "Zürich, Köln und München: schöne Städte.\n" * 5
          + " ".join("".join(_rnd.choice("etaoinshrdlucmwf") for _ in range(_rnd.randint(3, 9))) for _ in range(1200)))
MERGES = 260


def test_upload_train_read_the_results_and_open_on_bytes(page: Page, console, screenshot, corpus_server: str,
                                                          tmp_path: Path) -> None:
    path = tmp_path / "corpus.txt"
    path.write_text(CORPUS, encoding="utf-8")
    pieces = [p.encode() for p in regex.findall(PATTERNS["gpt2"], CORPUS)]
    steps, _ = reference.train_byte_steps(pieces, MERGES)
    rules = reference.byte_training_rules([pair for pair, _ in steps])

    page.goto(f"{corpus_server}/corpus")
    page.set_input_files("#f-files", str(path))
    page.select_option("#f-pretokenize", "gpt2")
    page.check("input[name=level][value=bytes]")
    page.fill("#f-num_merges", str(MERGES))
    page.fill("#f-held_out", "the newest widths")
    page.click("#corpus-train")
    screenshot("corpus-running")
    link = page.locator("#corpus-open-results")
    expect(link).to_be_visible(timeout=30_000)
    expect(page.locator(".corpus-done")).to_contain_text(f"{len(steps)} merges learned")
    link.click()

    expect(page.locator('[data-stat="vocab"] dd')).to_have_text(f"{256 + len(steps):,}")
    expect(page.locator(".chart polyline")).to_have_count(1)
    rows = page.locator("#corpus-steps tbody tr")
    expect(rows).to_have_count(100)
    counts = [int(c.replace(",", "")) for c in rows.locator("td:nth-child(4)").all_inner_texts()]
    assert counts == [count for _, count in steps[:100]]
    expect(page.locator("nav.downloads a[data-format='tokenizer.json']")).to_have_count(1)
    screenshot("corpus-results")
    page.click("a[rel=next]")
    expect(page.locator(".pager-at")).to_have_text("page 2 of 3")
    expect(rows).to_have_count(100)

    page.click("#corpus-open")
    expect(page).to_have_url(re.compile(r".*/bytes\?.*tokenizer="))
    expect(page.locator("#open-tokenizer-status")).to_contain_text("Using a tokenizer trained on a corpus")
    text = "the lowest newer widths"
    page.fill("#f-text", text)
    expected = [i for p in regex.findall(PATTERNS["gpt2"], text) for i in reference.encode(p, rules)]
    expect(page.locator("#tokens .tok")).to_have_count(len(expected))
    ids = [int(x) for x in page.locator("#tokens .tok").evaluate_all("els => els.map(e => e.dataset.tokenId)")]
    assert ids == expected
    screenshot("corpus-opened-on-bytes")
