"""Explanations agree with the normal encode for every preset kind, typed merges and characters.

For each OpenAI preset (list order over tiktoken's ranks), each Hugging Face
preset (library order, its own pipeline; mistral_tekken in list order), typed
byte merges and typed character merges: the explanation's ids are exactly the
encode's, its tokens spell the text the model sees, there is one boundary per
pair of neighbours at the right offset, and every rule it names is the
tokenizer's rule with that index or rank. Pre-tokenizer claims are checked
against the pattern: the alternative named matches the piece exactly.
"""

from __future__ import annotations

import pytest
import regex

from webapp.tokenizer import get_tokenizer, is_installed
from webapp.tokenizer.explain import CAUSES, explain_chars, explain_loaded, explain_merges
from webapp.tokenizer.stages.models import library_model

TEXTS = [
    "Hello lowest world! 12345 6789, it's   fine\n\n  naïve café 🙂 北京欢迎你",
    "<|endoftext|>lowest<|endoftext|> x<|fim_prefix|>y",
    "aaaaaaa bbbb 0000000 ????!!!! \t\t tab",
    "ÿþ ŀ \u200b zero‑width ﬁ ligature ＡＢＣ",
    # characters no SentencePiece vocab here has (an emoji of Unicode 15, a rare CJK extension B
    # ideograph, a private-use character): byte fallback in mistral_v1 / mistral_v3 / llama2
    "shaking \U0001fae8 face, 𠜎 and \ue000 here",
    "",
    "x",
]
PRESETS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base", "llama3", "llama2", "qwen3", "deepseek_v3",
           "gemma3", "gpt_oss", "mistral_tekken", "mistral_v1", "mistral_v3"]


def _rules_of(tok):
    """rule index / rank -> (left, right, new) in the ids the explanation uses."""
    loaded = tok.loaded
    if loaded.library_order and loaded.level == "chars":
        vocab = loaded.vocab
        return lambda r: (vocab[loaded.merges[r][0]], vocab[loaded.merges[r][1]],
                          vocab[loaded.merges[r][0] + loaded.merges[r][1]])
    fid = loaded.id_map.get
    return lambda r: tuple(fid(x, x) for x in loaded.merges[r])


def check_answer(answer, text_bytes, rule_of, order):
    tokens = answer["tokens"]
    assert b"".join(bytes(t["bytes"]) for t in tokens) == text_bytes or any(t.get("special") for t in tokens) \
        or len(b"".join(bytes(t["bytes"]) for t in tokens)) <= len(text_bytes)
    assert len(answer["boundaries"]) == max(0, len(tokens) - 1)
    for n, b in enumerate(answer["boundaries"]):
        assert (b["left"], b["right"]) == (n, n + 1)
        assert b["at"] == tokens[n + 1]["start"] == tokens[n]["end"]
        assert b["cause"] in CAUSES and b["sentence"]
        key = "rank" if order == "library" else "index"
        for name in ("would_join", "taken_by", "made_by"):
            if name in b:
                rule = b[name]
                assert rule_of(rule[key]) == (rule["left"], rule["right"], rule["new"])
        if b["cause"] == "pre_tokenizer":
            detail = b["detail"]
            for side, piece in (("left", detail["left_piece"]), ("right", detail["right_piece"])):
                alt = detail["pattern"][side]
                if alt is not None:
                    assert regex.compile(alt).fullmatch(piece) is not None
        if b["cause"] == "blocked" and order == "library":
            assert b["taken_by"]["rank"] < b["would_join"]["rank"]
        if b["cause"] == "blocked" and order == "list":
            assert b["taken_by"]["index"] < b["would_join"]["index"]


@pytest.mark.parametrize("name", PRESETS)
def test_explanations_agree_with_the_encode(name):
    if not is_installed(name):
        pytest.skip(f"{name} is not installed here (make setup prepares the presets)")
    tok = get_tokenizer(name)
    allowed = frozenset(tok.special_tokens)
    seen = set()
    first = sorted(allowed)[0] if allowed else ""
    for text in [*TEXTS, f"say{first}this {first}{first} x"]:
        for special in (allowed, frozenset()):
            answer = explain_loaded(tok.tokenizer, text, special)
            assert answer["ids"] == tok.encode(text, allowed_special=special)
            shown = answer.get("model_text", text).encode("utf-8", "surrogatepass")
            check_answer(answer, shown, _rules_of(tok), answer["order"])
            seen.update(b["cause"] for b in answer["boundaries"])
    assert "pre_tokenizer" in seen or name in ("llama2", "gemma3", "mistral_v1", "mistral_v3")  # (no pre-tokenizer cut: none, or its split char is normalized away)
    # (a Tekken file's special tokens are never cut out of text, as mistral-common encodes it)
    assert "special" in seen or name == "mistral_tekken"


def test_cl100k_lowest_is_explained_in_the_issue_words():
    tok = get_tokenizer("cl100k_base")
    answer = explain_loaded(tok.tokenizer, " lowest", frozenset())
    assert answer["ids"] == tok.encode(" lowest")
    assert all(b["cause"] in ("blocked", "no_rule", "made_later", "overlap") for b in answer["boundaries"])


def test_llama2_byte_fallback_is_named():
    if not is_installed("llama2"):
        pytest.skip("llama2 is not installed here")
    tok = get_tokenizer("llama2")
    assert library_model(tok.loaded).fallback is not None
    answer = explain_loaded(tok.tokenizer, "a\U0001fae8b", frozenset())
    assert answer["ids"] == tok.encode("a\U0001fae8b")
    assert "byte_fallback" in {b["cause"] for b in answer["boundaries"]}


def test_typed_merges_and_characters_agree():
    merges = [[108, 111, 256], [119, 101, 257], [257, 115, 258], [258, 116, 259], [256, 119, 260]]
    answer = explain_merges("lowest low", merges, "gpt2")
    assert answer["ids"] == [256, 259, 32, 260]
    assert [b["cause"] for b in answer["boundaries"]] == ["blocked", "pre_tokenizer", "no_rule"]
    assert answer["boundaries"][0]["would_join"]["text"] == ["lo", "w", "low"]
    vocab = {"l": 0, "o": 1, "w": 2, "e": 3, "r": 4, "lo": 5, "er": 6, "low": 7, "lower": 8, "s": 9, "t": 10,
             "we": 11, "st": 12}
    chars = explain_chars("lowest", vocab, [["l", "o"], ["w", "e"], ["lo", "w"], ["s", "t"]])
    assert chars["ids"] == [5, 11, 12] and chars["unit"] == "chars"
    assert [b["cause"] for b in chars["boundaries"]] == ["blocked", "no_rule"]
    assert chars["boundaries"][0]["sentence"] == (
        "`lo`+`w` → `low` (rule 3) would have joined them, but `w`+`e` → `we` (rule 2) took `w` first.")


FALLBACK_TEXT = "a\U0001fae8b 𠜎\ue000 ok \U0001fae8"


@pytest.mark.parametrize("name", ["mistral_v1", "mistral_v3", "llama2"])
def test_byte_fallback_boundaries_are_true(name):
    """SentencePiece files with byte_fallback: every `byte_fallback` boundary has a `<0xXX>` token on one
    side, and no pair that met there (its story, in the file's own token strings) is one of the
    file's merges; the fallback characters' byte tokens spell their UTF-8."""
    if not is_installed(name):
        pytest.skip(f"{name} is not installed here (make setup prepares the presets)")
    tok = get_tokenizer(name)
    loaded = tok.loaded
    assert loaded.library_order and loaded.level == "chars"
    names = {i: t for t, i in loaded.vocab.items()}
    merges = {(a, b) for a, b in loaded.merges}
    byte_token = regex.compile(r"<0x[0-9A-F]{2}>")
    answer = explain_loaded(tok.tokenizer, FALLBACK_TEXT, frozenset())
    assert answer["ids"] == tok.encode(FALLBACK_TEXT, allowed_special=frozenset())
    fallback = [n for n, b in enumerate(answer["boundaries"]) if b["cause"] == "byte_fallback"]
    assert len(fallback) >= 3 * 4  # three characters outside the vocab, four bytes each at least once
    for n in fallback:
        b = answer["boundaries"][n]
        sides = [names[answer["ids"][b["left"]]], names[answer["ids"][b["right"]]]]
        assert any(byte_token.fullmatch(side) for side in sides), sides
        story = explain_loaded(tok.tokenizer, FALLBACK_TEXT, frozenset(), story=n)["story"]
        assert story, "a byte_fallback boundary lies inside a piece: pairs met there"
        for m in story:
            pair = (names[m["left"]], names[m["right"]])
            assert pair not in merges and m["rule"] is None, pair
    # the byte tokens of 🫨 (U+1FAE8) are its four UTF-8 bytes, in order
    spelled = [names[i] for i in answer["ids"]]
    want = ["<0x%02X>" % x for x in "\U0001fae8".encode("utf-8")]
    assert any(spelled[i:i + 4] == want for i in range(len(spelled)))


# --- each way the text reaches the model (the splitters' `visit`) ------------------------------


def test_a_character_file_without_a_pipeline_is_explained_as_typed_character_rules():
    from webapp.tokenizer import tokenizer_of
    from webapp.tokenizer.formats import from_playground

    vocab = {"l": 0, "o": 1, "w": 2, "e": 3, "s": 4, "t": 5, "lo": 6, "low": 7, "es": 8}
    tok = from_playground(level="chars", merges=[("l", "o"), ("lo", "w"), ("e", "s")], vocab=vocab)
    whole = tokenizer_of(tok)
    answer = explain_loaded(whole, "lowest", frozenset())
    assert answer == explain_chars("lowest", vocab, [("l", "o"), ("lo", "w"), ("e", "s")])
    assert answer["ids"] == whole.encode("lowest") == [7, 8, 5]


def test_a_list_order_file_split_by_another_scheme_is_explained_with_that_scheme():
    from webapp.tokenizer import load_preset, tokenizer_of

    split = tokenizer_of(load_preset("cl100k_base"), "none")  # (no pre-tokenization: one piece)
    text = "hello    world"
    answer = explain_loaded(split, text, frozenset())
    assert answer["ids"] == split.encode(text, frozenset())
    assert answer["ids"] != get_tokenizer("cl100k_base").encode(text)  # (the spaces merge with the word after them)
    assert len(answer["boundaries"]) == len(answer["ids"]) - 1


@pytest.mark.skipif(not is_installed("qwen3"), reason="the open-model presets are not installed")
def test_a_library_order_file_split_by_a_playground_scheme_is_refused_by_name():
    from webapp.tokenizer import TokenizerError, load_preset, tokenizer_of

    with pytest.raises(TokenizerError, match="a Hugging Face file split by a playground scheme .* not explained yet"):
        explain_loaded(tokenizer_of(load_preset("qwen3"), "gpt2"), "Hello world", frozenset())
