"""The ``grace-arena`` command line: one typer app, each command group in its own module."""

from __future__ import annotations

from grace_arena.cli.root import app

__all__ = ["app"]


def _register() -> None:
    # Each sub-module adds its commands to ``app``; imported here so that
    # ``grace-arena --help`` stays fast (no heavy imports at module level in them).
    from grace_arena.cli import (  # noqa: F401
        analyze,
        db,
        demo,
        event,
        exchange,
        judge,
        leaderboard,
        model,
        moderate,
        packet,
        protest,
        proxy,
        qanta,
        serve,
        survey,
        write,
    )


_register()
