"""Bonuses: the models' calibration on bonus parts, and how teams relied on a model they could
consult (QANTA 2026's human rules).

Two tables (:mod:`grace_arena.io.record_io`): ``bonus_parts``, every model's judged answer to
every bonus part it was asked (with the lead-in and the earlier parts' answers), and
``choices``, each team's choice on each part it played under consult rules (own, consult or
abstain; what it was shown; its draft before consulting; its final answer and the ruling).

- **Calibration per part**, per model and confidence kind (logit, verbal; a kind with no
  confidence at all is left out and said once): accuracy, ``ece_10_bin`` (ten equal-width
  bins, as the tossup analysis), Brier, ``selective_acc@10`` (accuracy of the 10 % most
  confident parts; HELM's name), AURC, the reliability table with its counts, per difficulty
  (e/m/h) and per category. Intervals: percentile bootstrap over bonuses (a bonus's parts
  together), as the tossups' over questions.
- **Consults**: per team and over all, the parts played, the consult rate, the accuracy of
  the parts answered alone and after consulting, the abstentions and how many were right, how
  often the answer after a consult was not the team's draft, and whether for the better (the
  draft was wrong and the answer right) or the worse. Rates with Wilson 95 % intervals.
- **Abstention as selective prediction**: on the parts teams played, the teams' coverage (the
  share answered) and risk (the share of those wrong), beside the model's risk at the same
  coverage when it answers its most confident parts (its risk–coverage curve on those parts).
- **Reliance against confidence**: among the parts consulted and answered, the share where the
  team gave the model's answer, per bin of the model's confidence, with the model's accuracy in
  the bin: whether people rely on a model when they should.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from grace_arena.analysis.metrics import (
    aurc,
    bootstrap_ci,
    brier,
    ece,
    reliability_table,
    risk_coverage_curve,
    selective_accuracy,
)

__all__ = ["analyze_bonuses", "wilson"]

KINDS = {"logit": "confidence_logit", "verbal": "confidence_verbal"}
#: Below this many parts, the calibration of a model on bonuses is flagged as a small sample
#: (with ten bins, fewer than about ten parts a bin leaves most bins empty or of one or two).
SMALL_SAMPLE = 100
RELIANCE_BINS = 5


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float | None, float | None]:
    """Wilson score interval of the proportion k/n (None, None when n is 0)."""
    if n == 0:
        return None, None
    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def _rate(k: int, n: int) -> dict[str, Any]:
    low, high = wilson(k, n)
    return {"k": int(k), "n": int(n), "rate": k / n if n else None, "ci": [low, high]}


def _num(value: Any) -> float | None:
    value = float(value)
    return None if np.isnan(value) else value


def _calibration(
    conf: np.ndarray, correct: np.ndarray, groups: np.ndarray, *, boot: dict[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "n": int(conf.size),
        "accuracy": _num(correct.mean()) if conf.size else None,
        "mean_confidence": _num(conf.mean()) if conf.size else None,
        "ece_10_bin": _num(ece(conf, correct)) if conf.size else None,
        "brier": _num(brier(conf, correct)) if conf.size else None,
    }
    if conf.size and boot["n_resamples"] and np.unique(groups).size > 1:
        for name, metric in (("ece_10_bin", "ece"), ("brier", "brier")):
            low, high = bootstrap_ci(conf, correct, groups=groups, metric=metric, **boot)
            out[f"{name}_ci"] = [_num(low), _num(high)]
    return out


def _model_kind(rows: pd.DataFrame, column: str, boot: dict[str, Any]) -> dict[str, Any] | None:
    keep = rows[column].notna()
    if not keep.any():
        return None
    r = rows[keep]
    conf = r[column].to_numpy(float)
    correct = r["correct"].to_numpy(float)
    groups = (r["packet_id"].astype(str) + "/" + r["bonus_id"].astype(str)).to_numpy()
    out = _calibration(conf, correct, groups, boot=boot)
    out["n_missing"] = int((~keep).sum())
    out["bonuses"] = int(np.unique(groups).size)
    out["selective_acc@10"] = _num(selective_accuracy(conf, correct, coverage=0.1))
    out["aurc"] = _num(aurc(conf, correct))
    out["reliability"] = [b.as_dict() for b in reliability_table(conf, correct)]
    out["small_sample"] = conf.size < SMALL_SAMPLE
    order = {"e": 0, "m": 1, "h": 2}  # easy, medium, hard; then what is not marked
    for key, label in (("difficulty", "by_difficulty"), ("category", "by_category")):
        out[label] = {}
        values = r[key].fillna("unmarked").astype(str)
        for value in sorted(values.unique(), key=lambda v: (order.get(v, 3), v)):
            part = r[values == value]
            g = (part["packet_id"].astype(str) + "/" + part["bonus_id"].astype(str)).to_numpy()
            out[label][str(value)] = _calibration(
                part[column].to_numpy(float), part["correct"].to_numpy(float), g,
                boot={**boot, "n_resamples": 0},
            )  # fmt: skip
    return out


def _models(parts: pd.DataFrame, boot: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    models: dict[str, Any] = {}
    notes: list[str] = []
    for model, rows in parts.groupby("model", sort=True):
        kinds = {}
        for kind, column in KINDS.items():
            found = _model_kind(rows, column, boot)
            if found is None:
                notes.append(f"{model} gave no {kind} confidence on bonus parts: not measured")
            else:
                kinds[kind] = found
        models[str(model)] = kinds
    return models, notes


def _consults(choices: pd.DataFrame) -> dict[str, Any]:
    n = len(choices)
    consulted = choices[choices["consulted"].astype(bool)]
    own = choices[choices["choice"] == "own"]
    after = choices[choices["choice"] == "consult"]
    abstained = choices[choices["choice"] == "abstain"]
    # "changed" and "agreed" are unknown (None) for an answer said aloud, not typed: those
    # parts are left out of the rates that need them, and counted
    with_draft = consulted[consulted["changed"].notna()]
    changed = with_draft[with_draft["changed"].astype(bool)]
    typed_after = after[after["agreed"].notna()]
    draft_right = changed["draft_correct"].astype(bool)
    final_right = changed["correct"].astype(bool)
    return {
        "parts": n,
        "points": int(choices["points"].sum()),
        "consult_rate": _rate(len(consulted), n),
        "own_accuracy": _rate(int(own["correct"].sum()), len(own)),
        "consult_accuracy": _rate(int(after["correct"].sum()), len(after)),
        "model_accuracy_when_consulted": _rate(
            int(consulted["model_correct"].fillna(False).astype(bool).sum()), len(consulted)
        ),
        "abstain_rate": _rate(len(abstained), n),
        "abstained_right": _rate(
            int(abstained["abstained_right"].fillna(False).astype(bool).sum()), len(abstained)
        ),
        "changed_after_consult": _rate(len(changed), len(with_draft)),
        "changed_for_the_better": int((~draft_right & final_right).sum()),
        "changed_for_the_worse": int((draft_right & ~final_right).sum()),
        "followed_the_model": _rate(
            int(typed_after["agreed"].astype(bool).sum()), len(typed_after)
        ),
        "answered_aloud_after_consult": len(after) - len(typed_after),
    }


def _selective(choices: pd.DataFrame, parts: pd.DataFrame) -> dict[str, Any] | None:
    """The teams' coverage and risk on the parts they played, beside the consulted model's
    risk at the same coverage on the same parts."""
    if choices.empty:
        return None
    if parts is None or not {"model", "confidence_logit", "correct"} <= set(parts.columns):
        parts = pd.DataFrame(columns=["model", "packet_id", "bonus_id", "part",
                                      "confidence_logit", "correct"])  # fmt: skip
    model = choices["model"].dropna()
    if model.empty:
        return None
    name = str(model.iloc[0])
    mine = parts[parts["model"] == name].set_index(["packet_id", "bonus_id", "part"])
    keys = list(zip(choices["packet_id"], choices["bonus_id"], choices["part"], strict=True))
    found = [k for k in keys if k in mine.index]
    answered = choices["choice"] != "abstain"
    n_answered = int(answered.sum())
    team_risk = (
        float(1 - choices.loc[answered, "correct"].astype(bool).mean()) if n_answered else None
    )
    out: dict[str, Any] = {
        "model": name,
        "parts": len(choices),
        "team": {"coverage": n_answered / len(choices), "risk": team_risk},
        "model_parts": len(found),
    }
    if found:
        rows = mine.loc[found]
        conf = rows["confidence_logit"].to_numpy(float)
        correct = rows["correct"].to_numpy(float)
        ok = ~np.isnan(conf)
        if ok.any():
            curve = risk_coverage_curve(conf[ok], correct[ok])
            coverage = np.asarray(curve.coverage, float)
            risk = np.asarray(curve.risk, float)
            at = out["team"]["coverage"]
            i = int(np.argmin(np.abs(coverage - at)))
            out["model_at_team_coverage"] = {"coverage": float(coverage[i]), "risk": _num(risk[i])}
            out["model_full_coverage_risk"] = _num(1 - correct[ok].mean())
            out["curve"] = {"coverage": coverage.tolist(), "risk": risk.tolist()}
    return out


def _reliance(choices: pd.DataFrame) -> dict[str, Any] | None:
    after = choices[
        (choices["choice"] == "consult")
        & choices["model_confidence"].notna()
        & choices["agreed"].notna()  # typed: whether it was the model's answer is known
    ]
    if after.empty:
        return None
    conf = after["model_confidence"].to_numpy(float)
    agreed = after["agreed"].astype(bool).to_numpy()
    right = after["model_correct"].fillna(False).astype(bool).to_numpy()
    edges = np.linspace(0, 1, RELIANCE_BINS + 1)
    index = np.clip(np.digitize(conf, edges[1:-1]), 0, RELIANCE_BINS - 1)
    bins = []
    for b in range(RELIANCE_BINS):
        sel = index == b
        n = int(sel.sum())
        bins.append(
            {
                "lower": float(edges[b]),
                "upper": float(edges[b + 1]),
                "n": n,
                "reliance": _rate(int(agreed[sel].sum()), n),
                "model_accuracy": _rate(int(right[sel].sum()), n),
            }
        )
    return {"n": len(after), "bins": bins}


def analyze_bonuses(
    parts: pd.DataFrame | None,
    choices: pd.DataFrame | None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    bonuses_heard: int | None = None,
) -> dict[str, Any] | None:
    """The bonus section of the analysis (module docstring); None without bonus data.

    ``bonuses_heard``: the bonuses played in the matches analysed (None: not known, as for
    exported files). When none was, the models' answers to the packets' bonus parts say
    nothing of those matches: they are counted (``not_played``) and not analysed."""
    parts = parts if parts is not None else pd.DataFrame()
    choices = choices if choices is not None else pd.DataFrame()
    if parts.empty and choices.empty:
        return None
    if bonuses_heard == 0 and choices.empty:
        return {
            "counts": {
                "model_parts": len(parts),
                "models": int(parts["model"].nunique()),
                "choices": 0,
                "teams": 0,
                "bonuses_heard": 0,
            },
            "not_played": True,
            "models": {},
            "notes": [],
            "consult": None,
            "selective": None,
            "reliance": None,
        }
    boot = {"n_resamples": n_resamples, "seed": seed, "level": level}
    models, notes = _models(parts, boot) if not parts.empty else ({}, [])
    out: dict[str, Any] = {
        "counts": {
            "model_parts": len(parts),
            "models": len(models),
            "choices": len(choices),
            "teams": int(choices["team"].nunique()) if not choices.empty else 0,
        },
        "models": models,
        "notes": notes,
        "consult": None,
        "selective": None,
        "reliance": None,
    }
    if not choices.empty:
        out["consult"] = {
            "all": _consults(choices),
            "teams": {
                str(team): _consults(rows) for team, rows in choices.groupby("team", sort=True)
            },
        }
        out["selective"] = _selective(choices, parts)
        out["reliance"] = _reliance(choices)
    return out
