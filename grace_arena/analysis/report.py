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

import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["kalshibench_summary", "markdown_report", "write_report"]

_KIND_LABEL = {"logit": "logit confidence", "verbal": "verbalized confidence"}
_HEADLINE = (
    ("calscore", "CalScore"),
    ("calscore_ref", "CalScore (ref. code)"),
    ("mce_grace", "MCE (GRACE)"),
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


def _plots(result: dict[str, Any], out: Path) -> dict[str, list[str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made: dict[str, list[str]] = {"reliability": [], "curves": []}
    for model, kinds in result["models"].items():
        for kind, metrics in kinds.items():
            bins = [b for b in metrics.get("reliability", []) if b["count"]]
            if not bins:
                continue
            fig, ax = plt.subplots(figsize=(4.5, 4.5))
            ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfect calibration")
            width = bins[0]["upper"] - bins[0]["lower"]
            ax.bar(
                [b["lower"] for b in bins],
                [b["accuracy"] for b in bins],
                width=width,
                align="edge",
                alpha=0.6,
                edgecolor="black",
                label="accuracy per bin",
            )
            ax.plot(
                [b["mean_confidence"] for b in bins],
                [b["accuracy"] for b in bins],
                "o-",
                color="C3",
                label="accuracy at the bin's mean confidence",
            )
            ax.set(
                xlim=(0, 1),
                ylim=(0, 1),
                xlabel="confidence",
                ylabel="accuracy",
                title=f"{model}\n{_KIND_LABEL[kind]} (ECE {_fmt(metrics.get('ece'))})",
            )
            ax.legend(loc="upper left", fontsize=8)
            name = f"reliability_{_slug(model)}_{kind}.png"
            fig.tight_layout()
            fig.savefig(out / name, dpi=100)
            plt.close(fig)
            made["reliability"].append(name)

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
                label = f"{name} (model)"
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
        ax.set_xticks(list(xs), names, rotation=20, ha="right", fontsize=8)
        ax.set(ylim=(0, 1), title="Buzz policy against correctness (GRACE fig. 6)")
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
                    ax.plot(*zip(*pts, strict=True), style, color=f"C{i % 10}", label=who)
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


# ---------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------


def markdown_report(result: dict[str, Any], images: dict[str, list[str]] | None = None) -> str:
    """The report as Markdown (images referenced by file name)."""
    images = images or {"reliability": [], "curves": []}
    counts = result.get("counts", {})
    boot = result["settings"]["bootstrap"]
    parts = [
        "# GRACE Arena calibration report",
        "",
        f"Generated {result.get('generated_at')}. Source: "
        f"{result.get('source', {}).get('description', 'n/a')}.",
        "",
        f"{counts.get('steps', 0):,} model steps from {counts.get('models', 0)} model(s), "
        f"{counts.get('buzzes', 0):,} ruled buzzes by {counts.get('teams', 0)} team(s), "
        f"{counts.get('questions', 0):,} question(s). Intervals: {int(boot['level'] * 100)}% "
        f"percentile bootstrap over questions, {boot['n_resamples']} resamples. Ten equal-width "
        "bins [i/10, (i+1)/10), the last closed at 1. CalScore and MCE (GRACE): lower is "
        "better; the reference-code variants use g ∈ {0, 1} and no normalisation. "
        + (
            f"CalScore uses {result['settings']['h_definition_label']}."
            if result["settings"].get("h_definition_label")
            else ""
        ),
        "",
    ]
    if result["models"]:
        parts += ["## Leaderboard", ""]
        for kind, by in result["leaderboard"].items():
            rows = []
            cal = {e["model"]: e["rank"] for e in by["by_calscore"]}
            ece = {e["model"]: e["rank"] for e in by["by_ece"]}
            bri = {e["model"]: e["rank"] for e in by["by_brier"]}
            for e in by["by_calscore"] or by["by_brier"]:
                m = result["models"][e["model"]][kind]
                rows.append(
                    [
                        str(cal.get(e["model"], "–")),
                        e["model"],
                        _ci(m, "calscore"),
                        f"{_ci(m, 'ece')} (#{ece.get(e['model'], '–')})",
                        f"{_ci(m, 'brier')} (#{bri.get(e['model'], '–')})",
                        _fmt(m.get("accuracy")),
                        f"{m['n']} / {m['n_missing']}",
                    ]
                )
            parts += [
                f"### {_KIND_LABEL[kind].capitalize()}",
                "",
                _table(
                    [
                        "#",
                        "model",
                        "CalScore",
                        "ECE (rank)",
                        "Brier (rank)",
                        "accuracy",
                        "steps / missing",
                    ],
                    rows,
                ),
                "",
            ]
        parts += ["## Metrics over all steps and over each question's final step", ""]
        for kind in ("logit", "verbal"):
            rows = []
            for model, kinds in result["models"].items():
                m = kinds[kind]
                rows.append([model, "all", *(_fmt(m.get(k)) for k, _ in _HEADLINE)])
                rows.append([model, "final", *(_fmt(m["final"].get(k)) for k, _ in _HEADLINE)])
            parts += [
                f"### {_KIND_LABEL[kind].capitalize()}",
                "",
                _table(["model", "steps", *(label for _, label in _HEADLINE)], rows),
                "",
            ]
        parts += ["## Per category (logit confidence, all steps)", ""]
        rows = []
        for model, kinds in result["models"].items():
            for cat, m in kinds["logit"]["by_category"].items():
                rows.append(
                    [
                        model,
                        cat,
                        str(m["n_questions"]),
                        _fmt(m.get("calscore")),
                        _fmt(m.get("ece")),
                        _fmt(m.get("brier")),
                        str(m["n"]),
                    ]
                )
        parts += [
            _table(["model", "category", "questions", "CalScore", "ECE", "Brier", "steps"], rows),
            "",
        ]
        if images["reliability"]:
            parts += ["## Reliability diagrams", ""]
            parts += [f"![{name}]({name})" for name in images["reliability"]]
            parts.append("")
    if result.get("notes"):
        parts += [f"**Note:** {note}." for note in result["notes"]] + [""]
    if result["teams"]:
        parts += _data_scope_markdown(result)
        parts += ["## Teams", ""]
        rows = [
            [
                team,
                t["kind"],
                str(t["questions_heard"]),
                str(t["buzzes"]),
                str(t["correct"]),
                str(t["incorrect"]),
                _fmt(t["mean_fraction_correct"]),
            ]
            for team, t in result["teams"].items()
        ]
        parts += [
            _table(
                [
                    "team",
                    "kind",
                    "questions heard",
                    "buzzes",
                    "correct",
                    "incorrect",
                    "mean fraction at a correct buzz",
                ],
                rows,
            ),
            "",
        ]
    ew = result["expected_wins"]
    if ew.get("human_curve"):
        parts += [
            "## Expected wins",
            "",
            f"Human curve w(x) fitted from {ew['n_human_records']} human team-question records "
            f"(cubic, coefficients highest power first: "
            f"{', '.join(f'{c:.4f}' for c in ew['human_curve'])}).",
            "",
        ]
        rows = [
            ["team (buzzes)", name, _fmt(v["expected_wins"]), str(v["n_questions"])]
            for name, v in ew["teams"].items()
        ] + [
            ["model (policy)", name, _fmt(v["expected_wins"]), str(v["n_questions"])]
            for name, v in ew["models"].items()
        ]
        if rows:
            parts += [_table(["from", "name", "expected wins", "questions"], rows), ""]
    bgc = result["curves"]["buzz_given_correct"]
    if bgc:
        parts += ["## Buzz policy against correctness", ""]
        parts += [
            _table(
                ["model", "P(buzz | correct)", "P(buzz | incorrect)", "steps correct / wrong"],
                [
                    [
                        model,
                        _fmt(v["p_buzz_given_correct"]),
                        _fmt(v["p_buzz_given_incorrect"]),
                        f"{v['n_correct']} / {v['n_incorrect']}",
                    ]
                    for model, v in bgc.items()
                ],
            ),
            "",
        ]
    if result["players"]:
        parts += ["## Players (GRACE score 20 − 20c, −5 for a wrong buzz)", ""]
        parts += [
            _table(
                ["#", "player", "team", "kind", "mean score", "questions", "quartile (4: top)"],
                [
                    [
                        str(p["rank"]),
                        p["player"],
                        str(p["team"]),
                        p["kind"],
                        _fmt(p["mean_score"], 2),
                        str(p["n_questions"]),
                        str(p["quartile"]),
                    ]
                    for p in result["players"][:50]
                ],
            ),
            "",
        ]
    if result.get("survey"):
        parts += _survey_markdown(result)
    if images["curves"]:
        parts += ["## Curves", ""]
        parts += [f"![{name}]({name})" for name in images["curves"]]
        parts.append("")
    return "\n".join(parts)


def _data_scope_markdown(result: dict[str, Any]) -> list[str]:
    """What the buzzes in hand can show of GRACE's human-vs-model findings, with the numbers,
    and plainly what they cannot."""
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
        final = {name: (g["correct"][-1], g["incorrect"][-1]) for name, g in groups.items()}
        per = "match" if fig4.get("normalised_by") == "matches played" else "tossup heard"
        can.append(
            f"Figure 4, at the end of the question (correct / incorrect buzzes per {per}): "
            + "; ".join(f"{n} {c:.2f} / {w:.2f}" for n, (c, w) in final.items())
            + "."
        )
        mid = {
            name: g["correct"][len(g["correct"]) // 2] for name, g in groups.items()
        }  # at half the question
        can.append(
            "By half the question: "
            + "; ".join(f"{n} {v:.2f}" for n, v in mid.items())
            + " correct buzzes per "
            + per
            + "."
        )
    ew = result["expected_wins"]
    if ew.get("teams"):
        can.append(
            "Expected wins of the model teams against the human curve fitted from these "
            "buzzes: "
            + "; ".join(f"{n} {_fmt(v['expected_wins'])}" for n, v in ew["teams"].items())
            + "."
        )
    cannot = []
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
    if not can and not cannot:
        return []
    out = ["## What this data can and cannot show", ""]
    out += [f"- {line}" for line in can]
    if cannot:
        out += ["", "It cannot show:", ""] + [f"- {line}" for line in cannot]
    return [*out, ""]


def _survey_markdown(result: dict[str, Any]) -> list[str]:
    """The per-clue survey's humans beside the models (GRACE §3.2.1, figure 6, appendix F.3)."""
    s = result["survey"]
    counts = s["counts"]
    rows = [
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
            "model",
            _fmt(v["p_buzz_given_correct"]),
            _fmt(v["p_buzz_given_incorrect"]),
            f"{v['n_correct'] + v['n_incorrect']} step(s)",
        ]
        for model, v in result["curves"]["buzz_given_correct"].items()
    ]
    people = [
        [
            str(p["rank"] or "–"),
            p["name"],
            _fmt(p["mean_score"], 2),
            str(p["n_questions"]),
            str(p["quartile"] or "–"),
            str(p["half"] or "–"),
            _fmt(p["accuracy"]),
            _fmt(p["p_buzz_given_correct"]),
            _fmt(p["p_buzz_given_incorrect"]),
            str(p["n_steps"]),
        ]
        for p in s["participants"]
    ]
    return [
        "## Survey: human trajectories",
        "",
        f"{counts['steps']:,} answers by {counts['participants']} participant(s) on "
        f"{counts['questions']} question(s), one after every clue (GRACE §3.2.1). P(buzz | ·) "
        "counts each question's steps up to the first buzz; a group's value is the mean over "
        "its participants (GRACE figure 6). Participants are ranked by the mean of 20 − 20c "
        "per question (c: share of clues seen at the first buzz; −5 if that guess is wrong, 0 "
        "for a finished question without a buzz).",
        "",
        _table(["who", "kind", "P(buzz | correct)", "P(buzz | incorrect)", "n"], rows),
        "",
        _table(
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
        "",
    ]


#: Figures shown at full width in the HTML report (two panels side by side).
_WIDE_IMAGES = ("buzz_rates.png", "survey_buzz_given_correct.png")


def _inline(text: str) -> str:
    """Escaped text with ``**bold**`` and ```code``` spans."""
    out = html.escape(text)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", out)


def _markdown_to_html(markdown: str) -> str:
    """Just enough Markdown for this report: headings, paragraphs, tables, images."""
    out = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>GRACE Arena calibration report'
        "</title><style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;"
        "padding:0 1em}table{border-collapse:collapse;margin:1em 0;font-size:0.9em}"
        "td,th{border:1px solid #ccc;padding:0.25em 0.5em;text-align:right}"
        "td:first-child,th:first-child{text-align:left}img{max-width:48%;margin:0.5%}"
        "img.wide{max-width:100%}"
        "</style></head><body>",
    ]
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            i -= 1
            out.append("<table>")
            for n, row in enumerate(r for r in rows if not r.startswith("|---")):
                cells = [
                    c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row.strip()[1:-1])
                ]
                tag = "th" if n == 0 else "td"
                out.append(
                    "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"
                )
            out.append("</table>")
        elif m := re.match(r"!\[([^\]]*)\]\(([^)]+)\)", line):
            wide = ' class="wide"' if m[2] in _WIDE_IMAGES else ""
            out.append(f'<img alt="{html.escape(m[1])}" src="{html.escape(m[2])}"{wide}>')
        elif line.startswith("- "):
            out.append("<ul>")
            while i < len(lines) and lines[i].startswith("- "):
                out.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            i -= 1
            out.append("</ul>")
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    out.append("</body></html>")
    return "\n".join(out)


def write_report(result: dict[str, Any], out: str | Path, *, plots: bool = True) -> list[Path]:
    """Write the report files into folder ``out`` (created); returns the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    images = _plots(result, out) if plots else {"reliability": [], "curves": []}
    markdown = markdown_report(result, images)
    files = {
        "report.md": markdown,
        "report.html": _markdown_to_html(markdown),
        "summary.json": json.dumps(kalshibench_summary(result), indent=2) + "\n",
        "analysis.json": json.dumps(result, indent=2) + "\n",
    }
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return [out / n for n in files] + [out / n for v in images.values() for n in v]
