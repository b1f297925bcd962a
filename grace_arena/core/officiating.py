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

The format values and where they come from are in ``grace_arena.core.formats``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, TypeVar

from grace_arena.core.events import (
    BonusAnswerGiven,
    BonusEnded,
    BonusPartRead,
    BonusPartRuled,
    BonusPartUndone,
    BonusStarted,
    Event,
    MatchEnded,
    ReadingResumed,
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

__all__ = [
    "Stage",
    "Standing",
    "TimeoutTaken",
    "conferral_clock",
    "extra_bonuses",
    "extra_tossups",
    "next_bonus",
    "next_tossup",
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


def standing(config: MatchConfig, game: GameState) -> Standing:
    """Where the match stands for the moderator, between tossups (during one: ``PLAYING``,
    or ``OVERTIME``/``SUDDEN_DEATH`` past regulation)."""
    rules, regulation = config.rules, _regulation(config)
    between = game.phase is Phase.IDLE or game.phase in FINISHED
    heard = game.heard
    if regulation is None or game.phase is Phase.ENDED:
        return Standing(Stage.PLAYING)
    if heard < regulation or (heard == regulation and not between):
        half = rules.halftime_after
        # (not again when the second half's first tossup was thrown out)
        resumed = _thrown_out_last(game) is not None
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
