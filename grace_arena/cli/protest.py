"""``grace-arena protest ...``: the TD's protests and corrections, against the record.

A protest filed in a match (from the moderator's screen) is resolved here after the game:
``protest list`` shows the open ones with what upholding each would do to the result,
``protest resolve`` upholds or denies one (with who decided and why), ``protest cycles`` lists
a match's rulings in force and ``protest correct`` corrects one. Each is an event of the
match, written through the match's lease, so that one process writes a match at a time: a
match no server serves is written here; a match a server still serves is resolved through that
server (its TD route, at the address its lease records, with the TD's token ``serve``
printed), which writes it as it writes every event of the match. A correction of a served
match is the moderator's (``C`` on their screen), or made here once its room let it go.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from grace_arena.cli.groups import command_group
from grace_arena.cli.options import DbOption, existing_db, given_secret, redacted
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
TdTokenOption = Annotated[
    str | None,
    typer.Option(
        "--td-token",
        envvar="GRACE_ARENA_TD_TOKEN",
        help="The TD's token that serve printed: a match a server still serves is resolved "
        "through that server with it. Visible to every user of this machine (ps) when given "
        "here: set GRACE_ARENA_TD_TOKEN or give --td-token-file instead.",
        show_default=False,
    ),
]
TdTokenFileOption = Annotated[
    Path | None,
    typer.Option(
        "--td-token-file",
        help="A file whose first line is the TD's token (kept from ps).",
        show_default=False,
    ),
]

#: How long the command waits for the server that serves the match to answer.
SERVER_TIMEOUT = 30.0


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


def _store(db: str | None) -> Any:
    from grace_arena.record.db import open_engine
    from grace_arena.record.store import MatchStore

    url = existing_db(db)
    typer.echo(f"record: {redacted(url)}")
    return MatchStore(open_engine(url))


class _ServedElsewhere(Exception):
    """The match's lease is held by a live server (``LeaseHeld``, as ``held``)."""

    def __init__(self, held: Any) -> None:
        super().__init__(str(held))
        self.held = held


@contextmanager
def _leased(store: Any, match_id: int, *, served: str | None = None) -> Iterator[Any]:
    """The match opened for writing under its lease (taken, then given back), as a server
    would: nobody else writes it meanwhile. A match a live server serves is refused, saying
    ``served`` (what to do instead); without it, :class:`_ServedElsewhere` is raised for the
    caller to go through that server."""
    from grace_arena.record import lease
    from grace_arena.record.errors import RecordError

    if store.match_row(match_id) is None:
        raise _fail(f"no match {match_id} in the record")
    holder = lease.Holder.this_process()
    try:
        taken = lease.acquire(store.engine, match_id, holder)
    except lease.LeaseHeld as exc:
        if served is None:
            raise _ServedElsewhere(exc) from None
        raise _fail(f"{exc}: {served}") from None
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
    ctx: typer.Context,
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
    td_token: TdTokenOption = None,
    td_token_file: TdTokenFileOption = None,
    db: DbOption = None,
) -> None:
    """Resolve a protest of a match: --upheld or --denied, --by the TD, --reason why. A match
    a server still serves is resolved through that server, with the TD's token it printed
    (GRACE_ARENA_TD_TOKEN, or --td-token-file)."""
    from grace_arena.core.commands import ResolveProtest
    from grace_arena.core.errors import IllegalCommand

    if upheld is None:
        raise _fail("say --upheld or --denied")
    token = given_secret(ctx, td_token, td_token_file, param="td_token", option="--td-token",
                         envvar="GRACE_ARENA_TD_TOKEN",
                         file_option="--td-token-file")  # fmt: skip
    decision = "upheld" if upheld else "denied"
    store = _store(db)
    # (twice at most: a room that let its match go between the two asks is written here)
    for attempt in (1, 2):
        try:
            with _leased(store, match) as rm:
                before = dict(rm.match.scores)
                command = ResolveProtest(protest=protest, decision=decision, by=by,
                                         reason=reason)  # fmt: skip
                try:
                    rm.handle(command, now=_now())
                except IllegalCommand as exc:
                    raise _fail(str(exc)) from None
                _say_resolved(match, protest, before, rm.match.state)
                return
        except _ServedElsewhere as served:
            before = _replayed(store, match).scores
            if _through_server(served.held, match, protest, decision, by, reason, token,
                               retry=attempt == 1):  # fmt: skip
                _say_resolved(match, protest, dict(before), _replayed(store, match).state)
                return


def _say_resolved(match: int, protest: int, before: dict[str, int], state: Any) -> None:
    from grace_arena.core import protests

    p = state.officiating.protests[protest]
    typer.echo(f"match {match}: {protests.describe_protest(state, p, _names(state))}")
    typer.echo(f"score: {_score(before, state)} → {_score(dict(state.game.scores), state)}")


def _replayed(store: Any, match_id: int) -> Any:
    from grace_arena.core.match import Match

    return Match.replay(store.events(match_id))


def _through_server(
    held: Any,
    match: int,
    protest: int,
    decision: str,
    by: str,
    reason: str,
    token: str | None,
    *,
    retry: bool,
) -> bool:
    """Resolve the protest through the server that holds the match's lease (its TD route):
    True once it did, False when that server no longer serves the match (its room let it go
    meanwhile: the caller takes the lease, ``retry``); else a clear error."""
    import json
    import urllib.error
    import urllib.parse
    import urllib.request

    why_here = "or resolve it here once its room let it go (the match over and its room "\
               "closed, or the server stopped)"  # fmt: skip
    if not token:
        raise _fail(f"{held}: give the TD's token that serve printed to resolve it through "
                    f"that server (set GRACE_ARENA_TD_TOKEN, or --td-token-file FILE), "
                    f"{why_here}")  # fmt: skip
    url = held.holder.url
    if not url:
        raise _fail(f"{held}, whose address the record does not know: resolve it with that "
                    f"server's TD route (POST /api/matches/{match}/protests/{protest}), "
                    f"{why_here}")  # fmt: skip
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise _fail(f"{held}, at {url!r}: not an http(s) address; resolve it with that "
                    f"server's TD route, {why_here}")  # fmt: skip
    route = f"{url.rstrip('/')}/api/matches/{match}/protests/{protest}"
    typer.echo(f"match {match} is served at {url}: resolving through that server")
    body = json.dumps({"decision": decision, "by": by, "reason": reason}).encode()
    request = urllib.request.Request(
        route, data=body, method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json",
                 "Authorization": f"Bearer {token}"},
    )  # fmt: skip

    class _NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # the token goes to this server only
            return None

    try:
        opener = urllib.request.build_opener(_NoRedirect)
        with opener.open(request, timeout=SERVER_TIMEOUT) as reply:
            reply.read()
        return True
    except urllib.error.HTTPError as exc:
        try:
            detail = json.load(exc).get("detail", exc.reason)
        except (ValueError, AttributeError):
            detail = exc.reason
        if exc.code == 404 and retry:  # its room let the match go a moment ago
            return False
        if exc.code == 401:
            raise _fail(f"the server at {url} refused the TD's token ({detail}): give the "
                        "one it printed at its start") from None  # fmt: skip
        if 300 <= exc.code < 400:  # not followed: a token is not sent on to another address
            raise _fail(f"the server at {url} answered with a redirect to "
                        f"{exc.headers.get('Location')!r}, not followed (the TD's token goes "
                        "to the match's server only): give serve --public-url the address it "
                        "answers at") from None  # fmt: skip
        if isinstance(detail, list):  # a body the route refused (422): its first complaint
            detail = "; ".join(str(d.get("msg", d)) for d in detail[:1])
        raise _fail(f"the server at {url} did not resolve it: {detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        why = getattr(exc, "reason", exc)
        raise _fail(f"{held}, which does not answer at {url} ({why}): if it stopped, this "
                    "command writes the record itself once its lease lapses; else check that "
                    "this machine reaches that address") from None  # fmt: skip


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
    served = (
        "correct it on the moderator's screen (C) while it is served, or here once its room "
        "let it go (the match over and its room closed, or the server stopped)"
    )
    with _leased(store, match, served=served) as rm:
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
