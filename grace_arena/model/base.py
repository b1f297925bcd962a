"""What every guesser shares: the clue prefix it is asked about and the guess it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from grace_arena.core.judge import Directive, judge
from grace_arena.core.packet import Packet

__all__ = [
    "Guess",
    "Guesser",
    "Prefix",
    "bonus_prefixes",
    "is_correct",
    "main_answer",
    "packet_prefixes",
]


@dataclass(frozen=True, slots=True)
class Prefix:
    """The first ``step + 1`` clues of one tossup: what a guesser sees at one step.

    A bonus part is asked as a prefix too (``kind="bonus"``): ``tossup_id`` is then the bonus's
    id, ``step`` the part (0-based) and ``text`` what has been read when the part is asked.
    """

    packet_id: str
    tossup_id: str
    step: int  # 0-based index of the prefix's last clue
    word_index: int  # index of the prefix's last word
    text: str  # the clues 0..step, joined by single spaces, markers removed
    question_text: str  # the whole tossup: exemplar retrieval must never return it
    answer: str = ""  # the answer line, for judging (never shown to a guesser)
    category: str | None = None
    kind: str = "tossup"  # or "bonus"

    @property
    def corpus_id(self) -> str:
        """The id this tossup has when a packet is read as a corpus."""
        return f"{self.packet_id}/{self.tossup_id}"


@dataclass(slots=True)
class Guess:
    """A guesser's answer for one prefix, with its confidences and what it cost.

    A confidence of ``None`` is *missing* (not sent by the provider, or not parsed): it is
    never replaced by 0 or 0.5.
    """

    guess: str | None
    confidence_logit: float | None = None  # arithmetic mean of exp(logprob) over answer tokens
    confidence_logit_geo: float | None = None  # geometric mean of the token probabilities
    sequence_prob: float | None = None  # product of the token probabilities
    confidence_verbal: float | None = None  # the probability the model stated
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    exemplars: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    calls: int = 0  # requests that went to the provider (cache misses; see LLMGuesser.guess)
    cache_hits: int = 0
    error: str | None = None  # set when no usable answer came back (the step is not stored)


@runtime_checkable
class Guesser(Protocol):
    """Anything that guesses the answer to a clue prefix.

    A guesser may also have ``prepare(prefixes)``, which :func:`~grace_arena.model.precompute.
    precompute` calls with all the prefixes it is about to guess, and ``async aclose()``, which
    it awaits at the end of the run.
    """

    name: str

    async def guess(self, prefix: Prefix) -> Guess: ...


def packet_prefixes(packet: Packet) -> list[Prefix]:
    """Every clue prefix of every tossup, in reading order."""
    out: list[Prefix] = []
    for tossup in packet.tossups:
        tokens = tossup.tokens()
        clues = tokens.clue_texts()
        full = " ".join(clues)
        for step, end in enumerate(tokens.clue_ends):
            out.append(
                Prefix(
                    packet_id=packet.packet.id,
                    tossup_id=tossup.id,
                    step=step,
                    word_index=end,
                    text=" ".join(clues[: step + 1]),
                    question_text=full,
                    answer=tossup.answer,
                    category=tossup.category,
                )
            )
    return out


def main_answer(answer_line: str) -> str:
    """The main answer of an answer line, as a moderator reads it out after a part."""
    from grace_arena.core.judge.lines import parse_answer_line

    forms = parse_answer_line(answer_line).accept
    return forms[0] if forms else answer_line


def bonus_prefixes(packet: Packet) -> list[Prefix]:
    """Every part of every bonus as a guesser is asked it: the lead-in, then each earlier part
    followed by its answer (as the moderator reads them in play), then the part itself."""
    out: list[Prefix] = []
    for bonus in packet.bonuses:
        read: list[str] = [bonus.leadin] if bonus.leadin else []
        whole = " ".join([*read, *(p.text for p in bonus.parts)])
        for index, part in enumerate(bonus.parts):
            text = " ".join([*read, part.text])
            out.append(
                Prefix(
                    packet_id=packet.packet.id,
                    tossup_id=bonus.id,
                    step=index,
                    word_index=len(text.split()) - 1,
                    text=text,
                    question_text=whole,
                    answer=part.answer,
                    category=bonus.category,
                    kind="bonus",
                )
            )
            read += [part.text, f"ANSWER: {main_answer(part.answer)}."]
    return out


def is_correct(guess: str | None, answer_line: str) -> tuple[bool, str]:
    """Judge a model's guess: only ACCEPT is correct (a PROMPT counts as incorrect).

    Returns ``(correct, directive)``; the directive is stored too so a prompt stays visible.
    """
    if not guess:
        return False, Directive.REJECT.value
    directive = judge(guess, answer_line).directive
    return directive is Directive.ACCEPT, directive.value
