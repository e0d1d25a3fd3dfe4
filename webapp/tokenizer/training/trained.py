"""What a corpus training's answer becomes: a tokenizer of its level, and a count of a text's tokens.

Kept apart from corpus.py so that the trainer (which runs in forked
processes over big corpora) imports none of the encoders and file formats
these need. One small class per level (`LEVELS`), as corpus.py has for the
training itself, so neither the web layer nor this module branches on the
level.

What it does not do: train (corpus.py), store or serve the tokenizer.
"""

from __future__ import annotations

from typing import Union

from webapp.tokenizer.core.list_order.char_level import char_tokens
from webapp.tokenizer.formats.playground import from_playground
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.pretokenized import pretokenized_encode
from webapp.tokenizer.training.corpus import CorpusTraining
from webapp.tokenizer.training.words import training_vocab


class _TrainedBytes:
    def as_tokenizer(self, result: CorpusTraining, scheme: str) -> LoadedTokenizer:
        return from_playground(level="bytes", merges=result.merges, pretokenize=scheme)

    def count_tokens(self, result: CorpusTraining, text: str, scheme: str) -> int:
        return len(pretokenized_encode(text, result.merges, scheme))


class _TrainedChars:
    def as_tokenizer(self, result: CorpusTraining, scheme: str) -> LoadedTokenizer:
        pairs = [(str(a), str(b)) for a, b in result.pairs]
        vocab = training_vocab(result.alphabet, pairs)  # each distinct character is a "word"
        return from_playground(level="chars", merges=pairs, vocab=vocab)

    def count_tokens(self, result: CorpusTraining, text: str, scheme: str) -> int:
        pairs = [list(p) for p in result.pairs]
        return len(char_tokens(text, pairs)) if pairs else len(text)


_BY_LEVEL: dict[str, Union[_TrainedBytes, _TrainedChars]] = {"bytes": _TrainedBytes(), "chars": _TrainedChars()}


def trained_tokenizer(result: CorpusTraining, scheme: str) -> LoadedTokenizer:
    """The learned merges as a tokenizer (byte level: split by `scheme`; character level: the characters
    seen and the merged strings as its vocab)."""
    return _BY_LEVEL[result.level].as_tokenizer(result, scheme)


def count_tokens(result: CorpusTraining, text: str, scheme: str) -> int:
    """Tokens of `text` with the learned merges, as the Bytes / Characters page would encode it."""
    return _BY_LEVEL[result.level].count_tokens(result, text, scheme) if text else 0


__all__ = ["count_tokens", "trained_tokenizer"]
