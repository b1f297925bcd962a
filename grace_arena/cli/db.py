"""``grace-arena db ...``: the record's schema and contents."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from grace_arena.cli.groups import command_group
from grace_arena.cli.options import DbOption, existing_db, redacted, resolve_db
from grace_arena.cli.root import app

db_app = command_group(
    help="The record: migrate its schema and list what it holds.",
    no_args_is_help=True,
)
app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def upgrade(
    db: DbOption = None, revision: str = typer.Option("head", help="Target revision.")
) -> None:
    """Create or migrate the record's tables (Alembic migrations; nothing else creates them)."""
    from grace_arena.record.db import upgrade as run_upgrade

    url = resolve_db(db)
    typer.echo(f"record: {redacted(url)}")
    run_upgrade(url, revision)
    typer.echo(f"schema at {revision}")


@db_app.command("matches")
def matches(db: DbOption = None) -> None:
    """List the matches in the record with their event and buzz counts."""
    from grace_arena.record.db import open_engine
    from grace_arena.record.store import MatchStore

    url = existing_db(db)
    console = Console()
    console.print(f"record: {redacted(url)}")
    store = MatchStore(open_engine(url))
    names = {e.id: e.name for e in store.events_of_record()}
    table = Table("id", "title", "event", "created", "ended", "events", "buzzes")
    for row in store.matches():
        assert row.id is not None
        table.add_row(
            str(row.id),
            row.title,
            names.get(row.event_id, "-"),
            f"{row.created_at:%Y-%m-%d %H:%M}",
            f"{row.ended_at:%H:%M}" if row.ended_at else "-",
            str(store.event_count(row.id)),
            str(len(store.buzzes(row.id))),
        )
    console.print(table)


@db_app.command("events")
def events(db: DbOption = None) -> None:
    """List the record's events: their matches, registered teams and pooled buzzpoints."""
    from sqlalchemy import func
    from sqlmodel import Session, select

    from grace_arena.record.db import open_engine
    from grace_arena.record.models import EventImportRow, PooledBuzzRow
    from grace_arena.record.store import MatchStore

    url = existing_db(db)
    console = Console()
    console.print(f"record: {redacted(url)}")
    engine = open_engine(url)
    store = MatchStore(engine)
    matches: dict[int | None, int] = {}
    for row in store.matches():
        matches[row.event_id] = matches.get(row.event_id, 0) + 1
    with Session(engine) as session:
        pooled = dict(
            session.exec(
                select(PooledBuzzRow.event_id, func.count()).group_by(PooledBuzzRow.event_id)
            ).all()
        )
        imports = dict(
            session.exec(
                select(EventImportRow.event_id, func.count()).group_by(EventImportRow.event_id)
            ).all()
        )
    table = Table("id", "name", "title", "matches", "teams", "imports", "pooled buzzes")
    for event in store.events_of_record():
        assert event.id is not None
        teams = store.event_teams(event.id)
        table.add_row(
            str(event.id),
            event.name,
            event.title,
            str(matches.get(event.id, 0)),
            f"{sum(t.kind == 'human' for t in teams)} human, "
            f"{sum(t.kind == 'model' for t in teams)} model",
            str(imports.get(event.id, 0)),
            str(pooled.get(event.id, 0)),
        )
    console.print(table)
