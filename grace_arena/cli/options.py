"""Options shared by the commands that touch the record."""

from __future__ import annotations

from typing import Annotated

import typer

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="SQLAlchemy URL of the record (default: $GRACE_ARENA_DB or a SQLite file in your "
        "data folder; printed on start).",
        show_default=False,
    ),
]


def resolve_db(url: str | None) -> str:
    from grace_arena.record.db import default_db_url

    return url or default_db_url()


def redacted(url: str) -> str:
    """``url`` as commands print it: a server record's password hidden."""
    from grace_arena.record.db import redacted_url

    return redacted_url(url)
