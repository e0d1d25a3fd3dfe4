"""The curl examples of docs/api.md, run against the app: each answer must be the `# ...` line shown under it.

So the examples cannot drift from what the server returns. Every curl in a
`sh` block of docs/api.md must be followed by its answer (examples that start
jobs, whose answers vary, are `text` blocks and not run).
"""

from __future__ import annotations

import re
import shlex

import pytest

from webapp import PROJECT_ROOT


def api_doc_examples() -> list[tuple[str, str, str]]:
    """(path, request body, answer shown) for every curl of docs/api.md's `sh` blocks."""
    api_doc = (PROJECT_ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    examples = []
    for block in re.findall(r"```sh\n(.*?)```", api_doc, re.S):
        # An example: "curl ..." (continued with backslashes or inside quotes), then "# answer".
        found = re.findall(r"^(curl .*?)^# (.*?)$", block, re.S | re.M)
        assert len(found) == block.count("curl "), "a curl example in docs/api.md shows no answer"
        for command, answer in found:
            words = shlex.split(command.replace("\\\n", " "))
            url = next(word for word in words if word.startswith("localhost:5000/"))
            body = words[words.index("-d") + 1]
            examples.append((url.removeprefix("localhost:5000"), body, answer))
    return examples


EXAMPLES = api_doc_examples()


def test_the_api_doc_has_examples() -> None:
    assert [path for path, _, _ in EXAMPLES] == ["/api/encode", "/api/decode", "/api/encode-text", "/api/train"]


@pytest.mark.parametrize("path, body, answer", EXAMPLES, ids=[path for path, _, _ in EXAMPLES])
def test_api_doc_example_answers_as_shown(client, path: str, body: str, answer: str) -> None:
    response = client.post(path, data=body, content_type="application/json")
    assert response.status_code == 200
    assert response.get_data(as_text=True).rstrip("\n") == answer
