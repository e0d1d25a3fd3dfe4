"""The bottom layer: facts about the running process that every layer above may need (processes.py).

Standard library only; it imports nothing of webapp/. What it does not do:
fork, set limits, or know about tokenizers, Flask or jobs. Import names from
the modules; this module exports nothing.
"""
