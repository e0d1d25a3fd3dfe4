"""Pre-tokenizing many runs at once (pretokenize/pre_runs.py) gives each run the pieces it gets alone.

A rendered chat's runs between special tokens go through the pre-tokenizer
together, so a known split makes one pass over all of them. The oracle is
`pre_tokenizers.build_pre_tokenizer` applied to each run on its own; the
pre-tokenizers are the open models' (every known split, fused DeepSeek-V3
steps), plus steps that are not known splits before and after one.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer.reading import text as ht
from webapp.tokenizer.pretokenize.pre_tokenizers import build_pre_tokenizer, describe_pre_tokenizer
from webapp.tokenizer.pretokenize.pre_runs import build_pre_tokenizer_runs
from webapp.tokenizer.pretokenize import class_split as cs


def _split(pattern: str) -> dict:
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}


def _byte_level(prefix: bool = False, use_regex: bool = False) -> dict:
    return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": False, "use_regex": use_regex}


PRE_TOKENIZERS = {
    "qwen": {"type": "Sequence", "pretokenizers": [_split(cs.QWEN_PATTERN), _byte_level()]},
    "cl100k": {"type": "Sequence", "pretokenizers": [_split(cs.CL100K_PATTERN), _byte_level()]},
    "o200k": {"type": "Sequence", "pretokenizers": [_split(cs.O200K_PATTERN), _byte_level()]},
    "tekken": {"type": "Sequence", "pretokenizers": [_split(cs.TEKKEN_PATTERN), _byte_level()]},
    "deepseek_v3": {"type": "Sequence", "pretokenizers": [*map(_split, cs.DEEPSEEK_V3_PATTERNS), _byte_level()]},
    "split alone": _split(cs.QWEN_PATTERN),
    "byte level with its regex": _byte_level(prefix=True, use_regex=True),
    "others around a known split": {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": False}, _split(cs.CL100K_PATTERN), _byte_level(prefix=True)]},
    "metaspace": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True},
}

texts = st.text(alphabet=st.sampled_from(list("ab AZ 09\n\t'sé東京・。,!ы٣   ")), max_size=30)


@pytest.mark.parametrize("name", list(PRE_TOKENIZERS))
@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.lists(st.tuples(texts, st.booleans()), max_size=3), max_size=6))
def test_each_run_gets_the_pieces_it_gets_alone(name, runs):
    desc = describe_pre_tokenizer(PRE_TOKENIZERS[name])
    alone, together = build_pre_tokenizer(desc), build_pre_tokenizer_runs(desc)
    with ht.bounded(sum(len(t) for run in runs for t, _ in run) + 1):
        assert together([list(run) for run in runs]) == [alone(list(run)) for run in runs]


SPELT = ["qwen", "cl100k", "o200k", "deepseek_v3"]  # (known splits then ByteLevel: the spelt path)
chat_texts = st.lists(st.sampled_from(list("ab AZ 09\n\t'sé東京・。,!ы٣ 👍") + ["<|x|>", "\ud800"]),
                      max_size=150).map("".join)  # (up to ~700 characters: the numpy paths too)


@pytest.mark.parametrize("name", SPELT + ["byte level with its regex", "metaspace"])
@settings(max_examples=examples(60), deadline=None)
@given(chat_texts)
def test_pieces_for_the_model_are_the_pieces_spelt(name, text):
    """`parts(for_model=True)` (for a known split then ByteLevel: cut from the text's spelling, not
    split then spelt) gives every piece as `model_pieces` spells it, and the added tokens in place."""
    from webapp.tokenizer.core.alphabet import model_pieces
    from webapp.tokenizer.hf.pipeline import Pipeline

    desc = {"normalizer": None, "pre_tokenizer": describe_pre_tokenizer(PRE_TOKENIZERS[name]), "decoder": None,
            "added_tokens": [["<|x|>", 7, True, False, False, False, False]]}
    pipeline = Pipeline(desc)
    assert (pipeline._split_then_bytes is not None) == (name in SPELT)
    plain = pipeline.parts(text)
    expected = [(added, value if added is not None else model_pieces(value, pipeline.byte_level,
                                                                      pipeline.spelt_in_alphabet))
                for added, value in plain]
    assert pipeline.parts(text, for_model=True) == expected
