"""The GPT-2 style pair vocab.json + merges.txt: import only (export writes tokenizer.json).

What it does not do: read a tokenizer.json given as the vocab (refused with a
message), or guess a pre-tokenizer (byte-level pairs are GPT-2's).
"""

from __future__ import annotations

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.common import _as_text, _file_error, _load_json, _show
from webapp.tokenizer.formats.hf_strings import (
    _byte_level_from_strings,
    _char_level_from_strings,
    _check_vocab,
    _looks_byte_level,
    _split_merge_line,
)
from webapp.tokenizer.loaded import LoadedTokenizer


def parse_vocab_merges(
    vocab_json: str | bytes, merges_txt: str | bytes, *, level: str = "auto"
) -> LoadedTokenizer:
    """The GPT-2 style pair: vocab.json {token: id} and merges.txt ("#version" header, "a b" lines)."""
    vocab = _load_json(vocab_json, "vocab.json")
    if isinstance(vocab, dict) and isinstance(vocab.get("model"), dict):
        raise _file_error("the vocab.json given is a whole tokenizer.json; import it on its own")
    vocab = _check_vocab(vocab, "vocab.json")
    text = _as_text(merges_txt, "merges.txt")
    if text.lstrip().startswith("{") or text.lstrip().startswith("["):
        raise _file_error("merges.txt holds JSON; expected one space-separated pair per line", line=1)
    pairs: list[tuple[str, str]] = []
    made: set[str] = set()
    for line_no, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line or (line_no == 1 and line.startswith("#version")):
            continue
        pair = _split_merge_line(line, vocab, made)
        if pair is None:
            raise TokenizerError(
                f"merges: line {line_no} of merges.txt should be two tokens separated by one space, "
                f"got {_show(line)}",
                field="merges",
                location={"line": line_no},
            )
        pairs.append(pair)
        made.add(pair[0] + pair[1])
    byte_level = _looks_byte_level(vocab) if level == "auto" else level == "bytes"
    if byte_level:
        return _byte_level_from_strings(vocab, pairs, source="vocab-merges", pretokenize="gpt2", notes=[])
    return _char_level_from_strings(vocab, pairs, source="vocab-merges", notes=[])
