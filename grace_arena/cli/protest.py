"""``grace-arena protest ...``: the TD's protests and corrections, against the record.

A protest filed in a match (from the moderator's screen) is resolved here after the game:
``protest list`` shows the open ones with what upholding each would do to the result,
``protest resolve`` upholds or denies one (with who decided and why), ``protest cycles`` lists
a match's rulings in force and ``protest correct`` corrects one. Each is an event of the
match, written through the match's lease: a match a server still serves is resolved once its
room let it go (the command says who serves it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from grace_arena.cli.groups import command_group
from grace_arena.cli.options import DbOption, existing_db, redacted
from grace_arena.cli.root import app

protest_app = command_group(
    help="Protests and corrections of a match's cycles (the TD's): list, resolve, correct.",
    no_args_is_help=True,
)
app.add_typer(protest_app, name="protest")

MatchArg = Annotated[int, typer.Argument(help="The match's id (grace-arena db matches).")]
ByOption = Annotated[
    str, typer.Option("--by", help="Who decides (the TD's name): kept with the decision.")
]
ReasonOption = Annotated[str, typer.Option("--reason", help="Why: kept with the decision.")]


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


def _store(db: str | None) -> Any:
    from grace_arena.record.db import open_engine
    from grace_arena.record.store import MatchStore

    url = existing_db(db)
    typer.echo(f"record: {redacted(url)}")
    return MatchStore(open_engine(url))


@contextmanager
def _leased(store: Any, match_id: int) -> Iterator[Any]:
    """The match opened for writing under its lease (taken, then given back), as a server
    would: nobody else writes it meanwhile."""
    from grace_arena.record import lease
    from grace_arena.record.errors import RecordError

    if store.match_row(match_id) is None:
        raise _fail(f"no match {match_id} in the record")
    holder = lease.Holder.this_process()
    try:
        taken = lease.acquire(store.engine, match_id, holder)
    except lease.LeaseHeld as exc:
        raise _fail(f"{exc}: resolve it once its room let it go (the match over and its "
                    "room closed, or the server stopped)") from None  # fmt: skip
    except RecordError as exc:
        raise _fail(str(exc)) from None
    try:
        yield store.open(match_id, claim=taken.claim)
    finally:
        lease.release(store.engine, holder, [match_id])


def _names(state: Any) -> dict[str, str]:
    return {t.id: t.name for t in state.config.teams}


@protest_app.command("list")
def list_protests(
    match: Annotated[
        list[int] | None, typer.Option("--match", "-m", help="Only this match (repeatable).")
    ] = None,
    event: Annotated[str | None, typer.Option(help="Only the matches of this event.")] = None,
    every: Annotated[
        bool, typer.Option("--all", help="Resolved protests too, with their decisions.")
    ] = False,
    db: DbOption = None,
) -> None:
    """List the open protests (or --all) of the record's matches: who protested what, the
    answer given, why, and whether upholding it would change the result."""
    from grace_arena.core import protests
    from grace_arena.core.match import Match
    from grace_arena.record.schedule import load_plan

    store = _store(db)
    if event is not None:
        try:
            plan = load_plan(store.engine, event)
        except Exception as exc:  # an unknown event: its own words
            raise _fail(str(exc)) from None
        ids = [g.match_id for g in plan.games if g.match_id is not None]
    else:
        ids = match or [row.id for row in store.matches()]
    shown = 0
    for match_id in ids:
        events = store.events(match_id)
        if not events:
            raise _fail(f"no match {match_id} in the record")
        state = Match.replay(events).state
        for p in protests.protests(state):
            if p.open or every:
                typer.echo(
                    f"match {match_id}: {protests.describe_protest(state, p, _names(state))}"
                )
                shown += 1
    if not shown:
        typer.echo("no open protests" if not every else "no protests")


@protest_app.command("resolve")
def resolve(
    match: MatchArg,
    protest: Annotated[int, typer.Argument(help="The protest's number (protest list).")],
    upheld: Annotated[
        bool | None,
        typer.Option(
            "--upheld/--denied",
            help="Upheld: the ruling protested is reversed, and the score with it. Denied: "
            "it stands.",
            show_default=False,
        ),
    ] = None,
    by: ByOption = "TD",
    reason: ReasonOption = "",
    db: DbOption = None,
) -> None:
    """Resolve a protest of a match: --upheld or --denied, --by the TD, --reason why."""
    from grace_arena.core import protests
    from grace_arena.core.commands import ResolveProtest
    from grace_arena.core.errors import IllegalCommand

    if upheld is None:
        raise _fail("say --upheld or --denied")
    store = _store(db)
    with _leased(store, match) as rm:
        before = dict(rm.match.scores)
        command = ResolveProtest(protest=protest, decision="upheld" if upheld else "denied",
                                 by=by, reason=reason)  # fmt: skip
        try:
            rm.handle(command, now=_now())
        except IllegalCommand as exc:
            raise _fail(str(exc)) from None
        state = rm.match.state
        p = state.officiating.protests[protest]
        typer.echo(f"match {match}: {protests.describe_protest(state, p, _names(state))}")
        typer.echo(f"score: {_score(before, state)} → {_score(rm.match.scores, state)}")


@protest_app.command("cycles")
def cycles(match: MatchArg, db: DbOption = None) -> None:
    """List a match's cycles with their rulings in force, each with the number that
    ``protest correct`` takes."""
    from grace_arena.core import protests
    from grace_arena.core.match import Match

    store = _store(db)
    events = store.events(match)
    if not events:
        raise _fail(f"no match {match} in the record")
    state = Match.replay(events).state
    names = _names(state)
    for c in protests.cycles(state):
        head = f"tossup {c.number} ({c.tossup_id})" + (" thrown out" if c.thrown_out else "")
        typer.echo(head)
        for r in c.rulings:
            typer.echo(f"  {_ruling_line(state, r, names)}")


def _ruling_line(state: Any, r: Any, names: dict[str, str]) -> str:
    team = names.get(r.team, r.team)
    if r.part is None:
        who = f"{state.players.get(r.team, {}).get(r.player, r.player)} ({team})"
        what = "tossup"
    else:
        who = team
        what = f"part {r.part + 1}" + (" bounceback" if r.bounceback else "")
    mark = f" (corrects {r.amends})" if r.corrected else ""
    return f"[{r.seq}] {what}: {who} {r.ruling} {r.points:+d}{mark}"


@protest_app.command("correct")
def correct(
    match: MatchArg,
    seq: Annotated[int, typer.Argument(help="The ruling's number (protest cycles).")],
    ruling: Annotated[
        str | None, typer.Option(help="The ruling it should have been: correct or incorrect.")
    ] = None,
    player: Annotated[
        str | None, typer.Option(help="Who buzzed, by player id (a tossup's ruling).")
    ] = None,
    reason: ReasonOption = "",
    db: DbOption = None,
) -> None:
    """Correct a ruling in force of any cycle (the TD's correction): --ruling, or --player
    for who buzzed. The ruling corrected stays in the record, superseded."""
    from grace_arena.core import protests
    from grace_arena.core.commands import CorrectRuling
    from grace_arena.core.errors import IllegalCommand
    from grace_arena.core.events import Ruling

    if ruling is None and player is None:
        raise _fail("say what to correct: --ruling correct|incorrect, or --player")
    if ruling is not None and ruling not in (Ruling.CORRECT, Ruling.INCORRECT):
        raise _fail(f"--ruling must be correct or incorrect, not {ruling!r}")
    store = _store(db)
    with _leased(store, match) as rm:
        before = dict(rm.match.scores)
        command = CorrectRuling(seq=seq, ruling=Ruling(ruling) if ruling else None,
                                player=player, by="td", reason=reason)  # fmt: skip
        try:
            events = rm.handle(command, now=_now())
        except IllegalCommand as exc:
            raise _fail(str(exc)) from None
        state = rm.match.state
        made = next(r for r in protests.rulings_in_force(state) if r.seq == events[-1].seq)
        typer.echo(f"match {match}: {_ruling_line(state, made, _names(state))}")
        typer.echo(f"score: {_score(before, state)} → {_score(rm.match.scores, state)}")


def _score(scores: dict[str, int], state: Any) -> str:
    names = _names(state)
    return ", ".join(f"{names.get(t, t)} {p}" for t, p in scores.items())


def _now() -> float:
    import time

    return time.time()
