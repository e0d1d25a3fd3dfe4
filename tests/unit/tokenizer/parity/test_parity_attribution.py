"""The parity lab's attribution (webapp/tokenizer/parity/): each kind of difference is named at its stage,
and every claim is checked against something the claim does not come from.

- a preset's vocabulary in a GGUF file with the wrong `pre`: the differences are the pre-tokenizer's, and
  the two splits shown are the real ones (`tokenizers`' own pre-tokenizer for the tokenizer.json, the
  `regex` package with GPT-2's pattern for llama.cpp's "gpt-2" type);
- one merge removed (a GGUF file, typed rules): the differences are merges, naming exactly that rule,
  and putting the named rule back on the side that lacks it makes every such text agree; two rules
  swapped: "order", and swapping them back agrees;
- qwen3's GGUF beside qwen3: the normalizer (Qwen's tokenizer.json applies NFC, llama.cpp none), only on
  texts NFC changes;
- ids renumbered: vocab; BOS added on one side: the post-processor; a tokenizer beside itself: nothing.
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from typing import Any

import pytest
import regex

gguf = pytest.importorskip("gguf")

from tests.gguf_files import byte_level_keys, gguf_from_tokenizer_json, tokenizer_json_parts, write_gguf  # noqa: E402
from webapp.tokenizer import import_tokenizer, is_installed, load_preset  # noqa: E402
from webapp.tokenizer.core.alphabet import bytes_to_token, token_to_bytes  # noqa: E402
from webapp.tokenizer.parity import PROBE_TEXTS, check_parity, side_of_merges, side_of_tokenizer  # noqa: E402
from webapp.tokenizer.presets import open_models  # noqa: E402
from webapp.tokenizer.pretokenize.patterns import GPT2_PATTERN  # noqa: E402
from webapp.tokenizer.stages import tokenizer_of  # noqa: E402

NONE: frozenset[str] = frozenset()


def installed(name: str) -> str:
    if not open_models.is_installed(name):
        pytest.skip(f"{name} is not installed (npm ci)")
    return open_models.OPEN_MODELS[name].file_path().read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def opened_gguf(data: bytes) -> Any:
    return import_tokenizer(data, filename="model.gguf")


def side(tok: Any, label: str, allowed: frozenset[str] = NONE) -> Any:
    return side_of_tokenizer(tokenizer_of(tok), allowed, label)


@lru_cache(maxsize=None)
def preset_side(name: str) -> Any:
    if not is_installed(name):
        pytest.skip(f"{name} is not installed")
    return side(load_preset(name), name)


@lru_cache(maxsize=None)
def qwen3_parts() -> tuple[list[str], list[int], list[str]]:
    return tokenizer_json_parts(json.loads(installed("qwen3")))


@lru_cache(maxsize=None)
def qwen3_gguf(merges: tuple[str, ...] | None = None, add_bos: bool = False) -> Any:
    tokens, types, all_merges = qwen3_parts()
    ids: dict[str, int | bool] = {"bos": tokens.index("<|endoftext|>"), "add_bos": True} if add_bos else {}
    data = write_gguf(byte_level_keys(tokens, types, list(all_merges if merges is None else merges), "qwen2", **ids))
    return side(opened_gguf(data), "qwen3 GGUF")


def differing(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [entry for entry in answer["texts"] if not entry["same"]]


@lru_cache(maxsize=2)
def library(document: str) -> Any:
    """`tokenizers`' Tokenizer of a tokenizer.json, read once (over a second for a 128,000-token file)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_str(document)


def library_pieces(document: str, text: str) -> list[str]:
    """`tokenizers`' own pre-tokenizer of a tokenizer.json: its pieces as text."""
    pieces = library(document).pre_tokenizer.pre_tokenize_str(text)
    return [(token_to_bytes(p) or b"").decode("utf-8", "backslashreplace") for p, _ in pieces]


# --- a tokenizer beside itself ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cl100k_base", "qwen3"])
def test_a_tokenizer_beside_itself_agrees_on_every_probe(name: str) -> None:
    answer = check_parity(preset_side(name), preset_side(name))
    assert answer["summary"]["same"] == len(PROBE_TEXTS) and answer["probes"]
    assert all(not any(t["differs"] for t in e["a"]["tokens"] + e["b"]["tokens"]) for e in answer["texts"])


# --- the wrong pre-tokenizer -------------------------------------------------------------------------


@pytest.mark.slow
def test_deepseek_v3_vocab_split_as_gpt2_differs_only_at_the_pre_tokenizer_with_the_real_splits() -> None:
    document = installed("deepseek_v3")
    wrong = side(opened_gguf(gguf_from_tokenizer_json(document, "gpt-2", add_bos=False)), "gpt-2")
    answer = check_parity(preset_side("deepseek_v3"), wrong)
    found = differing(answer)
    assert len(found) >= 15
    assert {e["stage"] for e in found} == {"pre_tokenizer"}
    for entry in found:
        detail = entry["detail"]
        assert detail["a"] == library_pieces(document, entry["text"])
        assert detail["b"] == regex.findall(GPT2_PATTERN, entry["text"])
        at = detail["index"]
        assert detail["a"][:at] == detail["b"][:at] and detail["a"][at] != detail["b"][at]


@pytest.mark.slow
def test_llama3_vocab_split_as_gpt2_differs_at_the_pre_tokenizer_and_where_llama_bpe_takes_pieces_whole() -> None:
    """llama.cpp ties ignore_merges to the pre type: its "gpt-2" type merges a piece Llama 3 takes whole."""
    document = installed("llama3")
    wrong = side(opened_gguf(gguf_from_tokenizer_json(document, "gpt-2", add_bos=False)), "gpt-2")
    answer = check_parity(preset_side("llama3"), wrong)
    found = differing(answer)
    stages = [e["stage"] for e in found]
    assert stages.count("pre_tokenizer") >= 15 and set(stages) <= {"pre_tokenizer", "merges"}
    for entry in found:
        detail = entry["detail"]
        if entry["stage"] == "merges":
            assert detail["kind"] == "whole" and detail["side"] == "a" and detail["a_tokens"] == [detail["piece"]]
            continue
        assert detail["a"] == library_pieces(document, entry["text"])
        assert detail["b"] == regex.findall(GPT2_PATTERN, entry["text"])


# --- one merge removed, two swapped ------------------------------------------------------------------


@pytest.mark.slow
def test_a_merge_removed_is_named_and_putting_it_back_agrees() -> None:
    _tokens, _types, merges = qwen3_parts()
    removed = merges.index("Ġ t")
    lacking = merges[:removed] + merges[removed + 1:]
    answer = check_parity(qwen3_gguf(), qwen3_gguf(tuple(lacking)))
    found = differing(answer)
    assert found and {e["stage"] for e in found} == {"merges"}
    for entry in found:
        detail = entry["detail"]
        assert detail["kind"] == "missing" and detail["has"] == "a" and detail["lacks"] == "b"
        rule = detail["rule"]
        assert (rule["left"], rule["right"]) == (" ", "t") and detail["a"] == {"rank": removed}
        named = " ".join(bytes_to_token(bytes(rule[k])) for k in ("left_bytes", "right_bytes"))
        put_back = lacking[:detail["a"]["rank"]] + [named] + lacking[detail["a"]["rank"]:]
        again = check_parity(qwen3_gguf(), qwen3_gguf(tuple(put_back)), [entry["text"]])
        assert again["summary"]["same"] == 1


RULES = [[108, 111, 256], [256, 119, 257], [101, 114, 258], [32, 257, 259], [257, 258, 260], [97, 98, 261],
         [98, 99, 262]]


def test_a_typed_rule_removed_is_named_and_removing_it_on_the_other_side_agrees() -> None:
    lacking = [rule for rule in RULES if rule[:2] != [256, 119]]
    texts = ["lower lowest slow", "hello world", "low"]
    answer = check_parity(side_of_merges(RULES, "gpt2"), side_of_merges(lacking, "gpt2"), texts)
    assert [e["stage"] for e in answer["texts"]] == ["merges", None, "merges"]
    for entry in differing(answer):
        detail = entry["detail"]
        assert detail["kind"] == "missing" and detail["a"] == {"rule": 1} and detail["lacks"] == "b"
        assert (detail["rule"]["left_bytes"], detail["rule"]["right_bytes"]) == ([108, 111], [119])
        without = [rule for i, rule in enumerate(RULES) if i != detail["a"]["rule"]]
        again = check_parity(side_of_merges(without, "gpt2"), side_of_merges(lacking, "gpt2"), [entry["text"]])
        assert again["texts"][0]["a"]["tokens"] == again["texts"][0]["b"]["tokens"]


def test_two_rules_ranked_the_other_way_round_are_named_and_swapping_them_back_agrees() -> None:
    first, second = [[97, 98, 256], [98, 99, 257]], [[98, 99, 256], [97, 98, 257]]
    answer = check_parity(side_of_merges(first, "none"), side_of_merges(second, "none"), ["abc"])
    entry = answer["texts"][0]
    assert entry["stage"] == "merges" and entry["detail"]["kind"] == "order"
    assert entry["detail"]["a_tokens"] == ["ab", "c"] and entry["detail"]["b_tokens"] == ["a", "bc"]
    rules = {r["merged"]: (r["a"], r["b"]) for r in entry["detail"]["rules"]}
    assert rules == {"ab": (0, 1), "bc": (1, 0)}
    swapped = [second[1][:2] + [256], second[0][:2] + [257]]
    assert check_parity(side_of_merges(first, "none"), side_of_merges(swapped, "none"), ["abc"])["summary"]["same"] == 1


# --- the normalizer, the vocabulary, the post-processor --------------------------------------------


@pytest.mark.slow
def test_qwen3_gguf_beside_qwen3_differs_at_the_normalizer_on_text_nfc_changes() -> None:
    answer = check_parity(preset_side("qwen3"), qwen3_gguf())
    found = differing(answer)
    assert found and {e["stage"] for e in found} == {"normalizer"}
    assert any("cafe\u0301" in e["text"] for e in found)
    for entry in answer["texts"]:
        text = entry["text"]
        assert entry["same"] == (unicodedata.normalize("NFC", text) == text)
    for entry in found:
        detail, nfc = entry["detail"], unicodedata.normalize("NFC", entry["text"])
        at = detail["offset"]
        assert nfc[:at] == entry["text"][:at] and nfc[at] != entry["text"][at]
        assert detail["a"] == nfc[detail["snippet_start"]:at + 16]
        assert detail["b"] == entry["text"][detail["snippet_start"]:at + 16]


def test_renumbered_ids_are_the_vocabulary() -> None:
    renumbered = [[*rule[:2], rule[2] + 1000] for rule in RULES]
    renumbered = [[a + 1000 if a >= 256 else a, b + 1000 if b >= 256 else b, new] for a, b, new in renumbered]
    answer = check_parity(side_of_merges(RULES, "gpt2"), side_of_merges(renumbered, "gpt2"), ["lower", "xyz"])
    entry, same = answer["texts"]
    assert entry["stage"] == "vocab" and same["same"]
    assert entry["detail"]["token"] == "lower" and (entry["detail"]["a_id"], entry["detail"]["b_id"]) == (260, 1260)
    assert answer["summary"] == {"same": 1, "special": 0, "normalizer": 0, "pre_tokenizer": 0, "merges": 0,
                                 "vocab": 1, "post_processor": 0}


@pytest.mark.slow
def test_bos_added_on_one_side_is_the_post_processor() -> None:
    answer = check_parity(qwen3_gguf(), qwen3_gguf(add_bos=True), ["hello", "", "e\u0301"])
    assert [e["stage"] for e in answer["texts"]] == ["post_processor"] * 3
    detail = answer["texts"][0]["detail"]
    assert detail["a"]["before"] == [] and detail["b"]["before_text"] == ["<|endoftext|>"]
    assert answer["texts"][0]["b"]["tokens"][0] == {"id": detail["b"]["before"][0], "text": "<|endoftext|>",
                                                    "bytes": list(b"<|endoftext|>"), "differs": True}


def test_special_tokens_split_on_one_side_only_are_the_special_stage() -> None:
    cl100k = load_preset("cl100k_base")
    answer = check_parity(side(cl100k, "all", frozenset(cl100k.special_tokens)), side(cl100k, "none"),
                          ["hi <|endoftext|> there", "hi there"])
    entry, same = answer["texts"]
    assert entry["stage"] == "special" and same["same"]
    assert entry["detail"]["a"] == ["<|endoftext|>"] and entry["detail"]["b"] == []
