"""``grace-arena serve``: the game server for phones, laptops, displays and the moderator."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

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
    check_packets,
    consult_settings,
    existing_db,
    format_settings,
    given_secret,
    redacted,
    resolve_db,
    secret_help,
    timed_halves_settings,
)
from grace_arena.cli.root import app

# The join URL's base is chosen by the server's LAN module; `serve`, `survey serve` and the
# demo print it.
from grace_arena.server.http_limits import MAX_PER_ADDRESS
from grace_arena.server.lan import public_base


def print_join(console, url: str, code: str, moderator_token: str, match_id: int) -> None:
    import segno

    console.print(f"match {match_id} — join code [bold]{code}[/]", highlight=False)
    console.print(f"players join at: {url}", soft_wrap=True, highlight=False)
    console.print(f"moderator token: {moderator_token}", soft_wrap=True, highlight=False)
    qr = segno.make(url, error="m")
    import io

    out = io.StringIO()
    qr.terminal(out=out, compact=True, border=2)
    console.print(out.getvalue(), highlight=False, markup=False, soft_wrap=True)


async def print_room(console, arena, events, er) -> None:
    """One room of an event: who plays there now, its join URL and QR, its moderator token."""
    live = events.live(er)
    if live is None:
        why = er.waiting or ("every match played" if er.done else "served by another process")
        console.print(f"room {er.name}: {why}", highlight=False)
        return
    teams = " vs ".join(t.name for t in live.match.config.teams)
    console.print(
        f"\nroom [bold]{er.name}[/] — round {live.event.round if live.event else '?'}: {teams}",
        highlight=False,
    )
    token = await events.moderator_token(er)
    print_join(console, arena.join_url(er.join_code), er.join_code, token, live.rm.id)

    console.print(
        f"moderator: {moderate_command(arena.client_base, token, '--room', er.join_code)}",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )
    console.print(
        f"projector: {projector_url(arena.settings.public_url, events, er)}",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )


def projector_url(public: str, events, er) -> str:
    """The room's display with its grant (``token``): while another room of the event has yet
    to read what this room reads, its code alone does not open its display."""
    base = f"{public.rstrip('/')}/display"
    if er is None:
        return base
    return f"{base}?code={er.join_code}&token={events.tokens.display(er.event_id, er.room_id)}"


def moderate_command(server: str, token: str, *args: str) -> str:
    """The command that moderates with ``token``, the token in the environment of the command
    (``GRACE_ARENA_TOKEN=...``): a command's arguments are shown to every user by ``ps``."""
    from grace_arena.resources import command_prefix

    words = [command_prefix(), "moderate", "--server", shlex.quote(server), *args]
    return f"GRACE_ARENA_TOKEN={shlex.quote(token)} {' '.join(words)}"


def _check_port_free(host: str, port: int) -> None:
    """Say so plainly when another program listens on the port (a server already running)."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            s.bind((host, port))
        except OSError as exc:
            why = "is in use (another server?)" if exc.errno == errno.EADDRINUSE else str(exc)
            typer.echo(
                f"error: cannot listen on {host}:{port}: the port {why}; choose another with "
                "--port",
                err=True,
            )
            raise typer.Exit(1) from None


def _check_event(url: str, name: str, rooms: list[str] | None) -> None:
    """The event is in the record, has a schedule and the rooms asked for: else one line
    (the server would fail to start, in a traceback)."""
    import difflib

    from grace_arena.record.db import open_engine
    from grace_arena.record.schedule import load_plan
    from grace_arena.record.store import MatchStore, RecordError

    engine = open_engine(url)
    try:
        try:
            plan = load_plan(engine, name)
        except RecordError:
            names = [e.name for e in MatchStore(engine).events_of_record()]
            close = difflib.get_close_matches(name, names, n=2, cutoff=0.6)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            listed = ", ".join(names) or "none"
            typer.echo(
                f"error: no event {name!r} in {redacted(url)} (events: {listed}){hint}", err=True
            )
            raise typer.Exit(1) from None
        if not plan.rooms:
            typer.echo(
                f"error: event {plan.name!r} has no schedule yet: grace-arena event schedule "
                f"{plan.name} --rooms N --packet PACKET",
                err=True,
            )
            raise typer.Exit(1)
        unknown = [r for r in rooms or [] if plan.room(r) is None]
        if unknown:
            have = ", ".join(r.name for r in plan.rooms)
            typer.echo(
                f"error: event {plan.name!r} has no room {', '.join(unknown)} (rooms: {have})",
                err=True,
            )
            raise typer.Exit(1)
        _check_event_models(engine, url, plan)
    finally:
        engine.dispose()


def _check_event_models(engine, url: str, plan) -> None:
    """Every model team of a match still to play has its guesses on its round's packet (the
    offline model's are made here, as the server would): else one line with the command
    that makes them, rather than a server that fails to start."""
    from grace_arena.model.precompute import ensure_precomputed
    from grace_arena.record.packets import packet_from_record
    from grace_arena.resources import command_prefix

    models = {t.id: t for t in plan.teams if t.kind == "model"}
    needed: dict[tuple[str, str], str] = {}  # (model, packet id) -> the team's name
    for game in plan.games:
        rnd = plan.round_(game.round)
        if game.ended or game.bye or rnd is None:
            continue
        for team_id in game.teams:
            team = models.get(team_id)
            if team is not None:
                needed.setdefault((team.model or "tfidf", rnd.packet_id), team.name)
    from grace_arena.model.readiness import team_warning

    warned: set[tuple[str, str]] = set()
    for (model, packet_id), name in needed.items():
        try:
            ensure_precomputed(url, packet_from_record(engine, packet_id), model)
        except LookupError:
            typer.echo(
                f"error: {name} (model {model}) has no guesses on packet {packet_id!r} yet: "
                f"{command_prefix()} precompute --packet PACKET --model {model} --db "
                f"{shlex.quote(redacted(url))}",
                err=True,
            )
            raise typer.Exit(1) from None
    for game in plan.games:  # a model that would (almost) never buzz there: said, with the cure
        rnd = plan.round_(game.round)
        if game.ended or game.bye or rnd is None:
            continue
        for team in (models[t] for t in game.teams if t in models):
            if (team.id, rnd.packet_id) not in warned:
                warned.add((team.id, rnd.packet_id))
                warning = team_warning(
                    engine, team, rnd.packet_id, rnd.tossup_ids, command=command_prefix()
                )
                if warning is not None:
                    typer.echo(f"warning: {warning}", err=True)


@app.command("serve")
def serve(
    ctx: typer.Context,
    db: DbOption = None,
    host: Annotated[
        str, typer.Option(help="Address to listen on (0.0.0.0: the whole LAN).")
    ] = "0.0.0.0",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    packet: Annotated[
        list[Path] | None, typer.Option("--packet", help="Packet file to load (repeatable).")
    ] = None,
    match: Annotated[
        bool, typer.Option(help="Open a match on the first packet right away (teams Red, Blue).")
    ] = True,
    model: Annotated[
        str | None,
        typer.Option(
            help="Add this precomputed model as a team ('tfidf': offline; default: tfidf in "
            "GRACE's game, none with --rules acf/pace/naqt, whose matches are two teams)."
        ),
    ] = None,
    secret: Annotated[
        str | None,
        typer.Option(
            envvar="GRACE_ARENA_SECRET",
            help=secret_help(
                "Secret that signs tokens (default: random).",
                "GRACE_ARENA_SECRET",
                "--secret-file",
            ),
        ),
    ] = None,
    secret_file: Annotated[
        Path | None,
        typer.Option(
            help="A file whose first line is the secret that signs tokens (kept from ps).",
            dir_okay=False,
        ),
    ] = None,
    public_url: Annotated[
        str | None,
        typer.Option(help="URL players use to reach this server (default: LAN address)."),
    ] = None,
    proxy: Annotated[
        str | None,
        typer.Option(
            "--proxy",
            help="The event's one address, a proxy in front of every process of the record "
            "(grace-arena proxy run): join URLs and QR codes give it, and a client whose room "
            "moves is sent back to it; this process's own address (--public-url) is kept in "
            "the record for the proxy. Trusts X-Forwarded-For from this machine unless "
            "--trust-proxy names the proxy's address.",
        ),
    ] = None,
    max_players: Annotated[
        int, typer.Option(min=1, help="Players one match takes; later joins are refused.")
    ] = 200,
    max_connections_per_address: Annotated[
        int,
        typer.Option(min=1, help="Websockets open at once from one address (a club's router)."),
    ] = 300,
    new_names_per_address: Annotated[
        int,
        typer.Option(
            min=1,
            help="New player names (walk-ins) one address may add to an event; a name of "
            "the roster, or one typed before, is not new.",
        ),
    ] = 40,
    max_http_connections_per_address: Annotated[
        int,
        typer.Option(
            min=1,
            help="HTTP connections open at once from one address (pages, the API; a request "
            "must arrive within 10 s of its connection). A club's 300 phones behind one router "
            "stay far below.",
        ),
    ] = MAX_PER_ADDRESS,
    trust_proxy: Annotated[
        list[str] | None,
        typer.Option(
            "--trust-proxy",
            help="A reverse proxy or tunnel in front of the server, by its address or network "
            "(repeatable): its X-Forwarded-For and X-Forwarded-Proto headers give the client's "
            "address. Default: none, and the headers are ignored (anyone can write them).",
        ),
    ] = None,
    event: Annotated[
        str | None,
        typer.Option(
            help="Serve the rooms of this event (grace-arena event schedule): each room plays "
            "its matches one after another; no match of its own is opened."
        ),
    ] = None,
    room: Annotated[
        list[str] | None,
        typer.Option(
            "--room",
            help="With --event: serve these rooms (repeatable; default: every room that no "
            "other server process sharing the record serves). A room of the event whose server "
            "process dies is taken over by the others all the same.",
        ),
    ] = None,
    lease_ttl: Annotated[
        float,
        typer.Option(
            min=1.0,
            max=3600.0,
            help="Seconds without a word from a server process after which another one "
            "sharing the record takes its matches over (a process on this machine known to "
            "be dead loses them at once).",
        ),
    ] = 15.0,
    max_press_credit: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Compensated races: the most a press may be credited before its arrival, "
            "in seconds (a slow Wi-Fi round trip).",
        ),
    ] = 0.1,
    game_format: FormatOption = None,
    bouncebacks: BouncebacksOption = None,
    consult: ConsultOption = None,
    consult_points: ConsultPointsOption = None,
    timed_halves: TimedHalvesOption = None,
    phone_protests: PhoneProtestsOption = False,
    pre_answer: PreAnswerOption = None,
    ai: Annotated[
        list[str] | None,
        typer.Option(
            "--ai",
            help="QANTA 2026 (with --rules qanta26): an AI player of team red or blue, "
            "TEAM=MODEL or TEAM=MODEL:WEIGHTCLASS, its outputs in the record (model import; "
            "the weight class it was imported with by default). Repeatable.",
            show_default=False,
        ),
    ] = None,
    skip_broken_questions: SkipBrokenOption = False,
    reading_mode: Annotated[
        str,
        typer.Option(
            help="The first match's reading: read_aloud (the moderator reads; players answer "
            "out loud) or screen (the text on the phones; answers typed)."
        ),
    ] = "read_aloud",
    answer_time: Annotated[
        float | None,
        typer.Option(
            help="Seconds a player has to answer after buzzing (default: 10 on screen; none "
            "read aloud, where the moderator rules)."
        ),
    ] = None,
    exhibition: Annotated[
        bool,
        typer.Option(
            "--exhibition",
            help="The first match is an exhibition: the room display draws each model "
            "player's confidence live, as the words are read (players who see it know when "
            "a model is about to buzz). Without it, the trajectory appears once each tossup "
            "has ended.",
        ),
    ] = False,
    voice: Annotated[
        bool,
        typer.Option(
            "--voice",
            help="The first match is read aloud by the server's voice (espeak-ng: apt-get "
            "install espeak-ng) on the room display, each word shown as it is said. Without "
            "espeak-ng the words are shown at the reading pace and the display says why.",
        ),
    ] = False,
) -> None:
    """Run the game server: buzzer page at /, projector display at /display, websocket at /ws."""
    from pydantic import ValidationError
    from rich.console import Console

    from grace_arena.core.packet import SAMPLE_PACKET_PATH
    from grace_arena.protocol import MatchSetup, TeamSetup
    from grace_arena.server.app import HttpLimits, Settings, create_app, run

    console = Console()
    secret = given_secret(
        ctx,
        secret,
        secret_file,
        param="secret",
        option="--secret",
        envvar="GRACE_ARENA_SECRET",
        file_option="--secret-file",
    )
    try:
        limits = HttpLimits(
            max_per_address=max_http_connections_per_address,
            trusted_proxies=tuple(trust_proxy or (("127.0.0.1", "::1") if proxy else ())),
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--trust-proxy") from None
    _check_port_free(host, port)
    # An event is in a record that exists: a mistyped file is named, and none is made.
    url = existing_db(db) if event is not None else resolve_db(db)
    if event is not None:
        _check_event(url, event, room)
    console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
    packets = packet or [SAMPLE_PACKET_PATH]
    loaded = check_packets(packets, skip_broken=skip_broken_questions)
    own = public_base(console, host, port, public_url)  # kept in the record
    public = proxy.rstrip("/") if proxy else own  # given to clients
    if proxy:
        console.print(f"behind the proxy {public}; this process: {own}", highlight=False)
    first = None
    if match and event is None:
        teams = [TeamSetup(id="red", name="Red", ais=_ais_of(ai, "red")),
                 TeamSetup(id="blue", name="Blue", ais=_ais_of(ai, "blue"))]  # fmt: skip
        settings = format_settings(game_format, bouncebacks)
        settings.update(consult_settings(consult, consult_points, pre_answer))
        settings.update(timed_halves_settings(timed_halves, game_format))
        if phone_protests:
            settings["phone_protests"] = True
        if consult and "format" not in settings:
            settings["format"] = "acf"  # consult rules go with ACF's
        if model is None:  # a quizbowl format's match is two teams; GRACE's has the model
            model = "" if settings.get("format", "grace") != "grace" else "tfidf"
            if not model:
                console.print(
                    "note: two teams, Red and Blue (--model tfidf adds the offline model player)",
                    highlight=False,
                )
        if model:
            try:
                teams.append(
                    TeamSetup(id="model", name=f"Model ({model})", kind="model", model=model)
                )
            except ValidationError as exc:
                message = exc.errors()[0]["msg"]
                raise typer.BadParameter(f"{model!r}: {message}", param_hint="--model") from None
        if reading_mode not in ("read_aloud", "screen"):
            raise typer.BadParameter(
                f"{reading_mode!r}: read_aloud or screen", param_hint="--reading-mode"
            )
        settings["reading_mode"] = reading_mode
        if answer_time is not None:
            settings["answer_time"] = answer_time
        if exhibition:
            settings["exhibition"] = True
        if voice:
            settings["voice"] = True
        try:
            first = MatchSetup(packet_id=loaded[0].packet.id, teams=teams, **settings)
        except ValidationError as exc:
            error = exc.errors()[0]
            option = "--" + str(error["loc"][0]).replace("_", "-")
            raise typer.BadParameter(error["msg"], param_hint=option) from None
        from grace_arena.core.config import ScoringRules
        from grace_arena.core.formats import describe, rules_for

        rules = (
            rules_for(first.format, **first.scoring())
            if first.format
            else ScoringRules(**first.scoring())
        )
        console.print(f"rules: {describe(rules)}", highlight=False)
        _check_ais(url, loaded[0], teams)
        n_tossups = len(loaded[0].tossups)
        if rules.regulation_tossups and n_tossups < rules.regulation_tossups:
            skipped = loaded[0].skipped_counts()
            console.print(
                f"note: the match has {n_tossups} tossups"
                + (f" ({skipped})" if skipped else "")
                + f", fewer than the {rules.regulation_tossups} of the rules: it ends after "
                f"tossup {n_tossups}",
                highlight=False,
            )
        if bouncebacks and (model or consult):
            why = "three teams play" if model else "consult rules have none"
            console.print(
                f"note: bouncebacks are played between two teams only, without consult rules: "
                f"none will be ({why})",
                highlight=False,
            )

    for given, option in ((model, "--model"), (consult, "--consult")):
        if given:  # well formed (above): a model a match can play?
            check_model(given, url, what=f"{option} {given!r}")

    async def ready(arena, events) -> None:
        console.print(
            f"server token (for the moderator's set-up): {events.tokens.server()}", soft_wrap=True
        )
        console.print(
            "TD token (protests: grace-arena protest resolve with GRACE_ARENA_TD_TOKEN, or "
            f"GET/POST /api/matches/ID/protests): {events.tokens.td()}",
            soft_wrap=True,
        )
        for er in events.event_rooms():
            await print_room(console, arena, events, er)
        for live in list(arena.rooms.values()):
            if live.event is not None:
                continue
            reply = arena.created_reply(live, await events.match_moderator_token(live.rm.id))
            print_join(
                console, reply.join_url, reply.join_code, reply.moderator_token, reply.match_id
            )
            command = moderate_command(
                public, reply.moderator_token, "--match", str(reply.match_id)
            )
            console.print(
                f"moderator: {command}\n"
                f"projector: {projector_url(public, events, events.room_of(live))}",
                soft_wrap=True,
                highlight=False,
                markup=False,
            )
            import asyncio

            from grace_arena.model.readiness import match_warnings
            from grace_arena.resources import command_prefix

            config = live.rm.match.state.config
            warnings = await asyncio.to_thread(
                match_warnings, arena.engine, config, command=command_prefix()
            )
            for warning in warnings:
                console.print(f"warning: {warning}", soft_wrap=True, highlight=False, markup=False)
        if event is not None:
            console.print(
                f"standings on a projector: {public.rstrip('/')}/display?event={event}"
                f"&token={events.tokens.display(next(iter(events.served)))}",
                soft_wrap=True,
                highlight=False,
            )
        console.print(f"listening on {public} — Ctrl+C stops", soft_wrap=True, highlight=False)

    settings = Settings(
        db_url=url,
        packets=packets,
        secret=secret,
        public_url=own,
        proxy_url=public if proxy else None,
        first_match=first,
        on_ready=ready,
        freeze_gc=True,
        max_players_per_match=max_players,
        max_connections_per_address=max_connections_per_address,
        new_names_per_address=new_names_per_address,
        event=event,
        event_rooms=room,
        skip_broken_questions=skip_broken_questions,
        lease_ttl=lease_ttl,
        max_press_credit=max_press_credit,
    )
    run(create_app(settings), host=host, port=port, limits=limits)


def _ais_of(given: list[str] | None, team: str) -> list:
    """``--ai TEAM=MODEL[:WEIGHTCLASS]`` for one team (a hybrid team's AI players)."""
    from pydantic import ValidationError

    from grace_arena.protocol import AiSetup

    found = []
    for spec in given or []:
        who, _, what = spec.partition("=")
        model, _, weight = what.partition(":")
        if who not in ("red", "blue") or not model:
            raise typer.BadParameter(f"{spec!r}: red=MODEL or blue=MODEL[:WEIGHTCLASS]",
                                     param_hint="--ai")  # fmt: skip
        if who != team:
            continue
        try:
            found.append(AiSetup(model=model, name=model, weight_class=weight or None))
        except ValidationError:
            raise typer.BadParameter(
                f"{spec!r}: the weight class is lightweight, midweight or heavyweight",
                param_hint="--ai",
            ) from None
    return found


def _check_ais(url: str, packet, teams: list) -> None:
    """Every ``--ai`` model is in the record on the packet, with a weight class: else say so
    and exit (before a server starts)."""
    if not any(t.ais for t in teams):
        return
    from grace_arena.model.hybrid import ai_player
    from grace_arena.record.db import open_engine, upgrade

    upgrade(url)
    engine = open_engine(url)
    try:
        for team in teams:
            for a in team.ais:
                try:
                    ai_player(engine, a.model, packet, player_id=a.model,
                              weight_class=a.weight_class)  # fmt: skip
                except (LookupError, ValueError) as exc:
                    raise typer.BadParameter(str(exc), param_hint="--ai") from None
    finally:
        engine.dispose()
