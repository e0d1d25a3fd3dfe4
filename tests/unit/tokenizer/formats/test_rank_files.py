"""tiktoken rank files: Whisper's empty token, and exports that keep tiktoken's ids equal to ours.

The oracle is tiktoken: its own loader (`tiktoken.load.load_tiktoken_bpe`,
reading a local file with its cache turned off, so nothing is downloaded) and
`tiktoken.Encoding` over what it loaded.
"""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import TokenizerError, encode
from webapp.tokenizer import formats as tokfiles
from tests.loaded_calls import encode_loaded

tiktoken = pytest.importorskip("tiktoken")
from tiktoken.load import load_tiktoken_bpe  # noqa: E402


def tiktoken_load(tmp_path, content: str) -> dict[bytes, int]:
    """tiktoken's own reading of a rank file (local path, cache off: no network, no cache writes)."""
    path = tmp_path / "ranks.tiktoken"
    path.write_text(content, encoding="ascii")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", "")
        return load_tiktoken_bpe(str(path))


def byte_lines() -> str:
    return "".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256))


def whole_text(ranks: dict[bytes, int]):
    return tiktoken.Encoding("whole", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})


def test_whisper_empty_token_line_is_accepted_and_noted(tmp_path):
    # Shaped like Whisper's multilingual.tiktoken: the empty token "=" sits among the ranks.
    merged = [b"ab", b"abc", b"ba", b"cab"]
    content = byte_lines() + "".join(
        f"{base64.b64encode(t).decode()} {256 + i}\n" for i, t in enumerate(merged[:2])
    ) + "= 258\n" + "".join(f"{base64.b64encode(t).decode()} {259 + i}\n" for i, t in enumerate(merged[2:]))
    ranks = tiktoken_load(tmp_path, content)
    assert ranks[b""] == 258  # tiktoken reads the line as the empty token
    enc = whole_text(ranks)
    loaded = tokfiles.import_tokenizer(content, fmt="auto")
    assert loaded.source == "tiktoken"
    assert any("rank 258 is the empty token" in note and "line 259" in note for note in loaded.notes)
    for text in ["abcab", "cabbage", "ababab", "xyz abc", ""]:
        assert encode_loaded(loaded, text) == enc.encode(text), text
    assert loaded.file_vocab()[258] == b"" and enc.decode_bytes([258]) == b""
    # the stored form keeps it
    assert tokfiles.loads_stored(tokfiles.dumps_stored(loaded)).file_vocab()[258] == b""


def test_export_refuses_a_rule_making_a_lower_id_than_an_earlier_rule():
    loaded = tokfiles.from_playground(level="bytes", merges=[[98, 99, 257], [97, 98, 256]])
    with pytest.raises(TokenizerError) as info:
        tokfiles.export_tiktoken(loaded)
    assert info.value.location == {"rule": 2}
    assert info.value.message.startswith("merges: rule 2 makes id 256, but the earlier rule 1 makes id 257")
    # the reason: tiktoken on such a file would give other ids than our encode
    ranks = {bytes([b]): b for b in range(256)} | {b"bc": 257, b"ab": 256}
    assert whole_text(ranks).encode("abc") == [256, 99]
    assert encode("abc", [[98, 99, 257], [97, 98, 256]]) == [97, 257]


def test_export_refuses_a_token_tiktoken_would_build_from_other_parts():
    # "abc" is made from a + bc, but by the time "bc" could exist tiktoken has already joined "ab".
    merges = [[97, 98, 256], [98, 99, 257], [97, 257, 258]]
    loaded = tokfiles.from_playground(level="bytes", merges=merges)
    with pytest.raises(TokenizerError) as info:
        tokfiles.export_tiktoken(loaded)
    assert info.value.location == {"rule": 3}
    assert "tiktoken, merging by rank, would make it from b'ab' + b'c'" in info.value.message
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"bc": 257, b"abc": 258}
    assert whole_text(ranks).encode("abc") != encode("abc", merges)


@st.composite
def merge_lists(draw):
    """Random byte-level merge lists over a 3-letter alphabet, operands always made before use."""
    made = [97, 98, 99]
    merges = []
    next_id = 256
    for _ in range(draw(st.integers(0, 12))):
        left = draw(st.sampled_from(made))
        right = draw(st.sampled_from(made))
        new = draw(st.sampled_from([next_id, next_id + 1])) if draw(st.booleans()) else next_id
        merges.append([left, right, new])
        made.append(new)
        next_id = max(next_id, new) + 1
    # sometimes swap two new ids, so the ids do not follow rule order
    if len(merges) >= 2 and draw(st.booleans()):
        i, j = draw(st.integers(0, len(merges) - 1)), draw(st.integers(0, len(merges) - 1))
        a, b = merges[i][2], merges[j][2]
        swap = {a: b, b: a}
        merges = [[swap.get(x, x) for x in rule] for rule in merges]
    return merges


@settings(max_examples=examples(300), deadline=None)
@given(merges=merge_lists(), texts=st.lists(st.text(alphabet="abc ", max_size=12), min_size=1, max_size=5))
def test_an_exported_rank_file_gives_tiktoken_our_ids(tmp_path_factory, merges, texts):
    loaded = tokfiles.from_playground(level="bytes", merges=merges)
    try:
        content = tokfiles.export_tiktoken(loaded)
    except TokenizerError:
        return  # refused: nothing to compare (the refusals have their own tests)
    ranks = tiktoken_load(tmp_path_factory.mktemp("export"), content)
    enc = whole_text(ranks)
    for text in texts:
        assert enc.encode(text) == encode(text, merges), (merges, text)
