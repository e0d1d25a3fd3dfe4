"""The Counts page's example text shows how the presets differ (it once gave 18 tokens under all of them)."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from webapp.tokenizer import PRESET_NAMES, get_encoding, is_installed
from webapp.web.counts.routes import EXAMPLE_TEXT


def test_the_example_counts_differ_between_presets(client: FlaskClient) -> None:
    page = client.get("/counts")
    assert page.status_code == 200
    shown = {m[0]: int(m[1].replace(",", "")) for m in
             re.findall(r'<tr data-tokenizer="([^"]+)">\s*<td>.*?</td>\s*<td data-col="tokens">([\d,]+)<',
                        page.get_data(as_text=True), re.S)}
    installed = [n for n in PRESET_NAMES if is_installed(n)]
    assert set(shown) == set(installed)
    for name in installed:
        assert shown[name] == len(get_encoding(name).encode_ordinary(EXAMPLE_TEXT)), name
    assert len(set(shown.values())) >= max(2, len(installed) * 2 // 3)  # most presets give their own count
    assert "def count(" in EXAMPLE_TEXT
