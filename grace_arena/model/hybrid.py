"""A model as an AI player of a hybrid team (QANTA 2026), read from the record.

Its steps become the AI's guesses on each tossup (:class:`~grace_arena.core.config.AiStep`):
our word, the runner's token (an imported model keeps its file's ``token_position``; another
model's token is its word), the guess, the confidence of the policy's kind, its decision to
buzz (an imported model's own, from its file; another model's, the policy's threshold) and
the judge's verdict. Its bonus answers are those the record holds for the packet. Its weight
class is the one given, else the one it was imported with (``model import --weight-class`` or
a runner roster's).
"""

from __future__ import annotations

from typing import Any

from grace_arena.core.config import WEIGHT_CLASSES, AiPlayerSpec, AiStep
from grace_arena.core.packet import Packet
from grace_arena.model.outputs import weight_class_of
from grace_arena.model.policy import BuzzPolicy, load_bonus_answers, load_steps

__all__ = ["ai_player"]


def ai_player(
    engine: Any,
    model: str,
    packet: Packet,
    *,
    player_id: str,
    name: str | None = None,
    weight_class: str | None = None,
    policy: BuzzPolicy | None = None,
) -> AiPlayerSpec:
    """``model`` as an AI player ``player_id`` on ``packet``. ``LookupError`` when the record
    has no steps of it there; ``ValueError`` when it has no weight class."""
    policy = policy or BuzzPolicy()
    steps = load_steps(engine, model, packet.packet.id)
    if not steps:
        raise LookupError(
            f"no steps of model {model!r} on packet {packet.packet.id!r}: import its outputs "
            "(grace-arena model import) or precompute it first"
        )
    weight = weight_class or weight_class_of(engine, model, packet.packet.id)
    if weight not in WEIGHT_CLASSES:
        raise ValueError(
            f"model {model!r} has no weight class on packet {packet.packet.id!r}: give one of "
            f"{', '.join(WEIGHT_CLASSES)}"
        )
    known = {t.id for t in packet.tossups}
    guesses = {
        tossup: tuple(
            AiStep(
                word_index=s.word_index,
                token=int((s.extra or {}).get("token_position", s.word_index)),
                guess=s.guess or "",
                confidence=policy.confidence_of(s),
                buzz=policy.would_buzz(s),
                correct=s.correct,
            )
            for s in rows
        )
        for tossup, rows in steps.items()
        if tossup in known
    }
    return AiPlayerSpec(
        id=player_id, name=name or model, model=model, weight_class=weight, steps=guesses,
        bonus_answers=load_bonus_answers(engine, model, packet, policy),
    )  # fmt: skip
