"""Hugging Face tokenizer.json: import (BPE models) and export.

What it does not do: BPE dropout, continuing_subword_prefix /
end_of_word_suffix (refused), or the pipeline parts hf/pipeline.py does not
have (a note says what the playground leaves out); WordPiece, Unigram or
WordLevel models, which are refused with a message.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import chain
from typing import Any, Mapping

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.common import bytes_of, file_error, is_int, parse_json_file, shown_value
from webapp.tokenizer.formats.export_checks import check_well_formed_bytes, check_well_formed_chars
from webapp.tokenizer.formats.hf_strings import byte_level_from_strings, char_level_from_strings, check_vocab
from webapp.tokenizer.formats.hf_strings import check_token_sizes
from webapp.tokenizer.formats.hf_strings import split_merge_line
from webapp.tokenizer.core.alphabet import BYTE_ALPHABET, bytes_to_token
from webapp.tokenizer.pretokenize.pre_tokenizers import maps_bytes
from webapp.tokenizer.models.library import read_model_options
from webapp.tokenizer.hf.pipeline import read_pipeline
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.core.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits
from webapp.tokenizer.pretokenize.patterns import PATTERNS, check_scheme, scheme_for_pattern


def _components(node: Any) -> list[dict[str, Any]]:
    """A pre-tokenizer / decoder / normalizer and, for a Sequence, its parts (flattened)."""
    if not isinstance(node, dict):
        return []
    out = [node]
    for key in ("pretokenizers", "decoders", "normalizers", "processors"):
        children = node.get(key)
        if children is not None and not isinstance(children, list):
            raise file_error(f'"{key}" should be a list, got {shown_value(children)}')
        for child in children or []:
            out.extend(_components(child))
    return out


def _hf_pretokenize(data: dict[str, Any]) -> tuple[str, list[str]]:
    """The playground scheme closest to the file's pre-tokenizer, and notes."""
    notes: list[str] = []
    parts = _components(data.get("pre_tokenizer"))
    scheme = "none"
    known = True
    for part in parts:
        kind = part.get("type")
        if kind == "Sequence":
            continue
        if kind == "ByteLevel":
            if part.get("add_prefix_space"):
                notes.append("the file adds a space before the text (add_prefix_space); the playground does not")
            if part.get("use_regex", True):
                scheme = "gpt2"
        elif kind == "Split":
            pattern = part.get("pattern") or {}
            regex_text = pattern.get("Regex") if isinstance(pattern, dict) else None
            found = scheme_for_pattern(regex_text) if isinstance(regex_text, str) else None
            if found is None:
                known = False
            else:
                scheme = found
        else:
            known = False
    if not known:
        notes.append(
            "the file's pre-tokenizer is not one the playground has (none, gpt2, cl100k, o200k); "
            f"using {scheme!r}, so ids may differ from the library's on some texts"
        )
    return scheme, notes


def _is_byte_level(data: dict[str, Any], vocab: Mapping[str, Any]) -> bool:
    for part in _components(data.get("pre_tokenizer")) + _components(data.get("decoder")):
        if part.get("type") == "ByteLevel":
            return True
    return False


def _hf_merge_pairs(merges: Any, what: str, vocab: Mapping[str, int]) -> list[tuple[str, str]]:
    """Both merge forms: ["a b", ...] and [["a", "b"], ...]; and pairs already split, (a, b) tuples of
    strings (what formats/gguf_tokenizer.py gives: JSON makes no tuples), taken as they are."""
    if not isinstance(merges, list):
        raise TokenizerError(
            f"merges: {what} should be a list, got {type(merges).__name__}", field="merges"
        )
    # (checked by C-level loops: the types of the items, their lengths, the types of their sides)
    if merges and {*map(type, merges)} == {tuple} and {*map(len, merges)} == {2}:
        split: list[tuple[str, str]] = merges
        if {*map(type, chain.from_iterable(split))} == {str}:
            return split
    pairs: list[tuple[str, str]] = []
    made: set[str] = set()
    for number, item in enumerate(merges, start=1):
        if isinstance(item, str):
            pair = split_merge_line(item, vocab, made)
            if pair is None:
                raise TokenizerError(
                    f'merges: rule {number} should be two tokens separated by one space, got {shown_value(item)}',
                    field="merges",
                    location={"rule": number},
                )
            pairs.append(pair)
            made.add(pair[0] + pair[1])
        elif (
            isinstance(item, list)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], str)
        ):
            pairs.append((item[0], item[1]))
            made.add(item[0] + item[1])
        else:
            raise TokenizerError(
                f'merges: rule {number} should be "left right" or ["left", "right"], got {shown_value(item)}',
                field="merges",
                location={"rule": number},
            )
    return pairs


def parse_hf_tokenizer_json(content: str | bytes, limits: SizeLimits = DEFAULT_SIZE_LIMITS) -> LoadedTokenizer:
    """A Hugging Face tokenizer.json with a BPE model (`limits.token_bytes`: each vocab entry's size); its added
    tokens get the ids the `tokenizers` library gives them when it loads the file (`library_added_ids`)."""
    data = parse_json_file(content, "tokenizer.json")
    moved: list[str] = []
    if isinstance(data, dict) and isinstance(data.get("model"), dict) and isinstance(data.get("added_tokens"), list) \
            and isinstance(data["model"].get("vocab"), dict):
        data["added_tokens"], moved = library_added_ids(data["added_tokens"], data["model"]["vocab"])
    loaded = tokenizer_from_document(data, limits)
    if not moved:
        return loaded
    note = (f"added tokens get the ids the tokenizers library gives them when it loads the file, not the "
            f"file's: {', '.join(moved[:3])}" + (f" and {len(moved) - 3:,} more" if len(moved) > 3 else ""))
    return replace(loaded, notes=(*loaded.notes, note))


def library_added_ids(added: list[Any], vocab: Mapping[str, Any]) -> tuple[list[Any], list[str]]:
    """The added tokens as `tokenizers` numbers them on load (and which moved): in the file's order, a token
    whose text is in the model's vocab takes that id; another one takes the vocab's size, or one more than
    the largest id given so far once that is past it. The file's own id is only checked (and warned) there."""
    given: dict[str, int] = {}
    out: list[Any] = []
    moved: list[str] = []
    for item in added:
        if not (isinstance(item, dict) and isinstance(item.get("content"), str) and is_int(item.get("id"))):
            out.append(item)  # (the pipeline reader names what is wrong with it)
            continue
        content = item["content"]
        if content in given:
            new_id = given[content]
        elif is_int(vocab.get(content)):
            new_id = vocab[content]
        else:
            largest = max(given.values(), default=None)
            new_id = largest + 1 if largest is not None and (largest >= len(vocab) or not vocab) else len(vocab)
        given[content] = new_id
        if new_id != item["id"]:
            moved.append(f"{content[:40]!r} {item['id']} -> {new_id}")
        out.append({**item, "id": new_id})
    return out, moved


def tokenizer_from_document(data: Any, limits: SizeLimits = DEFAULT_SIZE_LIMITS) -> LoadedTokenizer:
    """A parsed tokenizer.json (what `parse_hf_tokenizer_json` reads; formats/gguf_tokenizer.py builds one)."""
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise file_error('this is not a Hugging Face tokenizer.json: there is no "model" object')
    model = data["model"]
    kind = model.get("type")
    if kind is not None and kind != "BPE":
        raise file_error(
            f"this tokenizer.json holds a {kind} model; the playground can only represent BPE "
            "(ordered merge rules), not WordPiece, Unigram or WordLevel"
        )
    if "vocab" not in model or "merges" not in model:
        raise file_error('this tokenizer.json\'s model has no "vocab" and "merges", so it is not BPE')
    vocab = check_vocab(model["vocab"], "model.vocab")
    pairs = _hf_merge_pairs(model["merges"], "model.merges", vocab)
    added = data.get("added_tokens")
    if added is not None and not isinstance(added, list):
        raise file_error(f'"added_tokens" should be a list, got {shown_value(added)}')
    special = {
        t["content"]: t["id"]
        for t in added or []
        if isinstance(t, dict) and isinstance(t.get("content"), str) and is_int(t.get("id"))
    }
    scheme, _scheme_notes = _hf_pretokenize(data)
    pipeline, notes = read_pipeline(data)  # applied by the stages (stages/); notes name what is left out
    model_options, model_notes = read_model_options(model)
    notes += model_notes
    unk_token = model.get("unk_token")
    byte_level = _is_byte_level(data, vocab)
    check_token_sizes(vocab, limits.token_bytes, byte_level=byte_level)
    if byte_level:
        if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise file_error(
                "this byte-level tokenizer marks word boundaries (continuing_subword_prefix / "
                "end_of_word_suffix), which playground merges cannot represent"
            )
        if not maps_bytes(json.loads(pipeline)["pre_tokenizer"]):
            notes.append("the file's byte-level model gets text without a ByteLevel pre-tokenizer, "
                         "so characters outside its byte alphabet are unknown to it, as in the library")
        loaded = byte_level_from_strings(
            vocab, pairs, source="hf", pretokenize=scheme, notes=notes,
            special=special, unk_token=unk_token, all_tokens=True,
        )
        return replace(loaded, pipeline=pipeline, model=model_options, notes=_library_notes(loaded.notes))
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise file_error(
                f"this tokenizer marks word boundaries ({key} {shown_value(model[key])}); the playground's "
                "character-level encoder has no words, so it cannot represent them"
            )
    loaded = char_level_from_strings(vocab, pairs, source="hf", notes=notes, special=special)
    unk_id = vocab.get(unk_token) if isinstance(unk_token, str) else None
    return replace(loaded, pipeline=pipeline, unk_id=unk_id, model=model_options,
                   notes=_library_notes(loaded.notes))


def _library_notes(notes: tuple[str, ...]) -> tuple[str, ...]:
    """Leave out the seed order's note: the file's merges follow the library's order."""
    return tuple(n for n in notes if "visits each rule once in order" not in n)


def _added_tokens(tok: LoadedTokenizer) -> list[dict[str, Any]]:
    """The tokenizer's added tokens as the library writes them, so an export drops none: a
    tokenizer.json's own with their flags (its pipeline keeps them), then any other special token."""
    rows = json.loads(tok.pipeline).get("added_tokens", []) if tok.pipeline else []
    out = [{"id": i, "content": c, "single_word": word, "lstrip": left, "rstrip": right, "normalized": normalized,
            "special": special} for c, i, special, normalized, left, right, word in rows]
    written = {t["content"] for t in out}
    out += [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
             "special": True} for c, i in tok.special_tokens.items() if c not in written]
    return sorted(out, key=lambda t: t["id"])


def export_hf(tok: LoadedTokenizer, pretokenize: str | None = None) -> str:
    """A Hugging Face tokenizer.json that `tokenizers` loads and that gives the same ids."""
    scheme = check_scheme(pretokenize if pretokenize is not None else tok.pretokenize)
    model: dict[str, Any] = {
        "type": "BPE",
        "dropout": None,
        "unk_token": None,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": False,
        "byte_fallback": False,
        "ignore_merges": False,
    }
    if tok.level == "chars":
        check_well_formed_chars(tok)
        model["vocab"] = dict(sorted(tok.vocab.items(), key=lambda kv: kv[1]))
        model["merges"] = [[a, b] for a, b in tok.merges]
        pre_tokenizer: dict[str, Any] | None = None
        decoder: Any = {"type": "Fuse"}
    else:
        made = check_well_formed_bytes(tok)
        fmap = tok.id_map
        vocab_ids: dict[str, int] = {}
        for b in range(256):
            if b not in tok.unknown_bytes:
                vocab_ids[BYTE_ALPHABET[b]] = fmap.get(b, b)
        for pid, data in made.items():
            vocab_ids[bytes_to_token(data)] = fmap.get(pid, pid)
        model["vocab"] = dict(sorted(vocab_ids.items(), key=lambda kv: kv[1]))
        model["merges"] = [
            [bytes_to_token(bytes_of(a, made)), bytes_to_token(bytes_of(b, made))] for a, b, _ in tok.merges
        ]
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                      "use_regex": scheme == "gpt2"}
        if scheme in ("cl100k", "o200k"):  # (o200k was written as a plain ByteLevel, its split dropped)
            pre_tokenizer = {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": PATTERNS[scheme]},
                     "behavior": "Isolated", "invert": False},
                    dict(byte_level, use_regex=False),
                ],
            }
        else:
            pre_tokenizer = byte_level
        decoder = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": _added_tokens(tok),
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": decoder,
        "model": model,
    }
    if pretokenize is None and tok.library_order and tok.pipeline:
        parts, options = _own_parts(tok)
        document.update(parts)
        model.update(options)
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


#: Fields the library needs that a step's description leaves out (they change no id), at its defaults.
_LIBRARY_DEFAULTS: dict[str, dict[str, Any]] = {
    "ByteLevel": {"add_prefix_space": True, "trim_offsets": True, "use_regex": True}}


def _library_fields(node: Any) -> Any:
    """A described step (and its Sequence's parts) with the fields the library's reader requires."""
    if isinstance(node, list):
        return [_library_fields(part) for part in node]
    if not isinstance(node, dict):
        return node
    return {**_LIBRARY_DEFAULTS.get(node.get("type", ""), {}), **{k: _library_fields(v) for k, v in node.items()}}


def _own_parts(tok: LoadedTokenizer) -> tuple[dict[str, Any], dict[str, Any]]:
    """A tokenizer.json's own steps (hf/pipeline.py keeps them in the library's own shape) and
    its model's options, so its export gives its ids (the post-processor is not written back)."""
    desc, options = json.loads(tok.pipeline), json.loads(tok.model)
    parts = {key: _library_fields(desc[key]) for key in ("normalizer", "pre_tokenizer", "decoder")}
    return parts, {key: options[key] for key in ("unk_token", "fuse_unk", "byte_fallback", "ignore_merges")}
