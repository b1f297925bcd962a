"""Options shared by the commands that touch the record."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="The record: a SQLite file's path (club.db) or a SQLAlchemy URL "
        "(sqlite:///club.db, postgresql+psycopg://USER:PASSWORD@HOST/DB); default: "
        "$GRACE_ARENA_DB or a SQLite file in your data folder (printed on start).",
        show_default=False,
    ),
]


#: What a record's URL looks like, for the error that says a ``--db`` is neither.
URL_EXAMPLES = (
    "a SQLite file's path (club.db), sqlite:///club.db or "
    "postgresql+psycopg://USER:PASSWORD@HOST/DB"
)


#: A URL's scheme (``sqlite:``, ``postgresql+psycopg:``) at the start of what was given: a URL
#: with its slashes mistyped, not a file's path (a drive letter, ``C:``, is one letter).
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def database_url(given: str, *, source: str = "--db") -> str:
    """The record named on the command line (or in ``$GRACE_ARENA_DB``) as a SQLAlchemy URL.

    Anything with ``://``, or starting with a scheme (``sqlite:``), is a URL (its database
    driver must be one SQLAlchemy knows); anything else is the path of a SQLite file, relative
    to the current folder (``club.db``, ``~/records/club.db``). What is neither is an error in
    one line that says what a URL looks like, rather than SQLAlchemy's traceback.
    """
    from sqlalchemy.engine import URL, make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    text = given.strip()
    if not text:
        raise _db_error(f"{source} is empty: give {URL_EXAMPLES}")
    if "://" in text or _SCHEME.match(text):
        why = "not a URL"
        try:
            parsed = make_url(text)
            if parsed.host and "@" in parsed.host:
                why = 'an "@" in the password is written %40'
                raise ValueError(why)
            why = f"no database of the kind {parsed.drivername!r}"
            parsed.get_dialect()
        except (ArgumentError, NoSuchModuleError, ValueError):
            raise _db_error(f"{source} {redacted(text)!r}: {why}; give {URL_EXAMPLES}") from None
        return text
    path = Path(text).expanduser().absolute()
    if path.is_dir():
        raise _db_error(f"{source} {text!r} is a folder; give a file in it: {path / 'club.db'}")
    plain = f"sqlite:///{path}"
    if make_url(plain).database == str(path):  # as people read it (spaces, accents and all)
        return plain
    # "?", "#" or "%" in the name: escaped, so that the URL names this very file
    url = URL.create("sqlite", database=str(path)).render_as_string(hide_password=False)
    if make_url(url).database != str(path):  # (SQLAlchemy 2.0.30 escapes no "?" in a URL)
        raise _db_error(
            f"{source} {text!r}: this version of SQLAlchemy cannot name a file with "
            '"?" in its name; rename the file or give another'
        )
    return url


def _db_error(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def resolve_db(url: str | None) -> str:
    """The record a command uses: ``--db`` (a URL or a SQLite file's path), else the default."""
    import os

    from grace_arena.record.db import DB_ENV_VAR, default_db_url

    if url is not None:
        return database_url(url)
    if os.environ.get(DB_ENV_VAR):
        return database_url(os.environ[DB_ENV_VAR], source=f"${DB_ENV_VAR}")
    return default_db_url()


def similar_records(missing: Path) -> list[str]:
    """Files beside ``missing`` whose names are close to its name (a typo: clubb.db)."""
    import difflib

    folder = missing.parent
    try:
        names = [p.name for p in folder.iterdir() if p.is_file() and p.suffix == missing.suffix]
    except OSError:
        return []
    return difflib.get_close_matches(missing.name, names, n=3, cutoff=0.6)


def existing_db(url: str | None) -> str:
    """The record a command only reads: a SQLite file that is not there is an error (opening
    it would make an empty record and report on nothing), naming a file of a similar name
    beside it, or the default record."""
    from sqlalchemy.engine import make_url

    from grace_arena.record.db import default_db_url

    resolved = resolve_db(url)
    parsed = make_url(resolved)
    database = parsed.database
    if parsed.get_backend_name() == "sqlite" and database in (None, "", ":memory:"):
        typer.echo(f"error: {resolved} is a new, empty record in memory: nothing to read", err=True)
        raise typer.Exit(1)
    if (
        parsed.get_backend_name() == "sqlite"
        and database
        and database != ":memory:"
        and not database.startswith("file:")  # a URI filename: SQLite's own options
        and not Path(database).is_file()
    ):
        missing = Path(database).expanduser()
        close = similar_records(missing.absolute())
        default = default_db_url()
        shown = [str(missing.with_name(name)) for name in close]
        mean = f" (did you mean {' or '.join(shown)}?)" if close else ""
        hint = (
            f"; without --db, commands use {redacted(default)}"
            if resolved != default and not close
            else ""
        )
        typer.echo(
            f"error: no record at {database}{mean}: demo, serve, event create and import make "
            f"one{hint}",
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
        "(powers 20, no negs, bonuses), naqt (powers 15, -5, bonuses), qanta26 (QANTA 2026's "
        "hybrid teams of humans and AI players, the runner's preset: give the AIs with --ai), "
        "or grace (tossups only: the default). acf, pace and naqt also officiate the match: "
        "a thrown-out question is replaced by the packet's next extra (past the 20th), "
        "halftime after tossup 10, one 30-second timeout per team, 5 seconds to confer on a "
        "bonus part, and overtime proposed at a tie (sudden death; naqt: 3 tossups first; "
        "no bonuses).",
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
        help="GRACE Arena's consult rules on bonus parts (not QANTA 2026's: --rules qanta26): "
        "per part a team answers on its own, "
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


TimedHalvesOption = Annotated[
    float | None,
    typer.Option(
        "--timed-halves",
        min=0.1,
        max=60.0,
        metavar="MINUTES",
        help="NAQT's timed halves: a game clock of MINUTES a half (NAQT: 9 for schools, 10 "
        "for colleges), shown on the moderator's screen and the room's display. It starts "
        "with the half's first tossup and stops for timeouts and pauses; when it runs out the "
        "tossup in play is read to the end, both teams may answer, and its bonus is played; "
        "then halftime, or the end of regulation. Plays NAQT's rules unless --rules says "
        "otherwise.",
        show_default=False,
    ),
]


PreAnswerOption = Annotated[
    float | None,
    typer.Option(
        "--pre-answer",
        help="With --consult: seconds each player of the team has to write an answer of their "
        "own on their phone once the team asks for the model's, before it is revealed "
        "(QANTA 2026: 2). Default: revealed at once.",
        show_default=False,
    ),
]


PhoneProtestsOption = Annotated[
    bool,
    typer.Option(
        "--phone-protests",
        help="Players may protest a ruling from their phone: a tossup or a bonus part their "
        "team played, with the answer given and the reason (one at a time, five a player a "
        "match). It is filed as the moderator's P files one; the TD resolves it (grace-arena "
        "protest, or the TD's API). Without it, only the moderator files protests.",
    ),
]


def timed_halves_settings(minutes: float | None, fmt: str | None) -> dict:
    """The match settings ``--timed-halves`` gives (with NAQT's rules unless ``--rules``)."""
    if minutes is None:
        return {}
    return {"half_time": round(minutes * 60.0, 3), **({"format": "naqt"} if fmt is None else {})}


def consult_settings(
    model: str | None, points: str | None, pre_answer: float | None = None
) -> dict:
    """The match settings ``--consult``, ``--consult-points`` and ``--pre-answer`` give."""
    for given, hint in ((points, "--consult-points"), (pre_answer, "--pre-answer")):
        if given is not None and not model:
            raise typer.BadParameter("needs --consult MODEL", param_hint=hint)
    if not model:
        return {}
    settings: dict = {"consult_model": model}
    if pre_answer is not None:
        settings["consult_pre_answer"] = pre_answer
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


def record_models(url: str) -> list[str]:
    """The models precomputed in the record at ``url``; none when there is no record yet (and
    none is made: the check comes before anything is created)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if not database or database == ":memory:" or not Path(database).expanduser().is_file():
            return []
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(text("SELECT DISTINCT model FROM model_step")).scalars())
    except SQLAlchemyError:  # an empty or older record: no model steps yet
        return []
    finally:
        engine.dispose()


def check_model(model: str, url: str | None, *, what: str) -> None:
    """Refuse, in one line with the closest names, a model no match could play
    (:mod:`grace_arena.model.names`); ``url``: the record whose precomputed models count;
    ``what``: where the name was given (``--model-team 'tfdif@0.5'``)."""
    from grace_arena.model.names import model_name_problem

    problem = model_name_problem(model, record_models(url) if url else ())
    if problem is not None:
        typer.echo(f"error: {what}: {problem}", err=True)
        raise typer.Exit(2)


SkipBrokenOption = Annotated[
    bool,
    typer.Option(
        "--skip-broken-questions",
        help="Play a packet without each question that cannot be used (a .docx tossup with no "
        "ANSWER line, a bonus part with none, an answer line with no question) instead of "
        "refusing it; what is left out is said, and every screen counts the tossups left.",
    ),
]


def skippable(problems: list[Any]) -> bool:
    """Whether every problem is one question's (so the packet plays without them)."""
    errors = [p for p in problems if not p.warning]
    return bool(errors) and all(p.position is not None for p in errors)


def echo_skipped(packet: Any, *, err: bool = False) -> None:
    """Say each question left out of ``packet`` (loaded with skip_broken), and why."""
    for problem in packet.skipped:
        typer.echo(typer.style(f"{problem}; skipped", fg=typer.colors.YELLOW), err=err)


def check_packets(paths: list[Path], *, skip_broken: bool = False) -> list[Any]:
    """Each packet file reads (a missing file, a document with no tossups, a question that
    cannot be used unless ``skip_broken``): else its problems, each on a line, and exit 1.
    Returns the packets; those with questions left out say which (on stderr)."""
    from grace_arena.core.packet import PacketError, load_packet

    packets = []
    for path in paths:
        try:
            packet = load_packet(path, skip_broken=skip_broken)
        except OSError as exc:
            typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
            raise typer.Exit(1) from None
        except PacketError as exc:
            for problem in exc.problems:
                typer.echo(f"error: {' '.join(str(problem).split())}", err=True)
            if not skip_broken and skippable(exc.problems):
                typer.echo(
                    f"error: {path}: refused for the question(s) above; fix them, or give "
                    "--skip-broken-questions to play it without them",
                    err=True,
                )
            raise typer.Exit(1) from None
        if packet.skipped:
            echo_skipped(packet, err=True)
            typer.echo(
                f"{path}: {packet.counts()} ({packet.skipped_counts()}): a match on it has "
                f"{len(packet.tossups)} tossups",
                err=True,
            )
        packets.append(packet)
    return packets


# Secrets (the server's signing secret, a moderator's token): from the environment or a file.
# A command's arguments are public on the machine it runs on (``ps``, /proc/PID/cmdline, every
# user); its environment and a file of the user's own are not.


def secret_help(what: str, envvar: str, file_option: str) -> str:
    """The help of an option that takes a secret on the command line."""
    return (
        f"{what} Visible to every user of this machine (ps) when given here: set {envvar} "
        f"or give {file_option} instead."
    )


def given_secret(
    ctx: typer.Context,
    value: str | None,
    file: Path | None,
    *,
    param: str,
    option: str,
    envvar: str,
    file_option: str,
) -> str | None:
    """The secret of ``option`` (parameter ``param``): read from ``file`` (its first line,
    trimmed), or as given. Given on the command line itself, it works but is said to be visible
    to other users (on stderr); from ``envvar`` it is not shown anywhere."""
    # (by its name: typer's context may be of a click of its own, whose enum is another)
    on_command_line = getattr(ctx.get_parameter_source(param), "name", None) == "COMMANDLINE"
    if file is not None:
        if value and on_command_line:
            raise typer.BadParameter(f"give {option} or {file_option}, not both", param_hint=option)
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise typer.BadParameter(f"{file}: {why}", param_hint=file_option) from None
        secret = lines[0].strip() if lines else ""
        if not secret:
            raise typer.BadParameter(f"{file} is empty", param_hint=file_option)
        return secret
    if value and on_command_line:
        typer.echo(
            f"warning: {option} on the command line can be read by every user of this machine "
            f"(ps); set {envvar} or give {file_option} instead",
            err=True,
        )
    return value
