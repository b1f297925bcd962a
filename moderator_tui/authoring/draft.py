"""What the authoring screen computes, with no Textual and no I/O: a tossup's editable
sentences, the clue prefixes the model is asked about, the verdict on each prefix under the
buzz policy, the summary line, and the packet that a save writes.

The writing target follows GRACE §3.1: the model should stay wrong or unconfident until the last
sentences. A prefix where the model is confident (chosen confidence ≥ threshold) and wrong is a
*good adversarial clue*; one where it is confident and right before the last two clues is *too
easy for the model*. The model's buzz is the first prefix that passes the policy
(:func:`grace_arena.model.policy.first_buzz`), exactly as in a match.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any, Literal

from grace_arena.core.packet import Packet, Problem, Tossup, packet_to_data, parse_packet
from grace_arena.core.tokenize import marker_spans, strip_markers, tokenize
from grace_arena.model.base import Guess, Prefix, is_correct
from grace_arena.model.policy import BuzzPolicy, first_buzz

__all__ = [
    "EASY_BEFORE_LAST",
    "Draft",
    "GuessCache",
    "PrefixSpec",
    "Summary",
    "Verdict",
    "editable_sentences",
    "evaluate",
    "make_prefix",
    "normalise_sentence",
    "packet_with_drafts",
    "prefix_specs",
    "problem_text",
]

#: A confident, correct guess before the last this-many clues is "too easy for the model".
EASY_BEFORE_LAST = 2

Flag = Literal["adversarial", "too_easy"]


def normalise_sentence(sentence: str) -> str:
    """A sentence as the packet stores it: whitespace (pasted newlines too) collapsed."""
    return " ".join(sentence.split())


def editable_sentences(tossup: Tossup) -> list[str]:
    """The tossup's clues as the writer edits them: markers kept, so the power mark ``(*)`` and
    pronunciation guides survive a round trip. ``" ".join`` of them is the tossup's text."""
    if tossup.clues is not None:
        return list(tossup.clues)
    tokens = tossup.tokens()
    text = tokens.text
    power, _ = marker_spans(text)
    cuts: list[int] = []
    for clue in range(1, tokens.n_clues):
        cut = tokens.words[tokens.clue_start(clue)].start
        # "... night. (*) Henry Clerval ...": a power mark just before a clue's first word
        # belongs to that clue (guides follow their word, so they stay where they are).
        for start, end in power:
            if end <= cut and not text[end:cut].strip():
                cut = start
        cuts.append(cut)
    bounds = [0, *cuts, len(text)]
    return [text[a:b].strip() for a, b in pairwise(bounds)]


@dataclass
class Draft:
    """The writer's working copy of one tossup (mutable; the packet models are frozen)."""

    tossup_id: str
    sentences: list[str]
    answer: str

    @classmethod
    def of(cls, tossup: Tossup) -> Draft:
        return cls(tossup.id, editable_sentences(tossup), tossup.answer)

    def same_as(self, tossup: Tossup) -> bool:
        """Whether saving this draft would leave ``tossup`` as it is."""
        mine = [normalise_sentence(s) for s in self.sentences]
        return mine == editable_sentences(tossup) and self.answer.strip() == tossup.answer

    def raw(self, original: dict[str, Any]) -> dict[str, Any]:
        """The tossup in file layout (``original`` is its ``packet_to_data`` entry), keys in the
        original order. A tossup written as ``text`` stays ``text`` when the sentence splitter
        finds exactly the writer's sentences in it; otherwise it is written as ``clues``."""
        sentences = [normalise_sentence(s) for s in self.sentences]
        joined = " ".join(sentences)
        as_text = "text" in original and all(tokenize(s).words for s in sentences)
        if as_text:
            as_text = tokenize(joined).clue_ends == tokenize(joined, sentences).clue_ends
        out: dict[str, Any] = {}
        for key, value in original.items():
            if key in ("text", "clues"):
                if as_text:
                    out["text"] = joined
                else:
                    out["clues"] = sentences
            elif key == "answer":
                out["answer"] = self.answer.strip()
            else:
                out[key] = value
        return out


@dataclass(frozen=True)
class PrefixSpec:
    """The prefix through one sentence: what the model is asked after that sentence."""

    row: int  # the sentence's row on screen (0-based, empty rows included)
    step: int  # 0-based clue index among the sentences that have words
    first_word: int  # index of the sentence's first word in the tossup
    word_index: int  # index of the prefix's last word (where a buzz here lands)
    text: str  # clues 0..step, markers removed, joined by single spaces (as packet_prefixes)


def prefix_specs(sentences: Sequence[str]) -> list[PrefixSpec | None]:
    """One prefix per sentence row; ``None`` for a sentence with no words (nothing to ask)."""
    out: list[PrefixSpec | None] = []
    clean: list[str] = []
    words = 0
    for row, sentence in enumerate(sentences):
        count = len(tokenize(sentence).words)
        if count == 0:
            out.append(None)
            continue
        clean.append(strip_markers(sentence))
        out.append(PrefixSpec(row, len(clean) - 1, words, words + count - 1, " ".join(clean)))
        words += count
    return out


def make_prefix(spec: PrefixSpec, *, packet_id: str, draft: Draft, category: str | None,
                full_text: str) -> Prefix:  # fmt: skip
    """The guesser's view of one prefix (the answer is for judging, never shown to it)."""
    return Prefix(
        packet_id=packet_id,
        tossup_id=draft.tossup_id,
        step=spec.step,
        word_index=spec.word_index,
        text=spec.text,
        question_text=full_text,
        answer=draft.answer,
        category=category,
    )


class GuessCache:
    """Guesses by (model, exact prefix text): an unchanged prefix is never asked twice.

    The LLM guesser also keeps its own content-addressed response cache on disk; this one
    spares even the TF-IDF work and lets the screen show a result the moment a prefix is typed
    back to something already seen.
    """

    def __init__(self) -> None:
        self._guesses: dict[tuple[str, str], Guess] = {}
        self.hits = 0
        self.misses = 0

    def peek(self, model: str, text: str) -> Guess | None:
        """The cached guess, without counting (for rendering)."""
        return self._guesses.get((model, text))

    def lookup(self, model: str, text: str) -> Guess | None:
        """The cached guess, counting a hit or a miss (for the worker deciding what to ask)."""
        guess = self._guesses.get((model, text))
        if guess is None:
            self.misses += 1
        else:
            self.hits += 1
        return guess

    def put(self, model: str, text: str, guess: Guess) -> None:
        if guess.error is None:  # a failed call is tried again after the next edit
            self._guesses[(model, text)] = guess

    def __len__(self) -> int:
        return len(self._guesses)


@dataclass(frozen=True)
class _Step:
    """A prefix's guess in the shape :class:`BuzzPolicy` reads (like a recorded model step)."""

    step: int
    word_index: int
    guess: str | None
    confidence_logit: float | None
    confidence_logit_geo: float | None
    sequence_prob: float | None
    confidence_verbal: float | None


@dataclass(frozen=True)
class Verdict:
    """What the screen shows beside one sentence."""

    row: int
    spec: PrefixSpec | None  # None: the sentence has no words
    guess: Guess | None = None  # None: not guessed yet (or the call failed: see ``error``)
    error: str | None = None
    correct: bool | None = None
    directive: str | None = None  # the judge's accept / prompt / reject
    confidence: float | None = None  # the policy's chosen confidence
    confident: bool = False  # chosen confidence ≥ threshold
    buzz: bool = False  # the model buzzes at the end of this sentence
    flag: Flag | None = None

    @property
    def pending(self) -> bool:
        return self.spec is not None and self.guess is None and self.error is None


def _judged(correct: bool | None, right: str, wrong: str) -> str:
    if correct is None:
        return "not judged: the answer line is empty"
    return right if correct else wrong


@dataclass(frozen=True)
class Summary:
    """The line under the answer: where the model buzzes and how the tossup meets the target."""

    n_clues: int
    n_words: int
    buzz: Verdict | None
    pending: int
    errors: int
    adversarial: int
    too_easy: int
    final: Verdict | None  # the verdict on the whole tossup (last prefix)
    policy: BuzzPolicy
    flags: list[int] = field(default_factory=list)  # rows flagged too easy
    judgeable: bool = True  # there is an answer line to judge the guesses against

    @property
    def on_target(self) -> bool | None:
        """Wrong or unconfident until the last clues (None while guesses are missing)."""
        if self.pending or self.errors or self.n_clues == 0 or not self.judgeable:
            return None
        return self.too_easy == 0

    def where(self) -> str:
        if self.n_clues == 0:
            return "no sentences yet"
        if self.pending:
            return f"guessing {self.pending} prefix{'es' if self.pending != 1 else ''}…"
        policy = f"{self.policy.confidence} ≥ {self.policy.threshold:.2f}"
        if self.buzz is None or self.buzz.spec is None or self.buzz.guess is None:
            final = ""
            if self.final is not None and self.final.guess is not None:
                verdict = _judged(self.final.correct, "right", "wrong")
                final = f"; after the last clue it says “{self.final.guess.guess}” ({verdict})"
            return f"the model never buzzes ({policy}){final}"
        spec = self.buzz.spec
        verdict = _judged(self.buzz.correct, "correct", "WRONG")
        return (
            f"the model buzzes at clue {spec.step + 1} of {self.n_clues} "
            f"(word {spec.word_index + 1} of {self.n_words}) with “{self.buzz.guess.guess}” — "
            f"{verdict} ({policy})"
        )

    def target(self) -> str:
        if self.on_target is None:
            return ""
        if self.on_target:
            text = "on target: wrong or unconfident until the last clues"
        else:
            rows = ", ".join(str(r + 1) for r in self.flags)
            text = f"too easy for the model at sentence {rows}: make the early clues harder"
        if self.adversarial:
            s = "s" if self.adversarial != 1 else ""
            text += f" · {self.adversarial} good adversarial clue{s}"
        return text


def evaluate(
    sentences: Sequence[str],
    answer: str,
    guesses: Mapping[str, Guess],
    policy: BuzzPolicy,
    *,
    errors: Mapping[str, str] | None = None,
) -> tuple[list[Verdict], Summary]:
    """The verdict on every sentence and the summary, from the guesses known so far.

    ``guesses`` maps a prefix text to its guess; correctness is judged here against the current
    answer line (so editing the answer re-judges without asking the model again).
    """
    errors = errors or {}
    judgeable = bool(answer.strip())
    specs = prefix_specs(sentences)
    live = [s for s in specs if s is not None]
    n_clues = len(live)
    n_words = live[-1].word_index + 1 if live else 0
    steps: list[_Step] = []
    partial: list[Verdict] = []
    for row, spec in enumerate(specs):
        if spec is None:
            partial.append(Verdict(row, None))
            continue
        guess = guesses.get(spec.text)
        if guess is None:
            partial.append(Verdict(row, spec, error=errors.get(spec.text)))
            continue
        if judgeable:
            correct, directive = is_correct(guess.guess, answer)
        else:  # no answer line yet: nothing to judge against (and no target marks)
            correct, directive = None, None
        step = _Step(
            spec.step,
            spec.word_index,
            guess.guess,
            guess.confidence_logit,
            guess.confidence_logit_geo,
            guess.sequence_prob,
            guess.confidence_verbal,
        )
        steps.append(step)
        confident = policy.would_buzz(step)
        flag: Flag | None = None
        if correct is None:
            pass
        elif confident and not correct:
            flag = "adversarial"
        elif confident and correct and spec.step < n_clues - EASY_BEFORE_LAST:
            flag = "too_easy"
        partial.append(
            Verdict(
                row,
                spec,
                guess,
                None,
                correct,
                directive,
                policy.confidence_of(guess),
                confident,
                False,
                flag,
            )
        )
    # The buzz is the first prefix that passes, but only once every earlier prefix is known:
    # an unknown earlier prefix might be where the model buzzes.
    first_unknown = next((v.spec.step for v in partial if v.spec and v.guess is None), None)
    buzz_step = first_buzz(steps, policy)
    buzz_at = None
    if buzz_step is not None and (first_unknown is None or buzz_step.step < first_unknown):
        buzz_at = buzz_step.step
    verdicts = [replace(v, buzz=True) if v.spec and v.spec.step == buzz_at else v for v in partial]
    buzz = next((v for v in verdicts if v.buzz), None)
    final = next((v for v in reversed(verdicts) if v.spec is not None), None)
    summary = Summary(
        n_clues=n_clues,
        n_words=n_words,
        buzz=buzz,
        pending=sum(v.pending for v in verdicts),
        errors=sum(v.error is not None for v in verdicts),
        adversarial=sum(v.flag == "adversarial" for v in verdicts),
        too_easy=sum(v.flag == "too_easy" for v in verdicts),
        final=final if final is not None and final.guess is not None else None,
        policy=policy,
        flags=[v.row for v in verdicts if v.flag == "too_easy"],
        judgeable=judgeable,
    )
    return verdicts, summary


def packet_with_drafts(packet: Packet, drafts: Mapping[str, Draft], *, file: str) -> Packet:
    """The packet with every changed draft in place, checked exactly as a file is loaded.

    Raises :class:`PacketError` with every problem (empty answer, a sentence with no words, two
    power marks, …). Tossups whose drafts are unchanged keep their original layout.
    """
    data = packet_to_data(packet)
    by_id = {t.id: t for t in packet.tossups}
    tossups = []
    for raw in data["tossups"]:
        draft = drafts.get(raw["id"])
        if draft is not None and not draft.same_as(by_id[raw["id"]]):
            raw = draft.raw(raw)
        tossups.append(raw)
    data["tossups"] = tossups
    # Checked as JSON text, so the writer gets the packet checker's own messages.
    text = json.dumps(data, default=str, ensure_ascii=False)
    return parse_packet(text, file=file, suffix=".json")


def problem_text(problem: Problem) -> str:
    """A problem without the file and line (they would point into the unsaved draft)."""
    where = []
    if problem.tossup is not None:
        where.append(problem.tossup)
    if problem.field is not None:
        where.append(problem.field)
    return f"{' · '.join(where)}: {problem.message}" if where else problem.message
