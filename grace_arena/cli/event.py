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
    check_model,
    consult_settings,
    existing_db,
    format_settings,
    redacted,
    resolve_db,
)
from grace_arena.cli.root import app
from grace_arena.resources import command_prefix

if TYPE_CHECKING:
    from grace_arena.core.config import ScoringRules

event_app = command_group(
    help="Run an event: teams, rounds and rooms, a schedule of matches, standings.",
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
    db: DbOption = None,
    game_format: FormatOption = None,
    bouncebacks: BouncebacksOption = None,
    consult: ConsultOption = None,
    consult_points: ConsultPointsOption = None,
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
                **({"format": "acf"} if consult and game_format is None else {}),
                **format_settings(game_format, bouncebacks),
                **consult_settings(consult, consult_points),
            }
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        option = "--" + str(error["loc"][0]).replace("_", "-")
        raise typer.BadParameter(error["msg"], param_hint=option) from None
    entries: list[TeamEntry] = []
    for human in team or []:
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
        )
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    console.print(
        f"event [bold]{plan.name}[/]: {len(plan.teams)} teams, {len(plan.players)} players",
        highlight=False,
    )
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
    db: DbOption = None,
) -> None:
    """Pair the teams in rounds and rooms, a packet per round. Refused once a round started."""
    from grace_arena.core import schedule as pairing
    from grace_arena.core.packet import PacketError, load_packet
    from grace_arena.record.db import open_engine
    from grace_arena.record.schedule import RoundPlan, load_plan, set_schedule
    from grace_arena.record.store import MatchStore, RecordError

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
    # packets: files are loaded into the record; anything else names a packet already there
    store = MatchStore(engine)
    packets = []
    for given in packet:
        path = Path(given)
        if path.exists():
            try:
                loaded = load_packet(path)
            except PacketError as exc:
                raise _fail(str(exc)) from exc
            store.save_packet(loaded, source=path)
            packets.append(loaded)
        else:
            from grace_arena.record.packets import packet_from_record

            try:
                packets.append(packet_from_record(engine, given))
            except LookupError as exc:
                raise _fail(f"--packet {given}: no such file, and {exc}") from exc
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
        )
    except (pairing.ScheduleError, RecordError) as exc:
        raise _fail(str(exc)) from exc
    for line in pairing.crowded_rounds(games, room_names):
        console.print(f"[yellow]note:[/] {line}", soft_wrap=True, highlight=False)
    _check_models(console, url, plan, per_round)
    _print_plan(console, plan)


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
            "not started"
            if g.match_id is None
            else f"match {g.match_id} ended"
            if g.ended
            else f"match {g.match_id} under way"
        )
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
    _print_plan(console, plan)


@event_app.command("standings")
def standings_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    json_out: Annotated[
        bool, typer.Option("--json", help="Print JSON instead of a table.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Won/lost, PPG, points per 20 tossups heard, PPB and buzzes per team, after every
    ruling so far (ranked by win %, then PPB, then P/20TUH)."""
    import json

    from grace_arena.record.db import open_engine
    from grace_arena.record.schedule import event_standings
    from grace_arena.record.store import RecordError

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
    from grace_arena.io.stats_report import plan_rules

    console = _console()
    console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
    console.print(standings_table(plan.title, rows, plan_rules(plan)))
    from grace_arena.io.stats_report import consult_points

    if (points := consult_points(plan)) is not None:
        console.print(
            f"bonuses under consult rules: a part scores {points[0]} alone, {points[1]} after "
            f"consulting, {points[2]} for a right abstention (PPB up to {points[0] * 3})",
            highlight=False,
        )


def _num(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "-"


def standings_table(title: str, rows, rules: ScoringRules | None = None) -> Any:
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
        caption=OVERTIME_NOTE if overtime else None,
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
    db: DbOption = None,
) -> None:
    """The event's statistics: standings and individuals in the terminal; with --html, the
    whole report (standings, individuals, games, team detail, question conversion)."""
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

    url = existing_db(db)
    try:
        plan, stats, plays = load_event_stats(open_engine(url), name)
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
    console.print(standings_table(plan.title, stats.standings, rules))
    names = {t.id: t.name for t in plan.teams}
    players = Table(title=f"{plan.title}: individuals", title_justify="left", pad_edge=False)
    answers = answer_columns(rules)[0]
    for header in ("player", "team", "GP", "TUH", answers, "pts", "P/20TUH"):
        players.add_column(header, justify="left" if header in ("player", "team") else "right")
    for p in stats.players:
        players.add_row(p.name, names.get(p.team, p.team), str(p.games), str(p.tossups_heard),
                        answer_counts(rules, p.powers, p.powers + p.tens, p.negs), str(p.points),
                        _num(p.points_per_20_tuh))  # fmt: skip
    console.print(players)
