"""The explain feature: why each boundary of a text's tokens is there (docs/explain.md)."""
