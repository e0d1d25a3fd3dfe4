"""The one place where request data becomes engine input.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator, Mapping

from flask import current_app

from webapp import tokenizer as tk
from webapp.tokenizer import SCHEMES, TokenizerError, TraceLimits
from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer import validation
from webapp.tokenizer.chat.templates import ChatLimits, validate_messages, validate_tools
from webapp.tokenizer.core.list_order.byte_level import compiled_from_key
from webapp.tokenizer.errors import json_type
from webapp.tokenizer.textformats import (
    parse_json,
    parse_byte_merges,
    parse_byte_vocab,
    parse_char_merges,
    parse_char_vocab,
    parse_ids,
    parse_num_merges,
    parse_words,
    plain_rule_lines,
)
from webapp.tokenizer.core.token_sizes import SizeLimits

PRETOKENIZE_SCHEMES = SCHEMES


@dataclass(frozen=True)
class Limits:
    """Input limits and render caps, read from the app config."""

    text_chars: int = 1_000_000
    rules: int = 300_000
    vocab: int = 300_000
    file_rules: int = 600_000  # an opened tokenizer file's merges (gemma3 has 514,906); typed merges: `rules`
    ids: int = 1_000_000
    decode_bytes: int = 8 * 1024 * 1024  # what decoding may give, checked before joining (issue 44, row 5)
    words: int = 500_000
    num_merges: int = 50_000
    render_max_tokens: int = 250  # spans per page (about a screenful: issue #20); all ids stay in the Ids view
    render_max_ids: int = 20_000  # ids in the Ids view's box; all of them in its download
    trace_max_steps: int = 200
    trace_max_sequence: int = 400
    token_bytes: int = 65_536
    vocab_bytes: int = 8 * 1024 * 1024
    # Corpus training (webapp.web.corpus.routes): uploaded bytes in total, files, pasted text, distinct pre-tokens.
    corpus_bytes: int = 256 * 1024 * 1024
    corpus_files: int = 20
    corpus_paste_bytes: int = 16 * 1024 * 1024
    corpus_distinct: int = 1_000_000
    corpus_held_out_chars: int = 1_000_000
    # Chat templates (webapp.tokenizer.chat.templates, docs/chat.md): messages, template size, rendered size, render time.
    chat_messages: int = 1_000
    chat_template_chars: int = 100_000
    chat_rendered_chars: int = 1_000_000
    chat_seconds: float = 2.0
    chat_built_chars: int = 16_000_000
    chat_memory_mb: int = 256
    chat_tools: int = 128

    @property
    def sizes(self) -> SizeLimits:
        """The bounds on the bytes a merge list's tokens stand for."""
        return SizeLimits(token_bytes=self.token_bytes, vocab_bytes=self.vocab_bytes)

    @property
    def chat(self) -> ChatLimits:
        """The bounds on a conversation and on rendering its template (message text counts as text)."""
        return ChatLimits(template_chars=self.chat_template_chars, rendered_chars=self.chat_rendered_chars,
                          seconds=self.chat_seconds, messages=self.chat_messages, message_chars=self.text_chars,
                          built_chars=self.chat_built_chars, memory_mb=self.chat_memory_mb, tools=self.chat_tools)

    def trace(self, max_tokens: int, *, with_steps: bool) -> TraceLimits:
        """What a page's trace records: `max_tokens` token spans (the page's window), sequences up to
        `trace_max_sequence`, and `trace_max_steps` steps only when the Trace view asks for them."""
        return TraceLimits(max_steps=self.trace_max_steps if with_steps else 0, max_tokens=max_tokens,
                           max_sequence=self.trace_max_sequence)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "Limits":
        defaults = cls()
        return cls(
            text_chars=int(config.get("LIMIT_TEXT_CHARS", defaults.text_chars)),
            rules=int(config.get("LIMIT_RULES", defaults.rules)),
            file_rules=int(config.get("LIMIT_FILE_RULES", defaults.file_rules)),
            vocab=int(config.get("LIMIT_VOCAB", defaults.vocab)),
            ids=int(config.get("LIMIT_IDS", defaults.ids)),
            decode_bytes=int(config.get("LIMIT_DECODE_BYTES", defaults.decode_bytes)),
            words=int(config.get("LIMIT_WORDS", defaults.words)),
            num_merges=int(config.get("LIMIT_NUM_MERGES", defaults.num_merges)),
            render_max_tokens=int(config.get("RENDER_MAX_TOKENS", defaults.render_max_tokens)),
            render_max_ids=int(config.get("RENDER_MAX_IDS", defaults.render_max_ids)),
            trace_max_steps=int(config.get("TRACE_MAX_STEPS", defaults.trace_max_steps)),
            trace_max_sequence=int(config.get("TRACE_MAX_SEQUENCE", defaults.trace_max_sequence)),
            token_bytes=int(config.get("LIMIT_TOKEN_BYTES", defaults.token_bytes)),
            vocab_bytes=int(config.get("LIMIT_VOCAB_BYTES", defaults.vocab_bytes)),
            corpus_bytes=int(config.get("LIMIT_CORPUS_BYTES", defaults.corpus_bytes)),
            corpus_files=int(config.get("LIMIT_CORPUS_FILES", defaults.corpus_files)),
            corpus_paste_bytes=int(config.get("LIMIT_CORPUS_PASTE_BYTES", defaults.corpus_paste_bytes)),
            corpus_distinct=int(config.get("LIMIT_CORPUS_DISTINCT", defaults.corpus_distinct)),
            corpus_held_out_chars=int(config.get("LIMIT_CORPUS_HELD_OUT_CHARS", defaults.corpus_held_out_chars)),
            chat_messages=int(config.get("LIMIT_CHAT_MESSAGES", defaults.chat_messages)),
            chat_template_chars=int(config.get("LIMIT_CHAT_TEMPLATE_CHARS", defaults.chat_template_chars)),
            chat_rendered_chars=int(config.get("LIMIT_CHAT_RENDERED_CHARS", defaults.chat_rendered_chars)),
            chat_seconds=float(config.get("LIMIT_CHAT_SECONDS", defaults.chat_seconds)),
            chat_built_chars=int(config.get("LIMIT_CHAT_BUILT_CHARS", defaults.chat_built_chars)),
            chat_memory_mb=int(config.get("LIMIT_CHAT_MEMORY_MB", defaults.chat_memory_mb)),
            chat_tools=int(config.get("LIMIT_CHAT_TOOLS", defaults.chat_tools)),
        )


def current_limits() -> Limits:
    """The limits of the running app."""
    return Limits.from_config(current_app.config)


def limits_as_params() -> dict[str, int]:
    """The running app's limits as JSON, stored with a job so it runs under the limits of its request."""
    return asdict(current_limits())


def limits_of(params: Mapping[str, Any]) -> Limits:
    """The limits a job was submitted with (the inverse of `limits_as_params`)."""
    return Limits(**params["limits"])


def over_limit(field: str, what: str, count: int, limit: int, config_key: str) -> TokenizerError:
    """The error for a field over its limit, naming the setting."""
    return TokenizerError(
        f"{field}: {count:,} {what} is over the limit of {limit:,} {what} (setting {config_key})",
        field=field,
        location={"limit": limit},
    )


def _check_len(field: str, value: Any, what: str, limit: int, config_key: str) -> None:
    # Only containers have a meaningful length here; wrong types are left for
    # the validators, which say what was expected.
    if isinstance(value, (list, tuple, dict, str)) and len(value) > limit:
        raise over_limit(field, what, len(value), limit, config_key)


def wrong_type(field: str, expected: str, value: Any) -> TokenizerError:
    """The error for a field of the wrong JSON type, saying what was expected."""
    return TokenizerError(f"{field}: expected {expected}, got {json_type(value)}", field=field)


def normalize_newlines(text: str) -> str:
    """Browsers send textarea line breaks as CRLF; the user typed one newline."""
    return text.replace("\r\n", "\n")


def _parsed(value: Any, parse: Callable[[str], Any], raw_limit: int, field: str, what: str, key: str) -> Any:
    """Typed text goes through the parser; JSON values pass as they are."""
    if isinstance(value, str):
        # A cheap bound before parsing: every item needs at least one character.
        if len(value) > raw_limit * 64 + 1024:
            raise over_limit(field, "characters of input", len(value), raw_limit * 64 + 1024, key)
        return parse(value)
    return value


# --- text -------------------------------------------------------------------


def read_text(value: Any, limits: Limits, *, form: bool = False) -> str:
    """The text to encode (any string, including empty)."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise wrong_type("text", "a string", value)
    if form:
        value = normalize_newlines(value)
    if len(value) > limits.text_chars:
        raise over_limit("text", "characters", len(value), limits.text_chars, "LIMIT_TEXT_CHARS")
    return tk.validate_text(value)


# --- merges -----------------------------------------------------------------


#: A key that is a tuple of rules (ids over 64 bits) holds about this much per rule.
TUPLE_KEY_RULE_BYTES = 100


def _key_bytes(key: str, compiled_key: Any) -> int:
    """The bytes of a compiled list's key: its int64 triples (24 bytes a rule), or a tuple of rules."""
    return len(compiled_key) if isinstance(compiled_key, bytes) else len(compiled_key) * TUPLE_KEY_RULE_BYTES


#: The sha256 of the byte-level merges a request sent -> the compiled list's key
#: (byte_level.CompiledByteMerges.key), so typing in the text box re-parses and
#: re-validates nothing. Keys, not compiled lists: the compiled lists alive are
#: the ones byte_level's own cache bounds. 16 entries, 32 MiB of keys in all.
COMPILED_MERGES: BoundedCache[str, Any] = BoundedCache(16, 32 * 2**20, weigh=_key_bytes,
                                                       name="inputs.merges_keys")


def _content_key(value: Any) -> str:
    raw = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


@contextmanager
def _rule_lines(source: Any) -> Iterator[None]:
    """Add the line number to a "rule N" error when the rules were typed one per line."""
    try:
        yield
    except TokenizerError as exc:
        rule = exc.location.get("rule")
        lines = plain_rule_lines(source) if isinstance(source, str) and isinstance(rule, int) else None
        if not lines or not isinstance(rule, int) or not 1 <= rule <= len(lines) or "line" in exc.location:
            raise
        line = lines[rule - 1]
        raise TokenizerError(
            f"{exc.message} (line {line})", field=exc.field, location={**exc.location, "line": line, "column": 1}
        ) from None


def read_byte_merges(value: Any, limits: Limits) -> Any:
    """Byte-level merges, compiled for reuse (cached by content)."""
    if value is None:
        value = ""
    key = None
    try:
        key = _content_key(value)
    except (TypeError, ValueError):
        pass  # not JSON-serialisable: validation below says why
    if key is not None:
        hit = COMPILED_MERGES.get(key)
        if hit is not None:
            return compiled_from_key(hit)
    merges = _parsed(value, parse_byte_merges, limits.rules, "merges", "rules", "LIMIT_RULES")
    if not isinstance(merges, list):
        raise wrong_type("merges", "a list of rules [left, right, new]", merges)
    _check_len("merges", merges, "rules", limits.rules, "LIMIT_RULES")
    with _rule_lines(value):
        compiled = tk.compile_byte_merges(merges)
    if key is not None and compiled.key is not None:
        COMPILED_MERGES.put(key, compiled.key)
    return compiled


def read_char_merges(value: Any, limits: Limits) -> tuple[tuple[str, str], ...]:
    """Character-level merges: pairs of strings."""
    if value is None:
        value = ""
    merges = _parsed(value, parse_char_merges, limits.rules, "merges", "rules", "LIMIT_RULES")
    if not isinstance(merges, list):
        raise wrong_type("merges", 'a list of rules ["left", "right"]', merges)
    _check_len("merges", merges, "rules", limits.rules, "LIMIT_RULES")
    with _rule_lines(value):
        return validation.validate_char_merges(merges)


# --- vocabularies -----------------------------------------------------------


def read_byte_vocab(value: Any, limits: Limits) -> dict[int, bytes]:
    """Byte-level vocab {id: [bytes]}; empty means ids 0..255 only."""
    if value is None or (isinstance(value, str) and not value.strip()):
        value = {}
    vocab = _parsed(value, parse_byte_vocab, limits.vocab, "vocab", "entries", "LIMIT_VOCAB")
    if not isinstance(vocab, dict):
        raise wrong_type("vocab", 'an object {"id": [bytes]}', vocab)
    _check_len("vocab", vocab, "entries", limits.vocab, "LIMIT_VOCAB")
    return validation.validate_byte_vocab(vocab)


def read_char_vocab(value: Any, limits: Limits) -> dict[str, int]:
    """Character-level vocab {token: id}."""
    if value is None or (isinstance(value, str) and not value.strip()):
        value = {}
    vocab = _parsed(value, parse_char_vocab, limits.vocab, "vocab", "entries", "LIMIT_VOCAB")
    if not isinstance(vocab, dict):
        raise wrong_type("vocab", 'an object {"token": id}', vocab)
    _check_len("vocab", vocab, "entries", limits.vocab, "LIMIT_VOCAB")
    return validation.validate_char_vocab(vocab)


# --- ids, words, num_merges, options ----------------------------------------


def read_ids(value: Any, limits: Limits) -> tuple[int, ...]:
    """Token ids to decode."""
    if value is None:
        value = ""
    ids = _parsed(value, parse_ids, limits.ids, "ids", "ids", "LIMIT_IDS")
    if not isinstance(ids, list):
        raise wrong_type("ids", "a list of ids", ids)
    _check_len("ids", ids, "ids", limits.ids, "LIMIT_IDS")
    return validation.validate_ids(ids)


def read_messages(value: Any, limits: Limits, *, form: bool = False) -> tuple[dict[str, Any], ...]:
    """A conversation: a list of {"role", "content"} strings (a page's `chat` field: that list as JSON text).

    The count and the characters are checked against the limits before anything is rendered."""
    if form:
        if not isinstance(value, str):
            raise wrong_type("chat", "the messages as JSON text", value)
        if not value.strip():
            return ()
        if len(value) > 2 * limits.text_chars:
            raise over_limit("chat", "characters", len(value), 2 * limits.text_chars, "LIMIT_TEXT_CHARS")
        value = parse_json(value, "chat")
        return validate_messages(value, limits.chat, field="chat")
    return validate_messages(value, limits.chat)


def read_tools(value: Any, limits: Limits, *, form: bool = False,
               field: str | None = None) -> tuple[dict[str, Any], ...] | None:
    """The function specs a chat template is given; None: no tools (absent, null, or a page's empty
    tools box), which is not the same as `[]` for a template (transformers passes both as they are).

    `field` names them in errors: by default "tools" in the API and "chat_tools" (the Chat view's box)
    for a page. A page's field is that list as JSON text, refused over twice LIMIT_TEXT_CHARS before it
    is parsed (typed JSON is indented); the specs' compact JSON must then be within LIMIT_TEXT_CHARS."""
    if form:
        name = field or "chat_tools"
        if not isinstance(value, str):
            raise wrong_type(name, "the tools as JSON text", value)
        if not value.strip():
            return None
        if len(value) > 2 * limits.text_chars:
            raise over_limit(name, "characters", len(value), 2 * limits.text_chars, "LIMIT_TEXT_CHARS")
        return validate_tools(parse_json(value, name), limits.chat, field=name)
    return None if value is None else validate_tools(value, limits.chat, field=field or "tools")


MAX_COUNT_TOKENIZERS = 32


def read_tokenizer_refs(value: Any, field: str = "tokenizers") -> list[str]:
    """A list of preset names or opened tokenizer ids (at most MAX_COUNT_TOKENIZERS)."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise wrong_type(field, "a list of preset names or tokenizer ids", value)
    if len(value) > MAX_COUNT_TOKENIZERS:
        raise over_limit(field, "tokenizers", len(value), MAX_COUNT_TOKENIZERS, "MAX_COUNT_TOKENIZERS, fixed")
    return list(dict.fromkeys(value))


def read_flag(value: Any, field: str, default: bool) -> bool:
    """A JSON true / false (absent or null: the default)."""
    if value is None:
        return default
    if not isinstance(value, bool):
        raise wrong_type(field, "true or false", value)
    return value


def read_words(value: Any, limits: Limits, *, form: bool = False) -> tuple[str, ...]:
    """The training corpus: a list of words."""
    if value is None:
        value = ""
    if isinstance(value, str) and form:
        value = normalize_newlines(value)
    if isinstance(value, str) and len(value) > limits.text_chars:
        raise over_limit("words", "characters", len(value), limits.text_chars, "LIMIT_TEXT_CHARS")
    words = parse_words(value) if isinstance(value, str) else value
    if not isinstance(words, list):
        raise wrong_type("words", "a list of strings", words)
    _check_len("words", words, "words", limits.words, "LIMIT_WORDS")
    # A JSON list is capped by its characters in all, like the typed form.
    total = sum(len(word) for word in words if isinstance(word, str))
    if total > limits.text_chars:
        raise over_limit("words", "characters", total, limits.text_chars, "LIMIT_TEXT_CHARS")
    return validation.validate_words(words)


def read_num_merges(value: Any, limits: Limits) -> int:
    """How many merges to learn."""
    if value is None:
        value = ""
    number = parse_num_merges(value) if isinstance(value, str) else value
    if isinstance(number, int) and not isinstance(number, bool) and number > limits.num_merges:
        raise TokenizerError(
            f"num_merges: {number:,} is over the limit of {limits.num_merges:,} merges (setting LIMIT_NUM_MERGES)",
            field="num_merges",
            location={"limit": limits.num_merges},
        )
    return validation.validate_num_merges(number)


def read_pretokenize(value: Any) -> str:
    """The pre-tokenization scheme: none (the specified algorithm), gpt2 or cl100k."""
    if value is None or value == "":
        return "none"
    if not isinstance(value, str) or value not in PRETOKENIZE_SCHEMES:
        shown = (
            json.dumps(value[:81] if isinstance(value, str) else value)
            if isinstance(value, (str, int, float, bool)) or value is None
            else json_type(value)
        )
        shown = shown if len(shown) <= 80 else shown[:80] + "…"
        raise TokenizerError(
            f"pretokenize: expected one of {', '.join(PRETOKENIZE_SCHEMES)}, got {shown}",
            field="pretokenize",
        )
    return value


def read_allowed_special(value: Any) -> Any:
    """Which special tokens to recognise: "all", none ("none", "", null, false), or a list of them.

    The list is checked against the tokenizer's own special tokens by
    `webapp.tokenizer.allowed_set`, which names the item at fault.
    """
    if value is None or value is False or value in ("", "none"):
        return ()
    if value is True or value == "all":
        return "all"
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    shown = json.dumps(value) if isinstance(value, (str, int, float)) else json_type(value)
    raise TokenizerError(
        f'allowed_special: expected "all", "none" or a list of special-token strings, got {shown}',
        field="allowed_special",
    )


def collect(readers: Mapping[str, Callable[[], Any]]) -> tuple[dict[str, Any], dict[str, TokenizerError]]:
    """Run each field's reader; gather the values and every field's error at once.

    Pages show all problems together (one per field), not one at a time.
    """
    values: dict[str, Any] = {}
    errors: dict[str, TokenizerError] = {}
    for name, reader in readers.items():
        try:
            values[name] = reader()
        except TokenizerError as exc:
            errors[exc.field or name] = exc
    return values, errors
