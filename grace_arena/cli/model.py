"""``grace-arena precompute`` and ``grace-arena model ...``: the model player's trajectories."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from grace_arena.cli.groups import command_group
from grace_arena.cli.options import DbOption, check_model, existing_db, redacted, resolve_db
from grace_arena.cli.root import app

if TYPE_CHECKING:
    from grace_arena.core.packet import Packet
    from grace_arena.model.policy import BuzzPolicy

model_app = command_group(
    help="The model player: show its trajectories, choose its buzz threshold, import and "
    "export competitors' outputs (QANTA runner CSVs, QANTA JSONL).",
    no_args_is_help=True,
)
app.add_typer(model_app, name="model")

PacketOption = Annotated[
    Path,
    typer.Option(
        "--packet", "-p", help="Packet file (YAML or JSON), or a GRACE buzzpoint file (JSON)."
    ),
]
ConfidenceOption = Annotated[
    str,
    typer.Option(help="Confidence the policy thresholds: logit, logit_geo, sequence or verbal."),
]


def _load_packet(path: Path) -> Packet:
    from grace_arena.core.packet import PacketError, load_packet

    try:
        return load_packet(path)
    except (PacketError, OSError) as exc:
        grace = _grace_packet(path)
        if grace is not None:
            return grace
        typer.echo(f"cannot load packet {path}:\n{exc}", err=True)
        raise typer.Exit(2) from None


def _grace_packet(path: Path) -> Packet | None:
    """A GRACE buzzpoint file read as the packet ``import grace`` makes of it (same packet
    and tossup ids), so that model steps join its pooled buzzes; None if it is not one."""
    from grace_arena.io.imports import read_grace_file

    try:
        if path.read_bytes().lstrip()[:1] != b"[":
            return None
        packet = read_grace_file(path).packet
    except (OSError, ValueError):
        return None
    packet._path = path
    return packet


CalibrationOption = Annotated[
    Path | None,
    typer.Option(
        "--calibration",
        help="A map from 'grace-arena model calibrate': the threshold applies to the "
        "recalibrated confidence.",
    ),
]


def _policy(
    confidence: str, threshold: float, not_before: int, calibration: Path | None = None
) -> BuzzPolicy:
    from grace_arena.analysis.recalibration import read_calibration
    from grace_arena.model.policy import BuzzPolicy

    try:
        fitted = read_calibration(calibration) if calibration is not None else None
        if fitted is not None and fitted.meta.get("confidence") not in (None, confidence):
            raise ValueError(
                f"{calibration} recalibrates the {fitted.meta['confidence']} confidence, "
                f"not {confidence} (--confidence)"
            )
        return BuzzPolicy(
            confidence=confidence,  # type: ignore[arg-type]
            threshold=threshold,
            not_before_word=not_before,
            calibration=fitted,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


@app.command("precompute")
def precompute(
    packet: PacketOption,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="tfidf (offline, default), local-smollm2 (opt-in local LLM), or any litellm "
            "model string such as openai/gpt-4o-mini or hosted_vllm/NAME.",
        ),
    ] = "tfidf",
    corpus: Annotated[
        Path | None,
        typer.Option(help="Training / exemplar corpus (practice JSONL, QANTA, GRACE or packet)."),
    ] = None,
    k: Annotated[int, typer.Option(help="Exemplars per prompt (LLM guessers).")] = 3,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at once.")] = 4,
    workers: Annotated[
        int,
        typer.Option(
            help="Processes that make the LLM calls, sharing --concurrency: one process makes "
            "at most about 100 calls/s (litellm's own CPU)."
        ),
    ] = 1,
    retries: Annotated[int, typer.Option(help="litellm num_retries (exponential backoff).")] = 3,
    api_base: Annotated[
        str | None, typer.Option(help="Server URL for OpenAI-compatible or vLLM models.")
    ] = None,
    name: Annotated[
        str | None, typer.Option(help="Name stored in the record (default: the model string).")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Skip the response cache.")] = False,
    tossup: Annotated[
        list[str] | None,
        typer.Option(help="Only these tossup ids (repeatable); no bonus parts unless --bonus."),
    ] = None,
    bonus: Annotated[
        list[str] | None,
        typer.Option(
            help="Only these bonus ids (repeatable; then no tossup unless --tossup); default: "
            "every bonus part."
        ),
    ] = None,
    no_bonuses: Annotated[
        bool, typer.Option("--no-bonuses", help="Guess the tossups only, no bonus parts.")
    ] = False,
    confidence: ConfidenceOption = "logit",
    threshold: Annotated[float, typer.Option(help="Threshold for the stored would_buzz.")] = 0.5,
    not_before: Annotated[int, typer.Option(help="No buzz before this word index.")] = 0,
    calibration: CalibrationOption = None,
    db: DbOption = None,
) -> None:
    """Guess every clue prefix of a packet's tossups, and every part of its bonuses (asked
    with the lead-in and the earlier parts' answers), and store each in the record
    (idempotent). Says so, with what to do, when the model would buzz on fewer than a fifth
    of the tossups at --threshold (never, on a packet it knows nothing of)."""
    from rich.console import Console

    if bonus and no_bonuses:
        raise typer.BadParameter("give --bonus or --no-bonuses, not both", param_hint="--bonus")
    check_model(model, None, what=f"--model {model!r}")  # a name it can run, not one stored

    from grace_arena.record.db import open_engine

    console = Console()
    the_packet = _load_packet(packet)
    policy = _policy(confidence, threshold, not_before, calibration)
    url = resolve_db(db)
    console.print(f"record: {redacted(url)}")
    engine = open_engine(url)
    stats = run_precompute_command(
        console, engine, the_packet, model, name=name, policy=policy, corpus=corpus, k=k,
        concurrency=concurrency, workers=workers, retries=retries, api_base=api_base,
        no_cache=no_cache, tossup=tossup if tossup is not None or not bonus else [],
        bonuses=False if no_bonuses else (bonus or None),
    )  # fmt: skip
    if tossup is not None or not bonus:  # the tossups it guessed: all, or those asked
        _warn_if_cannot_play(console, engine, name or model, the_packet, policy, tossup)
    engine.dispose()
    if stats.errors:
        raise typer.Exit(1)


def _warn_if_cannot_play(
    console: Any,
    engine: Any,
    model: str,
    the_packet: Packet,
    policy: BuzzPolicy,
    tossups: list[str] | None = None,
) -> bool:
    """Say, with what to do, when ``model`` would (almost) never buzz on the packet
    (:mod:`grace_arena.model.readiness`); True when it said so."""
    from grace_arena.model.readiness import readiness, readiness_warning
    from grace_arena.resources import command_prefix

    found = readiness(engine, model, the_packet.packet.id, policy, tossups)
    where = str(the_packet.path) if the_packet.path else "PACKET"
    warning = readiness_warning(found, command=command_prefix(), packet=shlex.quote(where))
    if warning is not None:
        console.print(f"[yellow]warning:[/] {warning}", soft_wrap=True, highlight=False)
    return warning is not None


def run_precompute_command(
    console: Any,
    engine: Any,
    the_packet: Packet,
    model: str,
    *,
    name: str | None = None,
    policy: BuzzPolicy | None = None,
    corpus: Path | None = None,
    k: int = 3,
    concurrency: int = 4,
    workers: int = 1,
    retries: int = 3,
    api_base: str | None = None,
    no_cache: bool = False,
    tossup: list[str] | None = None,
    bonuses: bool | list[str] | None = None,
    progress_every: float = 10.0,
) -> Any:
    """Precompute ``model`` on a packet with a progress bar (``precompute`` and
    ``leaderboard``); ``local-smollm2`` starts its local server for the run. Returns the
    run's statistics, after printing them. Where the console is not a terminal (a script, CI,
    a log), the progress is a plain line every ``progress_every`` seconds and one at the end."""
    import asyncio
    import contextlib
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from grace_arena.model.policy import BuzzPolicy
    from grace_arena.model.precompute import cost_text, make_guesser
    from grace_arena.model.precompute import precompute as run

    policy = policy or BuzzPolicy()
    with contextlib.ExitStack() as stack:
        litellm_model, record_name = model, name or model
        if model == "local-smollm2":
            from grace_arena.model.local import LocalLlamaServer

            console.print("starting llama-cpp-python's server with SmolLM2-135M ...")
            server = stack.enter_context(LocalLlamaServer())
            litellm_model, api_base = "openai/smollm2", server.api_base
        options = {
            "corpus": corpus,
            "k": k,
            "api_base": api_base,
            "concurrency": concurrency,
            "num_retries": retries,
            "cache": None if no_cache else "default",
            "name": record_name,
        }
        try:
            if workers > 1 and model != "tfidf":
                from grace_arena.model.workers import WorkerPool

                console.print(f"starting {workers} worker processes ...")
                guesser = stack.enter_context(WorkerPool(litellm_model, workers=workers, **options))
            else:
                guesser = make_guesser(litellm_model, **options)
        except (OSError, ValueError, RuntimeError) as exc:
            typer.echo(f"cannot build the guesser: {exc}", err=True)
            raise typer.Exit(2) from None

        def detail(stats) -> str:
            return (
                f"steps {stats.steps_done}/{stats.steps} · "
                + (f"bonus parts {stats.parts_done}/{stats.parts} · " if stats.parts else "")
                + f"calls {stats.calls} · "
                f"cache hits {stats.cache_hits} · errors {stats.errors} · "
                + ("$?" if stats.cost_unknown else f"${stats.cost_usd:.4f}")
            )

        def go(on_progress) -> Any:
            return asyncio.run(
                run(
                    engine,
                    the_packet,
                    guesser,
                    model=record_name,
                    policy=policy,
                    tossups=tossup,
                    bonuses=bonuses,
                    on_progress=on_progress,
                )
            )

        if console.is_terminal:
            progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("questions"),
                TextColumn("{task.fields[detail]}"),
                TimeElapsedColumn(),
                console=console,
            )
            task = progress.add_task(record_name, total=1, detail="")

            def show(stats) -> None:
                progress.update(
                    task,
                    total=max(stats.questions, 1),
                    completed=stats.questions_done,
                    detail=detail(stats),
                )

            with progress:
                stats = go(show)
        else:
            # A script, CI, a log: a plain line now and then, never a bar drawn over itself.
            started = time.monotonic()
            last = [started]

            def line(stats) -> None:
                elapsed = time.monotonic() - started
                console.print(
                    f"{record_name}: {stats.questions_done}/{stats.questions} questions · "
                    f"{detail(stats)} · {elapsed:.0f} s",
                    soft_wrap=True,
                    highlight=False,
                    markup=False,
                )

            def every(stats) -> None:
                now = time.monotonic()
                if now - last[0] >= progress_every:
                    last[0] = now
                    line(stats)

            stats = go(every)
            line(stats)
    for message in stats.error_messages[:10]:
        console.print(f"[red]error[/red] {message}", soft_wrap=True)
    console.print(
        f"{record_name} on {the_packet.packet.id}: {stats.stored} steps stored, "
        f"{stats.skipped} already in the record, "
        + (
            f"{stats.parts_stored} bonus parts stored, {stats.parts_skipped} already in the "
            "record, "
            if stats.parts
            else ""
        )
        + f"{stats.errors} errors, {stats.calls} calls, "
        f"{stats.cache_hits} cache hits, {cost_text(stats)}",
        soft_wrap=True,  # one line, however narrow the terminal (or none)
        highlight=False,
    )
    return stats


def _no_such_stored_model(model: str, url: str) -> None:
    """A model name the record has no steps of under any packet, close to one it has: a
    typo, said with the names there rather than as a model still to precompute."""
    import difflib

    from grace_arena.cli.options import record_models

    stored = sorted(record_models(url))
    close = difflib.get_close_matches(model, stored, n=2, cutoff=0.6)
    if model not in stored and close:
        typer.echo(
            f"error: no model {model!r} in the record (did you mean {' or '.join(close)}?); "
            f"models there: {', '.join(stored)}",
            err=True,
        )
        raise typer.Exit(1)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


@model_app.command("show")
def show(
    model: Annotated[str, typer.Argument(help="Model name as stored in the record.")],
    packet: PacketOption,
    confidence: ConfidenceOption = "logit",
    threshold: Annotated[float, typer.Option(help="Buzz threshold.")] = 0.5,
    not_before: Annotated[int, typer.Option(help="No buzz before this word index.")] = 0,
    tossup: Annotated[
        list[str] | None, typer.Option(help="Only these tossup ids (repeatable).")
    ] = None,
    calibration: CalibrationOption = None,
    db: DbOption = None,
) -> None:
    """Print each tossup's trajectory, clue by clue, and where the model would buzz."""
    from rich.console import Console
    from rich.table import Table

    from grace_arena.model.policy import first_buzz, load_steps
    from grace_arena.record.db import open_engine

    console = Console()
    the_packet = _load_packet(packet)
    policy = _policy(confidence, threshold, not_before, calibration)
    url = existing_db(db)
    engine = open_engine(url)
    steps = load_steps(engine, model, the_packet.packet.id)
    engine.dispose()
    if not steps:
        _no_such_stored_model(model, url)
        typer.echo(
            f"no steps of {model!r} on packet {the_packet.packet.id!r} in the record: "
            f"run `grace-arena precompute --packet {packet} --model {model}` first",
            err=True,
        )
        raise typer.Exit(1)
    n_buzz = n_right = 0
    for t in the_packet.tossups:
        if tossup and t.id not in tossup:
            continue
        rows = steps.get(t.id, [])
        tokens = t.tokens()
        clues = tokens.clue_texts()
        buzz = first_buzz(rows, policy)
        table = Table(
            "step", "words", "clue", "guess", "logit", "geo", "seq", "verbal", "judge", "",
            title=f"{t.id} ({t.category}) — ANSWER: {t.answer}",
            title_justify="left",
            expand=True,
        )  # fmt: skip
        for row in rows:
            mark = "✓" if row.correct else ("prompt" if row.judge_directive == "prompt" else "✗")
            here = "[bold yellow]◀ BUZZ[/]" if buzz is not None and row.step == buzz.step else ""
            at = tokens.clue_of(min(row.word_index, len(tokens) - 1))
            clue = clues[at]
            # an imported step was taken after a token of the runner's, not at a clue's end
            token = (row.extra or {}).get("token_position")
            table.add_row(
                str(row.step),
                f"{tokens.clue_start(at)}–{row.word_index}"
                if token is None
                else f"token {token}: {row.word_index}",
                clue[:60] + ("…" if len(clue) > 60 else ""),
                row.guess or "—",
                _fmt(row.confidence_logit),
                _fmt(row.confidence_logit_geo),
                _fmt(row.sequence_prob),
                _fmt(row.confidence_verbal),
                mark,
                here,
            )
        console.print(table)
        if buzz is None:
            own = policy.own_buzzes and any("buzz" in (r.extra or {}) for r in rows)
            why = "its file never says buzz" if own else f"{policy.confidence} ≥ {policy.threshold}"
            console.print(f"  never buzzes ({why})\n")
        else:
            n_buzz += 1
            n_right += bool(buzz.correct)
            verdict = "[green]correct[/]" if buzz.correct else "[red]incorrect[/]"
            console.print(
                f"  buzzes at word {buzz.word_index} "
                f"({tokens.fraction_revealed(buzz.word_index):.0%} read, clue "
                f"{tokens.clue_of(buzz.word_index) + 1}"
                f"/{tokens.n_clues}): {buzz.guess!r} {verdict}\n"
            )
    console.print(f"{model}: buzzes on {n_buzz} tossups, {n_right} correct")


@model_app.command("threshold")
def threshold(
    model: Annotated[str, typer.Argument(help="Model name as stored in the record.")],
    method: Annotated[
        str, typer.Option(help="ew: maximise expected wins; ltt: Learn-then-Test guarantee.")
    ] = "ltt",
    packet: Annotated[
        list[Path] | None,
        typer.Option("--packet", "-p", help="Only trajectories on these packets (repeatable)."),
    ] = None,
    confidence: ConfidenceOption = "logit",
    alpha: Annotated[float, typer.Option(help="LTT: allowed share of incorrect buzzes.")] = 0.2,
    delta: Annotated[float, typer.Option(help="LTT: allowed failure probability.")] = 0.1,
    risk: Annotated[
        str, typer.Option(help="LTT: 'buzz' (wrong / buzzes) or 'question' (wrong / questions).")
    ] = "buzz",
    human_curve: Annotated[
        Path | None,
        typer.Option(help="EW: human buzz curve file (JSON or CSV); default: the record's."),
    ] = None,
    not_before: Annotated[int, typer.Option(help="No buzz before this word index.")] = 0,
    db: DbOption = None,
) -> None:
    """Choose the buzz threshold from the recorded trajectories (see docs/model_player.md)."""
    from rich.console import Console

    from grace_arena.model.records import (
        human_curve_from_file,
        human_records_from_db,
        trajectories_from_db,
    )
    from grace_arena.model.threshold import threshold_expected_wins, threshold_ltt
    from grace_arena.record.db import open_engine

    console = Console()
    _policy(confidence, 0.5, not_before)  # validates the confidence name
    url = existing_db(db)
    engine = open_engine(url)
    packet_ids = [_load_packet(p).packet.id for p in packet] if packet else None
    trajectories = trajectories_from_db(engine, model, packet_ids=packet_ids, confidence=confidence)
    if not trajectories:
        engine.dispose()
        _no_such_stored_model(model, url)
        typer.echo(f"no trajectories of {model!r} in the record", err=True)
        raise typer.Exit(1)
    console.print(f"{model}: {len(trajectories)} questions, confidence {confidence}")
    if method == "ew":
        if human_curve is not None:
            curve = human_curve_from_file(human_curve)
            source = str(human_curve)
        else:
            fractions, n_records = human_records_from_db(engine)
            if not fractions:
                engine.dispose()
                typer.echo(
                    "the record holds no correct human buzzes: give --human-curve FILE", err=True
                )
                raise typer.Exit(1)
            from grace_arena.analysis.curves import fit_human_curve

            curve = fit_human_curve(fractions, n_records)
            source = f"the record ({len(fractions)} correct of {n_records} human records)"
        result = threshold_expected_wins(trajectories, curve, not_before_word=not_before)
        terms = " ".join(
            f"{c:+.3f}" + (f" x^{len(curve.coeffs) - 1 - i}" if i < len(curve.coeffs) - 1 else "")
            for i, c in enumerate(curve.coeffs)
        )
        console.print(f"human curve from {source}: w(x) = {terms}", soft_wrap=True)
        console.print(
            f"threshold {result.threshold:.2f}: expected wins {result.expected_wins:.3f} "
            "per question"
        )
    elif method == "ltt":
        try:
            ltt = threshold_ltt(
                trajectories, alpha=alpha, delta=delta, risk=risk, not_before_word=not_before
            )  # type: ignore[arg-type]
        except ValueError as exc:
            engine.dispose()
            raise typer.BadParameter(str(exc)) from None
        for lam, n, k_wrong, p in ltt.tested[-5:]:
            console.print(f"  λ={lam:.2f}: {k_wrong}/{n} wrong, p={p:.3g}")
        if ltt.threshold is None:
            console.print(
                f"no threshold certified: incorrect-buzz share ≤ {alpha} with probability "
                f"≥ {1 - delta} needs more (or better) data"
            )
        else:
            console.print(
                f"threshold {ltt.threshold:.2f}: incorrect-buzz share ({risk}) ≤ {alpha} "
                f"with probability ≥ {1 - delta:.2f}"
            )
    else:
        engine.dispose()
        raise typer.BadParameter(f"method must be 'ew' or 'ltt', not {method!r}")
    engine.dispose()


@model_app.command("calibrate")
def calibrate(
    model: Annotated[str, typer.Argument(help="Model name as stored in the record.")],
    method: Annotated[
        str, typer.Option(help="temperature, platt or isotonic (see docs/analysis.md).")
    ] = "isotonic",
    packet: Annotated[
        list[Path] | None,
        typer.Option("--packet", "-p", help="Only steps on these packets (repeatable)."),
    ] = None,
    confidence: ConfidenceOption = "logit",
    folds: Annotated[int, typer.Option(min=2, help="Cross-validation folds (by question).")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the folds.")] = 0,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where to store the map (JSON). Default: calibration/<model>-<confidence>.json "
            "in the user data folder.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Fit a recalibration map of a model's confidence on its recorded steps and store it.

    Prints ECE, Brier and log loss before and after each method, cross-validated by question
    (a question's steps are never split), and stores the chosen method's map fitted on every
    step; 'precompute --calibration' and 'model show --calibration' apply it to the buzz
    policy's threshold.
    """
    import json
    import re
    from datetime import UTC, datetime

    import numpy as np
    from platformdirs import user_data_dir
    from rich.console import Console
    from rich.table import Table

    from grace_arena.analysis import load
    from grace_arena.analysis.recalibration import (
        METHODS,
        fit_calibrator,
        recalibration_report,
    )
    from grace_arena.model.policy import CONFIDENCE_FIELDS

    if method not in METHODS:
        raise typer.BadParameter(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    _policy(confidence, 0.5, 0)  # validates the confidence name
    console = Console()
    url = existing_db(db)
    console.print(f"record: {redacted(url)}")
    steps = load(url).steps
    steps = steps[steps["model"].astype(str) == model]
    if packet:
        ids = {_load_packet(p).packet.id for p in packet}
        steps = steps[steps["packet_id"].astype(str).isin(ids)]
    column = CONFIDENCE_FIELDS[confidence]
    conf = steps[column].to_numpy(dtype=float) if column in steps else np.array([])
    known = ~np.isnan(conf)
    if not known.any():
        _no_such_stored_model(model, url)
        typer.echo(f"no {confidence} confidences of {model!r} in the record", err=True)
        raise typer.Exit(1)
    correct = steps["correct"].to_numpy(dtype=float)
    groups = steps["question_id"].astype(str).to_numpy()
    report = recalibration_report(conf, correct, groups=groups, n_splits=folds, seed=seed)
    if report is None:
        typer.echo(
            f"cannot fit: {model!r} needs at least {folds} questions and both right and wrong "
            "guesses",
            err=True,
        )
        raise typer.Exit(1)
    table = Table(
        title=f"{model}, {confidence} confidence: {report['n']} steps",
        caption=f"after: out of fold, {folds}-fold cross-validation by question",
    )
    for col in ("map", "ECE", "Brier", "log loss"):
        table.add_column(col, justify="left" if col == "map" else "right")
    table.add_row("none", *(f"{report['before'][k]:.4f}" for k in ("ece", "brier", "log_loss")))
    for name in METHODS:
        after = report[name]["after"]
        label = f"[bold]{name}[/bold]" if name == method else name
        table.add_row(label, *(f"{after[k]:.4f}" for k in ("ece", "brier", "log_loss")))
    console.print(table)
    fitted = fit_calibrator(conf[known], correct[known], method=method)  # type: ignore[arg-type]
    if out is None:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-") or "model"
        out = (
            Path(user_data_dir("grace-arena", appauthor=False))
            / "calibration"
            / (f"{slug}-{confidence}.json")
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    stored = {
        **fitted.to_dict(),
        "model": model,
        "confidence": confidence,
        "packets": sorted(set(steps["packet_id"].astype(str))) if "packet_id" in steps else [],
        "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "cv": report,
    }
    out.write_text(json.dumps(stored, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote the {method} map to {out}")
    console.print(
        f"apply it: grace-arena precompute ... --confidence {confidence} --calibration {out}"
    )


def _outputs_error(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(1) from None


@model_app.command("import")
def import_outputs(
    packet: PacketOption,
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="A model's outputs: the QANTA runner's NAME.buzz.csv / NAME.bonus.csv, or "
            "QANTA's leaderboard JSONL (run_outputs for tossups, part_outputs for bonuses); "
            "one tossup file and one bonus file at most."
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(help="The model's name in the record (default: the first file's name)."),
    ] = None,
    weight_class: Annotated[
        str | None,
        typer.Option(help="lightweight, midweight or heavyweight (kept with its steps)."),
    ] = None,
    roster: Annotated[
        Path | None,
        typer.Option(
            help="A runner roster CSV (name, tossup_model, bonus_model, weight_class): import "
            "every AI in it from <tossup_model>.buzz.csv and <bonus_model>.bonus.csv (or "
            ".jsonl) in --outputs, each under its name."
        ),
    ] = None,
    outputs: Annotated[
        Path | None,
        typer.Option(help="Folder of the roster's output files (default: the roster's folder)."),
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace the model's rows on this packet.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Store a competitor's precomputed outputs as a model player (its steps and bonus
    answers), mapping the runner's token positions to our words; rows with no ``correct`` are
    judged. Checked whole first: an unknown question id stores nothing."""
    from rich.console import Console

    from grace_arena.model.names import LOCAL_MODELS
    from grace_arena.model.outputs import OutputsError, read_outputs, read_roster
    from grace_arena.model.outputs import import_outputs as store
    from grace_arena.record.db import open_engine

    if bool(files) == bool(roster):
        raise typer.BadParameter("give output files, or --roster, not both", param_hint="FILES")
    console = Console()
    the_packet = _load_packet(packet)
    try:
        if roster is not None:
            folder = outputs or roster.parent
            plan = [
                (e.name, e.weight_class, e.files(folder)) for e in read_roster(roster)
            ]  # fmt: skip
        else:
            assert files
            stem = files[0].name.split(".")[0]
            plan = [(name or stem, weight_class, list(files))]
        loaded = [
            (model, weight, [(f.name, read_outputs(f)) for f in paths])
            for model, weight, paths in plan
        ]
    except OutputsError as exc:
        _outputs_error(exc)
    for model, _, _ in loaded:
        if model in LOCAL_MODELS:
            raise typer.BadParameter(
                f"{model!r} is a model this program runs itself: give another name",
                param_hint="--name",
            )
    url = resolve_db(db)
    console.print(f"record: {redacted(url)}")
    engine = open_engine(url)
    try:
        for model, weight, read in loaded:
            try:
                stats = store(engine, the_packet, model, read, weight_class=weight, replace=replace)
            except OutputsError as exc:
                _outputs_error(exc)
            console.print(
                f"{model} on {the_packet.packet.id}: {stats.steps} steps on {stats.tossups} "
                f"tossups, {stats.parts} bonus parts on {stats.bonuses} bonuses from "
                f"{', '.join(stats.files)}"
                + (f"; {stats.judged} judged here (no correct in the file)" if stats.judged else "")
                + (f"; {stats.replaced} rows replaced" if stats.replaced else "")
                + (f"; {weight}" if weight else ""),
                soft_wrap=True,
                highlight=False,
                markup=False,
            )
            if stats.steps:
                from grace_arena.model.policy import BuzzPolicy

                _warn_if_cannot_play(console, engine, model, the_packet, BuzzPolicy())
    finally:
        engine.dispose()


@model_app.command("export")
def export_outputs(
    model: Annotated[str, typer.Argument(help="Model name as stored in the record.")],
    packet: PacketOption,
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="runner: NAME.buzz.csv and NAME.bonus.csv (the QANTA tournament runner); "
            "qanta: NAME.buzz.jsonl and NAME.bonus.jsonl (QANTA's leaderboard).",
        ),
    ] = "runner",
    out: Annotated[Path, typer.Option(help="Folder to write the files in.")] = Path("."),
    confidence: ConfidenceOption = "logit",
    threshold: Annotated[float, typer.Option(help="Buzz threshold (the buzz column).")] = 0.5,
    not_before: Annotated[int, typer.Option(help="No buzz before this word index.")] = 0,
    calibration: CalibrationOption = None,
    db: DbOption = None,
) -> None:
    """Write a model's steps and bonus answers as a competitor's outputs: one row per step at
    the runner token its last word starts in, with the policy's confidence and buzz (an
    imported model's own rows, as they came)."""
    import re

    from grace_arena.model.outputs import export_outputs as collect
    from grace_arena.model.outputs import write_outputs
    from grace_arena.record.db import open_engine

    if format not in ("runner", "qanta"):
        raise typer.BadParameter(f"{format!r}: runner or qanta", param_hint="--format")
    the_packet = _load_packet(packet)
    policy = _policy(confidence, threshold, not_before, calibration)
    url = existing_db(db)
    engine = open_engine(url)
    try:
        tossups, bonuses = collect(engine, the_packet, model, format, policy=policy)  # type: ignore[arg-type]
    finally:
        engine.dispose()
    if tossups is None and bonuses is None:
        _no_such_stored_model(model, url)
        typer.echo(f"no steps of {model!r} on packet {the_packet.packet.id!r}", err=True)
        raise typer.Exit(1)
    out.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^\w.-]+", "_", model)
    suffix = ".csv" if format == "runner" else ".jsonl"
    for kind, written in (("buzz", tossups), ("bonus", bonuses)):
        if written is not None:
            path = out / f"{stem}.{kind}{suffix}"
            write_outputs(written, path)
            typer.echo(f"{path}: {len(written.rows)} rows")
