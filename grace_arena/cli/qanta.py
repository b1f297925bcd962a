"""``grace-arena event draft`` and ``event qanta-stats``: QANTA 2026's hybrid teams in an
event (the draft of AI teammates between rounds, and the statistics tables)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from grace_arena.cli.event import _console, _fail, event_app
from grace_arena.cli.options import DbOption, existing_db, redacted


def _event_matches(url: str, name: str) -> tuple[Any, Any, list[tuple[int, list[Any]]]]:
    """The event's row, its engine, and each of its matches' events (in match order)."""
    from grace_arena.record.db import open_engine
    from grace_arena.record.store import MatchStore, RecordError

    engine = open_engine(url)
    store = MatchStore(engine)
    try:
        (row,) = store.find_events([name])
    except RecordError as exc:
        raise _fail(str(exc)) from exc
    matches = [(m.id, store.events(m.id)) for m in store.matches(event_ids=[row.id])]
    return row, engine, matches


def _results(matches: list[tuple[int, list[Any]]]) -> dict[str, tuple[int, int]]:
    """Team -> (wins, points) over the event's finished matches."""
    from grace_arena.core.events import MatchCreated, MatchEnded

    results: dict[str, list[int]] = {}
    for _, events in matches:
        created = next(e for e in events if isinstance(e, MatchCreated))
        for team in created.config.teams:
            results.setdefault(team.id, [0, 0])
        ended = next((e for e in events if isinstance(e, MatchEnded)), None)
        if ended is None:
            continue
        best = max(ended.scores.values(), default=0)
        leaders = [t for t, p in ended.scores.items() if p == best]
        for team, points in ended.scores.items():
            results[team][1] += points
            results[team][0] += len(leaders) == 1 and team == leaders[0]
    return {t: (w, p) for t, (w, p) in results.items()}


@event_app.command("draft")
def draft_cmd(
    name: Annotated[str, typer.Argument(help="The event.")],
    ai: Annotated[
        list[str] | None,
        typer.Option(
            "--ai",
            help="An AI of the pool: NAME=WEIGHTCLASS (lightweight, "
            "midweight or heavyweight; repeatable).",
        ),
    ] = None,
    roster: Annotated[
        Path | None,
        typer.Option(help="The pool from a runner roster CSV (its AIs and weight classes)."),
    ] = None,
    picks: Annotated[int, typer.Option("--picks", help="AIs each team drafts.", min=1)] = 2,
    prefer: Annotated[
        list[str] | None,
        typer.Option(
            help="A team's wishes, most wanted first: TEAM=AI,AI (repeatable; the "
            "rest of the pool after them, in its order)."
        ),
    ] = None,
    one_per_class: Annotated[
        bool,
        typer.Option(
            "--one-per-class/--any-class",
            help="A team takes no second AI of a weight class it has.",
        ),
    ] = True,
    db: DbOption = None,
) -> None:
    """Draft AI teammates for the next round (QANTA 2026): by reverse standings (the last
    team picks first), snaking back up in each next round of picks. The standings are the
    event's finished matches (wins, then points). The draft is printed and kept in the
    event's record, in order."""
    from sqlmodel import Session

    from grace_arena.core.config import WEIGHT_CLASSES
    from grace_arena.core.draft import DraftError, draft, standings_order
    from grace_arena.model.outputs import OutputsError, read_roster
    from grace_arena.record.models import ArenaEventRow

    pool: dict[str, str] = {}
    for spec in ai or []:
        label, _, weight = spec.partition("=")
        if not label or weight not in WEIGHT_CLASSES:
            raise typer.BadParameter(
                f"{spec!r}: NAME=WEIGHTCLASS, a class of {', '.join(WEIGHT_CLASSES)}",
                param_hint="--ai",
            )
        pool[label] = weight
    if roster is not None:
        try:
            entries = read_roster(roster)
        except OutputsError as exc:
            raise typer.BadParameter(str(exc), param_hint="--roster") from None
        for entry in entries:
            if entry.weight_class is None:
                raise typer.BadParameter(f"{entry.name} has no weight class",
                                         param_hint="--roster")  # fmt: skip
            pool[entry.name] = entry.weight_class
    if not pool:
        raise typer.BadParameter("give the pool: --ai NAME=WEIGHTCLASS or --roster FILE")
    wishes: dict[str, list[str]] = {}
    for spec in prefer or []:
        team, _, names = spec.partition("=")
        if not team or not names:
            raise typer.BadParameter(f"{spec!r}: TEAM=AI,AI", param_hint="--prefer")
        wishes[team] = [n.strip() for n in names.split(",") if n.strip()]
    url = existing_db(db)
    row, engine, matches = _event_matches(url, name)
    standing = standings_order(_results(matches))
    try:
        made = draft(standing, pool, rounds=picks, preferences=wishes,
                     one_per_class=one_per_class)  # fmt: skip
    except DraftError as exc:
        raise _fail(str(exc)) from exc
    record = {
        "standings": standing,
        "pool": pool,
        "picks": [{"number": p.number, "round": p.round, "team": p.team, "ai": p.ai} for p in made],
    }
    with Session(engine) as session:
        stored = session.get(ArenaEventRow, row.id)
        assert stored is not None
        drafts = [*stored.meta.get("ai_drafts", []), record]
        stored.meta = {**stored.meta, "ai_drafts": drafts}
        session.add(stored)
        session.commit()
    console = _console()
    console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
    console.print(f"draft {len(drafts)} of {name}: standings {', '.join(standing)}",
                  highlight=False, markup=False)  # fmt: skip
    for p in made:
        console.print(f"  {p.number:>2}. round {p.round}  {p.team:<12} {p.ai} ({pool[p.ai]})",
                      highlight=False, markup=False)  # fmt: skip


@event_app.command("qanta-stats")
def qanta_stats_cmd(
    name: Annotated[str, typer.Argument(help="The event (or a match's own event).")],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOption = None,
) -> None:
    """QANTA 2026's statistics tables of an event's matches: tossups per human and AI
    player (with the AI's weight class), bonus strategy by team (own, consult, abstain:
    parts, right, accuracy, points, per part), AI turns by mode and K, and every setting."""
    import dataclasses
    import json

    from grace_arena.core.qanta_stats import qanta_tables, render

    url = existing_db(db)
    _, _, matches = _event_matches(url, name)
    tables = qanta_tables(matches)
    if json_out:
        typer.echo(json.dumps(dataclasses.asdict(tables), indent=2, default=str))
        return
    typer.echo(render(tables), nl=False)
