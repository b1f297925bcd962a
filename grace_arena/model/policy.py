"""The buzz policy: where a model buzzes, given its precomputed trajectory (GRACE appendix E.2).

A model buzzes at the **last word of the first clue prefix** whose chosen confidence is at
least ``threshold`` and whose last word index is at least ``not_before_word``; it never buzzes
on a tossup where no prefix qualifies. Steps with no guess or a missing confidence never buzz.

A competitor's imported outputs (:mod:`grace_arena.model.outputs`) carry the model's own buzz
decision at each step (``extra["buzz"]``): with ``own_buzzes`` (the default) such a step buzzes
where its file says, whatever the threshold, as the QANTA runner plays it; with
``own_buzzes=False`` the threshold applies to its confidence like any other.

On a bonus part there is nothing to lose by answering (no format takes points for a wrong bonus
answer), so a model team always gives its best guess, confident or not; the threshold only
marks, in the record, whether the answer was confident (``model_bonus_part.confident``). A part
the model has no guess for is answered with nothing (the moderator rules it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from grace_arena.core.config import ModelAnswer, ModelBuzz, TeamKind, TeamSpec
from grace_arena.core.packet import Packet

__all__ = [
    "CONFIDENCE_FIELDS",
    "BuzzPolicy",
    "ConfidenceKind",
    "StepLike",
    "first_buzz",
    "load_bonus_answers",
    "load_steps",
    "missing_bonus_parts",
    "model_buzzes",
    "model_team",
]

ConfidenceKind = Literal["logit", "logit_geo", "sequence", "verbal"]
CONFIDENCE_FIELDS: dict[str, str] = {
    "logit": "confidence_logit",
    "logit_geo": "confidence_logit_geo",
    "sequence": "sequence_prob",
    "verbal": "confidence_verbal",
}


class StepLike(Protocol):
    step: int
    word_index: int
    guess: str | None


@dataclass(frozen=True, slots=True)
class BuzzPolicy:
    """Buzz when ``confidence`` (logit, logit_geo, sequence or verbal) ≥ ``threshold``.

    With ``calibration`` (a map fitted by ``grace-arena model calibrate``,
    :class:`~grace_arena.analysis.recalibration.Calibrator`), the threshold applies to the
    recalibrated confidence.
    """

    confidence: ConfidenceKind = "logit"
    threshold: float = 0.5
    not_before_word: int = 0
    calibration: Any = None
    #: an imported step buzzes where its file says (``extra["buzz"]``), not by the threshold
    own_buzzes: bool = True

    def __post_init__(self) -> None:
        if self.confidence not in CONFIDENCE_FIELDS:
            raise ValueError(
                f"confidence must be one of {sorted(CONFIDENCE_FIELDS)}, got {self.confidence!r}"
            )
        if self.not_before_word < 0:
            raise ValueError(f"not_before_word must be >= 0, got {self.not_before_word!r}")

    def confidence_of(self, step: Any) -> float | None:
        """The step's confidence of this kind, recalibrated when the policy has a map."""
        value = getattr(step, CONFIDENCE_FIELDS[self.confidence], None)
        if value is None or self.calibration is None:
            return value
        return float(self.calibration.predict([value])[0])

    def would_buzz(self, step: Any) -> bool:
        """Whether this one step passes the policy (the buzz is the first step that does)."""
        declared = (getattr(step, "extra", None) or {}).get("buzz")
        if self.own_buzzes and declared is not None:
            return bool(declared) and step.word_index >= self.not_before_word
        conf = self.confidence_of(step)
        return (
            bool(step.guess)
            and conf is not None
            and conf >= self.threshold
            and step.word_index >= self.not_before_word
        )


def first_buzz(steps: Iterable[Any], policy: BuzzPolicy) -> Any | None:
    """The first step (in step order) at which ``policy`` buzzes, or None."""
    for step in sorted(steps, key=lambda s: s.step):
        if policy.would_buzz(step):
            return step
    return None


def _engine(engine_or_store: Any) -> Any:
    return getattr(engine_or_store, "engine", engine_or_store)


def load_steps(engine_or_store: Any, model: str, packet_id: str) -> dict[str, list[Any]]:
    """The recorded steps of ``model`` on a packet: tossup id -> steps in order."""
    from sqlmodel import Session, select

    from grace_arena.record.models import ModelStepRow

    out: dict[str, list[Any]] = {}
    with Session(_engine(engine_or_store)) as session:
        rows = session.exec(
            select(ModelStepRow)
            .where(ModelStepRow.model == model, ModelStepRow.packet_id == packet_id)
            .order_by(ModelStepRow.tossup_id, ModelStepRow.step)
        ).all()
        for row in rows:
            session.expunge(row)
            out.setdefault(row.tossup_id, []).append(row)
    return out


def load_bonus_answers(
    engine_or_store: Any, model: str, packet: Packet, policy: BuzzPolicy | None = None
) -> dict[str, tuple[ModelAnswer, ...]]:
    """The recorded answers of ``model`` to a packet's bonus parts: bonus id -> one answer per
    part, in order. A bonus with any part missing (a guess that failed is not stored) is left
    out: it was not fully precomputed. The confidence is the policy's kind (recalibrated when
    it has a map)."""
    from sqlmodel import Session, select

    from grace_arena.record.models import ModelBonusPartRow as Row

    policy = policy or BuzzPolicy()
    sizes = {b.id: len(b.parts) for b in packet.bonuses}
    found: dict[str, dict[int, ModelAnswer]] = {}
    with Session(_engine(engine_or_store)) as session:
        rows = session.exec(
            select(Row).where(Row.model == model, Row.packet_id == packet.packet.id)
        ).all()
        for row in rows:
            found.setdefault(row.bonus_id, {})[row.part] = ModelAnswer(
                guess=row.guess, confidence=policy.confidence_of(row), correct=row.correct
            )
    return {
        b: tuple(parts[i] for i in range(sizes[b]))
        for b, parts in found.items()
        if b in sizes and set(parts) == set(range(sizes[b]))
    }


def missing_bonus_parts(engine_or_store: Any, model: str, packet: Packet) -> list[str]:
    """The bonuses of ``packet`` whose parts ``model`` has not all been precomputed on."""
    have = load_bonus_answers(engine_or_store, model, packet)
    return [b.id for b in packet.bonuses if b.id not in have]


def model_buzzes(
    steps_by_tossup: dict[str, Sequence[Any]], policy: BuzzPolicy
) -> dict[str, ModelBuzz]:
    """Tossup id -> where the policy buzzes (tossups where it never buzzes are left out)."""
    buzzes: dict[str, ModelBuzz] = {}
    for tossup_id, steps in steps_by_tossup.items():
        step = first_buzz(steps, policy)
        if step is not None:
            buzzes[tossup_id] = ModelBuzz(
                word_index=step.word_index,
                guess=step.guess,
                confidence=policy.confidence_of(step),
            )
    return buzzes


def model_team(
    engine_or_store: Any,
    model: str,
    packet: Packet,
    policy: BuzzPolicy,
    *,
    team_id: str = "model",
    name: str | None = None,
) -> TeamSpec:
    """A model team for the match engine, its buzzes read from the precomputed record.

    Raises ``LookupError`` when the record holds no steps of ``model`` for this packet (run
    ``grace-arena precompute`` first).
    """
    steps = load_steps(engine_or_store, model, packet.packet.id)
    if not steps:
        raise LookupError(
            f"no precomputed steps for model {model!r} on packet {packet.packet.id!r}: "
            f"run `grace-arena precompute --packet ... --model {model}` first"
        )
    known = {t.id for t in packet.tossups}
    buzzes = {k: v for k, v in model_buzzes(steps, policy).items() if k in known}
    answers = load_bonus_answers(engine_or_store, model, packet, policy)
    return TeamSpec(
        id=team_id,
        name=name or model,
        kind=TeamKind.MODEL,
        model=model,
        buzzes=buzzes,
        bonus_answers=answers,
    )
