"""The model player: guessers over clue prefixes, the precomputed record, the buzz policy.

Nothing here imports litellm at module level: only :mod:`grace_arena.model.llm` does, inside
the function that makes a call, so the CLI and the demo start fast.
"""
