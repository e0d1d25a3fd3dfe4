"""Issue 8, finding 1: merge lists whose implied tokens would be exponentially
(or quadratically) large. A 703-byte body of 40 doubling rules implies a token
of 2^40 bytes; every route that derives token bytes from merges must either
answer normally without building them (the encoding of "a" is [97]) or refuse
with a 4xx naming the rule, before building anything.

Each route runs in a child process whose address space is capped at 1 GiB
(the app needs about 200 MB), so building the vocab would fail there instead
of taking the test machine down; the parent checks the answers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import urllib.parse

import pytest

from webapp import PROJECT_ROOT
from webapp.tokenizer import TokenizerError, implied_byte_vocab
from webapp.tokenizer import formats as tokfiles
from webapp.tokenizer.core.token_sizes import ImpliedVocab, SizeLimits, check_sizes

DOUBLING = [[97, 97, 256]] + [[255 + i, 255 + i, 256 + i] for i in range(1, 40)]
#: 300,000 rules, each adding one byte to the last token: about 45 GB in all.
CHAIN = [[97, 97, 256]] + [[255 + i, 97, 256 + i] for i in range(1, 300_000)]
MINBPE_DOUBLING = "minbpe v1\n\n0\n97 97\n" + "".join(f"{255 + i} {255 + i}\n" for i in range(1, 40))
#: Rule 17 is the first to pass 65,536 bytes per token (2^17 = 131,072).
FIRST_OVER = 17

CHILD = textwrap.dedent(
    """
    import json, resource, sys, tempfile
    cap = 1024 * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    sys.path[:0] = [".", "tests"]
    from conftest import INLINE_ONLY, make_app
    app = make_app(tempfile.mkdtemp(), **INLINE_ONLY)
    client = app.test_client()
    requests = json.loads(sys.stdin.read())
    out = []
    for method, path, kind, body in requests:
        if kind == "share-then-open":
            made = client.post("/api/share", json=body)
            response = client.get(made.get_json()["path"])
        elif kind == "json":
            response = client.open(path, method=method, json=body)
        elif kind == "form":
            response = client.open(path, method=method, data=body)
        else:
            response = client.open(path, method=method)
        out.append([response.status_code, response.get_data(as_text=True)])
    print(json.dumps(out))
    """
)


def _run(requests: list[list]) -> list[tuple[int, str]]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [tuple(item) for item in json.loads(done.stdout.strip().splitlines()[-1])]


@pytest.fixture(scope="module")
def answers() -> dict[str, tuple[int, str]]:
    cases = {
        "encode": ["POST", "/api/encode", "json", {"text": "a", "merges": DOUBLING}],
        "encode aaaa": ["POST", "/api/encode", "json", {"text": "aaaa", "merges": DOUBLING}],
        "get bytes": ["GET", "/bytes?" + urllib.parse.urlencode({"text": "a", "merges": json.dumps(DOUBLING)}), "get", None],
        "fragment": ["POST", "/fragments/bytes", "form", {"text": "a", "merges": json.dumps(DOUBLING)}],
        "share link": ["GET", "", "share-then-open", {"tool": "bytes", "text": "a", "merges": json.dumps(DOUBLING)}],
        "import minbpe": ["POST", "/api/import", "json", {"content": MINBPE_DOUBLING, "format": "minbpe"}],
        "import playground JSON": ["POST", "/api/import", "json", {"content": json.dumps({"merges": DOUBLING}), "format": "playground"}],
        "export": ["POST", "/api/export?format=playground", "json", {"merges": DOUBLING}],
        "export hf": ["POST", "/api/export?format=hf", "json", {"merges": DOUBLING}],
        "export chain": ["POST", "/api/export?format=playground", "json", {"merges": CHAIN}],
        "encode chain": ["POST", "/api/encode", "json", {"text": "a" * 1000, "merges": CHAIN}],
        "page export": ["POST", "/files/export/bytes?format=minbpe", "form", {"merges": json.dumps(DOUBLING)}],
    }
    return dict(zip(cases, _run(list(cases.values()))))


def _error(answer: tuple[int, str]) -> dict:
    status, body = answer
    assert 400 <= status < 500, answer[1][:500]
    return json.loads(body)["error"]


def test_encode_of_a_is_97_with_its_one_byte(answers):
    status, body = answers["encode"]
    assert status == 200
    assert json.loads(body) == {"ids": [97], "tokens": [{"id": 97, "text": "a", "bytes": [97], "start": 0, "end": 1}]}


def test_encode_using_a_made_token_shows_the_bytes_it_covers(answers):
    status, body = answers["encode aaaa"]
    assert status == 200
    assert json.loads(body)["tokens"] == [{"id": 257, "text": "aaaa", "bytes": [97] * 4, "start": 0, "end": 4}]


@pytest.mark.parametrize("name", ["get bytes", "fragment", "share link"])
def test_pages_encode_and_pass_the_round_trip(answers, name):
    status, body = answers[name]
    assert status == 200
    assert "decode(encode(text)) gives the text back" in body


@pytest.mark.parametrize("name", ["import minbpe", "import playground JSON", "export", "export hf"])
def test_vocab_building_routes_name_the_rule_over_the_token_limit(answers, name):
    error = _error(answers[name])
    assert error["field"] == "merges"
    assert error["location"] == {"rule": FIRST_OVER, "limit": 65_536}
    assert "LIMIT_TOKEN_BYTES" in error["message"] and f"rule {FIRST_OVER} " in error["message"]


def test_a_long_chain_is_refused_at_the_rule_where_the_total_passes(answers):
    error = _error(answers["export chain"])
    limit = 8 * 1024 * 1024
    # Token k (rule k) has k + 1 bytes: the total passes the limit at the first k with sum(2..k+1) > limit.
    total, rule = 0, 0
    while total <= limit:
        rule += 1
        total += rule + 1
    assert error["location"] == {"rule": rule, "limit": limit}
    assert "LIMIT_VOCAB_BYTES" in error["message"]


def test_encoding_with_the_long_chain_is_fine(answers):
    status, body = answers["encode chain"]
    assert status == 200
    assert json.loads(body)["ids"] == [256] * 500


def test_the_page_export_says_why_as_text(answers):
    status, body = answers["page export"]
    assert status == 400
    assert f"rule {FIRST_OVER} " in body and "LIMIT_TOKEN_BYTES" in body


# --- the length computation itself ------------------------------------------------


def test_lengths_follow_the_implied_vocab_definition():
    rules = [(97, 98, 256), (256, 99, 257), (300, 97, 258), (98, 98, 256), (257, 257, 259), (97, 97, 98)]
    vocab = ImpliedVocab(rules)
    implied = implied_byte_vocab(rules)
    for token in (97, 98, 256, 257, 258, 259, 300):
        expected = implied.get(token)
        assert vocab.length(token) == (None if expected is None else len(expected))
        if expected is not None and token >= 256:
            assert vocab.expand(token) == expected


def test_lengths_saturate_instead_of_growing_without_bound():
    rules = [(97, 97, 256)] + [(255 + i, 255 + i, 256 + i) for i in range(1, 300)]
    vocab = ImpliedVocab(rules)
    assert vocab.length(555) == 1 << 62
    assert vocab.bytes_for([555], 10**6) is None


def test_check_sizes_modes_and_limits():
    small = SizeLimits(token_bytes=4, vocab_bytes=7)
    assert check_sizes([(97, 97, 256), (256, 256, 257)], small) == {256: 2, 257: 4}
    with pytest.raises(TokenizerError) as info:
        check_sizes([(97, 97, 256), (256, 256, 257), (257, 97, 258)], small)
    assert info.value.location == {"rule": 3, "limit": 4}
    with pytest.raises(TokenizerError) as info:
        check_sizes([(97, 97, 256), (98, 98, 257), (99, 99, 258), (100, 100, 259)], small)
    assert info.value.location == {"rule": 4, "limit": 7}
    # "last": a later rule redefines a token, and the total follows.
    assert check_sizes([(97, 97, 256), (256, 256, 256)], small, "last") == {256: 4}
    # "first": an operand no rule made counts as no bytes.
    assert check_sizes([(300, 97, 256)], small, "first") == {256: 1}


def test_a_stored_tokenizer_is_checked_again_when_read():
    tok = tokfiles.from_playground(level="bytes", merges=DOUBLING[:10])
    data = tokfiles.dumps_stored(tok)
    assert tokfiles.loads_stored(data).vocab == tok.vocab
    with pytest.raises(TokenizerError) as info:
        tokfiles.loads_stored(data, limits=SizeLimits(token_bytes=64))
    assert info.value.location["rule"] == 7  # rule k makes 2^k bytes


def test_training_a_chain_of_ever_longer_tokens_stops_at_the_limit(inline_client):
    """All pairs of distinct ascending characters count 1, and the tie-break keeps
    growing one token: 20,000 merges would learn 200 million characters."""
    word = "".join(chr(0x100 + i) for i in range(20_000))
    response = inline_client.post("/api/train", json={"words": [word], "num_merges": 20_000})
    assert response.status_code == 400
    error = response.get_json()["error"]
    limit = 8 * 1024 * 1024
    total, merge = 0, 0
    while total <= limit:  # merge k learns a token of k + 1 characters
        merge += 1
        total += merge + 1
    assert error["field"] == "num_merges" and error["location"] == {"merge": merge, "limit": limit}
    small = inline_client.post("/api/train", json={"words": [word[:50]], "num_merges": 5}).get_json()
    assert small["merges"] == [word[: k + 2] for k in range(5)]
