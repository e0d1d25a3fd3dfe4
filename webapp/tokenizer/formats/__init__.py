"""Real tokenizer files in and out: Hugging Face, vocab.json + merges.txt, tiktoken, minbpe, playground JSON.

Import turns a file into a `LoadedTokenizer`; one module per format, plus
detection, dispatch and the stored form (map: docs/architecture.md). This
module only re-exports the public names, each imported on first use, so
callers write `formats.import_tokenizer(...)`. What the package does not do:
encode, Flask or HTTP. Every problem is a `TokenizerError` with `field="file"`
(or "merges" / "vocab") and a location (line, rule, key).
"""

from typing import TYPE_CHECKING

from webapp.tokenizer.lazy import lazy_exports

if TYPE_CHECKING:  # (for type checkers: the same names, imported eagerly)
    from webapp.tokenizer.formats.building import build_byte_level
    from webapp.tokenizer.formats.detect import detect_format
    from webapp.tokenizer.formats.dispatch import (
        EXPORT_FORMATS,
        FORMAT_ALIASES,
        FORMATS,
        canonical_format,
        export_tokenizer,
        import_tokenizer,
    )
    from webapp.tokenizer.formats.export_checks import char_merges_to_bytes
    from webapp.tokenizer.formats.hf_json import export_hf, parse_hf_tokenizer_json
    from webapp.tokenizer.formats.minbpe import export_minbpe, parse_minbpe
    from webapp.tokenizer.formats.playground import (
        PLAYGROUND_FORMAT_NAME,
        export_playground_json,
        from_playground,
        parse_playground_json,
        with_pretokenize,
    )
    from webapp.tokenizer.formats.sentencepiece import parse_sentencepiece
    from webapp.tokenizer.formats.stored import STORED_VERSION, dumps_stored, loads_stored
    from webapp.tokenizer.formats.tekken import parse_tekken
    from webapp.tokenizer.formats.tiktoken_ranks import export_tiktoken, parse_tiktoken, recover_rank_merges
    from webapp.tokenizer.formats.vocab_merges import parse_vocab_merges
    from webapp.tokenizer.core.alphabet import BYTE_ALPHABET, bytes_to_token, token_to_bytes
    from webapp.tokenizer.loaded import LoadedTokenizer


#: Every exported name -> (the module that defines it, its name there). A name is imported on first
#: use (PEP 562 `__getattr__` below), so that reading one format (or the presets'
#: stored forms) does not import every reader, the chat templates and their template engine.
_EXPORTS: dict[str, tuple[str, str]] = {
    "build_byte_level": ("webapp.tokenizer.formats.building", "build_byte_level"),
    "detect_format": ("webapp.tokenizer.formats.detect", "detect_format"),
    "EXPORT_FORMATS": ("webapp.tokenizer.formats.dispatch", "EXPORT_FORMATS"),
    "FORMAT_ALIASES": ("webapp.tokenizer.formats.dispatch", "FORMAT_ALIASES"),
    "FORMATS": ("webapp.tokenizer.formats.dispatch", "FORMATS"),
    "canonical_format": ("webapp.tokenizer.formats.dispatch", "canonical_format"),
    "export_tokenizer": ("webapp.tokenizer.formats.dispatch", "export_tokenizer"),
    "import_tokenizer": ("webapp.tokenizer.formats.dispatch", "import_tokenizer"),
    "char_merges_to_bytes": ("webapp.tokenizer.formats.export_checks", "char_merges_to_bytes"),
    "export_hf": ("webapp.tokenizer.formats.hf_json", "export_hf"),
    "parse_hf_tokenizer_json": ("webapp.tokenizer.formats.hf_json", "parse_hf_tokenizer_json"),
    "export_minbpe": ("webapp.tokenizer.formats.minbpe", "export_minbpe"),
    "parse_minbpe": ("webapp.tokenizer.formats.minbpe", "parse_minbpe"),
    "PLAYGROUND_FORMAT_NAME": ("webapp.tokenizer.formats.playground", "PLAYGROUND_FORMAT_NAME"),
    "export_playground_json": ("webapp.tokenizer.formats.playground", "export_playground_json"),
    "from_playground": ("webapp.tokenizer.formats.playground", "from_playground"),
    "parse_playground_json": ("webapp.tokenizer.formats.playground", "parse_playground_json"),
    "with_pretokenize": ("webapp.tokenizer.formats.playground", "with_pretokenize"),
    "parse_sentencepiece": ("webapp.tokenizer.formats.sentencepiece", "parse_sentencepiece"),
    "parse_tekken": ("webapp.tokenizer.formats.tekken", "parse_tekken"),
    "STORED_VERSION": ("webapp.tokenizer.formats.stored", "STORED_VERSION"),
    "dumps_stored": ("webapp.tokenizer.formats.stored", "dumps_stored"),
    "loads_stored": ("webapp.tokenizer.formats.stored", "loads_stored"),
    "export_tiktoken": ("webapp.tokenizer.formats.tiktoken_ranks", "export_tiktoken"),
    "parse_tiktoken": ("webapp.tokenizer.formats.tiktoken_ranks", "parse_tiktoken"),
    "recover_rank_merges": ("webapp.tokenizer.formats.tiktoken_ranks", "recover_rank_merges"),
    "parse_vocab_merges": ("webapp.tokenizer.formats.vocab_merges", "parse_vocab_merges"),
    "BYTE_ALPHABET": ("webapp.tokenizer.core.alphabet", "BYTE_ALPHABET"),
    "bytes_to_token": ("webapp.tokenizer.core.alphabet", "bytes_to_token"),
    "token_to_bytes": ("webapp.tokenizer.core.alphabet", "token_to_bytes"),
    "LoadedTokenizer": ("webapp.tokenizer.loaded", "LoadedTokenizer"),
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


__all__ = [
    "BYTE_ALPHABET", "EXPORT_FORMATS", "FORMAT_ALIASES", "FORMATS", "LoadedTokenizer", "PLAYGROUND_FORMAT_NAME",
    "STORED_VERSION", "build_byte_level", "bytes_to_token", "canonical_format", "char_merges_to_bytes",
    "detect_format", "dumps_stored", "export_hf", "export_minbpe", "export_playground_json", "export_tiktoken",
    "export_tokenizer", "from_playground", "import_tokenizer", "loads_stored", "parse_hf_tokenizer_json",
    "parse_minbpe", "parse_playground_json", "parse_sentencepiece", "parse_tekken", "parse_tiktoken", "parse_vocab_merges", "recover_rank_merges",
    "token_to_bytes", "with_pretokenize",
]
