"""Where a prompt ends: the prompt routes (routes.py)."""
