"""The analysis as a report: Markdown, HTML, PNG plots and a KalshiBench-style summary JSON.

:func:`write_report` takes the dict of :func:`grace_arena.analysis.summary.analyze` and writes

* ``report.md`` and ``report.html``: leaderboard, headline metrics with bootstrap intervals,
  final-step metrics, the per-category table, teams, expected wins and player ranks;
* ``reliability_<model>_<kind>.png``: reliability diagrams;
* ``buzz_rates.png`` (GRACE figure 4), ``accuracy.png`` (figure 5),
  ``buzz_given_correct.png`` (figure 6, when the steps carry the buzz policy);
* ``summary.json``: ``{benchmark, timestamp, num_models, num_questions, models: {...},
  leaderboard: {...}}``, the layout of KalshiBench's summary file;
* ``analysis.json``: the full dict.

Plotting is kept apart from computing: nothing here calculates a metric. Matplotlib runs on
the Agg backend (no display needed).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grace_arena.analysis.bonuses import SMALL_SAMPLE
from grace_arena.analysis.reliance import report_section as reliance_section

__all__ = [
    "html_report",
    "kalshibench_summary",
    "markdown_report",
    "md_escape",
    "measured",
    "reliability_figure",
    "report_context",
    "small_sample_note",
    "step_policy",
    "team_policy",
    "write_report",
]

_KIND_LABEL = {"logit": "logit confidence", "verbal": "verbalized confidence"}
_HEADLINE = (
    ("calscore", "CalScore (normalised)"),
    ("calscore_ref", "CalScore (ref. code)"),
    ("mce_grace", "MCE (normalised)"),
    ("mce_grace_ref", "MCE (ref. code)"),
    ("ece", "ECE"),
    ("ace", "ACE"),
    ("max_ce", "max CE"),
    ("brier", "Brier"),
    ("bss", "BSS"),
    ("log_loss", "log loss"),
    ("ocr_0.8", "OCR@0.8"),
    ("conf_right", "conf. right"),
    ("conf_wrong", "conf. wrong"),
    ("sh", "SH (app. H)"),
)


#: Below these sizes a model's calibration is flagged as a small sample. Steps: the same rule
#: as the bonus section's parts (:data:`grace_arena.analysis.bonuses.SMALL_SAMPLE`, 100): ten
#: bins hold ten steps each on average, and a bin of a few steps moves ECE by tenths.
#: Questions: the intervals resample questions (a question's steps together), and with fewer
#: than 30 the resamples repeat a handful of questions, so that percentile intervals come out
#: too narrow (they cover the true value less often than they say).
SMALL_STEPS = SMALL_SAMPLE
SMALL_QUESTIONS = 30


def _threshold(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def team_policy(team: dict[str, Any]) -> str | None:
    """A model team's model and buzz threshold as the report names them (``tfidf ≥ 0.5``;
    None for a human team)."""
    if not team.get("model"):
        return None
    threshold = team.get("threshold")
    return team["model"] + ("" if threshold is None else f" ≥ {_threshold(threshold)}")


def step_policy(result: dict[str, Any], model: str) -> str:
    """The buzz policy a model's steps were stored with (``logit ≥ 0.5``), as figure 6 and the
    models' expected wins use it."""
    found = result.get("buzz_policies", {}).get(model)
    if not found:
        return "policy not recorded"
    return " / ".join(f"{p['confidence']} ≥ {_threshold(p['threshold'])}" for p in found)


def measured(result: dict[str, Any]) -> tuple[list[tuple[str, str, dict[str, Any]]], list[str]]:
    """The (model, confidence kind, metrics) that were measured, and a note for each kind
    left out because a model's steps carry none of it (as the bonus section does)."""
    rows, notes = [], []
    for model, kinds in result["models"].items():
        for kind, m in kinds.items():
            if m.get("n"):
                rows.append((model, kind, m))
            else:
                notes.append(
                    f"{model} gave no {_KIND_LABEL[kind]} in its steps: not measured, left out"
                )
    return rows, notes


def is_small(metrics: dict[str, Any]) -> bool:
    """Whether one model's numbers for one confidence kind rest on a small sample (below
    :data:`SMALL_STEPS` steps or :data:`SMALL_QUESTIONS` questions)."""
    return metrics["n"] < SMALL_STEPS or metrics.get("n_questions", 0) < SMALL_QUESTIONS


def small_samples(result: dict[str, Any]) -> list[str]:
    """``model (kind: n steps from q questions)`` for each measured model and kind on a small
    sample (:func:`is_small`)."""
    return [
        f"{model} ({kind}: {m['n']} steps from {m.get('n_questions', 0)} questions)"
        for model, kind, m in measured(result)[0]
        if is_small(m)
    ]


def small_sample_note(result: dict[str, Any]) -> str | None:
    """The caveat printed under the models' numbers when a sample is small."""
    small = small_samples(result)
    if not small:
        return None
    return (
        f"small sample: {', '.join(small)}; below {SMALL_STEPS} steps or {SMALL_QUESTIONS} "
        "questions most of the ten bins hold a handful of steps and the intervals resample a "
        "few questions: read the intervals, not the values, and expect them to be too narrow"
    )


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _ci(metrics: dict[str, Any], key: str) -> str:
    ci = metrics.get("ci", {}).get(key)
    value = _fmt(metrics.get(key))
    if ci and ci[0] is not None:
        return f"{value} [{ci[0]:.3f}, {ci[1]:.3f}]"
    return value


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "model"


def _cell(value: Any) -> str:
    """A Markdown table cell: a pipe in the text is escaped so it does not split the cell."""
    return str(value).replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Summary JSON (KalshiBench layout)
# ---------------------------------------------------------------------------------------


def kalshibench_summary(result: dict[str, Any]) -> dict[str, Any]:
    """The summary in KalshiBench's layout: per-model headline numbers and leaderboards."""
    models = {}
    for name, kinds in result["models"].items():
        entry: dict[str, Any] = {"num_steps": kinds["logit"]["n"] + kinds["logit"]["n_missing"]}
        for kind, m in kinds.items():
            entry[kind] = {
                "accuracy": m.get("accuracy"),
                "calscore": m.get("calscore"),
                "mce_grace": m.get("mce_grace"),
                "brier_score": m.get("brier"),
                "brier_skill_score": m.get("bss"),
                "ece": m.get("ece"),
                "ace": m.get("ace"),
                "mce": m.get("max_ce"),
                "log_loss": m.get("log_loss"),
                "overconfidence_rate_70": m.get("ocr_0.7"),
                "overconfidence_rate_80": m.get("ocr_0.8"),
                "overconfidence_rate_90": m.get("ocr_0.9"),
                "ci": m.get("ci"),
                "n": m.get("n"),
                "n_missing": m.get("n_missing"),
            }
        models[name] = entry
    board = {
        kind: {
            ("by_brier_score" if key == "by_brier" else key): [e["model"] for e in entries]
            for key, entries in by.items()
        }
        for kind, by in result["leaderboard"].items()
    }
    return {
        "benchmark": "GRACE Arena",
        "timestamp": result.get("generated_at"),
        "num_models": len(models),
        "num_questions": result.get("counts", {}).get("questions"),
        "num_buzzes": result.get("counts", {}).get("buzzes"),
        "models": models,
        "leaderboard": board,
    }


# ---------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------


#: Characters a line of a 4.5-inch figure's title holds at 10 points.
_TITLE_WIDTH = 44


def reliability_figure(model: str, kind: str, metrics: dict[str, Any], plt: Any) -> Any:
    """One model's reliability diagram for one confidence kind (a matplotlib figure; None
    without a bin): accuracy per bin with the number of steps in it written above its bar,
    the bins' mean confidences, and the smoothed curve with its band."""
    bins = [b for b in metrics.get("reliability", []) if b["count"]]
    if not bins:
        return None
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfect calibration")
    width = bins[0]["upper"] - bins[0]["lower"]
    bars = ax.bar(
        [b["lower"] for b in bins],
        [b["accuracy"] for b in bins],
        width=width,
        align="edge",
        alpha=0.6,
        edgecolor="black",
        label="accuracy per bin (n: its steps)",
    )
    ax.bar_label(bars, labels=[f"n={b['count']}" for b in bins], fontsize=7, padding=2)
    ax.plot(
        [b["mean_confidence"] for b in bins],
        [b["accuracy"] for b in bins],
        "o-",
        color="C3",
        label="accuracy at the bin's mean confidence",
    )
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="confidence", ylabel="accuracy")
    # the title in short lines (the model, the measure, the sample), each wrapped to the
    # figure's width: one line of it all runs off both sides of a 4.5-inch figure
    lines = [
        model,
        f"{_KIND_LABEL[kind]} (ECE {_fmt(metrics.get('ece'))})",
        f"{metrics['n']} steps, {metrics.get('n_questions', 0)} questions"
        + ("; small sample" if is_small(metrics) else ""),
    ]
    ax.set_title("\n".join(textwrap.fill(line, _TITLE_WIDTH) for line in lines), fontsize=10)
    smooth = metrics.get("smooth_reliability")
    if smooth:
        pts = [(t, a) for t, a in zip(smooth["t"], smooth["accuracy"], strict=True)
               if a is not None]  # fmt: skip
        if pts:
            ax.plot(*zip(*pts, strict=True), "-", color="C2", lw=1.5,
                    label=f"smoothed (σ* = {smooth['bandwidth']:.3f})")  # fmt: skip
        band = smooth.get("band")
        if band:
            lo_hi = [(t, lo, hi) for t, lo, hi in zip(band["t"], band["low"],
                     band["high"], strict=True) if lo is not None]  # fmt: skip
            if lo_hi:
                t, lo, hi = zip(*lo_hi, strict=True)
                ax.fill_between(t, lo, hi, color="C2", alpha=0.2,
                                label=f"{int(band['level'] * 100)}% band")  # fmt: skip
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig


def _plots(result: dict[str, Any], out: Path) -> dict[str, list[str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made: dict[str, list[str]] = {"reliability": [], "curves": []}
    for model, kind, metrics in measured(result)[0]:
        fig = reliability_figure(model, kind, metrics, plt)
        if fig is None:
            continue
        name = f"reliability_{_slug(model)}_{kind}.png"
        fig.savefig(out / name, dpi=100)
        plt.close(fig)
        made["reliability"].append(name)

    made["curves"] += _risk_coverage_plot(result, out, plt)
    made["curves"] += _humans_and_models_plot(result, out, plt)
    made["bonuses"] = _bonus_plots(result, out, plt)
    curves = result["curves"]
    fig4 = curves.get("figure4") or {}
    if fig4.get("groups"):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
        per = "match played" if fig4["normalised_by"] == "matches played" else "tossup heard"
        human_styles = {"Q1": "-", "Q2": "--", "Q3": "-.", "Q4": ":"}
        human_colours = {"Q1": "#08306b", "Q2": "#1f78b4", "Q3": "#41ab5d", "Q4": "#969696"}
        for i, (name, g) in enumerate(fig4["groups"].items()):
            if g["kind"] == "human":
                label = f"{name}: {', '.join(g['teams'])}" if len(g["teams"]) <= 4 else name
                style = {
                    "ls": human_styles.get(name, "-"),
                    "color": human_colours.get(name, "C0"),
                    "lw": 2,
                }
            else:
                warm = ("#e31a1c", "#ff7f00", "#6a3d9a", "#b15928", "#e7298a", "#a6761d")
                label = f"{name} ({team_policy(result['teams'].get(name, {})) or 'model'})"
                style = {"ls": "-", "color": warm[i % len(warm)], "lw": 1.5, "alpha": 0.9}
            for ax, key in zip(axes, ("correct", "incorrect"), strict=True):
                ax.plot(fig4["grid"], g[key], label=label, **style)
        for ax, key in zip(axes, ("Correct buzzes", "Incorrect buzzes"), strict=True):
            # a little past 1: many buzzes come on the last word
            ax.set(xlabel="fraction of the question revealed", title=key, xlim=(0, 1.02))
            ax.grid(alpha=0.3)
        axes[0].set_ylabel(f"cumulative buzzes per {per}")
        axes[1].legend(fontsize=7, loc="upper left")
        fig.suptitle(
            "Human quartiles (Q1: most correct buzzes) and models (GRACE fig. 4), "
            f"normalised by {fig4['normalised_by']}",
            fontsize=10,
        )
        fig.tight_layout()
        fig.savefig(out / "buzz_rates.png", dpi=100)
        plt.close(fig)
        made["curves"].append("buzz_rates.png")
    survey = result.get("survey") or {}
    if curves["accuracy"] or survey.get("accuracy"):
        fig, ax = plt.subplots(figsize=(6, 4))
        lines = [(m, c, "o-") for m, c in sorted(curves["accuracy"].items())]
        lines += [(g, c, "s--") for g, c in survey.get("accuracy", {}).items()]  # humans
        for model, c, style in lines:
            mids = [(lo + hi) / 2 for lo, hi in zip(c["lower"], c["upper"], strict=True)]
            pts = [(x, a) for x, a in zip(mids, c["accuracy"], strict=True) if a is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), style, label=model)
        ax.set(
            xlabel="fraction of the question revealed",
            ylabel="accuracy of the guess",
            title="Accuracy against fraction revealed (GRACE fig. 5)",
            xlim=(0, 1),
            ylim=(0, 1),
        )
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "accuracy.png", dpi=100)
        plt.close(fig)
        made["curves"].append("accuracy.png")
    bgc = curves["buzz_given_correct"]
    if bgc:
        fig, ax = plt.subplots(figsize=(6, 4))
        names = sorted(bgc)
        xs = range(len(names))
        right = [bgc[n]["p_buzz_given_correct"] or 0.0 for n in names]
        wrong = [bgc[n]["p_buzz_given_incorrect"] or 0.0 for n in names]
        ax.bar([x - 0.2 for x in xs], right, width=0.4, label="P(buzz | correct)")
        ax.bar([x + 0.2 for x in xs], wrong, width=0.4, label="P(buzz | incorrect)")
        labels = [f"{n}\n({step_policy(result, n)})" for n in names]
        ax.set_xticks(list(xs), labels, rotation=20, ha="right", fontsize=8)
        ax.set(
            ylim=(0, 1),
            title="Buzz policy against correctness (GRACE fig. 6): the policy stored with "
            "the steps",
        )
        ax.title.set_fontsize(9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "buzz_given_correct.png", dpi=100)
        plt.close(fig)
        made["curves"].append("buzz_given_correct.png")
    if survey.get("buzz_by_fraction"):
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
        for i, (who, c) in enumerate(survey["buzz_by_fraction"].items()):
            mids = [(lo + hi) / 2 for lo, hi in zip(c["lower"], c["upper"], strict=True)]
            style = "s-" if c["kind"] == "human" else "o--"
            for ax, key in zip(
                axes, ("p_buzz_given_correct", "p_buzz_given_incorrect"), strict=True
            ):
                pts = [(x, v) for x, v in zip(mids, c[key], strict=True) if v is not None]
                if pts:
                    label = who if c["kind"] == "human" else f"{who} ({step_policy(result, who)})"
                    ax.plot(*zip(*pts, strict=True), style, color=f"C{i % 10}", label=label)
        axes[0].set(
            title="P(buzz | correct)",
            xlabel="fraction of the question revealed",
            xlim=(0, 1),
            ylim=(0, 1),
        )
        axes[1].set(
            title="P(buzz | incorrect)", xlabel="fraction of the question revealed", xlim=(0, 1)
        )
        axes[1].legend(fontsize=7)
        fig.suptitle("Humans (survey) and models, up to each first buzz (GRACE fig. 6)")
        fig.tight_layout()
        fig.savefig(out / "survey_buzz_given_correct.png", dpi=100)
        plt.close(fig)
        made["curves"].append("survey_buzz_given_correct.png")
    return made


def _risk_coverage_plot(result: dict[str, Any], out: Path, plt: Any) -> list[str]:
    """Risk against coverage, one line per model, a panel per confidence kind."""
    kinds = [
        k for k in _KIND_LABEL if any(v[k].get("risk_coverage") for v in result["models"].values())
    ]
    if not kinds:
        return []
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.5 * len(kinds), 4), squeeze=False)
    for ax, kind in zip(axes[0], kinds, strict=True):
        for i, (model, v) in enumerate(result["models"].items()):
            rc = v[kind].get("risk_coverage")
            if rc:
                label = f"{model} (AURC {_fmt(v[kind].get('aurc'))})"
                ax.step(rc["coverage"], rc["risk"], where="post", color=f"C{i % 10}", label=label)
        ax.set(xlabel="coverage (share of guesses kept)", ylabel="risk (share wrong)",
               title=f"Risk–coverage, {_KIND_LABEL[kind]}", xlim=(0, 1), ylim=(0, 1))  # fmt: skip
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "risk_coverage.png", dpi=100)
    plt.close(fig)
    return ["risk_coverage.png"]


def _bonus_plots(result: dict[str, Any], out: Path, plt: Any) -> list[str]:
    """Bonuses: human reliance on the consulted model against its confidence (with the
    model's accuracy per bin), and the teams' coverage and risk beside the model's curve."""
    bonuses = result.get("bonuses") or {}
    made = []
    reliance = bonuses.get("reliance")
    if reliance:
        bins = [b for b in reliance["bins"] if b["n"]]
        mids = [(b["lower"] + b["upper"]) / 2 for b in bins]
        fig, ax = plt.subplots(figsize=(5.5, 4.5))
        for key, label, style in (
            ("reliance", "teams gave the model's answer", "o"),
            ("model_accuracy", "the model was right", "s"),
        ):
            rates = [b[key]["rate"] for b in bins]
            low = [r - b[key]["ci"][0] for r, b in zip(rates, bins, strict=True)]
            high = [b[key]["ci"][1] - r for r, b in zip(rates, bins, strict=True)]
            ax.errorbar(mids, rates, yerr=[low, high], fmt=style, capsize=3, label=label)
            # (markers only: the bins with no part are not drawn, nor a line across them)
        for x, b in zip(mids, bins, strict=True):
            ax.annotate(f"n={b['n']}", (x, 0.02), ha="center", fontsize=7)
        ax.plot(
            [0, 1], [0, 1], ls=":", color="grey", lw=1, label="calibrated: right as often as sure"
        )
        ax.set(xlabel="the model's confidence (shown to the team)", ylabel="share of parts",
               title="Reliance on the model after a consult", xlim=(0, 1), ylim=(0, 1))  # fmt: skip
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "bonus_reliance.png", dpi=100)
        plt.close(fig)
        made.append("bonus_reliance.png")
    selective = bonuses.get("selective")
    if selective and selective.get("curve"):
        fig, ax = plt.subplots(figsize=(5.5, 4.5))
        curve = selective["curve"]
        ax.step(curve["coverage"], curve["risk"], where="post",
                label=f"{selective['model']}, its most confident parts first")  # fmt: skip
        team = selective["team"]
        if team["risk"] is not None:
            ax.plot([team["coverage"]], [team["risk"]], "o", color="C3", markersize=8,
                    label="the teams (abstaining or answering)")  # fmt: skip
        ax.set(xlabel="coverage (share of parts answered)", ylabel="risk (share wrong)",
               title="Abstention as selective prediction (bonus parts)", xlim=(0, 1),
               ylim=(-0.02, 1.05))  # fmt: skip
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "bonus_risk_coverage.png", dpi=100)
        plt.close(fig)
        made.append("bonus_risk_coverage.png")
    return made


def _bonus_section(result: dict[str, Any]) -> dict[str, Any] | None:
    """The bonus section's lines and tables (cells formatted; nothing computed here)."""
    bonuses = result.get("bonuses")
    if not bonuses:
        return None

    def interval(m: dict[str, Any], key: str) -> str:
        ci = m.get(f"{key}_ci")
        value = _fmt(m.get(key))
        return f"{value} [{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci else value

    def rate(r: dict[str, Any]) -> str:
        if not r["n"]:
            return "–"
        low, high = (_fmt(x, 2) for x in r["ci"])
        return f"{r['k']}/{r['n']} = {_fmt(r['rate'], 2)} [{low}, {high}]"

    counts = bonuses["counts"]
    if bonuses.get("not_played"):
        return {
            "lines": [
                f"The record holds {counts['model_parts']:,} answers of {counts['models']} "
                "model(s) to the bonus parts of these matches' packets, but no bonus was played "
                "in the matches analysed: they are not analysed here."
            ],
            **dict.fromkeys(("calibration", "difficulty", "consult", "reliance", "selective")),
        }
    lines = [
        f"{counts['model_parts']:,} answers of {counts['models']} model(s) to bonus parts, each "
        "asked with the lead-in and the earlier parts' answers; "
        f"{counts['choices']:,} part(s) played by {counts['teams']} team(s) under consult rules."
    ]
    lines += [f"**Note:** {md_escape(n)}." for n in bonuses.get("notes", [])]
    aloud = (bonuses.get("consult") or {}).get("all", {}).get("answered_aloud_after_consult")
    if aloud:
        lines.append(
            f"**Note:** {aloud} answer(s) after a consult were said aloud, not typed: whether "
            "they were the model's answer is unknown, and they are left out of \"gave the "
            'model\'s answer", "answer changed" and the reliance table.'
        )
    calibration = []
    by_difficulty = []
    small = []
    for model, kinds in bonuses["models"].items():
        for kind, m in kinds.items():
            calibration.append([
                md_escape(model), kind, m["n"], m["bonuses"], _fmt(m["accuracy"]),
                interval(m, "ece_10_bin"), interval(m, "brier"), _fmt(m["selective_acc@10"]),
                _fmt(m["aurc"]),
            ])  # fmt: skip
            for level, d in m["by_difficulty"].items():
                by_difficulty.append([
                    md_escape(model), kind, md_escape(level), d["n"], _fmt(d["accuracy"]),
                    _fmt(d["ece_10_bin"]), _fmt(d["brier"]),
                ])  # fmt: skip
            if m["small_sample"]:
                small.append(f"{model} ({kind}: {m['n']} parts)")
    if small:
        lines.append(
            "**Small sample:** " + md_escape(", ".join(small)) + ": with fewer than 100 parts, "
            "most of the ten bins hold a handful of parts; read the intervals, not the values."
        )
    out: dict[str, Any] = {"lines": lines, "calibration": None, "difficulty": None,
                           "consult": None, "reliance": None, "selective": None}  # fmt: skip
    if calibration:
        out["calibration"] = _table(
            ["model", "confidence", "parts", "bonuses", "accuracy", "ECE (10 bins) [95% CI]",
             "Brier [95% CI]", "accuracy of the 10 % most confident", "AURC"], calibration,
        )  # fmt: skip
        out["difficulty"] = _table(
            ["model", "confidence", "difficulty", "parts", "accuracy", "ECE (10 bins)", "Brier"],
            by_difficulty,
        )
    consult = bonuses.get("consult")
    if consult:
        rows = []
        for team, c in [("all teams", consult["all"]), *consult["teams"].items()]:
            rows.append([
                md_escape(team), c["parts"], c["points"], rate(c["consult_rate"]),
                rate(c["own_accuracy"]), rate(c["consult_accuracy"]),
                rate(c["model_accuracy_when_consulted"]), rate(c["abstain_rate"]),
                rate(c["abstained_right"]), rate(c["changed_after_consult"]),
                f"{c['changed_for_the_better']} / {c['changed_for_the_worse']}",
                rate(c["followed_the_model"]),
            ])  # fmt: skip
        out["consult"] = _table(
            ["team", "parts", "points", "consult rate", "accuracy alone", "accuracy after a "
             "consult", "model right when consulted", "abstain rate", "abstentions right",
             "answer changed after a consult (had a draft)", "changed better / worse",
             "gave the model's answer"], rows,
        )  # fmt: skip
    reliance = bonuses.get("reliance")
    if reliance:
        out["reliance"] = _table(
            ["model confidence", "parts", "gave the model's answer", "the model was right"],
            [[f"[{b['lower']:.1f}, {b['upper']:.1f}{']' if b['upper'] >= 1 else ')'}", b["n"],
              rate(b["reliance"]), rate(b["model_accuracy"])] for b in reliance["bins"]],
        )  # fmt: skip
    selective = bonuses.get("selective")
    if selective:
        team = selective["team"]
        at = selective.get("model_at_team_coverage")
        out["selective"] = (
            f"On the {selective['parts']} part(s) played, the teams answered "
            f"{_fmt(team['coverage'], 2)} of them (the rest abstained) with risk "
            f"{_fmt(team['risk'], 2)} (share of answers wrong)"
            + (
                f"; {md_escape(selective['model'])}, answering only its most confident parts "
                f"at the coverage nearest to that which its confidences allow (ties are kept "
                f"or dropped together: {_fmt(at['coverage'], 2)}), would have risk "
                f"{_fmt(at['risk'], 2)} (all parts: "
                f"{_fmt(selective['model_full_coverage_risk'], 2)})."
                if at
                else "."
            )
        )
    return out


def _humans_and_models_plot(result: dict[str, Any], out: Path, plt: Any) -> list[str]:
    """The survey crowd's reliability and each model's (logit, all steps) on one diagram."""
    humans = (result.get("survey") or {}).get("reliability") or {}
    if not humans:
        return []
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfect calibration")
    lines = [(f"{name} (crowd)", bins, "s-") for name, bins in humans.items()]
    lines += [(f"{model} (logit)", v["logit"].get("reliability", []), "o--")
              for model, v in result["models"].items()]  # fmt: skip
    for i, (label, bins, style) in enumerate(lines):
        pts = [(b["mean_confidence"], b["accuracy"]) for b in bins if b["count"]]
        if pts:
            ax.plot(*zip(*pts, strict=True), style, color=f"C{i % 10}", label=label)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="confidence (humans: share who would buzz)",
           ylabel="accuracy", title="Reliability: humans (survey) and models")  # fmt: skip
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(out / "reliability_humans_models.png", dpi=100)
    plt.close(fig)
    return ["reliability_humans_models.png"]


# ---------------------------------------------------------------------------------------
# The report's content, laid out by templates/report.md.j2
# ---------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[<>|])")


def md_escape(value: Any) -> str:
    """Text as Markdown shows it literally: punctuation that Markdown reads (``|`` above all,
    which would split a table cell) backslash-escaped, line breaks as spaces."""
    return _MD_SPECIAL.sub(r"\\\1", str(value)).replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> dict[str, Any]:
    return {"header": list(header), "rows": [[str(c) for c in row] for row in rows]}


def _leaderboards(result: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for kind, by in result["leaderboard"].items():
        ranks = {key: {e["model"]: e["rank"] for e in entries} for key, entries in by.items()}
        rows = []
        for e in by["by_calscore"] or by["by_brier"]:
            m = result["models"][e["model"]][kind]
            rows.append(
                [
                    ranks["by_calscore"].get(e["model"], "–"),
                    e["model"] + (" (small sample)" if is_small(m) else ""),
                    _ci(m, "calscore"),
                    f"{_ci(m, 'ece')} (#{ranks['by_ece'].get(e['model'], '–')})",
                    f"{_ci(m, 'brier')} (#{ranks['by_brier'].get(e['model'], '–')})",
                    f"{_fmt(m.get('auroc'))} (#{ranks.get('by_auroc', {}).get(e['model'], '–')})",
                    _fmt(m.get("accuracy")),
                    f"{m['n']} / {m['n_missing']}",
                ]
            )
        if not rows:  # no model gave this kind of confidence: see the note
            continue
        header = ["#", "model", "CalScore (normalised)", "ECE (rank)", "Brier (rank)",
                  "AUROC (rank)", "accuracy", "steps / missing"]  # fmt: skip
        out.append({"title": _KIND_LABEL[kind].capitalize(), **_table(header, rows)})
    return out


def _per_kind_rows(result: dict[str, Any], make: Any) -> list[list[Any]]:
    return [row for model, kind, m in measured(result)[0] for row in make(model, kind, m)]


def _model_sections(result: dict[str, Any]) -> dict[str, Any]:
    metric_tables = []
    for kind in ("logit", "verbal"):
        rows = []
        for model, of_kind, m in measured(result)[0]:
            if of_kind != kind:
                continue
            rows.append([model, "all", *(_fmt(m.get(k)) for k, _ in _HEADLINE)])
            rows.append([model, "final", *(_fmt(m["final"].get(k)) for k, _ in _HEADLINE)])
        if not rows:
            continue
        header = ["model", "steps", *(label for _, label in _HEADLINE)]
        metric_tables.append({"title": _KIND_LABEL[kind].capitalize(), **_table(header, rows)})

    def selective(model: str, kind: str, m: dict[str, Any]) -> list[list[Any]]:
        return [[model, kind, _fmt(m.get("auroc")), _fmt(m.get("aurc")),
                 _fmt(m.get("acc_at_80")), _fmt(m.get("accuracy"))]]  # fmt: skip

    def recalibrated(model: str, kind: str, m: dict[str, Any]) -> list[list[Any]]:
        r = m.get("recalibration")
        if not r:
            return [[model, kind, "–", "too few questions or one class", "", "", ""]]
        rows = [[model, kind, "none", "",
                 _fmt(r["before"]["ece"]), _fmt(r["before"]["brier"]),
                 _fmt(r["before"]["log_loss"])]]  # fmt: skip
        for method in ("temperature", "platt", "isotonic"):
            if method in r:
                after = r[method]["after"]
                params = ", ".join(
                    f"{k} {_fmt(v) if not isinstance(v, int) else v}"
                    for k, v in r[method]["params"].items()
                )
                rows.append([model, kind, method, params, _fmt(after["ece"]),
                             _fmt(after["brier"]), _fmt(after["log_loss"])])  # fmt: skip
        return rows

    def decomposed(model: str, kind: str, m: dict[str, Any]) -> list[list[Any]]:
        return [[model, kind] + [_fmt(m.get(f"brier_{p}"), 4)
                                 for p in ("reliability", "resolution", "uncertainty", "binned")]
                + [_fmt(m.get("brier"), 4)]]  # fmt: skip

    def smoothed(model: str, kind: str, m: dict[str, Any]) -> list[list[Any]]:
        curve = m.get("smooth_reliability") or {}
        return [[model, kind, _fmt(m.get("smooth_ece")), _fmt(m.get("ece")),
                 _fmt(curve.get("bandwidth")), _fmt(m["final"].get("smooth_ece"))]]  # fmt: skip

    categories = [
        [
            model,
            cat,
            m["n_questions"],
            _fmt(m.get("calscore")),
            _fmt(m.get("ece")),
            _fmt(m.get("smooth_ece")),
            _fmt(m.get("brier")),
            m["n"],
        ]
        for model, kinds in result["models"].items()
        for cat, m in kinds["logit"]["by_category"].items()
    ]
    folds = next(
        (m["recalibration"]["n_splits"] for kinds in result["models"].values()
         for m in kinds.values() if m.get("recalibration")),
        5,
    )  # fmt: skip
    return {
        "leaderboards": _leaderboards(result),
        "metric_tables": metric_tables,
        "selective": _table(
            ["model", "confidence", "AUROC", "AURC", "accuracy at 80 % coverage", "accuracy"],
            _per_kind_rows(result, selective),
        ),
        "recalibration_folds": folds,
        "recalibration": _table(
            ["model", "confidence", "map", "fitted on all steps", "ECE", "Brier", "log loss"],
            _per_kind_rows(result, recalibrated),
        ),
        "decomposition": _table(
            [
                "model",
                "confidence",
                "reliability",
                "resolution",
                "uncertainty",
                "binned",
                "Brier",
            ],
            _per_kind_rows(result, decomposed),
        ),
        "smooth": _table(
            [
                "model",
                "confidence",
                "smooth ECE",
                "ECE (10 bins)",
                "bandwidth σ*",
                "smooth ECE, final steps",
            ],
            _per_kind_rows(result, smoothed),
        ),
        "categories": _table(
            [
                "model",
                "category",
                "questions",
                "CalScore (normalised)",
                "ECE",
                "smooth ECE",
                "Brier",
                "steps",
            ],
            categories,
        ),
    }


def _buzz_sections(result: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if result["teams"]:
        out["teams"] = _table(
            [
                "team",
                "kind",
                "model",
                "buzz threshold",
                "questions heard",
                "buzzes",
                "correct",
                "incorrect",
                "mean fraction at a correct buzz",
            ],
            [
                [
                    team,
                    t["kind"],
                    t.get("model") or "–",
                    _threshold(t.get("threshold")),
                    t["questions_heard"],
                    t["buzzes"],
                    t["correct"],
                    t["incorrect"],
                    _fmt(t["mean_fraction_correct"]),
                ]
                for team, t in result["teams"].items()
            ],
        )
    ew = result["expected_wins"]
    if ew.get("human_curve"):
        rows = [["model team (its buzzes)", n, team_policy(result["teams"].get(n, {})) or "–",
                 _fmt(v["expected_wins"]), v["n_questions"]]
                for n, v in ew["teams"].items()]  # fmt: skip
        rows += [["model (its steps' policy)", n, step_policy(result, n),
                  _fmt(v["expected_wins"]), v["n_questions"]]
                 for n, v in ew["models"].items()]  # fmt: skip
        out["expected_wins"] = {
            "records": ew["n_human_records"],
            "coefficients": ", ".join(f"{c:.4f}" for c in ew["human_curve"]),
            **_table(["from", "name", "policy", "expected wins", "questions"], rows),
        }
    bgc = result["curves"]["buzz_given_correct"]
    if bgc:
        out["policy"] = _table(
            [
                "model",
                "policy (stored with the steps)",
                "P(buzz | correct)",
                "P(buzz | incorrect)",
                "steps correct / wrong",
            ],
            [
                [
                    model,
                    step_policy(result, model),
                    _fmt(v["p_buzz_given_correct"]),
                    _fmt(v["p_buzz_given_incorrect"]),
                    f"{v['n_correct']} / {v['n_incorrect']}",
                ]
                for model, v in bgc.items()
            ],
        )
    if result["players"]:
        out["players"] = _table(
            ["#", "player", "team", "kind", "mean score", "questions", "quartile (4: top)"],
            [
                [
                    p["rank"],
                    p["player"],
                    p["team"],
                    p["kind"],
                    _fmt(p["mean_score"], 2),
                    p["n_questions"],
                    p["quartile"],
                ]
                for p in result["players"][:50]
            ],
        )
    if result.get("survey"):
        out["survey"] = _survey_section(result)
    return out


def _ranking_section(result: dict[str, Any]) -> dict[str, Any] | None:
    ranking = result.get("ranking")
    if not ranking:
        return None

    def cell(entry: dict[str, Any]) -> str:
        value, ci = entry.get("value"), entry.get("ci") or [None, None]
        if value is None:
            return "–"
        return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci[0] is not None else "")

    columns = ranking["columns"]
    rows = [[r["rank"], r["model"], *(cell(r[c["key"]]) for c in columns)] for r in ranking["rows"]]
    return {
        "caption": ranking["caption"],
        **_table(["#", "model", *(c["label"] for c in columns)], rows),
    }


def report_context(result: dict[str, Any], images: dict[str, list[str]]) -> dict[str, Any]:
    """What report.md.j2 lays out: counts and settings, and each section's tables as
    formatted cells (nothing here computes a metric)."""
    counts = result.get("counts", {})
    boot = result["settings"]["bootstrap"]
    context: dict[str, Any] = {
        "generated_at": result.get("generated_at"),
        "source": result.get("source", {}).get("description", "n/a"),
        "counts": {
            k: f"{counts.get(k, 0):,}"
            for k in ("steps", "models", "buzzes", "teams", "teams_buzzing", "questions")
        },
        "level": int(boot["level"] * 100),
        "resamples": boot["n_resamples"],
        "h_label": result["settings"].get("h_definition_label"),
        "notes": [*result.get("notes", []), *measured(result)[1]]
        + ([note[0].upper() + note[1:]] if (note := small_sample_note(result)) else []),
        "ranking": _ranking_section(result),
        "reliability_images": images.get("reliability", []),
        "curve_images": images.get("curves", []),
        "bonus_images": images.get("bonuses", []),
        "bonuses": _bonus_section(result),
        "reliance": reliance_section(result.get("reliance")),
        "scope": _data_scope(result),
    }
    optional = ("leaderboards", "teams", "expected_wins", "policy", "players", "survey")
    context.update(dict.fromkeys(optional))
    if result["models"]:
        context.update(_model_sections(result))
    context.update(_buzz_sections(result))
    return context


def _data_scope(result: dict[str, Any]) -> dict[str, list[str]]:
    """What the buzzes in hand can show of GRACE's human-vs-model findings, with the numbers,
    and plainly what they cannot (Markdown lines; names in them escaped)."""
    teams = result["teams"]
    source = result.get("source", {})
    fig4 = result["curves"].get("figure4") or {}
    sides: dict[str, dict[str, float]] = {}
    for t in teams.values():
        side = sides.setdefault(t["kind"], {"buzzes": 0, "correct": 0, "teams": 0, "x": 0.0})
        side["buzzes"] += t["buzzes"]
        side["correct"] += t["correct"]
        side["teams"] += 1
        if t["mean_fraction_correct"] is not None:
            side["x"] += t["mean_fraction_correct"] * t["correct"]
    can = []
    for kind in ("human", "model"):
        side = sides.get(kind)
        if not side or not side["buzzes"]:
            continue
        x = side["x"] / side["correct"] if side["correct"] else None
        can.append(
            f"{kind.capitalize()} teams ({int(side['teams'])}): {int(side['buzzes'])} buzzes, "
            f"{side['correct'] / side['buzzes']:.0%} correct; correct buzzes at "
            f"{_fmt(x, 2)} of the question on average."
        )
    groups = fig4.get("groups", {})
    if groups:
        per = "match" if fig4.get("normalised_by") == "matches played" else "tossup heard"
        final = "; ".join(
            f"{md_escape(n)} {g['correct'][-1]:.2f} / {g['incorrect'][-1]:.2f}"
            for n, g in groups.items()
        )
        can.append(
            f"Figure 4, at the end of the question (correct / incorrect buzzes per {per}): {final}."
        )
        mid = "; ".join(
            f"{md_escape(n)} {g['correct'][len(g['correct']) // 2]:.2f}" for n, g in groups.items()
        )
        can.append(f"By half the question: {mid} correct buzzes per {per}.")
    ew = result["expected_wins"]
    if ew.get("teams"):
        can.append(
            "Expected wins of the model teams against the human curve fitted from these "
            "buzzes: "
            + "; ".join(
                f"{md_escape(n)} {_fmt(v['expected_wins'])}" for n, v in ew["teams"].items()
            )
            + "."
        )
    cannot = []
    sizes = measured(result)[0]
    if sizes:
        can.append(
            "Sample size of the calibration numbers: "
            + "; ".join(
                f"{md_escape(model)} ({kind}): {m['n']} steps on {m.get('n_questions', 0)} "
                "questions"
                for model, kind, m in sizes
            )
            + "."
        )
    small = small_samples(result)
    if small:
        cannot.append(
            f"Precise calibration for {md_escape(', '.join(small))}: below "
            f"{SMALL_STEPS} steps or {SMALL_QUESTIONS} questions a reliability bin holds a "
            "few steps, one question more or less moves ECE and CalScore by tenths, and the "
            "bootstrap intervals, resampling a few questions, are too narrow."
        )
    if not result["models"]:
        cannot.append(
            "Calibration (CalScore, MCE, ECE, Brier, reliability) and figures 5–6: there are "
            "no model steps, only where models buzzed. GRACE's public buzzpoints do not carry "
            "the models' confidences; precompute a model over these packets to add them "
            "(`grace-arena precompute --packet FILE` takes a GRACE file as it is)."
        )
    if source.get("pooled_buzzes"):
        cannot.append(
            f"Per-match rates: {source['pooled_buzzes']:,} buzzpoints are pooled over rooms "
            "whose matches are unknown, so rates are per tossup heard, not per match played, "
            "and a team is taken to have heard every tossup of each packet it buzzed in "
            "(the data lists who buzzed, not who heard)."
        )
        cannot.append(
            "Who beat whom: the data does not say which teams met in which match, nor which "
            "buzzes lost a race to an earlier one, so head-to-head results and the paper's "
            "win rates cannot be rebuilt."
        )
    if not result["teams"]:
        can = [c for c in can if c.startswith("Sample size")]
        cannot = [c for c in cannot if not c.startswith("Calibration")]
    return {"can": can, "cannot": cannot}


def _survey_section(result: dict[str, Any]) -> dict[str, Any]:
    """The per-clue survey's humans beside the models (GRACE §3.2.1, figure 6, appendix F.3)."""
    s = result["survey"]
    counts = s["counts"]
    groups = [
        [
            group,
            "human",
            _fmt(g["p_buzz_given_correct"]),
            _fmt(g["p_buzz_given_incorrect"]),
            f"{g['n_participants']} participant(s)",
        ]
        for group, g in s["groups"].items()
    ] + [
        [
            model,
            f"model ({step_policy(result, model)})",
            _fmt(v["p_buzz_given_correct"]),
            _fmt(v["p_buzz_given_incorrect"]),
            f"{v['n_correct'] + v['n_incorrect']} step(s)",
        ]
        for model, v in result["curves"]["buzz_given_correct"].items()
    ]
    people = [
        [p["rank"] or "–", p["name"], _fmt(p["mean_score"], 2), p["n_questions"],
         p["quartile"] or "–", p["half"] or "–", _fmt(p["accuracy"]),
         _fmt(p["p_buzz_given_correct"]), _fmt(p["p_buzz_given_incorrect"]), p["n_steps"]]
        for p in s["participants"]
    ]  # fmt: skip
    return {
        "counts": f"{counts['steps']:,}",
        "participants": counts["participants"],
        "questions": counts["questions"],
        "groups": _table(["who", "kind", "P(buzz | correct)", "P(buzz | incorrect)", "n"], groups),
        "people": _table(
            [
                "#",
                "participant",
                "mean score",
                "questions",
                "quartile",
                "half",
                "accuracy",
                "P(b | correct)",
                "P(b | incorrect)",
                "answers",
            ],
            people,
        ),
    }


#: Figures shown at full width in the HTML report (two panels side by side).
_WIDE_IMAGES = ("buzz_rates.png", "survey_buzz_given_correct.png")


def _templates() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("grace_arena.analysis", "templates"),
        autoescape=jinja2.select_autoescape(["html.j2"]),
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["md"] = md_escape
    return env


def markdown_report(result: dict[str, Any], images: dict[str, list[str]] | None = None) -> str:
    """The report as Markdown (images referenced by file name), from report.md.j2."""
    context = report_context(result, images or {"reliability": [], "curves": []})
    text = _templates().get_template("report.md.j2").render(**context)
    return re.sub(r"\n{3,}", "\n\n", text)


def html_report(markdown: str) -> str:
    """The Markdown report as HTML: markdown-it (CommonMark and tables; raw HTML in the text
    is escaped, not passed through) inside report.html.j2."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    default_image = md.renderer.rules["image"]

    def image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        if tokens[idx].attrGet("src") in _WIDE_IMAGES:
            tokens[idx].attrSet("class", "wide")
        return default_image(tokens, idx, options, env)

    md.add_render_rule("image", image)
    return _templates().get_template("report.html.j2").render(body=md.render(markdown))


def write_report(result: dict[str, Any], out: str | Path, *, plots: bool = True) -> list[Path]:
    """Write the report files into folder ``out`` (created); returns the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    images = _plots(result, out) if plots else {"reliability": [], "curves": []}
    markdown = markdown_report(result, images)
    files = {
        "report.md": markdown,
        "report.html": html_report(markdown),
        "summary.json": json.dumps(kalshibench_summary(result), indent=2) + "\n",
        "analysis.json": json.dumps(result, indent=2) + "\n",
    }
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return [out / n for n in files] + [out / n for v in images.values() for n in v]
