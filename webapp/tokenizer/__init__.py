"""The tokenizer package: exact byte-level and character-level BPE, decoding, training, real tokenizer files.

Python on numpy and regex (Jinja2 for chat templates, protobuf and gguf for
two file formats); no Flask, no HTTP, no storage. This module exports the
main API, 59 names (`__all__`), each loaded on first use; everything else is
imported from the module that defines it. Every problem is a
`TokenizerError` (a `ValueError`). The contract is docs/algorithms.md,
written down literally in `reference`; which folder holds what, and the
import rules: docs/architecture.md.
"""


from typing import TYPE_CHECKING

from webapp.tokenizer.lazy import lazy_exports

if TYPE_CHECKING:  # (for type checkers: the same names, imported eagerly)
    from webapp.tokenizer.errors import TokenizerError
    from webapp.tokenizer.presets.openai import PresetMissing, set_cache_dir
    from webapp.tokenizer.reading.text import OutOfTime
    from webapp.tokenizer.core.list_order.byte_level import (
        CompiledByteMerges,
        compile_byte_merges,
        encode,
        implied_byte_vocab,
    )
    from webapp.tokenizer.core.list_order.byte_trace import encode_trace
    from webapp.tokenizer.core.byte_decode import decode
    from webapp.tokenizer.core.token_sizes import ImpliedVocab
    from webapp.tokenizer.core.list_order.char_level import (
        CompiledCharMerges,
        compile_char_merges,
        bpe_encode_text,
        encode_text_trace,
        char_tokens,
    )
    from webapp.tokenizer.traces import EncodeTrace, TraceLimits, TrainingTrace
    from webapp.tokenizer.validation import validate_byte_merges, validate_text
    from webapp.tokenizer.pretokenize.patterns import SCHEMES
    from webapp.tokenizer.pretokenize.pretokenized import (
        pretokenized_encode,
        pretokenized_encode_trace,
        split_text,
    )
    from webapp.tokenizer.training.words import bpe_merges, train_trace, training_vocab
    from webapp.tokenizer.training.corpus import train_counts
    from webapp.tokenizer.loaded import LoadedTokenizer
    from webapp.tokenizer.stages import Tokenizer, tokenizer_of, allowed_set
    from webapp.tokenizer.formats import (
        EXPORT_FORMATS,
        import_tokenizer,
        export_tokenizer,
        dumps_stored,
        loads_stored,
    )
    from webapp.tokenizer.presets.catalog import (
        PRESET_NAMES,
        get_preset,
        is_preset,
        is_installed,
        load_preset,
    )
    from webapp.tokenizer.api import (
        Encoding,
        encoding_for_model,
        encoding_name_for_model,
        get_encoding,
        get_tokenizer,
        list_encoding_names,
    )
    from webapp.tokenizer.chat.templates import ChatTemplate, preset_chat_template, render_chat
    from webapp.tokenizer.explain import explain_chars, explain_loaded, explain_merges
    from webapp.tokenizer.vocab.index import VocabIndex
    from webapp.tokenizer.languages.counting import count_languages
    from webapp.tokenizer.compare import compare_spans
    from webapp.tokenizer.textformats import load_json


#: Every exported name -> (the module that defines it, its name there). A name is imported on first
#: use (PEP 562 `__getattr__` below), so `from webapp.tokenizer import get_encoding` loads only what
#: tiktoken's API needs, not the training, chat, file-format and trace modules (docs/tiktoken.md).
_EXPORTS: dict[str, tuple[str, str]] = {
    "TokenizerError": ("webapp.tokenizer.errors", "TokenizerError"),
    "PresetMissing": ("webapp.tokenizer.presets.openai", "PresetMissing"),
    "OutOfTime": ("webapp.tokenizer.reading.text", "OutOfTime"),
    "CompiledByteMerges": ("webapp.tokenizer.core.list_order.byte_level", "CompiledByteMerges"),
    "compile_byte_merges": ("webapp.tokenizer.core.list_order.byte_level", "compile_byte_merges"),
    "encode": ("webapp.tokenizer.core.list_order.byte_level", "encode"),
    "encode_trace": ("webapp.tokenizer.core.list_order.byte_trace", "encode_trace"),
    "decode": ("webapp.tokenizer.core.byte_decode", "decode"),
    "implied_byte_vocab": ("webapp.tokenizer.core.list_order.byte_level", "implied_byte_vocab"),
    "ImpliedVocab": ("webapp.tokenizer.core.token_sizes", "ImpliedVocab"),
    "CompiledCharMerges": ("webapp.tokenizer.core.list_order.char_level", "CompiledCharMerges"),
    "compile_char_merges": ("webapp.tokenizer.core.list_order.char_level", "compile_char_merges"),
    "bpe_encode_text": ("webapp.tokenizer.core.list_order.char_level", "bpe_encode_text"),
    "encode_text_trace": ("webapp.tokenizer.core.list_order.char_level", "encode_text_trace"),
    "char_tokens": ("webapp.tokenizer.core.list_order.char_level", "char_tokens"),
    "EncodeTrace": ("webapp.tokenizer.traces", "EncodeTrace"),
    "TraceLimits": ("webapp.tokenizer.traces", "TraceLimits"),
    "TrainingTrace": ("webapp.tokenizer.traces", "TrainingTrace"),
    "validate_byte_merges": ("webapp.tokenizer.validation", "validate_byte_merges"),
    "validate_text": ("webapp.tokenizer.validation", "validate_text"),
    "SCHEMES": ("webapp.tokenizer.pretokenize.patterns", "SCHEMES"),
    "pretokenized_encode": ("webapp.tokenizer.pretokenize.pretokenized", "pretokenized_encode"),
    "pretokenized_encode_trace": ("webapp.tokenizer.pretokenize.pretokenized", "pretokenized_encode_trace"),
    "split_text": ("webapp.tokenizer.pretokenize.pretokenized", "split_text"),
    "bpe_merges": ("webapp.tokenizer.training.words", "bpe_merges"),
    "train_trace": ("webapp.tokenizer.training.words", "train_trace"),
    "training_vocab": ("webapp.tokenizer.training.words", "training_vocab"),
    "train_counts": ("webapp.tokenizer.training.corpus", "train_counts"),
    "LoadedTokenizer": ("webapp.tokenizer.loaded", "LoadedTokenizer"),
    "Tokenizer": ("webapp.tokenizer.stages", "Tokenizer"),
    "tokenizer_of": ("webapp.tokenizer.stages", "tokenizer_of"),
    "allowed_set": ("webapp.tokenizer.stages", "allowed_set"),
    "EXPORT_FORMATS": ("webapp.tokenizer.formats", "EXPORT_FORMATS"),
    "import_tokenizer": ("webapp.tokenizer.formats", "import_tokenizer"),
    "export_tokenizer": ("webapp.tokenizer.formats", "export_tokenizer"),
    "dumps_stored": ("webapp.tokenizer.formats", "dumps_stored"),
    "loads_stored": ("webapp.tokenizer.formats", "loads_stored"),
    "PRESET_NAMES": ("webapp.tokenizer.presets.catalog", "PRESET_NAMES"),
    "get_preset": ("webapp.tokenizer.presets.catalog", "get_preset"),
    "is_preset": ("webapp.tokenizer.presets.catalog", "is_preset"),
    "is_installed": ("webapp.tokenizer.presets.catalog", "is_installed"),
    "load_preset": ("webapp.tokenizer.presets.catalog", "load_preset"),
    "set_cache_dir": ("webapp.tokenizer.presets.openai", "set_cache_dir"),
    "get_tokenizer": ("webapp.tokenizer.api", "get_tokenizer"),
    "Encoding": ("webapp.tokenizer.api", "Encoding"),
    "encoding_for_model": ("webapp.tokenizer.api", "encoding_for_model"),
    "encoding_name_for_model": ("webapp.tokenizer.api", "encoding_name_for_model"),
    "get_encoding": ("webapp.tokenizer.api", "get_encoding"),
    "list_encoding_names": ("webapp.tokenizer.api", "list_encoding_names"),
    "ChatTemplate": ("webapp.tokenizer.chat.templates", "ChatTemplate"),
    "preset_chat_template": ("webapp.tokenizer.chat.templates", "preset_chat_template"),
    "render_chat": ("webapp.tokenizer.chat.templates", "render_chat"),
    "explain_chars": ("webapp.tokenizer.explain", "explain_chars"),
    "explain_loaded": ("webapp.tokenizer.explain", "explain_loaded"),
    "explain_merges": ("webapp.tokenizer.explain", "explain_merges"),
    "VocabIndex": ("webapp.tokenizer.vocab.index", "VocabIndex"),
    "count_languages": ("webapp.tokenizer.languages.counting", "count_languages"),
    "compare_spans": ("webapp.tokenizer.compare", "compare_spans"),
    "load_json": ("webapp.tokenizer.textformats", "load_json"),
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


__all__ = [
    # errors (a TokenizerError names the field and the place)
    "TokenizerError", "PresetMissing", "OutOfTime",
    # the engine: list order at the byte and the character level, decoding
    "CompiledByteMerges", "compile_byte_merges", "encode", "encode_trace", "decode", "implied_byte_vocab",
    "ImpliedVocab", "CompiledCharMerges", "compile_char_merges", "bpe_encode_text", "encode_text_trace",
    "char_tokens",
    # traces and their limits, validation
    "EncodeTrace", "TraceLimits", "TrainingTrace", "validate_byte_merges", "validate_text",
    # pre-tokenization
    "SCHEMES", "pretokenized_encode", "pretokenized_encode_trace", "split_text",
    # training
    "bpe_merges", "train_trace", "training_vocab", "train_counts",
    # one Tokenizer made of its stages
    "LoadedTokenizer", "Tokenizer", "tokenizer_of", "allowed_set",
    # tokenizer files
    "EXPORT_FORMATS", "import_tokenizer", "export_tokenizer", "dumps_stored", "loads_stored",
    # presets
    "PRESET_NAMES", "get_preset", "is_preset", "is_installed", "load_preset", "set_cache_dir",
    # the one handle, with tiktoken's Python API (docs/tiktoken.md)
    "get_tokenizer", "Encoding", "encoding_for_model", "encoding_name_for_model", "get_encoding", "list_encoding_names",
    # chat templates, explanations, the vocabulary, languages, comparing, the one JSON reader
    "ChatTemplate", "preset_chat_template", "render_chat", "explain_chars", "explain_loaded",
    "explain_merges", "VocabIndex", "count_languages", "compare_spans", "load_json",
]
