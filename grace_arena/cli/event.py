"""``grace-arena event ...``: an event run live: its teams, schedule and standings."""

from __future__ import annotations

import re
import shlex
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from grace_arena.cli.groups import command_group
from grace_arena.cli.options import (
    BouncebacksOption,
    ConsultOption,
    ConsultPointsOption,
    DbOption,
    FormatOption,
    PhoneProtestsOption,
    PreAnswerOption,
    SkipBrokenOption,
    TimedHalvesOption,
    check_model,
    consult_settings,
    echo_skipped,
    existing_db,
    format_settings,
    redacted,
    resolve_db,
    skippable,
    timed_halves_settings,
)
from grace_arena.cli.root import app
from grace_arena.resources import command_prefix

if TYPE_CHECKING:
    from grace_arena.core.config import ScoringRules

event_app = command_group(
    help="Run an event: teams, rounds and rooms, a schedule of matches, standings. A "
    "tournament runs in phases: schedule --pools or --standard (prelims), advance (playoffs "
    "with carryover), tiebreaker, bracket (single elimination), cards (NAQT's card system), "
    "final (one game or a double final); score and forfeit decide games not played here.",
    no_args_is_help=True,
)
app.add_typer(event_app, name="event")

MODEL_TEAM_HELP = (
    "A model player as a team: MODEL, then optionally @THRESHOLD, /CONFIDENCE (logit or "
    "verbal) and =NAME, e.g. 'tfidf@0.6' or 'openai/gpt-4o-mini@0.8/verbal=GPT' (repeatable)."
)
# The model may be a litellm PROVIDER/MODEL name: a slash is the confidence's only when
# "logit" or "verbal" follows it, at the end or before =NAME.
_MODEL_TEAM = re.compile(
    r"^(?P<model>[^@=]+?)(?:@(?P<threshold>[^/=]*))?(?:/(?P<confidence>logit|verbal))?"
    r"(?:=(?P<name>.+))?$"
)


def parse_model_team(spec: str) -> dict[str, Any]:
    """``'tfidf@0.6/logit=Robo'`` -> model, threshold, confidence and team name; a spec that
    is none raises :class:`ValueError` saying what it should be."""
    from grace_arena.protocol import TEAM_NAME_MAX, well_formed_name, well_formed_text

    found = _MODEL_TEAM.match(spec.strip())
    if not found:
        raise ValueError("expected MODEL[@THRESHOLD][/CONFIDENCE][=NAME]")
    threshold = found["threshold"]
    try:
        value = float(threshold) if threshold is not None else None
    except ValueError:
        raise ValueError(f"threshold {threshold!r} is not a number between 0 and 1") from None
    if value is not None and not 0.0 <= value <= 1.0:
        raise ValueError(f"threshold {threshold} is out of range: it must be between 0 and 1")
    model = found["model"].strip()
    name = well_formed_name(found["name"] or model, max_length=TEAM_NAME_MAX)
    return {
        "model": well_formed_text(model),
        "threshold": value,
        "confidence": found["confidence"],
        "name": name,
    }


def _name(option: str, given: str, max_length: int) -> str:
    """A team's or a player's name given on the command line, as the server keeps names."""
    from grace_arena.protocol import well_formed_name

    try:
        return well_formed_name(given, max_length=max_length)
    except ValueError as exc:
        raise typer.BadParameter(f"{given!r}: {exc}", param_hint=option) from None


def _console():
    from rich.console import Console

    return Console()


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _fold(name: str) -> str:
    return " ".join(unicodedata.normalize("NFC", name).split()).casefold()


def _team_of(entries: list[Any], given: str) -> Any:
    """The team ``given`` names, by its name or id (case and spacing aside), or None."""
    wanted = _fold(given)
    return next((t for t in entries if wanted in (t.id, _fold(t.name))), None)


def _no_such_team(entries: list[Any], given: str) -> str:
    """Why ``given`` is no team: the teams there are, and the closest ones."""
    import difflib

    if not entries:
        return f"no team {given.strip()!r}: give the teams first (--team NAME)"
    by_fold = {_fold(t.name): t.name for t in entries}
    close = difflib.get_close_matches(_fold(given), list(by_fold), n=2, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(by_fold[c]) for c in close)}?" if close else ""
    teams = ", ".join(t.name for t in entries)
    return f"no team {given.strip()!r} (teams: {teams}){hint}"


@event_app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="The event's name (what --event takes).")],
    team: Annotated[
        list[str] | None, typer.Option("--team", help="A human team by its name (repeatable).")
    ] = None,
    model_team: Annotated[
        list[str] | None, typer.Option("--model-team", help=MODEL_TEAM_HELP)
    ] = None,
    player: Annotated[
        list[str] | None,
        typer.Option("--player", help="A player registered on a team: 'TEAM:NAME' (repeatable)."),
    ] = None,
    teams_from: Annotated[
        Path | None,
        typer.Option(
            "--teams-from",
            help="A QBJ registration or tournament file (YellowFruit's, MODAQ's, NAQT's): its "
            "teams, in order, and their players, registered as human teams.",
        ),
    ] = None,
    roster: Annotated[
        Path | None,
        typer.Option(
            "--roster",
            help="A CSV of the teams' players: a header line 'team,player', then one player "
            "a line ('Red,Ann'); its teams are registered as human teams too.",
        ),
    ] = None,
    walk_ins: Annotated[
        bool | None,
        typer.Option(
            "--walk-ins/--no-walk-ins",
            help="Whether a phone may join under a name not on the roster (default: only "
            "when the event has no roster). A name on the roster is taken only with the "
            "claim code printed here.",
        ),
    ] = None,
    title: Annotated[str | None, typer.Option(help="A longer title (default: the name).")] = None,
    reading_mode: Annotated[
        str, typer.Option(help="read_aloud (the moderator reads) or screen (text on phones).")
    ] = "read_aloud",
    wpm: Annotated[int, typer.Option(help="Reading pace, in words a minute (30-1200).")] = 180,
    replace: Annotated[
        bool, typer.Option(help="Redefine the teams of an event that has not started.")
    ] = False,
    exhibition: Annotated[
        bool,
        typer.Option(
            "--exhibition",
            help="Its matches are exhibitions: room displays and the event's projector draw "
            "each model player's confidence live, as the words are read. Without it, the "
            "trajectory appears once each tossup has ended.",
        ),
    ] = False,
    voice: Annotated[
        bool,
        typer.Option(
            "--voice",
            help="Its matches are read aloud by the server's voice (espeak-ng) on each room's "
            "display, each word shown as it is said.",
        ),
    ] = False,
    db: DbOption = None,
    game_format: FormatOption = None,
    bouncebacks: BouncebacksOption = None,
    consult: ConsultOption = None,
    consult_points: ConsultPointsOption = None,
    timed_halves: TimedHalvesOption = None,
    phone_protests: PhoneProtestsOption = False,
    pre_answer: PreAnswerOption = None,
) -> None:
    """Register an event and its teams: human teams, and model players with their threshold.

    Example: grace-arena event create club-night --team Red --team Blue --model-team tfidf@0.6
    """
    from pydantic import ValidationError

    from grace_arena.core.specs import team_id
    from grace_arena.protocol import (
        PLAYER_NAME_MAX,
        TEAM_NAME_MAX,
        MatchSettings,
        well_formed_title,
    )
    from grace_arena.record.db import open_engine
    from grace_arena.record.schedule import TeamEntry, create_event
    from grace_arena.record.store import RecordError

    for option, text in (("NAME", name), ("--title", title or "")):
        try:
            well_formed_title(text)  # one line: the SQBS file carries the title as one
        except ValueError as exc:
            raise typer.BadParameter(f"{text!r}: {exc}", param_hint=option) from None
    try:
        defaults = MatchSettings.model_validate(
            {
                "reading_mode": reading_mode,
                "wpm": wpm,
                **({"exhibition": True} if exhibition else {}),
                **({"voice": True} if voice else {}),
                **({"format": "acf"} if consult and game_format is None else {}),
                **format_settings(game_format, bouncebacks),
                **consult_settings(consult, consult_points, pre_answer),
                **timed_halves_settings(timed_halves, game_format),
                **({"phone_protests": True} if phone_protests else {}),
            }
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        option = "--" + str(error["loc"][0]).replace("_", "-")
        raise typer.BadParameter(error["msg"], param_hint=option) from None
    entries: list[TeamEntry] = []
    team = list(team or [])
    player = list(player or [])
    if teams_from is not None:
        from grace_arena.io.imports import QbjImportError, read_qbj_rosters

        try:
            rosters = read_qbj_rosters(teams_from)
        except (QbjImportError, OSError, ValueError) as exc:
            raise _fail(str(exc), code=2) from exc
        team += [n for n, _ in rosters]
        player += [f"{n}:{p}" for n, members in rosters for p in members]
    if roster is not None:
        from grace_arena.io.imports import RosterCsvError, read_csv_rosters

        try:
            rosters = read_csv_rosters(roster)
        except (RosterCsvError, OSError) as exc:
            raise _fail(str(exc), code=2) from exc
        known = {_fold(n) for n in team}
        team += [n for n, _ in rosters if _fold(n) not in known]
        player += [f"{n}:{p}" for n, members in rosters for p in members]
    for human in team:
        human = _name("--team", human, TEAM_NAME_MAX)
        entries.append(TeamEntry(team_id(human, [t.id for t in entries]), human))
    for spec in model_team or []:
        try:
            parsed = parse_model_team(spec)
        except ValueError as exc:  # one line, as for a model name no match could play
            raise _fail(f"--model-team {spec!r}: {exc}", code=2) from None
        taken = next((t for t in entries if t.name.casefold() == parsed["name"].casefold()), None)
        if taken is not None and "=" not in spec:  # a team is named after its model by default
            raise _fail(
                f"--model-team {spec!r}: a team is already named {taken.name!r}; name this one: "
                f"'{spec.strip()}=NAME'",
                code=2,
            )
        entries.append(
            TeamEntry(
                team_id(parsed["name"], [t.id for t in entries]),
                parsed["name"],
                "model",
                parsed["model"],
                parsed["threshold"],
                parsed["confidence"],
            )
        )
    players = []
    for entry in player or []:
        team_name, sep, player_name = entry.partition(":")
        found = _team_of(entries, team_name)
        if not sep or not player_name.strip() or not team_name.strip():
            example = f"{entries[0].name}:Ann" if entries else "Red:Ann"
            raise _fail(f"--player {entry!r}: expected TEAM:NAME, e.g. {example!r}", code=2)
        if found is None:
            raise _fail(f"--player {entry!r}: {_no_such_team(entries, team_name)}", code=2)
        players.append((found.id, _name("--player", player_name, PLAYER_NAME_MAX)))
    if len(entries) < 2:  # said before a record is made for it
        raise _fail(f"an event needs at least two teams, got {len(entries)}")
    url = resolve_db(db)
    model_entries = [t for t in entries if t.kind == "model"]
    for spec, entry in zip(model_team or [], model_entries, strict=True):
        check_model(entry.model or "", url, what=f"--model-team {spec!r}")
    if consult:
        check_model(consult, url, what=f"--consult {consult!r}")
    console = _console()
    console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
    try:
        plan = create_event(
            open_engine(url),
            name,
            title=title,
            teams=entries,
            players=players,
            defaults=defaults.model_dump(exclude_unset=True),
            replace=replace,
            walk_ins=walk_ins,
        )
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    console.print(
        f"event [bold]{plan.name}[/]: {len(plan.teams)} teams, {len(plan.players)} players",
        highlight=False,
    )
    if plan.players:
        from grace_arena.record.roster import issue_codes

        _print_codes(console, issue_codes(open_engine(url), plan.id))
    for t in plan.teams:
        policy = (
            f" — model {t.model}, threshold {t.threshold if t.threshold is not None else 0.5}"
            if t.kind == "model"
            else ""
        )
        console.print(f"  {t.id}: {t.name}{policy}", highlight=False, markup=False)
    where = f" --db {shlex.quote(redacted(db))}" if db else ""
    console.print(
        f"next: {command_prefix()} event schedule {shlex.quote(plan.name)} --rooms 2 "
        f"--packet PACKET ...{where}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def _print_codes(console: Any, issued: list[Any]) -> None:
    """The roster's claim codes, a line each: what the organiser hands each player."""
    if not issued:
        return
    console.print(
        "claim codes (a phone takes a name of the roster only with its code; hand each "
        "player theirs):",
        highlight=False,
    )
    for i in issued:
        console.print(
            f"  {i.team_name}: {i.name}  {i.code}  ({i.player_id})", highlight=False, markup=False
        )


@event_app.command("roster")
def roster_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    add: Annotated[
        list[str] | None,
        typer.Option("--add", help="Register a player on the roster: 'TEAM:NAME' (repeatable)."),
    ] = None,
    remove: Annotated[
        list[str] | None,
        typer.Option(
            "--remove",
            help="Remove a player (a walk-in or the roster's): its id or 'TEAM:NAME' "
            "(repeatable). Its name is free again, its token opens nothing; the matches it "
            "played keep it. A server serving the event closes its phone when asked over "
            "HTTP (DELETE /api/events/NAME/players/ID).",
        ),
    ] = None,
    codes: Annotated[
        list[str] | None,
        typer.Option(
            "--code",
            help="Issue a new claim code for a player ('TEAM:NAME' or its id, repeatable; "
            "'all' for every player of the roster): the old one no longer claims the name.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """The event's players by team: the roster (claimed on a phone with a code) and the
    walk-ins (who typed a name). Adds, removes, and issues claim codes.

    Example: grace-arena event roster club-night --add Red:Ann --code Blue:Bob
    """
    from grace_arena.record.db import open_engine
    from grace_arena.record.models import EventPlayerRow
    from grace_arena.record.roster import (
        add_to_roster,
        find_roster_player,
        issue_codes,
        remove_player,
        walk_ins_allowed,
    )
    from grace_arena.record.schedule import load_plan
    from grace_arena.record.store import RecordError

    engine = open_engine(existing_db(db))
    console = _console()
    try:
        plan = load_plan(engine, name)
        issued = []
        for entry in add or []:
            team_name, sep, player_name = entry.partition(":")
            found = _team_of(list(plan.teams), team_name)
            if not sep or not player_name.strip():
                raise _fail(f"--add {entry!r}: expected TEAM:NAME", code=2)
            if found is None or found.kind != "human":
                raise _fail(f"--add {entry!r}: {_no_such_team(list(plan.teams), team_name)}", 2)
            from grace_arena.protocol import PLAYER_NAME_MAX

            issued += add_to_roster(
                engine, plan.id, [(found.id, _name("--add", player_name, PLAYER_NAME_MAX))]
            )
        for given in remove or []:
            row = find_roster_player(engine, plan.id, given)
            remove_player(engine, plan.id, row.player_id)
            console.print(f"removed {row.name} ({row.player_id})", highlight=False, markup=False)
        wanted = codes or []
        if "all" in wanted:
            issued += issue_codes(engine, plan.id)
        elif wanted:
            ids = [find_roster_player(engine, plan.id, g).player_id for g in wanted]
            issued += issue_codes(engine, plan.id, ids)
        plan = load_plan(engine, plan.id)
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    from sqlmodel import Session, select

    with Session(engine) as session:
        rows = session.exec(
            select(EventPlayerRow).where(
                EventPlayerRow.event_id == plan.id, EventPlayerRow.kind == "human"
            )
        ).all()
    names = {t.id: t.name for t in plan.teams}
    roster = [r for r in rows if r.registered_by == "organiser" and r.removed_at is None]
    walk_ins = walk_ins_allowed(plan.meta, bool(roster))
    console.print(
        f"event [bold]{plan.name}[/]: {len(roster)} on the roster; walk-ins "
        f"{'allowed' if walk_ins else 'refused'}",
        highlight=False,
    )
    for t in plan.teams:
        if t.kind != "human":
            continue
        mine = sorted((r for r in rows if r.team_id == t.id), key=lambda r: r.name_key)
        console.print(f"  {names[t.id]}:", highlight=False, markup=False)
        for r in mine:
            what = (
                "removed"
                if r.removed_at is not None
                else "roster" + ("" if r.claim_sha256 else ", no code yet")
                if r.registered_by == "organiser"
                else "walk-in"
            )
            console.print(f"    {r.name} ({r.player_id}): {what}", highlight=False, markup=False)
    _print_codes(console, issued)


@event_app.command("schedule")
def schedule_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    packet: Annotated[
        list[str],
        typer.Option(
            "--packet",
            help="A packet file (or the id of one in the record) for each round, in order "
            "(repeatable; the last one is used again if there are more rounds than packets).",
        ),
    ],
    rooms: Annotated[
        int | None, typer.Option(min=1, help="How many rooms read at once (named 1, 2, ...).")
    ] = None,
    room: Annotated[
        list[str] | None, typer.Option("--room", help="A room by its name (repeatable).")
    ] = None,
    rounds: Annotated[
        int | None,
        typer.Option(min=1, help="Rounds (default: one per packet given)."),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="round-robin (every team meets every other) or grace (human teams meet a model "
            "player in the model rounds and each other in the others).",
        ),
    ] = "round-robin",
    model_rounds: Annotated[
        str | None,
        typer.Option(help="grace format: the rounds against models, e.g. '1,3' (default odd)."),
    ] = None,
    tossups: Annotated[
        list[str] | None,
        typer.Option(
            "--tossups",
            help="The tossups of its packet each round reads: all, a range '1-8' or a list "
            "'1,3,5' (repeatable, one per round like --packet; the last one is used again).",
        ),
    ] = None,
    pool: Annotated[
        list[str] | None,
        typer.Option(
            "--pool",
            help="A pool of the first phase: 'NAME:TEAM,TEAM,...' (repeatable): each pool plays "
            "a round robin, all pools in the same rounds.",
        ),
    ] = None,
    pools_count: Annotated[
        int | None,
        typer.Option(
            "--pools",
            min=1,
            help="Deal the teams into N pools by the snake, in the order they were registered "
            "(their seeds): 1, 2, ..., N, N, ..., 2, 1, ...",
        ),
    ] = None,
    phase_name: Annotated[
        str, typer.Option("--phase", help="With pools: the first phase's name.")
    ] = "Prelims",
    standard: Annotated[
        bool,
        typer.Option(
            "--standard",
            help="The standard schedule for the event's number of teams (4-24): up to 10 "
            "teams one round robin, more in pools of at most 8 dealt by the snake; each pool "
            "in rooms of its own, a room per game, each team visiting its rooms evenly "
            "(rooms and rounds follow; not with --rooms, --room, --pool or --pools).",
        ),
    ] = False,
    db: DbOption = None,
    skip_broken_questions: SkipBrokenOption = False,
) -> None:
    """Pair the teams in rounds and rooms, a packet per round. Refused once a round started.

    With --pools N or --pool NAME:TEAMS the schedule is the first phase of a tournament (the
    prelims): each pool plays a round robin. Then `event advance` brackets the playoffs from
    its standings, `event tiebreaker` settles ties at a cut, `event final` plays the final."""
    from grace_arena.core import schedule as pairing
    from grace_arena.record.db import open_engine
    from grace_arena.record.schedule import PhasePlan, RoundPlan, load_plan, set_schedule
    from grace_arena.record.store import RecordError

    url = existing_db(db)
    console = _console()
    console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
    engine = open_engine(url)
    try:
        plan = load_plan(engine, name)
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    for t in plan.teams:  # an event registered before its models were checked
        if t.kind == "model" and t.model:
            check_model(t.model, url, what=f"team {t.name!r} of event {plan.name!r}")
    if room and rooms:
        raise typer.BadParameter("give --rooms N or --room NAME ..., not both")
    room_names = list(room or [str(i) for i in range(1, (rooms or 1) + 1)])
    n_rounds = rounds or len(packet)
    if standard:
        if room or rooms or pool or pools_count or model_rounds or fmt != "round-robin":
            raise typer.BadParameter(
                "--standard makes the pools and rooms: not with --rooms, --room, --pool, "
                "--pools, --format or --model-rounds"
            )
        try:
            made = pairing.standard_schedule([t.id for t in plan.teams])
        except pairing.ScheduleError as exc:
            raise _fail(f"--standard: {exc}", code=2) from None
        room_names = made.rooms
        n_rounds = rounds or made.rounds
    packets = _load_packets(engine, packet, skip_broken=skip_broken_questions)
    pools = _pools(plan, pool, pools_count) if not standard else _standard_pools(made)
    if standard:
        pooled = [g for g in made.games if g.round <= n_rounds]
    elif pools is not None:
        if fmt.replace("-", "_") != "round_robin" or model_rounds:
            raise typer.BadParameter("pools play a round robin each (--format round-robin)")
        pooled = pairing.pooled_round_robin([p.teams for p in pools])
        n_rounds = rounds or max(p.round for p in pooled)
        pooled = [p for p in pooled if p.round <= n_rounds]
    per_round = [packets[min(i, len(packets) - 1)] for i in range(n_rounds)]
    specs = tossups or ["all"]
    try:
        chosen = [_tossup_ids(p, specs[min(i, len(specs) - 1)]) for i, p in enumerate(per_round)]
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    _warn_repeats(console, per_round, chosen)
    humans = [t.id for t in plan.teams if t.kind == "human"]
    models = [t.id for t in plan.teams if t.kind == "model"]
    try:
        if standard:
            games = pooled
        elif pools is not None:
            games = pairing.assign_rooms(pooled, room_names)
        else:
            games = pairing.schedule(
                humans,
                models,
                rounds=n_rounds,
                rooms=room_names,
                format=fmt.replace("-", "_"),  # type: ignore[arg-type]
                model_rounds=_numbers(model_rounds) if model_rounds else None,
            )
        plan = set_schedule(
            engine,
            plan.name,
            rooms=room_names,
            rounds=[
                RoundPlan(i + 1, p.packet.id, ids)
                for i, (p, ids) in enumerate(zip(per_round, chosen, strict=True))
            ],
            games=games,
            meta={"format": fmt, "model_rounds": model_rounds},
            phase=PhasePlan("prelims", phase_name, "prelim", 0, tuple(pools))
            if pools is not None
            else None,
        )
    except (pairing.ScheduleError, RecordError) as exc:
        raise _fail(str(exc)) from exc
    for line in pairing.crowded_rounds(games, room_names):
        console.print(f"[yellow]note:[/] {line}", soft_wrap=True, highlight=False)
    _check_models(console, url, plan, per_round)
    _print_phases(console, plan)
    _print_plan(console, plan)


def _load_packets(engine: Any, given_packets: list[str], *, skip_broken: bool) -> list[Any]:
    """Packets: files are loaded into the record; anything else names a packet already there.
    A file with a question it does not hold whole is refused unless ``skip_broken``."""
    from grace_arena.core.packet import PacketError, load_packet
    from grace_arena.record.packets import packet_from_record
    from grace_arena.record.store import MatchStore

    store = MatchStore(engine)
    packets = []
    for given in given_packets:
        path = Path(given)
        if path.exists():
            try:
                loaded = load_packet(path, skip_broken=skip_broken)
            except PacketError as exc:
                if not skip_broken and skippable(exc.problems):
                    raise _fail(
                        f"{exc}\n{path}: refused for the question(s) above; fix them, or give "
                        "--skip-broken-questions to play it without them"
                    ) from exc
                raise _fail(str(exc)) from exc
            if loaded.skipped:
                echo_skipped(loaded)
                _console().print(
                    f"{path}: {loaded.counts()} ({loaded.skipped_counts()}): its rounds read "
                    f"{len(loaded.tossups)} tossups",
                    soft_wrap=True, highlight=False, markup=False,
                )  # fmt: skip
            store.save_packet(loaded, source=path)
            packets.append(loaded)
        else:
            try:
                packets.append(packet_from_record(engine, given))
            except LookupError as exc:
                raise _fail(f"--packet {given}: no such file, and {exc}") from exc
    return packets


def _pools(plan: Any, given: list[str] | None, count: int | None) -> list[Any] | None:
    """The first phase's pools: named with their teams, or dealt by the snake."""
    from grace_arena.core import schedule as pairing
    from grace_arena.record.schedule import PoolPlan

    if given and count:
        raise typer.BadParameter("give --pools N or --pool NAME:TEAMS ..., not both")
    if count:
        try:
            dealt = pairing.pools_of([t.id for t in plan.teams], count)
        except pairing.ScheduleError as exc:
            raise typer.BadParameter(str(exc), param_hint="--pools") from None
        return [
            PoolPlan(chr(ord("a") + i) if count <= 26 else str(i + 1),
                     f"Pool {chr(ord('A') + i) if count <= 26 else i + 1}", tuple(teams), i)
            for i, teams in enumerate(dealt)
        ]  # fmt: skip
    if not given:
        return None
    pools = []
    for i, spec in enumerate(given):
        name, sep, teams = spec.partition(":")
        if not sep or not name.strip() or not teams.strip():
            raise typer.BadParameter(f"{spec!r}: expected NAME:TEAM,TEAM,...", param_hint="--pool")
        ids = []
        for team in teams.split(","):
            found = _team_of(list(plan.teams), team)
            if found is None:
                raise _fail(f"--pool {spec!r}: {_no_such_team(list(plan.teams), team)}", code=2)
            ids.append(found.id)
        pools.append(PoolPlan(_pool_id(name, i), name.strip(), tuple(ids), i))
    return pools


def _standard_pools(made: Any) -> list[Any]:
    """A standard schedule's pools as the first phase's (one pool: every team)."""
    from grace_arena.record.schedule import PoolPlan

    if len(made.pools) == 1:
        return [PoolPlan("all", "All teams", tuple(made.pools[0]), 0)]
    return [
        PoolPlan(chr(ord("a") + i), f"Pool {chr(ord('A') + i)}", tuple(teams), i)
        for i, teams in enumerate(made.pools)
    ]


def _pool_id(name: str, i: int) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name.strip()).strip("-").lower()[:64] or f"pool-{i + 1}"


def _numbers(text: str) -> list[int]:
    try:
        return [int(x) for x in re.split(r"[,\s]+", text.strip()) if x]
    except ValueError as exc:
        raise typer.BadParameter(f"{text!r}: expected round numbers like '1,3'") from exc


def _warn_repeats(console: Any, packets: list[Any], chosen: list[tuple[str, ...] | None]) -> None:
    """Say which rounds read tossups an earlier round read (a team would hear them again)."""
    seen: dict[tuple[str, str], int] = {}
    for number, (packet, ids) in enumerate(zip(packets, chosen, strict=True), start=1):
        tossup_ids = ids if ids is not None else tuple(t.id for t in packet.tossups)
        again = sorted(
            {seen[(packet.packet.id, t)] for t in tossup_ids if (packet.packet.id, t) in seen}
        )
        if again:
            earlier = ", ".join(str(r) for r in again)
            console.print(
                f"warning: round {number} reads tossups that round {earlier} read too: a team "
                "playing both hears them again (give a --packet or --tossups per round)",
                style="yellow",
                highlight=False,
            )
        for t in tossup_ids:
            seen.setdefault((packet.packet.id, t), number)


def _tossup_ids(packet, spec: str) -> tuple[str, ...] | None:
    """``all`` -> None (the whole packet); ``1-8`` / ``1,3,5`` -> those tossups' ids."""
    if spec.strip() in ("", "all"):
        return None
    from grace_arena.core.specs import parse_tossups

    return tuple(packet.tossups[i].id for i in parse_tossups(spec, len(packet.tossups)))


def _check_models(console, url: str, plan, packets) -> None:
    """Precompute the offline model where needed; say which other models still need it."""
    from grace_arena.model.precompute import ensure_precomputed
    from grace_arena.model.readiness import warn_if_cannot_play

    for t in plan.teams:
        if t.kind != "model" or not t.model:
            continue
        for p in {p.packet.id: p for p in packets}.values():
            try:
                ensure_precomputed(url, p, t.model)
            except LookupError:
                console.print(
                    f"[yellow]note:[/] {t.name} needs its guesses on {p.packet.id} before its "
                    f"matches: {command_prefix()} precompute --packet {p.path or p.packet.id} "
                    f"--model {t.model}",
                    soft_wrap=True,
                    highlight=False,
                )
            else:
                warn_if_cannot_play(console, url, t, p)


def _print_plan(console, plan) -> None:
    from rich.table import Table

    names = {t.id: t.name for t in plan.teams}
    console.print(f"event [bold]{plan.name}[/] — {plan.title}", highlight=False)
    rooms = Table("room", "join code", title="rooms", title_justify="left")
    for r in plan.rooms:
        rooms.add_row(r.name, r.join_code)
    console.print(rooms)
    games = Table("round", "room", "match", "status", title="schedule", title_justify="left")
    for g in sorted(plan.games, key=lambda g: (g.round, g.room_id is None, g.room_id, g.slot)):
        if g.bye:
            games.add_row(str(g.round), "-", f"{names.get(g.teams[0], g.teams[0])}: bye", "")
            continue
        status = (
            f"forfeited by {names.get(g.forfeit, g.forfeit)}"
            if g.forfeit is not None
            else "entered: " + "-".join(str(g.result["points"][t]) for t in g.teams)
            if g.result is not None
            else "not started"
            if g.match_id is None
            else f"match {g.match_id} ended"
            if g.ended
            else f"match {g.match_id} under way"
        )
        if g.carryover:
            status += " (carried over)"
        rnd = plan.round_(g.round)
        room = plan.room(g.room_id or "")
        games.add_row(
            f"{g.round} ({rnd.packet_id})" if rnd else str(g.round),
            room.name if room else "-",
            " vs ".join(names.get(t, t) for t in g.teams),
            status,
        )
    console.print(games)


@event_app.command("show")
def show(name: Annotated[str, typer.Argument(help="The event.")], db: DbOption = None) -> None:
    """The event's teams, players, rooms (with their join codes) and schedule."""
    from rich.table import Table

    from grace_arena.record.db import open_engine
    from grace_arena.record.schedule import load_plan
    from grace_arena.record.store import RecordError

    url = existing_db(db)
    console = _console()
    console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
    try:
        plan = load_plan(open_engine(url), name)
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    teams = Table("team", "name", "kind", "players", title="teams", title_justify="left")
    for t in plan.teams:
        kind = (
            f"model {t.model} @ {t.threshold if t.threshold is not None else 0.5}"
            if t.kind == "model"
            else "human"
        )
        members = ", ".join(p.name for p in plan.players if p.team == t.id)
        teams.add_row(t.id, t.name, kind, members)
    console.print(teams)
    if not plan.games:
        console.print(
            f"no schedule yet: {command_prefix()} event schedule {plan.name} --rooms N "
            "--packet ...",
            highlight=False,
            markup=False,
        )
        return
    _print_phases(console, plan)
    _print_plan(console, plan)


@event_app.command("standings")
def standings_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    json_out: Annotated[
        bool, typer.Option("--json", help="Print JSON instead of a table.")
    ] = False,
    phase: Annotated[
        str | None,
        typer.Option(
            "--phase",
            help="One phase's standings, pool by pool: its games and those carried over into "
            "it (a forfeit counts in W-L only).",
        ),
    ] = None,
    pool: Annotated[
        str | None, typer.Option("--pool", help="With --phase: only this pool.")
    ] = None,
    db: DbOption = None,
) -> None:
    """Won/lost, PPG, points per 20 tossups heard, PPB and buzzes per team, after every
    ruling so far (ranked by win %, then PPB, then P/20TUH). Without --phase, every game of
    the event counts once."""
    import json

    from grace_arena.record.db import open_engine
    from grace_arena.record.schedule import event_phase_standings, event_standings
    from grace_arena.record.store import RecordError

    if pool is not None and phase is None:
        raise typer.BadParameter("a pool is of a phase: give --phase too", param_hint="--pool")
    if phase is not None:
        from grace_arena.io.stats_report import SCORE_ONLY_NOTE, score_only_games
        from grace_arena.record.schedule import games_of_phase, pool_of_phase

        url = existing_db(db)
        try:
            plan, pools = event_phase_standings(open_engine(url), name, phase)
            _, only = pool_of_phase(plan, phase, pool)
        except RecordError as exc:
            raise _fail(str(exc)) from exc
        pools = [ps for ps in pools if only is None or ps.pool.id == only.id]
        if json_out:
            typer.echo(json.dumps(_phase_json(plan, pools), indent=2))
            return
        console = _console()
        console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
        names = {t.id: t.name for t in plan.teams}
        for ps in pools:
            scored = {g.id for g in score_only_games(plan)}
            notes = (
                (SCORE_ONLY_NOTE,)
                if any(g.id in scored for g in games_of_phase(plan, ps.phase, ps.pool))
                else ()
            )
            console.print(
                standings_table(
                    f"{plan.title}, {ps.phase.name}, {ps.pool.name}", ps.rows, notes=notes
                )
            )
            byes = _byes(plan, ps.phase)
            said = [
                f"{names[t]} (round {', '.join(map(str, byes[t]))})"
                for t in ps.pool.teams
                if t in byes
            ]
            if said:
                console.print(f"byes: {'; '.join(said)}", highlight=False, soft_wrap=True)
        return
    url = existing_db(db)
    try:
        plan, rows = event_standings(open_engine(url), name)
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    if json_out:
        from grace_arena.server.views import standings_view

        view = standings_view(plan.name, plan.title, len(plan.rounds), rows).model_dump(mode="json")
        for row, s in zip(view["rows"], rows, strict=True):  # the figures the view leaves out
            row.update(
                games=s.games,
                win_pct=s.win_pct,
                points_per_game=s.points_per_game,
                points_per_20_tuh=s.points_per_20_tuh,
                bounceback_conversion=s.bounceback_conversion,
            )
        typer.echo(json.dumps(view, indent=2))
        return
    from grace_arena.io.stats_report import SCORE_ONLY_NOTE, plan_rules, score_only_games

    console = _console()
    console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
    notes = (SCORE_ONLY_NOTE,) if score_only_games(plan) else ()
    console.print(standings_table(plan.title, rows, plan_rules(plan), notes))
    from grace_arena.io.stats_report import consult_points

    if (points := consult_points(plan)) is not None:
        console.print(
            f"bonuses under consult rules: a part scores {points[0]} alone, {points[1]} after "
            f"consulting, {points[2]} for a right abstention (PPB up to {points[0] * 3})",
            highlight=False,
        )


def _byes(plan: Any, phase: Any) -> dict[str, list[int]]:
    """Each team's rounds with a bye in ``phase`` (a bye is a game of one team)."""
    out: dict[str, list[int]] = {}
    for g in plan.games:
        if g.bye and g.phase_id == phase.id:
            out.setdefault(g.teams[0], []).append(g.round)
    return out


def _phase_json(plan: Any, pools: Any) -> dict[str, Any]:
    byes = _byes(plan, pools[0].phase) if pools else {}
    return {
        "event": plan.name,
        "phase": pools[0].phase.name if pools else None,
        "pools": [
            {
                "pool": ps.pool.name,
                "rows": [
                    {
                        "byes": byes.get(s.team, []),
                        "rank": s.rank,
                        "team": s.team,
                        "name": s.name,
                        "won": s.won,
                        "lost": s.lost,
                        "tied": s.tied,
                        "forfeits": s.forfeits,
                        "games": s.games,
                        "points": s.points,
                        "points_per_game": s.points_per_game,
                        "points_per_20_tuh": s.points_per_20_tuh,
                        "points_per_bonus": s.points_per_bonus,
                    }
                    for s in ps.rows
                ],
            }
            for ps in pools
        ],
    }


def _num(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "-"


def standings_table(
    title: str, rows, rules: ScoringRules | None = None, notes: tuple[str, ...] = ()
) -> Any:
    """The standings as a rich table that stays readable at 80 columns: W-L, PPG and points
    per 20 tossups heard always (matches may differ in length), PPB where bonuses were
    played, the answers by their points under ``rules`` ("15/10/-5"; "10/-5" without
    powers)."""
    from rich.table import Table

    from grace_arena.core.config import ScoringRules
    from grace_arena.io.stats_report import OVERTIME_NOTE, answer_columns, answer_counts

    rules = rules or ScoringRules()  # (GRACE's: 15/10/-5)

    overtime = any(s.overtime_tossups for s in rows)
    table = Table(
        title=f"{title}: standings",
        title_justify="left",
        pad_edge=False,
        caption=" ".join([*([OVERTIME_NOTE] if overtime else []), *notes]) or None,
        caption_justify="left",
    )
    bonuses = any(s.bonuses_heard for s in rows)  # PPB only where bonuses were played
    for header, justify in (
        ("#", "right"),
        ("team", "left"),
        ("W-L", "center"),
        ("pts", "right"),
        ("PPG", "right"),
        ("TUH", "right"),
        ("P/20TUH", "right"),
        *((("PPB", "right"),) if bonuses else ()),
        (answer_columns(rules)[0], "right"),
        ("live", "right"),
    ):
        table.add_column(header, justify=justify, no_wrap=header != "team")  # type: ignore[arg-type]
    for s in rows:
        record = f"{s.won}-{s.lost}" + (f"-{s.tied}" if s.tied else "")
        table.add_row(
            str(s.rank),
            s.name,
            record,
            str(s.points),
            _num(s.points_per_game),
            str(s.tossups_heard),
            _num(s.points_per_20_tuh),
            *((_num(s.points_per_bonus),) if bonuses else ()),
            answer_counts(rules, s.powers, s.correct, s.negs),
            str(s.live) if s.live else "",
        )
    return table


@event_app.command("stats")
def stats_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Write the printable stats report (one HTML page) here."),
    ] = None,
    phase: Annotated[
        str | None,
        typer.Option(
            "--phase",
            help="Only this phase: its games and those carried over into it (with --html, "
            "of one pool: --pool, unless the phase has one).",
        ),
    ] = None,
    pool: Annotated[
        str | None, typer.Option("--pool", help="With --phase: only this pool's teams.")
    ] = None,
    db: DbOption = None,
) -> None:
    """The event's statistics: standings and individuals in the terminal; with --html, the
    whole report (standings, individuals, games, team detail, question conversion). Games
    entered by their score and forfeits count in the standings and the games, and the
    players' lines entered with a score in the individuals (GP: tossups heard over those
    read, as YellowFruit counts games played). With --phase
    (and --pool), the report of that phase's (pool's) games."""
    from rich.table import Table

    from grace_arena.io.stats_report import (
        answer_columns,
        answer_counts,
        html_stats,
        load_event_stats,
        plan_rules,
    )
    from grace_arena.record.db import open_engine
    from grace_arena.record.store import RecordError

    if pool is not None and phase is None:
        raise typer.BadParameter("a pool is of a phase: give --phase too", param_hint="--pool")
    if phase is not None and html is None and pool is None:
        standings_cmd(name, json_out=False, phase=phase, pool=None, db=db)
        return
    url = existing_db(db)
    try:
        plan, stats, plays = load_event_stats(open_engine(url), name, phase=phase, pool=pool)
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    console = _console()
    console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
    if html is not None:
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text(html_stats(plan, stats, plays), encoding="utf-8")
        console.print(f"wrote {html}", soft_wrap=True, highlight=False, markup=False)
        return
    rules = plan_rules(plan)
    from grace_arena.io.stats_report import SCORE_ONLY_NOTE, score_only_games

    notes = (SCORE_ONLY_NOTE,) if score_only_games(plan) else ()
    console.print(standings_table(plan.title, stats.standings, rules, notes))
    names = {t.id: t.name for t in plan.teams}
    players = Table(title=f"{plan.title}: individuals", title_justify="left", pad_edge=False)
    answers = answer_columns(rules)[0]
    for header in ("player", "team", "GP", "TUH", answers, "pts", "P/20TUH"):
        players.add_column(header, justify="left" if header in ("player", "team") else "right")
    for p in stats.players:
        players.add_row(p.name, names.get(p.team, p.team), f"{p.games_played:.1f}",
                        str(p.tossups_heard),
                        answer_counts(rules, p.powers, p.powers + p.tens, p.negs), str(p.points),
                        _num(p.points_per_20_tuh))  # fmt: skip
    console.print(players)


# --------------------------------------------------------------------------------------------
# Phases: playoffs, tiebreakers, finals; games not played here

PacketsOption = Annotated[
    list[str],
    typer.Option(
        "--packet",
        help="A packet file (or the id of one in the record) for each round of the phase, in "
        "order (repeatable; the last one is used again).",
    ),
]
TossupsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tossups",
        help="The tossups of its packet each round reads: all, '1-8' or '1,3,5' (repeatable, "
        "one per round like --packet).",
    ),
]


def _phase_rounds(engine: Any, packet: list[str], tossups: list[str] | None) -> list[Any]:
    """The rounds' packets for a new phase (numbered by the record, after the event's)."""
    from grace_arena.record.schedule import RoundPlan

    packets = _load_packets(engine, packet, skip_broken=False)
    specs = tossups or ["all"]
    count = max(len(packets), len(specs))
    out = []
    for i in range(count):
        p = packets[min(i, len(packets) - 1)]
        try:
            ids = _tossup_ids(p, specs[min(i, len(specs) - 1)])
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--tossups") from exc
        out.append(RoundPlan(0, p.packet.id, ids))
    return out


def _open(name: str, db: str | None) -> tuple[Any, Any, Any]:
    from grace_arena.record.db import open_engine
    from grace_arena.record.schedule import load_plan
    from grace_arena.record.store import RecordError

    url = existing_db(db)
    console = _console()
    console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
    engine = open_engine(url)
    try:
        return engine, load_plan(engine, name), console
    except RecordError as exc:
        raise _fail(str(exc)) from exc


def _team_ids(plan: Any, given: list[str], option: str) -> list[str]:
    ids = []
    for team in given:
        found = _team_of(list(plan.teams), team)
        if found is None:
            raise _fail(f"{option} {team!r}: {_no_such_team(list(plan.teams), team)}", code=2)
        ids.append(found.id)
    return ids


def _tier(spec: str) -> Any:
    """``'Championship:3'`` or ``'Championship:3+2'`` (2 wild cards)."""
    from grace_arena.core.schedule import Tier

    found = re.fullmatch(r"\s*(?P<name>[^:]+?)\s*:\s*(?P<n>\d+)\s*(?:\+\s*(?P<w>\d+))?\s*", spec)
    if not found:
        raise typer.BadParameter(
            f"{spec!r}: expected NAME:PER_POOL or NAME:PER_POOL+WILD_CARDS, e.g. 'Upper:3+1'",
            param_hint="--tier",
        )
    return Tier(found["name"], int(found["n"]), int(found["w"] or 0))


@event_app.command("advance")
def advance_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    tier: Annotated[
        list[str],
        typer.Option(
            "--tier",
            help="A pool of the new phase: 'NAME:N' takes the next N teams of every pool of "
            "the phase before, 'NAME:N+W' W wild cards more (repeatable, best tier first).",
        ),
    ],
    packet: PacketsOption,
    phase_name: Annotated[str, typer.Option("--phase", help="The new phase's name.")] = "Playoffs",
    source: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="The phase whose standings seed it (default: the last prelim or playoff phase).",
        ),
    ] = None,
    seeding: Annotated[
        str,
        typer.Option(
            help="How teams of different pools are ordered (seeds and wild cards): "
            "rank-then-ppb (their place in their pool, then points per bonus) or "
            "record-then-ppb (win %, then points per bonus).",
        ),
    ] = "rank-then-ppb",
    carryover: Annotated[
        bool,
        typer.Option(
            help="Games of the phase before between teams of one new pool count in it, and "
            "those teams do not meet again (--no-carryover: each pool plays a round robin).",
        ),
    ] = True,
    tossups: TossupsOption = None,
    db: DbOption = None,
) -> None:
    """Bracket the next phase (playoffs) from the finish of the one before, once all its
    games are over: a pool per --tier, its teams in seed order; games carried over.

    Example: grace-arena event advance cup --tier Championship:3 --tier Consolation:3
    --packet round9.json
    """
    from grace_arena.core import schedule as pairing
    from grace_arena.record.schedule import advance_phase
    from grace_arena.record.store import RecordError

    method = seeding.replace("-", "_")
    if method not in pairing.SEEDINGS:
        raise typer.BadParameter(
            f"{seeding!r}: rank-then-ppb or record-then-ppb", param_hint="--seeding"
        )
    tiers = [_tier(t) for t in tier]
    engine, plan, console = _open(name, db)
    full = [p for p in plan.phases if p.kind in ("prelim", "playoff")]
    if source is None and not full:
        raise _fail(f"event {plan.name!r} has no phases: schedule it with --pools first")
    rounds = _phase_rounds(engine, packet, tossups)
    try:
        plan = advance_phase(
            engine,
            plan.name,
            source=source or full[-1].id,
            phase_id=_pool_id(phase_name, len(plan.phases)),
            phase_name=phase_name,
            tiers=tiers,
            packets=rounds,
            method=method,  # type: ignore[arg-type]
            carryover=carryover,
        )
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    _print_phases(console, plan)
    _print_plan(console, plan)


@event_app.command("tiebreaker")
def tiebreaker_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    team: Annotated[list[str], typer.Option("--team", help="A tied team (repeatable).")],
    packet: PacketsOption,
    tossups: TossupsOption = None,
    db: DbOption = None,
) -> None:
    """Tiebreaker games between teams that share a place at a cut (a round robin among them):
    its winners are placed first among them when the next phase is bracketed. A tiebreaker
    counts in no other standings."""
    from grace_arena.record.schedule import add_tiebreaker
    from grace_arena.record.store import RecordError

    engine, plan, console = _open(name, db)
    ids = _team_ids(plan, team, "--team")
    rounds = _phase_rounds(engine, packet, tossups)
    try:
        plan = add_tiebreaker(engine, plan.name, teams=ids, packet=rounds[0])
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    _print_phases(console, plan)
    _print_plan(console, plan)


@event_app.command("final")
def final_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    packet: PacketsOption,
    team: Annotated[
        list[str] | None,
        typer.Option(
            "--team",
            help="A finalist (twice; default: the first two of the last phase's first pool).",
        ),
    ] = None,
    advantage: Annotated[
        str | None,
        typer.Option(
            help="A double final: this team must be beaten twice (a second game is played if "
            "it loses the first; run `event final` again to schedule it)."
        ),
    ] = None,
    tossups: TossupsOption = None,
    db: DbOption = None,
) -> None:
    """The final: one game; with --advantage TEAM, a double final. Run again once the first
    game is over: a second game is scheduled if the advantaged team lost it."""
    from grace_arena.record.schedule import (
        add_final,
        event_phase_standings,
        final_state,
        next_final_game,
    )
    from grace_arena.record.store import RecordError

    engine, plan, console = _open(name, db)
    rounds = _phase_rounds(engine, packet, tossups)
    try:
        if plan.phase("finals") is not None:
            champion, another = final_state(engine, plan)
            if not another:
                console.print(
                    f"the final is won by {plan.team(champion).name}"
                    if champion
                    else "the final's game is not over yet",
                    highlight=False,
                )
                return
            plan = next_final_game(engine, plan.name, packet=rounds[0])
        else:
            if team:
                ids = _team_ids(plan, team, "--team")
            else:
                full = [p for p in plan.phases if p.kind in ("prelim", "playoff")]
                if not full:
                    raise _fail("name the finalists: --team A --team B", code=2)
                _, pools = event_phase_standings(engine, plan.name, full[-1].id)
                ids = [r.team for r in pools[0].rows[:2]]
            if len(ids) != 2:
                raise _fail("a final is between two teams: --team A --team B", code=2)
            favoured = _team_ids(plan, [advantage], "--advantage")[0] if advantage else None
            plan = add_final(
                engine,
                plan.name,
                teams=(ids[0], ids[1]),
                packet=rounds[0],
                advantaged=favoured,
            )
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    _print_phases(console, plan)
    _print_plan(console, plan)


def _game_of(plan: Any, round_: int, teams: list[str]) -> Any:
    from grace_arena.record.schedule import find_game
    from grace_arena.record.store import RecordError

    try:
        return find_game(plan, round_, teams)
    except RecordError as exc:
        raise _fail(str(exc)) from exc


@event_app.command("forfeit")
def forfeit_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    round_: Annotated[int, typer.Option("--round", min=1, help="The game's round.")],
    team: Annotated[str, typer.Option("--team", help="The team that forfeits.")],
    against: Annotated[str, typer.Option("--against", help="Its opponent, who wins.")],
    db: DbOption = None,
) -> None:
    """A team forfeits a scheduled game: its opponent wins; the game counts in won/lost and
    in nothing else (points, PPG, PPB leave it out, as YellowFruit does)."""
    from grace_arena.record.schedule import record_forfeit
    from grace_arena.record.store import RecordError

    engine, plan, console = _open(name, db)
    ids = _team_ids(plan, [team, against], "--team")
    game = _game_of(plan, round_, ids)
    try:
        record_forfeit(engine, plan.name, game, ids[0])
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    names = {t.id: t.name for t in plan.teams}
    console.print(f"round {round_}: {names[ids[0]]} forfeits to {names[ids[1]]}", highlight=False)


_PLAYER_LINE = re.compile(
    r"^(?P<team>[^:]+):(?P<name>[^:]+):(?P<p>\d+)/(?P<t>\d+)/(?P<n>\d+)(?:@(?P<tuh>\d+))?$"
)


@event_app.command("score")
def score_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    round_: Annotated[
        int | None,
        typer.Option("--round", min=1, help="The game's round (a match file may name it)."),
    ] = None,
    team: Annotated[
        list[str] | None,
        typer.Option("--team", help="A team and its final score: 'TEAM=POINTS' (twice)."),
    ] = None,
    from_file: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="A QBJ match file (MODAQ's, YellowFruit's): its teams' points, tossups read "
            "and players' answers, entered as the game's result (its round, if --round is "
            "not given, the file's _round).",
        ),
    ] = None,
    tuh: Annotated[
        int | None,
        typer.Option("--tuh", min=1, help="Tossups heard (default: the rules' regulation, or 20)."),
    ] = None,
    buzzes: Annotated[
        list[str] | None,
        typer.Option(
            "--buzzes",
            help="A team's tossups: 'TEAM=POWERS/TENS/NEGS' (repeatable); its bonus points are "
            "the rest of its score, and it heard a bonus for each tossup it answered.",
        ),
    ] = None,
    player: Annotated[
        list[str] | None,
        typer.Option(
            "--player",
            help="A player's line: 'TEAM:NAME:POWERS/TENS/NEGS[@TUH]' (repeatable): the team's "
            "buzzes are its players' sums.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """A game not played here, by its final score, with or without each team's or player's
    buzzes: it counts in the standings of its phase like a game played here (PPB where the
    buzzes are given). Figures that do not add up are refused and nothing is stored.

    Example: grace-arena event score cup --round 3 --team Red=310 --team Blue=120
    --buzzes Red=0/13/1 --buzzes Blue=0/6/2
    """

    engine, plan, console = _open(name, db)
    if from_file is not None:
        if team or buzzes or player:
            raise typer.BadParameter("give --from FILE or the scores, not both")
        round_, points, tuh, counts, players, source = _match_file(plan, from_file, round_)
        _enter_score(engine, plan, console, round_, points, tuh, counts, players, source)
        return
    if round_ is None or not team:
        raise typer.BadParameter("give --round N and each --team TEAM=POINTS (or --from FILE)")
    points: dict[str, int] = {}
    for spec in team:
        given, sep, value = spec.rpartition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise typer.BadParameter(f"{spec!r}: expected TEAM=POINTS", param_hint="--team")
        points[_team_ids(plan, [given], "--team")[0]] = int(value)
    counts: dict[str, dict[str, int]] = {}
    for spec in buzzes or []:
        given, sep, value = spec.rpartition("=")
        found = re.fullmatch(r"(\d+)/(\d+)/(\d+)", value.strip())
        if not sep or not found:
            raise typer.BadParameter(
                f"{spec!r}: expected TEAM=POWERS/TENS/NEGS", param_hint="--buzzes"
            )
        counts[_team_ids(plan, [given], "--buzzes")[0]] = dict(
            zip(("powers", "tens", "negs"), map(int, found.groups()), strict=True)
        )
    players = []
    for spec in player or []:
        found = _PLAYER_LINE.match(spec.strip())
        if not found:
            raise typer.BadParameter(
                f"{spec!r}: expected TEAM:NAME:POWERS/TENS/NEGS[@TUH]", param_hint="--player"
            )
        players.append(
            {
                "team": _team_ids(plan, [found["team"]], "--player")[0],
                "name": _name("--player", found["name"], 100),
                "powers": int(found["p"]),
                "tens": int(found["t"]),
                "negs": int(found["n"]),
                **({"tuh": int(found["tuh"])} if found["tuh"] else {}),
            }
        )
    _enter_score(engine, plan, console, round_, points, tuh, counts, players)


def _enter_score(engine, plan, console, round_, points, tuh, counts, players, source=None):
    from grace_arena.record.schedule import enter_result
    from grace_arena.record.store import RecordError

    game = _game_of(plan, round_, list(points))
    try:
        enter_result(
            engine, plan.name, game, points=points, tossups_heard=tuh, counts=counts,
            players=players, source=source,
        )  # fmt: skip
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    names = {t.id: t.name for t in plan.teams}
    said = ", ".join(f"{names[t]} {p}" for t, p in points.items())
    console.print(f"round {round_}: {said} (entered)", highlight=False)


def _match_file(plan: Any, path: Path, round_: int | None) -> tuple[Any, ...]:
    """A QBJ match file as an entered result: its teams found by name, each player's
    answers as powers, tens and negs by the event's rules."""
    from grace_arena.io.imports import QbjImportError, read_qbj_match
    from grace_arena.record.schedule import event_rules

    try:
        read = read_qbj_match(path)
    except (QbjImportError, OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    number = round_ or read.round
    if number is None:
        raise _fail(f"{path} names no round: give --round N", code=2)
    ids = {n: _team_ids(plan, [n], "--from")[0] for n in read.points}
    rules = event_rules(plan)
    kinds = {rules.power_points: "powers", rules.correct_points: "tens", rules.neg_points: "negs"}
    players, counts = [], {}
    for p in read.players:
        line: dict[str, Any] = {"team": ids[p["team"]], "name": p["name"]}
        if p.get("tuh") is not None:
            line["tuh"] = int(p["tuh"])
        for value, number_ in p["answers"].items():
            if value == 0 or not number_:
                continue
            kind = kinds.get(value)
            if kind is None:
                raise _fail(f"{path}: an answer worth {value} has no place in the event's "
                            "rules", code=2)  # fmt: skip
            line[kind] = line.get(kind, 0) + number_
        players.append(line)
        counts[ids[p["team"]]] = {"bonus_points": read.bonus_points[p["team"]]}
    points = {ids[n]: v for n, v in read.points.items()}
    source = None
    if read.questions:  # its cycles, each buzz's team by its id in the event
        questions = [
            {**q, "buzzes": [{**b, "team": {"id": ids[b["team"]["name"]]}} for b in q["buzzes"]]}
            for q in read.questions
        ]
        source = {"match_questions": questions, "packets": read.packets}
    return number, points, read.tossups_read, counts, players, source


def _print_phases(console: Any, plan: Any) -> None:
    from rich.table import Table

    if not plan.phases:
        return
    names = {t.id: t.name for t in plan.teams}
    table = Table("phase", "kind", "rounds", "pool", "teams", title="phases", title_justify="left")
    for ph in plan.phases:
        rounds = sorted({g.round for g in plan.games if g.phase_id == ph.id})
        span = f"{rounds[0]}-{rounds[-1]}" if len(rounds) > 1 else str(rounds[0]) if rounds else ""
        for i, pool in enumerate(ph.pools):
            table.add_row(
                ph.name if i == 0 else "",
                ph.kind if i == 0 else "",
                span if i == 0 else "",
                pool.name,
                ", ".join(names.get(t, t) for t in pool.teams),
            )
    console.print(table)


@event_app.command("bracket")
def bracket_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    packet: PacketsOption,
    team: Annotated[
        list[str] | None,
        typer.Option("--team", help="A team of the bracket, best seed first (repeatable)."),
    ] = None,
    top: Annotated[
        int | None,
        typer.Option(
            min=2,
            help="The bracket's teams: the first N of the last phase, seeded as `event "
            "advance` seeds (place in pool, then PPB).",
        ),
    ] = None,
    phase_name: Annotated[str, typer.Option("--phase", help="The phase's name.")] = "Bracket",
    tossups: TossupsOption = None,
    db: DbOption = None,
) -> None:
    """Single elimination: the first run makes the bracket (top seeds have byes when the
    field is not a power of two) and its first round; each later run, once the round's games
    are over, schedules the next round from its winners, until one team is left."""
    from grace_arena.core import schedule as pairing
    from grace_arena.record.schedule import (
        add_bracket,
        bracket_state,
        next_bracket_round,
        placed_in,
    )
    from grace_arena.record.store import RecordError

    engine, plan, console = _open(name, db)
    rounds = _phase_rounds(engine, packet, tossups)
    try:
        last = plan.phases[-1] if plan.phases else None
        if last is not None and last.meta.get("elimination") and not (team or top):
            _, winners = bracket_state(engine, plan)
            if winners is not None and len(winners) == 1:
                winner = plan.team(winners[0] or "")
                console.print(f"{last.name} is won by {winner.name if winner else winners[0]}")
                return
            plan = next_bracket_round(engine, plan.name, packet=rounds[0])
        else:
            if team:
                seeds = _team_ids(plan, team, "--team")
            elif top:
                full = [p for p in plan.phases if p.kind in ("prelim", "playoff")]
                if not full:
                    raise _fail("name the bracket's teams: --team A --team B ...", code=2)
                placed = placed_in(plan, engine, full[-1])
                ordered = sorted(placed, key=lambda p: (*pairing.seed_key(p, "rank_then_ppb"),
                                                        p.pool, p.team))  # fmt: skip
                seeds = [p.team for p in ordered[:top]]
            else:
                raise _fail("give the bracket's teams: --team A --team B ... or --top N", code=2)
            plan = add_bracket(
                engine, plan.name, seeds=seeds, packet=rounds[0], phase_name=phase_name
            )
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    _print_phases(console, plan)
    _print_plan(console, plan)


@event_app.command("cards")
def cards_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    packet: PacketsOption,
    rounds: Annotated[
        int | None,
        typer.Option(min=1, help="The first run: how many rounds the card schedule has."),
    ] = None,
    team: Annotated[
        list[str] | None,
        typer.Option("--team", help="A team of the phase, best seed first (repeatable)."),
    ] = None,
    top: Annotated[
        int | None,
        typer.Option(
            min=2,
            help="The phase's teams: the first N of the last phase, seeded as `event advance` "
            "seeds (place in pool, then PPB).",
        ),
    ] = None,
    phase_name: Annotated[str, typer.Option("--phase", help="The phase's name.")] = "Cards",
    tossups: TossupsOption = None,
    db: DbOption = None,
) -> None:
    """NAQT's card system (its High School National Championship Tournament): each team holds
    a numbered card, the winner of a game takes the card nearer #1 and the loser the other,
    and a card schedule fixed at the start says which cards meet in each round, so that two
    teams meet only when their records are within one win. The first run deals the cards
    (the i-th seed of the top half meets the i-th of the bottom half first) and schedules
    round 1; each later run, once the round's games are over, passes the cards and schedules
    the next round.

    Example: grace-arena event cards cup --top 8 --rounds 3 --packet round6.json
    """
    from grace_arena.core import schedule as pairing
    from grace_arena.record.schedule import (
        add_card_phase,
        card_state,
        next_card_round,
        placed_in,
    )
    from grace_arena.record.store import RecordError

    engine, plan, console = _open(name, db)
    phase_rounds = _phase_rounds(engine, packet, tossups)
    try:
        last = plan.phases[-1] if plan.phases else None
        if last is not None and last.meta.get("cards") and not (team or top):
            state = card_state(engine, plan)
            if state.done:
                _print_cards(console, plan, state)
                console.print(f"{last.name} has played its {len(state.schedule)} rounds")
                return
            plan = next_card_round(engine, plan.name, packet=phase_rounds[0])
        else:
            if rounds is None:
                raise _fail("give the card schedule's number of rounds: --rounds N", code=2)
            if team:
                seeds = _team_ids(plan, team, "--team")
            elif top:
                full = [p for p in plan.phases if p.kind in ("prelim", "playoff")]
                if not full:
                    raise _fail("name the phase's teams: --team A --team B ...", code=2)
                placed = placed_in(plan, engine, full[-1])
                ordered = sorted(placed, key=lambda p: (*pairing.seed_key(p, "rank_then_ppb"),
                                                        p.pool, p.team))  # fmt: skip
                seeds = [p.team for p in ordered[:top]]
            else:
                raise _fail("give the phase's teams: --team A --team B ... or --top N", code=2)
            plan = add_card_phase(
                engine,
                plan.name,
                seeds=seeds,
                rounds=rounds,
                packet=phase_rounds[0],
                phase_name=phase_name,
            )
        state = card_state(engine, plan)
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    _print_phases(console, plan)
    _print_plan(console, plan)
    _print_cards(console, plan, state)


def _print_cards(console: Any, plan: Any, state: Any) -> None:
    from rich.table import Table

    names = {t.id: t.name for t in plan.teams}
    console.print(
        f"{state.phase.name}: cards after {state.played} of {len(state.schedule)} rounds "
        "(a winner takes the card nearer #1)",
        highlight=False,
        soft_wrap=True,
    )
    table = Table("card", "team")
    for card, team in state.holders.items():
        table.add_row(str(card), names.get(team, team))
    console.print(table)
