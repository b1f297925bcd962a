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


FormatOption = Annotated[
    str | None,
    typer.Option(
        "--rules",
        help="The game's format: acf (20 tossup-bonus cycles, -5 negs, no powers), pace "
        "(powers 20, no negs, bonuses), naqt (powers 15, -5, bonuses), or grace (tossups "
        "only: the default).",
        show_default=False,
    ),
]
BouncebacksOption = Annotated[
    bool | None,
    typer.Option(
        "--bouncebacks/--no-bouncebacks",
        help="A bonus part the controlling team misses goes to the other team (default: the "
        "format's rule).",
        show_default=False,
    ),
]


ConsultOption = Annotated[
    str | None,
    typer.Option(
        "--consult",
        help="Consult rules on bonus parts (QANTA 2026): per part a team answers on its own, "
        "consults this precomputed model (sees its guess and confidence) or abstains. Plays "
        "bonuses (ACF's rules unless --rules says otherwise).",
        show_default=False,
    ),
]
ConsultPointsOption = Annotated[
    str | None,
    typer.Option(
        "--consult-points",
        help="With --consult: OWN,CONSULT,ABSTAIN points of a part (default 15,10,5: a "
        "correct answer alone, a correct answer after consulting, a right abstention).",
        show_default=False,
    ),
]


def consult_settings(model: str | None, points: str | None) -> dict:
    """The match settings ``--consult`` and ``--consult-points`` give."""
    if points is not None and not model:
        raise typer.BadParameter("needs --consult MODEL", param_hint="--consult-points")
    if not model:
        return {}
    settings: dict = {"consult_model": model}
    if points is not None:
        parts = [p.strip() for p in points.split(",")]
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise typer.BadParameter(
                f"{points!r}: three points OWN,CONSULT,ABSTAIN, e.g. 15,10,5",
                param_hint="--consult-points",
            )
        settings["consult_points"] = tuple(int(p) for p in parts)
    return settings


def format_settings(fmt: str | None, bouncebacks: bool | None) -> dict:
    """The match settings ``--rules`` and ``--bouncebacks`` give (for ``MatchSettings``)."""
    from grace_arena.core.formats import FORMATS

    settings: dict = {}
    if fmt is not None:
        name = fmt.strip().lower()
        if name not in FORMATS:
            raise typer.BadParameter(
                f"{fmt!r} is not a format (formats: {', '.join(FORMATS)})", param_hint="--rules"
            )
        settings["format"] = name
    if bouncebacks is not None:
        settings["bouncebacks"] = bouncebacks
        if bouncebacks and fmt is None:  # they need bonuses: NAQT's rules, where they are an option
            settings["format"] = "naqt"
    return settings
