"""minbpe's `.model` files: import and export.

"minbpe v1", the split pattern, the special tokens, then "idx1 idx2" per
merge, merged ids numbered 256, 257, ... What it does not do: split patterns
other than the playground's schemes (noted, read as "none").
"""

from __future__ import annotations


from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.common import ByteRule, file_text, bytes_of, file_error, shown_value
from webapp.tokenizer.formats.export_checks import check_well_formed_bytes, char_merges_to_bytes
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.patterns import PATTERNS, check_scheme, scheme_for_pattern
from webapp.tokenizer.core.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits, check_sizes


def _is_digits(text: str) -> bool:
    """ASCII digits of a sane length: int() refuses over 4,300 digits, and no real id has 19."""
    return 0 < len(text) <= 18 and text.isascii() and text.isdigit()


def parse_minbpe(content: str | bytes, *, limits: SizeLimits = DEFAULT_SIZE_LIMITS) -> LoadedTokenizer:
    """minbpe's `.model`: "minbpe v1", the split pattern, special tokens, then "idx1 idx2" per merge."""
    text = file_text(content, "model file")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "minbpe v1":
        raise file_error(f'a minbpe .model starts with "minbpe v1", got {shown_value(lines[0] if lines else "")}', line=1)
    if len(lines) < 3:
        raise file_error("the minbpe .model ends before its special-token count", line=len(lines))
    pattern = lines[1].rstrip("\r")
    count_text = lines[2].strip()
    if not _is_digits(count_text):
        raise file_error(f"line 3 of a minbpe .model should be the number of special tokens, got {shown_value(count_text)}", line=3)
    count = int(count_text)
    special: dict[str, int] = {}
    for offset in range(count):
        line_no = 4 + offset
        parts = lines[line_no - 1].split() if line_no - 1 < len(lines) else []
        if len(parts) != 2 or not _is_digits(parts[1]):
            raise file_error(f"line {line_no} should be a special token and its id", line=line_no)
        special[parts[0]] = int(parts[1])
    merges: list[ByteRule] = []
    for index, raw in enumerate(lines[3 + count :]):
        line_no = 4 + count + index
        if not raw.strip():
            continue
        parts = raw.split()
        new = 256 + len(merges)
        if len(parts) != 2 or not all(_is_digits(p) for p in parts):
            raise file_error(f"line {line_no} should be two token ids, got {shown_value(raw.strip())}", line=line_no)
        left, right = int(parts[0]), int(parts[1])
        for side in (left, right):
            if side >= new:
                raise TokenizerError(
                    f"merges: rule {len(merges) + 1} (line {line_no}) uses id {side}, which no earlier rule makes",
                    field="merges",
                    location={"rule": len(merges) + 1, "line": line_no},
                )
        merges.append((left, right, new))
    check_sizes(merges, limits, "first")  # lengths first: 40 lines can ask for 2^40 bytes
    vocab: dict[int, bytes] = {}
    for left, right, new in merges:
        vocab[new] = bytes_of(left, vocab) + bytes_of(right, vocab)
    notes: list[str] = []
    if pattern:
        scheme = scheme_for_pattern(pattern)
        if scheme is None:
            scheme = "none"
            notes.append("the model's split pattern is not gpt2 or cl100k; using none")
    else:
        scheme = "none"
    return LoadedTokenizer(
        level="bytes", merges=tuple(merges), vocab=vocab, source="minbpe",
        pretokenize=scheme, special_tokens=special, notes=tuple(notes),
    )


def _minbpe_rules(tok: LoadedTokenizer) -> list[ByteRule]:
    if tok.level == "chars":
        return char_merges_to_bytes(tok.merges)[0]
    check_well_formed_bytes(tok)  # refuse what a rank-based encoder would read differently
    # minbpe numbers merged tokens 256, 257, ... in rule order: renumber.
    renum: dict[int, int] = {b: b for b in range(256)}
    rules: list[ByteRule] = []
    for left, right, new in tok.merges:
        if new in renum and new >= 256:
            continue  # the same rule again adds nothing in rank-based encoding
        renum[new] = 256 + len(rules)
        rules.append((renum[left], renum[right], renum[new]))
    return rules


def export_minbpe(tok: LoadedTokenizer, pretokenize: str | None = None) -> str:
    """A minbpe-style `.model`: merges as "idx1 idx2" lines, merged ids 256, 257, ... in order."""
    scheme = check_scheme(pretokenize if pretokenize is not None else tok.pretokenize)
    lines = ["minbpe v1", PATTERNS.get(scheme, ""), str(len(tok.special_tokens))]
    for name, sid in tok.special_tokens.items():
        lines.append(f"{name} {sid}")
    for left, right, _new in _minbpe_rules(tok):
        lines.append(f"{left} {right}")
    return "\n".join(lines) + "\n"
