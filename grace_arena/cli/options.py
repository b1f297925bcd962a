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


def existing_db(url: str | None) -> str:
    """The record a command only reads: a SQLite file that is not there is an error (opening
    it would make an empty record and report on nothing), naming the default record."""
    from pathlib import Path

    from sqlalchemy.engine import make_url

    from grace_arena.record.db import default_db_url

    resolved = resolve_db(url)
    try:
        parsed = make_url(resolved)
    except Exception:  # not a URL: opening it says so
        return resolved
    database = parsed.database
    if (
        parsed.get_backend_name() == "sqlite"
        and database
        and database != ":memory:"
        and not database.startswith("file:")  # a URI filename: SQLite's own options
        and not Path(database).is_file()
    ):
        default = default_db_url()
        hint = "" if resolved == default else f"; without --db, commands use {redacted(default)}"
        typer.echo(
            f"error: no record at {database} (demo, serve, event create and import make one{hint})",
            err=True,
        )
        raise typer.Exit(1)
    return resolved


def redacted(url: str) -> str:
    """``url`` as commands print it: a server record's password hidden."""
    from grace_arena.record.db import redacted_url

    return redacted_url(url)
