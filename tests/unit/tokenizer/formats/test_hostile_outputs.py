"""Issue 44, rows 5 and 9 in the tokenizer package: decode sizes added up before joining,
vocab entries bounded at open, true messages from export and from a broken .model."""

from __future__ import annotations

import json

import pytest

from webapp.tokenizer import TokenizerError, decode, import_tokenizer
from webapp.tokenizer.core.token_sizes import SizeLimits
from webapp.tokenizer.loaded import UNITS
from webapp.tokenizer.formats.playground import parse_playground_json


# --- row 5 -----------------------------------------------------------------------------------


def test_row5_decode_refuses_past_max_bytes_before_joining() -> None:
    vocab = {256: [97] * 1000}
    with pytest.raises(TokenizerError) as refused:
        decode([256] * 3000, vocab, max_bytes=100_000)
    assert refused.value.field == "ids" and refused.value.location == {"bytes": 3_000_000, "limit": 100_000}
    assert "decoding these 3,000 ids gives 3,000,000 bytes, over the limit of 100,000 bytes" in refused.value.message
    assert decode([256] * 100, vocab, max_bytes=100_000) == "a" * 100_000  # at the cap exactly
    assert decode([256] * 3000, vocab) == "a" * 3_000_000  # the library API: no cap


def test_row5_a_character_level_join_adds_up_utf8_bytes() -> None:
    tok = parse_playground_json({"level": "chars", "merges": [["é", "é"]], "vocab": {"é": 0, "éé": 1}})
    with pytest.raises(TokenizerError, match="gives 4,000 bytes, over the limit of 3,999 bytes"):
        UNITS["chars"].join_ids(tok, [1] * 1000, {}, max_bytes=3999)
    assert UNITS["chars"].join_ids(tok, [1] * 1000, {}, max_bytes=4000) == "é" * 2000


def _hf(vocab: dict[str, int]) -> str:
    return json.dumps({"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
                       "post_processor": None, "decoder": None,
                       "model": {"type": "BPE", "vocab": vocab, "merges": []}})


def test_row5_a_tokenizer_json_vocab_entry_is_bounded_at_open() -> None:
    letters = {chr(c): c - 97 for c in range(97, 123)}
    with pytest.raises(TokenizerError) as refused:
        import_tokenizer(_hf({**letters, "é" * 40_000: 26}), fmt="hf")  # 80,000 bytes of UTF-8
    assert refused.value.field == "vocab" and refused.value.location == {"id": 26, "limit": 65_536}
    assert "the entry with id 26" in refused.value.message and "80,000 bytes" in refused.value.message
    opened = import_tokenizer(_hf({**letters, "é" * 40_000: 26}), fmt="hf", limits=SizeLimits(token_bytes=80_000))
    assert len(opened.vocab) == 27
    vocab_json = json.dumps({**letters, "a" * 70_000: 26})
    with pytest.raises(TokenizerError, match="70,000 bytes"):
        import_tokenizer(vocab_json, fmt="vocab-merges", merges_txt="#version: 0.2\n")


# --- row 9 -----------------------------------------------------------------------------------

from webapp.tokenizer import export_tokenizer, is_installed  # noqa: E402
from webapp.tokenizer.formats import dispatch  # noqa: E402
from webapp.tokenizer.presets import open_models  # noqa: E402


def _installed(*names: str) -> pytest.MarkDecorator:
    missing = [n for n in names if not is_installed(n)]
    return pytest.mark.skipif(bool(missing), reason=f"presets not installed: {missing}")


@pytest.mark.slow
@_installed("mistral_v3", "llama2", "mistral_tekken")
@pytest.mark.parametrize("name", ["mistral_v3", "llama2", "mistral_tekken"])
def test_row9_a_preset_exports_as_its_file_does(name: str) -> None:
    preset = open_models.load(name)
    opened = import_tokenizer(open_models.file_bytes(name), filename=open_models.OPEN_MODELS[name].path)
    if name == "mistral_tekken":  # the file refuses (its pattern has no export format): so does the preset
        for tok in (preset, opened):
            with pytest.raises(TokenizerError, match="Tekken tokenizer splits text with its own pattern"):
                export_tokenizer(tok, "hf")
        return
    content, filename, _ = export_tokenizer(preset, "hf")
    assert filename == "tokenizer.json" and content == export_tokenizer(opened, "hf")[0]


def _broken_model() -> bytes:
    data = open_models.file_bytes("mistral_v3")
    needle = b"\x0a\x05" + "\u2581th".encode()  # piece 1074's string field: 5 bytes
    at = data.index(needle)
    return data[:at + 2] + b"\xc3(th!" + data[at + 7:]  # 0xc3 then "(": not UTF-8


@_installed("mistral_v3")
def test_row9_a_piece_that_is_not_utf8_is_named_with_its_byte_offset() -> None:
    with pytest.raises(TokenizerError) as refused:
        import_tokenizer(_broken_model(), filename="tokenizer.model")
    error = refused.value
    assert error.field == "pieces" and error.location == {"index": 1074, "offset": 0}
    assert error.message.startswith("pieces: piece 1074 is not valid UTF-8: byte 0xc3 at byte offset 0")
    assert "ord()" not in error.message


def test_row9_an_unforeseen_structure_says_no_python_words(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object) -> None:
        raise TypeError("ord() expected string of length 1, but int found")

    monkeypatch.setattr(dispatch, "_import_as", broken)
    with pytest.raises(TokenizerError) as refused:
        import_tokenizer("{}", fmt="hf")
    assert "unexpected structure" in refused.value.message
    assert "ord()" not in refused.value.message and "TypeError" not in refused.value.message


@pytest.mark.slow
def test_row9_an_hf_export_keeps_the_added_tokens() -> None:
    letters = {chr(c): c - 97 for c in range(97, 123)}
    added = [{"id": 100 + n, "content": f"<extra_{n}>", "special": n % 2 == 0, "normalized": False,
              "lstrip": False, "rstrip": n == 1, "single_word": False} for n in range(20_000)]
    content = json.dumps({**json.loads(_hf(letters)), "added_tokens": added})
    exported = json.loads(export_tokenizer(import_tokenizer(content, fmt="hf"), "hf")[0])
    # every one kept, with the id the tokenizers library gives it (its vocab has 26 entries: 26, 27, ...)
    assert exported["added_tokens"] == [{**item, "id": 26 + n} for n, item in enumerate(added)]


@pytest.mark.slow
@_installed("o200k_base")
def test_row9_an_o200k_export_keeps_its_split() -> None:
    """An o200k-scheme tokenizer's tokenizer.json was written with a bare ByteLevel: its split dropped."""
    from tokenizers import Tokenizer

    from webapp.tokenizer import get_tokenizer, load_preset

    text = "Hello world! The quick brown fox's 12345 jumps, don't  lazy dogs.\n\n Zürich 東京 ÄÖ 1234567"
    library = Tokenizer.from_str(export_tokenizer(load_preset("o200k_base"), "hf")[0])
    assert library.encode(text, add_special_tokens=False).ids == get_tokenizer("o200k_base").encode(text)


@_installed("llama2")
def test_row9_a_tokenizer_json_export_keeps_its_own_steps_and_ids() -> None:
    """llama2's export was written without its normalizer and byte fallback: other ids, without a word."""
    from tokenizers import Tokenizer

    from webapp.tokenizer import get_tokenizer

    text = "Hello world! The quick brown fox's 12345 jumps,  don't.\n\n Zürich 東京 ☃ 𝒳"
    library = Tokenizer.from_str(export_tokenizer(open_models.load("llama2"), "hf")[0])
    assert library.encode(text, add_special_tokens=False).ids == get_tokenizer("llama2").encode(text)
