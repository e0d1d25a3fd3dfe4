"""The seeds' list order: every rule of a merge list visited once, in list order (docs/algorithms.md).

engine.py runs the rules over integer symbols; byte_level.py and
char_level.py are the two levels on top of it. The library orders are in
core/library_order/. This package exports nothing (import from the modules).
"""
