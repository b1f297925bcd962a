"""Small builders shared by the match-engine tests."""

from __future__ import annotations

from grace_arena.core.commands import Join
from grace_arena.core.config import (
    MatchConfig,
    ModelBuzz,
    ScoringRules,
    TeamKind,
    TeamSpec,
    TossupSpec,
)
from grace_arena.core.match import Match


def tossup(tid: str, n_words: int = 20, *, power: int | None = 10, clues: int = 4) -> TossupSpec:
    step = n_words // clues
    ends = tuple(
        sorted({min(step * (i + 1) - 1, n_words - 1) for i in range(clues)} | {n_words - 1})
    )
    return TossupSpec(
        id=tid,
        n_words=n_words,
        clue_ends=ends,
        power_index=power,
        answer="<b>George Washington Carver</b> [prompt on Carver]",
        char_offsets=tuple(i * 6 for i in range(n_words)),
    )


def config(
    *,
    n_tossups: int = 3,
    rules: ScoringRules | None = None,
    model_buzzes: dict[str, ModelBuzz] | None = None,
    humans: tuple[str, ...] = ("red", "blue"),
) -> MatchConfig:
    teams = [TeamSpec(id=h, name=h.title()) for h in humans]
    if model_buzzes is not None:
        teams.append(
            TeamSpec(id="bot", name="Bot", kind=TeamKind.MODEL, model="tfidf", buzzes=model_buzzes)
        )
    return MatchConfig(
        rules=rules or ScoringRules(),
        teams=tuple(teams),
        tossups=tuple(tossup(f"t{i}") for i in range(n_tossups)),
    )


def started_match(cfg: MatchConfig, *, now: float = 1000.0) -> tuple[Match, list]:
    match, events = Match.create(cfg, now=now)
    for team in cfg.teams:
        if team.kind is TeamKind.HUMAN:
            events += match.handle(Join(team=team.id, player=f"{team.id}-1", name="P"), now=now)
    return match, events
