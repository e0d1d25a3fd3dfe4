"""Languages: what the same text (the Universal Declaration of Human Rights) costs in 532 languages (docs/languages.md)."""
