"""The bottom layer: facts about the running process that every layer above may need.

- processes: what a forked worker needs (its address space, dying with its
  parent), used by the tokenizer package's forked children (corpus shards,
  opened chat templates) and by the job runner's job processes

Standard library only; it imports nothing of webapp/, so the tokenizer package
(the lowest layer of the app's own code) may import it. What it does not do:
fork, set limits, or know about tokenizers, Flask or jobs. Import names from
the modules; this module exports nothing.
"""
