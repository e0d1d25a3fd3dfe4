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
- hf/: Hugging Face tokenizer.json pipelines (text, components, pipeline),
  GPT-2's byte alphabet, and encoding any loaded tokenizer in its file's ids
  (encoding)
- formats/: readers and writers of tokenizer files, and the stored form
- presets/: the real OpenAI tokenizers (openai), the open models'
  tokenizer.json files (open_models), every preset by name (catalog), the tiktoken-like
  get_tokenizer handle the pages use (real), tiktoken's own Python API over
  every preset and opened file (tiktoken_api: get_encoding,
  encoding_for_model, list_encoding_names, Encoding) and the set-up step
  (prepare)

Shared modules at the top, which any layer may import: errors, caches (the one
cache class), chat and chat_watchdog (chat templates: reading, sandboxed and
bounded rendering), traces (trace data shapes), validation, token_sizes, loaded
(`LoadedTokenizer`), textformats (the text boxes' formats), compare (token
boundaries of two tokenizations), processes (what forked workers need) and reference.

The contract is docs/algorithms.md; `reference` writes it down literally (the
test oracle, and the place to start reading). Each module's docstring lists
the decisions it makes where the contract is silent; docs/algorithms.md
collects them all.
"""


from webapp.tokenizer.chat import (
    DEFAULT_CHAT_LIMITS,
    PRESET_CHAT_PACKAGES,
    ChatLimits,
    ChatTemplate,
    chat_template_of,
    check_rendered,
    parse_chat_config,
    preset_chat_template,
    render_chat,
    validate_messages,
)
from webapp.tokenizer.chat_process import render_chat_isolated
from webapp.tokenizer.caches import BUDGET_BYTES_PER_UNIT, LIST_BUDGET, BoundedCache, estimated_bytes
from webapp.tokenizer.compare import SpanComparison, compare_spans, spans_from_lengths
from webapp.tokenizer.errors import TokenizerError, json_type, short_repr
from webapp.tokenizer.processes import die_with_parent, vm_size_bytes
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.textformats import (
    MAX_JSON_DEPTH,
    JsonProblem,
    load_json,
    parse_json,
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
from webapp.tokenizer.traces import EncodeTrace, MergeNode, PairCount, TrainingStep, TrainingTrace
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
from webapp.tokenizer.core.byte_level import (
    CompiledByteMerges,
    compile_byte_merges,
    compiled_from_key,
    encode,
    encode_trace,
    implied_byte_vocab,
)
from webapp.tokenizer.core.char_level import (
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
from webapp.tokenizer.hf.encoding import char_pipeline_trace, decode_loaded, encode_loaded, post_process, uses_pipeline
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
from webapp.tokenizer.presets.real import (
    Tokenizer,
    allowed_set,
    encode_special,
    encode_trace_special,
    get_tokenizer,
    register_resolver,
    split_special,
)
from webapp.tokenizer.presets.tiktoken_api import (
    Encoding,
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
    list_encoding_names,
)

__all__ = [
    # errors, caches and the shapes of traces (shared leaf modules)
    "TokenizerError", "json_type", "short_repr", "die_with_parent", "vm_size_bytes",
    "BUDGET_BYTES_PER_UNIT", "LIST_BUDGET", "BoundedCache", "estimated_bytes",
    "EncodeTrace", "MergeNode", "PairCount", "TrainingStep", "TrainingTrace",
    # the engine: byte level, character level, decoding
    "CompiledByteMerges", "compile_byte_merges", "compiled_from_key", "encode", "encode_trace", "implied_byte_vocab",
    "CompiledCharMerges", "bpe_encode_text", "char_tokens", "compile_char_merges", "encode_text_trace",
    "decode",
    # token sizes, comparing tokenizations, text boxes, validation
    "ImpliedVocab", "SizeLimits",
    "SpanComparison", "compare_spans", "spans_from_lengths",
    "MAX_JSON_DEPTH", "JsonProblem", "json_depth", "load_json", "parse_json", "format_byte_vocab", "format_char_merges", "format_char_vocab", "format_ids",
    "parse_byte_merges", "parse_byte_vocab", "parse_char_merges", "parse_char_vocab", "parse_ids", "parse_num_merges",
    "parse_words", "plain_rule_lines",
    "validate_byte_merges", "validate_byte_vocab", "validate_char_merges", "validate_char_vocab", "validate_ids",
    "validate_num_merges", "validate_text", "validate_words",
    # pre-tokenization
    "SCHEMES", "check_scheme", "pretokenized_encode", "pretokenized_encode_trace", "split_text",
    # training
    "bpe_merges", "train_trace", "training_vocab",
    "CORPUS_LEVELS", "CORPUS_SCHEMES", "CorpusTraining", "TrainingCancelled", "count_files", "count_streams", "train_counts",
    # loaded tokenizers: encoding in a file's ids
    "LoadedTokenizer", "char_pipeline_trace", "decode_loaded", "encode_loaded", "loaded_byte_vocab", "post_process",
    "uses_pipeline",
    # file formats
    "EXPORT_FORMATS", "canonical_format", "dumps_stored", "export_playground_json", "export_tokenizer",
    "from_playground", "import_tokenizer", "loads_stored", "with_pretokenize",
    # presets and the tiktoken-like handle
    "INSTALL_HINT", "PRESETS", "PRESET_NAMES", "PRESET_RULES", "VENDORS", "PresetMissing", "get_preset", "is_installed", "is_preparing", "is_preset",
    "load_compiled", "load_preset", "load_ranks", "set_cache_dir",
    "Tokenizer", "allowed_set", "encode_special", "encode_trace_special", "get_tokenizer", "register_resolver",
    "split_special",
    # chat templates (docs/chat.md)
    "DEFAULT_CHAT_LIMITS", "PRESET_CHAT_PACKAGES", "ChatLimits", "ChatTemplate", "chat_template_of", "check_rendered",
    "parse_chat_config", "preset_chat_template", "render_chat", "render_chat_isolated", "validate_messages",
    # tiktoken's Python API (docs/tiktoken.md)
    "Encoding", "encoding_for_model", "encoding_name_for_model", "get_encoding", "list_encoding_names",
]
