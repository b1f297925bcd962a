"""``grace-arena export`` and ``grace-arena import ...``: buzzpoints in and out of the record."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grace_arena.cli.groups import command_group
from grace_arena.cli.options import DbOption, existing_db, redacted, resolve_db
from grace_arena.cli.root import app

import_app = command_group(
    help="Bring data into the record: GRACE buzzpoints, another record, QANTA questions.",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")


@app.command("export")
def export(
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="csv | jsonl (one row per buzz, every field), steps (model trajectories), "
            "grace (GRACE's buzzpoint JSON + team codes), qbj (QBJ match files, with the "
            "packet each names in MODAQ's JSON, and a match with bouncebacks as a MODAQ "
            "game too), "
            "parquet (a folder: the analysis' steps, buzzes, tossups and heard tables, and "
            "the bonus parts heard, the models' answers to bonus parts and the teams' consult "
            "choices when there are any; parts 0-based), bonuses (csv: one row per bonus part "
            "heard, parts 1-based as read, with the team's consult choice), sqbs (with "
            "--event: the event as an SQBS tournament file), scoresheet (a printable HTML "
            "scoresheet per match: cycles as rows, players as columns, bonus parts, running "
            "totals; blank for a match not started).",
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Output file (a folder for several packets/matches).")
    ],
    db: DbOption = None,
    match: Annotated[
        list[int] | None,
        typer.Option("--match", help="Only these matches (repeatable; default: all)."),
    ] = None,
    event: Annotated[
        list[str] | None,
        typer.Option(
            "--event",
            help="Only the matches and imported buzzpoints of these events, by name or id "
            "(repeatable; default: all).",
        ),
    ] = None,
) -> None:
    """Export the record's buzzpoints (and model steps) in the formats the field uses.

    --format grace pools, per tossup, every match of the events and their imported
    buzzpoints; a file imported with 'import grace' comes back out exactly.
    """
    from grace_arena.io.exports import FORMATS, RENDERERS
    from grace_arena.io.exports import export as run_export
    from grace_arena.record.db import open_engine
    from grace_arena.record.store import RecordError

    renderer = RENDERERS.get(fmt)
    if renderer is None:
        typer.echo(f"error: --format must be one of {', '.join(FORMATS)}", err=True)
        raise typer.Exit(2)
    if match and event:
        typer.echo("error: give --match or --event, not both", err=True)
        raise typer.Exit(2)
    url = existing_db(db)
    typer.echo(f"record: {redacted(url)}", err=True)
    try:
        engine = open_engine(url)
        files = run_export(engine, fmt, out, match, events=event)
    except (RecordError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    for path in files:
        typer.echo(f"wrote {path}")
    if renderer.notes_pooled_left_out and not match:
        from grace_arena.io.exports import pooled_count
        from grace_arena.record.store import MatchStore

        store = MatchStore(engine)
        scope = store.find_events(event) if event else store.events_of_record()
        pooled = pooled_count(engine, [e.id for e in scope if e.id is not None])
        if pooled:
            typer.echo(
                f"note: {pooled:,} imported pooled buzzpoints (matches unknown) are not in "
                f"--format {fmt}, which lists match buzzes; --format grace, csv and jsonl have "
                "them",
                err=True,
            )


@import_app.command("grace")
def import_grace(
    paths: Annotated[list[Path], typer.Argument(help="GRACE buzzpoint JSON files.")],
    db: DbOption = None,
    event: Annotated[
        str,
        typer.Option(
            help="The event to import into (made if new). Teams keep their codes (H3 is the "
            "same team in every file of the event)."
        ),
    ] = "grace",
) -> None:
    """Import GRACE's public buzzpoints into an event: each file becomes a packet, every
    buzzpoint a buzz of the event, pooled per tossup as the file lists them.

    All files in one transaction: if any buzzpoint cannot be placed, nothing is written.
    Importing a file again into the same event changes nothing.
    """
    from sqlalchemy.exc import SQLAlchemyError

    from grace_arena.io.imports import import_grace as run_import
    from grace_arena.record.db import open_engine

    url = resolve_db(db)
    typer.echo(f"record: {redacted(url)}", err=True)
    engine = open_engine(url)
    try:
        result = run_import(engine, paths, event=event)
    except (OSError, ValueError, SQLAlchemyError) as exc:
        typer.echo(f"error: {exc}", err=True)
        typer.echo("nothing was imported", err=True)
        raise typer.Exit(1) from None
    for note in result.skipped:
        typer.echo(note)
    for file, packet, tossups, buzzes in result.per_file:
        typer.echo(f"{file}: packet {packet}, {tossups} tossups, {buzzes} buzzpoints")
    if result.per_file:
        typer.echo(
            f"event {event!r}: {result.tossups} tossups and {result.buzzes} buzzpoints added "
            f"from {len(result.per_file)} file(s)"
        )


@import_app.command("record")
def import_record(
    other: Annotated[
        str,
        typer.Argument(
            help="The other record: a SQLAlchemy URL (sqlite:///site-b.db, "
            "postgresql+psycopg://...) or a SQLite file's path."
        ),
    ],
    event: Annotated[
        str, typer.Option(help="The event here that receives everything (made if new).")
    ],
    db: DbOption = None,
    from_event: Annotated[
        list[str] | None,
        typer.Option("--from-event", help="Only these events of the other record (repeatable)."),
    ] = None,
) -> None:
    """Merge another record into one event of this one: its matches (every event, buzz and
    ruling), its imported buzzpoints, and the packets and model steps they use.

    Teams keep their ids, so 'red' at both sites is one team of the event. All or nothing;
    merging the same record again adds nothing. The other record is only read (one written
    by an older version is read through an up-to-date copy).
    """
    import sqlite3
    import tempfile

    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    from grace_arena.record.db import at_head, open_engine
    from grace_arena.record.merge import merge_record
    from grace_arena.record.store import RecordError

    if "://" not in other:
        other = f"sqlite:///{Path(other).resolve()}"
    try:
        parsed = make_url(other)
    except Exception:
        typer.echo(f"error: not a database URL: {other}", err=True)
        raise typer.Exit(2) from None
    if parsed.get_backend_name() == "sqlite" and not (
        parsed.database and Path(parsed.database).is_file()
    ):
        typer.echo(f"error: no record at {parsed.database or other}", err=True)
        raise typer.Exit(1)
    url = resolve_db(db)
    here = make_url(url)
    if (
        parsed.get_backend_name() == here.get_backend_name() == "sqlite"
        and here.database
        and Path(here.database).resolve() == Path(str(parsed.database)).resolve()
    ):
        typer.echo("error: that is this record: a record cannot be merged into itself", err=True)
        raise typer.Exit(1)
    typer.echo(f"record: {redacted(url)}", err=True)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            if not at_head(other):
                if parsed.get_backend_name() != "sqlite":
                    typer.echo(
                        "error: the other record has an older schema; bring it up to date "
                        f"first (grace-arena db upgrade --db {other})",
                        err=True,
                    )
                    raise typer.Exit(1)
                # merge from an up-to-date copy: the other record itself is left as it is
                copy = Path(tmp) / "other.db"
                with sqlite3.connect(str(parsed.database)) as src, sqlite3.connect(copy) as dst:
                    src.backup(dst)
                other = f"sqlite:///{copy}"
            result = merge_record(open_engine(url), open_engine(other), event=event,
                                  from_events=from_event)  # fmt: skip
        except (RecordError, SQLAlchemyError, OSError, sqlite3.Error) as exc:
            typer.echo(f"error: {exc}", err=True)
            typer.echo("nothing was merged", err=True)
            raise typer.Exit(1) from None
    typer.echo(
        f"event {event!r}: {len(result.matches)} match(es), {result.imports} import(s) with "
        f"{result.pooled_buzzes} pooled buzzpoints, {len(result.packets)} packet(s) and "
        f"{result.model_steps} model steps and {result.model_bonus_parts} answers to bonus parts "
        "added"
    )
    for theirs, ours in result.updated:
        typer.echo(f"  their match {theirs} had gone on: match {ours} here brought up to date")
    if result.skipped_matches or result.skipped_imports:
        typer.echo(
            f"already here: {result.skipped_matches} match(es), {result.skipped_imports} import(s)"
        )
    for theirs, ours in result.matches:
        typer.echo(f"  their match {theirs} is match {ours} here")


@import_app.command("qanta")
def import_qanta(
    path: Annotated[Path, typer.Argument(help="QANTA questions (.json or .json.gz).")],
    db: DbOption = None,
    packet_size: Annotated[int, typer.Option(min=1, help="Tossups per packet.")] = 20,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N questions.")] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(help="Also write the questions as a corpus (JSON lines) for the guessers."),
    ] = None,
    no_record: Annotated[
        bool, typer.Option("--no-record", help="Only write --corpus; leave the record alone.")
    ] = False,
) -> None:
    """Import QANTA questions as packets in the record (and/or as a corpus file)."""
    from grace_arena.io.imports import import_qanta as run_import

    if no_record and corpus is None:
        typer.echo("error: --no-record needs --corpus", err=True)
        raise typer.Exit(2)
    engine = None
    if not no_record:
        from grace_arena.record.db import open_engine

        url = resolve_db(db)
        typer.echo(f"record: {redacted(url)}", err=True)
        engine = open_engine(url)
    try:
        result = run_import(engine, path, packet_size=packet_size, limit=limit, corpus_out=corpus)
    except (OSError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    for warning in result.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if engine is not None:
        typer.echo(f"{path}: {result.tossups} tossups in {len(result.packets)} packet(s)")
    if corpus is not None:
        typer.echo(f"wrote {corpus}")
