"""A tokenizer.json's model as the library runs it (models/library.py), on small files, against `tokenizers`.

ignore_merges, byte_fallback (whole and partial sets of <0xXX> tokens), the
unknown token with and without fuse_unk, a file without one (unknown
characters left out), rules listed out of order, and post-processors
(TemplateProcessing, RobertaProcessing, Sequence): `encode_loaded` and
`Encoding.encode(add_special_tokens=...)` of a tokenizer.json must give the library's ids.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples
from tokenizers import Tokenizer

from webapp.tokenizer import formats as tokfiles
from tests.loaded_calls import encode_loaded
from webapp.tokenizer.api import Encoding

LETTERS = "abc▁é"


def _document(model: dict[str, Any], **extra: Any) -> str:
    doc: dict[str, Any] = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
    }
    doc.update(extra)
    base = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False}
    base.update(model)
    doc["model"] = base
    return json.dumps(doc)


def _vocab(tokens: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for token in tokens:
        out.setdefault(token, len(out))
    return out


def _check(content: str, texts: list[str]) -> None:
    library = Tokenizer.from_str(content)
    loaded = tokfiles.import_tokenizer(content)
    enc = Encoding.from_loaded("sample", loaded)
    for text in texts:
        expected = library.encode(text, add_special_tokens=False).ids if text else []
        assert encode_loaded(loaded, text) == expected, text
        for add in (True, False):
            assert enc.encode(text, add_special_tokens=add) == library.encode(text, add_special_tokens=add).ids, text
    again = pickle.loads(pickle.dumps(loaded))  # what encoding keeps on the tokenizer is not pickled
    assert all(encode_loaded(again, t) == encode_loaded(loaded, t) for t in texts)


MERGES = [["b", "c"], ["a", "b"], ["a", "bc"], ["ab", "c"], ["▁", "a"], ["▁a", "bc"]]
MADE = ["bc", "ab", "abc", "▁a", "▁abc"]


def test_ignore_merges_takes_a_vocab_piece_whole():
    # "ac" is in the vocab but no rule makes it: only ignore_merges gives it
    vocab = _vocab([*LETTERS, *MADE, "ac", "cab"])
    pre = {"type": "Whitespace"}
    for ignore in (True, False):
        content = _document({"vocab": vocab, "merges": MERGES, "ignore_merges": ignore}, pre_tokenizer=pre)
        _check(content, ["ac", "cab abc ac", "acac", "a b c", ""])


@pytest.mark.parametrize("unk", [None, "<unk>"])
@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("fallback", ["none", "all", "partial"])
def test_byte_fallback_and_the_unknown_token(unk, fuse, fallback):
    tokens = [*LETTERS, *MADE]
    if unk:
        tokens.insert(0, unk)
    if fallback == "all":
        tokens += [f"<0x{b:02X}>" for b in range(256)]
    elif fallback == "partial":
        tokens += ["<0xE4>", "<0xB8>", "<0x80>", "<0x0A>"]  # "一" and "\n" fall back, "é"-less others do not
    content = _document({"vocab": _vocab(tokens), "merges": MERGES, "unk_token": unk, "fuse_unk": fuse,
                         "byte_fallback": fallback != "none"})
    _check(content, ["abc", "a\nb", "一二abc", "xyz", "axxbc一\n", "😀😀a", ""])


@settings(max_examples=examples(60), deadline=None)
@given(st.text(alphabet="abc▁é一x\n", max_size=30))
def test_fallback_files_on_random_text(text):
    tokens = ["<unk>", *LETTERS, *MADE, *(f"<0x{b:02X}>" for b in range(256)), "<0xE4><0xB8>"]
    content = _document({"vocab": _vocab(tokens), "merges": MERGES + [["<0xE4>", "<0xB8>"]],
                         "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True})
    library = Tokenizer.from_str(content)
    assert encode_loaded(tokfiles.import_tokenizer(content), text) == (
        library.encode(text, add_special_tokens=False).ids if text else [])


def _with_specials(post: Any) -> str:
    vocab = _vocab(["<s>", "</s>", "<bos>", *LETTERS, *MADE])
    added = [{"id": vocab[t], "content": t, "special": True, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False} for t in ("<s>", "</s>", "<bos>")]
    return _document({"vocab": vocab, "merges": MERGES}, added_tokens=added, post_processor=post)


TEMPLATE = {
    "type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "</s>", "type_id": 0}}],
    "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<bos>": {"id": "<bos>", "ids": [2], "tokens": ["<bos>"]},
                       "</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}},
}
ROBERTA = {"type": "RobertaProcessing", "sep": ["</s>", 1], "cls": ["<s>", 0], "trim_offsets": True,
           "add_prefix_space": False}


@pytest.mark.parametrize("post", [
    None, TEMPLATE, ROBERTA, {"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}, TEMPLATE]},
], ids=["none", "template", "roberta", "sequence"])
def test_post_processors_add_what_the_library_adds(post):
    _check(_with_specials(post), ["abc", "", "<s>abc</s>", "▁abc<bos>"])


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "▁", "ab", "bc", "▁a", "<0x78>"]),
                          st.sampled_from(["a", "b", "c", "▁", "bc", "c▁", "<0x78>"])), max_size=12),
       st.text(alphabet="abc▁é一x", min_size=60, max_size=300))
def test_long_pieces_cut_where_no_merge_joins(rules, text):
    # a piece over LONG_PIECE characters is merged part by part: the same ids as the whole piece. "一" and
    # "x" are no tokens: their fallback bytes stay apart (a cut on both sides) unless a rule names one
    # (here "x"'s byte, <0x78>)
    tokens = ["<unk>", *LETTERS, *(f"<0x{b:02X}>" for b in range(256))]
    kept = []
    for a, b in rules:
        if a in tokens and b in tokens:
            tokens.append(a + b)
            kept.append([a, b])
    content = _document({"vocab": _vocab(tokens), "merges": kept, "unk_token": "<unk>", "fuse_unk": True,
                         "byte_fallback": True})
    assert encode_loaded(tokfiles.import_tokenizer(content), text) == Tokenizer.from_str(content).encode(
        text, add_special_tokens=False).ids


FAR = "\U00030000"  # (past long_pieces.CHAR_TABLE_LIMIT: in no character table, nor in the edge grid)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "▁", FAR, "ab", "▁a", "a" + FAR]),
                          st.sampled_from(["a", "b", "▁", FAR, "b▁", FAR + "a"])), max_size=12),
       st.text(alphabet="ab▁一" + FAR, min_size=65, max_size=200))
def test_long_pieces_cut_alike_with_the_edge_grid_and_with_the_hashed_edges(rules, text):
    # piece_cuts reads the rules' edges in a grid by token id, or hashed when the grid would be too big; a
    # token past the character table is never in the grid, and its pairs are looked up hashed either way
    from webapp.tokenizer.models import long_pieces
    from webapp.tokenizer.stages.models import library_model

    tokens = ["<unk>", "a", "b", "▁", FAR, *(f"<0x{b:02X}>" for b in range(256))]
    kept = []
    for a, b in rules:
        if a in tokens and b in tokens and a + b not in tokens:
            tokens.append(a + b)
            kept.append([a, b])
    content = _document({"vocab": _vocab(tokens), "merges": kept, "unk_token": "<unk>", "byte_fallback": True})
    expected = Tokenizer.from_str(content).encode(text, add_special_tokens=False).ids
    segments = []
    for cells in (long_pieces.EDGE_GRID_CELLS, 0):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(long_pieces, "EDGE_GRID_CELLS", cells)
            loaded = tokfiles.import_tokenizer(content)
            model = library_model(loaded)
            segments.append(long_pieces.segments_of(model.cut, text))
            assert (model.cut.edge_grid() is None) == (cells == 0)
            assert encode_loaded(loaded, text) == expected
    assert segments[0] == segments[1]


def literal_segments(vocab: dict[str, int], rules: list[list[str]], text: str) -> list[str]:
    """The text cut as long_pieces.py's docstring says, one pair of neighbours at a time: between two vocab
    tokens that no rule's edge (its left token's last character, its right token's first) joins; beside a
    character spelt by fallback bytes no rule names ("inert") when the other is a token or inert too and no
    unknown character waits (the last character before that is not inert is not an unknown one)."""
    edges = {(left[-1], right[0]) for left, right in rules}
    named = {token for rule in rules for token in rule if token.startswith("<0x")}

    def kind(ch: str) -> str:
        if ch in vocab:
            return "token"
        spelt = [f"<0x{b:02X}>" for b in ch.encode()]
        return "inert" if all(s in vocab for s in spelt) and not named & set(spelt) else "unknown"

    kinds = [kind(ch) for ch in text]
    out, start, waiting = [], 0, False
    for i in range(len(text) - 1):
        if kinds[i] != "inert":
            waiting = kinds[i] == "unknown"
        both_tokens = kinds[i] == kinds[i + 1] == "token"
        if (both_tokens and (text[i], text[i + 1]) not in edges) or (
                "inert" in (kinds[i], kinds[i + 1]) and kinds[i + 1] != "unknown" and not waiting):
            out.append(text[start:i + 1])
            start = i + 1
    return [*out, text[start:]] if text else []


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "▁", FAR, "ab", "a\n", "<0x0A>", "<0xE4>"]),
                          st.sampled_from(["a", "b", "▁", FAR, "b▁", "\nb", "<0x0A>"])), max_size=10),
       st.text(alphabet="ab▁一x\n" + FAR, min_size=65, max_size=160), st.booleans(), st.booleans(), st.booleans(),
       st.booleans())
@example([("a\n", "a")], "a\na" * 30, False, False, False, True)  # (an edge from an inert character, hashed)
@example([("a", "\nb")], "a\nb" * 30, False, False, False, True)  # (an edge to one)
def test_long_pieces_are_cut_at_every_place_the_docstring_names(rules, text, unk, fuse, gridded, plain):
    # fewer cuts would still give the right ids (test_long_pieces_cut_where_no_merge_joins): this one checks
    # that every cut the argument allows is made, and no other, against a literal reading of it, with the
    # edges in a grid and hashed. "a\n" and "\nb" are tokens no rule makes: a rule's edge may start or end at
    # an inert "\n"
    from webapp.tokenizer.models import long_pieces
    from webapp.tokenizer.stages.models import library_model

    tokens = ["<unk>", "a", "b", "▁", FAR, "a\n", "\nb", "<0x0A>", "<0xE4>", "<0xB8>", "<0x80>"]  # ("一" spelt)
    if plain:  # (no unknown character and no token past the table: the usual case of prose)
        text = text.replace("x", "a").replace(FAR, "b")
    kept = []
    for a, b in rules:
        if a in tokens and b in tokens and a + b not in tokens:
            tokens.append(a + b)
            kept.append([a, b])
    content = _document({"vocab": _vocab(tokens), "merges": kept, "unk_token": "<unk>" if unk else None,
                         "fuse_unk": fuse, "byte_fallback": True})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(long_pieces, "EDGE_GRID_CELLS", long_pieces.EDGE_GRID_CELLS if gridded else 0)
        loaded = tokfiles.import_tokenizer(content)
        cut = library_model(loaded).cut
        assert long_pieces.segments_of(cut, text) == literal_segments(_vocab(tokens), kept, text)
        assert (cut.edge_grid() is not None) == gridded
        assert encode_loaded(loaded, text) == Tokenizer.from_str(content).encode(text, add_special_tokens=False).ids


@settings(max_examples=examples(60), deadline=None)
@given(st.text(alphabet="abc▁é一x\n", min_size=65, max_size=200), st.booleans(), st.booleans())
def test_long_pieces_keep_the_unknown_token_beside_fallback_bytes(text, fuse, named):
    # a partial set of <0xXX> tokens: "一" and "\n" fall back, "x" is the unknown token. The library puts
    # fallback bytes before an unknown token still waiting (fused or not), so no cut may part them
    tokens = ["<unk>", *LETTERS, *MADE, "<0xE4>", "<0xB8>", "<0x80>", "<0x0A>"]
    merges = MERGES + ([["<0x0A>", "a"]] if named else [])
    if named:
        tokens.append("<0x0A>a")
    content = _document({"vocab": _vocab(tokens), "merges": merges, "unk_token": "<unk>", "fuse_unk": fuse,
                         "byte_fallback": True})
    assert encode_loaded(tokfiles.import_tokenizer(content), text) == Tokenizer.from_str(content).encode(
        text, add_special_tokens=False).ids


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "▁", "ab", "bc", "▁a"]),
                          st.sampled_from(["a", "b", "c", "▁", "bc", "c▁"])), max_size=12),
       st.lists(st.text(alphabet="abc▁é一", min_size=1, max_size=150), min_size=1, max_size=5),
       st.booleans())
def test_several_long_pieces_of_one_run_are_cut_together(rules, texts, unk):
    # a Split makes several pieces, long and short, repeated or not: they are cut in one pass
    tokens = (["<unk>"] if unk else []) + [*LETTERS, *(f"<0x{b:02X}>" for b in range(256))]
    kept = []
    for a, b in rules:
        if a in tokens and b in tokens:
            tokens.append(a + b)
            kept.append([a, b])
    content = _document({"vocab": _vocab(tokens), "merges": kept, "unk_token": "<unk>" if unk else None,
                         "fuse_unk": unk, "byte_fallback": not unk},
                        pre_tokenizer={"type": "Split", "pattern": {"String": "x"}, "behavior": "Isolated",
                                       "invert": False})
    text = "x".join(texts + texts[:1])
    assert encode_loaded(tokfiles.import_tokenizer(content), text) == Tokenizer.from_str(content).encode(
        text, add_special_tokens=False).ids


@settings(max_examples=examples(100), deadline=None)
@given(st.text(alphabet="ab▁日\x00\ud800😀\u0301", max_size=40), st.data())
def test_the_texts_between_bounds_are_the_slices(text, data):
    # long_pieces.py makes a long piece's segment texts with one decode (a NUL after each); a text that
    # holds a NUL (or a lone surrogate) must give the same strings as slicing
    from webapp.tokenizer.models.long_pieces import _texts_between, code_points

    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=8)))
    spans = [(a, b) for a, b in zip(cuts, cuts[1:]) if data.draw(st.booleans())]
    starts, ends = (np.array(side, dtype=np.int64) for side in zip(*spans)) if spans else (np.zeros(0, np.int64),) * 2
    assert _texts_between(text, code_points(text), starts, ends) == [text[a:b] for a, b in spans]


@pytest.mark.parametrize("change", [
    {"post_processor": {"type": "TemplateProcessing", "single": "nope", "special_tokens": {}}},
    {"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<x>"}}], "special_tokens": {}}},
    {"post_processor": {"type": "Sequence", "processors": [{"type": "Weird"}]}},
    {"post_processor": [1, 2]},
    {"model_options": {"ignore_merges": "yes", "byte_fallback": 1, "fuse_unk": None, "dropout": "x", "unk_token": 5}},
])
def test_odd_model_options_and_post_processors_open_with_a_note_or_as_the_library_reads_them(change):
    extra = {k: v for k, v in change.items() if k != "model_options"}
    model = {"vocab": _vocab([*LETTERS, *MADE]), "merges": MERGES, **change.get("model_options", {})}
    loaded = tokfiles.import_tokenizer(_document(model, **extra))
    ids = encode_loaded(loaded, "abc ▁abc")
    assert ids and all(isinstance(i, int) for i in ids)
    if "post_processor" in change:
        assert any("post-processor" in note for note in loaded.notes)


def test_a_deeply_nested_post_processor_is_a_clear_error():
    from webapp.tokenizer import TokenizerError

    nested = '{"type": "Sequence", "processors": [' * 5000 + '{"type": "ByteLevel"}' + "]}" * 5000
    content = _document({"vocab": _vocab([*LETTERS, *MADE]), "merges": MERGES}, post_processor="HERE")
    content = content.replace('"HERE"', nested)
    with pytest.raises(TokenizerError) as info:
        tokfiles.import_tokenizer(content)
    assert "deep" in info.value.message or "nest" in info.value.message


def test_the_precompiled_library_form_round_trips_and_refuses_damage():
    from webapp.tokenizer.formats.library_stored import LIBRARY_FORM_VERSION, dumps_library, loads_library

    vocab = _vocab([*LETTERS, *MADE, "ac", "é\U0001F44D"])
    content = _document({"vocab": vocab, "merges": MERGES, "ignore_merges": True}, pre_tokenizer={"type": "Whitespace"})
    loaded = tokfiles.import_tokenizer(content)
    data = dumps_library(loaded)
    again = loaded_again = loads_library(data)
    assert (again.merges, again.vocab, again.model, again.pipeline) == (
        loaded.merges, loaded.vocab, loaded.model, loaded.pipeline)
    for text in ["ac", "cab abc ac", "é\U0001F44D a"]:
        assert encode_loaded(loaded_again, text) == encode_loaded(loaded, text)
    version = f"\"v\": {LIBRARY_FORM_VERSION}".encode()
    for damaged in (data[: len(data) // 2], b"not a zip file", data.replace(version, b"\"v\": 1")):
        with pytest.raises(ValueError):
            loads_library(damaged)
