"""The real tokenizers as presets: the OpenAI rank files and the open models' files, built once and cached.

What it does not do: the Python handle (api/, which asks the catalog here),
download anything at run time, HTTP. Import names from the modules (or the
public ones from `webapp.tokenizer`); this module exports nothing. Map and
import rules: docs/architecture.md.
"""
