"""The end of the match: scores, buzzes per team, the model players' buzzes, where the record
and the exports are; for a match of an event, where the room goes next."""

from __future__ import annotations

import shlex
from typing import Any, ClassVar

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static

from grace_arena.protocol import (
    EventView,
    MatchSummary,
    MatchView,
    RulingInForceView,
    StandingsView,
    State,
)
from moderator_tui.messages import SummaryLoaded
from moderator_tui.screens import MatchScreen
from moderator_tui.widgets import ControlBanner, StatusLine, room_label, team_name


def tossup_rulings(state: State) -> list[tuple[str, RulingInForceView]] | None:
    """The tossup rulings in force, with their tossups: those of the match's ledger, as the
    standings and the stats count them (a correction, or an upheld protest, in the place of
    the ruling it amends; an undone ruling, a prompt and a thrown-out tossup's left out).
    None without the officials' view (a state that is not a moderator's)."""
    if state.officiating is None:
        return None
    return [
        (cycle.tossup_id, r)
        for cycle in state.officiating.cycles
        if not cycle.thrown_out
        for r in cycle.rulings
        if r.part is None
    ]


def scores_table(state: State, summary: MatchSummary | None) -> Table:
    """Scores and, per team, buzzes won, correct and incorrect (the rulings in force:
    :func:`tossup_rulings`), and buzzes refused (the record's, in ``summary``)."""
    table = Table(
        title="Scores",
        title_style="bold",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
    )
    for name in ("team", "points", "buzzes", "correct", "incorrect", "refused"):
        table.add_column(name, justify="left" if name == "team" else "right")
    ranked = sorted(state.teams, key=lambda t: -t.score)
    in_force = tossup_rulings(state)
    for team in ranked:
        mine = [b for b in summary.buzzes if b.team == team.id] if summary else []
        if in_force is not None:
            rulings = [r.ruling for _, r in in_force if r.team == team.id]
        else:  # (the record's buzzes, each with its ruling in force when it was read)
            rulings = [b.ruling for b in mine if b.outcome == "won" and not b.thrown_out]
        known = in_force is not None or summary is not None
        refused = sum(b.outcome != "won" for b in mine)
        table.add_row(
            Text(team.name, style="bold"),
            Text(str(team.score), style="bold"),
            str(len(rulings)) if known else "…",
            str(rulings.count("correct")) if known else "…",
            str(rulings.count("incorrect")) if known else "…",
            str(refused) if summary else "…",
        )
    return table


def model_buzzes(state: State, summary: MatchSummary | None) -> RenderableType:
    models = [t for t in state.teams if t.kind == "model"]
    if not models:
        return Text("No model player in this match.", style="dim")
    if summary is None:
        return Text("loading the record…", style="dim")
    table = Table(
        title="The model players' buzzes",
        title_style="bold",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
    )
    for name in ("model", "tossup", "word", "guess", "conf.", "judge", "ruling"):
        table.add_column(
            name,
            justify="right" if name in ("word", "conf.") else "left",
            no_wrap=name in ("tossup", "word", "conf.", "judge", "ruling"),
        )
    rows = [b for b in summary.buzzes if b.kind == "model" and b.outcome == "won"]
    # the ruling in force of each tossup's buzz by a team (a team buzzes once a tossup)
    in_force = {(t, r.team): r.ruling for t, r in tossup_rulings(state) or []}
    rows = [
        b.model_copy(update={"ruling": in_force.get((b.tossup_id, b.team), b.ruling)}) for b in rows
    ]
    for b in rows:
        ruling = b.ruling or "—"
        style = {"correct": "green", "incorrect": "red"}.get(ruling, "")
        if b.thrown_out:
            ruling, style = "thrown out", "dim"
        table.add_row(  # Text, not str: names and guesses are never read as markup
            Text(team_name(state.teams, b.team)),
            Text(b.tossup_id or ""),
            str(b.word_index + 1),
            Text(b.answer or "—"),
            "" if b.confidence is None else f"{b.confidence:.2f}",
            Text(b.suggestion or ""),
            Text(ruling, style=style),
        )
    if not rows:
        return Text("The model players did not buzz in this match.", style="dim")
    right = sum(b.ruling == "correct" for b in rows if not b.thrown_out)
    counted = sum(not b.thrown_out for b in rows)
    return Group(table, Text(f"{right} of {counted} model buzzes ruled correct."))


def sheet_url(app: Any, m: MatchView) -> str | None:
    """The match's printable scoresheet on the server the app talks to (its join code opens
    it), or None without one."""
    target = getattr(app, "target", None)
    if target is None or not m.join_code:
        return None
    return f"{target.url.rstrip('/')}/scoresheet?match={m.id}&code={m.join_code}"


def record_text(
    match_id: int,
    record: str | None,
    *,
    command: str = "grace-arena",
    event: EventView | None = None,
    sheet_url: str | None = None,
) -> Text:
    """Where the record is, and the commands that export and analyse this match (and its
    event's standings), with ``command`` for ``grace-arena`` so that they run as printed;
    ``sheet_url``: the match's printable scoresheet on the server."""
    text = Text()
    if sheet_url:
        text.append("Scoresheet", style="bold")
        text.append("  to print from a browser:\n")
        text.append(f"  {sheet_url}\n", style="bold cyan")
    text.append("The record", style="bold")
    if record:
        text.append(f"  {record}\n")
        text.append("Every event, buzz and ruling is stored there. Exports and analysis:\n")
        text.append(f"  export GRACE_ARENA_DB={shlex.quote(record)}\n", style="bold cyan")
    else:
        text.append("  the server's database (grace-arena serve prints where it is)\n")
        text.append("Exports and analysis (add --db URL, or set GRACE_ARENA_DB):\n")
    lines = [
        f"{command} export --format csv --out match-{match_id}.csv --match {match_id}",
        f"{command} export --format qbj --out match-{match_id}-qbj --match {match_id}",
        f"{command} export --format grace --out match-{match_id}-grace --match {match_id}",
        f"{command} export --format scoresheet --out match-{match_id}.html --match {match_id}",
        f"{command} analyze --match {match_id} --report report-{match_id}",
    ]
    if event is not None:
        name = shlex.quote(event.name)
        lines.append(f"{command} event standings {name}")
    for line in lines:
        text.append(f"  {line}\n", style="bold cyan")
    return text


def next_text(final: State, now: State | None, standings: StandingsView | None) -> Text | None:
    """For a match of an event: where its room goes next. ``now``: the state the app holds
    (the room's next match once it moved on); ``standings``: what each room plays now."""
    event = final.event
    if event is None:
        return None
    room = room_label(event.room)
    text = Text()
    # (a room may play several matches in one round: the match is named by its teams)
    played = " vs ".join(t.name for t in final.teams)
    text.append(
        f" {room} · round {event.round} of {event.rounds} · {played}: match over ",
        style="bold reverse",
    )
    text.append("\n")
    if now is not None and now.match.id != final.match.id and now.event is not None:
        teams = " vs ".join(t.name for t in now.teams)
        text.append(
            f"{room} moves on to its next match: round {now.event.round}, {teams}. ", style="bold"
        )
        text.append("The players' phones follow by themselves. Press ")
        text.append("enter", style="bold reverse")
        text.append(" for its lobby.")
        return text
    if event.waiting:
        text.append(event.waiting, style="bold")
        text.append(" The room goes on by itself then, and the players' phones with it. Press ")
        text.append("r", style="bold reverse")
        text.append(" for the standings.")
        return text
    status = None
    if standings is not None and standings.event == event.name:
        status = next((r for r in standings.rooms if r.join_code == event.join_code), None)
    if status is not None and status.round is None:
        text.append(f"{room} has played all its matches. ", style="bold")
    else:
        text.append(f"{room} moves on to its next match", style="bold")
        text.append(" (it opens in a moment; the players' phones follow by themselves). ")
    text.append("Press ")
    text.append("r", style="bold reverse")
    text.append(" for the standings.")
    return text


def tossups_read(m: MatchView) -> str:
    """How many tossups were read, as the match counts them: a tossup thrown out was read but
    is not heard (it scores nothing and regulation does not count it)."""
    thrown = m.tossups_played - m.tossups_heard
    regulation = m.regulation_tossups
    if regulation:  # heard of regulation (a thrown-out tossup's replacement counts), overtime
        line = f"{min(m.tossups_heard, regulation)} of {regulation} tossups heard"
        if m.tossups_heard > regulation:
            line += f", {m.tossups_heard - regulation} in overtime"
    else:
        line = f"{m.tossups_played} of {m.tossups_total} tossups read"
    return f"{line} ({thrown} thrown out)" if thrown > 0 else line


class EndScreen(MatchScreen):
    """The match that ended (``final``): it stays on screen when an event's room moves on to
    its next match, until the moderator goes there (enter)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "next_match", "Next match", tooltip="The lobby of the room's next match"),
        Binding("r", "standings", "Standings", tooltip="The standings of the match's event"),
        Binding(
            "P",
            "protest",
            "Protest",
            key_display="P",
            tooltip="A team protests a tossup or bonus part of this match (a form)",
        ),
        Binding(
            "C",
            "correct_cycle",
            "Correct a cycle",
            key_display="C",
            tooltip="Pick a ruling of this match and correct it",
        ),
        Binding("question_mark", "app.help", "Help", key_display="?"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, final: State) -> None:
        super().__init__()
        self.final = final
        self.summary: MatchSummary | None = None

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        yield ControlBanner(id="control")
        with VerticalScroll(id="end-body"):
            yield Static("", id="end-title")
            yield Static("", id="end-next")
            yield Static("", id="end-scores")
            yield Static("", id="end-models")
            yield Static("", id="end-record")
        yield Footer()

    def on_mount(self) -> None:
        app_summary = self.app.summary  # type: ignore[attr-defined]
        if app_summary is not None and app_summary.match_id == self.final.match.id:
            self.summary = app_summary
        self.watch(self.app, "state", self.show)
        self.watch(self.app, "standings", self.show)
        self.follow_link()

    def _moved_on(self) -> bool:
        now = self.app.state  # type: ignore[attr-defined]
        return now is not None and now.match.id != self.final.match.id

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "next_match":
            return self._moved_on()
        if action == "standings":
            return self.final.event is not None
        if action in ("protest", "correct_cycle"):
            # the match's own amendments, while the app still follows it (not a watcher's)
            if self._moved_on() or self.app.watching:  # type: ignore[attr-defined]
                return False
            cycles = self.final.officiating.cycles if self.final.officiating else []
            return action == "protest" or any(c.rulings for c in cycles)
        return True

    def action_protest(self) -> None:
        from moderator_tui.protests import ProtestScreen

        self.app.push_screen(ProtestScreen(self.final), self._send)

    def action_correct_cycle(self) -> None:
        from moderator_tui.protests import CorrectScreen

        self.app.push_screen(CorrectScreen(self.final), self._send)

    def _send(self, message: Any) -> None:
        if message is not None:
            self.app.send_command(message)  # type: ignore[attr-defined]

    def action_next_match(self) -> None:
        if self._moved_on():
            self.app.enter_current_match()  # type: ignore[attr-defined]

    def action_standings(self) -> None:
        self.app.show_standings()  # type: ignore[attr-defined]

    @on(SummaryLoaded)
    def _loaded(self, message: SummaryLoaded) -> None:
        if message.summary.match_id == self.final.match.id:
            self.summary = message.summary
            self.show()

    def show(self, _: Any = None) -> None:
        if not self.showing:
            return  # replaced by another screen meanwhile
        now: State | None = self.app.state  # type: ignore[attr-defined]
        if now is not None and now.match.id == self.final.match.id:
            self.final = now
        state = self.final
        summary = self.summary
        self.query_one(StatusLine).state = state
        self.refresh_bindings()
        m = state.match
        title = Text()
        title.append(f" Match over — {m.title} ", style="bold reverse")
        title.append(f"  match {m.id} · {tossups_read(m)}")
        self.query_one("#end-title", Static).update(title)
        going = next_text(state, now, self.app.standings)  # type: ignore[attr-defined]
        self.query_one("#end-next", Static).display = going is not None
        self.query_one("#end-next", Static).update(going or "")
        self.query_one("#end-scores", Static).update(scores_table(state, summary))
        self.query_one("#end-models", Static).update(model_buzzes(state, summary))
        record = self.app.target.record or (summary.record if summary else None)  # type: ignore[attr-defined]
        command = self.app.command  # type: ignore[attr-defined]
        self.query_one("#end-record", Static).update(
            record_text(
                m.id, record, command=command, event=state.event, sheet_url=sheet_url(self.app, m)
            )
        )
