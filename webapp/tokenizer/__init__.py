"""The tokenizer package: exact byte-level and character-level BPE, decoding, training.

Pure Python (plus numpy), no Flask. The public API is what this module
exports; everything user-supplied is checked by `validation`, and every
problem is a `TokenizerError` (a `ValueError`).
"""

from .byte_level import CompiledByteMerges, compile_byte_merges, decode, encode, encode_trace, implied_byte_vocab
from .char_level import bpe_encode_text, char_tokens, encode_text_trace
from .errors import TokenizerError
from .training import bpe_merges, train_trace, training_vocab
from .validation import (
    validate_byte_merges,
    validate_byte_vocab,
    validate_char_merges,
    validate_char_vocab,
    validate_ids,
    validate_num_merges,
    validate_text,
    validate_words,
)

__all__ = [
    "CompiledByteMerges",
    "TokenizerError",
    "bpe_encode_text",
    "bpe_merges",
    "char_tokens",
    "compile_byte_merges",
    "decode",
    "encode",
    "encode_text_trace",
    "encode_trace",
    "implied_byte_vocab",
    "train_trace",
    "training_vocab",
    "validate_byte_merges",
    "validate_byte_vocab",
    "validate_char_merges",
    "validate_char_vocab",
    "validate_ids",
    "validate_num_merges",
    "validate_text",
    "validate_words",
]
