"""Officiating a match by its format: regulation and the packet's extras, replacements of
thrown-out questions, halftime, overtime, timeouts and the bonus conferral clock.

Pure functions of the match's configuration and game state (and one reducer step for the
conferral clock), used by the engine (``grace_arena.core.match``), the views and the exports:

* **Regulation and extras.** With ``regulation_tossups`` N, the match's first N tossups are
  regulation and the rest the packet's extras (a .docx packet's "Extra questions"
  section comes after its tossups); the first N bonuses alike. A thrown-out tossup is
  replaced by the next unused extra (the next regulation tossup when none is left, as
  MODAQ's sequential replacement); overtime reads extras too. Without a regulation count
  every tossup is regulation.
* **Overtime.** At the end of regulation with the top two teams tied, overtime is proposed
  to the moderator; ``overtime_tossups`` tossups are read whatever the score (ACF and PACE:
  1, NAQT: 3), then the first tossup that ends with the teams apart decides the match
  (sudden death). Overtime tossups earn no bonus unless ``overtime_bonuses``.
* **Halftime** comes after ``halftime_after`` tossups heard (ACF, PACE, NAQT: 10 of 20).
* **Timeouts**: ``timeouts`` per team per match, called between tossups.
* **Conferral**: once the moderator has read a bonus part aloud, the team has
  ``conferral_time`` seconds (ACF, NAQT: 5); the clock stands still while the match is
  paused and stops when the part is answered or ruled.
* **Timed halves** (``half_time``, an option of NAQT's format): each half has a game clock
  of that many seconds (NAQT: 9 minutes for middle and high schools, 10 for colleges). The
  clock starts when the half's first tossup starts, runs through tossups, bonuses and the
  time between them, and stops for a timeout (until the next tossup starts) and while the
  moderator pauses the match (a dispute, a protest, a buzzer fault). When it runs out
  (``half_time_expired``, sent by the server's timer at the clock's end) the cycle in play is
  finished: its tossup is read to the end and both teams may answer, a correct answer earns
  its bonus; then the half is over: halftime after the first, the end of regulation after
  the second (the tossups heard by then are regulation; a tie goes to overtime, untimed).
  Every regulation tossup read ends the half too. Sources: NAQT's rules
  (https://www.naqt.com/rules.html, section F: "a game consists of two timed halves", 9- and
  10-minute halves, "the clock starts when the moderator begins reading the first tossup
  question", "the half or game shall end with the conclusion of the current tossup-bonus
  cycle", and the clock stops for timeouts), NAQT's 2008 rule changes
  (https://www.naqt.com/2008-rules-changes.html, rule F.4: "If time expires during a tossup,
  that tossup will be read to completion and both teams given a chance to answer. If it is
  answered correctly, that team will earn a bonus"), and QBWiki's "Timed play" (NAQT's
  nine-minute halves). The clock is read from the record: ``HalfClock`` is folded from the
  events' times, so a replay after a restart has it as it was.

The format values and where they come from are in ``grace_arena.core.formats``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    BonusAnswerGiven,
    BonusEnded,
    BonusPartRead,
    BonusPartRuled,
    BonusPartUndone,
    BonusStarted,
    ClockResumed,
    Event,
    HalfTimeExpired,
    MatchEnded,
    ReadingPaused,
    ReadingResumed,
    TimeoutCalled,
    TossupEnded,
    TossupOutcome,
    TossupStarted,
)
from grace_arena.core.phases import FINISHED, Phase

if TYPE_CHECKING:
    from grace_arena.core.config import BonusSpec, MatchConfig


class GameState(Protocol):
    """What these rules read of the engine's ``grace_arena.core.match.GameState`` (named
    here, not imported: the engine imports this module)."""

    phase: Phase
    scores: dict[str, int]
    played: tuple[str, ...]
    outcomes: dict[str, TossupOutcome]
    bonuses_used: tuple[str, ...]
    paused: bool
    conferral: float | None
    conferral_held: float | None

    @property
    def heard(self) -> int: ...


_G = TypeVar("_G", bound=GameState)


class _Decision(Protocol):
    """What the clock's command reads of the engine's decision (``core.match._Decision``)."""

    now: float

    @property
    def config(self) -> MatchConfig: ...

    @property
    def state(self) -> Any: ...

    def emit(self, event: Event) -> None: ...


__all__ = [
    "HalfClock",
    "Stage",
    "Standing",
    "TimeoutTaken",
    "conferral_clock",
    "extra_bonuses",
    "extra_tossups",
    "half_clock",
    "half_time_up",
    "next_bonus",
    "next_tossup",
    "regulation_of",
    "replacements",
    "standing",
    "timeouts_left",
]


@dataclass(frozen=True)
class TimeoutTaken:
    """A timeout a team called: when, until when, and after how many tossups started."""

    team: str
    t: float
    ends: float
    after: int  # tossups started when it was called: it is on until the next one starts


# --------------------------------------------------------------------------------------------
# Regulation, extras and replacements


def _regulation(config: MatchConfig) -> int | None:
    return config.rules.regulation_tossups


def extra_tossups(config: MatchConfig) -> tuple[str, ...]:
    """The match's tossups past regulation, in packet order: its extras."""
    n = _regulation(config)
    return tuple(t.id for t in config.tossups[n:]) if n is not None else ()


def extra_bonuses(config: MatchConfig) -> tuple[str, ...]:
    """The match's bonuses past regulation's count, in packet order: its extras."""
    n = _regulation(config)
    return tuple(b.id for b in config.bonuses[n:]) if n is not None else ()


def _thrown_out_last(game: GameState) -> str | None:
    """The tossup started last, when it was thrown out (the next one replaces it)."""
    if not game.played:
        return None
    last = game.played[-1]
    return last if game.outcomes.get(last) is TossupOutcome.THROWN_OUT else None


def next_tossup(config: MatchConfig, game: GameState) -> tuple[str | None, str | None]:
    """The tossup to start next and the thrown-out tossup it replaces (or None).

    After a throw-out: the next unused extra (the next regulation tossup when none is left).
    Otherwise the next regulation tossup not played, then (overtime) the next unused extra.
    """
    played = set(game.played)
    extras = extra_tossups(config)
    regular = [t.id for t in config.tossups if t.id not in extras and t.id not in played]
    spare = [t for t in extras if t not in played]
    thrown = _thrown_out_last(game)
    if thrown is not None:
        chosen = (spare or regular or [None])[0]
        return chosen, thrown if chosen is not None else None
    return (regular or spare or [None])[0], None


def replaced_by_start(game: GameState) -> str | None:
    """The thrown-out tossup a tossup started now replaces (whichever the moderator starts)."""
    return _thrown_out_last(game)


def next_bonus(config: MatchConfig, game: GameState, *, replacing: bool) -> BonusSpec | None:
    """The bonus to give next: the next unused regulation bonus, then the extras; replacing
    a thrown-out bonus, the next unused extra first."""
    used = set(game.bonuses_used)
    extras = set(extra_bonuses(config))
    regular = [b for b in config.bonuses if b.id not in extras and b.id not in used]
    spare = [b for b in config.bonuses if b.id in extras and b.id not in used]
    order = spare + regular if replacing else regular + spare
    return order[0] if order else None


def replacements(events: Iterable[Event]) -> tuple[dict[str, str], dict[str, str]]:
    """From a match's record: each tossup read as a replacement -> the tossup thrown out in
    its place in the match (the first of a run of throw-outs), and the same for bonuses."""
    tossups: dict[str, str] = {}
    bonuses: dict[str, str] = {}
    for ev in events:
        if isinstance(ev, TossupStarted) and ev.replaces is not None:
            tossups[ev.tossup_id] = tossups.get(ev.replaces, ev.replaces)
        elif isinstance(ev, BonusStarted) and ev.replaces is not None:
            bonuses[ev.bonus_id] = bonuses.get(ev.replaces, ev.replaces)
    return tossups, bonuses


# --------------------------------------------------------------------------------------------
# Where the match stands: halftime, end of regulation, overtime, decided


class Stage(StrEnum):
    PLAYING = "playing"  # nothing for the moderator to decide
    HALFTIME = "halftime"  # between the halves
    DECIDED = "decided"  # regulation (or overtime) is over and a team leads: end the match
    TIED = "tied"  # regulation is over, tied: overtime is proposed
    OVERTIME = "overtime"  # in overtime's first tossups, read whatever the score
    SUDDEN_DEATH = "sudden_death"  # still tied after them: the next tossup that parts them


@dataclass(frozen=True)
class Standing:
    stage: Stage
    #: For the screens: "Halftime (after 10 of 20 tossups)", "Tied 225–225 after regulation:
    #: overtime (sudden death, no bonuses)".
    text: str | None = None


def _scores_apart(config: MatchConfig, game: GameState) -> bool:
    ranked = sorted((game.scores[t.id] for t in config.teams), reverse=True)
    return len(ranked) < 2 or ranked[0] != ranked[1]


def overtime_rule(config: MatchConfig) -> str:
    """How overtime is played, in words: "sudden death, no bonuses"."""
    rules = config.rules
    n = rules.overtime_tossups
    shape = "sudden death" if n <= 1 else f"{n} tossups, then sudden death"
    return shape + (", with bonuses" if rules.overtime_bonuses else ", no bonuses")


def regulation_of(config: MatchConfig, clock: HalfClock | None = None) -> int | None:
    """Tossups in regulation: the format's count; with timed halves, once the second half's
    time has run out, the tossups heard by then (if fewer)."""
    regulation = _regulation(config)
    if config.rules.half_time is None or clock is None or clock.regulation_heard is None:
        return regulation
    timed = clock.regulation_heard
    return timed if regulation is None else min(regulation, timed)


def standing(config: MatchConfig, game: GameState, clock: HalfClock | None = None) -> Standing:
    """Where the match stands for the moderator, between tossups (during one: ``PLAYING``,
    or ``OVERTIME``/``SUDDEN_DEATH`` past regulation); ``clock``: a timed half's game clock
    (``MatchState.half_clock``)."""
    rules, regulation = config.rules, regulation_of(config, clock)
    timed = rules.half_time is not None and clock is not None
    between = game.phase is Phase.IDLE or game.phase in FINISHED
    heard = game.heard
    # (not again when the second half's first tossup was thrown out)
    resumed = _thrown_out_last(game) is not None
    if timed and clock is not None and clock.half == 1 and clock.expired and between:
        return Standing(Stage.HALFTIME, f"Halftime: time is up (after {heard} tossups)")
    if regulation is None or game.phase is Phase.ENDED:
        return Standing(Stage.PLAYING)
    if heard < regulation or (heard == regulation and not between):
        half = None if timed else rules.halftime_after
        if between and half is not None and heard == half < regulation and not resumed:
            return Standing(Stage.HALFTIME, f"Halftime (after {half} of {regulation} tossups)")
        return Standing(Stage.PLAYING)
    # past regulation: the overtime tossups over (the one being played not counted)
    n = rules.overtime_tossups
    done = heard - regulation - (0 if between else 1)
    if not between:
        k = done + 1
        if k <= n and n > 1:
            return Standing(Stage.OVERTIME, f"Overtime: tossup {k} of {n}")
        return Standing(Stage.SUDDEN_DEATH, "Overtime: sudden death")
    if 0 < done < n:
        return Standing(Stage.OVERTIME, f"Overtime: tossup {done + 1} of {n} next")
    if _scores_apart(config, game):
        when = "after regulation" if done == 0 else "in overtime"
        return Standing(Stage.DECIDED, f"The match is decided {when}: end it")
    if done == 0:
        return Standing(Stage.TIED, f"Tied after regulation: overtime ({overtime_rule(config)})")
    return Standing(Stage.SUDDEN_DEATH, "Still tied: sudden death, the next tossup decides")


# --------------------------------------------------------------------------------------------
# Timeouts


def timeouts_left(config: MatchConfig, taken: tuple[TimeoutTaken, ...], team: str) -> int | None:
    """Timeouts the team may still call (None: no limit)."""
    allowed = config.rules.timeouts
    if allowed is None:
        return None
    return max(0, allowed - sum(1 for t in taken if t.team == team))


# --------------------------------------------------------------------------------------------
# The conferral clock (one reducer step)

#: Events after which the part's conferral is over: it was answered, ruled or taken back, or
#: the bonus, the tossup or the match ended.
_CONFERRAL_ENDS = (
    BonusAnswerGiven, BonusPartRuled, BonusPartUndone, BonusEnded, TossupEnded, TossupStarted,
    MatchEnded,
)  # fmt: skip


def conferral_clock(g: _G, ev: Event) -> _G:
    """The conferral clock after ``ev``: set by ``BonusPartRead``; held with the time left
    while the match is paused and running again from the resume, as every clock; over once
    the part is answered or ruled."""
    if isinstance(ev, BonusPartRead):
        g = replace(g, conferral=ev.deadline, conferral_held=None)
    elif isinstance(ev, _CONFERRAL_ENDS):
        return replace(g, conferral=None, conferral_held=None)
    elif isinstance(ev, ReadingResumed) and g.conferral_held is not None:
        g = replace(g, conferral=ev.t + g.conferral_held, conferral_held=None)
    if g.paused and g.conferral is not None:
        g = replace(g, conferral_held=max(0.0, g.conferral - ev.t), conferral=None)
    return g


# --------------------------------------------------------------------------------------------
# Timed halves: the game clock (one reducer step, and the command its timer sends)

#: The events after which a pause of the match is over (the resume, or the end of the tossup
#: or of its bonus, which ends a pause as the match's reducer does).
_PAUSE_ENDS = (ReadingResumed, TossupEnded, BonusEnded, TossupStarted)


@dataclass(frozen=True)
class HalfClock:
    """A timed half's game clock, folded from the match's events (their times ``t``).

    It runs while ``since`` is set (from then, with ``used`` seconds run before); it stands
    still before the half's first tossup, while the match is paused, from a timeout until the
    next tossup starts, once it has run out and after the match. Never undone: an undo takes
    back a ruling, not the time it took."""

    half: int = 1
    used: float = 0.0
    since: float | None = None
    started: bool = False  # the half's first tossup has started
    paused: bool = False
    in_timeout: bool = False
    expired: bool = False  # its time ran out (the cycle then in play is finished)
    #: Tossups heard when the second half's time ran out: regulation's, whatever the format's
    #: count (the tossup then in play included).
    regulation_heard: int | None = None

    def left(self, length: float, now: float) -> float:
        """Seconds left in the half at ``now``."""
        run = self.used + (now - self.since if self.since is not None else 0.0)
        return max(0.0, length - run)

    def ends(self, length: float) -> float | None:
        """When the clock runs out, if it is running."""
        return None if self.since is None else self.since + length - self.used

    def _stopped(self, t: float) -> HalfClock:
        used = self.used + (t - self.since) if self.since is not None else self.used
        return replace(self, used=used, since=None)

    def _settled(self, t: float) -> HalfClock:
        """Running or not, as its flags say, from ``t``."""
        runs = self.started and not (self.paused or self.in_timeout or self.expired)
        if runs and self.since is None:
            return replace(self, since=t)
        if not runs and self.since is not None:
            return self._stopped(t)
        return self


def half_clock(clock: HalfClock, ev: Event, *, heard: int) -> HalfClock:
    """The game clock after ``ev`` (``heard``: the tossups heard before it)."""
    t = ev.t
    if isinstance(ev, TossupStarted):
        if clock.expired and clock.half == 1:  # the second half's first tossup
            return HalfClock(half=2, started=True, since=t)
        clock = replace(clock, started=True, paused=False, in_timeout=False)
    elif isinstance(ev, ReadingPaused):
        clock = replace(clock, paused=True)
    elif isinstance(ev, _PAUSE_ENDS):
        clock = replace(clock, paused=False)
    elif isinstance(ev, TimeoutCalled):
        clock = replace(clock, in_timeout=True)
    elif isinstance(ev, HalfTimeExpired):
        regulation = heard if ev.half == 2 else None
        return replace(clock._stopped(t), expired=True, regulation_heard=regulation)
    elif isinstance(ev, ClockResumed) and clock.since is not None:
        # nobody served the match from down_since: that time is not the game's
        return replace(clock, since=clock.since + (t - ev.down_since))
    elif isinstance(ev, MatchEnded):
        return replace(clock._stopped(t), started=False)
    return clock._settled(t)


def half_time_up(run: _Decision, cmd: object) -> None:
    """The match's command when its timer says the half's clock ran out."""
    length = run.config.rules.half_time
    clock: HalfClock = run.state.half_clock
    if length is None:
        raise IllegalCommand("this match's halves are not timed")
    ends = clock.ends(length)
    if ends is None:
        raise IllegalCommand("the game clock is not running")
    if run.now < ends:
        raise IllegalCommand(f"the half's time is not up yet ({ends - run.now:.1f} s left)")
    run.emit(HalfTimeExpired(half=clock.half))
