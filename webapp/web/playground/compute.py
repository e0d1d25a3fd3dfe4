"""Computing a tool page: from a page's state to what its templates show.

`COMPUTE[tool](state)` parses the fields (webapp.infra.inputs), runs the engine
with the active tokenizer (webapp.opened.active) and shapes the result
(webapp.web.common.viewmodels), errors kept beside their fields. What it does not do: the buttons that change
fields first (actions.py), routes or rendering (webapp.web.playground.pages).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode
from typing import Any, Callable, Mapping

from webapp.opened import active as act
from webapp.web.chat import chatting
from webapp.web.compare import page as compare
from webapp.web.explain.story import page_story
from webapp.infra import inputs
from webapp import tokenizer as tk
from webapp.web.common import train_views as tv
from webapp.web.common import trace_views
from webapp.web.common import viewmodels as vm
from webapp.tokenizer import ImpliedVocab, TokenizerError, split_text
from webapp.tokenizer.textformats import (
    format_char_merges,
    format_char_vocab,
    format_ids,
)


class FieldError(str):
    """An error message shown beside a field, with the typed line it points at (if any)."""

    snippet: tuple[str, str] | None = None


def error_snippet(source: Any, location: Mapping[str, Any], width: int = 60) -> tuple[str, str] | None:
    """The line an error points at (a window of it) and a caret under the column."""
    line_no, column = location.get("line"), location.get("column")
    if not isinstance(source, str) or not isinstance(line_no, int) or not isinstance(column, int):
        return None
    lines = source.splitlines()
    if not 1 <= line_no <= len(lines):
        return None
    line = lines[line_no - 1]
    start = max(0, min(column - 1 - width // 2, len(line) - width))
    excerpt = line[start : start + width].replace("\t", " ")  # one column per character
    prefix = f"{line_no} │ " + ("…" if start else "")
    caret = " " * (len(prefix) + column - 1 - start) + "^"
    return prefix + excerpt + ("…" if start + width < len(line) else ""), caret


def _error_dict(errors: Mapping[str, TokenizerError], state: Mapping[str, str]) -> dict[str, FieldError]:
    out: dict[str, FieldError] = {}
    for name, exc in errors.items():
        shown = FieldError(exc.message)
        shown.snippet = error_snippet(state.get(name), exc.location)
        out[name] = shown
    return out


# An answer carries what is shown (issue #20, "send only what is shown"): the
# per-pass trace only while the Trace view is chosen, the ids box only while
# the Ids view is (or when it is small), one page of token spans. Choosing
# another view asks the server again (the tabs post, macros.view_tabs); a
# keystroke costs the tokens, not tables nobody is looking at.
IDS_INLINE = 1000  # ids sent with every answer up to this many; more come with the Ids view


def trace_wanted(state: Mapping[str, str]) -> bool:
    return state.get("view") == "trace"


def ids_wanted(state: Mapping[str, str], count: int) -> bool:
    return state.get("view") == "ids" or count <= IDS_INLINE


def token_window(state: Mapping[str, str], limits: inputs.Limits) -> tuple[int, int]:
    """(index of the first token span shown, spans to record): the page the "tokens_from" button asked for."""
    raw = state.get("tokens_from") or "0"
    first = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 9 else 0
    first -= first % limits.render_max_tokens  # pages start at multiples of the page size
    return first, first + limits.render_max_tokens


def page_of_tokens(recorded: int, first: int, page: int) -> int:
    """The first shown index, moved back onto the last page when `first` is past the tokens."""
    if first < recorded or recorded == 0:
        return first if recorded else 0
    return (recorded - 1) // page * page


def _shown_tokens(state: Mapping[str, str], trace: Any, first: int, limits: inputs.Limits) -> dict[str, Any]:
    """What both encode pages show of a trace besides the spans: the page of spans, the ids."""
    ids_ready = ids_wanted(state, len(trace.ids))
    return {
        "first": first,
        "shown": len(trace.tokens) - first,
        "page": limits.render_max_tokens,
        "total": len(trace.ids),
        "ids": trace.ids,
        "ids_ready": ids_ready,
        "ids_text": format_ids(trace.ids) if ids_ready else "",
    }


def compute_bytes(state: Mapping[str, str], active: act.ActiveTokenizer, job_panel: str | None = None) -> dict[str, Any]:
    """Everything the Bytes page shows for one state: encode, round trip, decode.

    `active` is the page's tokenizer, resolved once (a preset or opened file
    replaces the typed merges); `job_panel`: a job renders the result (a long
    text), the page shows its panel."""
    limits = inputs.current_limits()
    if job_panel is not None:
        pending: dict[str, TokenizerError] = {}
        decoded = compute_decode(state, limits, pending, active)
        return {"result": None, "job_panel": job_panel, "decoded": decoded,
                "errors": _error_dict(pending, state), "active": active, "chat": None}
    values, errors = inputs.collect(
        {
            "text": lambda: inputs.read_text(state.get("text", ""), limits, form=True),
            "merges": lambda: act.page_merges(active),
            "pretokenize": lambda: inputs.read_pretokenize(state.get("pretokenize", "none")),
        }
    )
    if "tokenizer" in errors:  # a preset or file that cannot be used: said where the rules would be
        errors["merges"] = errors.pop("tokenizer")
    result: dict[str, Any] | None = None
    file_vocab: dict[int, bytes] | None = None
    special_ids: frozenset[int] = frozenset()
    if not errors:
        text, merges, scheme = values["text"], values["merges"], values["pretokenize"]
        with_steps = trace_wanted(state)
        first, upto = token_window(state, limits)
        trace_limits = limits.trace(upto, with_steps=with_steps)
        try:
            quick = None if with_steps else act.prefix_byte_trace(active, text, scheme, limits=trace_limits)
            trace, file_vocab, special_ids = (quick if quick is not None
                                              else act.byte_trace(active, text, scheme, limits=trace_limits))
        except TokenizerError as exc:
            errors["merges" if exc.field == "tokenizer" else exc.field] = exc
        else:
            first = page_of_tokens(len(trace.tokens), first, limits.render_max_tokens)
            result = {
                "groups": vm.byte_token_views(trace, trace.text if trace.text is not None else text, special_ids, first),
                **_shown_tokens(state, trace, first, limits),
                # a prefix trace knows the rules that fired in the prefix only: say where to look
                "stats": vm.encode_stats(text, trace.ids, None if quick is not None else trace.rules_fired,
                                         trace.rules_fired + trace.rules_idle),
                "rows": trace_views.byte_trace_rows(trace, text=text, vocab=file_vocab,
                                           metaspace=act.spells_spaces_as_metaspace(active)) if with_steps else [],
                "trace_ready": with_steps,
                "steps_truncated": trace.steps_truncated,
                "rules_fired": trace.rules_fired,
                "rules_idle": trace.rules_idle,
                "pretokens": (len(split_text(text, scheme)) if quick is not None else len(trace.pretokens))
                if scheme != "none" else 0,
                "roundtrip": _roundtrip(text, trace.ids, merges, file_vocab,
                                        metaspace=act.spells_spaces_as_metaspace(active)),
                "foreign_split": _foreign_split(active, scheme),
                "unmade": unmade_ids(merges.rules) if merges is not None else [],
            }
            # one boundary's story, from the replay of the explainer (only while the Trace is shown)
            result["story"] = page_story(state, active, text, scheme, result["rows"]) if with_steps else None
    decoded = compute_decode(state, limits, errors, active)
    chat, chat_errors = chatting.page_chat(state, active)  # the Chat view (webapp.web.chat.chatting)
    errors.update(chat_errors)
    comparison = None
    if result is not None:  # "Compare with…": side B beside this result (webapp.web.compare.page)
        comparison, compare_errors = compare.page_compare(state)
        errors.update(compare_errors)
        if comparison and "a_differs" in comparison:  # A's tokens are these: outline where they differ
            marks = comparison["a_differs"]
            for group in result["groups"]:
                for view in group.tokens:
                    view.differs = view.index < len(marks) and marks[view.index]
    return {"result": result, "decoded": decoded, "comparison": comparison, "errors": _error_dict(errors, state),
            "active": active, "chat": chat, "chat_rows": chatting.rows_of(state), "chat_roles": chatting.ROLES}


UNMADE_NOTES = 3  # typed rules named in the note about ids no earlier rule makes


def unmade_ids(rules: Any) -> list[str]:
    """Typed rules that name an id nothing has made yet (not a byte, no earlier rule's new id).

    Such a rule can never match, like a rule that matches nothing in this
    text, but for every text: the trace says so. The first few, then how many more.
    """
    known = set(range(256))
    notes: list[str] = []
    more = 0
    for index, (left, right, new) in enumerate(rules):
        missing = next((x for x in (left, right) if x not in known), None)
        if missing is not None:
            if len(notes) < UNMADE_NOTES:
                notes.append(f"rule {index + 1} ({left} {right} → {new}) names id {missing}, which no earlier rule makes")
            else:
                more += 1
        known.add(new)
    if more:
        notes.append(f"{more:,} more rule{'s' if more != 1 else ''} like these")
    return notes


def _foreign_split(active: act.ActiveTokenizer, scheme: str) -> dict[str, str] | None:
    """A preset or file run with another pre-tokenization than its own: its ids are not its own then."""
    own = act.own_pretokenize(active)
    if own is None or own == scheme:
        return None
    return {"name": active.ref if active.source == "preset" else "the opened file", "own": own, "chosen": scheme}


def _only(vocab: dict[int, bytes] | None, ids: Any) -> dict[int, bytes] | None:
    """The entries of an opened file's (large) vocab that `ids` use: decoding validates less."""
    return None if vocab is None else {i: vocab[i] for i in set(ids) if i in vocab}


def _roundtrip(text: str, ids: list[int], merges: Any, vocab: dict[int, bytes] | None = None, *,
               metaspace: bool = False) -> dict[str, Any]:
    """Does decoding the ids with the vocab the merges imply (or an opened file's) give the text back?

    Only the bytes of the ids used are built, and only when they can total the
    text's length or less (lengths first): a few rules can imply tokens of
    terabytes, while the encoding itself is as small as the text. A
    SentencePiece-style file (`metaspace`) adds a "▁" before the text and its
    decoder drops it again: its join is the text with one leading space.
    """
    if vocab is not None:  # a preset's or file's own vocab: the plain join first (every keystroke of a long text)
        parts = list(map(vocab.get, ids))
        if None not in parts:
            try:
                joined = b"".join(parts).decode("utf-8")  # type: ignore[arg-type]
            except UnicodeDecodeError:
                joined = None
            if joined == text or (metaspace and joined == " " + text):
                return {"ok": True, "message": "decode(encode(text)) gives the text back"}
        vocab = _only(vocab, ids)  # the checked decode below says what went wrong
    if vocab is None:
        implied = ImpliedVocab(merges.rules)
        size, wanted = implied.total(ids), len(text.encode("utf-8"))
        if size > max(wanted, inputs.current_limits().token_bytes):
            return {
                "ok": False,
                "message": f"decoding the ids with the implied vocab gives {size:,} bytes; the text has {wanted:,}",
            }
        vocab = implied.bytes_for(ids, size)
    try:
        back = tk.decode(ids, vocab)
    except TokenizerError as exc:
        return {"ok": False, "message": exc.message}
    if back == text:
        return {"ok": True, "message": "decode(encode(text)) gives the text back"}
    return {"ok": False, "message": "decoding the ids with the implied vocab gives a different text"}


def compute_decode(state: Mapping[str, str], limits: inputs.Limits, errors: dict[str, TokenizerError],
                   active: act.ActiveTokenizer) -> dict[str, Any] | None:
    """The decode panel: ids + vocab -> text (None when no ids were typed).

    With a preset or file active, its own vocab decodes and the Vocab field is
    inactive (never read), so the file's ids decode as the file means them.
    """
    raw_ids = state.get("ids", "")
    if not raw_ids.strip():
        return None

    def stored_vocab() -> dict[int, bytes]:
        ids = inputs.read_ids(raw_ids, limits)
        vocab = act.byte_vocab(active)
        # Only the ids used (decode validates every entry it is given), and an
        # unknown id is named here: a stored vocab lists every id it knows.
        for position, i in enumerate(ids, start=1):
            if i not in vocab:
                raise TokenizerError(f"ids: id {i} at position {position} is not in the tokenizer's vocab",
                                     field="ids", location={"index": position - 1})
        return {i: vocab[i] for i in set(ids)}

    values, decode_errors = inputs.collect(
        {
            "ids": lambda: inputs.read_ids(raw_ids, limits),
            "vocab": (lambda: inputs.read_byte_vocab(state.get("vocab", ""), limits)) if not active.ref
            else stored_vocab,
        }
    )
    if "tokenizer" in decode_errors:  # a stored tokenizer that went missing: say it at the ids
        decode_errors["ids"] = decode_errors.pop("tokenizer")
    if not decode_errors:
        try:
            text = tk.decode(values["ids"], values["vocab"], max_bytes=limits.decode_bytes)
        except TokenizerError as exc:
            decode_errors[exc.field] = exc
        else:
            return {"ok": True, "text": text, "segments": vm.text_segments(text), "count": len(values["ids"])}
    errors.update(decode_errors)
    return {"ok": False}


def compute_chars(state: Mapping[str, str], active: act.ActiveTokenizer, job_panel: str | None = None) -> dict[str, Any]:
    """Everything the Characters page shows for one state (`active`: an opened file replaces
    the typed merges and vocab; `job_panel`: a job renders it)."""
    limits = inputs.current_limits()
    opened = bool(active.ref)
    if job_panel is not None:
        return {"result": None, "job_panel": job_panel, "errors": {}, "active": active}

    def _opened(part: int) -> Any:
        try:
            return act.char_parts(active)[part]
        except TokenizerError as exc:
            raise TokenizerError(exc.message, field="merges") from None

    values, errors = inputs.collect(
        {
            "text": lambda: inputs.read_text(state.get("text", ""), limits, form=True),
            "merges": (lambda: _opened(0)) if opened else (lambda: inputs.read_char_merges(state.get("merges", ""), limits)),
            "vocab": (lambda: _opened(1)) if opened else (lambda: inputs.read_char_vocab(state.get("vocab", ""), limits)),
        }
    )
    result = None
    if not errors:
        text, merges, vocab = values["text"], values["merges"], values["vocab"]
        with_steps = trace_wanted(state)
        first, upto = token_window(state, limits)
        try:
            trace_limits = limits.trace(upto, with_steps=with_steps)
            # an opened tokenizer.json applies its own normalizer / pre-tokenizer / added tokens
            trace = act.char_trace(active, text, limits=trace_limits)
            if trace is None:
                trace = tk.encode_text_trace(text, vocab, merges, limits=trace_limits)
        except TokenizerError as exc:
            errors[exc.field] = exc
            if exc.field == "vocab":
                # Still show the tokens, with the ones the vocab lacks flagged.
                tokens = tk.char_tokens(text, merges)
                missing = sorted({t for t in tokens if t not in vocab})
                result = {
                    "groups": vm.unknown_char_token_views(tokens, vocab, limits.render_max_tokens),
                    "shown": min(len(tokens), limits.render_max_tokens),
                    "total": len(tokens),
                    "ids": None,
                    "missing": [vm.printable(t) for t in missing[:20]],
                    "missing_count": len(missing),
                }
        else:
            first = page_of_tokens(len(trace.tokens), first, limits.render_max_tokens)
            result = {
                "groups": vm.char_token_views(trace, first),
                **_shown_tokens(state, trace, first, limits),
                "stats": vm.encode_stats(text, trace.ids, trace.rules_fired, trace.rules_fired + trace.rules_idle),
                "rows": trace_views.char_trace_rows(trace, vocab, text=text) if with_steps else [],
                "trace_ready": with_steps,
                "steps_truncated": trace.steps_truncated,
                "rules_fired": trace.rules_fired,
                "rules_idle": trace.rules_idle,
            }
    return {"result": result, "errors": _error_dict(errors, state), "active": active}


CARRY_URL_MAX = 8000  # gunicorn's limit_request_line is 8190 (gunicorn.conf.py)


def carry_to_chars(words: tuple[str, ...], pairs: list[tuple[str, str]], vocab: dict[str, int]) -> dict[str, str]:
    """The Characters-page state that the Train page's button carries over.

    The text is the distinct words joined by spaces (the first 30), so the
    Characters page shows them all at once; the space gets the next free id in
    the vocab (training never sees spaces, so it is not in training_vocab).
    """
    distinct = list(dict.fromkeys(words))[:30]
    carried = dict(vocab)
    if len(distinct) > 1 and " " not in carried:
        carried[" "] = max(carried.values(), default=-1) + 1
    return {
        "text": " ".join(distinct),
        "merges": format_char_merges(pairs),
        "vocab": format_char_vocab(carried),
    }


def train_result(words: tuple[str, ...], num_merges: int, trace: Any, limits: inputs.Limits) -> dict[str, Any]:
    """What the Train page shows for a finished training trace (inline or from a job)."""
    pairs = [(a, b) for a, b in trace.pairs]
    vocab = tk.training_vocab(words, pairs)
    rows = tv.train_rows(trace, vocab)
    word_views, distinct = tv.segmented_words(words, pairs, vocab, tk.char_tokens, 300)
    carry = carry_to_chars(words, pairs, vocab)
    # "Open in Characters" is a link (shareable, reloads without a resubmit)
    # unless its URL would pass what servers accept in a request line. Built
    # without url_for: a job worker renders this too, outside any request.
    link = "/chars?" + urlencode(carry)
    carry_url = link if len(link) <= CARRY_URL_MAX else None
    return {
        "rows": rows,
        # Pages stay light however many merges were asked for: the
        # chips list and the step table are capped (the carry form has all).
        "list_cap": limits.render_max_tokens,
        "table_rows": [row for row in rows if row.count is not None][: limits.trace_max_steps],
        "merges": trace.merges,
        "merges_json": json.dumps(trace.merges, ensure_ascii=False),
        "chart": tv.count_chart(rows),
        "steps_truncated": trace.steps_truncated,
        "stopped_early": trace.stopped_early,
        "requested": num_merges,
        "words": word_views,
        "distinct": distinct,
        "word_count": len(words),
        "carry": carry,
        "carry_url": carry_url,
        "vocab_size": len(vocab),
    }


def compute_train(state: Mapping[str, str], active: act.ActiveTokenizer, job_panel: str | None = None) -> dict[str, Any]:
    """Everything the Train page shows for one state (`job_panel`: a job trains on large inputs)."""
    limits = inputs.current_limits()
    if job_panel is not None:
        return {"result": None, "job_panel": job_panel, "errors": _error_dict({}, state)}
    values, errors = inputs.collect(
        {
            "words": lambda: inputs.read_words(state.get("words", ""), limits, form=True),
            "num_merges": lambda: inputs.read_num_merges(state.get("num_merges", ""), limits),
        }
    )
    result = None
    if not errors:
        words, num_merges = values["words"], values["num_merges"]
        try:
            trace = tk.train_trace(words, num_merges, max_steps=limits.trace_max_steps,
                                   max_token_chars=limits.vocab_bytes)
        except TokenizerError as exc:
            errors[exc.field] = exc
        else:
            result = train_result(words, num_merges, trace, limits)
    return {"result": result, "errors": _error_dict(errors, state)}


COMPUTE: dict[str, Callable[[Mapping[str, str], act.ActiveTokenizer, str | None], dict[str, Any]]] = {
    "bytes": compute_bytes,
    "chars": compute_chars,
    "train": compute_train,
}
