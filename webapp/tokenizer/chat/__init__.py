"""Chat templates: a tokenizer_config.json's Jinja `chat_template`, read and rendered under bounds (docs/chat.md).

Shared like the modules beside `core/`: it imports errors, caches and the
JSON reader of formats/textformats.py, nothing of the engine. Which module
holds what: docs/architecture.md. This module exports nothing. What it does
not do: encode.
"""
