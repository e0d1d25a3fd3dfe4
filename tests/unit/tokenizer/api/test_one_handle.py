"""One handle: `get_tokenizer` and `get_encoding` give the same `Encoding` class over the same stages, differing
only in their defaults; its decode table follows each kind of file's own library where an id could have two
readings (a tiktoken file, a tokenizer.json, a SentencePiece .model), checked against that library."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path

import pytest
import sentencepiece as spm
import tiktoken
from tokenizers import Tokenizer as LibraryTokenizer

from tests.hf_samples import SAMPLE_CORPUS, byte_level_tokenizer
from webapp.tokenizer import TokenizerError, formats, get_encoding, get_tokenizer
from webapp.tokenizer.api import Encoding
from webapp.tokenizer.api.encoding import PLAYGROUND, TIKTOKEN, TOKENIZERS
from webapp.tokenizer.presets.openai import load_ranks
from webapp.tokenizer.pretokenize.patterns import PATTERNS


def test_get_tokenizer_and_get_encoding_share_one_class_and_one_tokenizer() -> None:
    playground, library = get_tokenizer("gpt2"), get_encoding("r50k_base")
    assert type(playground) is type(library) is Encoding
    assert playground.tokenizer is library.tokenizer  # one set of stages, one decode table
    assert playground._token_tables() is library._token_tables()
    assert (playground.defaults, library.defaults) == (PLAYGROUND, TIKTOKEN)
    text = "hi <|endoftext|>"
    assert playground.encode(text) == library.encode(text, disallowed_special=()) == library.encode_ordinary(text)
    with pytest.raises(ValueError):
        library.encode(text)  # tiktoken's default: special-token text is an error
    assert playground.encode(text, ["<|endoftext|>"])[-1] == library.encode(text, allowed_special="all")[-1] == 50256
    assert pickle.loads(pickle.dumps(playground)) is playground and pickle.loads(pickle.dumps(library)) is library


def test_a_tokenizer_json_preset_gets_the_librarys_defaults_from_get_encoding_only() -> None:
    assert get_encoding("qwen3").defaults is TOKENIZERS and get_tokenizer("qwen3").defaults is PLAYGROUND
    text = "<|im_start|>hi"
    assert get_encoding("qwen3").encode(text)[0] == 151644  # the library recognises added tokens by default
    assert 151644 not in get_tokenizer("qwen3").encode(text)


def _ranks_file_encoding(special: dict[str, int]) -> tuple[Encoding, tiktoken.Encoding]:
    ranks = load_ranks("r50k_base")
    ours = Encoding("overlap", pat_str=PATTERNS["gpt2"], mergeable_ranks=ranks, special_tokens=special)
    theirs = tiktoken.Encoding("overlap", pat_str=PATTERNS["gpt2"], mergeable_ranks=ranks, special_tokens=special)
    return ours, theirs


def test_a_tiktoken_file_decodes_an_id_both_ordinary_and_special_as_tiktoken_does() -> None:
    ours, theirs = _ranks_file_encoding({"<|x|>": 70, "<|endoftext|>": 50256})
    assert ours.decode_bytes([70, 50256]) == theirs.decode_bytes([70, 50256]) == b"g<|endoftext|>"
    assert ours.decode_single_token_bytes(70) == theirs.decode_single_token_bytes(70) == b"g"


def test_a_tokenizer_json_decodes_the_vocab_token_where_an_added_token_names_its_id() -> None:
    doc = json.loads(byte_level_tokenizer(SAMPLE_CORPUS, use_regex=True).to_str())
    taken = next(token for token, token_id in doc["model"]["vocab"].items() if token_id == 70)
    doc["added_tokens"].append({"id": 70, "content": "<X>", "single_word": False, "lstrip": False,
                                "rstrip": False, "normalized": False, "special": True})
    content = json.dumps(doc)
    library = LibraryTokenizer.from_str(content)
    ours = Encoding.from_loaded("overlap", formats.import_tokenizer(content))
    assert library.id_to_token(70) == taken  # the library gives the added token another id instead
    assert ours.decode([70]) == library.decode([70], skip_special_tokens=False) == taken


def test_a_sentencepiece_model_decodes_each_id_as_its_piece(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog\n" * 50, encoding="utf-8")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(corpus), model_type="bpe", vocab_size=60, hard_vocab_limit=False,
                                   model_writer=model, minloglevel=2, num_threads=1, byte_fallback=False,
                                   control_symbols=["<ctl>"], normalization_rule_name="identity")
    library = spm.SentencePieceProcessor(model_proto=model.getvalue())
    ours = Encoding.from_loaded("spm", formats.import_tokenizer(model.getvalue()))
    assert library.piece_to_id("<ctl>") in ours._token_tables().special_ids
    for token_id in range(library.get_piece_size()):  # one piece per id, control ones as their text (as tiktoken)
        assert ours.decode([token_id]) == library.id_to_piece(token_id)


def test_an_unknown_id_is_named_for_the_web_and_a_key_error_for_tiktoken_code() -> None:
    for handle in (get_tokenizer("gpt2"), get_encoding("gpt2")):
        with pytest.raises(TokenizerError) as info:
            handle.decode([15496, 50257])
        assert info.value.field == "ids" and info.value.location == {"index": 2}
        with pytest.raises(KeyError):
            handle.decode([50257])
