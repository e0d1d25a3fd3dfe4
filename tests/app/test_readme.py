"""The README's curl examples, run against the app: each answer must be the `# ...` line shown under it.

So the examples cannot drift from what the server returns. Every curl in the
README's JSON API section must be followed by its answer.
"""

from __future__ import annotations

import re
import shlex

import pytest

from webapp import PROJECT_ROOT


def readme_examples() -> list[tuple[str, str, str]]:
    """(path, request body, answer shown) for every curl of the README's "JSON API" section."""
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## JSON API\n", 1)[1].split("\n## ", 1)[0]
    examples = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        # An example: "curl ..." (continued with backslashes or inside quotes), then "# answer".
        found = re.findall(r"^(curl .*?)^# (.*?)$", block, re.S | re.M)
        assert len(found) == block.count("curl "), "a curl example in the README shows no answer"
        for command, answer in found:
            words = shlex.split(command.replace("\\\n", " "))
            url = next(word for word in words if word.startswith("localhost:5000/"))
            body = words[words.index("-d") + 1]
            examples.append((url.removeprefix("localhost:5000"), body, answer))
    return examples


EXAMPLES = readme_examples()


def test_the_readme_has_examples() -> None:
    assert [path for path, _, _ in EXAMPLES] == ["/api/encode", "/api/decode", "/api/encode-text", "/api/train"]


@pytest.mark.parametrize("path, body, answer", EXAMPLES, ids=[path for path, _, _ in EXAMPLES])
def test_readme_example_answers_as_shown(client, path: str, body: str, answer: str) -> None:
    response = client.post(path, data=body, content_type="application/json")
    assert response.status_code == 200
    assert response.get_data(as_text=True).rstrip("\n") == answer
