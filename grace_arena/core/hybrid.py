"""Hybrid teams (QANTA 2026): AI players beside a team's human players. Pure.

A hybrid team is a human team with ``ai_players``
(:class:`~grace_arena.core.config.AiPlayerSpec`: a model, its weight class, its precomputed
guesses on each tossup and answers to each bonus part). Each AI has a buzz mode, as the
organisers' runner has them (``AIBuzzMode``, ``shared/types.ts`` line 28):

- **autonomous** (the default): it buzzes by itself at its first decision to buzz made at
  token K or later (its own K, or the rules' ``autonomous_default_k``; K is counted in the
  runner's tokens, which an imported model keeps; :func:`grace_arena.core.rules.qanta.
  autonomous_step`);
- **semi**: it buzzes only when a human teammate presses its key (``PressAi``), with its
  latest guess once the words so far were read, scored as the AI's;
- **muted**: a captain muted it (``MuteAi``) for the rest of the match: irrevocable.

Modes are set per half (``SetAiModes``): before the match as often as the team likes, and once
at halftime (after ``halftime_after`` tossups heard, before the second half starts). An AI's
correct buzz scores the tossup's points scaled by its weight class; on the team's bonus parts
its humans answer alone, consult the team's AIs (every AI's answer is shown) or abstain, scored
by :class:`~grace_arena.core.rules.QantaBonuses`.

Events (``grace_arena.core.events``): ``ai_modes_set``, ``ai_muted``, ``ai_buzzed`` (after the
AI's ``buzz_accepted``), ``ai_answers_shown``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from grace_arena.core.commands import (
    AbstainPart,
    ConsultPart,
    MuteAi,
    PressAi,
    SetAiModes,
    SetBuzzSource,
)
from grace_arena.core.config import AiPlayerSpec, AiStep, MatchConfig, TeamKind, TeamSpec
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    AiAnswersShown,
    AiBuzzed,
    AiBuzzSourceSet,
    AiModesSet,
    AiMuted,
    AiShown,
    BuzzAccepted,
    Event,
    Ruling,
)
from grace_arena.core.phases import HAS_FLOOR
from grace_arena.core.rules import QantaBonuses, rule_set
from grace_arena.core.rules.qanta import ai_tossup_points, autonomous_step, latest_step

#: ``grace_arena.core.match``'s ``MatchState`` (named here, not imported: the engine imports
#: this module).
MatchState = Any

__all__ = [
    "EVENTS",
    "HybridState",
    "ai_of",
    "autonomous_buzzes",
    "is_hybrid",
    "mode_of",
    "weight_classes",
]

#: The events of this module, folded by :func:`reduce`.
EVENTS = (
    AiModesSet,
    AiMuted,
    AiBuzzed,
    AiBuzzSourceSet,
)  # (ai_answers_shown: the engine's, as a consult)


@dataclass(frozen=True)
class HybridState:
    """The AI players' modes (absent: autonomous), gates (absent: the rules' default), the
    muted ones, and the teams that made their halftime change."""

    modes: Mapping[str, str] = field(default_factory=dict)
    ks: Mapping[str, int] = field(default_factory=dict)
    muted: frozenset[str] = frozenset()
    changed_at_halftime: frozenset[str] = frozenset()


def is_hybrid(config: MatchConfig, team_id: str) -> bool:
    team = config.team(team_id)
    return team is not None and bool(team.ai_players)


def ai_of(config: MatchConfig, team_id: str, player: str) -> AiPlayerSpec | None:
    """The AI player ``player`` of team ``team_id`` (None: not one of its AIs)."""
    team = config.team(team_id)
    if team is None:
        return None
    return next((a for a in team.ai_players if a.id == player), None)


def weight_classes(config: MatchConfig, team_id: str) -> list[str]:
    """The weight class of every AI player of the team (muted ones too: the runner's consult
    deflation counts every AI of the team)."""
    team = config.team(team_id)
    return [a.weight_class for a in team.ai_players] if team is not None else []


def mode_of(state: MatchState, ai: str) -> str:
    h = state.hybrid
    return "muted" if ai in h.muted else h.modes.get(ai, "autonomous")


def k_of(state: MatchState, ai: str) -> int:
    q = state.config.rules.qanta
    default = q.autonomous_default_k if q is not None else 1
    return max(1, state.hybrid.ks.get(ai, default))


def half_of(state: MatchState) -> int:
    """The half being played (or about to be): 2 once ``halftime_after`` tossups are heard."""
    half = state.config.rules.halftime_after
    return 2 if half is not None and state.game.heard >= half else 1


# --------------------------------------------------------------------------------------------
# Autonomous buzzes


def autonomous_buzzes(state: MatchState) -> Iterator[tuple[int, TeamSpec, AiPlayerSpec, AiStep]]:
    """Every autonomous AI that will buzz on the current tossup by itself: (our word where it
    buzzes, its team, it, the decision it buzzes on), in team order."""
    g = state.game
    if g.tossup_id is None:
        return
    for team in state.config.teams:
        if team.id in g.locked_out:
            continue
        for ai in team.ai_players:
            if mode_of(state, ai.id) != "autonomous":
                continue
            step = autonomous_step(ai.steps.get(g.tossup_id, ()), k_of(state, ai.id))
            if step is not None:
                yield step.word_index, team, ai, step


def stops(state: MatchState) -> list[int]:
    """Where the reading must stop for an autonomous AI to buzz (as a model team's)."""
    after = state.game.position + 1
    return [max(w, after) for w, *_ in autonomous_buzzes(state)]


def trigger(run: Any) -> None:
    """Let every autonomous AI whose word has been read buzz (the first takes the floor)."""
    position = run.g.position
    ready = sorted((b for b in autonomous_buzzes(run.state) if b[0] <= position),
                   key=lambda b: b[0])  # fmt: skip
    for _, team, ai, step in ready:
        _ai_buzz(run, team, ai, step, mode="autonomous", k=k_of(run.state, ai.id))


def _ai_buzz(
    run: Any, team: TeamSpec, ai: AiPlayerSpec, step: AiStep | None, *, mode: str,
    k: int | None = None, pressed_by: str | None = None, timing: Any = None,
) -> None:  # fmt: skip
    from grace_arena.core.events import BuzzTiming

    before = len(run.events)
    run.buzz(
        team, ai.id, word_index=max(run.g.position, 0), timing=timing or BuzzTiming(),
        answer=step.guess if step is not None else "",
        confidence=step.confidence if step is not None else None, kind=TeamKind.MODEL,
    )  # fmt: skip
    accepted = [e for e in run.events[before:] if isinstance(e, BuzzAccepted)]
    if accepted:
        run.emit(
            AiBuzzed(
                buzz_id=accepted[0].buzz_id, tossup_id=run.g.tossup_id, team=team.id,
                player=ai.id, model=ai.model, weight_class=ai.weight_class, mode=mode, k=k,
                token=step.token if step is not None else None, pressed_by=pressed_by,
            )
        )  # fmt: skip


def tossup_points(state: MatchState, team: str, player: str, points: int) -> int:
    """What a correct buzz worth ``points`` scores when ``player`` is an AI of a hybrid team
    under QANTA 2026's rules (its weight class's factor); anyone else's, ``points``."""
    q = state.config.rules.qanta
    ai = ai_of(state.config, team, player)
    if q is None or ai is None:
        return points
    return ai_tossup_points(q, points, ai.weight_class)


# --------------------------------------------------------------------------------------------
# Commands


def _hybrid_team(run: Any, team_id: str) -> TeamSpec:
    team = run.team(team_id)
    if not team.ai_players:
        raise IllegalCommand(f"team {team.id!r} has no AI players")
    return team


def _ai(team: TeamSpec, ai_id: str) -> AiPlayerSpec:
    ai = next((a for a in team.ai_players if a.id == ai_id), None)
    if ai is None:
        names = ", ".join(a.id for a in team.ai_players)
        raise IllegalCommand(f"{ai_id!r} is not an AI player of team {team.id!r} ({names})")
    return ai


def _member(run: Any, team: TeamSpec, player: str | None) -> None:
    if player is not None and player not in run.state.players[team.id]:
        raise IllegalCommand(f"player {player!r} has not joined team {team.id!r}")


def set_modes(run: Any, cmd: SetAiModes) -> None:
    team = _hybrid_team(run, cmd.team)
    _member(run, team, cmd.player)
    for ai_id in {*cmd.modes, *cmd.ks}:
        _ai(team, ai_id)
        if ai_id in run.state.hybrid.muted:
            raise IllegalCommand(f"AI {ai_id!r} was muted: it stays muted for the match")
    bad = {a: k for a, k in cmd.ks.items() if k < 1}
    if bad:
        raise IllegalCommand(f"K must be at least 1 (a gate of K tokens): {bad}")
    state, half_after = run.state, run.config.rules.halftime_after
    if state.tossups_started == 0:
        half = 1
    elif half_after is not None and state.game.heard == half_after:
        if team.id in state.hybrid.changed_at_halftime:
            raise IllegalCommand(
                f"team {team.id!r} changed its AI players' modes at halftime already: one "
                "change a half"
            )
        half = 2
    else:
        when = f"and once at halftime (after {half_after} tossups)" if half_after else (
            "(these rules have no halftime)")  # fmt: skip
        raise IllegalCommand(f"AI players' modes are set before the match {when}")
    run.emit(AiModesSet(team=team.id, modes=dict(cmd.modes), ks=dict(cmd.ks), half=half,
                        by=cmd.player))  # fmt: skip


def mute(run: Any, cmd: MuteAi) -> None:
    team = _hybrid_team(run, cmd.team)
    ai = _ai(team, cmd.ai)
    _member(run, team, cmd.player)
    if ai.id in run.state.hybrid.muted:
        raise IllegalCommand(f"AI {ai.id!r} is muted already (for the rest of the match)")
    floor = run.g.floor
    if run.g.phase in HAS_FLOOR and floor is not None and floor.player == ai.id:
        raise IllegalCommand(f"AI {ai.id!r} has the floor: rule its buzz, then mute it")
    run.emit(AiMuted(team=team.id, player=ai.id, by=cmd.player, tossups_heard=run.g.heard))


def press(run: Any, cmd: PressAi) -> None:
    team = _hybrid_team(run, cmd.team)
    ai = _ai(team, cmd.ai)
    if cmd.player not in run.state.players[team.id]:
        raise IllegalCommand(f"player {cmd.player!r} has not joined team {team.id!r}")
    mode = mode_of(run.state, ai.id)
    if mode != "semi":
        raise IllegalCommand(
            f"AI {ai.id!r} is {mode}: only a semi AI buzzes when a teammate presses its key"
        )
    tossup = run.g.tossup_id
    step = latest_step(ai.steps.get(tossup, ()), run.g.position) if tossup else None
    _ai_buzz(run, team, ai, step, mode="semi", pressed_by=cmd.player, timing=cmd.timing)


def buzz_source(run: Any, cmd: SetBuzzSource) -> None:
    """The buzz with the floor, a human's, goes to a semi AI of the same team (before any
    answer was given or ruled)."""
    floor = run.g.floor
    assert floor is not None
    team = _hybrid_team(run, floor.team)
    ai = _ai(team, cmd.ai)
    if ai_of(run.config, team.id, floor.player) is not None:
        raise IllegalCommand("an AI has the floor already: rule its answer")
    if floor.answer:
        raise IllegalCommand(f"{floor.player!r} answered already: rule the answer")
    if mode_of(run.state, ai.id) != "semi":
        raise IllegalCommand(f"AI {ai.id!r} is {mode_of(run.state, ai.id)}: only a semi AI "
                             "answers for a teammate's buzz")  # fmt: skip
    step = latest_step(ai.steps.get(run.g.tossup_id, ()), run.g.position)
    run.emit(
        AiBuzzSourceSet(
            buzz_id=floor.buzz_id, tossup_id=run.g.tossup_id, team=team.id,
            from_player=floor.player, player=ai.id, answer=step.guess if step else "",
            confidence=step.confidence if step else None, token=step.token if step else None,
        )
    )  # fmt: skip


def _turn_checks(run: Any, cmd: ConsultPart | AbstainPart, what: str) -> TeamSpec:
    play = run.g.bonus
    assert play is not None
    if not isinstance(run.rules.bonuses, QantaBonuses):
        raise IllegalCommand(f"this match's bonuses have no consult rules: nothing to {what}")
    if play.bounceback:
        raise IllegalCommand(f"a bounceback is answered without the AIs: nothing to {what}")
    turn = play.team
    team = run.team(cmd.team)
    if team.id != turn:
        raise IllegalCommand(f"this part is team {turn!r}'s, not team {team.id!r}'s")
    _member(run, team, cmd.player)
    if play.answer is not None or play.prompted:
        raise IllegalCommand(f"team {team.id!r} already answered this part")
    deadline = run.g.deadline
    if deadline is not None and run.now >= deadline:
        raise IllegalCommand(f"the answer time ran out before this {what} came")
    return team


def _answers(team: TeamSpec, bonus_id: str, part: int) -> tuple[AiShown, ...]:
    shown = []
    for ai in team.ai_players:
        parts = ai.bonus_answers.get(bonus_id, ())
        answer = parts[part] if part < len(parts) else None
        shown.append(
            AiShown(
                player=ai.id, model=ai.model, weight_class=ai.weight_class,
                guess=answer.guess if answer else None,
                confidence=answer.confidence if answer else None,
                correct=answer.correct if answer else None,
            )
        )  # fmt: skip
    return tuple(shown)


def consult(run: Any, cmd: ConsultPart) -> None:
    team = _turn_checks(run, cmd, "consult")
    play = run.g.bonus
    if play.consulted is not None:
        raise IllegalCommand(f"team {team.id!r} already consulted its AI players on this part")
    run.emit(
        AiAnswersShown(
            bonus_id=play.bonus_id, part=play.part, team=team.id, player=cmd.player,
            answers=_answers(team, play.bonus_id, play.part), deadline=run.bonus_deadline(),
        )
    )  # fmt: skip


def abstain(run: Any, cmd: AbstainPart) -> None:
    """An abstention, right when none of the team's AIs had the answer (the humans gave
    none)."""
    team = _turn_checks(run, cmd, "abstain from")
    play = run.g.bonus
    right = not any(a.correct is True for a in _answers(team, play.bonus_id, play.part))
    base = {
        "bonus_id": play.bonus_id, "tossup_id": play.tossup_id, "part": play.part,
        "team": team.id, "ruling": Ruling.INCORRECT, "bounceback": False, "by": "team",
        "answer": None,
    }  # fmt: skip
    run.finish_part(base, Ruling.INCORRECT, run.rules.bonuses.abstain_value(right), "abstain")


def consult_points(state: MatchState, team: str, ruling: Ruling, value: int) -> int | None:
    """A consulted part's points under QANTA 2026's rules (None: other rules)."""
    bonuses = rule_set(state.config.rules).bonuses
    if not isinstance(bonuses, QantaBonuses):
        return None
    return bonuses.consult_value(ruling, value, weight_classes(state.config, team))


# --------------------------------------------------------------------------------------------
# Folding the events


def reduce(state: MatchState, ev: Event) -> MatchState:
    h = state.hybrid
    match ev:
        case AiModesSet():
            h = replace(h, modes={**h.modes, **ev.modes}, ks={**h.ks, **ev.ks})
            if ev.half == 2:
                h = replace(h, changed_at_halftime=h.changed_at_halftime | {ev.team})
        case AiMuted():
            h = replace(h, muted=h.muted | {ev.player})
        case AiBuzzSourceSet():  # the floor is the AI's now, its answer given (no clock)
            g = state.game
            assert g.floor is not None
            floor = replace(g.floor, player=ev.player, kind=TeamKind.MODEL, answer=ev.answer,
                            suggestion=None)  # fmt: skip
            return replace(state, game=replace(g, floor=floor, deadline=None))
        case _:
            pass
    return replace(state, hybrid=h)
