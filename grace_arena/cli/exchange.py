"""``grace-arena export`` and ``grace-arena import ...``: buzzpoints in and out of the record."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grace_arena.cli import app
from grace_arena.cli.options import DbOption, resolve_db

import_app = typer.Typer(
    help="Bring public data into the record: GRACE buzzpoints, QANTA questions.",
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
            "grace (GRACE's buzzpoint JSON + team codes), qbj (QBJ match files).",
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
) -> None:
    """Export the record's buzzpoints (and model steps) in the formats the field uses."""
    from grace_arena.analysis.exports import FORMATS
    from grace_arena.analysis.exports import export as run_export
    from grace_arena.record.db import open_engine
    from grace_arena.record.store import RecordError

    if fmt not in FORMATS:
        typer.echo(f"error: --format must be one of {', '.join(FORMATS)}", err=True)
        raise typer.Exit(2)
    url = resolve_db(db)
    typer.echo(f"record: {url}", err=True)
    try:
        files = run_export(open_engine(url), fmt, out, match)
    except (RecordError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    for path in files:
        typer.echo(f"wrote {path}")


@import_app.command("grace")
def import_grace(
    paths: Annotated[list[Path], typer.Argument(help="GRACE buzzpoint JSON files.")],
    db: DbOption = None,
) -> None:
    """Import GRACE's public buzzpoints: each file becomes a packet and a match of its buzzes.

    Importing a file again changes nothing.
    """
    from grace_arena.analysis.imports import import_grace as run_import
    from grace_arena.record.db import open_engine

    url = resolve_db(db)
    typer.echo(f"record: {url}", err=True)
    engine = open_engine(url)
    failed = False
    for path in paths:
        try:
            result = run_import(engine, path)
        except (OSError, ValueError) as exc:
            typer.echo(f"error: {path}: {exc}", err=True)
            failed = True
            continue
        for note in result.skipped:
            typer.echo(note)
        for warning in result.warnings:
            typer.echo(f"warning: {warning}", err=True)
        if result.matches:
            typer.echo(
                f"{path}: packet {result.packets[0]} ({result.tossups} tossups), match "
                f"{result.matches[0]} with {result.buzzes} buzzes"
            )
    if failed:
        raise typer.Exit(1)


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
    from grace_arena.analysis.imports import import_qanta as run_import

    if no_record and corpus is None:
        typer.echo("error: --no-record needs --corpus", err=True)
        raise typer.Exit(2)
    engine = None
    if not no_record:
        from grace_arena.record.db import open_engine

        url = resolve_db(db)
        typer.echo(f"record: {url}", err=True)
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
