"""The analysis as a notebook sees it: :func:`analyze` returns an :class:`AnalysisResult`,
a read-only mapping over the JSON that ``grace-arena analyze --json`` writes, whose tables are
also DataFrames."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from grace_arena.analysis.bonuses import analyze_bonuses
from grace_arena.analysis.reliance import analyze_reliance
from grace_arena.analysis.summary import analyze as analyze_dict
from grace_arena.analysis.survey import analyze_survey, survey_steps_from

__all__ = ["AnalysisResult", "analyze"]

#: Keys of a METRICS block that are not one number.
_NOT_SCALAR = (
    "ci",
    "final",
    "by_category",
    "reliability",
    "recalibration",
    "risk_coverage",
    "smooth_reliability",
)


class AnalysisResult(Mapping[str, Any]):
    """Everything :func:`analyze` computed: ``result["models"]`` and the other keys of the
    JSON, :meth:`to_json`, and DataFrames of the main tables (:attr:`metrics`,
    :attr:`leaderboard`, :attr:`reliability`, :attr:`teams`, :attr:`players`, ...)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setitem__(self, key: str, value: Any) -> None:
        self._data[key] = value

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict (the object itself, not a copy)."""
        return self._data

    def to_json(self, path: str | Path | None = None, *, indent: int | None = 2) -> str:
        """The JSON that ``grace-arena analyze --json`` writes; also written to ``path``."""
        text = json.dumps(self._data, indent=indent) + "\n"
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text, encoding="utf-8")
        return text

    # -- tables -------------------------------------------------------------------------

    @property
    def metrics(self) -> pd.DataFrame:
        """One row per model, confidence kind and scope (``all`` steps, ``final`` steps,
        or one ``category``), one column per metric."""
        rows = []
        for model, kinds in self._data["models"].items():
            for kind, m in kinds.items():
                scopes = [("all", None, m), ("final", None, m["final"])]
                scopes += [("category", c, v) for c, v in m["by_category"].items()]
                for scope, category, values in scopes:
                    rows.append(
                        {
                            "model": model,
                            "confidence": kind,
                            "steps": scope,
                            "category": category,
                            **{k: v for k, v in values.items() if k not in _NOT_SCALAR},
                        }
                    )
        return pd.DataFrame(rows)

    @property
    def intervals(self) -> pd.DataFrame:
        """Bootstrap intervals: model, confidence, steps (all / final), metric, low, high."""
        rows = [
            {
                "model": model,
                "confidence": kind,
                "steps": scope,
                "metric": name,
                "low": low,
                "high": high,
            }
            for model, kinds in self._data["models"].items()
            for kind, m in kinds.items()
            for scope, block in (("all", m), ("final", m["final"]))
            for name, (low, high) in block.get("ci", {}).items()
        ]
        return pd.DataFrame(rows)

    @property
    def leaderboard(self) -> pd.DataFrame:
        """Ranks: confidence, metric, rank, model, value."""
        rows = [
            {"confidence": kind, "metric": by.removeprefix("by_"), **entry}
            for kind, boards in self._data["leaderboard"].items()
            for by, entries in boards.items()
            for entry in entries
        ]
        return pd.DataFrame(rows)

    @property
    def reliability(self) -> pd.DataFrame:
        """The reliability tables: model, confidence, steps, then one row per bin."""
        rows = [
            {"model": model, "confidence": kind, "steps": scope, **b}
            for model, kinds in self._data["models"].items()
            for kind, m in kinds.items()
            for scope, block in (("all", m), ("final", m["final"]))
            for b in block.get("reliability", [])
        ]
        return pd.DataFrame(rows)

    @property
    def teams(self) -> pd.DataFrame:
        """Per team: kind, questions heard, matches played, buzzes, correct, incorrect."""
        return pd.DataFrame.from_dict(self._data["teams"], orient="index").rename_axis("team")

    @property
    def players(self) -> pd.DataFrame:
        """Players ranked by GRACE's 20 − 20c score."""
        return pd.DataFrame(self._data["players"])

    @property
    def accuracy(self) -> pd.DataFrame:
        """Accuracy against fraction revealed (figure 5): model, lower, upper, accuracy,
        count."""
        rows = [
            {"model": model, "lower": lo, "upper": hi, "accuracy": a, "count": n}
            for model, c in self._data["curves"]["accuracy"].items()
            for lo, hi, a, n in zip(c["lower"], c["upper"], c["accuracy"], c["count"], strict=True)
        ]
        return pd.DataFrame(rows)

    def _per_model(self, key: str) -> list[tuple[str, str, Any]]:
        return [
            (model, kind, m[key])
            for model, kinds in self._data["models"].items()
            for kind, m in kinds.items()
            if m.get(key)
        ]

    @property
    def recalibration(self) -> pd.DataFrame:
        """ECE, Brier and log loss before (``map`` none) and after each recalibration map,
        out of fold: model, confidence, map, ece, brier, log_loss."""
        rows = []
        for model, kind, r in self._per_model("recalibration"):
            rows.append({"model": model, "confidence": kind, "map": "none", **r["before"]})
            for method in ("temperature", "platt", "isotonic"):
                if method in r:
                    rows.append(
                        {"model": model, "confidence": kind, "map": method, **r[method]["after"]}
                    )
        return pd.DataFrame(rows)

    @property
    def risk_coverage(self) -> pd.DataFrame:
        """The risk–coverage curves: model, confidence, threshold, coverage, risk."""
        rows = [
            {"model": model, "confidence": kind, "threshold": t, "coverage": c, "risk": r}
            for model, kind, curve in self._per_model("risk_coverage")
            for t, c, r in zip(curve["threshold"], curve["coverage"], curve["risk"], strict=True)
        ]
        return pd.DataFrame(rows)

    @property
    def smooth_reliability(self) -> pd.DataFrame:
        """The smoothed reliability curves: model, confidence, bandwidth, t, accuracy,
        density."""
        rows = [
            {
                "model": model,
                "confidence": kind,
                "bandwidth": curve["bandwidth"],
                "t": t,
                "accuracy": a,
                "density": d,
            }
            for model, kind, curve in self._per_model("smooth_reliability")
            for t, a, d in zip(curve["t"], curve["accuracy"], curve["density"], strict=True)
        ]
        return pd.DataFrame(rows)

    @property
    def ranking(self) -> pd.DataFrame:
        """``grace-arena leaderboard``'s ranking (empty when there is none): rank, model, and
        per column its value and interval."""
        ranking = self._data.get("ranking")
        if not ranking:
            return pd.DataFrame()
        rows = []
        for r in ranking["rows"]:
            row = {"rank": r["rank"], "model": r["model"]}
            for c in ranking["columns"]:
                entry = r[c["key"]]
                row[c["key"]] = entry["value"]
                row[f"{c['key']}_low"], row[f"{c['key']}_high"] = entry["ci"]
            rows.append(row)
        return pd.DataFrame(rows)


def analyze(
    steps: Any = None,
    buzzes: pd.DataFrame | None = None,
    *,
    heard: pd.DataFrame | None = None,
    survey: pd.DataFrame | None = None,
    roster: pd.DataFrame | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    h_definition: str = "reference",
    source: dict[str, Any] | None = None,
) -> AnalysisResult:
    """The whole analysis (:func:`grace_arena.analysis.summary.analyze`, plus the per-clue
    survey's humans when there are answers) as an :class:`AnalysisResult`.

    ``steps`` is a data set from :func:`~grace_arena.analysis.sources.load` (its buzzes,
    heard questions, roster, survey answers and source come with it) or a steps DataFrame,
    with ``buzzes``, ``heard``, ``survey`` and ``roster`` DataFrames beside it. This is what
    ``grace-arena analyze`` runs.
    """
    notes: list[str] = []
    bonus_parts = choices = decisions = None
    if steps is not None and not isinstance(steps, pd.DataFrame):
        data = steps
        bonus_parts = getattr(data, "bonus_parts", None)
        choices = getattr(data, "choices", None)
        decisions = getattr(data, "decisions", None)
        steps, buzzes, heard = data.steps, data.buzzes, data.heard
        roster = getattr(data, "roster", None) if roster is None else roster
        survey = data.survey if survey is None else survey
        source = data.source if source is None else source
        notes = list(getattr(data, "notes", []))
    result = analyze_dict(
        steps,
        buzzes,
        heard=heard,
        roster=roster,
        n_resamples=n_resamples,
        seed=seed,
        level=level,
        source=source,
        h_definition=h_definition,
    )
    if survey is not None and len(survey):
        result["survey"] = analyze_survey(survey_steps_from(survey), model_steps=steps)
    bonuses = analyze_bonuses(
        bonus_parts, choices, n_resamples=n_resamples, seed=seed, level=level,
        bonuses_heard=(source or {}).get("bonuses_heard"),
    )  # fmt: skip
    if bonuses is not None:
        result["bonuses"] = bonuses
    reliance = analyze_reliance(decisions, n_resamples=n_resamples, seed=seed, level=level)
    if reliance is not None:
        result["reliance"] = reliance
    if notes:
        result["notes"] = [*notes, *result.get("notes", [])]
    return AnalysisResult(result)
