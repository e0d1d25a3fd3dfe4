"""The tokenizer package: exact byte-level and character-level BPE, decoding, training.

Pure Python (plus numpy), no Flask. The public API is what this module
exports; everything user-supplied is checked by `validation`, and every
problem is a `TokenizerError` (a `ValueError`).

- byte_level: encode, decode, encode_trace, compile_byte_merges, implied_byte_vocab
- char_level: bpe_encode_text, char_tokens, encode_text_trace, compile_char_merges
- training: bpe_merges, train_trace, training_vocab
- engine / tracing: the shared exact merge engine and the bounded trace builder
- validation: every validate_* function
- presets: the real OpenAI tokenizers (PRESETS, load_ranks, load_preset)
- real: get_tokenizer(name or opened file id) -> a tiktoken-like Tokenizer
- tiktoken_api: tiktoken's API (get_encoding, encoding_for_model, list_encoding_names, Encoding)

The contract is docs/algorithms.md; `reference` writes it down literally (the
test oracle, and the place to start reading). Each module's docstring lists
the decisions it makes where the contract is silent; docs/algorithms.md
collects them all.
"""

from .byte_decode import decode
from .byte_level import CompiledByteMerges, compile_byte_merges, encode, encode_trace, implied_byte_vocab
from .char_level import CompiledCharMerges, bpe_encode_text, char_tokens, compile_char_merges, encode_text_trace
from .errors import TokenizerError
from .presets import PRESET_NAMES, PRESETS, load_preset, load_ranks
from .real import Tokenizer, get_tokenizer
from .tiktoken_api import Encoding, encoding_for_model, encoding_name_for_model, get_encoding, list_encoding_names
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
    "PRESETS",
    "PRESET_NAMES",
    "Tokenizer",
    "get_tokenizer",
    "Encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load_preset",
    "load_ranks",
    "CompiledByteMerges",
    "CompiledCharMerges",
    "TokenizerError",
    "bpe_encode_text",
    "bpe_merges",
    "char_tokens",
    "compile_byte_merges",
    "compile_char_merges",
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
