"""Chat templates: a tokenizer_config.json's Jinja `chat_template`, read and rendered under bounds (docs/chat.md).

- templates: reading a tokenizer_config.json, the presets' templates, checking
  messages, and rendering as transformers does, sandboxed and bounded
- tools: the function specs a template is given (`tools`) and a message's
  `tool_calls`, checked with their places and copied as plain JSON
- bounds: the size a template's operators, filters and calls would build,
  predicted before they run
- watchdog: the time limit, one thread per process that stops a rendering past
  its deadline
- process: an opened (untrusted) template rendered in a forked child with
  memory and time limits

Beside the other shared modules of `webapp.tokenizer`: it imports errors,
caches and the JSON reader of formats/textformats.py (a leaf), nothing of the
engine; formats/ keeps a template beside a tokenizer.json, the web layer
renders and encodes. Import names from
the modules (or the public ones from `webapp.tokenizer`); this module exports
nothing. What it does not do: encode.
"""
