"""``grace-arena write``: edit a packet's tossups while the model player guesses after every
sentence (GRACE §3.1, figure 2).

The screen owns the I/O. Training the guesser, guessing the changed prefixes and saving the
packet run in workers and come back as messages; the widgets only render. After each edit the
screen waits for a pause in typing (``debounce`` seconds), then one exclusive worker asks the
model about the prefixes it has not seen yet (the :class:`GuessCache` is keyed by model and
exact prefix text, so editing sentence 3 of 6 re-guesses prefixes 3..6 only).
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from grace_arena.core.packet import (
    Packet,
    PacketError,
    Problem,
    dump_packet,
    load_packet,
    validate_packet_file,
)
from grace_arena.model.base import Guess, Guesser, Prefix
from grace_arena.model.policy import BuzzPolicy
from moderator_tui.authoring.draft import (
    Draft,
    GuessCache,
    Summary,
    evaluate,
    make_prefix,
    packet_with_drafts,
    prefix_specs,
    problem_text,
)
from moderator_tui.authoring.widgets import (
    SentenceEditor,
    SentenceRow,
    summary_text,
)
from moderator_tui.dialogs import ConfirmScreen, HelpScreen
from moderator_tui.widgets import answer_markup

Confidence = Literal["logit", "verbal"]
THRESHOLD_STEP = 0.05
ANSWER_PLACEHOLDER = "the answer line; <b>…</b> marks the required part"


# ---------------------------------------------------------------------------------------------
# Messages (workers → screen)


@dataclass
class GuesserReady(Message):
    guesser: Guesser


@dataclass
class GuesserFailed(Message):
    error: str


@dataclass
class PrefixGuessed(Message):
    """One prefix came back from the model (``guess.error`` set when the call failed)."""

    model: str
    text: str
    guess: Guess


@dataclass
class GuessingDone(Message):
    model: str
    asked: int  # prefixes sent to the model by this run (cache misses)


@dataclass
class Saved(Message):
    packet: Packet
    mtime_ns: int
    problems: list[Problem]  # what validate_packet_file says of the written file (empty)


@dataclass
class SaveRefused(Message):
    problems: list[Problem]


@dataclass
class SaveConflict(Message):
    """The file changed on disk since it was opened or last saved."""


# ---------------------------------------------------------------------------------------------
# Help


class AuthoringHelp(HelpScreen):
    """f1: every key, and what the marks beside the sentences mean."""

    def notes(self) -> ComposeResult:
        yield Static(
            Text.assemble(
                ("In a sentence: ", "bold"),
                "enter starts a new sentence (splitting at the cursor), ctrl+z / "
                "ctrl+y undo and redo, ctrl+x / ctrl+v cut and paste. ",
                ("Tab", "bold"),
                " and shift+tab move between the tossup list, the answer line and the "
                "sentences; in the list, up/down and enter open a tossup.",
            ),
            classes="hint",
        )
        yield Static(Text("Beside each sentence", style="bold"), classes="section")
        yield Static(
            Text.assemble(
                "The model's guess after that sentence (the prefix through it), judged "
                "against the answer line: ",
                ("✓", "bold green"),
                " correct, ",
                ("✗", "bold red"),
                " wrong, ",
                ("?", "bold yellow"),
                " prompt (counts as wrong for a model). Then both confidences, logit "
                "and verbal (— when the model gives none; the TF-IDF model has no "
                "verbal one). ",
                (" ◀ BUZZ ", "bold black on yellow"),
                " is where the model buzzes: the first sentence whose chosen "
                "confidence reaches the threshold.\n\n",
                ("The target (GRACE §3.1): ", "bold"),
                "the model should stay wrong or unconfident until the last sentences, "
                "while a good player can still get it. ",
                ("◆ good adversarial clue", "bold magenta"),
                ": the model is confident and wrong here. ",
                ("▲ too easy for the model", "bold red"),
                ": it is confident and right before the last two sentences; rewrite "
                "that clue (or an earlier one) to be harder for it.\n\n",
                "Saving (ctrl+s) checks the packet first and refuses an invalid one "
                "(the problems are listed above the sentences). The file is rewritten "
                "in the packet layout: YAML comments are not kept.",
            ),
            classes="hint",
        )


# ---------------------------------------------------------------------------------------------
# The screen


class AuthoringScreen(Screen[None]):
    """Tossup list, answer line, sentences with the model's verdict beside each, summary."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+q", "app.quit", "Quit", priority=True),
        Binding("f1", "help", "Help"),
        Binding("ctrl+r", "delete_sentence", "Delete", tooltip="Delete the sentence"),
        Binding("alt+up", "move(-1)", "Up", key_display="alt+↑", tooltip="Move the sentence up"),
        Binding(
            "alt+down", "move(1)", "Down", key_display="alt+↓", tooltip="Move the sentence down"
        ),
        Binding("f2", "threshold(-1)", "Threshold−", tooltip="Lower the buzz threshold by 0.05"),
        Binding("f3", "threshold(1)", "Threshold+", tooltip="Raise the buzz threshold by 0.05"),
        Binding(
            "f4",
            "toggle_confidence",
            "Logit/verbal",
            tooltip="Buzz on the logit or on the verbal confidence",
        ),
    ]

    def __init__(
        self,
        path: Path,
        packet: Packet,
        *,
        tossup_id: str | None,
        model: str,
        guesser: Guesser | None,
        guesser_factory: Callable[[], Guesser] | None,
        threshold: float,
        confidence: Confidence,
        debounce: float,
    ) -> None:
        super().__init__()
        self.path = path
        self.packet = packet
        self.model = model
        self.guesser = guesser
        self.guesser_factory = guesser_factory
        self.threshold = threshold
        self.confidence: Confidence = confidence
        self.debounce = debounce
        self.cache = GuessCache()
        self.errors: dict[str, str] = {}  # prefix text -> why its last guess failed
        self.drafts: dict[str, Draft] = {}
        self.current = tossup_id or packet.tossups[0].id
        self.summary: Summary | None = None
        self.model_status: str | None = None if guesser is not None else f"loading {model}…"
        self._timer: Timer | None = None
        self._mtime_ns = _mtime(path)
        self._showing = False  # rows being rebuilt: ignore their change events
        self._marked: set[str] = set()  # tossups shown as unsaved in the list
        self._shown_text: dict[str, Text] = {}

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Horizontal(id="body"):
            yield OptionList(*self._tossup_options(), id="tossups")
            with Vertical(id="editor"):
                with Horizontal(id="answer-row"):
                    yield Static("ANSWER", id="answer-label")
                    yield Input(id="answer", placeholder=ANSWER_PLACEHOLDER)
                yield Static(id="answer-preview")
                yield Static(id="summary")
                yield Static(id="problems")
                yield VerticalScroll(id="sentences", can_focus=False)
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        tossups = self.query_one("#tossups", OptionList)
        tossups.highlighted = self._position(self.current)
        await self.show_tossup(self.current)
        if self.guesser is None:
            self.load_guesser()
        else:
            self.model = self.guesser.name
            self.start_guessing()

    # -- helpers ----------------------------------------------------------------------------

    @property
    def policy(self) -> BuzzPolicy:
        return BuzzPolicy(confidence=self.confidence, threshold=self.threshold)

    @property
    def draft(self) -> Draft:
        if self.current not in self.drafts:
            self.drafts[self.current] = Draft.of(self.packet.tossup(self.current))
        return self.drafts[self.current]

    def rows(self) -> list[SentenceRow]:
        return list(self.query_one("#sentences").query_children(SentenceRow))

    def dirty_ids(self) -> list[str]:
        """Tossups whose drafts differ from the packet on disk."""
        return [
            t.id
            for t in self.packet.tossups
            if t.id in self.drafts and not self.drafts[t.id].same_as(t)
        ]

    def guessing(self) -> bool:
        """Whether guesses are still to come: an edit waiting for a pause, or a run going."""
        if self._timer is not None:
            return True
        return any(
            w.node is self and w.group == "guess" and not w.is_finished for w in self.app.workers
        )

    def _position(self, tossup_id: str) -> int:
        return next(i for i, t in enumerate(self.packet.tossups) if t.id == tossup_id)

    def _tossup_options(self) -> list[Option]:
        return [Option(_option_label(t.id, False), id=t.id) for t in self.packet.tossups]

    def _focused_row(self) -> SentenceRow | None:
        focused = self.focused
        if isinstance(focused, SentenceEditor) and isinstance(focused.parent, SentenceRow):
            return focused.parent
        return None

    # -- showing a tossup -------------------------------------------------------------------

    async def show_tossup(self, tossup_id: str, *, focus_row: int = 0) -> None:
        self.current = tossup_id
        self.query_one("#answer", Input).value = self.draft.answer
        for row in self.rows():
            row.verdict_view.forget()  # no stale guesses of another tossup
        await self.sync_rows(focus_row)
        self.refresh_view()

    async def sync_rows(self, focus_row: int, *, cursor_at_end: bool = False) -> None:
        """Make the sentence rows show the draft: existing rows are reused (their text
        replaced where it differs), rows are added or removed at the end only."""
        sentences = self.draft.sentences
        container = self.query_one("#sentences", VerticalScroll)
        rows = self.rows()
        self._showing = True
        try:
            for index, (row, text) in enumerate(zip(rows, sentences, strict=False)):
                row.show_number(index)
                if row.editor.text != text:
                    row.editor.load_text(text)
                row.show_power(text)
            if len(sentences) > len(rows):
                await container.mount_all(
                    SentenceRow(text, index)
                    for index, text in enumerate(sentences)
                    if index >= len(rows)
                )
            elif len(rows) > len(sentences):
                await container.remove_children(rows[len(sentences) :])
        finally:
            self._showing = False
        rows = self.rows()
        if rows:
            editor = rows[min(focus_row, len(rows) - 1)].editor
            editor.focus()
            editor.move_cursor(editor.document.end if cursor_at_end else (0, 0))
            editor.scroll_visible()

    async def rebuild_rows(self, focus_row: int, *, cursor_at_end: bool = False) -> None:
        """After a sentence is added, deleted or moved."""
        await self.sync_rows(focus_row, cursor_at_end=cursor_at_end)
        self.content_changed()

    def refresh_view(self) -> None:
        """Every verdict, the summary, the title and the list, from the draft and the cache."""
        draft = self.draft
        guesses = {}
        for spec in prefix_specs(draft.sentences):
            if spec is not None and (g := self.cache.peek(self.model, spec.text)) is not None:
                guesses[spec.text] = g
        verdicts, self.summary = evaluate(
            draft.sentences, draft.answer, guesses, self.policy, errors=self.errors
        )
        if self.model_status is not None:
            verdicts = [v if v.spec is None else None for v in verdicts]  # type: ignore[misc]
        rows = [] if self._showing else self.rows()  # rows being rebuilt are shown after
        for row, verdict in zip(rows, verdicts, strict=False):
            if verdict is not None:
                row.show(verdict)
        self._update("#summary", summary_text(self.summary, loading=self.model_status))
        self._update(
            "#answer-preview", Text.assemble(("reads: ", "dim"), answer_markup(draft.answer))
        )
        self.refresh_title()
        if self.query_one("#problems").has_class("-shown"):
            self.check_problems()

    def refresh_title(self) -> None:
        dirty = self.dirty_ids()
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(" GRACE Arena · writing ", style="bold reverse")
        title.append(f" {self.path.name} ", style="bold")
        if dirty:
            s = "s" if len(dirty) > 1 else ""
            title.append(f"● unsaved ({len(dirty)} tossup{s}) ", style="bold yellow")
        else:
            title.append("saved ", style="green")
        title.append(f"· model {self.model} ")
        title.append(f"· buzz at {self.confidence} ≥ {self.threshold:.2f} ", style="bold")
        title.append(f"· {self.packet.packet.title}", style="dim")
        self._update("#title", title)
        tossups = self.query_one("#tossups", OptionList)
        for tossup_id in self._marked.symmetric_difference(dirty):
            tossups.replace_option_prompt(tossup_id, _option_label(tossup_id, tossup_id in dirty))
        self._marked = set(dirty)

    def _update(self, selector: str, text: Text) -> None:
        """Update a line only when it reads differently (typing re-renders on every key)."""
        if self._shown_text.get(selector) != text:
            self._shown_text[selector] = text
            self.query_one(selector, Static).update(text)

    def check_problems(self) -> list[Problem]:
        """Validate the drafts as a save would; show the problems (or hide the panel)."""
        try:
            packet_with_drafts(self.packet, self.drafts, file=str(self.path))
        except PacketError as exc:
            self.show_problems(exc.problems)
            return exc.problems
        self.show_problems([])
        return []

    def show_problems(self, problems: list[Problem]) -> None:
        panel = self.query_one("#problems", Static)
        if not problems:
            panel.update("")
            panel.set_class(False, "-shown")
            return
        text = Text("Not saved — fix these first:\n", style="bold red")
        for problem in problems:
            text.append(f"• {problem_text(problem)}\n", style="red")
        text.rstrip()
        panel.update(text)
        panel.set_class(True, "-shown")

    # -- edits ------------------------------------------------------------------------------

    def content_changed(self) -> None:
        """Something the model reads changed: show it now, re-guess after a pause in typing."""
        self.refresh_view()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(self.debounce, self.start_guessing)

    @on(TextArea.Changed)
    def sentence_changed(self, event: TextArea.Changed) -> None:
        if self._showing or not isinstance(event.text_area, SentenceEditor):
            return
        row = event.text_area.parent
        if not isinstance(row, SentenceRow) or row not in self.rows():
            return  # a row removed since
        if row.index >= len(self.draft.sentences):
            return
        text = event.text_area.text
        if self.draft.sentences[row.index] == text:
            return
        self.draft.sentences[row.index] = text
        row.show_power(text)
        self.content_changed()

    @on(Input.Changed, "#answer")
    def answer_changed(self, event: Input.Changed) -> None:
        if self._showing or self.draft.answer == event.value:
            return
        self.draft.answer = event.value
        self.refresh_view()  # re-judged against the new answer line; nothing to re-guess

    @on(SentenceEditor.Split)
    async def split_sentence(self, event: SentenceEditor.Split) -> None:
        row = event.editor.parent
        if not isinstance(row, SentenceRow):
            return
        text = event.editor.text
        head, tail = text[: event.offset].rstrip(), text[event.offset :].lstrip()
        self.draft.sentences[row.index : row.index + 1] = [head, tail]
        await self.rebuild_rows(row.index + 1)

    @on(OptionList.OptionSelected, "#tossups")
    async def tossup_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id and event.option.id != self.current:
            await self.show_tossup(event.option.id)
            self.start_guessing()

    # -- actions ----------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("delete_sentence", "move"):
            return True if self._focused_row() is not None else None
        return True

    async def action_delete_sentence(self) -> None:
        row = self._focused_row()
        if row is None:
            return
        sentences = self.draft.sentences
        if len(sentences) == 1:
            sentences[0] = ""  # a tossup keeps one sentence row to write in
        else:
            del sentences[row.index]
        await self.rebuild_rows(max(row.index - 1, 0), cursor_at_end=True)

    async def action_move(self, by: int) -> None:
        row = self._focused_row()
        if row is None:
            return
        sentences, i = self.draft.sentences, row.index
        j = i + by
        if not 0 <= j < len(sentences):
            self.app.bell()
            return
        sentences[i], sentences[j] = sentences[j], sentences[i]
        await self.rebuild_rows(j)

    def action_threshold(self, direction: int) -> None:
        value = round(self.threshold + direction * THRESHOLD_STEP, 2)
        self.threshold = min(1.0, max(0.0, value))
        self.refresh_view()

    def action_toggle_confidence(self) -> None:
        self.confidence = "verbal" if self.confidence == "logit" else "logit"
        self.refresh_view()
        if self.confidence == "verbal" and self.model == "tfidf":
            self.notify("The TF-IDF model has no verbal confidence: it never buzzes on it.")

    def action_help(self) -> None:
        self.app.push_screen(AuthoringHelp(self))

    def action_save(self, force: bool = False) -> None:
        self.save_packet(copy.deepcopy(self.drafts), force=force)

    # -- workers ----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_guesser(self) -> None:
        assert self.guesser_factory is not None
        try:
            guesser = self.guesser_factory()
        except Exception as exc:  # a bad corpus path, an unknown model, …
            self.post_message(GuesserFailed(f"{type(exc).__name__}: {exc}"))
        else:
            self.post_message(GuesserReady(guesser))

    def start_guessing(self) -> None:
        """Ask the model about the current tossup's prefixes it has not seen yet."""
        self._timer = None
        if self.guesser is None:
            return
        draft = self.draft
        tossup = self.packet.tossup(draft.tossup_id)
        specs = [s for s in prefix_specs(draft.sentences) if s is not None]
        if not specs:
            return
        full = specs[-1].text
        prefixes = [
            make_prefix(
                s, packet_id=self.packet.id, draft=draft, category=tossup.category, full_text=full
            )
            for s in specs
        ]
        self.guess_prefixes(self.guesser, prefixes)

    @work(exclusive=True, group="guess", exit_on_error=False)
    async def guess_prefixes(self, guesser: Guesser, prefixes: list[Prefix]) -> None:
        model = guesser.name
        todo: dict[str, Prefix] = {}
        for prefix in prefixes:
            if prefix.text not in todo and self.cache.lookup(model, prefix.text) is None:
                todo[prefix.text] = prefix

        async def ask(prefix: Prefix) -> tuple[Prefix, Guess]:
            try:
                return prefix, await guesser.guess(prefix)
            except Exception as exc:  # the guesser's own retries are exhausted
                return prefix, Guess(guess=None, error=f"{type(exc).__name__}: {exc}")

        tasks = [asyncio.ensure_future(ask(p)) for p in todo.values()]
        try:
            for next_done in asyncio.as_completed(tasks):
                prefix, guess = await next_done
                # Cached here, not in the handler, so that a run that starts before the
                # messages are handled does not ask again.
                self.cache.put(model, prefix.text, guess)
                self.post_message(PrefixGuessed(model, prefix.text, guess))
        finally:
            for task in tasks:  # superseded by a newer edit: stop what is still in flight
                task.cancel()
        self.post_message(GuessingDone(model, len(tasks)))

    @work(thread=True, exclusive=True, group="save", exit_on_error=False)
    def save_packet(self, drafts: dict[str, Draft], force: bool) -> None:
        try:
            packet = packet_with_drafts(self.packet, drafts, file=str(self.path))
        except PacketError as exc:
            self.post_message(SaveRefused(exc.problems))
            return
        if not force and _mtime(self.path) != self._mtime_ns:
            self.post_message(SaveConflict())
            return
        dump_packet(packet, self.path)
        problems = validate_packet_file(self.path)
        self.post_message(Saved(load_packet(self.path) if not problems else packet,
                                _mtime(self.path), problems))  # fmt: skip

    # -- worker results ---------------------------------------------------------------------

    def on_guesser_ready(self, message: GuesserReady) -> None:
        self.guesser = message.guesser
        self.model = message.guesser.name
        self.model_status = None
        self.refresh_view()
        self.start_guessing()

    def on_guesser_failed(self, message: GuesserFailed) -> None:
        self.model_status = f"the model could not be loaded: {message.error}"
        self.refresh_view()
        self.notify(self.model_status, severity="error", timeout=10)

    def on_prefix_guessed(self, message: PrefixGuessed) -> None:
        if message.guess.error is not None:
            self.errors[message.text] = message.guess.error
        else:
            self.errors.pop(message.text, None)
        self.refresh_view()

    def on_guessing_done(self, message: GuessingDone) -> None:
        self.refresh_view()

    def on_save_refused(self, message: SaveRefused) -> None:
        self.show_problems(message.problems)
        n = len(message.problems)
        self.notify(f"Not saved: {n} problem{'s' if n != 1 else ''} (listed above the sentences)",
                    severity="error")  # fmt: skip

    def on_save_conflict(self, message: SaveConflict) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.action_save(force=True)

        self.app.push_screen(
            ConfirmScreen(f"{self.path.name} changed on disk since it was opened. Overwrite it?"),
            answered,
        )

    def on_saved(self, message: Saved) -> None:
        if message.problems:  # never expected: the packet was checked before writing
            self.show_problems(message.problems)
            self.notify("Saved, but the file does not validate", severity="error")
            return
        self.packet = message.packet
        self._mtime_ns = message.mtime_ns
        self.show_problems([])
        self.refresh_view()
        self.notify(f"Saved {self.path.name}", markup=False)


def _option_label(tossup_id: str, dirty: bool) -> Text:
    """A tossup in the list, marked ● while it has unsaved changes."""
    return Text.assemble(("● " if dirty else "  ", "bold yellow"), tossup_id)


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


# ---------------------------------------------------------------------------------------------
# The app


class AuthoringApp(App[None]):
    """One :class:`AuthoringScreen` on one packet file; ``make_authoring_app`` builds it."""

    CSS_PATH = "authoring.tcss"
    TITLE = "GRACE Arena — writing against the model"
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, screen: AuthoringScreen) -> None:
        super().__init__()
        self.authoring = screen

    def on_mount(self) -> None:
        self.push_screen(self.authoring)

    async def action_quit(self) -> None:
        dirty = self.authoring.dirty_ids()
        if not dirty:
            self.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        n = len(dirty)
        self.push_screen(
            ConfirmScreen(
                f"{n} tossup{'s have' if n > 1 else ' has'} unsaved changes "
                f"({', '.join(dirty)}). Quit without saving?"
            ),
            answered,
        )


def make_authoring_app(
    path: str | Path,
    *,
    tossup_id: str | None = None,
    model: str = "tfidf",
    api_base: str | None = None,
    guesser: Guesser | None = None,
    threshold: float = 0.5,
    confidence: Confidence = "logit",
    debounce: float = 0.5,
) -> AuthoringApp:
    """The authoring app on ``path`` (loaded and checked here: ``PacketError`` if invalid).

    ``guesser`` is used as given (tests pass one trained once); otherwise ``model`` is built by
    :func:`grace_arena.model.precompute.make_guesser` in a worker once the screen is up.
    ``KeyError`` if ``tossup_id`` is not in the packet.
    """
    path = Path(path)
    packet = load_packet(path)
    if tossup_id is not None:
        packet.tossup(tossup_id)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold!r}")
    if confidence not in ("logit", "verbal"):
        raise ValueError(f"confidence must be logit or verbal, got {confidence!r}")

    def factory() -> Guesser:
        from grace_arena.model.precompute import make_guesser

        return make_guesser(model, api_base=api_base)

    screen = AuthoringScreen(
        path,
        packet,
        tossup_id=tossup_id,
        model=model,
        guesser=guesser,
        guesser_factory=None if guesser is not None else factory,
        threshold=threshold,
        confidence=confidence,
        debounce=debounce,
    )
    return AuthoringApp(screen)
