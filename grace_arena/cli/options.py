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
    """``url`` as commands print it and reports keep it: a server record's password hidden."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:  # not a URL: opening it will say so
        return url
