"""Precompute a model's guess trajectory on a packet and store every step in the record.

Every clue prefix of every tossup is guessed, judged with the core's judge (only ACCEPT is
correct; a PROMPT is stored as incorrect with its directive) and committed to ``model_step`` as
soon as it is known; the steps that finish while a commit is under way go into the next one
together (a commit per step costs about as much CPU as a third of an LLM call). Re-running is
idempotent: steps already in the record for ``(model, packet, tossup, step)`` are skipped
without asking the guesser, so a second run adds no rows and makes no calls, and an interrupted
run resumes where it stopped (a step lost in the last commit comes from the response cache). A
step whose guesser failed (after litellm's retries) is counted as an error and not stored, so
the next run tries it again.

``would_buzz`` is stored per step for the policy given (default: logit confidence ≥ 0.5): it says
whether that step alone passes; the buzz is at the first step that does.

Bonus parts are guessed in the same run, by the same guesser, under the same concurrency bound
and response cache: each part is asked with the lead-in and the parts before it followed by
their answers (:func:`~grace_arena.model.base.bonus_prefixes`), judged alike and stored in
``model_bonus_part`` (``confident``: whether the policy's confidence passes its threshold; a
model team answers every part with its best guess either way, see
:mod:`grace_arena.model.policy`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grace_arena.core.packet import Packet
from grace_arena.model.base import (
    Guess,
    Guesser,
    Prefix,
    bonus_prefixes,
    is_correct,
    packet_prefixes,
)
from grace_arena.model.policy import BuzzPolicy

__all__ = [
    "DEFAULT_MODEL",
    "PrecomputeStats",
    "ensure_precomputed",
    "make_guesser",
    "precompute",
    "run_precompute",
]

DEFAULT_MODEL = "tfidf"
DEFAULT_POLICY = BuzzPolicy()


@dataclass
class PrecomputeStats:
    """Counts for the progress bar and the summary line (``steps``…``stored``: tossup clue
    prefixes; ``parts``…``parts_stored``: bonus parts; calls, errors and cost: both)."""

    questions: int = 0  # tossups and bonuses
    questions_done: int = 0
    steps: int = 0
    steps_done: int = 0
    skipped: int = 0  # already in the record
    stored: int = 0
    parts: int = 0
    parts_done: int = 0
    parts_skipped: int = 0
    parts_stored: int = 0
    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    cost_usd: float = 0.0  # of the calls made in this run whose price litellm knows
    priced: int = 0  # steps guessed with calls whose price litellm knows
    unpriced: int = 0  # steps guessed with calls that have no known price (e.g. a local model)
    error_messages: list[str] = field(default_factory=list)

    @property
    def cost_unknown(self) -> bool:
        """Calls were made and none had a price: the cost is unknown, not $0."""
        return bool(self.unpriced) and not self.priced


def cost_text(stats: PrecomputeStats) -> str:
    """The run's cost for people: unknown when no call had a price, never a made-up $0."""
    if stats.cost_unknown:
        return "cost unknown (no price for this model)"
    text = f"cost ${stats.cost_usd:.4f}"
    if stats.unpriced:
        text += f" + {stats.unpriced} steps with no known price"
    return text


def make_guesser(
    model: str = DEFAULT_MODEL,
    *,
    corpus: str | Path | None = None,
    k: int = 3,
    api_base: str | None = None,
    api_key: str | None = None,
    concurrency: int = 4,
    num_retries: int = 3,
    cache: Any = "default",
    name: str | None = None,
) -> Guesser:
    """``tfidf`` → the TF-IDF guesser; anything else → the LLM guesser for that litellm model.

    ``corpus`` is the training corpus (TF-IDF) or the exemplar corpus (LLM), default the shipped
    practice corpus. ``cache="default"`` uses the response cache in the user's cache folder; a
    path (``str`` or ``Path``) names the cache file to use; a :class:`ResponseCache` is used as
    is; ``None`` disables the cache.
    """
    from grace_arena.model.corpus import load_corpus

    entries = load_corpus(corpus)
    if model == "tfidf":
        from grace_arena.model.tfidf import TfidfGuesser

        return TfidfGuesser(entries, name=name or model)
    from grace_arena.model.cache import ResponseCache
    from grace_arena.model.llm import LLMGuesser
    from grace_arena.model.tfidf import ExemplarRetriever

    if cache == "default":
        cache = ResponseCache()
    elif isinstance(cache, (str, Path)):
        cache = ResponseCache(cache)
    return LLMGuesser(
        model,
        retriever=ExemplarRetriever(entries),
        k=k,
        api_base=api_base,
        api_key=api_key,
        concurrency=concurrency,
        num_retries=num_retries,
        cache=cache,
        name=name,
    )


def _done_steps(engine: Any, model: str, packet_id: str) -> set[tuple[str, int]]:
    from sqlmodel import Session, select

    from grace_arena.record.models import ModelStepRow

    with Session(engine) as session:
        rows = session.exec(
            select(ModelStepRow.tossup_id, ModelStepRow.step).where(
                ModelStepRow.model == model, ModelStepRow.packet_id == packet_id
            )
        ).all()
    return {(t, s) for t, s in rows}


def _imported(engine: Any, model: str, packet_id: str) -> bool:
    """Whether ``model``'s steps on the packet are a competitor's imported outputs (an import
    stores all of a model's rows on a packet at once, so its first row says)."""
    from sqlmodel import Session, select

    from grace_arena.record.models import ModelStepRow

    with Session(engine) as session:
        extra = session.exec(
            select(ModelStepRow.extra)
            .where(ModelStepRow.model == model, ModelStepRow.packet_id == packet_id)
            .limit(1)
        ).first()
    return bool(extra) and "imported" in extra


def _done_parts(engine: Any, model: str, packet_id: str) -> set[tuple[str, int]]:
    from sqlmodel import Session, select

    from grace_arena.record.models import ModelBonusPartRow as Row

    with Session(engine) as session:
        rows = session.exec(
            select(Row.bonus_id, Row.part).where(Row.model == model, Row.packet_id == packet_id)
        ).all()
    return {(b, p) for b, p in rows}


def _policy_extra(policy: BuzzPolicy) -> dict[str, Any]:
    return {
        "confidence": policy.confidence,
        "threshold": policy.threshold,
        "not_before_word": policy.not_before_word,
        "calibration": None
        if policy.calibration is None
        else {
            "method": policy.calibration.method,
            "fitted_at": policy.calibration.meta.get("fitted_at"),
        },
    }


def _guessed(model: str, prefix: Prefix, guess: Guess, policy: BuzzPolicy) -> dict[str, Any]:
    """What a tossup step and a bonus part store alike: the guess, its confidences, the
    judge's verdict, what it cost, and the policy it was stored under."""
    correct, directive = is_correct(guess.guess, prefix.answer)
    return {
        "model": model,
        "packet_id": prefix.packet_id,
        "guess": guess.guess,
        "confidence_logit": guess.confidence_logit,
        "confidence_logit_geo": guess.confidence_logit_geo,
        "sequence_prob": guess.sequence_prob,
        "confidence_verbal": guess.confidence_verbal,
        "correct": correct,
        "judge_directive": directive,
        "latency_s": guess.latency_s,
        "prompt_tokens": guess.prompt_tokens,
        "completion_tokens": guess.completion_tokens,
        "cost_usd": guess.cost_usd,
        "exemplars": guess.exemplars,
        "extra": {
            **guess.extra,
            "cached": guess.calls == 0 and guess.cache_hits > 0,
            "policy": _policy_extra(policy),
        },
    }


def _row(model: str, prefix: Prefix, guess: Guess, policy: BuzzPolicy) -> Any:
    """The record's row of one guessed prefix: a tossup's step, or a bonus part."""
    from grace_arena.record.models import ModelBonusPartRow, ModelStepRow

    fields = _guessed(model, prefix, guess, policy)
    if prefix.kind == "bonus":
        fields["extra"]["asked"] = prefix.text
        part = ModelBonusPartRow(**fields, bonus_id=prefix.tossup_id, part=prefix.step)
        conf = policy.confidence_of(part)
        part.confident = bool(guess.guess) and conf is not None and conf >= policy.threshold
        return part
    step = ModelStepRow(
        **fields, tossup_id=prefix.tossup_id, step=prefix.step, word_index=prefix.word_index
    )
    step.would_buzz = policy.would_buzz(step)
    return step


def _store(
    engine: Any, model: str, steps: Sequence[tuple[Prefix, Guess]], policy: BuzzPolicy
) -> list[Prefix]:
    """Commit ``steps`` in one transaction; the prefixes stored. If another run stored one of
    them meanwhile, each is tried on its own and that one is left out."""
    from sqlalchemy.exc import IntegrityError
    from sqlmodel import Session

    try:
        with Session(engine) as session:
            session.add_all([_row(model, p, g, policy) for p, g in steps])
            session.commit()
        return [p for p, _ in steps]
    except IntegrityError:
        if len(steps) == 1:
            return []
    return [p for step in steps for p in _store(engine, model, [step], policy)]


async def precompute(
    engine: Any,
    packet: Packet,
    guesser: Guesser,
    *,
    model: str | None = None,
    policy: BuzzPolicy = DEFAULT_POLICY,
    tossups: Sequence[str] | None = None,
    bonuses: bool | Sequence[str] | None = None,
    on_progress: Callable[[PrecomputeStats], None] | None = None,
) -> PrecomputeStats:
    """Guess every missing step of ``packet`` with ``guesser`` and store it (module docstring).

    ``model`` is the name the steps are stored under (default ``guesser.name``); ``tossups``
    limits the run to those tossup ids; ``bonuses`` is ``True`` (every bonus part), ``False``
    (none) or the bonus ids to guess; by default every part, unless ``tossups`` is given.
    """
    from grace_arena.record.store import MatchStore

    name = model or guesser.name
    MatchStore(engine).save_packet(packet, source=packet.path)
    wanted = None if tossups is None else set(tossups)
    prefixes = [p for p in packet_prefixes(packet) if wanted is None or p.tossup_id in wanted]
    if bonuses is None:
        bonuses = tossups is None
    if bonuses is True:
        parts = bonus_prefixes(packet)
    elif bonuses is False:
        parts = []
    else:
        chosen = set(bonuses)
        parts = [p for p in bonus_prefixes(packet) if p.tossup_id in chosen]
    done = {("tossup", *k) for k in _done_steps(engine, name, packet.packet.id)}
    if parts:
        done |= {("bonus", *k) for k in _done_parts(engine, name, packet.packet.id)}
    everything = prefixes + parts

    def key(p: Prefix) -> tuple[str, str]:
        return (p.kind, p.tossup_id)

    stats = PrecomputeStats(
        questions=len({key(p) for p in everything}), steps=len(prefixes), parts=len(parts)
    )
    remaining: dict[tuple[str, str], int] = {}
    for p in everything:
        remaining[key(p)] = remaining.get(key(p), 0) + 1

    def finish(p: Prefix) -> None:
        remaining[key(p)] -= 1
        if remaining[key(p)] == 0:
            stats.questions_done += 1

    todo = []
    for p in everything:
        if (p.kind, p.tossup_id, p.step) in done:
            if p.kind == "bonus":
                stats.parts_skipped += 1
                stats.parts_done += 1
            else:
                stats.skipped += 1
                stats.steps_done += 1
            remaining[key(p)] -= 1
        else:
            todo.append(p)
    stats.questions_done = sum(1 for n in remaining.values() if n == 0)
    if on_progress:
        on_progress(stats)

    if (prepare := getattr(guesser, "prepare", None)) is not None:
        prepare(todo)  # e.g. the LLM guesser's exemplars, in one batch

    async def one(prefix: Prefix) -> tuple[Prefix, Guess]:
        return prefix, await guesser.guess(prefix)

    finished: list[tuple[Prefix, Guess]] = []  # guessed, not yet committed

    async def commit() -> None:
        while finished:
            batch = finished[:]
            finished.clear()
            # In a worker thread: a durable SQLite commit waits for the disk, the loop need not.
            stored = await asyncio.to_thread(_store, engine, name, batch, policy)
            stats.parts_stored += sum(1 for p in stored if p.kind == "bonus")
            stats.stored += sum(1 for p in stored if p.kind != "bonus")
            for prefix, _ in batch:
                finish(prefix)
            if on_progress:
                on_progress(stats)

    committer: asyncio.Task | None = None
    try:
        for next_done in asyncio.as_completed([one(p) for p in todo]):
            prefix, guess = await next_done
            if prefix.kind == "bonus":
                stats.parts_done += 1
            else:
                stats.steps_done += 1
            stats.calls += guess.calls
            stats.cache_hits += guess.cache_hits
            if guess.calls and guess.error is None:
                if guess.cost_usd is None:
                    stats.unpriced += 1
                else:
                    stats.priced += 1
                    stats.cost_usd += guess.cost_usd
            if guess.error is not None:
                stats.errors += 1
                where = (
                    f"bonus {prefix.tossup_id} part {prefix.step + 1}"
                    if prefix.kind == "bonus"
                    else f"{prefix.tossup_id} step {prefix.step}"
                )
                stats.error_messages.append(f"{where}: {guess.error}")
                finish(prefix)
            else:
                finished.append((prefix, guess))
                if committer is None or committer.done():
                    if committer is not None:
                        committer.result()  # a failed commit stops the run
                    committer = asyncio.create_task(commit())
            if on_progress:
                on_progress(stats)
        if committer is not None:
            await committer  # it commits whatever finished while it ran
    finally:
        # The LLM guesser's HTTP session belongs to this event loop.
        if (aclose := getattr(guesser, "aclose", None)) is not None:
            await aclose()
    return stats


def run_precompute(
    engine: Any,
    packet: Packet,
    guesser: Guesser,
    **kwargs: Any,
) -> PrecomputeStats:
    """:func:`precompute` from synchronous code (in a worker thread if a loop is running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(precompute(engine, packet, guesser, **kwargs))
    result: list[PrecomputeStats] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(precompute(engine, packet, guesser, **kwargs)))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]


def ensure_precomputed(
    url: str | None, packet: Packet, model: str = DEFAULT_MODEL
) -> PrecomputeStats:
    """Make sure the record at ``url`` holds ``model``'s steps for ``packet``.

    Only the offline TF-IDF guesser (trained on the practice corpus) is run here: it takes well
    under a second for a packet, so the demo can call this on start. Other models must be
    precomputed with ``grace-arena precompute``; for them this raises ``LookupError`` when steps
    are missing. A competitor's imported outputs (:mod:`grace_arena.model.outputs`) are taken
    as they are: their rows follow the runner's tokens, not our clues, and a tossup they leave
    out is one the model never buzzes on, as in the runner.
    """
    from grace_arena.record.db import open_engine

    engine = open_engine(url)
    try:
        if model != DEFAULT_MODEL:
            n_prefixes = len(packet_prefixes(packet))
            done = len(_done_steps(engine, model, packet.packet.id))
            if done < n_prefixes and not (done and _imported(engine, model, packet.packet.id)):
                raise LookupError(
                    f"model {model!r} has not been precomputed on packet {packet.packet.id!r}"
                )
            n_parts = len(bonus_prefixes(packet))
            return PrecomputeStats(
                steps=n_prefixes,
                skipped=n_prefixes,
                parts=n_parts,
                parts_skipped=len(_done_parts(engine, model, packet.packet.id)),
            )
        return run_precompute(engine, packet, make_guesser(model), model=model)
    finally:
        engine.dispose()
