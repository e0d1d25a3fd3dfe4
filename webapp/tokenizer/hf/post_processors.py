"""A tokenizer.json's post-processor: the ids `add_special_tokens` puts around a single text.

What it does not do: pairs of sequences (the `pair` template), offsets,
or type ids.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Mapping


def read_post_processor(node: Any, notes: list[str]) -> list[list[int]] | None:
    """[ids before, ids after] the sequence for a single text, or None when nothing is added."""
    before: list[int] = []
    after: list[int] = []
    if not _post(node, before, after):
        notes.append("the file's post-processor is not one the playground has; add_special_tokens adds nothing")
        return None
    return [before, after] if before or after else None


def _post(node: Any, before: list[int], after: list[int]) -> bool:
    if node is None:
        return True
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    if kind == "ByteLevel":
        return True  # offsets only
    if kind == "Sequence" and isinstance(node.get("processors"), list):
        return all(_post(child, before, after) for child in node["processors"])
    if kind in ("RobertaProcessing", "BertProcessing"):
        cls, sep = node.get("cls"), node.get("sep")
        if not (isinstance(cls, list) and isinstance(sep, list) and len(cls) == 2 and len(sep) == 2
                and _is_id(cls[1]) and _is_id(sep[1])):
            return False
        before.append(cls[1])
        after.append(sep[1])
        return True
    if kind == "TemplateProcessing":
        return _template(node, before, after)
    return False


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _template(node: Mapping[str, Any], before: list[int], after: list[int]) -> bool:
    single = node.get("single")
    specials = node.get("special_tokens")
    if not isinstance(single, list) or not isinstance(specials, dict):
        return False
    seen_sequence = False
    for item in single:
        if not isinstance(item, dict) or len(item) != 1:
            return False
        if "Sequence" in item:
            seen_sequence = True
            continue
        special = item.get("SpecialToken")
        if not isinstance(special, dict):
            return False
        entry = specials.get(special.get("id"))
        ids = entry.get("ids") if isinstance(entry, dict) else None
        if not isinstance(ids, list) or not all(_is_id(i) for i in ids):
            return False
        (after if seen_sequence else before).extend(ids)
    return True


__all__ = ["read_post_processor"]
