"""Small Hugging Face `tokenizers` models trained inside the tests (no downloads).

The import/export tests train these, save them in the library's formats and
check that the playground gives the library's ids.
"""

from __future__ import annotations

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

SAMPLE_CORPUS = [
    "The lower the newest, the wider the widest: lowering lowers the lowest newer widths.",
    "Hello there! Don't you know they'll say we're happy? 12345 reasons, 6789 more.",
    "Zürich, Köln und München: schöne Städte. 東京と大阪。Русский текст.",
]


def byte_level_tokenizer(corpus: list[str], *, use_regex: bool = True, vocab_size: int = 500) -> Tokenizer:
    """A GPT-2 style byte-level BPE (ByteLevel pre-tokenizer and decoder)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=use_regex)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(corpus * 3, trainer=trainer)
    return tok


def char_level_tokenizer(corpus: list[str], *, vocab_size: int = 300) -> Tokenizer:
    """A character-level BPE: no normalizer, no pre-tokenizer, each text one word."""
    tok = Tokenizer(models.BPE())
    tok.train_from_iterator(corpus * 3, trainer=trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False))
    return tok
