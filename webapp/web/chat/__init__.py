"""Chat templates: a conversation rendered with a tokenizer's chat template and counted (docs/chat.md)."""
