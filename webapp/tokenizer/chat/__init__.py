"""Chat templates: a tokenizer_config.json's Jinja `chat_template`, read and rendered under bounds (docs/chat.md).

Shared like the modules beside `core/`: it imports errors, caches, the JSON
reader of `textformats` and the process helpers of `webapp.system`,
nothing of the engine. What it does not do: encode, HTTP. This module
exports nothing. Map: docs/architecture.md.
"""
