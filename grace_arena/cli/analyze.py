"""``grace-arena analyze``: calibration metrics and human-vs-model curves, from the record or
from files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from grace_arena.cli import app
from grace_arena.cli.options import DbOption, redacted, resolve_db


def _print_tables(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    counts = result["counts"]
    console.print(
        f"{counts['steps']:,} steps, {counts['models']} model(s), {counts['buzzes']:,} ruled "
        f"buzzes, {counts['teams']} team(s), {counts['questions']:,} question(s)"
    )

    def fmt(value: Any) -> str:
        return "–" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)

    def with_ci(m: dict[str, Any], key: str) -> str:
        low, high = m.get("ci", {}).get(key, [None, None])
        return fmt(m.get(key)) + ("" if low is None else f" [{low:.3f}, {high:.3f}]")

    if result["models"]:
        table = Table(
            title="Models", caption="all steps; [95% bootstrap interval, resampling questions]"
        )
        for col in ("model", "confidence", "CalScore", "MCE (GRACE)", "ECE", "Brier", "accuracy",
                    "final CalScore", "steps", "missing"):  # fmt: skip
            left = col in ("model", "confidence")
            table.add_column(col, justify="left" if left else "right", no_wrap=left)
        for model, kinds in result["models"].items():
            for kind, m in kinds.items():
                table.add_row(
                    model,
                    kind,
                    with_ci(m, "calscore"),
                    fmt(m["mce_grace"]),
                    with_ci(m, "ece"),
                    with_ci(m, "brier"),
                    fmt(m.get("accuracy")),
                    fmt(m["final"]["calscore"]),
                    str(m["n"]),
                    str(m["n_missing"]),
                )
        console.print(table)
    if result["teams"]:
        table = Table(
            title="Teams",
            caption="heard: tossups heard; x: fraction of the question revealed at a correct buzz",
        )
        for col in ("team", "kind", "matches", "heard", "buzzes", "correct", "wrong", "mean x"):
            table.add_column(col, justify="left" if col in ("team", "kind") else "right")
        for team, t in result["teams"].items():
            table.add_row(
                team,
                t["kind"],
                str(t.get("matches_played") or "–"),
                str(t["questions_heard"]),
                str(t["buzzes"]),
                str(t["correct"]),
                str(t["incorrect"]),
                fmt(t["mean_fraction_correct"]),
            )
        console.print(table)
        _print_figure4(console, result, fmt)
    for note in result.get("notes", []):
        console.print(f"note: {note}", highlight=False)
    if result.get("survey"):
        _print_survey(console, result, fmt)


def _print_figure4(console: Any, result: dict[str, Any], fmt: Any) -> None:
    """GRACE figure 4 in numbers: each human quartile and each model, correct and incorrect
    cumulative buzz rates at a quarter, half, three quarters and all of the question."""
    from rich.table import Table

    fig = result["curves"].get("figure4") or {}
    if not fig.get("groups"):
        return
    grid = fig["grid"]
    at = [min(range(len(grid)), key=lambda i, x=x: abs(grid[i] - x)) for x in (0.25, 0.5, 0.75, 1)]
    per = "match" if fig["normalised_by"] == "matches played" else "tossup heard"
    table = Table(
        title="Buzz rates against fraction revealed (GRACE fig. 4)",
        caption=f"correct / incorrect buzzes per {per}, by x = fraction of the question revealed;"
        " Q1: human teams with the most correct buzzes",
    )
    for col in ("group", "teams", "x≤.25", "x≤.5", "x≤.75", "all"):
        left = col in ("group", "teams")
        table.add_column(col, justify="left" if left else "right", no_wrap=not left)
    for name, g in fig["groups"].items():
        if g["kind"] == "model":
            teams = "model"
        elif len(g["teams"]) <= 4:
            teams = ", ".join(g["teams"])
        else:
            teams = f"{len(g['teams'])} teams"
        table.add_row(
            name,
            teams,
            *(f"{g['correct'][i]:.2f} / {g['incorrect'][i]:.2f}" for i in at),
        )
    console.print(table)


def _print_survey(console: Any, result: dict[str, Any], fmt: Any) -> None:
    """The survey's humans next to the models' buzz policies (GRACE figure 6)."""
    from rich.table import Table

    s = result["survey"]
    table = Table(
        title="Survey: P(buzz | correct) and P(buzz | incorrect), humans and models",
        caption="up to each first buzz; humans: mean over participants (GRACE fig. 6)",
    )
    for col in ("who", "kind", "P(buzz | correct)", "P(buzz | incorrect)", "n"):
        table.add_column(col, justify="left" if col in ("who", "kind") else "right")
    for group, g in s["groups"].items():
        table.add_row(
            group,
            "human",
            fmt(g["p_buzz_given_correct"]),
            fmt(g["p_buzz_given_incorrect"]),
            f"{g['n_participants']} participant(s)",
        )
    for model, r in result["curves"]["buzz_given_correct"].items():
        table.add_row(
            model,
            "model",
            fmt(r["p_buzz_given_correct"]),
            fmt(r["p_buzz_given_incorrect"]),
            f"{r['n_correct'] + r['n_incorrect']} step(s)",
        )
    console.print(table)
    table = Table(title="Survey participants (GRACE score 20 − 20c, −5 for a wrong buzz)")
    for col in ("#", "name", "mean score", "questions", "quartile", "accuracy", "steps"):
        table.add_column(col, justify="left" if col == "name" else "right")
    for p in s["participants"]:
        table.add_row(
            str(p["rank"] or "–"),
            p["name"],
            fmt(p["mean_score"]),
            str(p["n_questions"]),
            str(p["quartile"] or "–"),
            fmt(p["accuracy"]),
            str(p["n_steps"]),
        )
    console.print(table)


@app.command("analyze")
def analyze(
    db: DbOption = None,
    match: Annotated[
        list[int] | None,
        typer.Option("--match", help="Only these matches of the record (repeatable)."),
    ] = None,
    event: Annotated[
        list[str] | None,
        typer.Option(
            "--event",
            help="Only these events, by name or id (repeatable; default: every event of the "
            "record). Each tossup pools the buzzes of every match of the events that heard it, "
            "and their imported buzzpoints.",
        ),
    ] = None,
    h_definition: Annotated[
        str,
        typer.Option(
            "--h",
            help="h_t behind CalScore: 'reference' (GRACE's code: teams whose latest buzz up to "
            "t was correct, over all human buzzes on the question) or 'paper' (correct human "
            "buzzes up to t over human buzzes up to t).",
        ),
    ] = "reference",
    steps: Annotated[
        Path | None,
        typer.Option(
            "--steps",
            help="Model steps CSV or Parquet: model,question_id,step,word_index,correct,"
            "confidence_logit,confidence_verbal[,category,n_words,would_buzz]. Reads files "
            "instead of the record.",
        ),
    ] = None,
    buzzes: Annotated[
        Path | None,
        typer.Option(
            "--buzzes",
            help="Buzzes CSV or Parquet: question_id,team,team_kind,word_index,correct (an "
            "'export --format csv' file works too).",
        ),
    ] = None,
    survey: Annotated[
        Path | None,
        typer.Option(
            "--survey",
            help="Survey answers CSV: participant,question_id,step,word_index,guess,would_buzz,"
            "correct[,name,n_words,n_clues] (human trajectories; from the record: automatic).",
        ),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write every number as JSON here.")
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Write report.md, report.html, plots and summary.json here."),
    ] = None,
    resamples: Annotated[
        int, typer.Option(min=0, help="Bootstrap resamples for the intervals (0: none).")
    ] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
) -> None:
    """Calibration metrics, human-vs-model curves, expected wins and player ranks.

    CalScore, GRACE's MCE, ECE, ACE, Brier and the rest, per model and confidence kind, with
    bootstrap intervals over questions. Reads the record (--db, optionally --event or --match;
    each tossup pools every match and imported buzzpoint of the events) or plain
    files (--steps, --buzzes and/or --survey). Survey answers (grace-arena survey) add the
    human side of GRACE figures 5 and 6 and the survey ranking (appendix F.3).
    """
    from grace_arena.analysis.metrics import H_DEFINITIONS
    from grace_arena.analysis.summary import analyze as run_analysis
    from grace_arena.analysis.survey import SurveyStep, analyze_survey, read_survey_csv
    from grace_arena.analysis.tables import (
        BuzzTable,
        FileFormatError,
        StepTable,
        read_buzzes_csv,
        read_steps_csv,
    )

    if h_definition not in H_DEFINITIONS:
        typer.echo(f"error: --h must be one of {', '.join(H_DEFINITIONS)}", err=True)
        raise typer.Exit(2)
    if match and event:
        typer.echo("error: give --match or --event, not both", err=True)
        raise typer.Exit(2)
    survey_rows: list[SurveyStep] = []
    if steps is not None or buzzes is not None or survey is not None:
        if db is not None or match or event:
            typer.echo(
                "give either --db/--match/--event or --steps/--buzzes/--survey, not both",
                err=True,
            )
            raise typer.Exit(2)
        try:
            step_table = read_steps_csv(steps) if steps else StepTable.empty()
            buzz_table = read_buzzes_csv(buzzes) if buzzes else BuzzTable.empty()
            survey_rows = read_survey_csv(survey) if survey else []
        except (OSError, FileFormatError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from None
        source = {
            "kind": "files",
            "steps": str(steps) if steps else None,
            "buzzes": str(buzzes) if buzzes else None,
            "description": ", ".join(str(p) for p in (steps, buzzes, survey) if p),
        }
    else:
        from grace_arena.io.record_io import load_record_data, survey_steps
        from grace_arena.record.db import open_engine
        from grace_arena.record.store import RecordError

        url = resolve_db(db)
        typer.echo(f"record: {redacted(url)}", err=True)
        try:
            engine = open_engine(url)
            data = load_record_data(engine, match, events=event)
            step_table, buzz_table = data.steps, data.buzzes
            survey_rows = survey_steps(engine)
        except RecordError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from None
        ids = [m.id for m in data.matches]
        described = [f"record {redacted(url)}"]
        if data.events:
            described.append(f"event(s) {', '.join(data.events)}")
        described.append(f"matches {', '.join(map(str, ids)) or 'none'}")
        if data.n_pooled:
            described.append(f"{data.n_pooled:,} imported pooled buzzpoints (matches unknown)")
        source = {
            "kind": "record",
            "db": redacted(url),
            "events": data.events,
            "matches": ids,
            "pooled_buzzes": data.n_pooled,
            "warnings": data.warnings,
            "match_buzzes": data.n_match_buzzes,
            "description": ", ".join(described),
        }
    try:
        result = run_analysis(
            step_table,
            buzz_table,
            n_resamples=resamples,
            seed=seed,
            source=source,
            h_definition=h_definition,
        )
        if survey_rows:
            result["survey"] = analyze_survey(survey_rows, model_steps=step_table)
        if source.get("warnings"):
            result["notes"] = [*source["warnings"], *result.get("notes", [])]
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    _print_tables(result)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        typer.echo(f"wrote {json_out}", err=True)
    if report is not None:
        from grace_arena.analysis.report import write_report

        files = write_report(result, report)
        typer.echo(f"wrote {len(files)} files in {report}", err=True)
