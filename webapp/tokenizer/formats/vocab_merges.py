"""The GPT-2 style pair vocab.json + merges.txt: import only (export writes tokenizer.json).

What it does not do: read a tokenizer.json given as the vocab (refused with a
message), or guess a pre-tokenizer (byte-level pairs are GPT-2's).
"""

from __future__ import annotations

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.common import file_text, file_error, parse_json_file, shown_value
from webapp.tokenizer.formats.hf_strings import (
    byte_level_from_strings,
    char_level_from_strings,
    check_token_sizes,
    check_vocab,
    looks_byte_level,
    split_merge_line,
)
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.core.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits


def parse_vocab_merges(
    vocab_json: str | bytes, merges_txt: str | bytes, *, level: str = "auto",
    limits: SizeLimits = DEFAULT_SIZE_LIMITS,
) -> LoadedTokenizer:
    """The GPT-2 style pair: vocab.json {token: id} and merges.txt ("#version" header, "a b" lines);
    `limits.token_bytes` bounds each vocab entry."""
    vocab = parse_json_file(vocab_json, "vocab.json")
    if isinstance(vocab, dict) and isinstance(vocab.get("model"), dict):
        raise file_error("the vocab.json given is a whole tokenizer.json; import it on its own")
    vocab = check_vocab(vocab, "vocab.json")
    byte_level = looks_byte_level(vocab) if level == "auto" else level == "bytes"
    check_token_sizes(vocab, limits.token_bytes, byte_level=byte_level)
    text = file_text(merges_txt, "merges.txt")
    if text.lstrip().startswith("{") or text.lstrip().startswith("["):
        raise file_error("merges.txt holds JSON; expected one space-separated pair per line", line=1)
    pairs: list[tuple[str, str]] = []
    made: set[str] = set()
    for line_no, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line or (line_no == 1 and line.startswith("#version")):
            continue
        pair = split_merge_line(line, vocab, made)
        if pair is None:
            raise TokenizerError(
                f"merges: line {line_no} of merges.txt should be two tokens separated by one space, "
                f"got {shown_value(line)}",
                field="merges",
                location={"line": line_no},
            )
        pairs.append(pair)
        made.add(pair[0] + pair[1])
    if byte_level:
        return byte_level_from_strings(vocab, pairs, source="vocab-merges", pretokenize="gpt2", notes=[])
    return char_level_from_strings(vocab, pairs, source="vocab-merges", notes=[])
