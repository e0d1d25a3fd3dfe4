"""Issue 8, finding 2: inputs within the limits whose parsing or training set-up
was quadratic. Each case below took from many seconds to minutes before the fix
(a 200,000-byte rank-file token killed a worker at 60 s; a 300,000-token merges
line took 20 s; the separator search for training 32 s) and well under a second
after; the tests check the answers, not the time."""

from __future__ import annotations

import base64
import json
import random

import pytest

from webapp.tokenizer import TokenizerError, bpe_merges, reference
from webapp.tokenizer import formats as tokfiles
from webapp.tokenizer.formats import hf_strings, tiktoken_ranks


def _rank_file(tokens: list[bytes]) -> str:
    return "\n".join(f"{base64.b64encode(t).decode()} {rank}" for rank, t in enumerate(tokens))


SINGLE_BYTES = [bytes([b]) for b in range(256)]


def test_a_rank_file_token_over_the_token_limit_is_refused_before_decoding(inline_client):
    content = _rank_file(SINGLE_BYTES + [b"a" * 200_000])
    response = inline_client.post("/api/import", json={"content": content, "format": "tiktoken"})
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["field"] == "file" and error["location"] == {"line": 257, "limit": 65_536}
    assert "LIMIT_TOKEN_BYTES" in error["message"]


def test_a_long_rank_file_token_recovers_its_merge():
    """'a' * 2^k for k = 1..15: each is the merge of two halves; the longest has 32,768 bytes."""
    doubling = [b"a" * (1 << k) for k in range(1, 16)]
    tok = tokfiles.parse_tiktoken(_rank_file(SINGLE_BYTES + doubling))
    rank = {t: r for r, t in enumerate(SINGLE_BYTES + doubling)}
    assert list(tok.merges) == [(rank[t[: len(t) // 2]], rank[t[: len(t) // 2]], rank[t]) for t in doubling]


def test_the_long_token_replay_equals_the_list_replay():
    """The heap replay for long tokens against the plain list replay (the oracle)."""
    rng = random.Random(8)
    for _ in range(300):
        alphabet = bytes(rng.sample(range(256), rng.randint(2, 4)))
        ranks = {bytes([b]): i for i, b in enumerate(alphabet)}
        for _ in range(rng.randint(0, 40)):
            token = bytes(rng.choice(alphabet) for _ in range(rng.randint(2, 6)))
            ranks.setdefault(token, len(ranks))
        token = bytes(rng.choice(alphabet) for _ in range(rng.randint(2, 150)))
        limit = rng.randint(0, len(ranks) + 2)
        assert tiktoken_ranks._merge_below_long(token, limit, ranks) == tiktoken_ranks._merge_below_short(token, limit, ranks)


def test_a_rank_file_over_the_total_limit_is_refused_before_replaying(inline_client):
    tokens = SINGLE_BYTES + [bytes([97 + i % 20]) * (60_000 + i) for i in range(150)]
    response = inline_client.post("/api/import", json={"content": _rank_file(tokens), "format": "tiktoken"})
    assert response.status_code == 400
    assert "LIMIT_VOCAB_BYTES" in response.get_json()["error"]["message"]


def test_a_merges_line_of_300k_tokens_has_no_reading():
    vocab = {"a": 0, "b": 1, "ab": 2}
    line = " ".join(["a"] * 300_000)
    doc = {"model": {"type": "BPE", "vocab": vocab, "merges": ["a b", line]}}
    with pytest.raises(TokenizerError) as info:
        tokfiles.parse_hf_tokenizer_json(json.dumps(doc))
    assert info.value.location == {"rule": 2}


def test_a_line_with_several_spaces_still_finds_its_one_reading():
    vocab = {"a": 0, " ": 1, "a ": 2, "b": 3, "a b": 4, "  ": 5}
    assert hf_strings.split_merge_line("a  b", vocab) == ("a ", "b")
    assert hf_strings.split_merge_line("a b c", vocab) is None


@pytest.mark.parametrize(
    "words",
    [
        ["a" * 2_000_000],                  # one word of 2M characters
        ["abc" * 1000] * 400,               # 1.2M characters in 400 words
    ],
)
def test_training_words_as_a_list_are_capped_by_characters(client, words):
    response = client.post("/api/train", json={"words": words, "num_merges": 3})
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["field"] == "words" and "LIMIT_TEXT_CHARS" in error["message"]


def test_training_with_a_word_holding_every_code_point_below_the_surrogates():
    """The separator search used to try each code point against all the text."""
    every = "".join(map(chr, range(0xD800)))  # 55,296 distinct characters: the first free one is U+D800
    words = ["b" * 900_000, every, "xy", "xy"]  # the long word first: each old search scanned it
    assert bpe_merges(words, 3) == ["bb", "bbbb", "bbbbbbbb"]
    small = [every[:300], "b" * 40, "xy", "xy"]
    assert bpe_merges(small, 8) == reference.bpe_merges(small, 8)
