"""The vocabulary index, the unreachable tokens and the statistics, against oracles of their own.

- `unreachable` against brute force through tiktoken (r50k_base, cl100k_base: every token's
  bytes from tiktoken, its text through `encode_ordinary`) and through `tokenizers` (qwen3,
  llama2: every token's bytes from the file's vocab, its text through the library's encode
  with special tokens encoded as text);
- every group's claim replayed with the libraries' own normalizers and pre-tokenizers (or
  tiktoken's pattern), and the merge groups with the literal reference encoder;
- `made_from` of a rank file against rank-order BPE of the token's bytes with lower ranks
  only (written here, in the way tiktoken's educational module describes);
- search, used_by, trees and scripts against direct scans.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

import pytest
import regex

from webapp.tokenizer import LoadedTokenizer, VocabIndex, load_preset, is_installed
from webapp.tokenizer.presets.catalog import load_compiled
from webapp.tokenizer.vocab.reach import encoder, group_of, self_ids, unreachable
from webapp.tokenizer.vocab.stats import length_histogram, script_counts
from webapp.tokenizer import reference
from webapp.tokenizer.presets import open_models

tiktoken = pytest.importorskip("tiktoken")
openai_public = pytest.importorskip("tiktoken_ext.openai_public")
tokenizers = pytest.importorskip("tokenizers")


def need(name: str) -> None:
    if not is_installed(name):
        pytest.skip(f"{name} is not installed")


@lru_cache(maxsize=4)
def preset(name: str) -> tuple[LoadedTokenizer, Any, VocabIndex, dict[str, Any]]:
    tok = load_preset(name)
    compiled = load_compiled(name)
    index = VocabIndex.build(tok, tok.unit.page_bytes(tok) if tok.library_order else None)
    return tok, compiled, index, unreachable(index, tok, compiled).as_json()


def tiktoken_encoding(name: str) -> Any:
    """tiktoken's own definition of `name` (pattern, special tokens), its ranks loaded from ours."""
    from webapp.tokenizer.presets.openai import load_ranks

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: dict(load_ranks(name)))
        definition = openai_public.ENCODING_CONSTRUCTORS[name]()
    return tiktoken.Encoding(name=f"oracle-{name}", pat_str=definition["pat_str"],
                             mergeable_ranks=definition["mergeable_ranks"],
                             special_tokens=definition["special_tokens"]), definition


# --- unreachable, by brute force -----------------------------------------------------------


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base"])
def test_unreachable_equals_brute_force_through_tiktoken(name: str) -> None:
    need(name)
    enc, definition = tiktoken_encoding(name)
    all_ids = sorted(set(definition["mergeable_ranks"].values()) | set(definition["special_tokens"].values()))
    partial, unreached = [], []
    for token_id in all_ids:
        data = enc.decode_single_token_bytes(token_id)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            partial.append(token_id)
            continue
        if enc.encode_ordinary(text) != [token_id]:
            unreached.append(token_id)
    _, _, index, answer = preset(name)
    assert list(index.ids) == all_ids
    assert answer["partial"] == partial and answer["ids"] == unreached and answer["count"] == len(unreached)
    assert unreached  # (the special tokens at least: the comparison is not of two empty lists)


def _byte_alphabet() -> dict[str, int]:
    """GPT-2's printable stand-ins for the 256 bytes (as its encoder.py defines them)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[chr(b)] = b
        else:
            out[chr(256 + extra)] = b
            extra += 1
    return out


def library_token_bytes(library: Any, name: str) -> dict[int, bytes]:
    """Every token's bytes, read from the file's vocab the way its decoder spells them."""
    vocab = library.get_vocab(with_added_tokens=True)
    added = {t.content for t in library.get_added_tokens_decoder().values()}
    out: dict[int, bytes] = {}
    if name == "llama2":  # SentencePiece style: "▁" is a space, <0xNN> one byte
        for token, token_id in vocab.items():
            match = regex.fullmatch(r"<0x([0-9A-F]{2})>", token)
            out[token_id] = bytes([int(match.group(1), 16)]) if match else token.replace("\u2581", " ").encode()
        return out
    alphabet = _byte_alphabet()
    for token, token_id in vocab.items():
        out[token_id] = token.encode() if token in added else bytes(alphabet[ch] for ch in token)
    return out


@pytest.mark.parametrize("name", ["qwen3", "llama2"])
def test_unreachable_equals_brute_force_through_tokenizers(name: str) -> None:
    need(name)
    library = tokenizers.Tokenizer.from_file(str(open_models.OPEN_MODELS[name].file_path()))
    library.encode_special_tokens = True  # special tokens' text is ordinary text, as "no special tokens" asks
    table = library_token_bytes(library, name)
    partial, texts = [], []
    for token_id in sorted(table):
        try:
            texts.append((token_id, table[token_id].decode("utf-8")))
        except UnicodeDecodeError:
            partial.append(token_id)
    encoded = library.encode_batch([t for _, t in texts], add_special_tokens=False)
    unreached = [token_id for (token_id, _), got in zip(texts, encoded) if got.ids != [token_id]]
    _, _, index, answer = preset(name)
    assert sorted(table) == list(index.ids)
    assert answer["partial"] == partial and answer["ids"] == unreached
    assert len(unreached) > 2


# --- each group's claim, replayed ----------------------------------------------------------


def test_groups_replay_with_tiktoken_pattern() -> None:
    need("o200k_base")
    enc, definition = tiktoken_encoding("o200k_base")
    tok, _, index, answer = preset("o200k_base")
    groups = answer["groups"]
    assert sorted(i for ids in groups.values() for i in ids) == answer["ids"]  # one group each
    assert set(groups["special"]) == set(definition["special_tokens"].values())
    for token_id in groups["pre_tokenizer"]:
        assert len(regex.findall(definition["pat_str"], index.text(token_id))) > 1
    assert groups["pre_tokenizer"] and not groups["normalizer"]


@pytest.mark.parametrize("name", ["qwen3", "llama2"])
def test_groups_replay_with_the_librarys_pipeline(name: str) -> None:
    need(name)
    library = tokenizers.Tokenizer.from_file(str(open_models.OPEN_MODELS[name].file_path()))
    tok, _, index, answer = preset(name)
    groups = answer["groups"]
    assert sorted(i for ids in groups.values() for i in ids) == answer["ids"]
    special = {i for i, t in library.get_added_tokens_decoder().items()}
    assert set(groups["special"]) <= special
    for token_id in groups["normalizer"]:
        text = index.text(token_id)
        assert library.normalizer.normalize_str(text) != text
    for token_id in groups["pre_tokenizer"]:
        text = index.text(token_id)
        normalized = library.normalizer.normalize_str(text) if library.normalizer else text
        assert library.normalizer is None or normalized == text
        assert len(library.pre_tokenizer.pre_tokenize_str(normalized)) > 1
    assert groups["normalizer"]  # qwen3's NFC and llama2's ▁ normalizer both change some tokens


def odd_list() -> LoadedTokenizer:
    """List order: "bc" first, so "abc" never forms from its own text; "abcd" uses it."""
    merges = ((98, 99, 256), (97, 98, 257), (257, 99, 258), (258, 100, 259), (97, 98, 260))
    vocab = {256: b"bc", 257: b"ab", 258: b"abc", 259: b"abcd", 260: b"ab"}
    return LoadedTokenizer(level="bytes", merges=merges, vocab=vocab, source="playground")


def test_merge_groups_replay_with_the_literal_encoder() -> None:
    tok = odd_list()
    index = VocabIndex.build(tok)
    answer = unreachable(index, tok).as_json()
    merges = [list(m) for m in tok.merges]
    texts = {i: index.text(i) for i in index.ids}
    brute = [i for i, t in texts.items() if t is not None and reference.encode(t, merges) != [i]]
    assert answer["partial"] == [i for i, t in texts.items() if t is None] == list(range(128, 256))
    assert answer["ids"] == brute == [258, 259, 260]
    # 258 is an operand of rule 3; 259 and 260 of none; every claim checked against the list itself
    assert answer["groups"]["inside"] == [258] and answer["groups"]["unused"] == [259, 260]
    for token_id in answer["ids"]:
        uses = sum(1 for a, b, _ in tok.merges if token_id in (a, b))
        assert (uses > 0) == (token_id in answer["groups"]["inside"])
    # a pair listed twice: the first rule makes the token, the second is its own (unused) id
    assert index.rank(257) == 1 and index.made_from(257) == (97, 98) and index.rank(260) == 4
    assert group_of(index, tok, 258) == "inside"
    assert self_ids(index, encoder(tok), 258) == [97, 256]


def test_a_rule_making_a_byte_or_looping_gives_no_parents() -> None:
    tok = LoadedTokenizer(level="bytes", merges=((97, 97, 97), (97, 98, 256), (256, 256, 256)),
                          vocab={256: b"ab"}, source="playground")
    index = VocabIndex.build(tok)
    assert index.made_from(97) is None
    assert index.made_from(256) == (97, 98)  # the first rule; the loop (256 + 256 -> 256) is not its rule
    assert index.tree(256) == {"id": 256, "children": [{"id": 97, "children": []}, {"id": 98, "children": []}]}


# --- made_from, used_by, trees, search --------------------------------------------------------


def lower_rank_split(token: bytes, ranks: dict[bytes, int]) -> list[bytes]:
    """Rank-order BPE of `token`'s bytes using only ranks below the token's own."""
    limit = ranks[token]
    parts = [bytes([b]) for b in token]
    while True:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < limit and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            return parts
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def test_made_from_is_the_lower_rank_split_of_a_rank_file() -> None:
    need("cl100k_base")
    from webapp.tokenizer.presets.openai import load_ranks
    ranks = dict(load_ranks("cl100k_base"))
    _, _, index, _ = preset("cl100k_base")
    for token in random.Random(29).sample(sorted(ranks), 1500):
        rank = ranks[token]
        if len(token) == 1:
            assert index.made_from(rank) is None and index.rank(rank) is None
            continue
        left, right = lower_rank_split(token, ranks)
        assert index.made_from(rank) == (ranks[left], ranks[right])
        assert index.rank(rank) == rank - 256  # the rule list is in rank order, after the 256 bytes


def test_used_by_trees_and_search_against_direct_scans() -> None:
    need("r50k_base")
    tok, _, index, _ = preset("r50k_base")
    for token_id in random.Random(7).sample(list(index.ids), 300):
        file_id = tok.id_map.get  # (the rules are in the playground's numbering: bytes 0..255)
        users = [i for i, (a, b, _) in enumerate(tok.merges) if token_id in (file_id(a, a), file_id(b, b))]
        count, first = index.used_by(token_id, some=3)
        assert count == len(users) and [r[0] for r in first] == users[:3]
        # the tree's leaves spell the token, and each inner node is its rule's two parts
        stack, leaves = [index.tree(token_id)], b""
        order = []
        while stack:
            node = stack.pop()
            if node["children"]:
                assert tuple(c["id"] for c in node["children"]) == index.made_from(node["id"])
                assert index.data[node["id"]] == b"".join(index.data[c["id"]] for c in node["children"])
                stack.extend(reversed(node["children"]))
            else:
                order.append(node["id"])
        leaves = b"".join(index.data[i] for i in order)
        assert leaves == index.data[token_id] and all(len(index.data[i]) == 1 for i in order)
    for q in (b" the", b"\xe4", b"ing", b"<|"):
        assert index.search(q) == [i for i in sorted(index.data) if q in index.data[i]]
    assert index.search(None) == sorted(index.data)


# --- statistics -----------------------------------------------------------------------------


def test_lengths_and_scripts_count_what_the_tokens_hold() -> None:
    tok = LoadedTokenizer(level="chars", merges=(("п", "р"), ("a", "b")),
                          vocab={"п": 0, "р": 1, "пр": 2, "a": 3, "b": 4, "ab": 5, "1": 6, "a日": 7, "\u0301": 8},
                          source="playground")
    index = VocabIndex.build(tok)
    assert length_histogram(index) == {1: 3, 2: 4, 4: 2}  # a b 1 | п р ab U+0301 | пр a日
    counts = script_counts(index)
    assert counts == {"Latin": 4, "Cyrillic": 3, "Common": 1, "Han": 1, "Inherited": 1}
    # each character's script is the one \p{Script=...} that matches it
    for ch, name in (("п", "Cyrillic"), ("日", "Han"), ("1", "Common"), ("\u0301", "Inherited")):
        assert regex.fullmatch(r"\p{Script=" + name + "}", ch)


def test_every_character_of_a_vocab_gets_exactly_one_script() -> None:
    need("qwen3")
    from webapp.tokenizer.vocab.stats import script_names, scripts_of_chars
    _, _, index, _ = preset("qwen3")
    chars = "".join(t for t in (index.text(i) for i in index.ids) if t)
    found = scripts_of_chars(chars)
    assert set(found) == set(chars)
    for ch in random.Random(3).sample(sorted(found), 300):
        assert [n for n in script_names() if regex.fullmatch(r"\p{Script=" + n + "}", ch)] == [found[ch]]
