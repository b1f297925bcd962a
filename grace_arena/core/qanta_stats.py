"""QANTA 2026's statistics tables, from the record of hybrid teams' matches. Pure.

Each match is its events in order (``(match_id, events)``); what counts is what is in force,
as for every statistic (:func:`grace_arena.core.stats.match_play`): the rulings on the
replayed match's ledger (an undone ruling is off it, a thrown-out tossup's too, a correction
stands for the ruling it amends).

- **Tossups by player** (per match): every human and AI player who had a ruling, with the
  AI's model and weight class: buzzes ruled, correct, incorrect, negs, points (an AI's
  correct buzz already scaled by its weight class's factor).
- **Bonus strategy by team**: per choice (own, consult, abstain) the parts, how many were
  right (an abstention is right when nobody had the answer), the accuracy, the points and
  the points per part.
- **AI turns by mode and K**: the AI buzzes that took the floor, by how they came about
  (autonomous with its gate K, or semi on a teammate's key): how many, right, wrong, points.
- **Questions**: each tossup ruling in force, who answered it (human or AI, its mode) and
  its points.
- **Settings**: every setting of the rules the matches were played by (QANTA 2026's by the
  runner's names, and the tossup rules).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from grace_arena.core.config import MatchConfig, TeamKind
from grace_arena.core.events import (
    PART_RULINGS,
    TOSSUP_RULINGS,
    AiBuzzed,
    BuzzAccepted,
    Event,
    MatchCreated,
    PlayerJoined,
    Ruling,
)
from grace_arena.core.rules import rule_set
from grace_arena.core.rules.qanta import settings as qanta_settings

__all__ = ["AiTurnLine", "BonusStrategyLine", "QantaTables", "TossupLine", "qanta_tables"]


@dataclass
class TossupLine:
    match_id: int
    team: str
    player: str
    name: str
    kind: str  # human | ai (a model team's player: model)
    model: str | None = None
    weight_class: str | None = None
    buzzes: int = 0
    correct: int = 0
    incorrect: int = 0
    negs: int = 0
    points: int = 0


@dataclass
class BonusStrategyLine:
    team: str
    parts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHOICES, 0))
    right: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHOICES, 0))
    points: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHOICES, 0))

    def accuracy(self, choice: str) -> float | None:
        n = self.parts[choice]
        return self.right[choice] / n if n else None

    def per_part(self, choice: str) -> float | None:
        n = self.parts[choice]
        return self.points[choice] / n if n else None

    @property
    def total(self) -> int:
        return sum(self.points.values())


@dataclass
class AiTurnLine:
    mode: str  # autonomous | semi
    k: int | None  # autonomous: the gate
    turns: int = 0
    correct: int = 0
    incorrect: int = 0
    points: int = 0


@dataclass(frozen=True)
class QuestionLine:
    match_id: int
    tossup_id: str
    team: str
    player: str
    kind: str
    mode: str | None  # an AI's: autonomous | semi
    ruling: str
    points: int


CHOICES = ("own", "consult", "abstain")


@dataclass(frozen=True)
class QantaTables:
    settings: dict[str, object]
    tossups: list[TossupLine]
    bonuses: list[BonusStrategyLine]
    ai_turns: list[AiTurnLine]
    questions: list[QuestionLine]


def _settings(config: MatchConfig) -> dict[str, object]:
    rules = config.rules
    out: dict[str, object] = {"format": rule_set(rules).name}
    out.update(
        {k: getattr(rules, k) for k in ("correct_points", "power_points", "neg_points",
                                        "neg_first_team_only", "halftime_after")}
    )  # fmt: skip
    if rules.qanta is not None:
        out.update(qanta_settings(rules.qanta))
    return out


def qanta_tables(matches: Sequence[tuple[int, Sequence[Event]]]) -> QantaTables:
    """The tables of these matches (module docstring)."""
    from grace_arena.core.match import Match

    tossups: dict[tuple[int, str, str], TossupLine] = {}
    bonuses: dict[str, BonusStrategyLine] = {}
    turns: dict[tuple[str, int | None], AiTurnLine] = {}
    questions: list[QuestionLine] = []
    settings: dict[str, object] = {}
    for match_id, events in matches:
        config = next((e.config for e in events if isinstance(e, MatchCreated)), None)
        if config is None:
            raise ValueError(f"match {match_id}: no match_created event")
        settings = settings or _settings(config)
        ledger = Match.replay(events).state.game.ledger
        by_seq = {e.seq: e for e in events if isinstance(e, TOSSUP_RULINGS + PART_RULINGS)}
        how = {e.buzz_id: e for e in events if isinstance(e, AiBuzzed)}
        names = {(e.team, e.player): e.name for e in events if isinstance(e, PlayerJoined)}
        kinds = {e.buzz_id: e.kind for e in events if isinstance(e, BuzzAccepted)}
        ais = {(t.id, a.id): a for t in config.teams for a in t.ai_players}
        for entry in ledger:
            ev = by_seq.get(entry.seq)
            if ev is None:
                continue
            if isinstance(ev, PART_RULINGS):
                if ev.choice is None or ev.resume == "prompt":
                    continue
                line = bonuses.setdefault(ev.team, BonusStrategyLine(ev.team))
                line.parts[ev.choice] += 1
                line.points[ev.choice] += entry.points
                right = entry.points > 0 if ev.choice == "abstain" else ev.ruling is Ruling.CORRECT
                line.right[ev.choice] += right
                continue
            if ev.ruling is Ruling.PROMPT:
                continue
            ai = ais.get((ev.team, ev.player))
            kind = "ai" if ai else ("model" if kinds.get(ev.buzz_id) is TeamKind.MODEL
                                    else "human")  # fmt: skip
            key = (match_id, ev.team, ev.player)
            line = tossups.setdefault(key, TossupLine(
                match_id, ev.team, ev.player,
                ai.name if ai else names.get((ev.team, ev.player), ev.player), kind,
                ai.model if ai else None, ai.weight_class if ai else None,
            ))  # fmt: skip
            correct = ev.ruling is Ruling.CORRECT
            line.buzzes += 1
            line.correct += correct
            line.incorrect += not correct
            line.negs += (not correct) and entry.points < 0
            line.points += entry.points
            came = how.get(ev.buzz_id)
            if came is not None:
                turn = turns.setdefault((came.mode, came.k), AiTurnLine(came.mode, came.k))
                turn.turns += 1
                turn.correct += correct
                turn.incorrect += not correct
                turn.points += entry.points
            questions.append(QuestionLine(
                match_id, ev.tossup_id, ev.team, ev.player, kind,
                came.mode if came else None, ev.ruling.value, entry.points,
            ))  # fmt: skip
    return QantaTables(
        settings=settings,
        tossups=list(tossups.values()),
        bonuses=sorted(bonuses.values(), key=lambda b: b.team),
        ai_turns=sorted(turns.values(), key=lambda t: (t.mode, t.k or 0)),
        questions=questions,
    )


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def render(tables: QantaTables) -> str:
    """The tables as plain text (the ``stats --qanta`` printout)."""
    out = ["QANTA 2026 settings"]
    out += [f"  {k}: {v}" for k, v in tables.settings.items()]
    out += ["", "Tossups by player (per match)",
            "  match  team      player        kind   weight       TU  +   -  neg  pts"]  # fmt: skip
    for t in tables.tossups:
        out.append(
            f"  {t.match_id:<5}  {t.team:<8}  {t.name[:12]:<12}  {t.kind:<5}  "
            f"{(t.weight_class or '-'):<11}  {t.buzzes:>2}  {t.correct:>2}  {t.incorrect:>2}"
            f"  {t.negs:>3}  {t.points:>3}"
        )
    out += ["", "Bonus strategy by team (parts, right, accuracy, points, per part)"]
    for b in tables.bonuses:
        bits = [
            f"{c} {b.parts[c]}/{b.right[c]}/{_f(b.accuracy(c))}/{b.points[c]}/{_f(b.per_part(c))}"
            for c in CHOICES
        ]
        out.append(f"  {b.team:<8}  " + "  ".join(bits) + f"  total {b.total}")
    out += ["", "AI turns by mode and K (turns, right, wrong, points)"]
    for a in tables.ai_turns:
        k = f"K={a.k}" if a.k is not None else "key"
        out.append(f"  {a.mode:<10} {k:<5} {a.turns:>3} {a.correct:>3} {a.incorrect:>3} "
                   f"{a.points:>4}")  # fmt: skip
    return "\n".join(out) + "\n"
