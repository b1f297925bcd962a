"""The end of the match: scores, buzzes per team, the model players' buzzes, where the record
and the exports are."""

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
from textual.screen import Screen
from textual.widgets import Footer, Static

from grace_arena.protocol import MatchSummary, State
from moderator_tui.messages import SummaryLoaded
from moderator_tui.widgets import StatusLine, team_name


def scores_table(state: State, summary: MatchSummary | None) -> Table:
    """Scores and, per team, buzzes won, correct, incorrect (negs), and the power buzzes."""
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
    for team in ranked:
        mine = [b for b in summary.buzzes if b.team == team.id] if summary else []
        won = [b for b in mine if b.outcome == "won" and not b.thrown_out]
        correct = sum(b.ruling == "correct" for b in won)
        incorrect = sum(b.ruling == "incorrect" for b in won)
        refused = sum(b.outcome != "won" for b in mine)
        table.add_row(
            Text(team.name, style="bold"),
            Text(str(team.score), style="bold"),
            str(len(won)) if summary else "…",
            str(correct) if summary else "…",
            str(incorrect) if summary else "…",
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


def record_text(match_id: int, record: str | None) -> Text:
    """Where the record is, and the commands that export and analyse this match."""
    text = Text()
    text.append("The record", style="bold")
    if record:
        text.append(f"  {record}\n")
        text.append("Every event, buzz and ruling is stored there. Exports and analysis:\n")
        text.append(f"  export GRACE_ARENA_DB={shlex.quote(record)}\n", style="bold cyan")
    else:
        text.append("  the server's database (grace-arena serve prints where it is)\n")
        text.append("Exports and analysis (add --db URL, or set GRACE_ARENA_DB):\n")
    for line in (
        f"grace-arena export --format csv --out match-{match_id}.csv --match {match_id}",
        f"grace-arena export --format qbj --out match-{match_id}-qbj --match {match_id}",
        f"grace-arena export --format grace --out match-{match_id}-grace --match {match_id}",
        f"grace-arena analyze --match {match_id} --report report-{match_id}",
    ):
        text.append(f"  {line}\n", style="bold cyan")
    return text


class EndScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "app.help", "Help", key_display="?"),
        Binding("q", "app.quit", "Quit"),
    ]

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        with VerticalScroll(id="end-body"):
            yield Static("", id="end-title")
            yield Static("", id="end-scores")
            yield Static("", id="end-models")
            yield Static("", id="end-record")
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "state", self.show)
        self.watch(self.app, "connected", self._link)

    def _link(self, _: Any = None) -> None:
        status = self.query_one(StatusLine)
        status.connected = self.app.connected  # type: ignore[attr-defined]
        status.detail = self.app.link_detail  # type: ignore[attr-defined]

    @on(SummaryLoaded)
    def _loaded(self, _: SummaryLoaded) -> None:
        self.show(self.app.state)  # type: ignore[attr-defined]

    def show(self, state: State | None) -> None:
        if self not in self.app.screen_stack:
            return  # replaced by another screen meanwhile
        if state is None:
            return
        summary: MatchSummary | None = self.app.summary  # type: ignore[attr-defined]
        self.query_one(StatusLine).state = state
        m = state.match
        title = Text()
        title.append(f" Match over — {m.title} ", style="bold reverse")
        title.append(f"  match {m.id} · {m.tossups_played} of {m.tossups_total} tossups played")
        self.query_one("#end-title", Static).update(title)
        self.query_one("#end-scores", Static).update(scores_table(state, summary))
        self.query_one("#end-models", Static).update(model_buzzes(state, summary))
        record = self.app.target.record or (summary.record if summary else None)  # type: ignore[attr-defined]
        self.query_one("#end-record", Static).update(record_text(m.id, record))
