"""The moderator's widgets. Each one is given the latest ``State`` (attributes down) and
only renders it; none of them does I/O."""

from __future__ import annotations

import io
import math
import re
import time
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from grace_arena.protocol import (
    BonusView,
    FloorView,
    ModelCurveView,
    ModelGuessView,
    State,
    TeamView,
    TossupView,
)

SUGGESTION_STYLE = {"accept": "bold green", "prompt": "bold yellow", "reject": "bold red"}
RULING_MARK = {"correct": "✓", "incorrect": "✗", "prompt": "?"}
PHASE_LABEL = {
    "idle": "between tossups",
    "reading": "reading",
    "awaiting": "buzz window open",
    "buzzed": "BUZZ — rule now",
    "prompted": "PROMPTED — waiting for the answer",
    "answered": "answered",
    "dead": "dead tossup",
    "thrown_out": "thrown out",
    "bonus": "BONUS — rule each part",
    "ended": "match over",
}


# ---------------------------------------------------------------------------------------------
# Pure helpers (tested directly)


def phase_label(phase: str, tossups_played: int | None) -> str:
    """The phase in words; a lobby (idle before any tossup) is not "between tossups"."""
    if phase == "idle" and tossups_played == 0:
        return "before the first tossup"
    return PHASE_LABEL.get(phase, phase.replace("_", " "))


def answer_markup(answer: str) -> Text:
    """An answer line with its ``<b>``/``<u>`` marks as bold/underline, other tags dropped."""
    marked = escape(answer)
    marked = re.sub(r"<(/?)(b|strong)>", r"[\1b]", marked, flags=re.I)
    marked = re.sub(r"<(/?)u>", r"[\1u]", marked, flags=re.I)
    marked = re.sub(r"<(/?)(i|em)>", r"[\1i]", marked, flags=re.I)
    marked = re.sub(r"</?[a-zA-Z][^>]*>", "", marked)
    try:
        return Text.from_markup(marked)
    except Exception:  # unbalanced marks in a packet: show the plain text
        return Text(re.sub(r"<[^>]+>", "", answer))


def bonus_summary(bonus: BonusView, teams: list[TeamView]) -> Text:
    """ "Bonus 3: Red 20 (10/0/10)" — with a bounceback's points after the team's."""
    marks = "/".join(
        str(p.points) + (f"+{p.bounceback_points}" if p.bounceback_points else "")
        for p in bonus.parts
    )
    text = Text(f"Bonus {bonus.number}: ", style="bold")
    text.append(f"{team_name(teams, bonus.team)} {bonus.points.get(bonus.team, 0)} ({marks})")
    for team, points in bonus.points.items():
        if team != bonus.team and points:
            text.append(f" · {team_name(teams, team)} {points} on bouncebacks")
    return text


def clue_of(tossup: TossupView, word: int) -> int:
    """0-based clue index of ``word``."""
    for k, end in enumerate(tossup.clue_ends):
        if word <= end:
            return k
    return max(len(tossup.clue_ends) - 1, 0)


def player_name(teams: list[TeamView], team: str, player: str) -> str:
    for t in teams:
        if t.id == team:
            return t.players.get(player, player)
    return player


def team_name(teams: list[TeamView], team: str) -> str:
    return next((t.name for t in teams if t.id == team), team)


def can_prompt(state: State) -> bool:
    """Whether the answer being ruled may be prompted: a model team gives its one answer and
    cannot say more, so the match refuses a prompt on it."""
    if state.match.phase == "bonus" and state.bonus is not None:
        team = state.bonus.turn
    elif state.floor is not None:
        return state.floor.kind != "model"
    else:
        return True
    return next((t.kind != "model" for t in state.teams if t.id == team), True)


def room_label(name: str) -> str:
    """An event's room as said aloud: ``1`` -> ``Room 1``; a named room keeps its name."""
    return f"Room {name}" if name.isdigit() else name


@dataclass(frozen=True)
class BuzzMark:
    buzz_id: int
    team: str
    word_index: int
    ruling: str | None


def buzz_marks(events: list[dict[str, Any]]) -> list[BuzzMark]:
    """The accepted buzzes of a tossup's log, each with the ruling now in force."""
    marks: dict[int, BuzzMark] = {}
    ruled_by_seq: dict[int, int] = {}
    for ev in events:
        kind = ev.get("type")
        if kind == "buzz_accepted":
            marks[ev["buzz_id"]] = BuzzMark(ev["buzz_id"], ev["team"], ev["word_index"], None)
        elif kind == "ruled" and ev.get("buzz_id") in marks:
            ruled_by_seq[ev.get("seq", 0)] = ev["buzz_id"]
            m = marks[ev["buzz_id"]]
            marks[m.buzz_id] = BuzzMark(m.buzz_id, m.team, m.word_index, ev["ruling"])
        elif kind == "ruling_undone" and ev.get("buzz_id") in marks:
            m = marks[ev["buzz_id"]]
            marks[m.buzz_id] = BuzzMark(m.buzz_id, m.team, m.word_index, None)
    return list(marks.values())


def tossup_text(
    tossup: TossupView, marks: list[BuzzMark], teams: list[TeamView], *, upto: int | None = None
) -> Text:
    """The tossup with the reading cursor, clue boundaries, the power mark and buzz marks.

    Revealed words are bright, the word under the cursor is highlighted, unread words are dim.
    A pronunciation guide follows its word, in italics (``tossup.guides``: the moderator
    reads it aloud). ``upto``: render only the words up to that index (to find the cursor's
    line).
    """
    words = tossup.words or []
    starts = {end + 1 for end in tossup.clue_ends[:-1]}
    by_word: dict[int, list[BuzzMark]] = {}
    for m in marks:
        by_word.setdefault(m.word_index, []).append(m)
    text = Text()
    last = len(words) - 1 if upto is None else min(upto, len(words) - 1)
    for i in range(last + 1):
        if i in starts:
            text.append("┃", style="bold magenta")
            text.append(f"{clue_of(tossup, i) + 1} ", style="magenta")
        if tossup.power_index is not None and i == tossup.power_index:
            text.append("(*) ", style="bold yellow")
        if i == tossup.position:
            style = "bold reverse"
        elif i < tossup.position:
            style = "bold"
        else:
            style = "dim"
        text.append(words[i], style=style)
        guide = tossup.guides.get(i)
        if guide:
            text.append(" ")
            text.append(guide, style=f"{'dim ' if i > tossup.position else ''}italic cyan")
        for m in by_word.get(i, []):
            colour = {"correct": "green", "incorrect": "red"}.get(m.ruling or "", "yellow")
            mark = RULING_MARK.get(m.ruling or "", "…")
            text.append(f" ⟦{team_name(teams, m.team)} {mark}⟧", style=f"bold {colour}")
        text.append(" ")
    return text


def _answer_line(who: str, ev: dict[str, Any]) -> Text:
    """``who`` answers “text”, with the judge's suggestion (a buzz's answer, a part's)."""
    line = Text(f"{who} answers “{ev.get('text', '')}”")
    if ev.get("suggestion"):
        line.append(f" judge: {ev['suggestion']}", style=SUGGESTION_STYLE[ev["suggestion"]])
    return line


def _ruling_line(head: str, ev: dict[str, Any], who: str) -> Text:
    """A ruling, its points and who was ruled (a buzz's ruling, a part's), by whom."""
    ruling = str(ev["ruling"])
    if ev.get("choice") == "abstain":
        ruling = "abstained"  # scored by whether the model was right
    style = {"correct": "bold green", "incorrect": "bold red"}.get(ruling, "bold yellow")
    by = " (time ran out)" if ev.get("by") == "timer" else ""
    if ev.get("choice") == "consult":
        by += " after consulting"
    points = f" {ev['points']:+d}" if ev.get("points") else ""
    return Text(f"{head}{ruling.upper()}{points} {who}{by}", style=style)


def describe_event(ev: dict[str, Any], teams: list[TeamView]) -> Text | None:
    """One line of the tossup's log, or None for events not worth a line."""
    kind = ev.get("type")
    who = ""
    if "team" in ev and "player" in ev:
        who = f"{team_name(teams, ev['team'])}/{player_name(teams, ev['team'], ev['player'])}"
    if kind == "tossup_started":
        return Text(f"tossup {ev.get('index', 0) + 1} started", style="bold")
    if kind in ("words_revealed", "match_created"):
        return None
    if kind == "reading_finished":
        return Text("every word read; buzz window open", style="dim")
    if kind == "reading_paused":
        return Text("reading paused", style="dim")
    if kind == "reading_resumed":
        return Text("reading resumed", style="dim")
    if kind == "pace_changed":
        if ev.get("by_key"):
            return Text("the words follow the moderator's keys", style="dim")
        return Text(f"pace {ev.get('wpm')} words a minute", style="dim")
    if kind == "player_joined":
        return Text(f"{ev.get('name')} joined {team_name(teams, ev.get('team', ''))}", style="dim")
    if kind == "buzz_accepted":
        # words counted from 1 on screen; the record's word_index counts from 0
        at = ev["word_index"]
        line = Text(f"BUZZ {who} @ word {at + 1}", style="bold yellow")
        if ev.get("answer"):
            line.append(f" “{ev['answer']}”", style="bold")
        if ev.get("suggestion"):
            line.append(f" judge: {ev['suggestion']}", style=SUGGESTION_STYLE[ev["suggestion"]])
        return line
    if kind == "buzz_refused":
        reason = ev.get("reason")
        if reason == "lost_race" and ev.get("margin") is not None:
            return Text(f"{who} lost the race by {ev['margin']:.2f} s", style="dim")
        return Text(f"{who} buzz refused ({str(reason).replace('_', ' ')})", style="dim")
    if kind == "answer_given":
        return _answer_line(who, ev)
    if kind == "ruled":
        return _ruling_line("", ev, who)
    if kind == "ruling_undone":
        return Text("last ruling undone", style="bold magenta")
    if kind == "tossup_ended":
        outcome = str(ev.get("outcome", "")).replace("_", " ")
        reason = str(ev.get("reason", "")).replace("_", " ")
        return Text(f"tossup {outcome} ({reason})", style="bold")
    if kind == "bonus_started":
        return Text(f"BONUS {ev.get('index', 0) + 1} to {team_name(teams, ev['team'])}",
                    style="bold cyan")  # fmt: skip
    if kind == "bonus_answer_given":
        return _answer_line(f"part {ev['part'] + 1}: {who}", ev)
    if kind == "bonus_part_ruled":
        turn = " (bounceback)" if ev.get("bounceback") else ""
        return _ruling_line(f"part {ev['part'] + 1}{turn}: ", ev, team_name(teams, ev["team"]))
    if kind == "bonus_part_consulted":
        conf = ev.get("confidence")
        said = f"“{ev['guess']}”" if ev.get("guess") else "nothing"
        return Text(
            f"part {ev['part'] + 1}: {team_name(teams, ev['team'])} consulted {ev['model']}: "
            f"{said}" + ("" if conf is None else f" ({conf:.0%})"),
            style="magenta",
        )
    if kind == "bonus_pre_answer_opened":
        return Text(
            f"part {ev['part'] + 1}: {team_name(teams, ev['team'])} asked for the model's "
            "answer: its players write their own first",
            style="magenta",
        )
    if kind == "bonus_pre_answer_given":
        return _answer_line(f"part {ev['part'] + 1}: {who} (own answer, before the model's)", ev)
    if kind == "bonus_part_undone":
        return Text(f"part {ev['part'] + 1}: ruling undone", style="bold magenta")
    if kind == "bonus_ended":
        if ev.get("outcome") == "thrown_out":
            return Text(f"bonus thrown out ({ev.get('reason', '')})", style="bold")
        points = " · ".join(f"{team_name(teams, t)} {p}" for t, p in ev.get("points", {}).items())
        return Text(f"bonus over: {points or 'no points'}", style="bold")
    if kind == "match_ended":
        return Text("match ended", style="bold")
    if kind == "player_substituted":
        team = ev.get("team", "")
        came = player_name(teams, team, ev.get("player_in", ""))
        went = ev.get("player_out")
        out = f" for {player_name(teams, team, went)}" if went else " to a free place"
        why = str(ev.get("reason", "")).replace("_", " ")
        return Text(f"{team_name(teams, team)}: {came} in{out} ({why})", style="bold")
    if kind == "clock_resumed":
        held = max(0.0, float(ev.get("t", 0.0)) - float(ev.get("down_since", 0.0)))
        why = (
            "the record was unavailable" if ev.get("reason") == "record" else "no server served it"
        )
        return Text(f"clock given back {held:.0f} s ({why})", style="dim")
    return Text(str(kind).replace("_", " "), style="dim")


def tossup_label(state: State) -> str:
    """ "tossup 5/20" as regulation counts tossups heard (a thrown-out tossup's replacement
    takes its number), "overtime tossup 1" past it; without a regulation, the match's."""
    m, tossup = state.match, state.tossup
    assert tossup is not None
    if not m.regulation_tossups:
        return f"tossup {tossup.number}/{m.tossups_total}"
    heard = max(m.tossups_heard, 1)
    if heard > m.regulation_tossups:
        return f"overtime tossup {heard - m.regulation_tossups}"
    return f"tossup {heard}/{m.regulation_tossups}"


def conferral_left(state: State, received: float) -> float | None:
    """Time left on the bonus part's conferral clock (None: it does not run)."""
    if state.conferral is None:
        return state.conferral_held
    return state.conferral - state.server_time - (time.monotonic() - received)


def timeout_left(state: State, received: float) -> float | None:
    """Time left in the timeout on now (None: none is)."""
    if state.timeout is None:
        return None
    return state.timeout.ends - state.server_time - (time.monotonic() - received)


def game_clock_left(state: State, received: float) -> float | None:
    """Seconds left in a timed half (None: untimed), counting down while its clock runs."""
    clock = state.game_clock
    if clock is None:
        return None
    if clock.ends is None:
        return clock.left
    return max(0.0, clock.ends - state.server_time - (time.monotonic() - received))


def game_clock_label(state: State, received: float) -> str | None:
    """ "Half 1 8:42" (stopped: "Half 1 8:42 stopped"; run out: "Half 1 time up")."""
    clock = state.game_clock
    left = game_clock_left(state, received)
    if clock is None or left is None:
        return None
    if clock.expired:
        return f"Half {clock.half} time up"
    whole = math.ceil(left)
    shown = f"Half {clock.half} {whole // 60}:{whole % 60:02d}"
    return shown if clock.ends is not None else f"{shown} stopped"


def seconds_left(state: State, received: float) -> float | None:
    """Time left until the state's deadline, on the server's clock, from a local receipt time."""
    if state.deadline is None:
        return state.held  # paused: the clock stands still with this much left
    return state.deadline - state.server_time - (time.monotonic() - received)


# ---------------------------------------------------------------------------------------------
# Widgets


class StateView(Widget):
    """Base: a widget that re-renders whenever it is given a new state."""

    state: reactive[State | None] = reactive(None, always_update=True, layout=True)

    def render(self) -> RenderableType:
        return "" if self.state is None else self.render_state(self.state)

    def render_state(self, state: State) -> RenderableType:
        raise NotImplementedError


class StatusLine(StateView):
    """Top line: match, join code, tossup, phase, pace, connection."""

    connected: reactive[bool] = reactive(False)
    detail: reactive[str] = reactive("connecting…")
    received: float = 0.0  # local monotonic time of the state (a game clock counts down)

    def render(self) -> RenderableType:
        line = Text(no_wrap=True, overflow="ellipsis")  # a narrow terminal cuts the title: …
        if self.connected:
            line.append(" ● ", style="bold green")
        else:
            line.append(f" ○ {self.detail} ", style="bold red")
        state = self.state
        if state is None:
            return line.append(" GRACE Arena", style="bold")
        if state.record is not None:  # the room holds where it is until the record is back
            line.append(f" HELD: {state.record.message} ", style="bold white on red")
        m = state.match
        if state.event is not None:
            e = state.event
            line.append(f" {room_label(e.room)} · round {e.round}/{e.rounds} ", style="bold")
        phase = phase_label(m.phase, m.tossups_played)
        if m.paused and m.phase in ("reading", "awaiting"):
            phase = "PAUSED"
        line.append(f" {phase} ", style="bold reverse")
        clock = game_clock_label(state, self.received)
        if clock is not None:
            expired = state.game_clock is not None and state.game_clock.expired
            line.append(f" {clock} ", style="bold black on yellow" if expired else "bold")
        if state.tossup is not None:
            cat = f" · {state.tossup.category}" if state.tossup.category else ""
            line.append(f" {tossup_label(state)}{cat}")
        else:
            line.append(f" {m.tossups_played}/{m.tossups_total} played")
        if m.format not in (None, "grace"):
            line.append(f" · {m.format.upper() if m.format != 'custom' else 'custom rules'}")
        pace = "by your keys" if state.reading.by_key else f"{state.reading.wpm} wpm"
        line.append(f" · {pace} · join ")
        line.append(m.join_code, style="bold")
        line.append(f" · {m.title}", style="dim")
        return line


class ControlBanner(Widget):
    """Says that this moderator only watches the match (another one controls it, or none does
    now) and which key takes control; hidden while this moderator controls the match."""

    watching: reactive[bool] = reactive(False)
    controlled: reactive[bool] = reactive(True)  # another moderator controls the match

    def watch_watching(self, watching: bool) -> None:
        self.set_class(watching, "-watching")

    def render(self) -> RenderableType:
        line = Text()
        line.append(" WATCHING ", style="bold reverse")
        if self.controlled:
            line.append(" another moderator controls this match: your keys are off. ")
            line.append(" T ", style="bold reverse")
            line.append(" takes control (the other then watches).")
        else:
            line.append(" no moderator controls this match now. ")
            line.append(" T ", style="bold reverse")
            line.append(" takes control.")
        return line


class TossupPane(StateView):
    """The tossup text with the reading cursor; scrolls to keep the cursor in sight."""

    def render_state(self, state: State) -> RenderableType:
        tossup = state.tossup
        if tossup is None or not tossup.words:
            if state.match.phase == "ended":
                return Text("The match is over.", style="bold")
            return Text.assemble(
                ("No tossup yet. ", "bold"),
                "Press ",
                ("n", "bold reverse"),
                " to start the next tossup when the room is ready.",
            )
        return tossup_text(tossup, buzz_marks(state.last_events), state.teams)

    def cursor_line(self, width: int) -> int:
        """The line (0-based) of the word under the cursor when wrapped at ``width``."""
        state = self.state
        if state is None or state.tossup is None or not state.tossup.words or width <= 0:
            return 0
        tossup = state.tossup
        prefix = tossup_text(
            tossup, buzz_marks(state.last_events), state.teams, upto=max(tossup.position, 0)
        )
        prefix.rstrip()
        return max(len(prefix.wrap(self.app.console, width)) - 1, 0)


class AnswerLine(StateView):
    def render_state(self, state: State) -> RenderableType:
        if state.tossup is None or not state.tossup.answer:
            return Text("ANSWER: —", style="dim")
        return Text.assemble(("ANSWER: ", "bold"), answer_markup(state.tossup.answer))


#: What comes next between tossups, by where the match stands (``MatchView.stage``).
STAGE_HINT = {
    "halftime": "{text} — n starts the second half",
    "tied": "{text} — n for an overtime tossup, or E ends the match tied",
    "overtime": "{text}: n (no bonus in overtime unless the format plays them)",
    "sudden_death": "overtime: tied, n for another tossup (no bonus) — sudden death",
    "decided": "regulation is over: E ends the match",
}


class BuzzBanner(StateView):
    """Who has the floor, where they buzzed, what they answered and the judge's suggestion;
    otherwise what the moderator can do next."""

    received: float = 0.0

    def render_state(self, state: State) -> RenderableType:
        floor: FloorView | None = state.floor
        phase = state.match.phase
        if floor is not None and phase in ("buzzed", "prompted"):
            self.set_class(True, "-buzz")
            return self._floor(state, floor, phase)
        if phase == "bonus" and state.bonus is not None:
            self.set_class(True, "-buzz")
            return self._bonus(state, state.bonus)
        self.set_class(False, "-buzz")
        return self._hint(state)

    def _between(self, state: State) -> list[Text]:
        """Between tossups: the timeout on now, and the keys that call one."""
        lines = []
        left = timeout_left(state, self.received)
        if state.timeout is not None and left is not None and left > 0:
            who = team_name(state.teams, state.timeout.team)
            lines.append(
                Text(f"TIMEOUT: {who} ({math.ceil(left)} s left) — n starts the next tossup",
                     style="bold yellow")
            )  # fmt: skip
        keys = [
            f"{i} {t.name} ({t.timeouts_left} left)"
            if t.timeouts_left is not None else f"{i} {t.name}"
            for i, t in enumerate(state.teams[:2], start=1)
            if t.timeouts_left != 0
        ]  # fmt: skip
        if keys and state.match.phase != "ended":
            lines.append(Text("timeout: " + " · ".join(keys), style="dim"))
        return lines

    def _bonus(self, state: State, bonus: BonusView) -> RenderableType:
        """The bonus being played: who controls it, the current part with its answer line,
        what the team typed and the judge's suggestion, and the keys."""
        part = bonus.parts[bonus.part]
        head = Text()
        head.append(" BONUS ", style="bold reverse")
        head.append(f" {team_name(state.teams, bonus.team)}", style="bold")
        head.append(f" · part {part.number}/{len(bonus.parts)}")
        marker = f"[{part.value}{part.difficulty or ''}]"
        head.append(f" {marker}", style="bold")
        if bonus.bounceback and bonus.turn is not None:
            head.append(f" · BOUNCEBACK to {team_name(state.teams, bonus.turn)}", style="bold red")
        total = bonus.points.get(bonus.team, 0)
        head.append(f" · {total} so far")
        confer = conferral_left(state, self.received)
        if confer is not None:  # the moderator asks for the answer as it runs out
            head.append(
                f" · confer {math.ceil(max(confer, 0))} s" if confer > 1 else " · ANSWER NOW",
                style="bold red" if confer <= 1 else "bold",
            )
        left = seconds_left(state, self.received)
        if left is not None:
            head.append(
                f" · {math.ceil(max(left, 0))} s left", style="bold red" if left < 4 else ""
            )
        lines = [head]
        if part.number == 1 and bonus.leadin:
            lines.append(Text(bonus.leadin, style="italic"))
        lines.append(Text(part.text or ""))
        lines.append(Text.assemble(("ANSWER: ", "bold"), answer_markup(part.answer or "")))
        body = Text()
        if bonus.answer:
            body.append("answer: ", style="bold")
            body.append(f"“{bonus.answer}”", style="bold")
            if bonus.answered_by:
                body.append(f" ({bonus.answered_by})", style="dim")
        elif bonus.pre_answer is not None:
            window = bonus.pre_answer
            body.append(
                f"the players write their own answers ({window.written} of {window.players}); "
                f"the model's is revealed in {math.ceil(window.seconds_left)} s…",
                style="dim",
            )
            for name, text in (window.answers or {}).items():
                body.append(f"\n  {name}: “{text}”")
        elif bonus.consult and not bonus.bounceback and bonus.consulted is not None:
            body.append("waiting for the team: its answer, or abstain (a)…", style="dim")
        elif bonus.consult and not bonus.bounceback:
            own, after, abstain = bonus.consult_points or (15, 10, 5)
            body.append(
                f"waiting for the team: answer alone ({own}), consult the model (k; then "
                f"{after}) or abstain (a; {abstain} if the model is wrong)…",
                style="dim",
            )
        else:
            body.append("waiting for the team's answer (typed, or out loud)…", style="dim")
        if bonus.suggestion:
            body.append("  judge suggests: ", style="bold")
            body.append(bonus.suggestion.upper(), style=SUGGESTION_STYLE[bonus.suggestion])
        if bonus.prompt_question:
            body.append(f"  (ask: “{bonus.prompt_question}”)", style="yellow")
        lines.append(body)
        if bonus.consulted is not None:
            c = bonus.consulted
            seen = Text("consulted ", style="magenta")
            seen.append(f"{c.model}: ", style="magenta")
            seen.append(f"“{c.guess}”" if c.guess else "no answer", style="bold magenta")
            if c.confidence is not None:
                seen.append(f" ({c.confidence:.0%})", style="magenta")
            if c.draft:
                seen.append(f" · the team had “{c.draft}”", style="dim")
            lines.append(seen)
        lines.append(
            Text.assemble(
                ("c", "bold reverse"), " correct  ", ("i", "bold reverse"), " incorrect  ",
                *((("p", "bold reverse"), " prompt  ") if can_prompt(state) else ()),
                # (u only where it does something: nothing to undo after a throw-out)
                *((("u", "bold reverse"), " undo  ") if state.match.can_undo else ()),
                ("b", "bold reverse"), " throw out the bonus",
            )
        )  # fmt: skip
        return Group(*lines)

    def _floor(self, state: State, floor: FloorView, phase: str) -> RenderableType:
        tossup = state.tossup
        team = team_name(state.teams, floor.team)
        head = Text()
        head.append(" PROMPT " if phase == "prompted" else " BUZZ ", style="bold reverse")
        head.append(f" {team}", style="bold")
        kind = " (model)" if floor.kind == "model" else ""
        head.append(f" · {floor.player_name}{kind}")
        if tossup is not None:
            clue = floor.clue_index if floor.clue_index is not None else clue_of(tossup, 0)
            head.append(f" · word {floor.word_index + 1}/{tossup.n_words}")
            head.append(f" · clue {clue + 1}/{len(tossup.clue_ends)}")
            if tossup.words and 0 <= floor.word_index < len(tossup.words):
                head.append(f" (“{tossup.words[floor.word_index]}”)", style="dim")
        left = seconds_left(state, self.received)
        if left is not None:
            head.append(
                f" · {math.ceil(max(left, 0))} s left", style="bold red" if left < 4 else ""
            )
        body = Text()
        if floor.answer:
            body.append("answer: ", style="bold")
            body.append(f"“{floor.answer}”", style="bold")
        elif state.reading.mode == "read_aloud" and floor.kind == "human":
            body.append("answering out loud", style="dim")
        else:
            body.append("waiting for the typed answer…", style="dim")
        if floor.confidence is not None:
            body.append(f"  confidence {floor.confidence:.2f}")
        if floor.suggestion:
            body.append("  judge suggests: ", style="bold")
            body.append(floor.suggestion.upper(), style=SUGGESTION_STYLE[floor.suggestion])
        if floor.prompt_question:
            body.append(f"  (ask: “{floor.prompt_question}”)", style="yellow")
        keys = Text.assemble(
            ("c", "bold reverse"),
            " correct  ",
            ("i", "bold reverse"),
            " incorrect",
            *(("  ", ("p", "bold reverse"), " prompt") if can_prompt(state) else ()),
        )
        return Group(head, body, keys)

    def _hint(self, state: State) -> RenderableType:
        phase = state.match.phase
        m = state.match
        if phase == "idle" and state.timeout is not None:
            return Group(*self._between(state))
        if phase == "idle":
            more = m.tossups_played < m.tossups_total
            what = "press n for the first tossup" if m.tossups_played == 0 else "press n"
            if not more:
                return Text("Every tossup is played: press E to end the match.", style="bold")
            # (regulation's count: the packet's extras replace thrown-out tossups)
            left = (m.regulation_tossups - m.tossups_heard if m.regulation_tossups
                    else m.tossups_total - m.tossups_played)  # fmt: skip
            return Group(Text(f"Ready — {what} ({left} left)."), *self._between(state))
        if phase in ("answered", "dead", "thrown_out"):
            last = Text()
            for kind in ("ruled", "tossup_ended"):
                ev = next((e for e in reversed(state.last_events) if e.get("type") == kind), None)
                line = describe_event(ev, state.teams) if ev is not None else None
                if line is not None:
                    last.append_text(line if not last else Text(" — ").append_text(line))
            if phase == "thrown_out":
                last = Text("Tossup thrown out: its points were taken back.", style="bold")
            elif state.bonus is not None and state.bonus.done:
                last = bonus_summary(state.bonus, state.teams)
            elif m.no_bonus:
                last = (last or Text()).append(f" — no bonus: {m.no_bonus}", style="bold")
            # (u only where it does something: nothing to undo after a throw-out)
            undo = " · u undo the last ruling" if m.can_undo else ""
            nxt = (
                f"n next tossup{undo}"
                if m.tossups_played < m.tossups_total
                else f"every tossup played: E ends the match{undo}"
            )
            nxt = STAGE_HINT.get(m.stage, "{nxt}").format(text=m.stage_text, nxt=nxt)
            last = last or Text(PHASE_LABEL[phase])
            return Group(last, *self._between(state), Text(nxt, style="dim"))
        if phase == "awaiting":
            left = seconds_left(state, self.received)
            tail = f" ({math.ceil(max(left, 0))} s left)" if left is not None else ""
            if m.paused:
                return Text(f"Paused, every word read — buzz window held{tail}; space resumes.")
            return Text(f"Every word read — buzz window open{tail}.", style="bold")
        if phase == "reading":
            if m.paused:
                return Text("Paused — space resumes; w reveals a word, e the rest of the clue.")
            if state.reading.by_key:
                return Text(
                    "Reading by your keys — w reveals a word, e the rest of the clue; "
                    f"f back to {state.reading.wpm} wpm."
                )
            return Text(f"Reading at {state.reading.wpm} wpm — space pauses; f follows your keys.")
        if phase == "ended":
            return Text("The match is over.", style="bold")
        return Text(PHASE_LABEL.get(phase, phase))


def lineup_text(team: TeamView) -> Text:
    """A team's players in a format with lineups (``core.lineups``): those in the lineup, then
    those on the bench, dimmed and marked "(bench)": who may buzz, at a glance."""
    playing = [p for p in team.lineup or [] if p in team.players]
    bench = [p for p in team.players if p not in playing]
    text = Text(" · ")
    text.append(", ".join(team.players[p] for p in playing) or "nobody in the lineup")
    for pid in bench:
        text.append(", ")
        text.append(f"{team.players[pid]} (bench)", style="dim")
    return text


class Scoreboard(StateView):
    def render_state(self, state: State) -> RenderableType:
        table = Table(box=None, expand=True, show_header=False, padding=(0, 1))
        table.add_column("team", ratio=1, overflow="fold")
        table.add_column("points", justify="right")
        live = state.match.phase in ("reading", "awaiting", "buzzed", "prompted")
        for team in state.teams:
            name = Text(team.name, style="bold")
            if team.locked_out and live:
                name.append(" LOCKED", style="bold red")
            if team.kind == "model":
                who = Text(" · model", style="cyan")
            elif team.lineup is not None and team.players:
                who = lineup_text(team)
            else:
                names = ", ".join(team.players.values())
                who = Text(f" · {names}" if names else " · nobody yet", style="dim")
            name.append_text(who)
            table.add_row(name, Text(str(team.score), style="bold"))
        return table


class ModelPanel(StateView):
    """Each model player's current guess and confidence, and where it will buzz (moderator
    only: players never see this)."""

    def render_state(self, state: State) -> RenderableType:
        if not state.models:
            return Text("No model player in this match.", style="dim")
        parts: list[RenderableType] = []
        for view in state.models:
            parts.append(self._one(state, view))
        return Group(*parts)

    def _one(self, state: State, view: ModelGuessView) -> Text:
        text = Text()
        text.append(team_name(state.teams, view.team), style="bold")
        text.append(f" · {view.model}\n", style="cyan")
        if state.tossup is None:
            text.append("  waiting for a tossup\n", style="dim")
            return text
        text.append("  guess: ")
        text.append(view.guess or "—", style="bold")
        if view.confidence is not None:
            filled = round(view.confidence * 10)
            text.append(f"\n  conf {view.confidence:.2f} ")
            text.append("█" * filled, style="cyan")
            text.append("░" * (10 - filled), style="dim")
        curves = state.curves
        curve = next((c for c in curves.curves if c.team == view.team), None) if curves else None
        if curves is not None and curve is not None:
            text.append_text(_against_threshold(curve, curves.over))
        if view.buzz_word is None:
            text.append("\n  will not buzz on this tossup\n", style="dim")
        else:
            clue = clue_of(state.tossup, view.buzz_word) + 1
            done = view.buzz_word <= state.tossup.position
            verb = "buzzed" if done else "will buzz"
            text.append(f"\n  {verb} at word {view.buzz_word + 1} (clue {clue})\n", style="yellow")
        return text


def _against_threshold(curve: ModelCurveView, over: bool) -> Text:
    """Its confidence at the last step read against its threshold; once the tossup is over,
    its whole trajectory: the confidence at each step, ✓ where its guess was right."""
    kind = curve.confidence
    values = [(p.word, p.verbal if kind == "verbal" else p.logit, p.correct) for p in curve.points]
    text = Text()
    if over:
        steps = " ".join(
            f"{'—' if v is None else f'{v:.2f}'}{'✓' if ok else '✗' if ok is False else ''}"
            for _, v, ok in values
        )
        text.append(f"\n  trajectory ({kind}, threshold {curve.threshold:.2f}): ", style="dim")
        text.append(steps or "no steps")
        return text
    read = [v for _, v, _ in values if v is not None]
    if read:
        reached = read[-1] >= curve.threshold
        text.append(f"\n  {kind} {read[-1]:.2f} vs threshold {curve.threshold:.2f}")
        text.append(" reached" if reached else " below", style="yellow" if reached else "dim")
    return text


class EventLog(StateView):
    """The current tossup's log, newest last."""

    def render_state(self, state: State) -> RenderableType:
        events = state.last_events
        # a run of pace changes (+ + + -) is one line: the pace it ended at
        kept = [
            ev
            for i, ev in enumerate(events)
            if not (
                ev.get("type") == "pace_changed"
                and i + 1 < len(events)
                and events[i + 1].get("type") == "pace_changed"
            )
        ]
        lines = [describe_event(ev, state.teams) for ev in kept]
        shown = [line for line in lines if line is not None]
        if not shown:
            return Text("Nothing has happened on this tossup yet.", style="dim")
        return Group(*shown[-30:])


def qr_text(url: str, *, border: int = 2) -> Text:
    """A QR code of ``url`` in Unicode half blocks (two modules per character cell), dark on
    light whatever the terminal's colours, so that phone cameras read it off the screen."""
    import segno

    qr = segno.make(url, error="m")
    rows = [list(row) for row in qr.matrix_iter(scale=1, border=border)]
    if len(rows) % 2:
        rows.append([0] * len(rows[0]))
    chars = {(0, 0): " ", (1, 0): "▀", (0, 1): "▄", (1, 1): "█"}
    out = io.StringIO()
    for top, bottom in zip(rows[0::2], rows[1::2], strict=True):
        out.write("".join(chars[(bool(a), bool(b))] for a, b in zip(top, bottom, strict=True)))
        out.write("\n")
    return Text(out.getvalue().rstrip("\n"), style="#000000 on #ffffff", no_wrap=True)


def join_text(url: str, code: str) -> Text:
    """Where and how players join, above the QR code (the setup screen and the join dialog)."""
    return Text.assemble(
        ("Players: scan the code or open\n", ""),
        (url, "bold underline"),
        "\njoin code ",
        (f" {code} ", "bold reverse"),
    )


class QRCode(Static):
    """The join URL as a QR code."""

    def __init__(self, url: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.url = url
        if url:
            self.update(qr_text(url))

    def show(self, url: str) -> None:
        if url != self.url:
            self.url = url
            self.update(qr_text(url))
