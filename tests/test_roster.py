"""An event's roster: players registered by the organiser, taken on a phone only with their
claim code; walk-ins where the event takes them, so many per address; the event's limit
counting the roster and the players present; players removed by the organiser or the TD."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from backends import on_both_backends
from event_helpers import code_of, event_server, make_event
from live import Client, clients
from websockets.exceptions import ConnectionClosed

from grace_arena.record.db import make_engine
from grace_arena.record.roster import issue_codes


def hello(server, code: str) -> Client:
    client = Client(server.ws_url)
    client.send(type="hello", role="player", join_code=code)
    client.welcome = client.wait("welcome")  # type: ignore[attr-defined]
    return client


def join(client: Client, team: str, name: str, code: str | None = None) -> dict:
    """The reply to a join: ``joined``, or the error."""
    client.send(type="join", team=team, name=name, **({"code": code} if code else {}))
    return client.wait(lambda m: m["type"] == "joined" or m.get("in_reply_to") == "join")


def codes_of(db_url: str, event_id: int) -> dict[str, str]:
    engine = make_engine(db_url)
    try:
        return {i.name: i.code for i in issue_codes(engine, event_id)}
    finally:
        engine.dispose()


def http(server, method: str, path: str, token: str | None) -> tuple[int, object]:
    request = urllib.request.Request(
        f"{server.http_url}{path}", method=method,
        headers={**({"Authorization": f"Bearer {token}"} if token else {})},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@on_both_backends
def test_a_name_of_the_roster_is_taken_only_with_its_code(db_url):
    plan = make_event(db_url, players=[("red", "Alice"), ("blue", "Bob")])
    codes = codes_of(db_url, plan.id)
    alice_id = next(p.id for p in plan.players if p.name == "Alice")
    room1 = code_of(plan, "1")
    with event_server(db_url) as server:
        stranger = hello(server, room1)
        with clients(stranger):
            # the join page lists each team's roster; the event takes no walk-ins
            teams = {t["id"]: t["roster"] for t in stranger.welcome["teams"]}
            assert teams == {"red": ["Alice"], "blue": ["Bob"]}
            assert stranger.welcome["walk_ins"] is False
            # a stranger with the room's code types Alice's name before she arrives
            refused = join(stranger, "red", "alice")
            assert (refused["code"], refused["type"]) == ("unauthorized", "error")
            assert "claim code" in refused["message"]
            refused = join(stranger, "red", "Alice", code="AAAA-AAAA")
            assert refused["code"] == "unauthorized"
            # nor a name of their own: the event plays its roster
            refused = join(stranger, "red", "Mallory")
            assert refused["code"] == "not_allowed"
            assert "roster" in refused["message"]
        alice = hello(server, room1)
        with clients(alice):
            joined = join(alice, "red", "ALICE", code=codes["Alice"].lower().replace("-", ""))
            assert joined["type"] == "joined"
            assert (joined["player"], joined["name"]) == (alice_id, "Alice")
            alice.state()
        # the match's roster has Alice once; no Mallory was registered
        live = server.room()
        assert list(live.match.state.players["red"].values()) == ["Alice"]
    engine = make_engine(db_url)
    try:
        from grace_arena.record.schedule import load_plan

        assert sorted(p.name for p in load_plan(engine, plan.id).players) == ["Alice", "Bob"]
    finally:
        engine.dispose()


@on_both_backends
def test_one_address_cannot_fill_the_event_and_names_gone_leave_their_place(db_url):
    plan = make_event(db_url)  # no roster: walk-ins allowed
    room1 = code_of(plan, "1")
    settings = {"max_players_per_event": 4, "new_names_per_address": 6}
    with event_server(db_url, **settings) as server:
        # one address types new names, one connection each: four places, then full
        spam = [hello(server, room1) for _ in range(5)]
        with clients(*spam):
            replies = [join(c, "red", f"Bot {i}") for i, c in enumerate(spam)]
            assert [r["type"] for r in replies] == ["joined"] * 4 + ["error"]
            assert "full" in replies[4]["message"]
        # they left: their places are free again (the event counts players present)
        more = [hello(server, room1) for _ in range(3)]
        with clients(*more):
            replies = [join(c, "blue", f"Real {i}") for i, c in enumerate(more)]
            # two more new names from this address, then its limit of new names
            assert [r["type"] for r in replies] == ["joined", "joined", "error"]
            assert "no more new names from this address" in replies[2]["message"]
    # after a restart a real player joins (the event is not full of names once typed)
    with event_server(db_url, **settings) as server:
        phone = hello(server, room1)
        with clients(phone):
            assert join(phone, "red", "Carol")["type"] == "joined"


@on_both_backends
def test_the_organiser_and_the_td_remove_players(db_url):
    plan = make_event(db_url)
    room1 = code_of(plan, "1")
    with event_server(db_url) as server:
        troll = hello(server, room1)
        with clients(troll):
            joined = join(troll, "red", "Troll")
            assert joined["type"] == "joined"
            troll.state()
            base = "/api/events/night/players"
            assert http(server, "GET", base, None)[0] == 401
            status, players = http(server, "GET", base, server.events.tokens.td())
            assert status == 200
            assert [(p["name"], p["registered"]) for p in players] == [("Troll", False)]
            status, removed = http(
                server, "DELETE", f"{base}/{joined['player']}", server.events.tokens.server()
            )
            assert (status, removed["removed"]) == (200, True)
            with pytest.raises(ConnectionClosed) as closed:  # its phone is closed
                troll.wait(lambda m: False, timeout=10)
            assert "removed" in closed.value.rcvd.reason
        # the token opens nothing; the name is free for someone else
        back = Client(server.ws_url)
        with clients(back):
            back.send(type="hello", role="player", join_code=room1, token=joined["token"])
            assert back.wait("error")["code"] == "unauthorized"
        other = hello(server, room1)
        with clients(other):
            again = join(other, "red", "Troll")
            assert again["type"] == "joined" and again["player"] != joined["player"]
            # the organiser (or the TD) issues a code: the walk-in is on the roster now
            status, issued = http(
                server, "POST", f"{base}/{again['player']}/code", server.events.tokens.td()
            )
            assert status == 200 and issued["name"] == "Troll"
        thief = hello(server, room1)
        with clients(thief):
            assert join(thief, "red", "Troll")["code"] == "unauthorized"
            assert join(thief, "red", "Troll", code=issued["code"])["type"] == "joined"


def test_a_walk_ins_name_typed_again_is_the_same_player(db_url):
    plan = make_event(db_url)
    room1 = code_of(plan, "1")
    with event_server(db_url) as server:
        first = hello(server, room1)
        with clients(first):
            joined = join(first, "blue", "Bob")
        second = hello(server, room1)
        with clients(second):
            again = join(second, "blue", " BOB")
            assert (again["player"], again["name"]) == (joined["player"], "Bob")


@on_both_backends
def test_the_cli_registers_a_roster_from_a_csv_prints_codes_and_manages_it(db_url, tmp_path):
    import re

    from typer.testing import CliRunner

    from grace_arena.cli import app
    from grace_arena.record.db import upgrade
    from grace_arena.record.schedule import load_plan

    upgrade(db_url)
    runner = CliRunner()
    (tmp_path / "bad.csv").write_text("who,what\nRed,Ann\n")
    bad = runner.invoke(
        app, ["event", "create", "x", "--roster", str(tmp_path / "bad.csv"), "--db", db_url]
    )
    assert bad.exit_code == 2 and "must name the columns 'team' and 'player'" in bad.output
    (tmp_path / "teams.csv").write_text("\ufeffTeam;Player\nRed;Ann\nRed;Al\nBlue;Bo\n\n")
    created = runner.invoke(
        app, ["event", "create", "cup", "--roster", str(tmp_path / "teams.csv"), "--db", db_url]
    )
    assert created.exit_code == 0, created.output
    codes = dict(re.findall(r"^  \w+: (\w+)  ([A-Z0-9]{4}-[A-Z0-9]{4})", created.output, re.M))
    assert sorted(codes) == ["Al", "Ann", "Bo"]
    engine = make_engine(db_url)
    plan = load_plan(engine, "cup")
    assert sorted((p.team, p.name, p.registered) for p in plan.players) == [
        ("blue", "Bo", True), ("red", "Al", True), ("red", "Ann", True),
    ]  # fmt: skip
    # an event with a roster takes no walk-ins unless told
    from grace_arena.record.roster import walk_ins_allowed

    assert walk_ins_allowed(plan.meta, True) is False
    shown = runner.invoke(
        app,
        ["event", "roster", "cup", "--add", "blue:Cy", "--remove", "Red:al", "--code", "Red:Ann",
         "--db", db_url],
    )  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert "walk-ins refused" in shown.output
    assert re.search(r"Al \(p-\w+\): removed", shown.output)
    new = dict(re.findall(r"^  \w+: (\w+)  ([A-Z0-9]{4}-[A-Z0-9]{4})", shown.output, re.M))
    assert sorted(new) == ["Ann", "Cy"] and new["Ann"] != codes["Ann"]
    assert sorted(p.name for p in load_plan(engine, "cup").players) == ["Ann", "Bo", "Cy"]
    missing = runner.invoke(app, ["event", "roster", "cup", "--remove", "Red:Zed", "--db", db_url])
    assert missing.exit_code == 1 and "no player 'Red:Zed'" in missing.output
    # the code printed is the one that claims the name on a phone (the old one no longer)
    from sqlmodel import Session

    from grace_arena.record.models import EventPlayerRow
    from grace_arena.record.roster import claim_matches
    from grace_arena.record.store import find_player

    with Session(engine) as session:
        ann = session.get(EventPlayerRow, (plan.id, find_player(session, plan.id, "red", "ann")))
    assert claim_matches(new["Ann"], ann.claim_sha256)
    assert not claim_matches(codes["Ann"], ann.claim_sha256)
    # an event may take walk-ins beside its roster
    opened = runner.invoke(
        app,
        ["event", "create", "open", "--roster", str(tmp_path / "teams.csv"), "--walk-ins",
         "--db", db_url],
    )  # fmt: skip
    assert opened.exit_code == 0, opened.output
    assert walk_ins_allowed(load_plan(engine, "open").meta, True) is True
    engine.dispose()
