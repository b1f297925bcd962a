"""The live tossup screen: the cockpit, one key per move."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Static

from grace_arena.core.phases import Phase, allowed_commands
from grace_arena.protocol import (
    AbstainMsg,
    ConsultMsg,
    EndMatchMsg,
    MatchView,
    PauseMsg,
    ReadPartMsg,
    ResumeMsg,
    RuleMsg,
    SetPaceMsg,
    StartTossupMsg,
    State,
    StepMsg,
    ThrowOutBonusMsg,
    ThrowOutMsg,
    TimeoutMsg,
    UndoMsg,
)
from moderator_tui.footer import FittingFooter
from moderator_tui.screens import MatchScreen
from moderator_tui.widgets import (
    AnswerLine,
    BuzzBanner,
    ControlBanner,
    EventLog,
    ModelPanel,
    Scoreboard,
    StatusLine,
    TossupPane,
    can_prompt,
)

NARROW = 100  # columns: below, the footer is compact
#: The footer shows + and - as one item, "+ - Pace" (the help lists each).
PACE = Binding.Group("Pace")
#: "1 2 Timeout": the first or the second team calls one.
TIMEOUT = Binding.Group("Timeout")
PACE_STEP = 20  # words per minute per key press
PACE_RANGE = (30, 1200)

#: action -> the protocol command it sends (what ``allowed_commands`` knows it as).
COMMAND_OF = {
    "correct": "rule",
    "incorrect": "rule",
    "prompt": "rule",
    "undo": "undo",
    "throw_out": "throw_out",
    "throw_out_bonus": "throw_out_bonus",
    "consult": "consult_part",
    "abstain": "abstain_part",
    "next_tossup": "start_tossup",
    "end_match": "end_match",
    "end_match_not_now": "end_match",  # E mid-tossup: says what comes first
    "pause": "pause",
    "resume": "resume",
    "step_word": "reveal",
    "step_clue": "reveal",
    "timeout": "timeout",
    "read_part": "read_part",
    "protest": "protest",
    "correct_cycle": "correct",
    "substitute": "substitute",
}
#: What to do before E can end the match, by phase (a match ends between tossups).
END_FIRST = {
    "reading": "A match ends between tossups: let this one finish (or t throws it out), "
    "then press E.",
    "awaiting": "A match ends between tossups: let the buzz window close (or t throws the "
    "tossup out), then press E.",
    "buzzed": "A match ends between tossups: rule the buzz first, then press E.",
    "prompted": "A match ends between tossups: rule the prompted answer first, then press E.",
}
#: The actions that act on the match (not for a moderator who watches).
ACTS = frozenset(COMMAND_OF) | {"faster", "slower", "ai_players", "follow_keys"}


def tossups_left(m: MatchView) -> int:
    """The tossups a match has yet to read: of the format's regulation (ACF, NAQT: 20 heard)
    where it has one and no overtime began, else of the packet."""
    if m.regulation_tossups is not None and not m.overtime:
        return max(0, m.regulation_tossups - m.tossups_heard)
    return max(0, m.tossups_total - m.tossups_played)


class LiveScreen(MatchScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "correct", "Correct", tooltip="Rule the buzz correct"),
        Binding(
            "i", "incorrect", "Incorrect", tooltip="Rule the buzz incorrect (a neg before the end)"
        ),
        Binding("p", "prompt", "Prompt", tooltip="Ask the same player for more"),
        Binding("u", "undo", "Undo", tooltip="Take back the last ruling of this tossup"),
        Binding("n", "next_tossup", "Next tossup", tooltip="Start reading the next tossup"),
        Binding("space", "pause", "Pause", tooltip="Pause the reading and every clock"),
        Binding("space", "resume", "Resume", tooltip="Restart the automatic reveal"),
        Binding("w", "step_word", "Word", tooltip="Reveal one more word (also while paused)"),
        Binding("e", "step_clue", "Clue", tooltip="Reveal the rest of the current clue"),
        Binding(
            "plus,equals_sign",
            "faster",
            "Faster",
            key_display="+",
            tooltip=f"Pace +{PACE_STEP} wpm",
            group=PACE,
        ),
        Binding(
            "minus",
            "slower",
            "Slower",
            key_display="-",
            tooltip=f"Pace -{PACE_STEP} wpm",
            group=PACE,
        ),
        Binding(
            "f",
            "follow_keys",
            "Follow keys",
            tooltip="Words shown only as your keys reveal them, or at the pace again",
            show=False,  # (in the help and the status line: the footer keeps every tossup's keys)
        ),
        Binding("t", "throw_out", "Throw out", tooltip="Discard this tossup (asks first)"),
        Binding(
            "b",
            "throw_out_bonus",
            "Throw out bonus",
            tooltip="Replace this bonus by the next unused one (asks first)",
        ),
        Binding(
            "k",
            "consult",
            "Consult",
            tooltip="Consult rules: the team looks at the model's answer to this part",
        ),
        Binding(
            "a",
            "abstain",
            "Abstain",
            tooltip="Consult rules: the team abstains on this part (scored at once)",
        ),
        Binding(
            "1",
            "timeout(0)",
            "Timeout",
            group=TIMEOUT,
            tooltip="The first team calls a timeout (between tossups)",
        ),
        Binding(
            "2",
            "timeout(1)",
            "Timeout",
            group=TIMEOUT,
            tooltip="The second team calls a timeout (between tossups)",
        ),
        Binding(
            "d",
            "read_part",
            "Part read",
            tooltip="The bonus part is read: its conferral clock starts",
        ),
        Binding(
            "P",
            "protest",
            "Protest",
            key_display="P",
            tooltip="A team protests a tossup or bonus part (a form); the match goes on",
            show=False,  # (in the help: the footer keeps the keys of every tossup)
        ),
        Binding(
            "C",
            "correct_cycle",
            "Correct a cycle",
            key_display="C",
            tooltip="Pick a ruling of an earlier cycle and correct it (between tossups)",
            show=False,
        ),
        Binding(
            "S",
            "substitute",
            "Substitute",
            key_display="S",
            tooltip="A player of the bench comes in (before play, at halftime, before "
            "overtime or in a timeout)",
        ),
        Binding(
            "y",
            "ai_players",
            "AI players",
            tooltip="Hybrid teams: the AI players' modes (a, s) and mutes (m)",
        ),
        Binding("j", "join_info", "Join", tooltip="Show the join URL, code and QR code"),
        Binding("r", "standings", "Standings", tooltip="The standings of the match's event"),
        Binding(
            "E", "end_match", "End match", key_display="E", tooltip="End the match (asks first)"
        ),
        Binding("E", "end_match_not_now", "End match", key_display="E", show=False),
        Binding("question_mark", "app.help", "Help", key_display="?", tooltip="Every key"),
        Binding(
            "q", "app.leave", "Quit", tooltip="Close this screen; the match goes on on the server"
        ),
    ]

    #: The keys the footer leaves out, in this order, when the keys that work now do not fit
    #: the terminal's width (a bonus part under consult rules in an event's room: some
    #: sixteen keys); they still work, and the help lists them.
    FOOTER_SHED: ClassVar[tuple[str, ...]] = (
        "faster", "end_match", "join_info", "standings", "throw_out",
    )  # fmt: skip

    #: Not listed in the help (E's explanation when the match cannot end yet).
    HELP_HIDDEN: ClassVar[frozenset[str]] = frozenset({"end_match_not_now"})

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        yield ControlBanner(id="control")
        with Horizontal(id="live-body"):
            with Vertical(id="live-main"):
                with VerticalScroll(id="text-scroll"):
                    yield TossupPane(id="tossup")
                yield AnswerLine(id="answer")
                yield BuzzBanner(id="banner")
            with Vertical(id="live-side"):
                yield Static("Scores", classes="section")
                yield Scoreboard(id="scores")
                yield Static("Models (only you see this)", classes="section")
                yield ModelPanel(id="models")
                yield Static("This tossup", classes="section")
                with VerticalScroll(id="log-scroll"):
                    yield EventLog(id="log")
        # a narrow terminal (80 columns) keeps every key of the footer: less space between
        # them; a crowded one leaves out FOOTER_SHED's
        yield FittingFooter(narrow=NARROW)

    def on_mount(self) -> None:
        self.watch(self.app, "state", self.show_state)
        self.follow_link()
        self.set_interval(0.5, self._tick)

    # -- rendering -----------------------------------------------------------------------------

    @property
    def current(self) -> State | None:
        return self.app.state  # type: ignore[attr-defined]

    _pace_target: int | None = None

    def show_state(self, state: State | None) -> None:
        if state is None or not self.showing:
            return
        if self._pace_target == state.reading.wpm:
            self._pace_target = None
        for widget in (
            StatusLine,
            TossupPane,
            AnswerLine,
            BuzzBanner,
            Scoreboard,
            ModelPanel,
            EventLog,
        ):
            self.query_one(widget).state = state
        self.query_one(BuzzBanner).received = self.app.state_received  # type: ignore[attr-defined]
        self.query_one(StatusLine).received = self.app.state_received  # type: ignore[attr-defined]
        self.refresh_bindings()
        self.call_after_refresh(self._follow_cursor)

    def _follow_cursor(self) -> None:
        if not self.showing:
            return  # the match moved on to another screen meanwhile
        try:
            scroll = self.query_one("#text-scroll", VerticalScroll)
            pane = self.query_one(TossupPane)
        except NoMatches:  # the app is closing: its widgets are being removed
            return
        line = pane.cursor_line(pane.content_region.width)
        height = scroll.scrollable_content_region.height
        if not scroll.scroll_y <= line < scroll.scroll_y + height - 1:
            scroll.scroll_to(y=max(line - height // 3, 0), animate=False)
        self.query_one("#log-scroll", VerticalScroll).scroll_end(animate=False)

    def _tick(self) -> None:
        state = self.current
        if self.showing and state is not None and state.deadline is not None:
            self.query_one(BuzzBanner).refresh()
        if self.showing and state is not None and state.game_clock is not None:
            self.query_one(StatusLine).refresh()  # a timed half's clock counts down

    # -- which keys work now -------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the keys that the match does not allow now (the footer shows what works); a
        moderator who watches sees the keys the match allows, greyed out (None)."""
        allowed = self._allowed(action)
        if allowed and action in ACTS and self.app.watching:  # type: ignore[attr-defined]
            return None
        return allowed

    def _allowed(self, action: str) -> bool:
        if action == "standings":
            return self.current is not None and self.current.event is not None
        if action == "ai_players":  # a match with hybrid teams (the engine says when)
            return self.current is not None and any(t.ais for t in self.current.teams)
        command = COMMAND_OF.get(action)
        if command is None:
            return True
        state = self.current
        if state is None:
            return False
        phase = Phase(state.match.phase)
        allowed = allowed_commands(phase)
        if phase is Phase.BONUS and command == "rule":
            command = "rule_part"  # the same keys rule a bonus's current part
        if action == "pause":
            return "pause" in allowed and not state.match.paused
        if action == "resume":
            return "resume" in allowed and state.match.paused
        if action == "undo":
            return state.match.can_undo
        if action == "prompt" and not can_prompt(state):
            return False
        if action in ("consult", "abstain"):
            b = state.bonus
            open_turn = (
                command in allowed and b is not None and b.consult and not b.bounceback
                and not b.prompted and b.answer is None
            )  # fmt: skip
            open_turn = open_turn and b.pre_answer is None  # the players write first
            return open_turn and (action == "abstain" or b.consulted is None)
        if action == "end_match_not_now":
            # E mid-tossup: not a move, but the screen says what comes first
            return state.match.phase != "ended" and "end_match" not in allowed
        if action == "timeout":
            return command in allowed and any(t.timeouts_left != 0 for t in state.teams)
        if action == "read_part":
            b = state.bonus
            return (
                command in allowed and state.reading.mode == "read_aloud" and b is not None
                and b.answer is None and state.match.conferral_time is not None
            )  # fmt: skip
        if action == "substitute":  # a format with lineups, and someone on a bench
            return command in allowed and any(
                t.lineup is not None and len(t.players) > len(t.lineup) for t in state.teams
            )
        if action == "correct_cycle":
            cycles = state.officiating.cycles if state.officiating else []
            return command in allowed and any(c.rulings for c in cycles)
        if action == "next_tossup":
            more = state.match.tossups_played < state.match.tossups_total
            return command in allowed and more
        return command in allowed

    # -- actions -------------------------------------------------------------------------------

    def _send(self, message: Any) -> bool:
        return self.app.send_command(message)  # type: ignore[attr-defined]

    def action_correct(self) -> None:
        self._rule("correct")

    def action_incorrect(self) -> None:
        self._rule("incorrect")

    def action_prompt(self) -> None:
        self._rule("prompt")

    def _rule(self, ruling: str) -> None:
        """A ruling names what it rules, as shown: a key pressed twice, or one the timer beat,
        is refused rather than taken for what came next."""
        state = self.current
        target: dict = {}
        if state is not None and state.match.phase == "bonus" and state.bonus is not None:
            target = {"part": state.bonus.part + 1, "bounceback": state.bonus.bounceback}
        elif state is not None and state.floor is not None:
            target = {"buzz_id": state.floor.buzz_id}
        self._send(RuleMsg(ruling=ruling, **target))

    def action_undo(self) -> None:
        self._send(UndoMsg())

    def action_consult(self) -> None:
        state = self.current
        if state is not None and state.bonus is not None:
            self._send(ConsultMsg(part=state.bonus.part + 1))

    def action_abstain(self) -> None:
        state = self.current
        if state is not None and state.bonus is not None:
            self._send(AbstainMsg(part=state.bonus.part + 1))

    def action_timeout(self, index: int) -> None:
        state = self.current
        if state is not None and index < len(state.teams):
            self._send(TimeoutMsg(team=state.teams[index].id))

    def action_read_part(self) -> None:
        self._send(ReadPartMsg())

    def action_next_tossup(self) -> None:
        self._send(StartTossupMsg())

    def action_pause(self) -> None:
        self._send(PauseMsg())

    def action_resume(self) -> None:
        self._send(ResumeMsg())

    def action_step_word(self) -> None:
        self._send(StepMsg(unit="word"))

    def action_step_clue(self) -> None:
        self._send(StepMsg(unit="clue"))

    def _pace(self, delta: int) -> None:
        state = self.current
        if state is None:
            return
        # Several presses before the server's answer add up (from the pace asked for last).
        base = self._pace_target if self._pace_target is not None else state.reading.wpm
        lo, hi = PACE_RANGE
        wpm = min(max(base + delta, lo), hi)
        if wpm != base and self._send(SetPaceMsg(wpm=wpm)):
            self._pace_target = wpm

    def action_follow_keys(self) -> None:
        state = self.current
        if state is not None:
            self._send(SetPaceMsg(wpm=state.reading.wpm, by_key=not state.reading.by_key))

    def action_faster(self) -> None:
        self._pace(PACE_STEP)

    def action_slower(self) -> None:
        self._pace(-PACE_STEP)

    def action_throw_out(self) -> None:
        from moderator_tui.dialogs import ConfirmScreen

        def answer(yes: bool | None) -> None:
            if yes:
                self._send(ThrowOutMsg())

        self.app.push_screen(
            ConfirmScreen("Throw out this tossup? Its points are taken back."), answer
        )

    def action_throw_out_bonus(self) -> None:
        from moderator_tui.dialogs import ConfirmScreen

        def answer(yes: bool | None) -> None:
            if yes:
                self._send(ThrowOutBonusMsg())

        self.app.push_screen(
            ConfirmScreen("Throw out this bonus? Its points are taken back; the next unused "
                          "bonus replaces it."),
            answer,
        )  # fmt: skip

    def action_end_match(self) -> None:
        from moderator_tui.dialogs import ConfirmScreen

        state = self.current
        left = 0 if state is None else tossups_left(state.match)
        more = f" {left} tossup(s) are still unplayed." if left else ""

        def answer(yes: bool | None) -> None:
            if yes:
                self._send(EndMatchMsg())

        self.app.push_screen(ConfirmScreen(f"End the match now?{more}"), answer)

    def action_end_match_not_now(self) -> None:
        state = self.current
        if state is not None:
            self.notify(END_FIRST.get(state.match.phase, END_FIRST["reading"]), markup=False)

    def _ask(self, screen: Callable[[State], Any]) -> None:
        """Open a form of the current state (a protest, a correction, a substitution, the AI
        players) and send what it gives, if anything."""
        state = self.current
        if state is None:
            return

        def given(message: Any) -> None:
            if message is not None:
                self._send(message)

        self.app.push_screen(screen(state), given)

    def action_protest(self) -> None:
        from moderator_tui.protests import ProtestScreen

        self._ask(ProtestScreen)

    def action_ai_players(self) -> None:
        from moderator_tui.hybrid import AiPlayersScreen

        self._ask(AiPlayersScreen)

    def action_correct_cycle(self) -> None:
        from moderator_tui.protests import CorrectScreen

        self._ask(CorrectScreen)

    def action_substitute(self) -> None:
        from moderator_tui.lineups import SubstituteScreen

        self._ask(SubstituteScreen)

    def action_standings(self) -> None:
        self.app.show_standings()  # type: ignore[attr-defined]

    def action_join_info(self) -> None:
        from moderator_tui.dialogs import JoinScreen

        join = self.app.join  # type: ignore[attr-defined]
        if join is not None and join.join_url:
            self.app.push_screen(JoinScreen(join.join_url, join.join_code))
