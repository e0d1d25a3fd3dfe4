"""The seeds' list order: every rule of a merge list visited once, in list order (docs/algorithms.md).

engine.py runs the rules over integer symbols; byte_level.py and
char_level.py are the two levels on top of it (byte_splits.py finds where a
byte-level text can be cut, batch.py encodes many segments of a well-formed
list at once, precompiled.py stores a compiled list); tracing.py turns the
engine's merge events into an `EncodeTrace`.

The library orders (the best pair present fires next) are in
core/library_order/; this package exports nothing (import from the modules).
"""
