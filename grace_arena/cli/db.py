"""``grace-arena db ...``: the record's schema and contents."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from grace_arena.cli import app
from grace_arena.cli.options import DbOption, resolve_db

db_app = typer.Typer(
    help="The record: migrate its schema and list what it holds.", no_args_is_help=True
)
app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def upgrade(
    db: DbOption = None, revision: str = typer.Option("head", help="Target revision.")
) -> None:
    """Create or migrate the record's tables (Alembic migrations; nothing else creates them)."""
    from grace_arena.record.db import upgrade as run_upgrade

    url = resolve_db(db)
    typer.echo(f"record: {url}")
    run_upgrade(url, revision)
    typer.echo(f"schema at {revision}")


@db_app.command("matches")
def matches(db: DbOption = None) -> None:
    """List the matches in the record with their event and buzz counts."""
    from grace_arena.record.db import open_engine
    from grace_arena.record.store import MatchStore

    url = resolve_db(db)
    console = Console()
    console.print(f"record: {url}")
    store = MatchStore(open_engine(url))
    table = Table("id", "title", "created", "ended", "events", "buzzes")
    for row in store.matches():
        assert row.id is not None
        table.add_row(
            str(row.id),
            row.title,
            f"{row.created_at:%Y-%m-%d %H:%M}",
            f"{row.ended_at:%H:%M}" if row.ended_at else "-",
            str(store.event_count(row.id)),
            str(len(store.buzzes(row.id))),
        )
    console.print(table)
