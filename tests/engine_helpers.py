"""Small builders shared by the match-engine tests."""

from __future__ import annotations

from grace_arena.core.commands import Join
from grace_arena.core.config import (
    BonusPartSpec,
    BonusSpec,
    ConsultSpec,
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
    bonus_parts: tuple[int, ...] = (),
    reading_mode: str = "read_aloud",
    bonus_answers: dict | None = None,
    consult: ConsultSpec | None = None,
    second_model_buzzes: dict[str, ModelBuzz] | None = None,
) -> MatchConfig:
    """A match of ``n_tossups`` tossups t0, t1...; with ``bonus_parts``, one bonus b0, b1...
    of that many parts each (part k worth 10, its answer "part k"); with
    ``second_model_buzzes``, a second team "bot2" of the same model after "bot"."""
    teams = [TeamSpec(id=h, name=h.title()) for h in humans]
    if model_buzzes is not None:
        teams.append(
            TeamSpec(
                id="bot", name="Bot", kind=TeamKind.MODEL, model="tfidf", buzzes=model_buzzes,
                bonus_answers=bonus_answers or {},
            )
        )  # fmt: skip
    if second_model_buzzes is not None:
        teams.append(
            TeamSpec(
                id="bot2", name="Bot Two", kind=TeamKind.MODEL, model="tfidf",
                buzzes=second_model_buzzes,
            )
        )  # fmt: skip
    return MatchConfig(
        rules=rules or ScoringRules(),
        teams=tuple(teams),
        tossups=tuple(tossup(f"t{i}") for i in range(n_tossups)),
        bonuses=tuple(
            BonusSpec(
                id=f"b{i}",
                leadin="For 10 points each:",
                parts=tuple(
                    BonusPartSpec(text=f"Name part {k}.", answer=f"<b>part {k}</b>")
                    for k in range(n)
                ),
            )
            for i, n in enumerate(bonus_parts)
        ),
        reading_mode=reading_mode,
        consult=consult,
    )


def started_match(cfg: MatchConfig, *, now: float = 1000.0) -> tuple[Match, list]:
    match, events = Match.create(cfg, now=now)
    for team in cfg.teams:
        if team.kind is TeamKind.HUMAN:
            events += match.handle(Join(team=team.id, player=f"{team.id}-1", name="P"), now=now)
    return match, events
