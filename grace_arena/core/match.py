"""The match engine: a pure object. Commands in, events out, ``now`` passed in.

``Match.decide(command, now=...)`` returns the events the command produces without changing
the match; ``Match.apply(events)`` folds them in. ``Match.handle`` does both. The record
(``grace_arena.record``) stores the events between the two, so an event is durable before
anyone acts on it, and ``Match.replay(events)`` rebuilds the exact state after a crash. The one
event the record does not store, ``BuzzRepeated`` (a refused press that repeats one already
stored), changes no state, so the replay of the stored events is still the live match.

Illegal commands raise :class:`IllegalCommand` and change nothing. Legal moves are listed in
``grace_arena.core.phases.TRANSITIONS``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from grace_arena.core import amendments, hybrid, lineups
from grace_arena.core.commands import (
    AbstainPart,
    AnswerPart,
    Buzz,
    CallTimeout,
    Command,
    ConsultPart,
    CorrectRuling,
    EndMatch,
    FileProtest,
    GiveAnswer,
    HalfTimeUp,
    Join,
    MuteAi,
    Pause,
    PreAnswerPart,
    PressAi,
    ReadPart,
    ResolveProtest,
    Resume,
    ResumeClock,
    Reveal,
    Rule,
    RulePart,
    SetAiModes,
    SetBuzzSource,
    SetPace,
    StartTossup,
    Substitute,
    ThrowOut,
    ThrowOutBonus,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.config import BonusSpec, MatchConfig, TeamKind, TeamSpec, TossupSpec
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    AiAnswersShown,
    AnswerGiven,
    BonusAnswerGiven,
    BonusEnded,
    BonusPartConsulted,
    BonusPartRead,
    BonusPartRuled,
    BonusPartUndone,
    BonusPreAnswerGiven,
    BonusPreAnswerOpened,
    BonusStarted,
    BuzzAccepted,
    BuzzRefused,
    BuzzRepeated,
    BuzzTiming,
    ClockResumed,
    Event,
    MatchCreated,
    MatchEnded,
    PaceChanged,
    PlayerJoined,
    PlayerSubstituted,
    ReadingFinished,
    ReadingPaused,
    ReadingResumed,
    RefusalReason,
    Ruled,
    Ruling,
    RulingUndone,
    TimeoutCalled,
    TossupEnded,
    TossupOutcome,
    TossupStarted,
    WordsRevealed,
)
from grace_arena.core.officiating import (
    HalfClock,
    TimeoutTaken,
    conferral_clock,
    half_clock,
    half_time_up,
    next_bonus,
    next_tossup,
    regulation_of,
    replaced_by_start,
    timeouts_left,
)
from grace_arena.core.phases import (
    AI_TRANSITIONS,
    FINISHED,
    HAS_FLOOR,
    LIVE,
    TRANSITIONS,
    Phase,
    allowed_commands,
)
from grace_arena.core.rules import ConsultBonuses, RuleSet, rule_set


@dataclass(frozen=True)
class Floor:
    """The buzz that holds the floor."""

    buzz_id: int
    team: str
    player: str
    kind: TeamKind
    word_index: int
    interrupt: bool
    received_mono: float | None
    answer: str | None = None
    suggestion: str | None = None


@dataclass(frozen=True)
class LedgerEntry:
    """One ruling that currently counts (not undone, not thrown out)."""

    seq: int
    tossup_id: str  # the tossup, or the tossup whose bonus it is
    buzz_id: int  # the buzz ruled (0 for a bonus part)
    team: str
    points: int
    bonus_id: str | None = None  # a bonus part's ruling


@dataclass(frozen=True)
class BonusAnswer:
    """What a team typed for the current part."""

    team: str
    player: str
    text: str
    suggestion: str | None = None
    prompt_question: str | None = None
    confidence: float | None = None  # a model team's
    choice: str | None = None  # consult rules: "own" or "consult"


@dataclass(frozen=True)
class Consulted:
    """What the team was shown when it consulted the model on the current part."""

    model: str
    guess: str | None
    confidence: float | None
    correct: bool | None  # the judge's verdict on the guess (not shown)
    draft: str | None = None


@dataclass(frozen=True)
class PreAnswerWindow:
    """Consult rules with a pre-answer window: the team asked for the model's answer to the
    current part, and its humans write their own until ``deadline``, when it is revealed."""

    player: str | None  # who asked (None: the moderator)
    draft: str | None
    deadline: float  # as opened (the game's clock runs it: a pause holds it)
    answers: tuple[tuple[str, str], ...] = ()  # (player, text), in the order written

    def answered(self, player: str) -> bool:
        return any(p == player for p, _ in self.answers)


@dataclass(frozen=True)
class PartResult:
    """A part's ruling in force: the team ruled, its points, whether it was a bounceback."""

    part: int
    team: str
    ruling: Ruling
    points: int
    bounceback: bool = False
    choice: str | None = None  # consult rules: "own", "consult" or "abstain"


@dataclass(frozen=True)
class BonusPlay:
    """The bonus being played (or, once the cycle is over, the one just played)."""

    bonus_id: str
    tossup_id: str
    team: str  # the controlling team
    index: int
    part: int = 0  # the current part (0-based)
    bounceback: bool = False  # the other team's turn on the current part
    answer: BonusAnswer | None = None  # the turn's answer, once typed
    results: tuple[PartResult, ...] = ()
    done: bool = False
    prompted: bool = False  # the turn's answer was prompted: the team answers again
    consulted: Consulted | None = None  # consult rules: the model's answer, once looked at
    #: Consult rules with a pre-answer window: the humans' own answers before the reveal.
    pre_answer: PreAnswerWindow | None = None

    def points(self, team: str) -> int:
        return sum(r.points for r in self.results if r.team == team)


@dataclass(frozen=True)
class GameState:
    """Everything an undo may restore. Equal states compare equal (``==``)."""

    phase: Phase
    scores: dict[str, int]
    tossup_id: str | None = None
    position: int = -1  # index of the last revealed word of the current tossup
    #: How the words of the current tossup were revealed, in runs: (last word of the run,
    #: source), in order (``events.WordSource``; None for a record that did not keep it).
    heard_by: tuple[tuple[int, str | None], ...] = ()
    #: The moderator paused the match: no word is read and every clock stands still.
    paused: bool = False
    #: While paused: the seconds the clock that ran at the pause (or was set since) has left;
    #: it runs again from the resume with that much (``deadline`` is None meanwhile).
    held: float | None = None
    locked_out: frozenset[str] = frozenset()
    floor: Floor | None = None
    deadline: float | None = None
    ledger: tuple[LedgerEntry, ...] = ()
    played: tuple[str, ...] = ()  # tossups started, in order
    outcomes: dict[str, TossupOutcome] = field(default_factory=dict)
    #: States before each ruling of the current tossup (and its bonus), most recent last.
    history: tuple[GameState, ...] = ()
    bonus: BonusPlay | None = None  # the cycle's bonus
    bonuses_used: tuple[str, ...] = ()  # bonuses started, in order (thrown out included)
    #: The bonus part's conferral clock (``grace_arena.core.officiating``): when it runs out,
    #: or while paused the seconds it has left.
    conferral: float | None = None
    conferral_held: float | None = None

    @property
    def reading(self) -> bool:
        """Whether words are being read now: a tossup's reading, not paused."""
        return self.phase is Phase.READING and not self.paused

    @property
    def heard(self) -> int:
        """Tossups heard: started and not thrown out (regulation counts these)."""
        return sum(1 for t in self.played if self.outcomes.get(t) is not TossupOutcome.THROWN_OUT)

    def without(self, counts: Callable[[LedgerEntry], bool]) -> GameState:
        """This state with the rulings for which ``counts`` is false taken off the ledger and
        the scores (a throw-out)."""
        kept = tuple(e for e in self.ledger if counts(e))
        scores = dict.fromkeys(self.scores, 0)
        for e in kept:
            scores[e.team] += e.points
        return replace(self, ledger=kept, scores=scores, history=())


class RefusalKey(NamedTuple):
    """What makes a refused press the same as an earlier one of the current tossup."""

    team: str
    player: str
    reason: RefusalReason
    holder_buzz_id: int | None  # the buzz that held the floor (lost_race), else None


@dataclass(frozen=True)
class MatchState:
    """The whole match: set-up, roster and counters (never undone) and the game state."""

    config: MatchConfig
    game: GameState
    players: dict[str, dict[str, str]]  # team -> player id -> display name
    seq: int = 0  # events applied
    buzzes: int = 0  # buzz ids handed out
    tossups_started: int = 0
    wpm: int | None = None  # the reading pace, once the moderator changed it
    #: The words follow the moderator's keys alone: the pace's clock reveals none.
    by_key: bool = False
    #: The refusals of the current tossup stored in full, by key: their buzz ids. A press
    #: with a key found here is a repeat (``BuzzRepeated``, counted, not stored as an event).
    #: Emptied when a tossup starts; an undo leaves it (the refusals stay in the record
    #: whatever ruling is taken back).
    refused: dict[RefusalKey, int] = field(default_factory=dict)
    #: The timeouts called, in order (never undone).
    timeouts: tuple[TimeoutTaken, ...] = ()
    #: Protests, and what corrections of earlier cycles need (``core.amendments``).
    officiating: amendments.Officiating = field(default_factory=amendments.Officiating)
    #: Team -> the players in its lineup now (``core.lineups``; never undone).
    lineups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: A timed half's game clock (``core.officiating``; never undone).
    half_clock: HalfClock = field(default_factory=HalfClock)
    #: Hybrid teams' AI players: modes, gates, mutes (``core.hybrid``).
    hybrid: hybrid.HybridState = field(default_factory=hybrid.HybridState)

    @property
    def pace(self) -> int:
        """Words per minute the reader reads at now."""
        return self.wpm if self.wpm is not None else self.config.wpm


# --------------------------------------------------------------------------------------------
# Applying events (the only place state changes). Pure: state in, state out.


def _reduce(state: MatchState | None, ev: Event) -> MatchState:
    if state is None:
        if not isinstance(ev, MatchCreated):
            raise ValueError(f"a match record must start with match_created, not {ev.type}")
        teams = ev.config.teams
        players = {
            t.id: ({t.model_player: t.model or t.name} if t.kind is TeamKind.MODEL else {})
            for t in teams
        }
        game = GameState(phase=Phase.IDLE, scores={t.id: 0 for t in teams})
        return MatchState(
            config=ev.config, game=game, players=players, seq=ev.seq,
            lineups=lineups.reduce({}, ev.config, ev),
        )  # fmt: skip
    if isinstance(ev, BuzzRepeated):
        # outside the stored sequence: it carries the last seq and changes nothing
        if ev.seq != state.seq:
            raise ValueError(f"a repeated buzz at seq {ev.seq} does not follow {state.seq}")
        return state
    if ev.seq != state.seq + 1:
        raise ValueError(f"event seq {ev.seq} does not follow {state.seq}")
    s = amendments.observe(replace(state, seq=ev.seq), ev)
    if s.config.rules.half_time is not None:
        s = replace(s, half_clock=half_clock(s.half_clock, ev, heard=s.game.heard))
    if isinstance(ev, PlayerJoined | PlayerSubstituted):
        s = replace(s, lineups=lineups.reduce(s.lineups, s.config, ev))
        if isinstance(ev, PlayerSubstituted):
            return s
    if isinstance(ev, amendments.AMENDMENTS):
        return amendments.reduce(s, ev)
    if isinstance(ev, hybrid.EVENTS):
        return hybrid.reduce(s, ev)
    g = s.game
    match ev:
        case PlayerJoined():
            team_players = {**s.players[ev.team], ev.player: ev.name}
            return replace(s, players={**s.players, ev.team: team_players})
        case TossupStarted():
            g = GameState(
                phase=Phase.READING,
                scores=g.scores,
                tossup_id=ev.tossup_id,
                ledger=g.ledger,
                played=(*g.played, ev.tossup_id),
                outcomes=g.outcomes,
                bonuses_used=g.bonuses_used,
            )
            return replace(s, game=g, tossups_started=s.tossups_started + 1, refused={})
        case WordsRevealed():
            runs = g.heard_by
            if runs and runs[-1][1] == ev.source:
                runs = runs[:-1]
            g = replace(g, position=ev.position, heard_by=(*runs, (ev.position, ev.source)))
        case ReadingFinished():
            g = replace(g, phase=Phase.AWAITING, deadline=ev.deadline)
        case ReadingPaused():
            g = replace(g, paused=True)
        case ReadingResumed():
            deadline = g.deadline if g.held is None else ev.t + g.held
            g = replace(g, paused=False, held=None, deadline=deadline)
        case PaceChanged():
            by_key = s.by_key if ev.by_key is None else ev.by_key
            return replace(s, wpm=ev.wpm, by_key=by_key)
        case BuzzAccepted():
            floor = Floor(
                buzz_id=ev.buzz_id,
                team=ev.team,
                player=ev.player,
                kind=ev.kind,
                word_index=ev.word_index,
                interrupt=ev.interrupt,
                received_mono=ev.timing.received_mono,
                answer=ev.answer,
                suggestion=ev.suggestion,
            )
            # a guess given with the buzz stops the answer clock (also in a record written
            # before the clock stopped for one)
            deadline = None if ev.answer else ev.deadline
            g = _held(replace(g, phase=Phase.BUZZED, floor=floor, deadline=deadline), ev)
            return replace(s, game=g, buzzes=max(s.buzzes, ev.buzz_id))
        case BuzzRefused():
            key = RefusalKey(ev.team, ev.player, ev.reason, ev.holder_buzz_id)
            # (a record written before repeats were counted may refuse the same key again:
            # its first refusal stays the one repeats are counted on)
            refused = s.refused if key in s.refused else {**s.refused, key: ev.buzz_id}
            return replace(s, buzzes=max(s.buzzes, ev.buzz_id), refused=refused)
        case AnswerGiven():
            assert g.floor is not None
            # an answer stops the answer clock: the moderator's ruling may take its time
            floor = replace(g.floor, answer=ev.text, suggestion=ev.suggestion)
            g = replace(g, floor=floor, deadline=None)
        case Ruled():
            before = g
            scores = dict(g.scores)
            scores[ev.team] += ev.points
            entry = LedgerEntry(ev.seq, ev.tossup_id, ev.buzz_id, ev.team, ev.points)
            g = replace(g, scores=scores, ledger=(*g.ledger, entry), history=(*g.history, before))
            if ev.ruling is Ruling.PROMPT:
                g = replace(g, phase=Phase.PROMPTED, deadline=ev.deadline)
            elif ev.ruling is Ruling.INCORRECT:
                g = replace(g, locked_out=g.locked_out | {ev.team}, floor=None, deadline=None)
                if ev.resume is not None:
                    g = replace(g, phase=Phase(ev.resume), deadline=ev.deadline)
            # CORRECT, or an incorrect answer that ends the tossup: TossupEnded follows.
        case ClockResumed():
            g = replace(g, deadline=ev.deadline)
        case RulingUndone():
            if not g.history:
                raise ValueError(f"seq {ev.seq}: nothing to undo")
            # a pause is not a ruling: the undo keeps the match paused or not as it is now
            g = replace(g.history[-1], deadline=ev.deadline, paused=g.paused, held=None)
        case TossupEnded():
            if ev.outcome is TossupOutcome.THROWN_OUT:
                g = g.without(lambda e: e.tossup_id != ev.tossup_id)
            phase = {
                TossupOutcome.ANSWERED: Phase.ANSWERED,
                TossupOutcome.DEAD: Phase.DEAD,
                TossupOutcome.THROWN_OUT: Phase.THROWN_OUT,
            }[ev.outcome]
            g = replace(
                g,
                phase=phase,
                deadline=None,
                paused=False,
                held=None,
                outcomes={**g.outcomes, ev.tossup_id: ev.outcome},
            )
            if ev.outcome is not TossupOutcome.ANSWERED:
                g = replace(g, floor=None, bonus=None)
        case BonusStarted():
            play = BonusPlay(ev.bonus_id, ev.tossup_id, ev.team, ev.index)
            g = replace(
                g, phase=Phase.BONUS, bonus=play, deadline=ev.deadline,
                bonuses_used=(*g.bonuses_used, ev.bonus_id),
            )  # fmt: skip
        case BonusAnswerGiven():
            assert g.bonus is not None
            answer = BonusAnswer(
                ev.team, ev.player, ev.text, ev.suggestion, ev.prompt_question, ev.confidence,
                ev.choice,
            )  # fmt: skip
            g = replace(g, bonus=replace(g.bonus, answer=answer), deadline=None)
        case BonusPartConsulted():
            assert g.bonus is not None
            seen = Consulted(ev.model, ev.guess, ev.confidence, ev.model_correct, ev.draft)
            play = replace(g.bonus, consulted=seen, pre_answer=None)
            g = replace(g, bonus=play, deadline=ev.deadline)
        case BonusPreAnswerOpened():
            assert g.bonus is not None
            window = PreAnswerWindow(ev.player, ev.draft, ev.deadline)
            g = replace(g, bonus=replace(g.bonus, pre_answer=window), deadline=ev.deadline)
        case BonusPreAnswerGiven():
            assert g.bonus is not None and g.bonus.pre_answer is not None
            window = g.bonus.pre_answer
            window = replace(window, answers=(*window.answers, (ev.player, ev.text)))
            g = replace(g, bonus=replace(g.bonus, pre_answer=window))
        case AiAnswersShown():  # a hybrid team consulted its AI players (``core.hybrid``)
            assert g.bonus is not None
            # every AI's answer, for the screens ("Alpha (lightweight): Twain · Bravo: –")
            models = " + ".join(a.model for a in ev.answers)
            shown = " · ".join(f"{a.player}: {a.guess or '–'}" for a in ev.answers)
            seen = Consulted(models, shown, None, None)
            g = replace(g, bonus=replace(g.bonus, consulted=seen), deadline=ev.deadline)
        case BonusPartRuled():
            assert g.bonus is not None
            before = g
            scores = dict(g.scores)
            scores[ev.team] += ev.points
            entry = LedgerEntry(ev.seq, ev.tossup_id, 0, ev.team, ev.points, ev.bonus_id)
            play = replace(g.bonus, answer=None, prompted=ev.resume == "prompt")
            if ev.resume != "prompt":
                result = PartResult(
                    ev.part, ev.team, ev.ruling, ev.points, ev.bounceback, ev.choice
                )
                play = replace(play, results=(*play.results, result))
            if ev.resume == "bounceback":
                play = replace(play, bounceback=True, consulted=None)
            elif ev.resume == "part":
                play = replace(play, part=play.part + 1, bounceback=False, consulted=None)
            g = replace(
                g, scores=scores, ledger=(*g.ledger, entry), history=(*g.history, before),
                bonus=play, deadline=ev.deadline,
            )  # fmt: skip
        case BonusPartUndone():
            if not g.history:
                raise ValueError(f"seq {ev.seq}: nothing to undo")
            g = replace(g.history[-1], deadline=ev.deadline, paused=g.paused, held=None)
        case BonusEnded():
            assert g.bonus is not None
            if ev.outcome == "thrown_out":
                g = replace(g.without(lambda e: e.bonus_id != ev.bonus_id), bonus=None)
            else:
                g = replace(g, bonus=replace(g.bonus, done=True, answer=None))
            g = replace(g, phase=Phase.ANSWERED, deadline=None, paused=False, held=None)
        case MatchEnded():
            g = replace(g, phase=Phase.ENDED, history=(), paused=False, held=None)
        case TimeoutCalled():
            taken = TimeoutTaken(ev.team, ev.t, ev.ends, s.tossups_started)
            return replace(s, timeouts=(*s.timeouts, taken))
        case MatchCreated():
            raise ValueError("match_created may only be the first event")
    return replace(s, game=conferral_clock(_held(g, ev), ev))


def _held(g: GameState, ev: Event) -> GameState:
    """Every clock stands still while the match is paused: one running at the pause, or set
    since (a ruling, an undo, a buzz, the last word read), is held with the time it has left
    at ``ev``, and runs again from the resume. An event that sets the clock anew and sets none
    (an answer given, which stops it; a buzz with no answer clock) ends the one held too."""
    if g.paused and g.deadline is not None:
        return replace(g, held=max(0.0, g.deadline - ev.t), deadline=None)
    if g.held is not None and not isinstance(ev, _CLOCK_KEPT):
        return replace(g, held=None)
    return g


#: The events after which the clock is as it was (the others set it anew, or stop it).
_CLOCK_KEPT = (WordsRevealed, ReadingPaused, ReadingResumed, BonusPreAnswerGiven)


# --------------------------------------------------------------------------------------------


def word_source(g: GameState, word_index: int) -> str | None:
    """How word ``word_index`` of the current tossup came to be heard (its reveal's source),
    or None when no word of it was revealed (or the record did not say)."""
    for last, source in g.heard_by:
        if word_index <= last:
            return source
    return None


def _suggest(answer: str | None, answer_line: str) -> tuple[str | None, str | None]:
    """The automatic judge's directive (and directed-prompt question) for a typed answer."""
    if answer is None or not answer.strip() or not answer_line:
        return None, None
    from grace_arena.core.judge import judge

    verdict = judge(answer, answer_line)
    return str(verdict.directive), verdict.prompt_question


class Match:
    """A match: build with :meth:`create` or :meth:`replay`; drive with :meth:`handle`."""

    def __init__(self, state: MatchState) -> None:
        self.state = state

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def create(cls, config: MatchConfig, *, now: float) -> tuple[Match, list[Event]]:
        created = MatchCreated(seq=1, t=now, config=config)
        return cls(_reduce(None, created)), [created]

    @classmethod
    def replay(cls, events: Iterable[Event]) -> Match:
        state: MatchState | None = None
        for ev in events:
            state = _reduce(state, ev)
        if state is None:
            raise ValueError("cannot replay a match from no events")
        return cls(state)

    # -- read access ---------------------------------------------------------------------------

    @property
    def config(self) -> MatchConfig:
        return self.state.config

    @property
    def game(self) -> GameState:
        return self.state.game

    @property
    def phase(self) -> Phase:
        return self.state.game.phase

    @property
    def scores(self) -> dict[str, int]:
        return dict(self.state.game.scores)

    @property
    def current_tossup(self) -> TossupSpec | None:
        tid = self.state.game.tossup_id
        return self.config.tossup(tid) if tid is not None else None

    @property
    def current_bonus(self) -> BonusSpec | None:
        play = self.state.game.bonus
        return self.config.bonus(play.bonus_id) if play is not None else None

    def bonus_turn(self) -> str | None:
        """The team whose turn it is on the current bonus part (None: no bonus being played)."""
        return _turn(self.state) if self.phase is Phase.BONUS else None

    def next_tossup_id(self) -> str | None:
        """The tossup ``StartTossup()`` starts: the next regulation tossup, or an extra (a
        thrown-out tossup's replacement, or overtime's); see ``core.officiating``."""
        return next_tossup(self.config, self.state.game)[0]

    # -- commands ------------------------------------------------------------------------------

    def handle(self, command: Command, *, now: float) -> list[Event]:
        events = self.decide(command, now=now)
        self.apply(events)
        return events

    def apply(self, events: Sequence[Event]) -> None:
        state = self.state
        for ev in events:
            state = _reduce(state, ev)
        self.state = state

    def decide(self, command: Command, *, now: float) -> list[Event]:
        """The events ``command`` produces at time ``now``; the match itself is unchanged."""
        start = self.state.game.phase
        allowed = TRANSITIONS.get((start, command.kind))
        ai_players = any(t.ai_players for t in self.config.teams)
        if allowed is None and ai_players:
            allowed = AI_TRANSITIONS.get((start, command.kind))
        if allowed is None and start is Phase.ENDED:
            what = "takes no more players" if command.kind == "join" else "is over"
            raise IllegalCommand(f"this match has ended: it {what}")
        if allowed is None and command.kind == "pause" and start in HAS_FLOOR:
            # (the usual race: the moderator pressed pause as a player buzzed)
            raise IllegalCommand(
                "not paused: a player buzzed first and has the floor; rule the buzz, then pause"
            )
        if allowed is None:
            raise IllegalCommand(
                f"cannot {command.kind.replace('_', ' ')} while the match is {start.value}; "
                "allowed now: "
                f"{', '.join(sorted(allowed_commands(start, ai_players=ai_players))) or 'nothing'}"
            )
        run = _Decision(self.state, now)
        handler = _HANDLERS[type(command)]
        handler(run, command)
        end = run.state.game.phase
        if end not in allowed:  # a bug in the engine, not the caller's fault
            raise AssertionError(f"{command.kind} led from {start} to {end}, not in the table")
        return run.events


class _Decision:
    """Work area of one ``decide`` call: emits events and folds them into a scratch state."""

    def __init__(self, state: MatchState, now: float) -> None:
        self.state = state
        self.now = now
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        # a repeated buzz is not stored: it takes no place in the record's sequence
        seq = self.state.seq if isinstance(event, BuzzRepeated) else self.state.seq + 1
        event = event.model_copy(update={"seq": seq, "t": self.now})
        self.state = _reduce(self.state, event)
        self.events.append(event)

    # helpers
    @property
    def g(self) -> GameState:
        return self.state.game

    @property
    def config(self) -> MatchConfig:
        return self.state.config

    @property
    def rules(self) -> RuleSet:
        return rule_set(self.state.config.rules)

    def tossup(self) -> TossupSpec:
        assert self.g.tossup_id is not None
        spec = self.config.tossup(self.g.tossup_id)
        assert spec is not None
        return spec

    def team(self, team_id: str) -> TeamSpec:
        team = self.config.team(team_id)
        if team is None:
            known = ", ".join(t.id for t in self.config.teams)
            raise IllegalCommand(f"no team {team_id!r} in this match (teams: {known})")
        return team

    def deadline(self, seconds: float | None) -> float | None:
        return None if seconds is None else self.now + seconds

    def bonus_deadline(self) -> float | None:
        """When the turn's answer to a part is due. Read aloud, the moderator reads the part
        and rules what the team says: no clock (it would run while the part is read)."""
        if self.config.reading_mode == "read_aloud":
            return None
        return self.deadline(self.rules.bonuses.answer_time)

    # -- bonuses -------------------------------------------------------------------------------

    def start_bonus(
        self, team: str, tossup_id: str, *, replaces: str | None = None,
        chosen: BonusSpec | None = None,
    ) -> None:  # fmt: skip
        """The team that answered ``tossup_id`` gets the next unused bonus, if the rules play
        bonuses now (not in overtime, unless the format says so) and one is left; replacing
        the thrown-out bonus ``replaces``, the next unused extra (or ``chosen``)."""
        g = self.g
        if not self.rules.bonuses.earned(
            overtime=in_overtime(self.config, g, self.state.half_clock)
        ):
            return
        bonus = chosen or next_bonus(self.config, g, replacing=replaces is not None)
        if bonus is None:
            return
        self.emit(
            BonusStarted(
                tossup_id=tossup_id, bonus_id=bonus.id, team=team, index=len(g.bonuses_used),
                deadline=self.bonus_deadline(), replaces=replaces,
            )
        )  # fmt: skip
        self.model_answers_part()

    def model_answers_part(self) -> None:
        """When the turn on the current part is a model team's, it answers at once with its
        precomputed guess (its best guess, confident or not: see ``grace_arena.model.policy``);
        a part it has no guess for is answered with nothing. The moderator rules it."""
        play = self.g.bonus
        if play is None or play.done or play.answer is not None or play.prompted:
            return
        team = self.config.team(_turn(self.state))
        if team is None or team.kind is not TeamKind.MODEL:
            return
        spec = self.config.bonus(play.bonus_id)
        assert spec is not None
        answers = team.bonus_answers.get(play.bonus_id, ())
        answer = answers[play.part] if play.part < len(answers) else None
        text = (answer.guess if answer is not None else None) or ""
        suggestion, question = (
            _suggest(text, spec.parts[play.part].answer) if text else (None, None)
        )
        self.emit(
            BonusAnswerGiven(
                bonus_id=play.bonus_id, part=play.part, team=team.id, player=team.model_player,
                text=text, suggestion=suggestion, prompt_question=question,
                confidence=answer.confidence if answer is not None else None,
            )
        )  # fmt: skip

    def part_points(self, ruling: Ruling, value: int) -> tuple[int, str | None]:
        """Points of the current turn's ruling, and the team's choice under consult rules
        (a bounceback, or a model team's answer, is scored by the part's value)."""
        play = self.g.bonus
        assert play is not None
        team = self.config.team(_turn(self.state))
        bonuses = self.rules.bonuses
        choice = bonuses.choice(
            bounceback=play.bounceback,
            consulted=play.consulted is not None,
            model=team is None or team.kind is TeamKind.MODEL,
        )
        if choice == "consult" and team is not None and team.ai_players:
            scored = hybrid.consult_points(self.state, team.id, ruling, value)
            if scored is not None:  # QANTA 2026: less its AI players' deflation
                return scored, choice
        return bonuses.part_points(ruling, value, choice), choice

    def rule_part(self, ruling: Ruling, *, by: str) -> None:
        play = self.g.bonus
        assert play is not None
        spec = self.config.bonus(play.bonus_id)
        assert spec is not None
        team = _turn(self.state)
        base = {
            "bonus_id": play.bonus_id, "tossup_id": play.tossup_id, "part": play.part,
            "team": team, "ruling": ruling, "bounceback": play.bounceback, "by": by,
            "answer": play.answer.text if play.answer is not None else None,
        }  # fmt: skip
        if ruling is Ruling.PROMPT:
            self.emit(
                BonusPartRuled(**base, points=0, resume="prompt", deadline=self.bonus_deadline())
            )
            return
        points, choice = self.part_points(ruling, spec.parts[play.part].value)
        self.finish_part(base, ruling, points, choice)

    def finish_part(self, base: dict, ruling: Ruling, points: int, choice: str | None) -> None:
        """Emit the current turn's ruling and what follows it (a bounceback, the next part —
        which a model team answers at once — or the bonus's end)."""
        play = self.g.bonus
        assert play is not None
        spec = self.config.bonus(play.bonus_id)
        assert spec is not None
        resume = self.rules.bonuses.after_part(
            ruling,
            bounceback=play.bounceback,
            n_teams=len(self.config.teams),
            more_parts=play.part + 1 < len(spec.parts),
        )
        deadline = self.bonus_deadline() if resume is not None else None
        self.emit(
            BonusPartRuled(**base, points=points, resume=resume, deadline=deadline, choice=choice)
        )
        if resume is not None:
            self.model_answers_part()
        else:
            done = self.g.bonus
            assert done is not None
            self.emit(
                BonusEnded(
                    bonus_id=done.bonus_id, tossup_id=done.tossup_id, team=done.team,
                    outcome="completed",
                    points={t.id: done.points(t.id) for t in self.config.teams
                            if any(r.team == t.id for r in done.results)},
                )
            )  # fmt: skip

    # -- model players ---------------------------------------------------------------------

    def model_buzzers_at(self, position: int) -> list[TeamSpec]:
        """Model teams whose buzz position is reached at ``position`` and who may buzz."""
        g = self.g
        if g.tossup_id is None or position < 0:
            return []
        ready = [
            t
            for t in self.config.teams
            if t.kind is TeamKind.MODEL
            and t.id not in g.locked_out
            and (b := t.buzzes.get(g.tossup_id)) is not None
            and b.word_index <= position
        ]
        return sorted(ready, key=lambda t: t.buzzes[g.tossup_id].word_index)  # stable: team order

    def trigger_models(self) -> None:
        """Let every model whose position has been reached buzz (the first takes the floor)."""
        for team in self.model_buzzers_at(self.g.position):
            assert self.g.tossup_id is not None
            mb = team.buzzes[self.g.tossup_id]
            self.buzz(
                team,
                team.model_player,
                word_index=max(self.g.position, 0),
                timing=BuzzTiming(),
                answer=mb.guess,
                confidence=mb.confidence,
            )
        hybrid.trigger(self)  # a hybrid team's autonomous AI players alike

    # -- buzzing -------------------------------------------------------------------------------

    def buzz(
        self,
        team: TeamSpec,
        player: str,
        *,
        word_index: int,
        timing: BuzzTiming,
        answer: str | None,
        confidence: float | None = None,
        kind: TeamKind | None = None,  # a hybrid team's AI player buzzes as a model
    ) -> None:
        g = self.g
        reason, holder = None, None
        if g.phase not in LIVE:
            reason = RefusalReason.NOT_LIVE
        elif team.id in g.locked_out:
            reason = RefusalReason.LOCKED_OUT
        elif g.floor is not None:
            reason, holder = RefusalReason.LOST_RACE, g.floor.buzz_id
        if reason is not None:
            first = self.state.refused.get(RefusalKey(team.id, player, reason, holder))
            if first is not None:
                self.emit(
                    BuzzRepeated(
                        buzz_id=first,
                        team=team.id,
                        player=player,
                        reason=reason,
                        word_index=word_index,
                        received_wall=timing.received_wall,
                    )
                )
                return
        buzz_id = self.state.buzzes + 1
        spec = self.tossup() if g.tossup_id is not None else None
        where = {
            "buzz_id": buzz_id,
            "tossup_id": g.tossup_id,
            "team": team.id,
            "player": player,
            "kind": kind or team.kind,
            "word_index": word_index,
            "clue_index": spec.clue_of(word_index) if spec else None,
            "char_offset": spec.char_offset(word_index) if spec else None,
            "fraction": spec.fraction_revealed(word_index) if spec else None,
            "timing": timing,
            "word_source": word_source(g, word_index),
        }
        if reason is RefusalReason.LOST_RACE:
            assert g.floor is not None
            margin = None
            if timing.received_mono is not None and g.floor.received_mono is not None:
                margin = timing.received_mono - g.floor.received_mono
            self.emit(BuzzRefused(**where, reason=reason, holder_buzz_id=holder, margin=margin))
        elif reason is not None:
            self.emit(BuzzRefused(**where, reason=reason))
        else:
            assert spec is not None
            suggestion, question = _suggest(answer, spec.answer)
            self.emit(
                BuzzAccepted(
                    **where,
                    # Hearing part of a word counts as hearing it: a buzz once the last word is
                    # out comes after the whole question (an incorrect answer costs nothing).
                    interrupt=g.phase is Phase.READING and g.position < spec.n_words - 1,
                    answer=answer,
                    suggestion=suggestion,
                    prompt_question=question,
                    confidence=confidence,
                    # the answer clock runs until an answer is given: a model's comes with it
                    deadline=None if answer else self.deadline(self.rules.tossups.answer_time),
                )
            )

    # -- ruling --------------------------------------------------------------------------------

    def rule(self, ruling: Ruling, *, by: str) -> None:
        g, rules, spec = self.g, self.rules.tossups, self.tossup()
        floor = g.floor
        assert floor is not None
        base = {
            "buzz_id": floor.buzz_id,
            "tossup_id": spec.id,
            "team": floor.team,
            "player": floor.player,
            "ruling": ruling,
            "by": by,
        }
        if ruling is Ruling.PROMPT:
            deadline = self.deadline(rules.answer_time)
            self.emit(Ruled(**base, points=0, resume=Phase.PROMPTED.value, deadline=deadline))
            return
        before = [e.points for e in g.ledger if e.tossup_id == spec.id and e.bonus_id is None]
        score = rules.buzz_score(
            ruling,
            word_index=floor.word_index,
            power_index=spec.power_index,
            interrupt=floor.interrupt,
            before=before,
        )
        points = score.points
        if ruling is Ruling.CORRECT:  # an AI player of a hybrid team: its weight class's part
            points = hybrid.tossup_points(self.state, floor.team, floor.player, points)
            self.emit(Ruled(**base, points=points, power=score.power))
            self.emit(
                TossupEnded(
                    tossup_id=spec.id, outcome=TossupOutcome.ANSWERED, reason="correct_answer"
                )
            )
            self.start_bonus(floor.team, spec.id)
            return
        locked = g.locked_out | {floor.team}
        reason = rules.ends_after_incorrect(locked, [t.id for t in self.config.teams])
        if reason is not None:
            self.emit(Ruled(**base, points=points))
            self.emit(TossupEnded(tossup_id=spec.id, outcome=TossupOutcome.DEAD, reason=reason))
            return
        if floor.interrupt:
            self.emit(Ruled(**base, points=points, resume=Phase.READING.value))
        else:
            deadline = self.deadline(rules.buzz_window)
            self.emit(Ruled(**base, points=points, resume=Phase.AWAITING.value, deadline=deadline))
        self.trigger_models()


# --------------------------------------------------------------------------------------------
# One handler per command. Each validates, then emits through the decision.


def _join(run: _Decision, cmd: Join) -> None:
    team = run.team(cmd.team)
    if team.kind is TeamKind.MODEL:
        raise IllegalCommand(f"team {team.id!r} is a model team; people cannot join it")
    for team_id, members in run.state.players.items():
        if cmd.player in members and team_id != cmd.team:
            raise IllegalCommand(f"player {cmd.player!r} already plays for team {team_id!r}")
    if cmd.limit is not None and cmd.player not in run.state.players[cmd.team]:
        humans = sum(
            len(run.state.players[t.id]) for t in run.config.teams if t.kind is TeamKind.HUMAN
        )
        if humans >= cmd.limit:
            raise IllegalCommand(f"this match is full ({cmd.limit} players)")
    run.emit(PlayerJoined(team=cmd.team, player=cmd.player, name=cmd.name))


def _start_tossup(run: _Decision, cmd: StartTossup) -> None:
    played = set(run.g.played)
    replaces = replaced_by_start(run.g)
    if cmd.tossup_id is None:
        tossup_id, replaces = next_tossup(run.config, run.g)
        if tossup_id is None:
            raise IllegalCommand("every tossup of this match has been played; end the match")
    else:
        if run.config.tossup(cmd.tossup_id) is None:
            raise IllegalCommand(f"no tossup {cmd.tossup_id!r} in this match")
        if cmd.tossup_id in played:
            raise IllegalCommand(f"tossup {cmd.tossup_id!r} has already been played")
        tossup_id = cmd.tossup_id
    run.emit(TossupStarted(tossup_id=tossup_id, index=run.state.tossups_started, replaces=replaces))


def _reveal(run: _Decision, cmd: Reveal) -> None:
    # A pause stops the automatic reading; the moderator may still step by hand.
    g, spec = run.g, run.tossup()
    if cmd.paced and g.paused:
        raise IllegalCommand("the reading is paused: only the moderator's step reveals a word")
    if cmd.paced and cmd.source != "speech" and run.state.by_key:
        raise IllegalCommand("the reading follows the moderator's keys: the pace reveals no word")
    target = g.position + 1 if cmd.to is None else cmd.to
    if cmd.clue:  # the rest of the clue the next word is in, as far as the reading got now
        target = spec.clue_ends[spec.clue_of(min(g.position + 1, spec.n_words - 1))]
    if target <= g.position:
        raise IllegalCommand(f"word {target} is already revealed (position {g.position})")
    last = spec.n_words - 1
    stop = min(target, last)
    # Reveal word by word only as far as the first model buzz; otherwise in one event.
    model_stops = [
        max(t.buzzes[spec.id].word_index, g.position + 1)
        for t in run.config.teams
        if t.kind is TeamKind.MODEL and t.id not in g.locked_out and spec.id in t.buzzes
    ]
    model_stops += hybrid.stops(run.state)  # a hybrid team's autonomous AI players
    first_model = min((p for p in model_stops if p <= stop), default=None)
    if first_model is not None:
        stop = first_model
    if stop > g.position:
        run.emit(WordsRevealed(tossup_id=spec.id, position=stop, source=cmd.word_source))
    if first_model is not None:
        run.trigger_models()
        return
    if target > last:
        deadline = run.now + run.rules.tossups.buzz_window
        run.emit(ReadingFinished(tossup_id=spec.id, deadline=deadline))


def _buzz(run: _Decision, cmd: Buzz) -> None:
    team = run.team(cmd.team)
    if team.kind is TeamKind.MODEL:
        raise IllegalCommand(
            f"team {team.id!r} is a model team; it buzzes from its precomputed positions"
        )
    if cmd.player not in run.state.players[team.id]:
        raise IllegalCommand(f"player {cmd.player!r} has not joined team {team.id!r}")
    if not lineups.in_lineup(run.state, team.id, cmd.player):
        name = run.state.players[team.id][cmd.player]
        raise IllegalCommand(f"{name} is on the bench: {team.name}'s lineup plays")
    g = run.g
    word_index = max(g.position, 0)
    if cmd.word_index is not None:
        if g.phase in LIVE and cmd.word_index > word_index:
            raise IllegalCommand(
                f"buzz at word {cmd.word_index} is ahead of the reading (word {word_index})"
            )
        if cmd.word_index < 0:
            raise IllegalCommand("word index must be >= 0")
        word_index = cmd.word_index
    run.buzz(team, cmd.player, word_index=word_index, timing=cmd.timing, answer=cmd.answer)


def _answer(run: _Decision, cmd: GiveAnswer) -> None:
    if run.g.phase is Phase.BONUS:
        if cmd.part is None:
            raise IllegalCommand(
                "that answer was for the tossup, which was ruled already: the bonus is up"
            )
        _answer_part(run, AnswerPart(team=cmd.team, player=cmd.player, text=cmd.text,
                                     part=cmd.part, bounceback=cmd.bounceback))  # fmt: skip
        return
    if cmd.part is not None:
        raise IllegalCommand(f"that answer was for bonus part {cmd.part}, which is over")
    floor = run.g.floor
    assert floor is not None
    if (cmd.team, cmd.player) != (floor.team, floor.player):
        raise IllegalCommand(f"player {cmd.player!r} of team {cmd.team!r} does not have the floor")
    deadline = run.g.deadline
    if deadline is not None and run.now >= deadline:
        raise IllegalCommand("the answer time ran out before this answer came")
    suggestion, question = _suggest(cmd.text, run.tossup().answer)
    run.emit(
        AnswerGiven(
            buzz_id=floor.buzz_id,
            team=cmd.team,
            player=cmd.player,
            text=cmd.text,
            suggestion=suggestion,
            prompt_question=question,
        )
    )


def _rule(run: _Decision, cmd: Rule) -> None:
    g = run.g
    if g.phase is Phase.BONUS:
        if cmd.buzz_id is not None:
            raise IllegalCommand(
                "that ruling was for the tossup's buzz, which was ruled already: the bonus is up"
            )
        _rule_part(run, RulePart(ruling=cmd.ruling, part=cmd.part, bounceback=cmd.bounceback))
        return
    if cmd.part is not None:
        raise IllegalCommand(f"that ruling was for bonus part {cmd.part}, which is over")
    floor = g.floor
    assert floor is not None
    if cmd.buzz_id is not None and cmd.buzz_id != floor.buzz_id:
        raise IllegalCommand(
            f"that ruling was for buzz {cmd.buzz_id}, which no longer has the floor"
        )
    team = run.team(floor.team)
    if cmd.ruling is Ruling.PROMPT and (
        team.kind is TeamKind.MODEL or floor.kind is TeamKind.MODEL
    ):
        raise IllegalCommand(
            f"team {team.id!r} is a model team: it gave its one answer and cannot say more "
            "(rule it correct or incorrect)"
        )
    run.rule(cmd.ruling, by="moderator")


def _up(run: _Decision, part: int | None, bounceback: bool | None, what: str) -> None:
    """Refuse an answer or ruling meant for a part (or turn) that is no longer up."""
    play = run.g.bonus
    assert play is not None
    current = play.part + 1
    if part is not None and part != current:
        raise IllegalCommand(f"that {what} was for part {part}; part {current} is up now")
    if bounceback is not None and bounceback != play.bounceback:
        turn = _turn(run.state)
        now = f"team {turn!r}'s bounceback" if play.bounceback else f"team {turn!r}'s turn"
        raise IllegalCommand(f"that {what} was for another turn on part {current}: it is {now}")


def _time_up(run: _Decision, cmd: TimeUp) -> None:
    g = run.g
    if g.deadline is None:
        raise IllegalCommand("there is no time limit running")
    if run.now < g.deadline:
        raise IllegalCommand(f"time is not up yet ({g.deadline - run.now:.1f} s left)")
    if g.phase is Phase.BONUS and g.bonus is not None and g.bonus.pre_answer is not None:
        _reveal_model(run)  # the pre-answer window closed: the model's answer is shown
    elif g.phase is Phase.BONUS:
        run.rule_part(Ruling.INCORRECT, by="timer")
    elif g.phase in HAS_FLOOR:
        run.rule(Ruling.INCORRECT, by="timer")
    else:
        run.emit(
            TossupEnded(tossup_id=run.tossup().id, outcome=TossupOutcome.DEAD, reason="time_up")
        )


def _pause(run: _Decision, cmd: Pause) -> None:
    if run.g.paused:
        raise IllegalCommand("reading is already paused")
    run.emit(ReadingPaused(tossup_id=run.tossup().id))


def _resume(run: _Decision, cmd: Resume) -> None:
    if not run.g.paused:
        raise IllegalCommand("reading is not paused")
    run.emit(ReadingResumed(tossup_id=run.tossup().id))


def _set_pace(run: _Decision, cmd: SetPace) -> None:
    run.emit(PaceChanged(wpm=cmd.wpm, by_key=cmd.by_key))


def can_undo(g: GameState) -> bool:
    """Whether the last ruling of the tossup (or its bonus) may be taken back now: not while
    a newer buzz waits, except a model's that took the floor at once on that ruling, at the
    word where it was given (two model teams at one word: the first ruled wrong by mistake)."""
    if not g.history or "undo" not in allowed_commands(g.phase):
        return False
    if g.phase is not Phase.BUZZED:
        return True
    before = g.history[-1]
    return (
        g.floor is not None
        and g.floor.kind is TeamKind.MODEL
        and before.floor is not None
        and before.floor.buzz_id != g.floor.buzz_id
        and before.position == g.position
    )


def _undo(run: _Decision, cmd: UndoRuling) -> None:
    g = run.g
    if g.phase is Phase.BUZZED and not can_undo(g):
        raise IllegalCommand(
            "cannot undo while the match is buzzed: a newer buzz has the floor; rule it first"
        )
    if not g.history:
        if g.phase is Phase.BONUS or (g.bonus is not None and g.bonus.done):
            raise IllegalCommand(
                "a bonus was thrown out since the last ruling: what came before it stays"
            )
        raise IllegalCommand("there is no ruling on this tossup to undo")
    last = g.ledger[-1]  # the ledger is restored with the state, so its tail is that ruling
    restored = g.history[-1]
    # (a clock held by a pause at the time ran all the same)
    stopped = restored.deadline is None and restored.held is None
    if last.bonus_id is not None:
        assert restored.bonus is not None
        run.emit(
            BonusPartUndone(
                ruled_seq=last.seq, bonus_id=last.bonus_id, part=restored.bonus.part,
                deadline=None if stopped else run.bonus_deadline(),
            )
        )  # fmt: skip
        return
    run.emit(
        RulingUndone(
            ruled_seq=last.seq,
            buzz_id=last.buzz_id,
            tossup_id=last.tossup_id,
            # the clock starts again where it ran (an answer, or an answer to a prompt, still
            # to come), not where an answer was given and had stopped it
            deadline=None if stopped else run.deadline(run.rules.tossups.answer_time),
        )
    )


def _throw_out(run: _Decision, cmd: ThrowOut) -> None:
    reason = cmd.reason.strip() or "thrown out by the moderator"
    run.emit(
        TossupEnded(tossup_id=run.tossup().id, outcome=TossupOutcome.THROWN_OUT, reason=reason)
    )


def _resume_clock(run: _Decision, cmd: ResumeClock) -> None:
    # Only a clock still running when the service stopped resumes (one that had run out
    # then is handled by the timer as usual).
    deadline = run.g.deadline
    if deadline is None or deadline <= cmd.down_since:
        return
    run.emit(
        ClockResumed(
            down_since=cmd.down_since,
            deadline=run.now + (deadline - cmd.down_since),
            reason=cmd.reason,
        )
    )


def _turn(state: MatchState) -> str:
    """The team whose turn it is on the current part: the controlling team, or on a
    bounceback the other one."""
    play = state.game.bonus
    assert play is not None
    teams = [t.id for t in state.config.teams]
    return rule_set(state.config.rules).bonuses.turn(play.team, teams, bounceback=play.bounceback)


def in_overtime(config: MatchConfig, game: GameState, clock: HalfClock | None = None) -> bool:
    """Past regulation: more tossups heard than the rules' regulation count (with timed
    halves and their ``clock``, than were heard when the second half's time ran out)."""
    if config.rules.half_time is not None and clock is not None:
        regulation = regulation_of(config, clock)
        return regulation is not None and game.heard > regulation
    return rule_set(config.rules).in_overtime(game.heard)


def bouncebacks_played(config: MatchConfig) -> bool:
    """Bouncebacks are played when the rules say so and two teams play (with more teams,
    whose turn it would be is no format's rule), and not under consult rules (QANTA's bonuses
    follow ACF's, which has none)."""
    return rule_set(config.rules).bonuses.bounces_with(len(config.teams))


def _answer_part(run: _Decision, cmd: AnswerPart) -> None:
    play = run.g.bonus
    assert play is not None
    _up(run, cmd.part, cmd.bounceback, "answer")
    turn = _turn(run.state)
    team = run.team(cmd.team)
    if team.id != turn:
        raise IllegalCommand(f"this part is team {turn!r}'s to answer, not team {team.id!r}'s")
    if cmd.player not in run.state.players[team.id]:
        raise IllegalCommand(f"player {cmd.player!r} has not joined team {team.id!r}")
    if play.answer is not None:
        raise IllegalCommand(
            f"team {team.id!r} already answered this part ({play.answer.text!r}): the first "
            "answer stands"
        )
    _not_pre_answering(run, "answer")
    deadline = run.g.deadline
    if deadline is not None and run.now >= deadline:
        raise IllegalCommand("the answer time ran out before this answer came")
    spec = run.config.bonus(play.bonus_id)
    assert spec is not None
    suggestion, question = _suggest(cmd.text, spec.parts[play.part].answer)
    choice = run.rules.bonuses.choice(
        bounceback=play.bounceback, consulted=play.consulted is not None, model=False
    )
    run.emit(
        BonusAnswerGiven(
            bonus_id=play.bonus_id, part=play.part, team=team.id, player=cmd.player,
            text=cmd.text, suggestion=suggestion, prompt_question=question, choice=choice,
        )
    )  # fmt: skip


def _consulting_team(run: _Decision, team_id: str, player: str | None, what: str) -> TeamSpec:
    """The team whose turn it is, under consult rules, not yet answered: who may consult or
    abstain (a player of it, or the moderator when ``player`` is None)."""
    play = run.g.bonus
    assert play is not None
    if not run.rules.bonuses.consults or run.config.consult is None:
        raise IllegalCommand(f"this match's bonuses have no consult rules: nothing to {what}")
    turn = _turn(run.state)
    team = run.team(team_id)
    if team.id != turn:
        raise IllegalCommand(f"this part is team {turn!r}'s, not team {team.id!r}'s")
    if team.kind is TeamKind.MODEL:
        raise IllegalCommand(f"team {team.id!r} is a model team: it answers on its own")
    if play.bounceback:
        raise IllegalCommand(f"a bounceback is answered without the model: nothing to {what}")
    if player is not None and player not in run.state.players[team.id]:
        raise IllegalCommand(f"player {player!r} has not joined team {team.id!r}")
    if play.answer is not None or play.prompted:
        raise IllegalCommand(f"team {team.id!r} already answered this part")
    if what != "consult":
        _not_pre_answering(run, what)
    deadline = run.g.deadline
    if deadline is not None and run.now >= deadline:
        raise IllegalCommand(f"the answer time ran out before this {what} came")
    return team


def _not_pre_answering(run: _Decision, what: str) -> None:
    """Refuse ``what`` while the team's humans write their own answers (the pre-answer
    window): the model's answer is revealed first, then the team decides."""
    g = run.g
    if g.bonus is None or g.bonus.pre_answer is None:
        return
    # (the window's clock is the game's: held while the match is paused)
    left = g.held if g.deadline is None else max(0.0, g.deadline - run.now)
    raise IllegalCommand(
        f"the team's players are writing their own answers: the model's is revealed in "
        f"{left or 0:.1f} s, then {what}"
    )


def _consult_part(run: _Decision, cmd: ConsultPart) -> None:
    _up(run, cmd.part, None, "consult")
    if hybrid.is_hybrid(run.config, cmd.team):  # its AI players' answers, all of them
        hybrid.consult(run, cmd)
        return
    team = _consulting_team(run, cmd.team, cmd.player, "consult")
    play = run.g.bonus
    assert play is not None and run.config.consult is not None
    if play.consulted is not None or play.pre_answer is not None:
        raise IllegalCommand(f"team {team.id!r} already consulted the model on this part")
    draft = (cmd.draft or "").strip() or None
    window = run.config.rules.consult.pre_answer_time if run.config.rules.consult else None
    if window is not None:
        # each human writes an answer of their own before the model's is revealed
        run.emit(
            BonusPreAnswerOpened(
                bonus_id=play.bonus_id, part=play.part, team=team.id, player=cmd.player,
                draft=draft, deadline=run.now + window,
            )
        )  # fmt: skip
        return
    _reveal_model(run, player=cmd.player, draft=draft)


def _pre_answer_part(run: _Decision, cmd: PreAnswerPart) -> None:
    play = run.g.bonus
    assert play is not None
    _up(run, cmd.part, None, "answer")
    window = play.pre_answer
    if window is None:
        raise IllegalCommand(
            "no pre-answer is open: the team's own answers are written after it asks for the "
            "model's, before it is revealed"
        )
    turn = _turn(run.state)
    team = run.team(cmd.team)
    if team.id != turn:
        raise IllegalCommand(f"this part is team {turn!r}'s, not team {team.id!r}'s")
    if cmd.player not in run.state.players[team.id]:
        raise IllegalCommand(f"player {cmd.player!r} has not joined team {team.id!r}")
    if window.answered(cmd.player):
        raise IllegalCommand(f"player {cmd.player!r} already wrote an answer: the first stands")
    deadline = run.g.deadline  # the window's, held while the match is paused (None then)
    if deadline is not None and run.now >= deadline:
        raise IllegalCommand("the time to write an answer ran out before this one came")
    text = cmd.text.strip()
    if not text:
        raise IllegalCommand("an empty answer: write one, or let the time run out")
    spec = run.config.bonus(play.bonus_id)
    assert spec is not None
    suggestion, _ = _suggest(text, spec.parts[play.part].answer)
    run.emit(
        BonusPreAnswerGiven(
            bonus_id=play.bonus_id, part=play.part, team=team.id, player=cmd.player, text=text,
            suggestion=suggestion,
        )
    )  # fmt: skip
    after = run.g.bonus
    assert after is not None and after.pre_answer is not None
    if all(after.pre_answer.answered(p) for p in run.state.players[team.id]):
        _reveal_model(run)  # every human of the team has written: no need to wait


def _reveal_model(run: _Decision, *, player: str | None = None, draft: str | None = None) -> None:
    """The model's answer to the current part is shown to the team whose turn it is (at its
    request, or as the pre-answer window closes: then who asked and its draft are the
    window's)."""
    play = run.g.bonus
    assert play is not None and run.config.consult is not None
    if play.pre_answer is not None:
        player, draft = play.pre_answer.player, play.pre_answer.draft
    team = _turn(run.state)
    spec = run.config.bonus(play.bonus_id)
    assert spec is not None
    seen = run.config.consult.answer(play.bonus_id, play.part)
    suggestion = None
    if draft is not None:
        suggestion, _ = _suggest(draft, spec.parts[play.part].answer)
    run.emit(
        BonusPartConsulted(
            bonus_id=play.bonus_id, part=play.part, team=team, player=player,
            model=run.config.consult.model,
            guess=seen.guess if seen is not None else None,
            confidence=seen.confidence if seen is not None else None,
            model_correct=seen.correct if seen is not None else None,
            draft=draft, draft_suggestion=suggestion, deadline=run.bonus_deadline(),
        )
    )  # fmt: skip


def _abstain_part(run: _Decision, cmd: AbstainPart) -> None:
    _up(run, cmd.part, None, "abstention")
    if hybrid.is_hybrid(run.config, cmd.team):
        hybrid.abstain(run, cmd)
        return
    team = _consulting_team(run, cmd.team, cmd.player, "abstain from")
    play = run.g.bonus
    consult, model = run.rules.bonuses, run.config.consult
    assert play is not None and isinstance(consult, ConsultBonuses) and model is not None
    seen = model.answer(play.bonus_id, play.part)
    base = {
        "bonus_id": play.bonus_id, "tossup_id": play.tossup_id, "part": play.part,
        "team": team.id, "ruling": Ruling.INCORRECT, "bounceback": False, "by": "team",
        "answer": None,
    }  # fmt: skip
    run.finish_part(base, Ruling.INCORRECT, consult.abstain_points(seen), "abstain")


def _rule_part(run: _Decision, cmd: RulePart) -> None:
    _up(run, cmd.part, cmd.bounceback, "ruling")
    _not_pre_answering(run, "rule")
    turn = run.team(_turn(run.state))
    if cmd.ruling is Ruling.PROMPT and turn.kind is TeamKind.MODEL:
        raise IllegalCommand(
            f"team {turn.id!r} is a model team: it gave its one answer and cannot say more "
            "(rule it correct or incorrect)"
        )
    run.rule_part(cmd.ruling, by="moderator")


def _throw_out_bonus(run: _Decision, cmd: ThrowOutBonus) -> None:
    play = run.g.bonus
    assert play is not None
    reason = cmd.reason.strip() or "thrown out by the moderator"
    run.emit(
        BonusEnded(
            bonus_id=play.bonus_id, tossup_id=play.tossup_id, team=play.team,
            outcome="thrown_out", reason=reason,
        )
    )  # fmt: skip
    chosen = None
    if cmd.replacement is not None:
        chosen = run.config.bonus(cmd.replacement)
        if chosen is None:
            raise IllegalCommand(f"no bonus {cmd.replacement!r} in this match")
        if chosen.id in run.g.bonuses_used:
            raise IllegalCommand(f"bonus {cmd.replacement!r} has already been used")
    # the packet's next unused extra replaces it, or the one the moderator picked
    run.start_bonus(play.team, play.tossup_id, replaces=play.bonus_id, chosen=chosen)


def _read_part(run: _Decision, cmd: ReadPart) -> None:
    play = run.g.bonus
    assert play is not None
    seconds = run.config.rules.conferral_time
    if seconds is None:
        raise IllegalCommand("this match's format has no conferral clock")
    if run.config.reading_mode != "read_aloud":
        raise IllegalCommand("on screen, the part's own answer clock runs: nothing to start")
    if play.answer is not None:
        raise IllegalCommand("this part is answered already: rule it")
    run.emit(
        BonusPartRead(
            bonus_id=play.bonus_id, part=play.part, bounceback=play.bounceback,
            deadline=run.now + seconds,
        )
    )  # fmt: skip


def _call_timeout(run: _Decision, cmd: CallTimeout) -> None:
    team = run.team(cmd.team)
    left = timeouts_left(run.config, run.state.timeouts, team.id)
    if left == 0:
        allowed = run.config.rules.timeouts
        raise IllegalCommand(
            f"team {team.id!r} has called its {allowed} timeout{'s' if allowed != 1 else ''} "
            "of this match already"
        )
    current = [t for t in run.state.timeouts if t.after == run.state.tossups_started]
    if current and current[-1].ends > run.now:
        raise IllegalCommand(f"a timeout of team {current[-1].team!r} is on now")
    number = 1 + sum(1 for t in run.state.timeouts if t.team == team.id)
    run.emit(
        TimeoutCalled(team=team.id, number=number, ends=run.now + run.config.rules.timeout_seconds)
    )


def _end_match(run: _Decision, cmd: EndMatch) -> None:
    run.emit(MatchEnded(scores=dict(run.g.scores)))


_HANDLERS = {
    Join: _join,
    StartTossup: _start_tossup,
    Reveal: _reveal,
    Buzz: _buzz,
    GiveAnswer: _answer,
    Rule: _rule,
    TimeUp: _time_up,
    Pause: _pause,
    Resume: _resume,
    UndoRuling: _undo,
    SetPace: _set_pace,
    ThrowOut: _throw_out,
    ResumeClock: _resume_clock,
    EndMatch: _end_match,
    AnswerPart: _answer_part,
    RulePart: _rule_part,
    ThrowOutBonus: _throw_out_bonus,
    ConsultPart: _consult_part,
    PreAnswerPart: _pre_answer_part,
    AbstainPart: _abstain_part,
    ReadPart: _read_part,
    CallTimeout: _call_timeout,
    HalfTimeUp: half_time_up,
    FileProtest: amendments.file_protest,
    ResolveProtest: amendments.resolve_protest,
    CorrectRuling: amendments.correct_ruling,
    Substitute: lineups.substitute,
    SetAiModes: hybrid.set_modes,
    SetBuzzSource: hybrid.buzz_source,
    MuteAi: hybrid.mute,
    PressAi: hybrid.press,
}

__all__ = [
    "FINISHED",
    "BonusPlay",
    "GameState",
    "IllegalCommand",
    "Match",
    "MatchState",
    "PartResult",
    "RefusalKey",
    "bouncebacks_played",
    "in_overtime",
]
