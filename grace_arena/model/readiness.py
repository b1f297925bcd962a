"""Whether a model can play a packet: a model that (almost) never buzzes says so beforehand.

A model whose confidence never reaches its threshold on a packet never buzzes: a match against
it is a human team reading alone, and it ends with the model at 0 without a word why. This
happens when the packet is far from what the model knows (the offline TF-IDF model, trained on
the practice corpus, guessed "entropy" at 0.10 on every tossup of a club's own packet).

:func:`readiness` looks at the precomputed steps of the tossups to be played with the policy
to be used, and :func:`readiness_warning` says in one paragraph what is wrong and what to do
when the model buzzes on fewer than :func:`min_buzzes` of them:

- ``N = max(1, ⌈n / 5⌉)`` for ``n`` tossups (4 of a 20-tossup packet, 1 of a 5-tossup
  exhibition). Below a fifth of the tossups the model sits out four tossups in five: a team
  facing it answers alone, the match says little of how people and the model compare, and at
  10 points a tossup it cannot make up a single lost tossup in five. Above it, a model that
  buzzes rarely but well is a real (if cautious) opponent, and the threshold is the
  organiser's choice, not something to second-guess.
- What to do: the highest threshold at which it would buzz on ``N`` tossups, with how many of
  those buzzes would be right (a lower threshold only helps a model that is right when it is
  unsure); another model when it gives the same answer to most tossups (its corpus does not
  cover the packet); or a competitor's outputs (``grace-arena model import``).

The same check runs in ``grace-arena precompute`` and ``model import``, ``serve``, ``event
schedule`` and where the server sets a match up (its reply's ``warnings``, which the
moderator's set-up shows).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from grace_arena.model.policy import BuzzPolicy, first_buzz, load_steps

__all__ = [
    "Readiness",
    "match_warnings",
    "min_buzzes",
    "readiness",
    "readiness_warning",
    "team_warning",
    "warn_if_cannot_play",
]


def min_buzzes(n_tossups: int) -> int:
    """The fewest tossups a model must buzz on to be an opponent: a fifth of them, at least 1."""
    return max(1, math.ceil(n_tossups / 5)) if n_tossups else 0


@dataclass(frozen=True, slots=True)
class Readiness:
    """How a model would play the tossups of a packet under one policy."""

    model: str
    packet_id: str
    policy: BuzzPolicy
    tossups: int  # tossups to be played
    precomputed: int  # of those, tossups with steps in the record
    buzzes: int  # tossups the policy buzzes on
    right: int  # of those buzzes, the ones the judge accepted
    best_confidence: float | None  # the highest confidence of any step with a guess
    common_guess: str | None  # the model's most frequent final guess
    common_count: int  # on how many tossups it gave it
    declared: bool  # its buzzes are its own (imported outputs), not the threshold's
    #: the highest threshold (two decimals) at which it buzzes on at least ``needed`` tossups,
    #: with how many buzzes and how many right; None when no threshold gets there
    suggestion: tuple[float, int, int] | None

    @property
    def needed(self) -> int:
        return min_buzzes(self.tossups)

    @property
    def can_play(self) -> bool:
        return self.precomputed == 0 or self.buzzes >= self.needed


def _first_buzzes(steps: dict[str, Sequence[Any]], policy: BuzzPolicy) -> tuple[int, int]:
    firsts = [b for rows in steps.values() if (b := first_buzz(rows, policy)) is not None]
    return len(firsts), sum(bool(b.correct) for b in firsts)


def _packet_tossups(engine: Any, packet_id: str) -> list[str]:
    from sqlmodel import Session, select

    from grace_arena.record.models import TossupRow

    with Session(engine) as session:
        return list(
            session.exec(select(TossupRow.tossup_id).where(TossupRow.packet_id == packet_id)).all()
        )


def readiness(
    engine: Any,
    model: str,
    packet_id: str,
    policy: BuzzPolicy,
    tossup_ids: Sequence[str] | None = None,
) -> Readiness:
    """How ``model`` would play ``tossup_ids`` of the packet (default: the packet's tossups
    as the record holds them) under ``policy``, from its precomputed steps. A tossup with no
    step counts as one it never buzzes on (a competitor's outputs may leave some out)."""
    every = load_steps(engine, model, packet_id)
    wanted = list(tossup_ids) if tossup_ids is not None else _packet_tossups(engine, packet_id)
    wanted = wanted or list(every)
    steps = {t: every[t] for t in wanted if t in every}
    buzzes, right = _first_buzzes(steps, policy)
    confidences = [
        c
        for rows in steps.values()
        for s in rows
        if s.guess and s.word_index >= policy.not_before_word
        if (c := policy.confidence_of(s)) is not None
    ]
    finals = Counter(rows[-1].guess for rows in steps.values() if rows and rows[-1].guess)
    common, count = finals.most_common(1)[0] if finals else (None, 0)
    declared = policy.own_buzzes and any(
        "buzz" in (s.extra or {}) for rows in steps.values() for s in rows
    )
    needed = min_buzzes(len(wanted))
    suggestion = None
    # each tossup's best confidence: a threshold at or below it buzzes there
    best = sorted(
        (
            max(c)
            for rows in steps.values()
            if (
                c := [
                    v
                    for s in rows
                    if s.guess and s.word_index >= policy.not_before_word
                    if (v := policy.confidence_of(s)) is not None
                ]
            )
        ),
        reverse=True,
    )
    if needed and len(best) >= needed:
        threshold = math.floor(best[needed - 1] * 100) / 100
        lower = BuzzPolicy(
            confidence=policy.confidence,
            threshold=threshold,
            not_before_word=policy.not_before_word,
            calibration=policy.calibration,
            own_buzzes=False,
        )
        suggestion = (threshold, *_first_buzzes(steps, lower))
    return Readiness(
        model=model,
        packet_id=packet_id,
        policy=policy,
        tossups=len(wanted),
        precomputed=len(steps),
        buzzes=buzzes,
        right=right,
        best_confidence=max(confidences) if confidences else None,
        common_guess=common,
        common_count=count,
        declared=declared,
        suggestion=suggestion,
    )


def _num(x: float) -> str:
    """A threshold as people typed it: two decimals, more where it has them (0.9999 is
    not 1.00)."""
    return f"{x:.2f}" if round(x, 2) == x else f"{x:.6f}".rstrip("0")


def _floor(x: float) -> str:
    """A confidence reached, in two decimals, never rounded up to a threshold it missed."""
    return f"{math.floor(x * 100) / 100:.2f}"


def readiness_warning(
    r: Readiness, *, command: str = "grace-arena", packet: str = "PACKET"
) -> str | None:
    """One paragraph saying that the model cannot play and what to do, or None when it can."""
    if r.can_play:
        return None
    kind = r.policy.confidence
    if r.declared:
        what = (
            f"its own outputs buzz on {r.buzzes} of the {r.tossups} tossups"
            if r.buzzes
            else f"its own outputs never buzz on the {r.tossups} tossups"
        )
    elif r.buzzes == 0:
        best = (
            "no confidence at all"
            if r.best_confidence is None
            else (f"highest {_floor(r.best_confidence)}")
        )
        what = (
            f"its {kind} confidence never reaches the threshold {_num(r.policy.threshold)} on "
            f"any of the {r.tossups} tossups ({best})"
        )
    else:
        what = (
            f"its {kind} confidence reaches the threshold {_num(r.policy.threshold)} on only "
            f"{r.buzzes} of the {r.tossups} tossups ({r.right} right)"
        )
    head = f"model {r.model} {'never buzzes' if r.buzzes == 0 else 'will rarely buzz'} on packet "
    head += f"{r.packet_id}: {what}"
    if r.precomputed < r.tossups:
        head += f" (it has steps on {r.precomputed} of them)"
    head += "." if r.buzzes == 0 else f", fewer than a fifth of them ({r.needed})."
    todo: list[str] = []
    if r.common_guess and r.common_count >= max(2, (r.precomputed + 1) // 2):
        head += (
            f" It gave the same answer, {r.common_guess!r}, to {r.common_count} of them: "
            "what it knows does not cover this packet."
        )
    todo.append(
        "play another model (an LLM: "
        f"{command} precompute --packet {packet} --model openai/gpt-4o-mini)"
    )
    if r.suggestion is not None:
        threshold, buzzes, right = r.suggestion
        if r.declared:
            todo.append(
                f"let a threshold decide instead of its own buzzes (at {_num(threshold)} on its "
                f"confidence it buzzes on {buzzes}, {right} right)"
            )
        else:
            todo.append(
                f"a lower threshold (at {_num(threshold)} it buzzes on {buzzes}, {right} right)"
            )
    todo.append(f"a competitor's outputs ({command} model import FILE --packet {packet})")
    return head + " What to do: " + "; or ".join(todo) + "."


def team_warning(
    engine: Any,
    team: Any,
    packet_id: str,
    tossup_ids: Sequence[str] | None = None,
    *,
    command: str = "grace-arena",
    packet: str = "PACKET",
) -> str | None:
    """The warning for a model team (anything with ``name``, ``model``, ``confidence`` and
    ``threshold``: a set-up's team, an event's, a match's) on a packet, under the policy it
    plays with (logit ≥ 0.5 where it gives none); None when it can play or is no model."""
    if not getattr(team, "model", None):
        return None
    policy = BuzzPolicy(
        confidence=team.confidence or "logit",
        threshold=0.5 if team.threshold is None else team.threshold,
    )
    r = readiness(engine, team.model, packet_id, policy, tossup_ids)
    warning = readiness_warning(r, command=command, packet=packet)
    return None if warning is None else f"{team.name}: {warning}"


def match_warnings(engine: Any, config: Any, *, command: str = "grace-arena") -> list[str]:
    """The warnings of a match's model teams (its ``MatchConfig``), one per team that cannot
    play the match's tossups."""
    if config.packet_id is None:
        return []
    tossup_ids = [t.id for t in config.tossups]
    found = [
        team_warning(engine, t, config.packet_id, tossup_ids, command=command) for t in config.teams
    ]
    return [w for w in found if w is not None]


def warn_if_cannot_play(console: Any, url: str, team: Any, packet: Any) -> str | None:
    """Print (on a rich ``console``) and return the warning for a model team on a loaded
    packet, from the record at ``url``; None when it can play."""
    import shlex

    from grace_arena.record.db import open_engine
    from grace_arena.resources import command_prefix

    engine = open_engine(url)
    try:
        where = shlex.quote(str(packet.path)) if packet.path else "PACKET"
        warning = team_warning(
            engine, team, packet.packet.id, command=command_prefix(), packet=where
        )
    finally:
        engine.dispose()
    if warning is not None:
        console.print(f"[yellow]warning:[/] {warning}", soft_wrap=True, highlight=False)
    return warning
