"""The authoring screen's widgets. They render what they are given and post messages; none of
them asks the model or touches the packet file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static, TextArea

from grace_arena.core.tokenize import POWER_MARK
from moderator_tui.authoring.draft import Summary, Verdict

MISSING = "—"


def fmt_confidence(value: float | None) -> str:
    """A confidence to two decimals, or "—" when the model gave none (never 0 or 0.5)."""
    return MISSING if value is None else f"{value:.2f}"


def verdict_text(verdict: Verdict | None, *, previous: Verdict | None = None) -> Text:
    """The cell beside a sentence: guess and judge, both confidences, buzz and target marks.

    While a changed prefix is being guessed again, the previous guess is shown dimmed with "…".
    """
    text = Text()
    if verdict is None:
        return Text("waiting for the model…", style="dim")
    if verdict.spec is None:
        return Text("empty sentence: write a clue or delete it (ctrl+r)", style="italic yellow")
    if verdict.error is not None:
        text.append("✗ no guess: ", style="bold red")
        text.append(verdict.error, style="red")
        text.append("\n(tried again after the next edit)", style="dim")
        return text
    if verdict.guess is None:
        if previous is not None and previous.guess is not None:
            stale = verdict_text(previous)
            stale.stylize("dim")
            return Text.assemble(("… ", "bold"), stale)
        return Text("guessing…", style="dim italic")
    guess = verdict.guess
    if verdict.correct is None:
        text.append("· ", style="bold")
    elif verdict.correct:
        text.append("✓ ", style="bold green")
    elif verdict.directive == "prompt":
        text.append("? ", style="bold yellow")
    else:
        text.append("✗ ", style="bold red")
    text.append(guess.guess or MISSING, style="bold")
    if verdict.directive == "prompt":
        text.append(" (prompt: counts as wrong)", style="yellow")
    text.append("\nlogit ")
    text.append(fmt_confidence(guess.confidence_logit), style="bold")
    text.append("  verbal ")
    text.append(fmt_confidence(guess.confidence_verbal), style="bold")
    marks = []
    if verdict.buzz:
        marks.append((" ◀ BUZZ ", "bold black on yellow"))
    if verdict.flag == "adversarial":
        marks.append(("◆ good adversarial clue", "bold magenta"))
    elif verdict.flag == "too_easy":
        marks.append(("▲ too easy for the model", "bold red"))
    if marks:
        text.append("\n")
        for i, (mark, style) in enumerate(marks):
            text.append(mark if i == 0 else f" {mark}", style=style)
    return text


def summary_text(summary: Summary | None, *, loading: str | None = None) -> Text:
    """The summary line: where the model buzzes, whether it is right, and the writing target."""
    if loading is not None:
        return Text(loading, style="dim italic")
    if summary is None:
        return Text("")
    line = Text()
    where = summary.where()
    if summary.errors:
        line.append(f"{summary.errors} prefix(es) could not be guessed · ", style="bold red")
    style = "bold"
    if summary.buzz is not None:
        style = "bold red" if summary.buzz.flag == "too_easy" else "bold"
    line.append(where[:1].upper() + where[1:], style=style)
    target = summary.target()
    if target:
        line.append("\n")
        good = summary.on_target
        line.append("● " if good else "▲ ", style="bold green" if good else "bold red")
        line.append(target, style="green" if good else "red")
    return line


class SentenceEditor(TextArea):
    """One sentence, soft-wrapped. Enter starts a new sentence (splitting at the cursor)
    instead of inserting a line break; a sentence is one clue."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Shown in the footer; the key itself is handled in _on_key (TextArea inserts "\n"
        # there before any binding is looked at).
        Binding("enter", "split", "New sentence", key_display="enter"),
    ]

    @dataclass
    class Split(Message):
        editor: SentenceEditor
        offset: int  # where the cursor was, as a character offset into the text

    def __init__(self, text: str, **kwargs) -> None:
        super().__init__(
            text,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            compact=True,
            **kwargs,
        )

    def cursor_offset(self) -> int:
        row, column = self.cursor_location
        lines = self.text.split("\n")
        return sum(len(line) + 1 for line in lines[:row]) + column

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_split()
            return
        await super()._on_key(event)

    def action_split(self) -> None:
        self.post_message(self.Split(self, self.cursor_offset()))


class VerdictView(Static):
    """The model's verdict on the prefix through one sentence."""

    verdict: reactive[Verdict | None] = reactive(None, layout=True)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._shown: Verdict | None = None  # the last verdict that had a guess

    def render(self) -> RenderableType:
        return verdict_text(self.verdict, previous=self._shown)

    def forget(self) -> None:
        """Drop the last guess shown (the row is about to show another tossup)."""
        self._shown = None
        self.verdict = None

    def watch_verdict(self, verdict: Verdict | None) -> None:
        if verdict is not None and verdict.guess is not None:
            self._shown = verdict


class SentenceRow(Horizontal):
    """Number (and power mark), the editable sentence, and the model's verdict beside it."""

    def __init__(self, text: str, index: int) -> None:
        super().__init__()
        self.index = index
        self.initial = text

    def compose(self) -> ComposeResult:
        with Vertical(classes="num"):
            yield Static(str(self.index + 1), classes="number")
            yield Static("", classes="power")
        yield SentenceEditor(self.initial)
        yield VerdictView()

    def on_mount(self) -> None:
        self.show_number(self.index)
        self.show_power(self.initial)

    @property
    def editor(self) -> SentenceEditor:
        return self.query_one(SentenceEditor)

    @property
    def verdict_view(self) -> VerdictView:
        return self.query_one(VerdictView)

    def show_number(self, index: int) -> None:
        self.index = index
        self.query_one(".number", Static).update(Text(f"{index + 1:>2}", style="bold"))

    def show_power(self, text: str) -> None:
        mark = Text(POWER_MARK, style="bold yellow") if POWER_MARK in text else ""
        self.query_one(".power", Static).update(mark)

    def show(self, verdict: Verdict) -> None:
        self.verdict_view.verdict = verdict
        self.set_class(verdict.buzz, "-buzz")
        self.set_class(verdict.flag == "adversarial", "-adversarial")
        self.set_class(verdict.flag == "too_easy", "-too-easy")
