"""The tool pages' buttons that change fields before the page is computed (no JavaScript needed).

`apply_action(tool, state, raw)` applies Add missing tokens, Decode these ids,
the chat editor's buttons and the comparison's Swap to a page's state, and
says which fields changed. What it does not do: compute the page (compute.py).
"""

from __future__ import annotations

from typing import Any, Mapping

from webapp import tokenizer as tk
from webapp.infra import inputs
from webapp.opened import active as act
from webapp.tokenizer import ImpliedVocab, TokenizerError
from webapp.tokenizer.textformats import format_byte_vocab, format_char_vocab, format_ids
from webapp.web.chat import chatting
from webapp.web.compare import page as compare


def with_missing_tokens(state: Mapping[str, str]) -> str | None:
    """The Characters vocab with every token the text needs appended (next free ids).

    Ids already given keep their values. None when the inputs do not parse
    (the page then shows those errors as usual) or nothing is missing.
    """
    limits = inputs.current_limits()
    try:
        text = inputs.read_text(state.get("text", ""), limits, form=True)
        merges = inputs.read_char_merges(state.get("merges", ""), limits)
        vocab = dict(inputs.read_char_vocab(state.get("vocab", ""), limits))
        tokens = tk.char_tokens(text, merges)
    except TokenizerError:
        return None
    missing = [t for t in dict.fromkeys(tokens) if t not in vocab]
    if not missing:
        return None
    next_id = max(vocab.values(), default=-1) + 1
    for offset, token in enumerate(sorted(missing)):
        vocab[token] = next_id + offset
    return format_char_vocab(vocab)


def decode_fields_from_encoding(state: Mapping[str, str]) -> dict[str, str] | None:
    """The Bytes decode panel filled from the encoding: its ids and the vocab they need.

    The vocab lists only the ids the encoding uses whose bytes the merges
    imply (ids 0..255 stand for their byte anyway), so it stays small even
    for a list of many thousands of rules. With a preset or file active only
    the ids are filled: its own vocab decodes them. None when the encode side
    has errors.
    """
    limits = inputs.current_limits()
    active = act.resolve("bytes", state)
    try:
        text = inputs.read_text(state.get("text", ""), limits, form=True)
        scheme = inputs.read_pretokenize(state.get("pretokenize", "none"))
        merges = act.page_merges(active)
        ids = act.byte_ids(active, text, scheme)
    except TokenizerError:
        return None
    if merges is None:  # a preset or file: its own vocab decodes the ids
        return {"ids": format_ids(ids), "vocab": state.get("vocab", "")}
    implied = ImpliedVocab(merges.rules)
    # Only the ids the encoding uses, and only if their bytes are no more than
    # the text's (lengths first): otherwise the panel is left as it was.
    needed_ids = [i for i in sorted(set(ids)) if i > 255]
    needed = implied.bytes_for(needed_ids, max(len(text.encode("utf-8")), limits.token_bytes))
    if needed is None:
        return None
    needed = {i: b for i, b in needed.items() if i > 255}
    return {"ids": format_ids(ids), "vocab": format_byte_vocab(needed)}


def apply_action(tool: str, state: dict[str, str], raw: Mapping[str, Any]) -> tuple[str, ...]:
    """Buttons that change fields before computing (no JavaScript needed): the names changed."""
    action = raw.get("action")
    if tool == "bytes" and isinstance(action, str) and action.startswith("chat-"):
        return ("chat", "chat_tools") if chatting.chat_action(state, action) else ()  # (both in the editor)
    if tool == "bytes" and action == "compare-swap":
        return compare.swap_sides(state)
    if tool == "chars" and action == "add-missing" and not act.resolve(tool, state).ref:
        vocab = with_missing_tokens(state)
        if vocab is not None:
            state["vocab"] = vocab
            return ("vocab",)
    if tool == "bytes" and action == "fill-decode":
        filled = decode_fields_from_encoding(state)
        if filled is not None:
            state.update(filled)
            return ("ids", "vocab")
    return ()
