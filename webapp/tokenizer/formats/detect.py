"""Which format a tokenizer file is in, from its content (the file name only breaks a tie).

What it does not do: parse the file (the format modules), or accept a lone
vocab.json or merges.txt (they are refused with a message naming the pair).

Details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import base64
import binascii

from webapp.tokenizer.formats.common import file_text, file_error, is_int
from webapp.tokenizer.formats.sentencepiece import looks_like_sentencepiece
from webapp.tokenizer.formats.tekken import looks_like_tekken
from webapp.tokenizer.textformats import JsonProblem, load_json


def detect_format(content: str | bytes, filename: str | None = None) -> str:
    """Which import format `content` is in: hf, playground, vocab-merges, tiktoken, minbpe, tekken, sentencepiece
    or gguf."""
    name = (filename or "").lower()
    if looks_like_gguf(content):  # (its magic, "GGUF", is no other format's start)
        return "gguf"
    if isinstance(content, bytes) and content and name.endswith(".gguf"):
        return "gguf"  # (named so without the magic: the GGUF reader says what the file starts with instead)
    if isinstance(content, bytes) and looks_like_sentencepiece(content):  # (a binary protobuf)
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            return "sentencepiece"
        if name.endswith(".model"):
            return "sentencepiece"
    text = file_text(content)
    stripped = text.lstrip()
    if stripped.startswith("minbpe"):
        return "minbpe"
    if _looks_wordpiece(text):
        raise file_error("this is a WordPiece vocab (vocab.txt); the playground opens BPE tokenizers")
    if stripped.startswith(("{", "[")):
        try:
            data = load_json(text)
        except JsonProblem:  # (the parser then says what is wrong)
            return "hf" if name.endswith("tokenizer.json") else "playground"
        if isinstance(data, dict):
            # (a vocab.json may well hold the tokens "model" or "merges": look at the values)
            if isinstance(data.get("model"), dict):
                return "hf"
            if looks_like_tekken(data):
                return "tekken"
            if isinstance(data.get("merges"), list):
                return "playground"
            if data and all(isinstance(k, str) and is_int(v) for k, v in data.items()):
                raise file_error(
                    "this looks like a vocab.json on its own; add its merges.txt to import the pair"
                )
        raise file_error(
            "this JSON is not a tokenizer file: expected a Hugging Face tokenizer.json "
            '(with "model"), a Tekken file (with "config" and "vocab") or a playground JSON file (with "merges")'
        )
    if stripped.startswith("#version") or name.endswith("merges.txt"):
        raise file_error("this looks like a merges.txt on its own; add its vocab.json to import the pair")
    first = next((line for line in text.splitlines() if line.strip()), "")
    parts = first.split()
    if len(parts) == 2 and parts[1].isascii() and parts[1].isdigit() and _looks_base64(parts[0]):
        return "tiktoken"
    raise file_error(
        "not a tokenizer file this playground knows: expected a Hugging Face tokenizer.json, "
        "vocab.json + merges.txt, a tiktoken rank file (base64 token and rank per line), "
        "a minbpe .model file, a SentencePiece .model file, a GGUF file or a playground JSON file"
    )


def looks_like_gguf(content: str | bytes) -> bool:
    """Bytes that start with GGUF's magic (the GGUF reader's module is not imported to say so)."""
    return isinstance(content, bytes) and content[:4] == b"GGUF"


def _looks_wordpiece(text: str) -> bool:
    """A vocab.txt of WordPiece: one token a line, BERT's markers and many "##" continuations."""
    lines = text[:1_000_000].splitlines()[:50_000]
    marked = sum(1 for line in lines if line.startswith("##"))
    return "[UNK]" in lines and (marked >= 10 or "[CLS]" in lines)


def _looks_base64(item: str) -> bool:
    try:
        base64.b64decode(item, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True
