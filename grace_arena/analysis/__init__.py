"""Offline analysis of the match record: calibration metrics and human-vs-model curves.

In a notebook::

    from grace_arena.analysis import analyze, load

    data = load("sqlite:///arena.db", event="grace")   # or files, or an export folder
    data.steps, data.buzzes, data.tossups               # pandas DataFrames
    result = analyze(data)
    result.metrics, result.leaderboard                  # DataFrames
    result.to_json()                                    # what `grace-arena analyze` writes

The computing modules are numpy / scikit-learn on arrays: none imports the server, the TUI,
the database layer or the model client (an import-linter contract says so); only
:func:`load` reaches the record, when given a database URL (:mod:`.sources`).
Every metric is defined once, as an array function in :mod:`~grace_arena.analysis.metrics`
(row and question metrics, h_t, the question bootstrap) or
:mod:`~grace_arena.analysis.curves` (buzz-timing curves and scores); per-question values
come from the same functions with ``groups=``.
"""

from grace_arena.analysis.curves import (
    AccuracyCurve,
    BuzzRateCurve,
    BuzzRates,
    PlayerRank,
    accuracy_by_fraction,
    before_first_buzz,
    buzz_given_correct,
    cumulative_buzz_rates,
    expected_wins,
    fit_human_curve,
    fraction_revealed,
    grace_player_score,
    quartiles,
    rank_players,
    sh,
    win_probability,
)
from grace_arena.analysis.frames import FileFormatError
from grace_arena.analysis.metrics import (
    CONFIDENCE_KINDS,
    HEADLINE_METRICS,
    METRICS,
    QUESTION_METRICS,
    ReliabilityBin,
    ace,
    aurc,
    auroc,
    bootstrap_ci,
    brier,
    brier_decomposition,
    brier_skill_score,
    calscore,
    calscore_ref,
    drop_missing,
    ece,
    human_fraction,
    log_loss,
    max_calibration_error,
    mce_grace,
    mce_grace_ref,
    mean_confidence_when,
    normalized_sigmoid,
    overconfidence_rate,
    reliability_table,
    risk_coverage_curve,
    selective_accuracy,
    smooth_bandwidth,
    smooth_ece,
    smooth_reliability,
    summarize,
)
from grace_arena.analysis.recalibration import (
    Calibrator,
    cross_val_predict,
    fit_calibrator,
    question_folds,
    recalibration_report,
)
from grace_arena.analysis.result import AnalysisResult, analyze
from grace_arena.analysis.sources import Dataset, load

__all__ = [
    "CONFIDENCE_KINDS",
    "HEADLINE_METRICS",
    "METRICS",
    "QUESTION_METRICS",
    "AccuracyCurve",
    "AnalysisResult",
    "BuzzRateCurve",
    "BuzzRates",
    "Calibrator",
    "Dataset",
    "FileFormatError",
    "PlayerRank",
    "ReliabilityBin",
    "accuracy_by_fraction",
    "ace",
    "analyze",
    "aurc",
    "auroc",
    "before_first_buzz",
    "bootstrap_ci",
    "brier",
    "brier_decomposition",
    "brier_skill_score",
    "buzz_given_correct",
    "calscore",
    "calscore_ref",
    "cross_val_predict",
    "cumulative_buzz_rates",
    "drop_missing",
    "ece",
    "expected_wins",
    "fit_calibrator",
    "fit_human_curve",
    "fraction_revealed",
    "grace_player_score",
    "human_fraction",
    "load",
    "log_loss",
    "max_calibration_error",
    "mce_grace",
    "mce_grace_ref",
    "mean_confidence_when",
    "normalized_sigmoid",
    "overconfidence_rate",
    "quartiles",
    "question_folds",
    "rank_players",
    "recalibration_report",
    "reliability_table",
    "risk_coverage_curve",
    "selective_accuracy",
    "sh",
    "smooth_bandwidth",
    "smooth_ece",
    "smooth_reliability",
    "summarize",
    "win_probability",
]
