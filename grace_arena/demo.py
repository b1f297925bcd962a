"""A scripted match in the terminal: the engine, the judge and the record working together.

Two scripted human teams listen to the sample packet. Each knows some answers (and buzzes
somewhere in the second half of the question) and sometimes guesses early and wrong. The
moderator's rulings follow the automatic judge's suggestion. Every command goes through the
record, exactly as the server will drive it.
"""

from __future__ import annotations

import random
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from grace_arena.core.commands import (
    Buzz,
    EndMatch,
    GiveAnswer,
    Join,
    Reveal,
    Rule,
    StartTossup,
    TimeUp,
)
from grace_arena.core.config import ScoringRules, TeamSpec, TossupSpec
from grace_arena.core.events import BuzzAccepted, Event, Ruled, Ruling, TossupEnded
from grace_arena.core.judge import parse_answer_line
from grace_arena.core.packet import Packet, load_packet
from grace_arena.core.phases import HAS_FLOOR, Phase
from grace_arena.core.specs import match_config
from grace_arena.record.db import open_engine
from grace_arena.record.db import redacted_url as redacted
from grace_arena.record.store import MatchStore, RecordedMatch
from moderator_tui.widgets import answer_markup


@dataclass(frozen=True)
class ScriptedBuzz:
    team: str
    player: str
    word_index: int
    answer: str


def plan_buzzes(spec: TossupSpec, teams: list[str], wrong: list[str], rng: random.Random):
    """Where each scripted team buzzes on a tossup, and what it answers."""
    main = parse_answer_line(spec.answer).main
    plan: list[ScriptedBuzz] = []
    for team in teams:
        n = spec.n_words
        if rng.random() < 0.55:  # knows it: buzzes in the second half
            plan.append(ScriptedBuzz(team, f"{team}-1", rng.randrange(n // 2, n), main))
        elif rng.random() < 0.4 and wrong:  # guesses early, and wrong
            plan.append(
                ScriptedBuzz(team, f"{team}-1", rng.randrange(n // 5, n // 2), rng.choice(wrong))
            )
    return sorted(plan, key=lambda b: b.word_index)


def _render(packet: Packet, rm: RecordedMatch, tossup_id: str | None, banner: str) -> Group:
    game = rm.match.game
    parts = []
    if tossup_id is not None:
        tossup = packet.tossup(tossup_id)
        tokens = tossup.tokens()
        text = Text()
        for i, word in enumerate(tokens.words[: game.position + 1]):
            if tokens.power_index is not None and i == tokens.power_index:
                text.append("(*) ", style="bold magenta")
            style = "bold" if word.clue % 2 == 0 else "cyan"
            text.append(word.text + " ", style=style)
        title = f"{tossup.category} — {tossup.id} — word {game.position + 1}/{len(tokens.words)}"
        answer = Text.assemble("ANSWER: ", answer_markup(tossup.answer))
        parts.append(Panel(text, title=title, subtitle=answer))
    if banner:
        parts.append(Text(banner, style="bold yellow"))
    scores = Table(title="Scores", show_header=True)
    for team in rm.match.config.teams:
        scores.add_column(team.name, justify="right")
    scores.add_row(*(str(game.scores[t.id]) for t in rm.match.config.teams))
    parts.append(scores)
    return Group(*parts)


#: How a tossup ended, in words (a throw-out's reason is the moderator's own).
ENDINGS = {
    "correct_answer": "answered correctly",
    "all_locked_out": "every team answered incorrectly",
    "no_rebuzz": "no second buzz on this tossup",
    "time_up": "time ran out",
}


def _describe(events: list[Event]) -> str:
    lines = []
    for ev in events:
        if isinstance(ev, BuzzAccepted):
            lines.append(
                f"BUZZ {ev.team} ({ev.player}) at word {ev.word_index}, clue {ev.clue_index}: "
                f"{ev.answer!r} — judge suggests {ev.suggestion}"
            )
        elif isinstance(ev, Ruled):
            lines.append(f"{ev.ruling.upper()} → {ev.points:+d} for {ev.team}")
        elif isinstance(ev, TossupEnded):
            lines.append(f"tossup {ev.outcome}: {ENDINGS.get(ev.reason, ev.reason)}")
    return "\n".join(lines)


def run_scripted_demo(
    *,
    db_url: str,
    packet_path: Path,
    n_tossups: int = 4,
    wpm: int = 600,
    seed: int = 7,
    console: Console | None = None,
    skip_broken_questions: bool = False,
) -> int:
    """Play the scripted match; returns the match id in the record."""
    console = console or Console()
    rng = random.Random(seed)
    console.print(f"[bold]GRACE Arena demo[/] — record: {redacted(db_url)}", soft_wrap=True)
    packet = load_packet(packet_path, skip_broken=skip_broken_questions)
    store = MatchStore(open_engine(db_url))
    store.save_packet(packet, source=Path(packet_path))
    teams = [TeamSpec(id="red", name="Red"), TeamSpec(id="blue", name="Blue")]
    chosen = [t.id for t in packet.tossups[:n_tossups]]
    config = match_config(
        packet,
        teams,
        rules=ScoringRules(answer_time=None, buzz_window=0.5 if wpm else 0.0),
        tossup_ids=chosen,
        title="Demo match",
    )
    rm = store.create(config, now=time.time())
    for team in teams:
        rm.handle(
            Join(team=team.id, player=f"{team.id}-1", name=f"{team.name} captain"), now=time.time()
        )
    wrong_pool = [parse_answer_line(t.answer).main for t in packet.tossups]
    delay = 60.0 / wpm if wpm else 0.0

    with Live(console=console, auto_refresh=False, transient=False) as live:
        for tossup_id in chosen:
            spec = rm.match.config.tossup(tossup_id)
            assert spec is not None
            plan = plan_buzzes(spec, ["red", "blue"], [w for w in wrong_pool if w], rng)
            rm.handle(StartTossup(tossup_id=tossup_id), now=time.time())
            banner = ""
            while rm.match.phase in (Phase.READING, *HAS_FLOOR):
                game = rm.match.game
                if game.phase in HAS_FLOOR:
                    floor = game.floor
                    assert floor is not None
                    ruling = {"accept": Ruling.CORRECT, "prompt": Ruling.PROMPT}.get(
                        floor.suggestion or "", Ruling.INCORRECT
                    )
                    if game.phase is Phase.PROMPTED:
                        main = parse_answer_line(spec.answer).main
                        rm.handle(
                            GiveAnswer(team=floor.team, player=floor.player, text=main),
                            now=time.time(),
                        )
                        ruling = Ruling.CORRECT
                    banner += "\n" + _describe(rm.handle(Rule(ruling=ruling), now=time.time()))
                    continue
                due = [
                    b
                    for b in plan
                    if b.word_index <= game.position and b.team not in game.locked_out
                ]
                if due:
                    b = due[0]
                    plan.remove(b)
                    events = rm.handle(
                        Buzz(team=b.team, player=b.player, answer=b.answer), now=time.time()
                    )
                    banner += "\n" + _describe(events)
                else:
                    rm.handle(Reveal(), now=time.time())
                live.update(_render(packet, rm, tossup_id, banner.strip()), refresh=True)
                if delay and rm.match.phase is Phase.READING:
                    time.sleep(delay)
            if rm.match.phase is Phase.AWAITING:
                # Nobody knew it: the buzz window after the last word runs out.
                deadline = rm.match.game.deadline or time.time()
                time.sleep(max(0.0, deadline - time.time()))
                banner += "\n" + _describe(rm.handle(TimeUp(), now=max(deadline, time.time())))
            live.update(_render(packet, rm, tossup_id, banner.strip()), refresh=True)
    rm.handle(EndMatch(), now=time.time())

    summary = Table(title="Final scores")
    summary.add_column("team")
    summary.add_column("points", justify="right")
    for team in rm.match.config.teams:
        summary.add_row(team.name, str(rm.match.scores[team.id]))
    console.print(summary)
    buzzes = store.buzzes(rm.id)
    console.print(
        f"Match {rm.id}: {store.event_count(rm.id)} events and {len(buzzes)} buzzes stored in "
        f"{redacted(db_url)}",
        soft_wrap=True,
    )
    for line in _record_commands(db_url):
        console.print(line, soft_wrap=True, highlight=False, markup=False)
    return rm.id


def _record_commands(db_url: str) -> list[str]:
    """The commands that list, export and analyse the record, as they run from here."""
    from grace_arena.record.db import default_db_url
    from grace_arena.resources import command_prefix

    command = command_prefix()
    db = "" if db_url == default_db_url() else f" --db {shlex.quote(redacted(db_url))}"
    return [
        f"Its matches:    {command} db matches{db}",
        f"Export:         {command} export --format csv --out matches.csv{db}",
        f"Analyse:        {command} analyze --report report{db}",
    ]


# ---------------------------------------------------------------------------------------------
# The live demo: the game server in this process, and the moderator's terminal UI on it.


#: The demo's port when it is free (the README's).
DEMO_PORT = 8000


def _pick_port(host: str, wanted: int | None) -> tuple[int, str | None]:
    """``wanted`` if given; else 8000 when it is free, else the next free one up to 8009, else
    any free port; with what to say when it is not 8000 ("port 8000 is in use; serving on
    8001")."""
    import socket

    if wanted:
        return wanted, None
    for port in (*range(DEMO_PORT, DEMO_PORT + 10), 0):
        with socket.socket() as s:
            try:
                s.bind((host if host != "0.0.0.0" else "", port))
            except OSError:
                continue
            chosen = s.getsockname()[1]
        notice = None if chosen == DEMO_PORT else f"port {DEMO_PORT} is in use; serving on {chosen}"
        return chosen, notice
    raise OSError("no free port")


def _log_to(path: Path) -> None:
    """Send the server's own log lines to a file: the terminal belongs to the TUI."""
    import logging

    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "grace_arena"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.propagate = False


def run_tui_demo(
    *,
    db_url: str,
    packet_path: Path,
    host: str = "0.0.0.0",
    port: int | None = None,
    public_url: str | None = None,
    tossups: str = "all",
    wpm: int = 180,
    log_path: Path | None = None,
    console: Console | None = None,
    skip_broken_questions: bool = False,
) -> None:
    """Start the game server in this process and run the moderator's TUI on it.

    The server listens on ``host:port`` (players' phones on the same network join at the
    printed URL). Unfinished matches in the record are reopened, so running the demo again
    resumes a match that was left mid-way.
    """
    import threading

    import uvicorn
    from platformdirs import user_log_dir

    from grace_arena.server.app import UVICORN_OPTIONS, Settings, create_app
    from grace_arena.server.http_limits import uvicorn_options
    from grace_arena.server.lan import public_base
    from moderator_tui import make_tui
    from moderator_tui.app import SetupDefaults

    console = console or Console()
    port, notice = _pick_port(host, port)
    if notice:
        console.print(notice, soft_wrap=True, highlight=False)
    public = public_base(console, host, port, public_url)
    log_path = log_path or Path(user_log_dir("grace-arena", appauthor=False)) / "demo-server.log"
    _log_to(log_path)
    console.print(f"record: {redacted(db_url)}", soft_wrap=True, highlight=False)
    console.print(f"starting the server on {public} …", soft_wrap=True, highlight=False)
    app = create_app(
        Settings(
            db_url=db_url,
            packets=[packet_path],
            public_url=public,
            skip_broken_questions=skip_broken_questions,
        )
    )
    arena = app.state.arena
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        log_level="warning",
        **UVICORN_OPTIONS,
        **uvicorn_options(),  # the server's limits, no proxy trusted (as serve)
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="grace-arena-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the server did not start (see {log_path})")
        time.sleep(0.02)
    local = f"http://127.0.0.1:{port}" if host in ("0.0.0.0", "") else public
    tui = make_tui(
        local,
        token=app.state.rooms.tokens.server(),
        record=redacted(db_url),
        hosts_server=True,
        defaults=SetupDefaults(tossups=tossups, wpm=wpm),
        notice=notice,
    )
    try:
        tui.run()
    finally:
        server.should_exit = True
        thread.join(10)
    console.print(f"The record is in {redacted(db_url)}", soft_wrap=True, highlight=False)
    for line in _record_commands(db_url):
        console.print(line, soft_wrap=True, highlight=False, markup=False)
    unfinished = sum(row.ended_at is None for row in arena.store.matches())
    if unfinished:
        console.print(
            f"{unfinished} unfinished "
            f"{'matches carry' if unfinished > 1 else 'match carries'} on when you "
            "run the demo again on this record (ctrl+r on the set-up screen).",
            soft_wrap=True,
            highlight=False,
        )
    console.print(f"Server log: {log_path}", soft_wrap=True, highlight=False)
