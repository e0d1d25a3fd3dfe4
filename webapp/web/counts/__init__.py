"""Counts: one text's token count under every preset at once (docs/chat.md#counts)."""
