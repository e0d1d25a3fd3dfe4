"""Differential tests: tiktoken and Hugging Face tokenizers as a second oracle.

For well-formed merge lists (every rule's operands exist before it, every
`new` is fresh) the rank-based peers give our ids:
* tiktoken, an `Encoding` built from the ranks with the pattern `[\\s\\S]+`
  (the whole text is one piece). tiktoken merges any two neighbours whose
  concatenated bytes have a rank, not only listed pairs, so the generated
  lists also keep every token's bytes spelled by exactly one pair of tokens;
* `tokenizers`, a BPE model from vocab + merges, bytes shown as printable
  characters by the ByteLevel pre-tokenizer with its regex split turned off.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import encode, implied_byte_vocab, train_trace

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")


def byte_symbols() -> dict[int, str]:
    """A printable character per byte, as byte-level tokenizers spell tokens (our own mapping)."""
    printable = [b for b in range(256) if chr(b).isprintable() and not chr(b).isspace() and b != 0xAD]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


SYMBOLS = byte_symbols()


def tiktoken_encoding(merges: list[list[int]]):
    vocab = implied_byte_vocab(merges)
    ranks = {data: token_id for token_id, data in vocab.items()}
    return tiktoken.Encoding(
        name="playground-test",
        pat_str=r"[\s\S]+",
        mergeable_ranks=ranks,
        special_tokens={},
        explicit_n_vocab=len(ranks),
    )


def hf_tokenizer(merges: list[list[int]]):
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = implied_byte_vocab(merges)

    def spell(token_id: int) -> str:
        return "".join(SYMBOLS[b] for b in vocab[token_id])

    model = models.BPE(
        vocab={spell(token_id): token_id for token_id in vocab},
        merges=[(spell(left), spell(right)) for left, right, _new in merges],
    )
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    return tokenizer


def trained_merges(text: str, count: int) -> list[list[int]]:
    """Byte-level merges learned by our trainer from words (bytes spelled as latin-1 characters)."""
    words = [w.encode().decode("latin-1") for w in re.findall(r" ?\w+| ?[^\w\s]+|\s+", text)]
    trace = train_trace(words, count, runners_up=0, max_steps=0)
    ids = {chr(b): b for b in range(256)}
    merges = []
    for index, (left, right) in enumerate(trace.pairs):
        ids[left + right] = 256 + index
        merges.append([ids[left], ids[right], 256 + index])
    return merges


CORPUS = Path(json.__file__).read_text(encoding="utf-8") + Path(re.__file__).read_text(encoding="utf-8")
SAMPLES = [
    CORPUS[:3000],
    "The quick brown fox jumps over the lazy dog. " * 5,
    "Grüße aus Köln — naïve café, 日本語のテキスト, Ελληνικά, русский текст 🙂",
    "",
    "   \n\n\tdef f(x):\n        return x ** 2\n",
]


@pytest.fixture(scope="module")
def real_merges() -> list[list[int]]:
    return trained_merges(CORPUS, 800)


@pytest.mark.parametrize("sample", range(len(SAMPLES)))
def test_tiktoken_agrees_on_trained_merges(real_merges, sample):
    text = SAMPLES[sample]
    assert encode(text, real_merges) == tiktoken_encoding(real_merges).encode_ordinary(text)


@pytest.mark.parametrize("sample", range(len(SAMPLES)))
def test_tokenizers_agrees_on_trained_merges(real_merges, sample):
    text = SAMPLES[sample]
    assert encode(text, real_merges) == hf_tokenizer(real_merges).encode(text).ids


def single_spelling(merges: list[list[int]]) -> bool:
    """Every token's bytes are left + right of its own rule and of no other pair of tokens."""
    vocab = implied_byte_vocab(merges)
    by_bytes = {data: token_id for token_id, data in vocab.items()}
    for left, right, new in merges:
        data = vocab[new]
        for cut in range(1, len(data)):
            a, b = by_bytes.get(data[:cut]), by_bytes.get(data[cut:])
            if a is not None and b is not None and (a, b) != (left, right):
                return False
    return True


@st.composite
def well_formed(draw):
    hot = list(b"ab e\xc3\xa9")
    seen = {bytes([b]) for b in range(256)}
    vocab = {b: bytes([b]) for b in range(256)}
    merges = []
    for _ in range(draw(st.integers(0, 25))):
        left, right = draw(st.sampled_from(hot)), draw(st.sampled_from(hot))
        data = vocab[left] + vocab[right]
        if data in seen:
            continue
        new = 256 + len(merges)
        seen.add(data)
        vocab[new] = data
        merges.append([left, right, new])
        hot.append(new)
    return merges


@settings(max_examples=examples(80), deadline=None)
@given(merges=well_formed(), text=st.text("ab eé", max_size=40))
def test_peers_agree_on_random_well_formed_lists(merges, text):
    ours = encode(text, merges)
    assert ours == hf_tokenizer(merges).encode(text).ids
    assume(single_spelling(merges))
    assert ours == tiktoken_encoding(merges).encode_ordinary(text)
