"""``grace-arena analyze``: calibration metrics and human-vs-model curves, from the record or
from files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from grace_arena.cli.options import DbOption, existing_db, redacted
from grace_arena.cli.root import app


def _print_tables(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    counts = result["counts"]
    console.print(
        f"{counts['steps']:,} steps, {counts['models']} model(s), {counts['buzzes']:,} ruled "
        f"buzzes by {counts.get('teams_buzzing', counts['teams'])} of {counts['teams']} team(s), "
        f"{counts['questions']:,} question(s)"
    )

    def fmt(value: Any) -> str:
        return "–" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)

    def with_ci(m: dict[str, Any], key: str) -> str:
        low, high = m.get("ci", {}).get(key, [None, None])
        return fmt(m.get(key)) + ("" if low is None else f" [{low:.3f}, {high:.3f}]")

    if result["models"]:
        _print_models(console, result, fmt)
    if result["teams"]:
        from grace_arena.analysis.report import team_policy

        table = Table(
            title="Teams",
            caption="kind: human, or a model team's model ≥ its buzz threshold; heard: tossups "
            "heard; x: fraction of the question revealed at a correct buzz",
        )
        for col in ("team", "kind", "matches", "heard", "buzzes", "correct", "wrong", "mean x"):
            table.add_column(col, justify="left" if col in ("team", "kind") else "right")
        for team, t in result["teams"].items():
            table.add_row(
                team,
                team_policy(t) or t["kind"],
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
    if result.get("bonuses"):
        _print_bonuses(console, result["bonuses"], fmt)
    if result.get("reliance"):
        _print_reliance(console, result["reliance"])


def _print_reliance(console: Any, reliance: dict[str, Any]) -> None:
    """The reliance rates (the report has the tables behind them)."""
    from rich.table import Table

    from grace_arena.analysis.reliance import report_section

    section = report_section(reliance)
    assert section is not None
    table = Table(title="Reliance on the model (bonus parts)", caption=section["auroc"])
    for col in section["rates"]["header"]:
        table.add_column(col, justify="right" if col.startswith("k/n") else "left")
    for row in section["rates"]["rows"]:
        table.add_row(*row)
    console.print(table)
    for line in [*section["lines"][1:], *section["caveats"]]:
        console.print(f"note: {line}", highlight=False)


def _print_bonuses(console: Any, bonuses: dict[str, Any], fmt: Any) -> None:
    """The models on bonus parts, and the teams' consults (the report has the rest)."""
    from rich.table import Table

    if bonuses["models"]:
        table = Table(
            title="Models on bonus parts",
            caption="ece_10_bin and Brier with 95% bootstrap intervals over bonuses",
        )
        for col in ("model", "confidence", "parts", "accuracy", "ece_10_bin", "Brier"):
            table.add_column(col, justify="left" if col in ("model", "confidence") else "right")
        for model, kinds in bonuses["models"].items():
            for kind, m in kinds.items():

                def ci(key: str, m: dict[str, Any] = m) -> str:
                    low, high = m.get(f"{key}_ci") or (None, None)
                    return fmt(m[key]) + ("" if low is None else f" [{low:.3f}, {high:.3f}]")

                table.add_row(
                    model, kind, str(m["n"]), fmt(m["accuracy"]), ci("ece_10_bin"), ci("brier")
                )
        console.print(table)
    consult = (bonuses.get("consult") or {}).get("teams")
    if consult:
        table = Table(
            title="Consults on bonus parts",
            caption="k/n; an abstention is right when the model's answer was wrong",
        )
        for col in ("team", "parts", "points", "consulted", "right alone", "right after",
                    "abstained", "abstentions right"):  # fmt: skip
            table.add_column(col, justify="left" if col == "team" else "right")

        def kn(r: dict[str, Any]) -> str:
            return f"{r['k']}/{r['n']}" if r["n"] else "–"

        for team, c in [*consult.items(), ("all teams", bonuses["consult"]["all"])]:
            table.add_row(
                team, str(c["parts"]), str(c["points"]), kn(c["consult_rate"]),
                kn(c["own_accuracy"]), kn(c["consult_accuracy"]), kn(c["abstain_rate"]),
                kn(c["abstained_right"]),
            )  # fmt: skip
        console.print(table)
    for note in bonuses.get("notes", []):
        console.print(f"note: {note}", highlight=False)


def _print_models(console: Any, result: dict[str, Any], fmt: Any) -> None:
    """The models in four narrow tables (each fits 80 columns with names up to some 25
    characters; a longer name folds): headline metrics, GRACE's
    CalScore and MCE (the paper's normalised forms and the reference code's), their bootstrap
    intervals, and selective prediction with recalibration. Only the confidence kinds a
    model gave are shown; a note says which were not measured."""
    from rich.table import Table

    from grace_arena.analysis.report import measured, small_sample_note

    rows, not_measured = measured(result)

    def show(title: str, columns: list[str], cells: list[list[str]], caption: str) -> None:
        """A table whose model names are whole: the name column is as wide as the longest
        name, unless the numbers' columns would not fit beside it in the terminal (then, and
        only then, a name folds onto a second line)."""
        others = sum(
            max(len(line) for text in (col, *(r[i] for r in cells)) for line in text.split("\n"))
            + 3
            for i, col in enumerate(columns)
            if i
        )
        longest = max((len(r[0]) for r in cells), default=5)
        room = console.width - others - 4
        t = Table(title=title, caption=caption)
        for i, col in enumerate(columns):
            if not i:
                t.add_column(col, overflow="fold", min_width=max(6, min(longest, room)))
            else:
                t.add_column(col, justify="left" if i == 1 else "right", no_wrap=True)
        for r in cells:
            t.add_row(*r)
        console.print(t)

    def interval(m: dict[str, Any], key: str) -> str:
        low, high = m.get("ci", {}).get(key, [None, None])
        return "–" if low is None else f"{low:.3f}–{high:.3f}"

    show(
        "Models",
        ["model", "conf.", "ECE", "Brier", "AUROC", "acc.", "steps", "questions"],
        [[model, kind, fmt(m["ece"]), fmt(m["brier"]), fmt(m.get("auroc")),
          fmt(m.get("accuracy")), str(m["n"]), str(m.get("n_questions", "–"))]
         for model, kind, m in rows],
        "all steps; conf.: confidence kind",
    )  # fmt: skip
    show(
        "GRACE's CalScore and MCE",
        ["model", "conf.", "CalScore\nnormalised", "CalScore\nref. code", "MCE\nnormalised",
         "MCE\nref. code"],
        [[model, kind, fmt(m["calscore"]), fmt(m.get("calscore_ref")), fmt(m["mce_grace"]),
          fmt(m.get("mce_grace_ref"))] for model, kind, m in rows],
        "normalised: the paper's forms; ref. code: the values of GRACE's reference code "
        "(g in {0, 1}, not normalised). Lower is better.",
    )  # fmt: skip
    level = int(result["settings"]["bootstrap"]["level"] * 100)
    show(
        f"{level}% bootstrap intervals (resampling questions)",
        ["model", "conf.", "CalScore\nnormalised", "ECE", "Brier", "final\nCalScore"],
        [[model, kind, interval(m, "calscore"), interval(m, "ece"), interval(m, "brier"),
          fmt(m["final"]["calscore"])] for model, kind, m in rows],
        "CalScore: the paper's normalised form",
    )  # fmt: skip

    def recalibrated(m: dict[str, Any]) -> list[str]:
        r = m.get("recalibration") or {}
        return [fmt(r[k]["after"]["ece"]) if k in r else "–"
                for k in ("temperature", "platt", "isotonic")]  # fmt: skip

    show(
        "Selective prediction and recalibration",
        ["model", "conf.", "AURC", "acc@80%", "smECE", "ECE", "temp.", "Platt", "isot."],
        [[model, kind, fmt(m.get("aurc")), fmt(m.get("acc_at_80")), fmt(m.get("smooth_ece")),
          fmt(m["ece"]), *recalibrated(m)] for model, kind, m in rows],
        "ECE before, then out-of-fold after each map (cross-validated by question); "
        "smECE: smooth ECE",
    )  # fmt: skip
    for note in [*not_measured, small_sample_note(result)]:
        if note:
            console.print(f"note: {note}", highlight=False)


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
        caption=f"correct/incorrect buzzes per {per}, by x = fraction of the question revealed;"
        " Q1: human teams with the most correct buzzes",
    )
    for col in ("group", "teams", "x≤.25", "x≤.5", "x≤.75", "all"):
        left = col in ("group", "teams")
        table.add_column(col, justify="left" if left else "right", no_wrap=not left)
    from grace_arena.analysis.report import team_policy

    for name, g in fig["groups"].items():
        if g["kind"] == "model":
            teams = team_policy(result["teams"].get(name, {})) or "model"
        elif len(g["teams"]) <= 4:
            teams = ", ".join(g["teams"])
        else:
            teams = f"{len(g['teams'])} teams"
        table.add_row(
            name,
            teams,
            *(f"{g['correct'][i]:.2f}/{g['incorrect'][i]:.2f}" for i in at),
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
    from grace_arena.analysis.report import step_policy

    for model, r in result["curves"]["buzz_given_correct"].items():
        table.add_row(
            model,
            f"model ({step_policy(result, model)})",
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
            help="Model steps CSV or Parquet with the columns model, question_id, step, "
            "word_index, correct, confidence_logit, confidence_verbal (and, if there, category, "
            "n_words, would_buzz). Reads files instead of the record.",
        ),
    ] = None,
    buzzes: Annotated[
        Path | None,
        typer.Option(
            "--buzzes",
            help="Buzzes CSV or Parquet with the columns question_id, team, team_kind, "
            "word_index, correct (an 'export --format csv' file works too).",
        ),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="A folder written by 'export --format parquet' (steps, buzzes, tossups and "
            "heard tables; CSV files of those names work too). Reads files instead of the "
            "record.",
        ),
    ] = None,
    survey: Annotated[
        Path | None,
        typer.Option(
            "--survey",
            help="Survey answers CSV with the columns participant, question_id, step, "
            "word_index, guess, would_buzz, correct (and, if there, name, n_words, n_clues): "
            "human trajectories (from the record: automatic).",
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
    from grace_arena.analysis import analyze as run_analysis
    from grace_arena.analysis import load
    from grace_arena.analysis.metrics import H_DEFINITIONS

    if h_definition not in H_DEFINITIONS:
        typer.echo(f"error: --h must be one of {', '.join(H_DEFINITIONS)}", err=True)
        raise typer.Exit(2)
    if match and event:
        typer.echo("error: give --match or --event, not both", err=True)
        raise typer.Exit(2)
    files = any(p is not None for p in (steps, buzzes, survey, data))
    if files and (db is not None or match or event):
        typer.echo(
            "give either --db/--match/--event or --data/--steps/--buzzes/--survey, not both",
            err=True,
        )
        raise typer.Exit(2)
    try:
        if files:
            dataset = load(data, steps=steps, buzzes=buzzes, survey=survey)
        else:
            from grace_arena.record.store import RecordError

            url = existing_db(db)
            typer.echo(f"record: {redacted(url)}", err=True)
            try:
                dataset = load(url, event=event, match=match)
            except RecordError as exc:
                raise ValueError(str(exc)) from None
        result = run_analysis(dataset, n_resamples=resamples, seed=seed, h_definition=h_definition)
    except (OSError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    _print_tables(result)
    write_outputs(result, json_out, report)


def write_outputs(result: Any, json_out: Path | None, report: Path | None) -> None:
    """The result's JSON and report, where asked (``analyze`` and ``leaderboard``)."""
    if json_out is not None:
        result.to_json(json_out)
        typer.echo(f"wrote {json_out}", err=True)
    if report is not None:
        from grace_arena.analysis.report import write_report

        written = write_report(result.to_dict(), report)
        typer.echo(f"wrote {len(written)} files in {report}", err=True)


@app.command("analyze-large")
def analyze_large(
    steps: Annotated[
        list[str],
        typer.Option(
            "--steps",
            help="Parquet steps: a folder, a glob ('data/steps/*.parquet') or a file "
            "(repeatable), with the columns of 'analyze --steps'.",
        ),
    ],
    buzzes: Annotated[
        list[str] | None,
        typer.Option(
            "--buzzes",
            help="Parquet buzzes: a folder, glob or file (repeatable), with the columns of "
            "'analyze --buzzes'; their human buzzes give h_t.",
        ),
    ] = None,
    h_definition: Annotated[
        str, typer.Option("--h", help="h_t behind CalScore: 'reference' or 'paper'.")
    ] = "reference",
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write every number as JSON here.")
    ] = None,
    resamples: Annotated[
        int, typer.Option(min=0, help="Bootstrap resamples for the intervals (0: none).")
    ] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    memory_limit: Annotated[
        str,
        typer.Option(
            "--memory-limit",
            help="What DuckDB may hold before it spills to disk (e.g. 3GB); the bootstrap "
            "adds about 250 bytes per question of the largest model.",
        ),
    ] = "3GB",
    threads: Annotated[
        int | None, typer.Option(min=1, help="DuckDB's threads (default: every core).")
    ] = None,
    temp_dir: Annotated[
        Path | None,
        typer.Option("--temp-dir", help="Where to spill (default: the system's temporary folder)."),
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            help="A folder (made if new, e.g. next to the data) keeping the per-question sums "
            "with the files they came from: the next run reads again only the questions of "
            "new, changed or removed files.",
        ),
    ] = None,
    rank: Annotated[
        bool,
        typer.Option(
            "--rank",
            help="Also ACE, AUROC, AURC and the accuracy at 80% coverage, exact (one more "
            "pass that sorts every step by confidence; the cache does not shorten it).",
        ),
    ] = False,
) -> None:
    """The calibration metrics on Parquet data larger than memory (DuckDB, out of core).

    CalScore, GRACE's MCE (and their reference-code forms), ECE, the maximum calibration
    error, Brier and its decomposition, BSS, log loss, over-confidence rates and mean
    confidences, per model and confidence kind, over all steps, final steps and per
    category, with bootstrap intervals of CalScore, ECE and Brier over questions: the same
    numbers 'analyze --steps --buzzes' gives (docs/analysis.md, "Past memory"). With
    --rank, also ACE, AUROC, AURC and the accuracy at 80% coverage, exactly. The smoothed
    ECE and the recalibration are left to 'analyze'. With --cache, the next run reads again
    only the questions of new, changed or removed files.
    """
    import json

    from rich.console import Console
    from rich.table import Table

    from grace_arena.analysis.large import LargeAnalysisError
    from grace_arena.analysis.large import analyze_large as run
    from grace_arena.analysis.metrics import H_DEFINITIONS

    if h_definition not in H_DEFINITIONS:
        typer.echo(f"error: --h must be one of {', '.join(H_DEFINITIONS)}", err=True)
        raise typer.Exit(2)
    try:
        result = run(
            steps, buzzes, n_resamples=resamples, seed=seed, h_definition=h_definition,
            memory_limit=memory_limit, threads=threads, temp_directory=temp_dir, cache=cache,
            rank=rank,
        )  # fmt: skip
    except (OSError, LargeAnalysisError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except Exception as exc:  # DuckDB's own errors (a corrupt file, a type it cannot cast)
        if type(exc).__module__.split(".")[0] not in ("duckdb", "_duckdb"):
            raise
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    table = Table(title="Models (all steps; 95% intervals over questions)")
    columns = ["model", "kind", "CalScore", "MCE", "ECE", "Brier", "steps", "questions"]
    if rank:
        columns[6:6] = ["ACE", "AUROC", "AURC"]
    for col in columns:
        table.add_column(col, justify="left" if col in ("model", "kind") else "right")

    def fmt(value: float | None, ci: list[float | None] | None = None) -> str:
        if value is None:
            return "–"
        if ci and ci[0] is not None and ci[1] is not None:
            return f"{value:.4f} [{ci[0]:.4f}, {ci[1]:.4f}]"
        return f"{value:.4f}"

    for model, kinds in result["models"].items():
        for kind, s in kinds.items():
            ranked = [fmt(s["ace"]), fmt(s["auroc"]), fmt(s["aurc"])] if rank else []
            table.add_row(
                model, kind, fmt(s["calscore"], s["ci"]["calscore"]), fmt(s["mce_grace"]),
                fmt(s["ece"], s["ci"]["ece"]), fmt(s["brier"], s["ci"]["brier"]), *ranked,
                f"{s['n']:,}", f"{s['n_questions']:,}",
            )  # fmt: skip
    Console().print(table)
    if result["cache"] is not None:
        c = result["cache"]
        typer.echo(
            f"cache {c['folder']}: read {c['buckets_read']} of {c['buckets']} buckets of questions",
            err=True,
        )
    if json_out is not None:
        json_out.write_text(json.dumps(result, indent=1, allow_nan=False))
        typer.echo(f"wrote {json_out}", err=True)
