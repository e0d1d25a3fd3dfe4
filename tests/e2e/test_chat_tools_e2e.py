"""The Chat view's tools in real Chromium: the folded Tools box, an error beside it that keeps what was
typed, "Example tools", and the counts with and without the tools against transformers'
`apply_chat_template(messages, tools=...)` for the qwen3 preset. Screenshots at 1366x900 and 390x844
go to test-artifacts/screenshots/. Console errors fail the test.
"""

from __future__ import annotations

import json
from typing import Any, Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import INLINE_ONLY
from tests.e2e.conftest import VIEWPORTS
from tests.serving import serve_app
from tests.unit.tokenizer.chat.test_chat_tools import TOOLS, library
from webapp import create_app
from webapp.infra.storage import default_sqlite_url
from webapp.tokenizer import is_installed
from webapp.web.chat.chatting import EXAMPLE_TOOLS

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tools_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(tmp_path_factory.mktemp("tools-e2e")),
                      **INLINE_ONLY})
    with serve_app(app, "chat-tools-e2e-server") as url:
        yield url


def qwen_count(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    out = library("qwen3").apply_chat_template(messages, tools=tools, tokenize=True)
    return f"{len(out['input_ids'] if hasattr(out, 'keys') else out):,}"


def test_tools_in_the_chat_view(page: Page, console: list[str], screenshot: Any, tools_server: str) -> None:
    if not is_installed("qwen3"):
        pytest.skip("the qwen3 preset is not installed (make run prepares it)")
    page.set_viewport_size(VIEWPORTS["laptop"])
    question = "What's the weather in Paris?"
    messages = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": question}]
    page.goto(f"{tools_server}/bytes?tokenizer=qwen3&view=chat&text={question}")
    expect(page.locator("#chat-count")).to_have_text(qwen_count(messages, None), timeout=30_000)

    # folded away until asked for; no tools, no tools' stats
    box = page.locator("#f-chat_tools")
    expect(box).to_be_hidden()
    expect(page.locator("#chat-tools-tokens")).to_have_count(0)
    page.locator("#chat-tools summary").click()
    expect(box).to_be_visible()

    # a mistake is named beside the box, and what was typed stays
    typed = '[{"type": "function", "function": {"name": 7}}]'
    box.fill(typed)
    expect(page.locator("#error-chat_tools")).to_have_text(
        "chat_tools[0].function.name: expected a string, got a number")
    expect(box).to_have_value(typed)
    expect(page.locator("#chat-none")).to_be_visible()

    # the example fills the box; the counts are transformers' with and without the tools
    page.locator("#chat-tools-example").click()
    expect(box).to_have_value(json.dumps(EXAMPLE_TOOLS, ensure_ascii=False, indent=2))
    expect(page.locator("#error-chat_tools")).to_have_text("")
    expect(page.locator("#chat-count")).to_have_text(qwen_count(messages, EXAMPLE_TOOLS))
    expect(page.locator("#chat-without-tools")).to_have_text(qwen_count(messages, None))
    with_tools, without = (int(qwen_count(messages, t).replace(",", "")) for t in (EXAMPLE_TOOLS, None))
    expect(page.locator("#chat-tools-tokens")).to_have_text(f"{with_tools - without:,}")
    expect(page.locator("#chat-rendered")).to_contain_text('<tools>\n{"type": "function", "function": {"name": '
                                                            '"get_weather"')
    screenshot("chat-tools-wide")

    # typing other tools updates the counts
    box.fill(json.dumps(TOOLS, indent=1))
    expect(page.locator("#chat-count")).to_have_text(qwen_count(messages, TOOLS))
    expect(page.locator("#chat-tools-given")).to_have_text("3")
    # a small state is in the URL (a large one in a draft), so a reload keeps the tools, the box open
    box.fill(json.dumps(TOOLS[:1]))
    expect(page.locator("#chat-count")).to_have_text(qwen_count(messages, TOOLS[:1]))
    page.wait_for_function("() => location.search.includes('chat_tools=')")
    assert json.loads(parse_qs(urlparse(page.url).query)["chat_tools"][0]) == TOOLS[:1]
    page.reload()
    expect(page.locator("#chat-tools")).to_have_attribute("open", "")
    expect(page.locator("#chat-count")).to_have_text(qwen_count(messages, TOOLS[:1]))

    page.set_viewport_size(VIEWPORTS["phone"])
    expect(page.locator("#chat-tools-tokens")).to_be_visible()
    screenshot("chat-tools-phone")

    # emptied: no tools again
    box.fill("")
    expect(page.locator("#chat-count")).to_have_text(qwen_count(messages, None))
    expect(page.locator("#chat-tools-tokens")).to_have_count(0)
