"""The tokenizer package: exact byte-level and character-level BPE, decoding, training.

Pure Python (plus numpy and regex), no Flask. The public API is what this
module exports, and it is the only entry for the web layer (webapp/*): every
name the web code needs is exported here, so it never imports a submodule.
Everything user-supplied is checked by `validation`, and every problem is a
`TokenizerError` (a `ValueError`).

One folder per layer; a layer imports only the layers before it (and the
shared modules at the top), never one after it, and nothing imports this
module from inside the package:

- core/: the engine - the exact ordered-rule merge engine, byte-level and
  character-level encode / trace / compile, decode, the numpy batch encoder,
  traces from merge events, precompiled lists
- pretokenize/: the published split patterns (patterns), fast exact splitting
  (chunks), the cached encoder of split text (textencode) and the public
  pretokenized_encode(_trace) / split_text (pretokenized)
- training/: learning merges from words (words) and from a corpus (corpus; shards: counting it on
  several cores)
- hf/: Hugging Face tokenizer.json pipelines (text; normalizers, pre_tokenizers,
  decoders, post_processors and the fields they read; pipeline) and GPT-2's
  byte alphabet
- stages/: one `Tokenizer` made of its stages, built once per loaded
  tokenizer by `tokenizer_of` (the one place that picks the kind): an
  added-token splitter (special), the text splitter (splitters: a file's
  pipeline, a playground scheme, or whole text), the model (models: list
  order in bytes or characters, library order) and the post-processor; every
  holder (get_tokenizer, Encoding, the opened store, a page's active
  tokenizer) keeps this one object
- formats/: readers and writers of tokenizer files, and the stored form; also
  textformats, the text boxes' formats (a leaf: it imports only errors)
- vocab/: a vocabulary explored (index: parents, children, merge trees, search; reach:
  unreachable tokens and their groups; stats: token lengths, Unicode scripts); beside
  presets/ at the top
- explain/: why each boundary of a text's tokens is there (every stage's part
  and a replay of each piece's merges; docs/explain.md)
- languages/: the udhr declarations extracted and counted under a tokenizer
  (docs/languages.md)
- presets/: the real OpenAI tokenizers (openai), the open models'
  tokenizer.json files (open_models), every preset by name (catalog), the tiktoken-like
  get_tokenizer handle the pages use (real), tiktoken's own Python API over
  every preset and opened file (tiktoken_api: get_encoding,
  encoding_for_model, list_encoding_names, Encoding) and the set-up step
  (prepare)
- chat/: chat templates (templates: reading and sandboxed, bounded rendering;
  bounds: the size predictions; watchdog: the time limit's thread; process:
  rendering an opened template in a forked child); shared like the modules
  below, used by formats/ (which keeps a template beside a file); it reads JSON with
  formats/textformats.py, a leaf

Shared modules at the top, which any layer may import: errors, caches (the one
cache class), traces (trace data shapes and `TraceLimits`), validation,
token_sizes, loaded (`LoadedTokenizer`), compare (token boundaries of two
tokenizations) and reference. What forked workers need (their address space,
dying with their parent) is `webapp.system.processes`, below this package.

The contract is docs/algorithms.md; `reference` writes it down literally (the
test oracle, and the place to start reading). Each module's docstring lists
the decisions it makes where the contract is silent; docs/algorithms.md
collects them all.
"""


from typing import TYPE_CHECKING

from webapp.tokenizer.lazy import lazy_exports

if TYPE_CHECKING:  # (for type checkers: the same names, imported eagerly)
    from webapp.tokenizer.chat.templates import (
        DEFAULT_CHAT_LIMITS,
        PRESET_CHAT_PACKAGES,
        ChatLimits,
        ChatTemplate,
        chat_template_of,
        parse_chat_config,
        preset_chat_template,
        render_chat,
        validate_messages,
    )
    from webapp.tokenizer.caches import BUDGET_BYTES_PER_UNIT, LIST_BUDGET, BoundedCache, estimated_bytes
    from webapp.tokenizer.compare import SpanComparison, compare_spans, spans_from_lengths
    from webapp.tokenizer.errors import TokenizerError, json_type, short_repr
    from webapp.tokenizer.loaded import LoadedTokenizer
    from webapp.tokenizer.formats.textformats import (
        MAX_JSON_DEPTH,
        format_byte_vocab,
        format_char_merges,
        format_char_vocab,
        format_ids,
        json_depth,
        parse_byte_merges,
        parse_byte_vocab,
        parse_char_merges,
        parse_char_vocab,
        parse_ids,
        parse_num_merges,
        parse_words,
        plain_rule_lines,
    )
    from webapp.tokenizer.token_sizes import ImpliedVocab, SizeLimits
    from webapp.tokenizer.traces import EncodeTrace, MergeNode, PairCount, TraceLimits, TrainingStep, TrainingTrace
    from webapp.tokenizer.validation import (
        validate_byte_merges,
        validate_byte_vocab,
        validate_char_merges,
        validate_char_vocab,
        validate_ids,
        validate_num_merges,
        validate_text,
        validate_words,
    )
    from webapp.tokenizer.core.byte_decode import decode
    from webapp.tokenizer.core.list_order.byte_level import (
        CompiledByteMerges,
        compile_byte_merges,
        compiled_from_key,
        encode,
        encode_trace,
        implied_byte_vocab,
    )
    from webapp.tokenizer.core.list_order.char_level import (
        CompiledCharMerges,
        bpe_encode_text,
        char_tokens,
        compile_char_merges,
        encode_text_trace,
    )
    from webapp.tokenizer.pretokenize.patterns import SCHEMES, check_scheme
    from webapp.tokenizer.pretokenize.pretokenized import pretokenized_encode, pretokenized_encode_trace, split_text
    from webapp.tokenizer.training.corpus import CorpusTraining, TrainingCancelled, count_streams, train_counts
    from webapp.tokenizer.training.shards import count_files
    from webapp.tokenizer.training.corpus import LEVELS as CORPUS_LEVELS
    from webapp.tokenizer.training.corpus import SCHEMES as CORPUS_SCHEMES
    from webapp.tokenizer.training.words import bpe_merges, train_trace, training_vocab
    from webapp.tokenizer.stages import Tokenizer, allowed_set, needs_compiled, split_special, tokenizer_of
    from webapp.tokenizer.hf.library_trace import loaded_byte_vocab
    from webapp.tokenizer.formats import (
        EXPORT_FORMATS,
        canonical_format,
        dumps_stored,
        export_playground_json,
        export_tokenizer,
        from_playground,
        import_tokenizer,
        loads_stored,
        with_pretokenize,
    )
    from webapp.tokenizer.presets.openai import INSTALL_HINT, PresetMissing, load_ranks, set_cache_dir
    from webapp.tokenizer.presets.catalog import (
        PRESET_NAMES,
        PRESET_RULES,
        PRESETS,
        VENDORS,
        get_preset,
        is_installed,
        is_preparing,
        is_preset,
        load_compiled,
        load_preset,
    )
    from webapp.tokenizer.presets.catalog import make_tables as make_preset_tables
    from webapp.tokenizer.presets.real import TokenizerHandle, get_tokenizer, register_resolver
    from webapp.tokenizer.presets.tiktoken_api import (
        Encoding,
        encoding_for_model,
        encoding_name_for_model,
        get_encoding,
        list_encoding_names,
    )


#: Every exported name -> (the module that defines it, its name there). A name is imported on first
#: use (PEP 562 `__getattr__` below), so `from webapp.tokenizer import get_encoding` loads only what
#: tiktoken's API needs, not the training, chat, file-format and trace modules (docs/tiktoken.md).
_EXPORTS: dict[str, tuple[str, str]] = {
    "DEFAULT_CHAT_LIMITS": ("webapp.tokenizer.chat.templates", "DEFAULT_CHAT_LIMITS"),
    "PRESET_CHAT_PACKAGES": ("webapp.tokenizer.chat.templates", "PRESET_CHAT_PACKAGES"),
    "ChatLimits": ("webapp.tokenizer.chat.templates", "ChatLimits"),
    "ChatTemplate": ("webapp.tokenizer.chat.templates", "ChatTemplate"),
    "chat_template_of": ("webapp.tokenizer.chat.templates", "chat_template_of"),
    "parse_chat_config": ("webapp.tokenizer.chat.templates", "parse_chat_config"),
    "preset_chat_template": ("webapp.tokenizer.chat.templates", "preset_chat_template"),
    "render_chat": ("webapp.tokenizer.chat.templates", "render_chat"),
    "validate_messages": ("webapp.tokenizer.chat.templates", "validate_messages"),
    "BUDGET_BYTES_PER_UNIT": ("webapp.tokenizer.caches", "BUDGET_BYTES_PER_UNIT"),
    "LIST_BUDGET": ("webapp.tokenizer.caches", "LIST_BUDGET"),
    "BoundedCache": ("webapp.tokenizer.caches", "BoundedCache"),
    "estimated_bytes": ("webapp.tokenizer.caches", "estimated_bytes"),
    "SpanComparison": ("webapp.tokenizer.compare", "SpanComparison"),
    "compare_spans": ("webapp.tokenizer.compare", "compare_spans"),
    "spans_from_lengths": ("webapp.tokenizer.compare", "spans_from_lengths"),
    "TokenizerError": ("webapp.tokenizer.errors", "TokenizerError"),
    "json_type": ("webapp.tokenizer.errors", "json_type"),
    "short_repr": ("webapp.tokenizer.errors", "short_repr"),
    "LoadedTokenizer": ("webapp.tokenizer.loaded", "LoadedTokenizer"),
    "MAX_JSON_DEPTH": ("webapp.tokenizer.formats.textformats", "MAX_JSON_DEPTH"),
    "format_byte_vocab": ("webapp.tokenizer.formats.textformats", "format_byte_vocab"),
    "format_char_merges": ("webapp.tokenizer.formats.textformats", "format_char_merges"),
    "format_char_vocab": ("webapp.tokenizer.formats.textformats", "format_char_vocab"),
    "format_ids": ("webapp.tokenizer.formats.textformats", "format_ids"),
    "json_depth": ("webapp.tokenizer.formats.textformats", "json_depth"),
    "parse_byte_merges": ("webapp.tokenizer.formats.textformats", "parse_byte_merges"),
    "parse_byte_vocab": ("webapp.tokenizer.formats.textformats", "parse_byte_vocab"),
    "parse_char_merges": ("webapp.tokenizer.formats.textformats", "parse_char_merges"),
    "parse_char_vocab": ("webapp.tokenizer.formats.textformats", "parse_char_vocab"),
    "parse_ids": ("webapp.tokenizer.formats.textformats", "parse_ids"),
    "parse_num_merges": ("webapp.tokenizer.formats.textformats", "parse_num_merges"),
    "parse_words": ("webapp.tokenizer.formats.textformats", "parse_words"),
    "plain_rule_lines": ("webapp.tokenizer.formats.textformats", "plain_rule_lines"),
    "ImpliedVocab": ("webapp.tokenizer.token_sizes", "ImpliedVocab"),
    "SizeLimits": ("webapp.tokenizer.token_sizes", "SizeLimits"),
    "EncodeTrace": ("webapp.tokenizer.traces", "EncodeTrace"),
    "TraceLimits": ("webapp.tokenizer.traces", "TraceLimits"),
    "MergeNode": ("webapp.tokenizer.traces", "MergeNode"),
    "PairCount": ("webapp.tokenizer.traces", "PairCount"),
    "TrainingStep": ("webapp.tokenizer.traces", "TrainingStep"),
    "TrainingTrace": ("webapp.tokenizer.traces", "TrainingTrace"),
    "validate_byte_merges": ("webapp.tokenizer.validation", "validate_byte_merges"),
    "validate_byte_vocab": ("webapp.tokenizer.validation", "validate_byte_vocab"),
    "validate_char_merges": ("webapp.tokenizer.validation", "validate_char_merges"),
    "validate_char_vocab": ("webapp.tokenizer.validation", "validate_char_vocab"),
    "validate_ids": ("webapp.tokenizer.validation", "validate_ids"),
    "validate_num_merges": ("webapp.tokenizer.validation", "validate_num_merges"),
    "validate_text": ("webapp.tokenizer.validation", "validate_text"),
    "validate_words": ("webapp.tokenizer.validation", "validate_words"),
    "decode": ("webapp.tokenizer.core.byte_decode", "decode"),
    "CompiledByteMerges": ("webapp.tokenizer.core.list_order.byte_level", "CompiledByteMerges"),
    "compile_byte_merges": ("webapp.tokenizer.core.list_order.byte_level", "compile_byte_merges"),
    "compiled_from_key": ("webapp.tokenizer.core.list_order.byte_level", "compiled_from_key"),
    "encode": ("webapp.tokenizer.core.list_order.byte_level", "encode"),
    "encode_trace": ("webapp.tokenizer.core.list_order.byte_level", "encode_trace"),
    "implied_byte_vocab": ("webapp.tokenizer.core.list_order.byte_level", "implied_byte_vocab"),
    "CompiledCharMerges": ("webapp.tokenizer.core.list_order.char_level", "CompiledCharMerges"),
    "bpe_encode_text": ("webapp.tokenizer.core.list_order.char_level", "bpe_encode_text"),
    "char_tokens": ("webapp.tokenizer.core.list_order.char_level", "char_tokens"),
    "compile_char_merges": ("webapp.tokenizer.core.list_order.char_level", "compile_char_merges"),
    "encode_text_trace": ("webapp.tokenizer.core.list_order.char_level", "encode_text_trace"),
    "SCHEMES": ("webapp.tokenizer.pretokenize.patterns", "SCHEMES"),
    "check_scheme": ("webapp.tokenizer.pretokenize.patterns", "check_scheme"),
    "pretokenized_encode": ("webapp.tokenizer.pretokenize.pretokenized", "pretokenized_encode"),
    "pretokenized_encode_trace": ("webapp.tokenizer.pretokenize.pretokenized", "pretokenized_encode_trace"),
    "split_text": ("webapp.tokenizer.pretokenize.pretokenized", "split_text"),
    "CorpusTraining": ("webapp.tokenizer.training.corpus", "CorpusTraining"),
    "TrainingCancelled": ("webapp.tokenizer.training.corpus", "TrainingCancelled"),
    "count_streams": ("webapp.tokenizer.training.corpus", "count_streams"),
    "train_counts": ("webapp.tokenizer.training.corpus", "train_counts"),
    "CORPUS_LEVELS": ("webapp.tokenizer.training.corpus", "LEVELS"),
    "CORPUS_SCHEMES": ("webapp.tokenizer.training.corpus", "SCHEMES"),
    "count_files": ("webapp.tokenizer.training.shards", "count_files"),
    "bpe_merges": ("webapp.tokenizer.training.words", "bpe_merges"),
    "train_trace": ("webapp.tokenizer.training.words", "train_trace"),
    "training_vocab": ("webapp.tokenizer.training.words", "training_vocab"),
    "Tokenizer": ("webapp.tokenizer.stages", "Tokenizer"),
    "tokenizer_of": ("webapp.tokenizer.stages", "tokenizer_of"),
    "needs_compiled": ("webapp.tokenizer.stages", "needs_compiled"),
    "allowed_set": ("webapp.tokenizer.stages", "allowed_set"),
    "split_special": ("webapp.tokenizer.stages", "split_special"),
    "loaded_byte_vocab": ("webapp.tokenizer.hf.library_trace", "loaded_byte_vocab"),
    "EXPORT_FORMATS": ("webapp.tokenizer.formats", "EXPORT_FORMATS"),
    "canonical_format": ("webapp.tokenizer.formats", "canonical_format"),
    "dumps_stored": ("webapp.tokenizer.formats", "dumps_stored"),
    "export_playground_json": ("webapp.tokenizer.formats", "export_playground_json"),
    "export_tokenizer": ("webapp.tokenizer.formats", "export_tokenizer"),
    "from_playground": ("webapp.tokenizer.formats", "from_playground"),
    "import_tokenizer": ("webapp.tokenizer.formats", "import_tokenizer"),
    "loads_stored": ("webapp.tokenizer.formats", "loads_stored"),
    "with_pretokenize": ("webapp.tokenizer.formats", "with_pretokenize"),
    "INSTALL_HINT": ("webapp.tokenizer.presets.openai", "INSTALL_HINT"),
    "PresetMissing": ("webapp.tokenizer.presets.openai", "PresetMissing"),
    "load_ranks": ("webapp.tokenizer.presets.openai", "load_ranks"),
    "set_cache_dir": ("webapp.tokenizer.presets.openai", "set_cache_dir"),
    "PRESET_NAMES": ("webapp.tokenizer.presets.catalog", "PRESET_NAMES"),
    "PRESET_RULES": ("webapp.tokenizer.presets.catalog", "PRESET_RULES"),
    "PRESETS": ("webapp.tokenizer.presets.catalog", "PRESETS"),
    "VENDORS": ("webapp.tokenizer.presets.catalog", "VENDORS"),
    "get_preset": ("webapp.tokenizer.presets.catalog", "get_preset"),
    "is_installed": ("webapp.tokenizer.presets.catalog", "is_installed"),
    "is_preparing": ("webapp.tokenizer.presets.catalog", "is_preparing"),
    "is_preset": ("webapp.tokenizer.presets.catalog", "is_preset"),
    "load_compiled": ("webapp.tokenizer.presets.catalog", "load_compiled"),
    "load_preset": ("webapp.tokenizer.presets.catalog", "load_preset"),
    "make_preset_tables": ("webapp.tokenizer.presets.catalog", "make_tables"),
    "TokenizerHandle": ("webapp.tokenizer.presets.real", "TokenizerHandle"),
    "get_tokenizer": ("webapp.tokenizer.presets.real", "get_tokenizer"),
    "register_resolver": ("webapp.tokenizer.presets.real", "register_resolver"),
    "Encoding": ("webapp.tokenizer.presets.tiktoken_api", "Encoding"),
    "encoding_for_model": ("webapp.tokenizer.presets.tiktoken_api", "encoding_for_model"),
    "encoding_name_for_model": ("webapp.tokenizer.presets.tiktoken_api", "encoding_name_for_model"),
    "get_encoding": ("webapp.tokenizer.presets.tiktoken_api", "get_encoding"),
    "list_encoding_names": ("webapp.tokenizer.presets.tiktoken_api", "list_encoding_names"),
}

# The exports the later features added (request time budget, offsets of typed text, boundary
# explanations, the vocabulary, the languages): imported on first use like the rest.
if TYPE_CHECKING:
    from webapp.tokenizer.hf.text import OutOfTime
    from webapp.tokenizer.hf.text import charged
    from webapp.tokenizer.hf.text import check_request_budget
    from webapp.tokenizer.hf.text import end_request_budget
    from webapp.tokenizer.hf.text import start_request_budget
    from webapp.tokenizer.vocab.index import VocabIndex
    from webapp.tokenizer.vocab.index import token_bytes_table
    from webapp.tokenizer.vocab.reach import GROUPS as VOCAB_GROUPS
    from webapp.tokenizer.vocab.reach import Reach
    from webapp.tokenizer.vocab.reach import encoder
    from webapp.tokenizer.vocab.reach import group_of
    from webapp.tokenizer.vocab.reach import self_ids
    from webapp.tokenizer.vocab.reach import unreachable
    from webapp.tokenizer.vocab.stats import PARTIAL as PARTIAL_SCRIPT
    from webapp.tokenizer.vocab.stats import length_histogram
    from webapp.tokenizer.vocab.stats import script_counts
    from webapp.tokenizer.explain import CAUSES as EXPLAIN_CAUSES
    from webapp.tokenizer.explain import explain_chars
    from webapp.tokenizer.explain import explain_loaded
    from webapp.tokenizer.explain import explain_merges
    from webapp.tokenizer.languages.counting import RESULT_VERSION as LANGUAGES_VERSION
    from webapp.tokenizer.languages.counting import catalog as language_catalog
    from webapp.tokenizer.languages.counting import count_languages
    from webapp.tokenizer.languages.declarations import ENGLISH as LANGUAGES_ENGLISH
    from webapp.tokenizer.languages.declarations import UDHR_VERSION
    from webapp.tokenizer.languages.declarations import Declaration
    from webapp.tokenizer.languages.declarations import by_code as declarations_by_code
    from webapp.tokenizer.languages.declarations import is_installed as udhr_installed
    from webapp.tokenizer.languages.declarations import load_all as load_declarations
    from webapp.tokenizer.languages.declarations import texts_of as language_texts
    from webapp.tokenizer.languages.stored import load_data as load_languages
    from webapp.tokenizer.languages.stored import read_stored as read_languages_stored
    from webapp.tokenizer.languages.stored import result_of as languages_result

    from webapp.tokenizer.chat.templates import check_rendered
    from webapp.tokenizer.chat.process import render_chat_isolated
    from webapp.tokenizer.formats.textformats import JsonProblem
    from webapp.tokenizer.formats.textformats import load_json
    from webapp.tokenizer.formats.textformats import parse_json

_EXPORTS.update({
    "check_rendered": ("webapp.tokenizer.chat.templates", "check_rendered"),
    "render_chat_isolated": ("webapp.tokenizer.chat.process", "render_chat_isolated"),
    "JsonProblem": ("webapp.tokenizer.formats.textformats", "JsonProblem"),
    "load_json": ("webapp.tokenizer.formats.textformats", "load_json"),
    "parse_json": ("webapp.tokenizer.formats.textformats", "parse_json"),
    "OutOfTime": ("webapp.tokenizer.hf.text", "OutOfTime"),
    "charged": ("webapp.tokenizer.hf.text", "charged"),
    "check_request_budget": ("webapp.tokenizer.hf.text", "check_request_budget"),
    "end_request_budget": ("webapp.tokenizer.hf.text", "end_request_budget"),
    "start_request_budget": ("webapp.tokenizer.hf.text", "start_request_budget"),
    "VocabIndex": ("webapp.tokenizer.vocab.index", "VocabIndex"),
    "token_bytes_table": ("webapp.tokenizer.vocab.index", "token_bytes_table"),
    "VOCAB_GROUPS": ("webapp.tokenizer.vocab.reach", "GROUPS"),
    "Reach": ("webapp.tokenizer.vocab.reach", "Reach"),
    "encoder": ("webapp.tokenizer.vocab.reach", "encoder"),
    "group_of": ("webapp.tokenizer.vocab.reach", "group_of"),
    "self_ids": ("webapp.tokenizer.vocab.reach", "self_ids"),
    "unreachable": ("webapp.tokenizer.vocab.reach", "unreachable"),
    "PARTIAL_SCRIPT": ("webapp.tokenizer.vocab.stats", "PARTIAL"),
    "length_histogram": ("webapp.tokenizer.vocab.stats", "length_histogram"),
    "script_counts": ("webapp.tokenizer.vocab.stats", "script_counts"),
    "EXPLAIN_CAUSES": ("webapp.tokenizer.explain", "CAUSES"),
    "explain_chars": ("webapp.tokenizer.explain", "explain_chars"),
    "explain_loaded": ("webapp.tokenizer.explain", "explain_loaded"),
    "explain_merges": ("webapp.tokenizer.explain", "explain_merges"),
    "LANGUAGES_VERSION": ("webapp.tokenizer.languages.counting", "RESULT_VERSION"),
    "language_catalog": ("webapp.tokenizer.languages.counting", "catalog"),
    "count_languages": ("webapp.tokenizer.languages.counting", "count_languages"),
    "LANGUAGES_ENGLISH": ("webapp.tokenizer.languages.declarations", "ENGLISH"),
    "UDHR_VERSION": ("webapp.tokenizer.languages.declarations", "UDHR_VERSION"),
    "Declaration": ("webapp.tokenizer.languages.declarations", "Declaration"),
    "declarations_by_code": ("webapp.tokenizer.languages.declarations", "by_code"),
    "udhr_installed": ("webapp.tokenizer.languages.declarations", "is_installed"),
    "load_declarations": ("webapp.tokenizer.languages.declarations", "load_all"),
    "language_texts": ("webapp.tokenizer.languages.declarations", "texts_of"),
    "load_languages": ("webapp.tokenizer.languages.stored", "load_data"),
    "read_languages_stored": ("webapp.tokenizer.languages.stored", "read_stored"),
    "languages_result": ("webapp.tokenizer.languages.stored", "result_of"),
})

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


__all__ = [
    # errors, caches and the shapes of traces (shared leaf modules)
    "TokenizerError", "json_type", "short_repr",
    "BUDGET_BYTES_PER_UNIT", "LIST_BUDGET", "BoundedCache", "estimated_bytes",
    "EncodeTrace", "MergeNode", "PairCount", "TraceLimits", "TrainingStep", "TrainingTrace",
    # the engine: byte level, character level, decoding
    "CompiledByteMerges", "compile_byte_merges", "compiled_from_key", "encode", "encode_trace", "implied_byte_vocab",
    "CompiledCharMerges", "bpe_encode_text", "char_tokens", "compile_char_merges", "encode_text_trace",
    "decode",
    # token sizes, comparing tokenizations, text boxes, validation
    "ImpliedVocab", "SizeLimits",
    "SpanComparison", "compare_spans", "spans_from_lengths",
    "MAX_JSON_DEPTH", "json_depth", "format_byte_vocab", "format_char_merges", "format_char_vocab", "format_ids",
    "parse_byte_merges", "parse_byte_vocab", "parse_char_merges", "parse_char_vocab", "parse_ids", "parse_num_merges",
    "parse_words", "plain_rule_lines",
    "validate_byte_merges", "validate_byte_vocab", "validate_char_merges", "validate_char_vocab", "validate_ids",
    "validate_num_merges", "validate_text", "validate_words",
    # pre-tokenization
    "SCHEMES", "check_scheme", "pretokenized_encode", "pretokenized_encode_trace", "split_text",
    # training
    "bpe_merges", "train_trace", "training_vocab",
    "CORPUS_LEVELS", "CORPUS_SCHEMES", "CorpusTraining", "TrainingCancelled", "count_files", "count_streams", "train_counts",
    # loaded tokenizers, and their stages (encoding in a file's ids)
    "LoadedTokenizer", "loaded_byte_vocab", "Tokenizer", "tokenizer_of", "needs_compiled", "allowed_set", "split_special",
    # file formats
    "EXPORT_FORMATS", "canonical_format", "dumps_stored", "export_playground_json", "export_tokenizer",
    "from_playground", "import_tokenizer", "loads_stored", "with_pretokenize",
    # presets and the tiktoken-like handle
    "INSTALL_HINT", "PRESETS", "PRESET_NAMES", "PRESET_RULES", "VENDORS", "PresetMissing", "get_preset", "is_installed", "is_preparing", "is_preset",
    "load_compiled", "load_preset", "load_ranks", "make_preset_tables", "set_cache_dir",
    "TokenizerHandle", "get_tokenizer", "register_resolver",
    # chat templates (docs/chat.md)
    "DEFAULT_CHAT_LIMITS", "PRESET_CHAT_PACKAGES", "ChatLimits", "ChatTemplate", "chat_template_of",
    "parse_chat_config", "preset_chat_template", "render_chat", "validate_messages",
    # tiktoken's Python API (docs/tiktoken.md)
    "Encoding", "encoding_for_model", "encoding_name_for_model", "get_encoding", "list_encoding_names",
    # added by later features: request budget, typed offsets, explanations, vocabulary, languages
    "OutOfTime", "charged", "check_request_budget", "end_request_budget", "start_request_budget", "VocabIndex", "token_bytes_table", "VOCAB_GROUPS", "Reach", "encoder", "group_of", "self_ids", "unreachable", "PARTIAL_SCRIPT", "length_histogram", "script_counts", "EXPLAIN_CAUSES", "explain_chars", "explain_loaded", "explain_merges", "LANGUAGES_VERSION", "language_catalog", "count_languages", "LANGUAGES_ENGLISH", "UDHR_VERSION", "Declaration", "declarations_by_code", "udhr_installed", "load_declarations", "language_texts", "load_languages", "read_languages_stored", "languages_result",
    # untrusted chat templates and the one JSON reader
    "check_rendered", "render_chat_isolated", "JsonProblem", "load_json", "parse_json",
]
