"""SentencePiece .model files against the `sentencepiece` library (the oracle): ids, decode, refusals.

- The five real models in mistral-common's wheel (set-up downloads it to
  instance/pypi): texts in many scripts, whitespace runs, digits, emoji,
  characters outside the vocab (byte fallback), control symbols typed as
  text, user-defined symbols; and the decode of those ids and of odd id runs.
- Small BPE models trained here with sentencepiece's own trainer (byte
  fallback on and off; identity, nmt_nfkc, nfkc and a custom rule TSV;
  add_dummy_prefix / remove_extra_whitespaces on and off; user-defined and
  control symbols): hypothesis texts, ids and decode compared.
- A Unigram model and a WordPiece vocab are refused with the message.
"""

from __future__ import annotations

import io
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

spm = pytest.importorskip("sentencepiece")

from webapp.tokenizer import TokenizerError, import_tokenizer  # noqa: E402
from tests.loaded_calls import decode_loaded, encode_loaded  # noqa: E402
from tests.mistral_files import mistral_file, wheel_path  # noqa: E402
from webapp.tokenizer.stages.models import LIBRARY_MODEL  # noqa: E402

MISTRAL = ["tokenizer.model.v1", "mistral_instruct_tokenizer_240216.model.v2",
           "mistral_instruct_tokenizer_240323.model.v3", "mistral_instruct_tokenizer_241114.model.v7",
           "mistral_instruct_tokenizer_241114.model.v7m1"]

TEXTS = [
    "The quick brown fox jumps over the lazy dog. It's 3:45pm; don't panic! e-mail: a@b.org",
    "Tiếng Việt là ngôn ngữ chính thức của Việt Nam.",
    "Ünïcödé façade naïve — straße ΑΒΓ αβγ русский текст עברית العربية हिन्दी ภาษาไทย",
    "東京は日本の首都です。北京是中国的首都。한국어 텍스트 ｆｕｌｌｗｉｄｔｈ",
    "def f(x):\n\treturn x  +  1  # comment\n\n\nclass A:\n    pass\r\n",
    "1234567890 3.14159 2026-12-01 1,234,567 ٣٤٥ ४५६",
    "👨‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽 🇫🇷 e\u0301 a\u0308",
    "   spaces    and\t\ttabs  \n  \n\t \u00a0\u3000 end" + " " * 17 + "\t" * 5,
    " " * 40 + "x" + " " * 33,
    "\x00\x01\x7f odd \uffff ctrl 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ 𓀀 \U0010fffd \U0001fae9",
    "<s> </s> [INST] hello [/INST] [TOOL_CALLS] <unk> <0x41> [REFERENCE_DOC_1] [IMG]x",
    "▁▁ typed ▁ space symbols ▁",
    "", " ", "a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
]


@lru_cache(maxsize=None)
def opened(data: bytes) -> object:
    return import_tokenizer(data, filename="tokenizer.model")


@pytest.mark.parametrize("name", MISTRAL)
def test_mistral_files_ids_and_decode_equal_sentencepiece(name: str) -> None:
    data = mistral_file(name)
    tok = opened(data)
    sp = spm.SentencePieceProcessor(model_proto=data)
    assert tok.source == "sentencepiece" and tok.summary()["merge_order"] == "library"
    for text in TEXTS:
        ids = encode_loaded(tok, text, allowed_special=frozenset())
        assert ids == sp.encode(text), text
        assert decode_loaded(tok, ids) == sp.decode(ids), text
    # every text at once (one long piece: cut where no merge joins, cached parts)
    joined = "\n".join(TEXTS) * 3
    assert encode_loaded(tok, joined, allowed_special=frozenset()) == sp.encode(joined)


@pytest.mark.parametrize("name", [MISTRAL[0], MISTRAL[2]])
def test_mistral_decode_of_odd_ids(name: str) -> None:
    data = mistral_file(name)
    tok = opened(data)
    sp = spm.SentencePieceProcessor(model_proto=data)
    byte = sp.piece_to_id("<0xE2>")
    runs = [[0], [1, 2, 3], [byte], [byte, byte + 1], [0, 0, 1], [sp.piece_to_id("▁hello"), byte, 0],
            [sp.piece_to_id("▁"), sp.piece_to_id("▁"), 1000], [1, sp.piece_to_id("▁hello")]]
    for ids in runs:
        assert decode_loaded(tok, ids) == sp.decode(ids), ids


def test_control_symbols_recognised_on_request() -> None:
    data = mistral_file(MISTRAL[2])
    tok = opened(data)
    sp = spm.SentencePieceProcessor(model_proto=data)
    ids = encode_loaded(tok, "[INST] hi [/INST]", allowed_special=frozenset(tok.special_tokens))
    # (found in the normalized text, after the dummy prefix's ▁: docs/formats.md)
    assert ids[:2] == [sp.piece_to_id("▁"), sp.piece_to_id("[INST]")] and ids[-1] == sp.piece_to_id("[/INST]")
    assert decode_loaded(tok, ids) == sp.decode(ids)
    assert encode_loaded(tok, "[INST] hi", allowed_special=frozenset()) == sp.encode("[INST] hi")


def test_mistral_vocab_sample_typed_alone() -> None:
    data = mistral_file(MISTRAL[0])
    tok = opened(data)
    sp = spm.SentencePieceProcessor(model_proto=data)
    pieces = [sp.id_to_piece(i) for i in range(0, sp.get_piece_size(), 37)]
    for piece in pieces:
        text = piece.replace("▁", " ")
        assert encode_loaded(tok, text, allowed_special=frozenset()) == sp.encode(text), piece


# --------------------------------------------------------------------------
# Models trained here with sentencepiece's trainer

CORPUS = ("The quick brown fox jumps over the lazy dog.\nA stitch in time saves nine.\n"
          "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ and ｶﾀｶﾅ, ① ② ③ and ﬁ ligatures.\n"
          "Les élèves étudient l'été. Über Straße. Привет мир. 日本語の文章です。\n"
          "    indented   lines   with   runs   of   spaces\n"
          "numbers 123 4567 89.01 and more numbers 2026\n") * 40

RULE_TSV = "41\t61\n61 62\t78\n20 20\t20\n"  # A -> a, "ab" -> x, two spaces -> one
DENORM_TSV = "61\t41\n62 63\t5A\n"  # after decoding: a -> A, "bc" -> Z


def _train(tmp: Path, name: str, **options: object) -> bytes:
    corpus = tmp / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    model = io.BytesIO()
    size = 700 if options.get("byte_fallback") else 450
    spm.SentencePieceTrainer.train(input=str(corpus), model_type="bpe", vocab_size=size, hard_vocab_limit=False,
                                   model_writer=model, minloglevel=2, num_threads=1, **options)
    return model.getvalue()


TRAINED = {
    "fallback_identity": dict(byte_fallback=True, normalization_rule_name="identity"),
    "unk_nmt_nfkc": dict(byte_fallback=False, normalization_rule_name="nmt_nfkc", character_coverage=0.98),
    "fallback_nfkc_no_prefix": dict(byte_fallback=True, normalization_rule_name="nfkc", add_dummy_prefix=False),
    "keep_spaces": dict(byte_fallback=True, normalization_rule_name="nmt_nfkc", remove_extra_whitespaces=False),
    "symbols": dict(byte_fallback=False, user_defined_symbols=["<sep>", "fox", "▁the"],
                    control_symbols=["<ctl>", "[X]"], normalization_rule_name="nmt_nfkc_cf"),
    "custom_tsv": dict(byte_fallback=True, normalization_rule_tsv="RULES"),
    "denormalized": dict(byte_fallback=True, normalization_rule_name="identity", denormalization_rule_tsv="DENORM"),
}


class Models(dict[str, bytes]):
    def __repr__(self) -> str:  # (hypothesis prints its arguments: not the models' bytes)
        return f"<{len(self)} trained models>"


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    tmp = tmp_path_factory.mktemp("spm")
    (tmp / "rules.tsv").write_text(RULE_TSV, encoding="utf-8")
    out = Models()
    for key, options in TRAINED.items():
        opts = dict(options)
        if opts.get("normalization_rule_tsv") == "RULES":
            opts["normalization_rule_tsv"] = str(tmp / "rules.tsv")
        if opts.get("denormalization_rule_tsv") == "DENORM":
            (tmp / "denorm.tsv").write_text(DENORM_TSV, encoding="utf-8")
            opts["denormalization_rule_tsv"] = str(tmp / "denorm.tsv")
        out[key] = _train(tmp, key, **opts)
    return out


ALPHABET = st.sampled_from(list("the quick brown fox ABab  \t\nÉéß日本語ｶﾀＦ①ﬁ12.,'") + ["  ", "   ", "<sep>", "<ctl>",
                                                                                       "[X]", "▁", "ab", "\u00a0",
                                                                                       "😀", "\u0301", "ꙮ", "\x00"])
TEXT = st.lists(ALPHABET, max_size=40).map("".join) | st.text(max_size=30)


@pytest.mark.parametrize("key", list(TRAINED))
@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_trained_models_equal_sentencepiece(trained: dict[str, bytes], key: str, text: str) -> None:
    data = trained[key]
    tok = opened(data)
    sp = _processor(data)
    ids = encode_loaded(tok, text, allowed_special=frozenset())
    assert ids == sp.encode(text)
    assert decode_loaded(tok, ids) == sp.decode(ids)


@lru_cache(maxsize=None)
def _processor(data: bytes) -> object:
    return spm.SentencePieceProcessor(model_proto=data)


def test_trained_models_corpus_lines(trained: dict[str, bytes]) -> None:
    for key, data in trained.items():
        tok = opened(data)
        sp = _processor(data)
        for line in CORPUS.splitlines()[:6] + [CORPUS[:2000]]:
            assert encode_loaded(tok, line, allowed_special=frozenset()) == sp.encode(line), (key, line)


def test_custom_rules_are_applied(trained: dict[str, bytes]) -> None:
    tok = opened(trained["custom_tsv"])
    sp = _processor(trained["custom_tsv"])
    assert sp.normalize("AB ab") == "▁aB▁x"  # (the oracle applies the rules A -> a, ab -> x: so do we, below)
    assert encode_loaded(tok, "AB ab", allowed_special=frozenset()) == sp.encode("AB ab")


def test_a_stored_copy_reads_back_and_gives_sentencepieces_ids(trained: dict[str, bytes]) -> None:
    # (the web app keeps an opened file in its stored form and reads it back when its cache lost it)
    from webapp.tokenizer.formats.stored import dumps_stored, loads_stored

    for data in [trained["symbols"], trained["fallback_identity"], mistral_file(MISTRAL[2])]:
        again = loads_stored(dumps_stored(opened(data)))
        assert again.built.peek(LIBRARY_MODEL) is None  # (built on first use, from the string merges)
        for text in TEXTS + CORPUS.splitlines()[:6]:
            ids = encode_loaded(again, text, allowed_special=frozenset())
            assert ids == _processor(data).encode(text), text
            assert decode_loaded(again, ids) == _processor(data).decode(ids)


def test_the_denormalizer_is_applied_to_decoded_text(trained: dict[str, bytes]) -> None:
    from webapp.tokenizer.formats.stored import dumps_stored, loads_stored

    data = trained["denormalized"]
    sp = _processor(data)
    tok = opened(data)
    ids = sp.encode("a bc abc the lazy dog")
    assert sp.decode(ids) == "A Z AZ the lAzy dog"  # (the oracle applies a -> A, bc -> Z after decoding)
    assert encode_loaded(tok, "a bc abc the lazy dog", allowed_special=frozenset()) == ids
    assert decode_loaded(tok, ids) == sp.decode(ids)
    assert decode_loaded(loads_stored(dumps_stored(tok)), ids) == sp.decode(ids)  # (kept in the stored form)
    plain = opened(trained["fallback_identity"])  # (no denormalizer: the description is what it was)
    assert "denormalizer" not in plain.pipeline and "denormalizer" in tok.pipeline


# --------------------------------------------------------------------------
# Refusals


def test_unigram_model_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(corpus), model_type="unigram", vocab_size=90, model_writer=model,
                                   hard_vocab_limit=False,
                                   minloglevel=2, num_threads=1)
    with pytest.raises(TokenizerError, match="this is a Unigram model; the playground opens BPE tokenizers"):
        import_tokenizer(model.getvalue(), filename="tokenizer.model")


def test_wordpiece_vocab_is_refused() -> None:
    vocab = "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "##s", "##ing", "dog", "##gy"]) + "\n"
    with pytest.raises(TokenizerError, match="WordPiece vocab .* the playground opens BPE tokenizers"):
        import_tokenizer(vocab.encode(), filename="vocab.txt")


def test_broken_model_files_are_refused() -> None:
    good = mistral_file(MISTRAL[0])
    with pytest.raises(TokenizerError, match="not a SentencePiece .model file"):
        import_tokenizer(good[:1000], fmt="sentencepiece")
    with pytest.raises(TokenizerError, match="binary"):
        import_tokenizer("text", fmt="sentencepiece")


def test_pieces_given_as_columns_open_as_the_file_does() -> None:
    """A GGUF file's pieces reach the builder as columns beside a ModelProto without pieces
    (`sentencepiece_tokenizer`): the same tokenizer as the .model holding them."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    from webapp.tokenizer.formats.sentencepiece import parse_sentencepiece, sentencepiece_tokenizer

    data = mistral_file(MISTRAL[2])
    spec_only = pb.ModelProto()
    spec_only.ParseFromString(data)
    pieces = [(p.piece, p.type, p.score) for p in spec_only.pieces]
    del spec_only.pieces[:]
    columns = sentencepiece_tokenizer(spec_only, *map(list, zip(*pieces)))
    whole = parse_sentencepiece(data)
    for field in ("merges", "vocab", "pipeline", "model", "special_tokens", "unk_id", "notes"):
        assert getattr(columns, field) == getattr(whole, field), field
    with pytest.raises(TokenizerError, match="piece 3 .* is already piece 1"):
        sentencepiece_tokenizer(spec_only, ["<unk>", "a", "b", "a"], [2, 1, 1, 1], [0.0] * 4)
    with pytest.raises(TokenizerError, match="exactly one unknown piece; this one has 0"):
        sentencepiece_tokenizer(spec_only, [], [], [])  # (no pieces at all: refused, not a crash)


def test_the_piece_count_is_bounded_for_a_model_and_a_gguf_file(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.gguf_files import gguf_from_model_proto
    from webapp.tokenizer.formats import sentencepiece as fs

    data = mistral_file(MISTRAL[2])
    monkeypatch.setattr(fs, "MAX_PIECES", 1_000)
    for content, filename in ((data, "tokenizer.model"), (gguf_from_model_proto(data), "model.gguf")):
        with pytest.raises(TokenizerError, match="the model has 32,768 pieces, over the 1,000 allowed"):
            import_tokenizer(content, filename=filename)


# --------------------------------------------------------------------------
# The presets mistral_v1 and mistral_v3 (the wheel's .model.v1 and .model.v3)


@pytest.mark.parametrize("name,file", [("mistral_v1", MISTRAL[0]), ("mistral_v3", MISTRAL[2])])
def test_presets_equal_sentencepiece_and_survive_their_stored_form(tmp_path: Path, name: str, file: str) -> None:
    from webapp.tokenizer import get_tokenizer
    from webapp.tokenizer.presets import catalog, open_models

    wheel_path()
    preset = open_models.OPEN_MODELS[name]
    assert preset.kind == "sentencepiece" and open_models.file_bytes(name) == mistral_file(file)  # (SHA-256 checked)
    sp = spm.SentencePieceProcessor(model_proto=mistral_file(file))
    catalog.prepare(str(tmp_path), (name,))
    open_models.clear_caches()
    try:
        stored = open_models.load(name, str(tmp_path))  # (read back from the precompiled form)
        assert stored.summary()["merge_order"] == "library" and len(stored.merges) == preset.rules
        for text in TEXTS:
            assert encode_loaded(stored, text, allowed_special=frozenset()) == sp.encode(text), text
        enc = get_tokenizer(name)
        assert enc.encode(TEXTS[0]) == sp.encode(TEXTS[0])
        assert enc.encode(TEXTS[0], add_special_tokens=True) == [sp.bos_id(), *sp.encode(TEXTS[0])]
    finally:
        open_models.clear_caches()


# --------------------------------------------------------------------------
# Export to tokenizer.json: `tokenizers` gives sentencepiece's ids


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_exported_tokenizer_json_gives_sentencepieces_ids(trained: dict[str, bytes], text: str) -> None:
    data = trained["fallback_identity"]  # (identity rules, extra spaces removed, byte fallback)
    library = _exported(data)
    # sentencepiece reads a control piece's text ("<s>") as plain text; `tokenizers` cuts every added token
    # out of the text unless told to read special ones as text, which is that (docs/formats.md)
    library.encode_special_tokens = True
    assert library.encode(text, add_special_tokens=False).ids == _processor(data).encode(text)


@pytest.mark.parametrize("key", ["unk_nmt_nfkc", "keep_spaces", "fallback_nfkc_no_prefix"])
def test_exported_charsmap_models_on_the_corpus(trained: dict[str, bytes], key: str) -> None:
    # With a charsmap the written normalizer is tokenizers' Precompiled, which applies the rules per
    # grapheme: a base character with a combining mark (ｶ + U+0301) can differ (docs/formats.md).
    data = trained[key]
    for line in CORPUS.splitlines()[:6] + ["  runs   of  spaces ", "Ｆｕｌｌ ① ﬁ"]:
        assert _exported(data).encode(line, add_special_tokens=False).ids == _processor(data).encode(line), line


# User-defined pieces. sentencepiece adds the dummy prefix once, at the start of the normalized text, and
# finds the pieces in that text (`▁` for spaces): `<sep>x` is `▁`, `<sep>`, `x`; `x <sep> y` keeps the spaces
# around it. The export cuts them out with a pre-tokenizer after the whole text is normalized (docs/formats.md).

SYMBOLS = ["<sep>", "fox", "▁the", "[REF_1]", "[REF_10]"]
#: byte fallback, add_dummy_prefix and remove_extra_whitespaces, each on and off (identity rules)
SYMBOL_MODELS = {f"fallback={f} prefix={p} strip={r}": dict(byte_fallback=f, add_dummy_prefix=p,
                                                             remove_extra_whitespaces=r)
                 for f in (True, False) for p in (True, False) for r in (True, False)}
SYMBOL_TEXT = st.lists(st.sampled_from(SYMBOLS + [" ", "  ", "   ", "\t", "\n", "\n\n", "▁", "▁▁", "the", "qui",
                                                  "ck", "brown", "fo", "x", "a", "B", "Привет", "日本語", "😀",
                                                  "ꙮ", "123", ".", ",", "<0x41>", "<unk>", "<0x0A>", "ab"]),
                       max_size=30).map("".join)
SYMBOL_CASES = ["<sep>", "<sep>x", "<sep> x", " <sep>", "   <sep>  ", "▁<sep>", "▁", "▁▁x", "▁x <sep>", "x<sep>",
                "x <sep>", "x <sep> ", "x <sep>  y", "<sep><sep>", "<sep>fox▁the", "the fox", " the", "▁the",
                "[REF_10][REF_1]", "<sep><unk>", "<unk>", "<0x41>", "<sep><0x41>fox", "<0x41><sep>", "\n<sep>\n",
                "  leading", "trailing  ", "runs   of  spaces", "", " ", "   ", "日本語<sep>😀", "a\t<sep>\tb"]


@pytest.fixture(scope="module")
def symbol_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    tmp = tmp_path_factory.mktemp("spm_symbols")
    out = Models()
    for key, options in SYMBOL_MODELS.items():
        out[key] = _train(tmp, key, user_defined_symbols=SYMBOLS, normalization_rule_name="identity", **options)
    return out


@pytest.mark.parametrize("key", list(SYMBOL_MODELS))
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=SYMBOL_TEXT)
def test_exported_user_defined_pieces_give_sentencepieces_ids(symbol_models: dict[str, bytes], key: str,
                                                              text: str) -> None:
    data = symbol_models[key]
    assert _exported(data).encode(text, add_special_tokens=False).ids == _processor(data).encode(text)


@pytest.mark.parametrize("key", list(SYMBOL_MODELS))
def test_exported_user_defined_pieces_at_the_edges(symbol_models: dict[str, bytes], key: str) -> None:
    data = symbol_models[key]
    for text in SYMBOL_CASES:
        assert _exported(data).encode(text, add_special_tokens=False).ids == _processor(data).encode(text), text


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(ALPHABET.filter(lambda s: s not in ("<ctl>", "[X]", "\u0301")), max_size=40).map("".join))
def test_exported_symbols_model_with_its_charsmap(trained: dict[str, bytes], text: str) -> None:
    # (nmt_nfkc_cf rules, user-defined <sep>, fox, ▁the; left out, the two known differences: its control
    # symbols typed as text, which tokenizers splits out as added tokens, and a combining mark, which its
    # Precompiled normalizer applies per grapheme)
    data = trained["symbols"]
    assert _exported(data).encode(text, add_special_tokens=False).ids == _processor(data).encode(text)


MISTRAL_SYMBOLS = ["[REFERENCE_DOC_0]", "[REFERENCE_DOC_1]", "[REFERENCE_DOC_10]", "[REFERENCE_DOC_19]"]


@settings(max_examples=examples(100), deadline=None)
@given(text=st.lists(st.sampled_from(MISTRAL_SYMBOLS + [" ", "  ", "\n", "\t", "▁", "Hello", "world", "[", "]",
                                                        "REFERENCE_DOC_", "1", "0", "Привет", "東京", "😀", "ꙮ",
                                                        "<0x41>", "<unk>"]), max_size=30).map("".join))
def test_exported_mistral_v3_gives_sentencepieces_ids_around_its_user_defined_pieces(text: str) -> None:
    data = mistral_file(MISTRAL[2])  # (the mistral_v3 preset's file: 20 user-defined [REFERENCE_DOC_n])
    assert _exported(data).encode(text, add_special_tokens=False).ids == _processor(data).encode(text)


def test_exported_user_defined_pieces_are_a_pre_tokenizer_and_read_back_alike(symbol_models: dict[str, bytes]) -> None:
    import json

    from webapp.tokenizer import export_tokenizer

    data = symbol_models["fallback=True prefix=True strip=True"]
    document = json.loads(export_tokenizer(opened(data), "hf")[0])
    assert {t["content"] for t in document["added_tokens"]} == {"<s>", "</s>"}  # (the control pieces only)
    assert document["model"]["ignore_merges"] and document["pre_tokenizer"]["type"] == "Sequence"
    again = import_tokenizer(json.dumps(document), filename="tokenizer.json")  # (the playground reads it alike)
    assert not again.notes
    for text in SYMBOL_CASES:
        assert encode_loaded(again, text, allowed_special=frozenset()) == _processor(data).encode(text), text
    plain = json.loads(export_tokenizer(opened(mistral_file(MISTRAL[0])), "hf")[0])  # (no user-defined pieces)
    assert plain["pre_tokenizer"] is None and not plain["model"]["ignore_merges"]


@lru_cache(maxsize=None)
def _exported(data: bytes) -> Any:
    from tokenizers import Tokenizer

    from webapp.tokenizer import export_tokenizer

    content, name, _ = export_tokenizer(opened(data), "hf")
    assert name == "tokenizer.json"
    return Tokenizer.from_str(content)


# --------------------------------------------------------------------------
# The encoding model built when the file opens, and the fast path of long pieces


@pytest.mark.slow
def test_the_model_is_built_when_the_file_opens_and_equals_the_one_made_later(trained: dict[str, bytes]) -> None:
    import numpy as np

    from webapp.tokenizer.stages.models import _build_model

    config = '{"chat_template": "{{ messages[0].content }}"}'
    for data in [*trained.values(), mistral_file(MISTRAL[0])]:
        for tok in (import_tokenizer(data, filename="tokenizer.model"),
                    import_tokenizer(data, filename="tokenizer.model", config=config)):
            built = tok.built.peek(LIBRARY_MODEL)
            assert built is not None  # (opening built it, with its tables)
            assert built.cut._edge_array is not None and built.cut._char_table is not None
            assert built.merges._level_table is not None
            later = _build_model(tok)  # (what a tokenizer read back from its stored form makes on first use)
            assert built.vocab == later.vocab and built.unk_id == later.unk_id and built.fallback == later.fallback
            assert built.merges.ranks == later.merges.ranks and built.merges.news == later.merges.news
            assert built.merges.levels == later.merges.levels and built.merges.shift == later.merges.shift
            assert np.array_equal(built.cut.edge_array(), later.cut.edge_array())
            assert np.array_equal(built.cut.char_table(), later.cut.char_table())
            keys = np.fromiter(later.merges.ranks, dtype=np.int64)
            probe = np.concatenate((keys, keys + 1, np.arange(64, dtype=np.int64)))  # (rules' keys and others)
            for a, b in zip(built.merges.level_table().look_up(probe), later.merges.level_table().look_up(probe)):
                assert np.array_equal(a, b)


LONG_ALPHABET = st.sampled_from(list("the quick brown fox 0123456789 abcdef ABC ▁▁ ß日本語①ﬁ,.'") +
                                ["▁the", "▁▁▁▁", "ꙮ", "😀", "\u0301", "\x00", "𓀀", "\U0010fffd", "the", "  "])
LONG_TEXT = st.lists(LONG_ALPHABET, min_size=30, max_size=160).map("".join).filter(lambda t: len(t) > 64)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["fallback_identity", "unk_nmt_nfkc", "symbols"])
@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(LONG_TEXT, min_size=1, max_size=3), text=LONG_TEXT)
def test_long_pieces_fast_path_equals_merging_them_whole(trained: dict[str, bytes], key: str, texts: list[str],
                                                         text: str) -> None:
    # Long pieces are cut and their one-character segments read from the character table (models/library.py's
    # `long_piece_ids`): the ids of each piece equal merging the piece whole (no cuts, no cache), and the
    # encode of a long text equals sentencepiece's.
    from webapp.tokenizer.stages.models import _build_model

    data = trained[key]
    model = _build_model(opened(data))  # (a model of its own: an empty cache)
    pieces = list(dict.fromkeys(texts))
    found = model._uncached_ids(pieces, merge_short=False)
    for piece in pieces:
        assert found[piece] == model._merge_segment(piece), piece
    assert encode_loaded(opened(data), text, allowed_special=frozenset()) == _processor(data).encode(text)
