"""Reliance: when the humans of a team delegate to a model, adopt its answer, override it, and
whether the model's confidence is a good guide when they disagree.

Read from the events of each match (:func:`decisions`): one row per **delegation decision**
(:data:`DECISION_COLUMNS`). Today that is each human team's choice on each bonus part under
consult rules (``kind`` "bonus_part", ``mode`` own / consult / abstain), with what its players
wrote before the model's answer was revealed (the pre-answer window, QANTA 2026's 2 s). The
rows come from the readers in :data:`DECISION_READERS`, each a function of one match's events
giving rows of the same columns with its own ``kind`` and ``mode``; the delegation table below
counts them with no other change. Hybrid teams (QANTA 2026) are read by
:func:`hybrid_decisions`: their bonus parts (own, consult their AI players, abstain) and each
AI player's buzz mode on each tossup (autonomous, semi, muted) with what came of it.

Definitions (on the bonus parts where the team consulted the model and at least one of its
players wrote an answer first; "a human had it": at least one of those answers was judged
correct by our judge; the team "adopted" the model's answer when its final answer was the
model's, by the judge):

- **over-reliance**: the model was wrong and a human had it; the share of those parts where
  the team adopted the model's answer.
- **under-reliance**: the model was right and no human had it; the share where the team did
  not adopt the model's answer (it kept a wrong answer of its own, or abstained).
- **confirmation**: the model's wrong answer agreed with a wrong pre-answer; the share where
  the team gave that answer.
- **AUROC on disagreements**: on the consulted parts where no pre-answer was the model's
  answer, the area under the ROC curve of the model's confidence as a score of the model
  being right (:func:`grace_arena.analysis.metrics.auroc`, which agrees with scikit-learn's
  ``roc_auc_score``): whether its confidence tells the team when to side with it.
- **helpfulness**, per model: the team's accuracy with the model (its final answer) minus its
  humans' accuracy alone (the mean correctness of their pre-answers on the part: one of them,
  taken at random), on the same parts.

Every rate and difference has a percentile bootstrap interval over questions (a bonus's parts
resampled together, with :func:`~grace_arena.analysis.metrics.resample_counts`, as every other
interval of the analysis), and is flagged ``small_sample`` below :data:`SMALL_SAMPLE` parts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from grace_arena.analysis.metrics import (
    auroc,
    bootstrap_ci,
    group_codes,
    percentile_interval,
    resample_counts,
)
from grace_arena.core.config import MatchConfig
from grace_arena.core.consult import PartChoice, part_choices, same_answer
from grace_arena.core.events import (
    AiAnswersShown,
    AiBuzzed,
    AiBuzzSourceSet,
    AiModesSet,
    AiMuted,
    BonusEnded,
    BonusPartCorrected,
    BonusPartRuled,
    BonusPartUndone,
    BonusStarted,
    BuzzAccepted,
    Event,
    MatchCreated,
    Ruled,
    Ruling,
    RulingCorrected,
    RulingUndone,
    TossupEnded,
    TossupOutcome,
    tossups_heard,
)
from grace_arena.core.hybrid import is_hybrid

__all__ = [
    "DECISION_COLUMNS",
    "DECISION_READERS",
    "SMALL_SAMPLE",
    "analyze_reliance",
    "bonus_part_decisions",
    "decisions",
    "hybrid_decisions",
]

#: Below this many parts a rate is flagged as a small sample (and the report says so).
SMALL_SAMPLE = 30

#: One delegation decision of a team. ``question``: what the bootstrap resamples (a bonus,
#: ``packet/bonus``); ``half``: "first", "second" or "overtime" (``halftime_after`` of the
#: rules; "match" without a halftime); ``outcome``: "right", "wrong", "abstained right" or
#: "abstained wrong"; ``final``: "model" (the model's answer), "other" (another answer),
#: "abstain", or "own" (not consulted); ``pre_answers``/``pre_right``: how many of the team's
#: players wrote before the reveal and how many were right; ``humans_disagree``: pre-answers
#: were written and none was the model's answer; ``consulted``: the team saw the model's
#: answer (an abstention may follow it); ``confirmed_wrong``: the model's wrong answer
#: agreed with a wrong pre-answer.
DECISION_COLUMNS = (
    "match", "event", "team", "packet_id", "question", "bonus_id", "part", "half", "kind",
    "mode", "consulted", "model", "model_guess", "model_confidence", "model_correct", "pre_answers",
    "pre_right", "humans_disagree", "confirmed_wrong", "final", "correct", "points", "outcome",
)  # fmt: skip


def _halves(events: Sequence[Event], config: MatchConfig) -> dict[str, str]:
    """Each tossup heard -> the half it was heard in."""
    after, regulation = config.rules.halftime_after, config.rules.regulation_tossups
    out = {}
    for i, tossup in enumerate(tossups_heard(events)):
        if regulation is not None and i >= regulation:
            out[tossup] = "overtime"
        elif after is None:
            out[tossup] = "match"
        else:
            out[tossup] = "first" if i < after else "second"
    return out


def _outcome(c: PartChoice) -> str:
    if c.choice == "abstain":
        return "abstained right" if c.abstained_right else "abstained wrong"
    return "right" if c.correct else "wrong"


def _final(c: PartChoice) -> str:
    if c.choice == "abstain":
        return "abstain"
    if not c.consulted:
        return "own"
    return "model" if c.agreed else "other"


def bonus_part_decisions(events: Sequence[Event], config: MatchConfig) -> list[dict[str, Any]]:
    """Each human team's choice on each bonus part under consult rules, in force, as a
    decision row (``team`` is the team's id; the caller names it)."""
    halves = _halves(events, config)
    rows = []
    for c in part_choices(events, config):
        if is_hybrid(config, c.team):
            continue  # its AI players': hybrid_decisions
        pre = c.pre_answers
        rows.append(
            {
                "team": c.team, "bonus_id": c.bonus_id, "part": c.part,
                "half": halves.get(c.tossup_id, "match"), "kind": "bonus_part",
                "mode": c.choice, "consulted": c.consulted, "model": c.model,
                "model_guess": c.model_guess,
                "model_confidence": c.model_confidence, "model_correct": c.model_correct,
                "pre_answers": len(pre), "pre_right": sum(p.correct for p in pre),
                "humans_disagree": None if not pre or not c.consulted
                else not any(same_answer(p.text, c.model_guess) for p in pre),
                "confirmed_wrong": None if not pre or c.model_correct is not False
                else any(not p.correct and same_answer(p.text, c.model_guess) for p in pre),
                "final": _final(c), "correct": c.correct, "points": c.points,
                "outcome": _outcome(c),
            }
        )  # fmt: skip
    return rows


def _hybrid_parts(
    events: Sequence[Event], config: MatchConfig, halves: dict[str, str]
) -> list[dict[str, Any]]:
    """Each hybrid team's choice in force on each of its bonus parts."""
    ruled: dict[int, dict[str, Any]] = {}  # seq of the first ruling -> its row
    first: dict[int, int] = {}  # seq of a ruling or correction -> that first ruling's seq
    before: dict[int, AiAnswersShown | None] = {}
    shown: AiAnswersShown | None = None
    for ev in events:
        match ev:
            case BonusStarted():
                shown = None
            case AiAnswersShown():
                shown = ev
            case BonusPartRuled() if ev.resume == "prompt":
                before[ev.seq] = shown  # the team answers again (its consult stands)
            case BonusPartRuled():
                before[ev.seq] = shown
                if ev.choice is not None and not ev.bounceback and is_hybrid(config, ev.team):
                    seen = shown if shown is not None and shown.part == ev.part else None
                    ruled[ev.seq] = _hybrid_part(ev, seen, config, halves)
                    first[ev.seq] = ev.seq
                shown = None
            case BonusPartCorrected() if ev.amends in first:
                key = first[ev.amends]
                first[ev.seq] = key
                row = ruled[key]
                row.update(mode=ev.choice or row["mode"], correct=ev.ruling is Ruling.CORRECT,
                           points=ev.points)  # fmt: skip
                row["outcome"] = _hybrid_outcome(row)
            case BonusPartUndone():
                ruled.pop(ev.ruled_seq, None)
                shown = before.get(ev.ruled_seq)
            case BonusEnded() if ev.outcome == "thrown_out":
                ruled = {s: r for s, r in ruled.items() if r["bonus_id"] != ev.bonus_id}
            case TossupEnded() if ev.outcome is TossupOutcome.THROWN_OUT:
                ruled = {s: r for s, r in ruled.items() if r["tossup_id"] != ev.tossup_id}
            case _:
                pass
    return [r for _, r in sorted(ruled.items())]


def _hybrid_outcome(row: dict[str, Any]) -> str:
    if row["mode"] == "abstain":
        return "abstained right" if row["abstained_right"] else "abstained wrong"
    return "right" if row["correct"] else "wrong"


def _hybrid_part(
    ev: BonusPartRuled, seen: AiAnswersShown | None, config: MatchConfig, halves: dict[str, str]
) -> dict[str, Any]:
    team = config.team(ev.team)
    assert team is not None
    had = [  # did any of the team's AIs have the part (what scores an abstention)
        answers[ev.part].correct is True
        for ai in team.ai_players
        if ev.part < len(answers := ai.bonus_answers.get(ev.bonus_id, ()))
    ]
    given = ev.answer if ev.choice != "abstain" else None
    answers = [a for a in seen.answers if a.guess] if seen is not None else []
    adopted = bool(given) and any(same_answer(given or "", a.guess or "") for a in answers)
    final = "abstain" if ev.choice == "abstain" else "own" if seen is None else (
        "model" if adopted else "other")  # fmt: skip
    row = {
        "team": ev.team, "tossup_id": ev.tossup_id, "bonus_id": ev.bonus_id, "part": ev.part,
        "half": halves.get(ev.tossup_id, "match"), "kind": "bonus_part", "mode": ev.choice,
        "consulted": seen is not None,
        "model": "+".join(a.model for a in seen.answers) if seen is not None else None,
        "model_guess": " | ".join(a.guess or "" for a in answers) or None,
        "model_confidence": max((a.confidence for a in answers if a.confidence is not None),
                                default=None),
        "model_correct": any(a.correct is True for a in answers) if answers else None,
        "pre_answers": 0, "pre_right": 0, "humans_disagree": None, "confirmed_wrong": None,
        "final": final, "correct": ev.ruling is Ruling.CORRECT, "points": ev.points,
        "abstained_right": not any(had),
    }  # fmt: skip
    row["outcome"] = _hybrid_outcome(row)
    return row


def _hybrid_tossups(
    events: Sequence[Event], config: MatchConfig, halves: dict[str, str]
) -> list[dict[str, Any]]:
    """One row per AI player of a hybrid team per tossup heard."""
    ais = {(t.id, a.id): a for t in config.teams for a in t.ai_players}
    modes: dict[str, str] = {}  # AI -> its mode now (absent: autonomous)
    muted: set[str] = set()
    at_end: dict[str, dict[str, str]] = {}  # tossup -> AI -> its mode when the tossup ended
    buzzes: dict[int, dict[str, Any]] = {}  # buzz id -> the AI's buzz
    answers: dict[int, BuzzAccepted] = {}
    rulings: dict[int, list[tuple[int, Ruling, int]]] = {}  # buzz id -> (seq, ruling, points)

    def now() -> dict[str, str]:
        return {ai: "muted" if ai in muted else modes.get(ai, "autonomous") for _, ai in ais}

    for ev in events:
        match ev:
            case AiModesSet():
                modes.update(ev.modes)
            case AiMuted():
                muted.add(ev.player)
            case BuzzAccepted():
                answers[ev.buzz_id] = ev
            case AiBuzzed():
                given = answers.get(ev.buzz_id)
                buzzes[ev.buzz_id] = {
                    "tossup": ev.tossup_id, "ai": ev.player, "mode": ev.mode,
                    "guess": given.answer if given else None,
                    "confidence": given.confidence if given else None,
                }  # fmt: skip
            case AiBuzzSourceSet():  # a teammate's buzz handed to a semi AI
                buzzes[ev.buzz_id] = {"tossup": ev.tossup_id, "ai": ev.player, "mode": "semi",
                                      "guess": ev.answer, "confidence": ev.confidence}  # fmt: skip
            case Ruled() | RulingCorrected():
                rulings.setdefault(ev.buzz_id, []).append((ev.seq, ev.ruling, ev.points))
            case RulingUndone():
                rulings[ev.buzz_id] = [r for r in rulings.get(ev.buzz_id, [])
                                       if r[0] != ev.ruled_seq]  # fmt: skip
            case TossupEnded():
                at_end[ev.tossup_id] = now()
            case _:
                pass
    buzzed: dict[tuple[str, str], dict[str, Any]] = {}
    for buzz_id, b in buzzes.items():
        ruled = [r for r in rulings.get(buzz_id, []) if r[1] is not Ruling.PROMPT]
        buzzed[b["tossup"], b["ai"]] = {**b, "ruling": ruled[-1] if ruled else None}
    rows = []
    for tossup in tossups_heard(events):
        mode_at_end = at_end.get(tossup) or now()
        for (team, ai_id), ai in ais.items():
            b = buzzed.get((tossup, ai_id))
            ruling = b["ruling"] if b else None
            right = None if ruling is None else ruling[1] is Ruling.CORRECT
            rows.append(
                {
                    "team": team, "tossup_id": tossup, "bonus_id": None, "part": None,
                    "half": halves.get(tossup, "match"), "kind": "tossup",
                    "mode": b["mode"] if b else mode_at_end[ai_id], "consulted": None,
                    "model": ai.model, "model_guess": b["guess"] if b else None,
                    "model_confidence": b["confidence"] if b else None, "model_correct": right,
                    "pre_answers": 0, "pre_right": 0, "humans_disagree": None,
                    "confirmed_wrong": None, "final": "model" if b else "own",
                    "correct": right, "points": ruling[2] if ruling else 0,
                    "outcome": "no buzz" if b is None else "unruled" if right is None
                    else "right" if right else "wrong",
                }
            )  # fmt: skip
    return rows


def hybrid_decisions(events: Sequence[Event], config: MatchConfig) -> list[dict[str, Any]]:
    """The delegation decisions of hybrid teams (QANTA 2026: :mod:`grace_arena.core.hybrid`),
    in force: each bonus part of theirs (``kind`` "bonus_part", ``mode`` own / consult /
    abstain; ``consulted`` when its AIs' answers were shown, ``model`` their models joined by
    "+", ``model_correct`` whether any shown answer was right, ``final`` "model" when the
    team's answer was one of theirs), then each AI player on each tossup heard (``kind``
    "tossup", ``mode`` autonomous / semi / muted: its mode at its buzz, or when the tossup
    ended; ``outcome`` right / wrong when it buzzed and was ruled, "no buzz" otherwise).
    A tossup row names its tossup (``tossup_id``) and has no ``bonus_id``."""
    if not any(t.ai_players for t in config.teams):
        return []
    halves = _halves(events, config)
    return _hybrid_parts(events, config, halves) + _hybrid_tossups(events, config, halves)


#: The readers of delegation decisions from one match's events (module docstring).
DECISION_READERS: list[Callable[[Sequence[Event], MatchConfig], list[dict[str, Any]]]] = [
    bonus_part_decisions,
    hybrid_decisions,
]


def decisions(events: Sequence[Event], config: MatchConfig | None = None) -> list[dict[str, Any]]:
    """Every delegation decision in one match's record, by every reader, in order."""
    if config is None:
        first = next((e for e in events if isinstance(e, MatchCreated)), None)
        if first is None:
            return []
        config = first.config
    return [row for reader in DECISION_READERS for row in reader(events, config)]


# ---------------------------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    value = float(value)
    return None if np.isnan(value) else value


class _Boot:
    """Percentile bootstrap over questions of ratios of per-question sums."""

    def __init__(self, *, n_resamples: int, seed: int, level: float) -> None:
        self.n_resamples, self.seed, self.level = n_resamples, seed, level

    def ratio(
        self, numerator: np.ndarray, denominator: np.ndarray, questions: np.ndarray
    ) -> list[float | None]:
        """The interval of Σ numerator / Σ denominator, resampling questions."""
        if not numerator.size or not self.n_resamples:
            return [None, None]
        codes, k = group_codes(questions.astype(str), questions.size)
        top = np.bincount(codes, weights=numerator, minlength=k)
        bottom = np.bincount(codes, weights=denominator, minlength=k)
        stats = []
        for counts in resample_counts(k, n_resamples=self.n_resamples, seed=self.seed):
            with np.errstate(invalid="ignore", divide="ignore"):
                stats.append((counts @ top) / (counts @ bottom))
        low, high = percentile_interval(np.concatenate(stats), level=self.level)
        return [_num(low), _num(high)]

    def rate(self, hits: np.ndarray, questions: np.ndarray) -> dict[str, Any]:
        """The share of ``hits`` (one row a part) with its interval."""
        n = int(hits.size)
        k = int(hits.sum())
        return {
            "k": k, "n": n, "rate": k / n if n else None,
            "ci": self.ratio(hits.astype(float), np.ones(n), questions),
            "small_sample": n < SMALL_SAMPLE,
        }  # fmt: skip


def _delegation(rows: pd.DataFrame, boot: _Boot) -> dict[str, Any]:
    table = (
        rows.groupby(["kind", "mode", "half", "outcome"], sort=True)
        .size()
        .reset_index(name="n")
        .to_dict("records")
    )
    modes: dict[str, Any] = {}
    for (kind, half), sub in rows.groupby(["kind", "half"], sort=True):
        q = sub["question"].to_numpy()
        modes[f"{kind}/{half}"] = {
            str(mode): boot.rate((sub["mode"] == mode).to_numpy(), q)
            for mode in sorted(sub["mode"].unique())
        }
    return {
        "table": [{**r, "n": int(r["n"])} for r in table],
        "modes": modes,
    }


def _adoption(pre: pd.DataFrame) -> list[dict[str, Any]]:
    human = np.where(pre["pre_right"] > 0, "right", "wrong")
    model = np.where(pre["model_correct"].fillna(False).astype(bool), "right", "wrong")
    frame = pd.DataFrame({"human": human, "model": model, "final": pre["final"].to_numpy()})
    counts = frame.groupby(["human", "model", "final"], sort=True).size()
    return [{"human": h, "model": m, "final": f, "n": int(n)} for (h, m, f), n in counts.items()]


def _helpfulness(pre: pd.DataFrame, boot: _Boot) -> dict[str, Any]:
    out = {}
    for model, sub in pre.groupby("model", sort=True):
        q = sub["question"].to_numpy()
        with_ai = sub["correct"].astype(float).to_numpy()
        alone = (sub["pre_right"] / sub["pre_answers"]).to_numpy(float)
        n = len(sub)
        ones = np.ones(n)
        out[str(model)] = {
            "n": n,
            "with_ai": float(with_ai.mean()),
            "with_ai_ci": boot.ratio(with_ai, ones, q),
            "humans_alone": float(alone.mean()),
            "humans_alone_ci": boot.ratio(alone, ones, q),
            "difference": float(with_ai.mean() - alone.mean()),
            "difference_ci": boot.ratio(with_ai - alone, ones, q),
            "small_sample": n < SMALL_SAMPLE,
        }
    return out


def _auroc(pre: pd.DataFrame, boot: _Boot) -> dict[str, Any]:
    rows = pre[pre["humans_disagree"].fillna(False).astype(bool)]
    rows = rows[rows["model_confidence"].notna() & rows["model_correct"].notna()]
    conf = rows["model_confidence"].to_numpy(float)
    right = rows["model_correct"].astype(bool).to_numpy(float)
    out: dict[str, Any] = {
        "n": len(rows),
        "model_right": int(right.sum()),
        "value": None,
        "ci": [None, None],
        "small_sample": len(rows) < SMALL_SAMPLE,
    }
    if len(rows) and 0 < right.sum() < len(rows):
        out["value"] = _num(auroc(conf, right))
        if boot.n_resamples:
            low, high = bootstrap_ci(
                conf, right, groups=rows["question"].astype(str).to_numpy(), metric="auroc",
                n_resamples=boot.n_resamples, seed=boot.seed, level=boot.level,
            )  # fmt: skip
            out["ci"] = [_num(low), _num(high)]
    return out


def analyze_reliance(
    rows: pd.DataFrame | None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any] | None:
    """The reliance section (module docstring) of the decisions ``rows``
    (:data:`DECISION_COLUMNS`); None when there are none."""
    if rows is None or rows.empty:
        return None
    boot = _Boot(n_resamples=n_resamples, seed=seed, level=level)
    rows = rows.reset_index(drop=True)
    bonus = rows[rows["kind"] == "bonus_part"]
    consulted = bonus[bonus["consulted"].fillna(False).astype(bool)]
    pre = consulted[consulted["pre_answers"] > 0]
    model_right = pre["model_correct"].fillna(False).astype(bool)
    human_had_it = pre["pre_right"] > 0
    adopted = (pre["final"] == "model").to_numpy()
    q = pre["question"].to_numpy()
    over = (~model_right & human_had_it).to_numpy()
    under = (model_right & ~human_had_it).to_numpy()
    confirmed = pre["confirmed_wrong"].fillna(False).astype(bool).to_numpy()
    wrong_answer_given = adopted & ~pre["correct"].astype(bool).to_numpy()
    notes = []
    if len(consulted) and pre.empty:
        notes.append(
            "no player wrote an answer before the model's was revealed (no pre-answer window "
            "in these matches' rules, or nobody wrote in time): adoption, over- and "
            "under-reliance, confirmation, the AUROC on disagreements and helpfulness need "
            "those answers"
        )
    return {
        "counts": {
            "decisions": len(rows),
            "bonus_parts": len(bonus),
            "consulted": len(consulted),
            "with_pre_answers": len(pre),
            "questions": int(rows["question"].nunique()),
        },
        "small_sample_below": SMALL_SAMPLE,
        "delegation": _delegation(rows, boot),
        "adoption": _adoption(pre) if len(pre) else [],
        "adopted": boot.rate(adopted, q),
        "over_reliance": boot.rate(adopted[over], q[over]),
        "under_reliance": boot.rate(~adopted[under], q[under]),
        "confirmation": boot.rate(wrong_answer_given[confirmed], q[confirmed]),
        "auroc_disagreement": _auroc(pre, boot),
        "helpfulness": _helpfulness(pre, boot) if len(pre) else {},
        "notes": notes,
    }


# ---------------------------------------------------------------------------------------------
# The report's section (cells formatted; nothing computed here)


def _f(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _interval(value: float | None, ci: Sequence[float | None]) -> str:
    if value is None:
        return "–"
    if ci[0] is None or ci[1] is None:
        return _f(value)
    return f"{_f(value)} [{_f(ci[0])}, {_f(ci[1])}]"


def _rate_cell(r: dict[str, Any]) -> str:
    if not r["n"]:
        return "–"
    return f"{r['k']}/{r['n']} = {_interval(r['rate'], r['ci'])}"


def report_section(reliance: dict[str, Any] | None) -> dict[str, Any] | None:
    """What report.md.j2 lays out of the reliance section: lines, small-sample caveats and
    tables (``header`` and ``rows`` of text cells, which the template escapes)."""
    if not reliance:
        return None
    counts = reliance["counts"]
    small = reliance["small_sample_below"]

    def table(header: list[str], rows: list[list[Any]]) -> dict[str, Any]:
        return {"header": header, "rows": [[str(c) for c in row] for row in rows]}

    lines = [
        f"{counts['decisions']} delegation decision(s) on {counts['questions']} question(s); "
        f"{counts['consulted']} bonus part(s) where the team consulted the model, "
        f"{counts['with_pre_answers']} of them with its players' own answers written before "
        "the model's was revealed.",
        *reliance["notes"],
    ]
    caveats = []
    rates = []
    for key, label, counted in (
        ("adopted", "adopted the model's answer", "consulted parts with pre-answers"),
        ("over_reliance", "over-reliance", "the model wrong, a human had it: adopted it"),
        ("under_reliance", "under-reliance", "the model right, no human had it: did not"),
        ("confirmation", "confirmation", "the model agreed with a wrong pre-answer: gave it"),
    ):
        r = reliance[key]
        rates.append([label, counted, _rate_cell(r)])
        if r["n"] and r["small_sample"]:
            caveats.append(f"{label} ({r['n']})")
    au = reliance["auroc_disagreement"]
    auroc_line = (
        f"On the {au['n']} consulted part(s) where no player's own answer was the model's "
        f"(the model right on {au['model_right']}), the AUROC of its confidence as a score of "
        f"its being right is {_interval(au['value'], au['ci'])}."
        if au["value"] is not None
        else f"The AUROC on disagreements needs disagreements where the model was right and "
        f"where it was wrong ({au['n']} part(s), the model right on {au['model_right']})."
    )
    if au["value"] is not None and au["small_sample"]:
        caveats.append(f"the AUROC on disagreements ({au['n']})")
    helpful = []
    for model, h in reliance["helpfulness"].items():
        helpful.append([
            model, h["n"], _interval(h["with_ai"], h["with_ai_ci"]),
            _interval(h["humans_alone"], h["humans_alone_ci"]),
            _interval(h["difference"], h["difference_ci"]),
        ])  # fmt: skip
        if h["small_sample"]:
            caveats.append(f"the helpfulness of {model} ({h['n']})")
    modes = [
        [kind_half.replace("/", " · "), mode, _rate_cell(r)]
        for kind_half, by_mode in reliance["delegation"]["modes"].items()
        for mode, r in by_mode.items()
    ]
    return {
        "lines": lines,
        "caveats": [
            f"fewer than {small} parts behind {', '.join(caveats)}: read the intervals, not "
            "the values"
        ]
        if caveats
        else [],
        "delegation": table(
            ["kind", "mode", "half", "outcome", "decisions"],
            [
                [r["kind"], r["mode"], r["half"], r["outcome"], r["n"]]
                for r in reliance["delegation"]["table"]
            ],
        ),
        "modes": table(["kind · half", "mode", "share [95% CI]"], modes),
        "adoption": table(
            ["a human had it", "the model was", "the team's final answer", "parts"],
            [[a["human"], a["model"], a["final"], a["n"]] for a in reliance["adoption"]],
        )
        if reliance["adoption"]
        else None,
        "rates": table(["measure", "what it counts", "k/n = rate [95% CI]"], rates),
        "auroc": auroc_line,
        "helpfulness": table(
            ["model", "parts", "with the model", "its humans alone", "difference"], helpful
        )
        if helpful
        else None,
    }
