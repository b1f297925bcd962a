"""``grace-arena leaderboard``: several models on one packet, ranked KalshiBench-style."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from grace_arena.cli.options import DbOption, check_model, redacted, resolve_db
from grace_arena.cli.root import app


def _print_ranking(ranking: dict[str, Any]) -> None:
    """The ranking in three tables that each fit 80 columns: the values, their intervals,
    and accuracy by fraction revealed."""
    from rich.console import Console
    from rich.table import Table

    console = Console()

    def value(entry: dict[str, Any]) -> str:
        return "–" if entry["value"] is None else f"{entry['value']:.3f}"

    def interval(entry: dict[str, Any]) -> str:
        low, high = entry["ci"]
        return "–" if low is None else f"{low:.3f}–{high:.3f}"

    def short(entry: dict[str, Any]) -> str:
        low, high = entry["ci"]
        shown = "–" if entry["value"] is None else f"{entry['value']:.2f}"
        return shown if low is None else f"{shown} {low:.2f}–{high:.2f}"

    headline = [c for c in ranking["columns"] if not c["key"].startswith("accuracy_")]
    by_fraction = [c for c in ranking["columns"] if c["key"].startswith("accuracy_")]
    rows = ranking["rows"]
    first = Table(title=f"Leaderboard ({ranking['confidence']} confidence)",
                  caption="ranked by CalScore (lower is better)")  # fmt: skip
    second = Table(title="95% bootstrap intervals (resampling questions)")
    third = Table(title="Accuracy by fraction of the question revealed",
                  caption="value, then its bootstrap interval")  # fmt: skip
    first.add_column("#", justify="right")
    for table in (first, second, third):
        table.add_column("model", justify="left", overflow="fold")
    for c in headline:
        first.add_column(c["label"], justify="right", no_wrap=True)
        second.add_column(c["label"], justify="right", no_wrap=True)
    for c in by_fraction:
        third.add_column(c["label"].removeprefix("accuracy at "), justify="right", no_wrap=True)
    for r in rows:
        first.add_row(str(r["rank"]), r["model"], *(value(r[c["key"]]) for c in headline))
        second.add_row(r["model"], *(interval(r[c["key"]]) for c in headline))
        third.add_row(r["model"], *(short(r[c["key"]]) for c in by_fraction))
    for table in (first, second, third):
        console.print(table)


@app.command("leaderboard")
def leaderboard(
    packet: Annotated[
        Path,
        typer.Option(
            "--packet", "-p", help="Packet file (YAML or JSON), or a GRACE buzzpoint file."
        ),
    ],
    model: Annotated[
        list[str],
        typer.Option(
            "--model",
            "-m",
            help="A model to rank (repeatable): tfidf, local-smollm2, or a litellm model string.",
        ),
    ],
    confidence: Annotated[
        str, typer.Option(help="Confidence kind the ranking uses: logit or verbal.")
    ] = "logit",
    corpus: Annotated[
        Path | None, typer.Option(help="Training / exemplar corpus for the guessers.")
    ] = None,
    api_base: Annotated[
        str | None, typer.Option(help="Server URL for OpenAI-compatible or vLLM models.")
    ] = None,
    tossup: Annotated[
        list[str] | None, typer.Option(help="Only these tossup ids (repeatable).")
    ] = None,
    resamples: Annotated[
        int, typer.Option(min=0, help="Bootstrap resamples for the intervals (0: none).")
    ] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the analysis with its ranking here.")
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Write the report (with the ranking) here.")
    ] = None,
    db: DbOption = None,
) -> None:
    """Rank several models on one packet: each is precomputed (steps already in the record
    and cached replies are reused), then all are analysed together and ranked by CalScore,
    with ECE, Brier, AUROC and accuracy by fraction revealed, each with a bootstrap interval
    over questions. Human buzzes on the packet (matches, imported GRACE buzzpoints) enter
    CalScore's h_t. Works offline with tfidf and local-smollm2."""
    from rich.console import Console

    from grace_arena.analysis import analyze, load
    from grace_arena.analysis.metrics import CONFIDENCE_KINDS
    from grace_arena.analysis.ranking import rank_models
    from grace_arena.cli.analyze import write_outputs
    from grace_arena.cli.model import _load_packet, run_precompute_command
    from grace_arena.io.record_io import question_id
    from grace_arena.record.db import open_engine

    if confidence not in CONFIDENCE_KINDS:
        raise typer.BadParameter(f"confidence must be logit or verbal, not {confidence!r}")
    names = list(dict.fromkeys(model))
    for name in names:  # each is precomputed here: a name it can run
        check_model(name, None, what=f"--model {name!r}")
    console = Console(stderr=True)
    the_packet = _load_packet(packet)
    url = resolve_db(db)
    console.print(f"record: {redacted(url)}")
    engine = open_engine(url)
    failed = []
    for name in names:
        stats = run_precompute_command(
            console, engine, the_packet, name, corpus=corpus, api_base=api_base, tossup=tossup
        )
        if stats.errors:
            failed.append(name)
    engine.dispose()
    if failed:
        typer.echo(f"error: {', '.join(failed)} had errors; run leaderboard again", err=True)
        raise typer.Exit(1)
    data = load(url)
    questions = {
        question_id(the_packet.packet.id, t.id)
        for t in the_packet.tossups
        if not tossup or t.id in tossup
    }
    steps = data.steps
    steps = steps[steps["model"].astype(str).isin(names)]
    steps = steps[steps["question_id"].astype(str).isin(questions)].reset_index(drop=True)
    data.steps = steps.assign(model=steps["model"].astype(str).astype("category"))
    data.buzzes = data.buzzes[data.buzzes["question_id"].astype(str).isin(questions)]
    data.heard = data.heard[data.heard["question_id"].astype(str).isin(questions)]
    data.source = {
        **data.source,
        "description": f"{url}, packet {the_packet.packet.id}, models {', '.join(names)}",
    }
    result = analyze(data, n_resamples=resamples, seed=seed)
    result["ranking"] = rank_models(result, data.steps, confidence=confidence)
    _print_ranking(result["ranking"])
    write_outputs(result, json_out, report)
