"""Tokenizer files in and out, checked against the real libraries (no downloads).

Small byte-level and character-level tokenizers are trained with Hugging Face
`tokenizers` inside the tests and saved in its formats; tiktoken encodings are
built from rank files the tests write. Each import must give the library's own
ids on several texts; each export must load back (in our importer and, for
tokenizer.json, in `tokenizers`) with the same ids; each refusal has a test.
"""

from __future__ import annotations

import base64
import json
import random

import pytest
import tiktoken
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

from tests import reference_pretokenize
from tests.hf_samples import byte_level_tokenizer, char_level_tokenizer
from webapp.tokenizer import TokenizerError, bpe_encode_text, encode, train_trace, training_vocab
from webapp.tokenizer.pretokenize import pretokenized as pretokenize
from webapp.tokenizer import reference
from webapp.tokenizer import formats as tokfiles
from tests.loaded_calls import encode_loaded, encode_loaded_trace
from webapp.tokenizer.pretokenize.patterns import CL100K_PATTERN, GPT2_PATTERN
from webapp.tokenizer.core.token_sizes import SizeLimits, check_sizes

CORPUS = [
    "The lower the newest, the wider the widest: lowering lowers the lowest newer widths.",
    "Hello there! Don't you know they'll say we're happy? I've 12345 reasons, 6789 more.",
    "Zürich, Köln und München: schöne Städte. Ça va très bien, merci à vous.",
    "日本語のテキストも少し。東京と大阪。Русский текст тоже здесь есть.",
    "def encode(text):\n    return [ord(c) for c in text]  # code   with   spaces\n\n",
    "emoji 🙂🙂 and tabs\tand\ttabs, numbers 2024-11-30 and 3.14159.",
]
TEXTS = [
    "the lowest newer widths",
    "Hello there! Don't they'll we're I've 42 reasons",
    "München und Zürich, très bien",
    "東京のテキスト Русский",
    "    return [ord(c) for c in text]\n\n\tx",
    "🙂 unseen words qzx 999999 ... !!",
    "",
]


def _byte_level_tokenizer(use_regex: bool, vocab_size: int = 600) -> Tokenizer:
    return byte_level_tokenizer(CORPUS, use_regex=use_regex, vocab_size=vocab_size)


def _char_level_tokenizer(corpus: list[str] = CORPUS) -> Tokenizer:
    return char_level_tokenizer(corpus, vocab_size=400)


@pytest.fixture(scope="module")
def byte_regex_tok() -> Tokenizer:
    return _byte_level_tokenizer(use_regex=True)


@pytest.fixture(scope="module")
def byte_plain_tok() -> Tokenizer:
    return _byte_level_tokenizer(use_regex=False)


@pytest.fixture(scope="module")
def char_tok() -> Tokenizer:
    return _char_level_tokenizer()


def _our_ids(loaded: tokfiles.LoadedTokenizer, text: str, scheme: str | None = None) -> list[int]:
    return encode_loaded(loaded, text, scheme)


# --------------------------------------------------------------------------
# The byte alphabet


def test_byte_alphabet_is_gpt2s():
    assert len(set(tokfiles.BYTE_ALPHABET)) == 256
    assert tokfiles.BYTE_ALPHABET[ord(" ")] == "Ġ"
    assert tokfiles.BYTE_ALPHABET[ord("\n")] == "Ċ"
    assert tokfiles.BYTE_ALPHABET[ord("a")] == "a"
    # the library's own alphabet is the same set of characters
    assert set(pre_tokenizers.ByteLevel.alphabet()) == set(tokfiles.BYTE_ALPHABET)
    every = bytes(range(256))
    assert tokfiles.token_to_bytes(tokfiles.bytes_to_token(every)) == every
    assert tokfiles.token_to_bytes("a b") is None  # a plain space is not in the alphabet


@pytest.mark.parametrize("size", [0, 1, 127, 128, 129, 5000])
def test_bytes_are_spelt_one_character_each_short_or_long(size):
    """Short inputs are spelt with str.translate, long ones with numpy: the same characters."""
    data = random.Random(size).randbytes(size)
    assert tokfiles.bytes_to_token(data) == "".join(tokfiles.BYTE_ALPHABET[b] for b in data)


# --------------------------------------------------------------------------
# Hugging Face tokenizer.json


@pytest.mark.parametrize("merge_form", ["pairs", "strings"])
def test_hf_byte_level_gpt2_regex_gives_library_ids(byte_regex_tok, merge_form):
    document = json.loads(byte_regex_tok.to_str())
    if merge_form == "strings":
        document["model"]["merges"] = [f"{a} {b}" for a, b in document["model"]["merges"]]
    loaded = tokfiles.import_tokenizer(json.dumps(document))
    assert loaded.level == "bytes" and loaded.source == "hf"
    assert loaded.pretokenize == "gpt2"
    assert len(loaded.merges) == len(document["model"]["merges"]) > 100
    # GPT-2's alphabet numbers single bytes in its own order: they are relabelled
    assert loaded.id_map and all(0 <= k < 256 for k in loaded.id_map)
    for text in TEXTS:
        assert _our_ids(loaded, text) == byte_regex_tok.encode(text).ids, text


def test_hf_byte_level_without_regex_gives_library_ids(byte_plain_tok):
    loaded = tokfiles.import_tokenizer(byte_plain_tok.to_str(), fmt="hf")
    assert loaded.pretokenize == "none"
    for text in TEXTS:
        assert _our_ids(loaded, text) == byte_plain_tok.encode(text).ids, text


def test_hf_char_level_gives_library_ids(char_tok):
    loaded = tokfiles.import_tokenizer(char_tok.to_str())
    assert loaded.level == "chars"
    for text in ["the lowest newer", "Hello there! Don't", "München, très", "東京と大阪 Русский"]:
        ours = bpe_encode_text(text, loaded.vocab, list(loaded.merges))
        assert ours == char_tok.encode(text).ids, text


def test_hf_byte_level_decoding_with_file_vocab(byte_regex_tok):
    from webapp.tokenizer import decode

    loaded = tokfiles.import_tokenizer(byte_regex_tok.to_str())
    vocab = {i: list(b) for i, b in loaded.file_vocab().items()}
    for text in TEXTS:
        assert decode(byte_regex_tok.encode(text).ids, vocab) == text


def test_hf_trace_shows_file_ids_and_pieces(byte_regex_tok):
    loaded = tokfiles.import_tokenizer(byte_regex_tok.to_str())
    text = "the lowest newer widths"
    trace = encode_loaded_trace(loaded, text)
    assert trace.ids == byte_regex_tok.encode(text).ids
    assert [t.id for t in trace.tokens] == trace.ids
    assert trace.pretokens == [(0, 3), (3, 10), (10, 16), (16, 23)]
    spans = [(t.start, t.end) for t in trace.tokens]
    assert spans == [(s, e) for s, e in byte_regex_tok.encode(text).offsets]


# --------------------------------------------------------------------------
# vocab.json + merges.txt


def test_vocab_merges_pair_byte_level(byte_regex_tok, tmp_path):
    byte_regex_tok.model.save(str(tmp_path))
    vocab_json = (tmp_path / "vocab.json").read_text("utf-8")
    merges_txt = (tmp_path / "merges.txt").read_text("utf-8")
    assert merges_txt.startswith("#version")
    loaded = tokfiles.import_tokenizer(vocab_json, merges_txt=merges_txt)
    assert loaded.level == "bytes" and loaded.source == "vocab-merges"
    for text in TEXTS:
        assert _our_ids(loaded, text, "gpt2") == byte_regex_tok.encode(text).ids, text


def test_vocab_merges_pair_char_level(tmp_path):
    # Trained with the Whitespace pre-tokenizer so that no token holds a space
    # (merges.txt cannot always say where a token with a space ends); compared
    # on single words, where that pre-tokenizer and "none" agree.
    char_tok = Tokenizer(models.BPE())
    char_tok.pre_tokenizer = pre_tokenizers.Whitespace()
    char_tok.train_from_iterator(CORPUS * 3, trainer=trainers.BpeTrainer(vocab_size=300, show_progress=False))
    char_tok.model.save(str(tmp_path))
    loaded = tokfiles.import_tokenizer((tmp_path / "vocab.json").read_bytes(), merges_txt=(tmp_path / "merges.txt").read_bytes())
    assert loaded.level == "chars" and len(loaded.merges) > 50
    for word in ["lowest", "widths", "München", "Русский", "東京と大阪"]:
        assert bpe_encode_text(word, loaded.vocab, list(loaded.merges)) == char_tok.encode(word).ids, word


def test_merges_txt_with_space_tokens_read_by_what_earlier_rules_make():
    vocab = {"a": 0, " ": 1, "b": 2, "a ": 3, "a b": 4}
    loaded = tokfiles.import_tokenizer(json.dumps(vocab), merges_txt="#version: 0.2\na  \na  b\n")
    assert loaded.merges == (("a", " "), ("a ", "b"))


# --------------------------------------------------------------------------
# tiktoken rank files


def _ranks_from(tok: Tokenizer, *, shuffle_bytes: bool) -> dict[bytes, int]:
    """Ranks for a tiktoken Encoding: bytes first (optionally in a shuffled order), then merges."""
    loaded = tokfiles.import_tokenizer(tok.to_str())
    order = list(range(256))
    if shuffle_bytes:
        random.Random(5).shuffle(order)
    ranks = {bytes([b]): rank for rank, b in enumerate(order)}
    made: dict[int, bytes] = {}
    for left, right, new in loaded.merges:
        data = (bytes([left]) if left < 256 else made[left]) + (bytes([right]) if right < 256 else made[right])
        made[new] = data
        ranks.setdefault(data, len(ranks))
    return ranks


def _rank_file(ranks: dict[bytes, int]) -> str:
    return "".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in sorted(ranks.items(), key=lambda x: x[1]))


@pytest.mark.parametrize("shuffle_bytes", [False, True])
@pytest.mark.parametrize(("scheme", "pattern"), [("gpt2", GPT2_PATTERN), ("cl100k", CL100K_PATTERN)])
def test_tiktoken_rank_file_gives_tiktoken_ids(byte_regex_tok, shuffle_bytes, scheme, pattern):
    ranks = _ranks_from(byte_regex_tok, shuffle_bytes=shuffle_bytes)
    enc = tiktoken.Encoding(f"test-{scheme}", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    content = _rank_file(ranks)
    loaded = tokfiles.import_tokenizer(content)
    assert loaded.source == "tiktoken" and loaded.level == "bytes"
    assert bool(loaded.id_map) == shuffle_bytes
    for text in TEXTS:
        assert _our_ids(loaded, text, scheme) == enc.encode(text), text
    # exporting gives the same rank file back, and it imports to the same tokenizer
    assert tokfiles.export_tiktoken(loaded) == content
    again = tokfiles.import_tokenizer(tokfiles.export_tiktoken(loaded), fmt="tiktoken")
    assert again.merges == loaded.merges and again.id_map == loaded.id_map


def test_tiktoken_whole_text_pattern_matches_list_order(byte_plain_tok):
    ranks = _ranks_from(byte_plain_tok, shuffle_bytes=False)
    enc = tiktoken.Encoding("whole", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    loaded = tokfiles.parse_tiktoken(_rank_file(ranks))
    for text in TEXTS:
        assert _our_ids(loaded, text, "none") == enc.encode(text), text


# --------------------------------------------------------------------------
# minbpe .model


MINBPE_MODEL = "minbpe v1\n\n1\n<|endoftext|> 261\n97 97\n256 97\n98 99\n257 258\n108 111\n"


def test_minbpe_model_import():
    loaded = tokfiles.import_tokenizer(MINBPE_MODEL)
    assert loaded.source == "minbpe" and loaded.pretokenize == "none"
    assert loaded.merges == ((97, 97, 256), (256, 97, 257), (98, 99, 258), (257, 258, 259), (108, 111, 260))
    assert loaded.special_tokens == {"<|endoftext|>": 261}
    assert loaded.vocab[259] == b"aaabc"
    assert encode("aaabc lo", list(loaded.merges)) == [259, 32, 260]


def test_minbpe_pattern_line_sets_the_scheme():
    model = f"minbpe v1\n{GPT2_PATTERN}\n0\n104 101\n"
    assert tokfiles.parse_minbpe(model).pretokenize == "gpt2"
    model = f"minbpe v1\n{CL100K_PATTERN}\n0\n104 101\n"
    assert tokfiles.parse_minbpe(model).pretokenize == "cl100k"


# --------------------------------------------------------------------------
# Exports round-trip through their imports, and into the libraries


def _trained_in_playground() -> tokfiles.LoadedTokenizer:
    words = " ".join(CORPUS).split()
    trace = train_trace(words, 150)
    vocab = training_vocab(words, trace.pairs)
    return tokfiles.from_playground(level="chars", merges=trace.pairs, vocab=vocab)


def test_playground_chars_export_hf_loads_in_tokenizers_with_same_ids():
    loaded = _trained_in_playground()
    library = Tokenizer.from_str(tokfiles.export_hf(loaded))
    for word in ["lowest", "widths", "München", "reasons", "Русский", "the"]:
        ours = bpe_encode_text(word, loaded.vocab, list(loaded.merges))
        assert library.encode(word).ids == ours, word
        assert library.decode(ours) == word


def test_playground_bytes_export_hf_loads_in_tokenizers_with_same_ids():
    chars = _trained_in_playground()
    rules, _notes = tokfiles.char_merges_to_bytes(chars.merges)
    loaded = tokfiles.from_playground(level="bytes", merges=rules, pretokenize="gpt2")
    for scheme in ("none", "gpt2", "cl100k"):
        library = Tokenizer.from_str(tokfiles.export_hf(loaded, scheme))
        for text in TEXTS:
            ours = encode_loaded(loaded, text, scheme)
            # Each piece of the scheme's split, encoded literally (scheme "none": one piece).
            assert ours == [i for piece in pretokenize.split_text(text, scheme) for i in reference.encode(piece, rules)]
            assert library.encode(text).ids == ours, (scheme, text)
            assert library.decode(ours) == text


@pytest.mark.parametrize("which", ["regex", "plain"])
def test_imported_hf_export_hf_keeps_library_ids(byte_regex_tok, byte_plain_tok, which):
    original = byte_regex_tok if which == "regex" else byte_plain_tok
    loaded = tokfiles.import_tokenizer(original.to_str())
    exported = Tokenizer.from_str(tokfiles.export_hf(loaded))
    back = tokfiles.import_tokenizer(tokfiles.export_hf(loaded))
    assert back.merges == loaded.merges and back.id_map == loaded.id_map
    for text in TEXTS:
        assert exported.encode(text).ids == original.encode(text).ids


def test_char_hf_export_round_trip(char_tok):
    loaded = tokfiles.import_tokenizer(char_tok.to_str())
    back = tokfiles.import_tokenizer(tokfiles.export_hf(loaded))
    assert back.level == "chars" and back.merges == loaded.merges and back.vocab == loaded.vocab


@pytest.mark.parametrize("level", ["bytes", "chars"])
def test_seed_export_round_trip(byte_regex_tok, char_tok, level):
    loaded = tokfiles.import_tokenizer((byte_regex_tok if level == "bytes" else char_tok).to_str())
    content = tokfiles.export_playground_json(loaded)
    back = tokfiles.import_tokenizer(content)
    assert back.level == level
    assert back.merges == loaded.merges and back.vocab == loaded.vocab
    assert back.id_map == loaded.id_map and back.pretokenize == loaded.pretokenize
    if level == "bytes":
        for text in TEXTS:
            assert _our_ids(back, text) == byte_regex_tok.encode(text).ids


def test_minbpe_export_round_trip_bytes_and_chars():
    model = tokfiles.export_minbpe(tokfiles.parse_minbpe(MINBPE_MODEL))
    assert model == MINBPE_MODEL.replace("<|endoftext|> 261\n", "<|endoftext|> 261\n")
    chars = _trained_in_playground()
    exported = tokfiles.export_minbpe(chars, "gpt2")
    back = tokfiles.import_tokenizer(exported)
    assert back.pretokenize == "gpt2" and back.merges[-1][2] == 255 + len(back.merges)
    # the byte-level translation splits words exactly like the character rules
    vocab_r = {v: k for k, v in chars.vocab.items()}
    for word in ["lowest", "München", "Русский", "東京と大阪"]:
        tokens = [vocab_r[i] for i in bpe_encode_text(word, chars.vocab, list(chars.merges))]
        pieces: list[str] = []
        pending = b""
        for i in encode(word, list(back.merges)):
            # a character no rule uses stays as its bytes: group them back into it
            pending += back.vocab[i] if i >= 256 else bytes([i])
            try:
                pieces.append(pending.decode("utf-8"))
                pending = b""
            except UnicodeDecodeError:
                continue
        assert pieces == tokens, word


def test_minbpe_export_renumbers_merged_ids():
    loaded = tokfiles.from_playground(level="bytes", merges=[[104, 105, 1000], [1000, 33, 2000]])
    back = tokfiles.parse_minbpe(tokfiles.export_minbpe(loaded))
    assert back.merges == ((104, 105, 256), (256, 33, 257))


def test_detect_format():
    assert tokfiles.detect_format('{"model": {"type": "BPE"}}') == "hf"
    assert tokfiles.detect_format('{"merges": []}') == "playground"
    assert tokfiles.detect_format("minbpe v1\n\n0\n") == "minbpe"
    assert tokfiles.detect_format("IQ== 0\nIg== 1\n") == "tiktoken"


def test_hf_normalizer_and_prefix_space_are_applied(byte_regex_tok):
    # (once only noted; now applied as the library does: tests/unit/tokenizer/hf/test_hf_pipeline.py has the rest)
    document = json.loads(byte_regex_tok.to_str())
    document["normalizer"] = {"type": "NFC"}
    document["pre_tokenizer"]["add_prefix_space"] = True
    loaded = tokfiles.import_tokenizer(json.dumps(document))
    assert loaded.notes == ()
    library = Tokenizer.from_str(json.dumps(document))
    for text in TEXTS + ["cafe\u0301 e\u0308"]:
        assert _our_ids(loaded, text) == library.encode(text).ids, text


def test_hf_cl100k_split_pre_tokenizer_is_recognised(byte_regex_tok):
    tok = Tokenizer.from_str(byte_regex_tok.to_str())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(CL100K_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    loaded = tokfiles.import_tokenizer(tok.to_str())
    assert loaded.pretokenize == "cl100k"
    for text in TEXTS:
        assert _our_ids(loaded, text) == tok.encode(text).ids, text


# --------------------------------------------------------------------------
# Refusals: one test per message


def _hf(model: dict, **extra) -> str:
    document = {"version": "1.0", "pre_tokenizer": None, "decoder": None, "model": model}
    document.update(extra)
    return json.dumps(document)


def _refused(content, **kwargs) -> TokenizerError:
    with pytest.raises(TokenizerError) as info:
        tokfiles.import_tokenizer(content, **kwargs)
    return info.value


@pytest.mark.parametrize("kind", ["WordPiece", "Unigram", "WordLevel"])
def test_refuses_non_bpe_models(kind):
    err = _refused(_hf({"type": kind, "vocab": {"a": 0}}))
    assert err.field == "file"
    assert f"holds a {kind} model; the playground can only represent BPE" in err.message


def test_refuses_merge_result_missing_from_vocab():
    err = _refused(_hf({"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}))
    assert err.field == "merges" and err.location == {"rule": 1}
    assert err.message == 'merges: rule 1 joins "a" and "b" into "ab", which is not in the vocab'


def test_refuses_merge_operand_missing_from_vocab():
    err = _refused(_hf({"type": "BPE", "vocab": {"a": 0, "ac": 1}, "merges": [["a", "c"]]}))
    assert err.message == 'merges: rule 1 uses "c", which is not in the vocab'


def test_refuses_invalid_json():
    err = _refused('{"model": ', fmt="hf")
    assert err.message.startswith("file: tokenizer.json is not valid JSON") and err.location["line"] == 1


def test_refuses_json_without_model():
    err = _refused('{"hello": 1}', fmt="hf")
    assert err.message == 'file: this is not a Hugging Face tokenizer.json: there is no "model" object'


def test_refuses_bpe_model_without_vocab_and_merges():
    err = _refused(_hf({"type": "BPE"}))
    assert "has no \"vocab\" and \"merges\", so it is not BPE" in err.message


def test_refuses_byte_level_token_outside_the_alphabet():
    content = _hf(
        {"type": "BPE", "vocab": {"a": 0, "b b": 1}, "merges": []},
        pre_tokenizer={"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
    )
    err = _refused(content)
    assert err.field == "vocab" and err.location == {"key": "b b"}
    assert 'has the character " ", which is not in the byte-level alphabet' in err.message


def test_refuses_malformed_merge_string():
    err = _refused(_hf({"type": "BPE", "vocab": {"a": 0}, "merges": ["abc"]}))
    assert err.message == 'merges: rule 1 should be two tokens separated by one space, got "abc"'


def test_refuses_malformed_merge_item():
    err = _refused(_hf({"type": "BPE", "vocab": {"a": 0}, "merges": [["a", "b", "c"]]}))
    assert err.message.startswith('merges: rule 1 should be "left right" or ["left", "right"]')


def test_refuses_merges_that_are_not_a_list():
    err = _refused(_hf({"type": "BPE", "vocab": {"a": 0}, "merges": "a b"}))
    assert err.message == "merges: model.merges should be a list, got str"


def test_refuses_vocab_that_is_not_an_object():
    err = _refused(_hf({"type": "BPE", "vocab": ["a"], "merges": []}))
    assert err.message == "vocab: model.vocab should be an object {token: id}, got list"


def test_refuses_vocab_with_non_integer_id():
    err = _refused(_hf({"type": "BPE", "vocab": {"a": "0"}, "merges": []}))
    assert err.message == 'vocab: token "a" should have a non-negative integer id, got "0"'


def test_refuses_vocab_with_repeated_id():
    err = _refused(_hf({"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}))
    assert err.message == 'vocab: tokens "a" and "b" both have id 0'


def test_refuses_word_boundary_markers_in_char_level():
    model = {"type": "BPE", "vocab": {"a": 0}, "merges": [], "end_of_word_suffix": "</w>"}
    err = _refused(_hf(model))
    assert 'marks word boundaries (end_of_word_suffix "</w>")' in err.message


def test_refuses_word_boundary_markers_in_byte_level():
    model = {"type": "BPE", "vocab": {"a": 0}, "merges": [], "continuing_subword_prefix": "##"}
    err = _refused(_hf(model, decoder={"type": "ByteLevel"}))
    assert "this byte-level tokenizer marks word boundaries" in err.message


def test_refuses_merges_txt_line():
    err = _refused('{"a": 0, "b": 1, "ab": 2}', merges_txt="#version: 0.2\na b\nab\n")
    assert err.message == 'merges: line 3 of merges.txt should be two tokens separated by one space, got "ab"'
    assert err.location == {"line": 3}


def test_refuses_ambiguous_merges_txt_line():
    vocab = {"e": 0, " ": 1, "l": 2, "e ": 3, " l": 4, "e l": 5}
    err = _refused(json.dumps(vocab), merges_txt="e  \n  l\ne  l\n")
    assert err.message == (
        'merges: "e  l" can be read as "e" + " l" or "e " + "l"; tokens that hold spaces make this '
        "line ambiguous (tokenizer.json's [left, right] form is not)"
    )


def test_refuses_json_as_merges_txt():
    err = _refused('{"a": 0}', merges_txt='["a b"]')
    assert err.message == "file: merges.txt holds JSON; expected one space-separated pair per line"


def test_refuses_whole_tokenizer_json_as_vocab_json():
    err = _refused(_hf({"type": "BPE", "vocab": {}, "merges": []}), merges_txt="")
    assert err.message == "file: the vocab.json given is a whole tokenizer.json; import it on its own"


def test_refuses_pair_format_without_merges():
    err = _refused('{"a": 0}', fmt="vocab-merges")
    assert err.message == "file: the vocab.json + merges.txt format needs both files; merges.txt is missing"


def test_refuses_vocab_json_alone():
    err = _refused('{"a": 0, "b": 1}')
    assert err.message == "file: this looks like a vocab.json on its own; add its merges.txt to import the pair"


def test_refuses_merges_txt_alone():
    err = _refused("#version: 0.2\na b\n")
    assert err.message == "file: this looks like a merges.txt on its own; add its vocab.json to import the pair"


def test_refuses_unknown_json():
    err = _refused("[1, 2, 3]")
    assert err.message.startswith("file: this JSON is not a tokenizer file")


def test_refuses_unknown_content():
    err = _refused("just some words\nin a text file\n")
    assert err.message.startswith("file: not a tokenizer file this playground knows")


def test_refuses_non_utf8_bytes():
    err = _refused(b"\xff\xfe\x00garbage")
    assert err.message == "file: the file is not UTF-8 text (invalid byte at offset 0)"


def test_refuses_unknown_format_name():
    err = _refused("x", fmt="wordpiece")
    assert err.field == "format" and "expected one of auto, hf" in err.message


def test_refuses_tiktoken_bad_line():
    err = _refused("IQ== 0\nIg==\n", fmt="tiktoken")
    assert err.message == 'file: line 2 of the rank file should be a base64 token and a rank, got "Ig=="'


def test_refuses_tiktoken_bad_base64():
    err = _refused("IQ== 0\n!!!! 1\n", fmt="tiktoken")
    assert err.message == 'file: line 2 of the rank file: "!!!!" is not valid base64'


def test_refuses_tiktoken_repeated_token():
    err = _refused("IQ== 0\nIQ== 1\n", fmt="tiktoken")
    assert err.message == "file: line 2: token b'!' is listed twice"


def test_refuses_tiktoken_repeated_rank():
    err = _refused("IQ== 0\nIg== 0\n", fmt="tiktoken")
    assert err.message == "file: line 2: rank 0 is already given to the token on line 1"


def test_refuses_tiktoken_empty_token_twice():
    # One empty token is accepted (Whisper's files, see test_rank_files.py); two are the same token twice.
    err = _refused("IQ== 0\n= 300\n== 301\n", fmt="tiktoken")
    assert err.message == "file: line 3: token b'' is listed twice"


def test_refuses_tiktoken_empty_file():
    err = _refused("\n\n", fmt="tiktoken")
    assert err.message == "file: the rank file is empty"


def test_refuses_tiktoken_token_not_made_from_lower_ranks():
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"abc": 3}
    err = _refused(_rank_file(ranks), fmt="tiktoken")
    assert err.message == (
        "file: token b'abc' (rank 3) cannot be made by merging two tokens of lower rank, "
        "so these ranks are not a BPE merge list"
    )


def test_refuses_minbpe_bad_header():
    err = _refused("minbpe v2\n\n0\n", fmt="minbpe")
    assert err.message == 'file: a minbpe .model starts with "minbpe v1", got "minbpe v2"'


def test_refuses_minbpe_truncated():
    err = _refused("minbpe v1\n", fmt="minbpe")
    assert err.message == "file: the minbpe .model ends before its special-token count"


def test_refuses_minbpe_bad_special_count():
    err = _refused("minbpe v1\n\nmany\n", fmt="minbpe")
    assert err.message == 'file: line 3 of a minbpe .model should be the number of special tokens, got "many"'


def test_refuses_minbpe_bad_special_line():
    err = _refused("minbpe v1\n\n1\n<eot>\n", fmt="minbpe")
    assert err.message == "file: line 4 should be a special token and its id"


def test_refuses_minbpe_bad_merge_line():
    err = _refused("minbpe v1\n\n0\n97 x\n", fmt="minbpe")
    assert err.message == 'file: line 4 should be two token ids, got "97 x"'


def test_refuses_minbpe_forward_reference():
    err = _refused("minbpe v1\n\n0\n97 257\n", fmt="minbpe")
    assert err.message == "merges: rule 1 (line 4) uses id 257, which no earlier rule makes"


def test_refuses_seed_without_merges():
    err = _refused('{"merges": 1}', fmt="playground")
    assert err.field == "merges"
    err = _refused("{}", fmt="seed")  # the old name of "playground"
    assert err.message == 'file: a playground JSON file is a JSON object with "merges" (and "vocab")'


def test_refuses_seed_with_bad_level():
    err = _refused('{"merges": [], "level": "words"}', fmt="playground")
    assert err.message == 'file: "level" should be "bytes" or "chars", got "words"'


def test_refuses_seed_with_bad_id_map():
    err = _refused('{"merges": [[1, 2, 256]], "id_map": {"x": 1}}', fmt="playground")
    assert err.message == 'file: "id_map": entry "x": 1 should map an id to an id'


# --- export refusals


def _export_refused(merges, fmt="hf", level="bytes", vocab=None) -> TokenizerError:
    loaded = tokfiles.from_playground(level=level, merges=merges, vocab=vocab)
    with pytest.raises(TokenizerError) as info:
        tokfiles.export_tokenizer(loaded, fmt)
    return info.value


def test_export_refuses_operand_made_later():
    err = _export_refused([[256, 97, 257], [97, 97, 256]])
    assert err.location == {"rule": 1}
    assert err.message.startswith("merges: rule 1 uses token 256, which no earlier rule makes")


def test_export_refuses_new_byte_id():
    err = _export_refused([[97, 97, 97]])
    assert err.message.startswith("merges: rule 1 makes id 97, a byte id (0-255)")


def test_export_refuses_two_ids_for_the_same_bytes():
    err = _export_refused([[97, 98, 256], [97, 98, 257]], fmt="tiktoken")
    assert err.message == (
        "merges: rule 2 makes b'ab' as id 257, but id 256 already stands for it; "
        "the library allows one id per token"
    )


def test_export_refuses_one_id_for_different_bytes():
    err = _export_refused([[97, 98, 256], [99, 100, 256]], fmt="minbpe")
    assert err.message == "merges: rule 2 gives id 256 to other bytes than an earlier rule did"


def test_export_refuses_char_token_missing_from_vocab():
    err = _export_refused([["a", "b"]], level="chars", vocab={"a": 0, "b": 1})
    assert err.field == "vocab"
    assert err.message.startswith('vocab: rule 1 makes "ab", which is not in the vocab')


def test_export_refuses_char_operand_missing_from_vocab():
    err = _export_refused([["a", "b"]], level="chars", vocab={"a": 0, "ab": 1})
    assert err.message.startswith('vocab: rule 1 uses "b", which is not in the vocab')


def test_export_refuses_char_operand_made_later():
    err = _export_refused([["ab", "c"], ["a", "b"]], level="chars", vocab={"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4})
    assert err.message.startswith('merges: rule 1 uses "ab", which no earlier rule makes')


def test_export_refuses_char_token_made_twice_for_minbpe():
    err = _export_refused([["a", "b"], ["a", "b"]], fmt="minbpe", level="chars", vocab={"a": 0, "b": 1, "ab": 2})
    assert err.message == 'merges: "ab" is made twice; minbpe numbering needs one rule per token'


def test_export_refuses_unknown_format():
    err = _export_refused([], fmt="sentencepiece")
    assert err.field == "format"


@pytest.mark.parametrize("which", ["bytes", "chars", "tiktoken", "minbpe"])
def test_stored_form_round_trips(byte_regex_tok, char_tok, which):
    if which == "bytes":
        loaded = tokfiles.import_tokenizer(byte_regex_tok.to_str())
    elif which == "chars":
        loaded = tokfiles.import_tokenizer(char_tok.to_str())
    elif which == "tiktoken":
        loaded = tokfiles.import_tokenizer(_rank_file(_ranks_from(byte_regex_tok, shuffle_bytes=True)))
    else:
        loaded = tokfiles.import_tokenizer(MINBPE_MODEL)
    data = tokfiles.dumps_stored(loaded)
    assert tokfiles.loads_stored(data) == loaded
    assert tokfiles.dumps_stored(tokfiles.loads_stored(data)) == data


def test_stored_form_version_1_is_still_read(byte_regex_tok):
    # Version 1 wrote byte-level merges as a JSON list; tokenizers stored then must still open.
    loaded = tokfiles.import_tokenizer(byte_regex_tok.to_str())
    doc = json.loads(tokfiles.dumps_stored(loaded))
    assert isinstance(doc["merges"], str)  # version 3: base64 of int64 triples
    doc["v"] = 1
    doc["merges"] = [list(rule) for rule in loaded.merges]
    assert tokfiles.loads_stored(json.dumps(doc).encode("utf-8")) == loaded


@pytest.mark.parametrize("limit", ["token_bytes", "vocab_bytes"])
def test_a_stored_form_over_lowered_limits_names_the_rule_as_an_import_would(limit):
    # Stored forms are checked after building (they passed the check when written); the
    # message must still be check_sizes's, naming the first rule over today's limit.
    merges = [[97, 98, 256], [256, 256, 257], [257, 257, 258], [99, 100, 259]]
    loaded = tokfiles.import_tokenizer(json.dumps({"merges": merges}))
    data = tokfiles.dumps_stored(loaded)
    lowered = SizeLimits(**{limit: 7 if limit == "token_bytes" else 13})
    with pytest.raises(TokenizerError) as stored:
        tokfiles.loads_stored(data, limits=lowered)
    with pytest.raises(TokenizerError) as checked:
        check_sizes(loaded.merges, lowered, "first")
    assert stored.value.message == checked.value.message
    expected = {"token_bytes": "merges: rule 3 makes token 258 stand for 8 bytes",
                "vocab_bytes": "merges: by rule 3 the tokens stand for 14 bytes in all"}[limit]
    assert stored.value.message.startswith(expected)
    assert tokfiles.loads_stored(data) == loaded  # today's default limits: it opens


def test_stored_form_that_cannot_be_read_is_an_error():
    with pytest.raises(TokenizerError) as info:
        tokfiles.loads_stored(b'{"v": 99}')
    assert info.value.field == "tokenizer"
    assert info.value.message.startswith("tokenizer: the stored tokenizer cannot be read")


def test_vocab_json_holding_the_tokens_model_and_merges():
    vocab = {"m": 0, "o": 1, "d": 2, "e": 3, "l": 4, "r": 5, "g": 6, "s": 7, "model": 8, "merges": 9}
    with pytest.raises(TokenizerError) as info:
        tokfiles.detect_format(json.dumps(vocab))
    assert "looks like a vocab.json on its own" in info.value.message
    loaded = tokfiles.import_tokenizer(json.dumps(vocab), merges_txt="#version: 0.2\n")
    assert loaded.level == "chars" and loaded.vocab == vocab


def test_hf_byte_level_with_special_tokens_and_a_partial_alphabet():
    # Trained without the full byte alphabet and with a special token first:
    # bytes get ids from 1 up, some bytes have no token at all.
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"], show_progress=False)
    tok.train_from_iterator(CORPUS[:2] * 3, trainer=trainer)
    loaded = tokfiles.import_tokenizer(tok.to_str())
    assert loaded.unknown_bytes and loaded.unk_id is None
    assert any("have no token in the file" in note for note in loaded.notes)
    # merged tokens have ids below 256 here, so every id is relabelled
    assert all(new >= 256 for _, _, new in loaded.merges)
    for text in ["the lowest newer", "Hello there! Don't", "ünknown bytes € dropped"]:
        assert _our_ids(loaded, text) == tok.encode(text).ids, text
        trace = encode_loaded_trace(loaded, text)
        assert trace.ids == tok.encode(text).ids and [t.id for t in trace.tokens] == trace.ids


def test_relabel_matches_relabelling_the_reference_trace():
    from webapp.tokenizer import compile_byte_merges
    from webapp.tokenizer.pretokenize import pretokenized as pt
    from webapp.tokenizer.pretokenize.patterns import SCHEMES

    merges = [[104, 101, 256], [256, 108, 257], [32, 119, 258]]
    relabel = {104: 0, 257: 9, 32: 1}
    for scheme in SCHEMES:
        fast = pt.pretokenized_encode_trace("hel hel wow", merges, scheme, relabel=relabel)
        slow = reference_pretokenize.relabelled(
            reference_pretokenize.trace_by_pretokens("hel hel wow", compile_byte_merges(merges), scheme, max_steps=200, max_tokens=3000, max_sequence=2000),
            relabel,
        )
        assert reference_pretokenize.without_changes(fast) == reference_pretokenize.without_changes(slow)


def test_refuses_the_empty_token_in_a_byte_level_vocab():
    content = _hf(
        {"type": "BPE", "vocab": {"": 0, "a": 1}, "merges": []},
        pre_tokenizer={"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
    )
    err = _refused(content)
    assert err.message == "vocab: id 0 is the empty token, which BPE cannot make"


def test_export_refuses_the_empty_char_token():
    err = _export_refused([], level="chars", vocab={"": 0, "a": 1})
    assert err.message == "vocab: the empty token cannot be exported"


def test_notes_for_an_unknown_pre_tokenizer_and_dropout(char_tok):
    document = json.loads(char_tok.to_str())
    document["pre_tokenizer"] = {"type": "UnicodeScripts"}
    document["model"]["byte_fallback"] = True
    document["model"]["ignore_merges"] = True
    document["model"]["dropout"] = 0.1
    loaded = tokfiles.import_tokenizer(json.dumps(document))
    assert any("dropout" in n for n in loaded.notes)
    assert any("pre-tokenizer is the UnicodeScripts pre-tokenizer, which the playground leaves out" in n
               for n in loaded.notes)
    # applied as the library applies them, so no note
    assert not any("ignore_merges" in n or "<0xXX>" in n for n in loaded.notes)


def test_a_rule_that_uses_a_later_token_follows_the_library():
    vocab = {"a": 0, "b": 1, "ab": 2, "abb": 3}
    content = _hf({"type": "BPE", "vocab": vocab, "merges": ["ab b", "a b"]})
    loaded = tokfiles.import_tokenizer(content)
    assert loaded.notes == () and loaded.summary()["merge_order"] == "library"
    assert encode_loaded(loaded, "abb") == Tokenizer.from_str(content).encode("abb").ids == [3]
