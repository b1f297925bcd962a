"""A whole event, scripted against a real server: 4 teams (2 human, 2 model players) over 3
rounds in 2 rooms. The standings add up to the rulings, and every match is exported."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import jsonschema
import pytest
from backends import on_both_backends
from event_helpers import code_of, event_server, make_event, rehello, room_moderator, room_player
from live import Client, clients
from sqlmodel import Session, select
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.record.db import make_engine
from grace_arena.record.models import RulingRow
from grace_arena.record.schedule import load_plan

QBJ_SCHEMA = Path(__file__).parent / "fixtures" / "analysis" / "qbj_match.schema.json"


def read_on(mod: Client) -> None:
    """Reveal clue by clue until the tossup is over; a model player that buzzes meanwhile is
    ruled as the judge suggests."""
    while True:
        state = mod.state()
        phase = state["match"]["phase"]
        if phase in ("answered", "dead"):
            return
        if phase == "buzzed":
            accept = state["floor"].get("suggestion") == "accept"
            mod.send(type="rule", ruling="correct" if accept else "incorrect")
        elif phase == "reading":
            mod.send(type="step", unit="clue")


def play_match(mod: Client, phones: dict[str, Client], teams: list[str]) -> None:
    """Two tossups. The first: a human team's player buzzes at once, ruled correct. The second:
    that player buzzes and is ruled incorrect (a neg), then the reading goes on (a model may
    buzz: ruled as the judge suggests) until the tossup is over."""
    humans = [t for t in teams if t in phones]
    buzzer = phones[humans[0]]
    for ruling in ("correct", "incorrect"):
        mod.send(type="start_tossup")
        mod.state(lambda s: s["match"]["phase"] == "reading")
        mod.send(type="pause")
        mod.state(lambda s: s["match"]["paused"])
        mod.send(type="step", unit="clue")
        buzzer.drain(0.05)
        buzzer.send(type="buzz")
        assert buzzer.wait("buzz_result")["outcome"] == "won"
        mod.state(lambda s: s["floor"] is not None)
        mod.send(type="rule", ruling=ruling)
        if ruling == "incorrect":
            mod.send(type="resume")
            read_on(mod)
        else:
            mod.state(lambda s: s["match"]["phase"] == "answered")
    mod.send(type="end_match")


@on_both_backends
@pytest.mark.slow
def test_a_scripted_event_of_three_rounds_in_two_rooms(db_url, tmp_path) -> None:
    plan = make_event(
        db_url, defaults={"answer_time": None, "wpm": 600, "buzz_window": 0.3}, tossups=2
    )
    codes = {name: code_of(plan, name) for name in ("1", "2")}
    with event_server(db_url) as server:
        events = server.events
        tokens = {n: server.run(events.moderator_token(events.rooms[c])) for n, c in codes.items()}
        mods = {n: room_moderator(server, c) for n, c in codes.items()}
        # round 1 puts Red in room 1 and Blue in room 2: their phones join there
        phones = {
            "red": room_player(server, codes["1"], "red", "Alice"),
            "blue": room_player(server, codes["2"], "blue", "Bob"),
        }
        with clients(*mods.values(), *phones.values()):
            for phone in phones.values():
                phone.state()
            at = {"1": 1, "2": 1}  # the round of the match each moderator is in
            for rnd in (1, 2, 3):
                plan = load_plan(server.arena.engine, "night")
                games = [g for g in plan.games if g.round == rnd]
                for game in games:
                    room = game.room_id
                    mod = mods[room]
                    if at[room] != rnd:  # the room moved on once its teams were free
                        mod.wait("next_match")
                        rehello(mod, codes[room], role="moderator", token=tokens[room])
                        mod.wait("welcome")
                        assert mod.state()["event"]["round"] == rnd
                        at[room] = rnd
                    here = {t: phones[t] for t in game.teams if t in phones}
                    for phone in here.values():  # make sure the phone is seated in this match
                        _seat(phone, codes[room], rnd)
                    play_match(mod, here, list(game.teams))
                    mod.state(lambda s: s["match"]["phase"] == "ended")
            standings = json.load(
                urllib.request.urlopen(f"{server.http_url}/api/events/night/standings")
            )
    engine = make_engine(db_url)
    plan = load_plan(engine, "night")
    assert all(g.ended for g in plan.games if not g.bye)
    # the standings add up to the rulings in force
    with Session(engine) as session:
        rulings = session.exec(select(RulingRow).where(RulingRow.undone_seq.is_(None))).all()
    points: dict[str, int] = {}
    for r in rulings:
        points[r.team_id] = points.get(r.team_id, 0) + r.points
    rows = {r["team"]: r for r in standings["rows"]}
    assert {t: rows[t]["points"] for t in rows} == {t.id: points.get(t.id, 0) for t in plan.teams}
    assert sum(r["won"] + r["lost"] + r["tied"] for r in rows.values()) == 2 * 5
    assert rows["red"]["played"] == rows["blue"]["played"] == 3
    assert rows["red"]["correct"] >= 3 and rows["red"]["negs"] >= 3
    assert rows["red"]["tossups_heard"] == 6
    # every match exported in QBJ, and the tournament file holds the rounds
    out = tmp_path / "qbj"
    result = CliRunner().invoke(
        app, ["export", "--format", "qbj", "--event", "night", "--out", str(out), "--db", db_url]
    )
    assert result.exit_code == 0, result.output
    match_files = sorted(out.glob("match-*.qbj"))
    assert len(match_files) == 5
    schema = json.loads(QBJ_SCHEMA.read_text())
    for path in match_files:
        jsonschema.validate(json.loads(path.read_text()), schema)
    tournament = json.loads((out / "night.qbj").read_text())
    kinds = [o["type"] for o in tournament["objects"]]
    assert kinds.count("Tournament") == 1 and kinds.count("Match") == 5
    (event,) = [o for o in tournament["objects"] if o["type"] == "Tournament"]
    assert [len(r["matches"]) for r in event["phases"][0]["rounds"]] == [2, 1, 2]
    # the registrations are written in the tournament, with their teams (MODAQ reads them
    # there, and does not follow references)
    assert len(event["registrations"]) == 4
    registered = {team["id"]: team for r in event["registrations"] for team in r["teams"]}
    # (YellowFruit's ids for teams, by which its Import Games finds them)
    assert set(registered) == {f"Team_{t.name}" for t in plan.teams}
    players = {p["id"]: p for team in registered.values() for p in team["players"]}
    for match in (o for o in tournament["objects"] if o["type"] == "Match"):
        for entry in match["match_teams"]:  # every reference resolves to a registered team
            entry["team"] = registered[entry["team"]["$ref"]]
            for mp in entry["match_players"]:  # ... and player
                mp["player"] = players[mp["player"]["$ref"]]
            for lineup in entry["lineups"]:
                lineup["players"] = [players[p["$ref"]] for p in lineup["players"]]
        for question in match["match_questions"]:
            for buzz in question["buzzes"]:
                buzz["team"] = registered[buzz["team"]["$ref"]]
                buzz["player"] = players[buzz["player"]["$ref"]]
        jsonschema.validate(match, schema)


def _seat(phone: Client, code: str, rnd: int) -> None:
    """Follow the phone until it is seated in round ``rnd``: it moves on when its room's
    match ends (``next_match``), waits, or is sent to another room."""
    kinds = ("state", "next_match", "waiting")
    seen = [m for m in phone.received if m["type"] in kinds]
    message = seen[-1] if seen else phone.wait(lambda m: m["type"] in kinds, 15)
    while True:
        seated = message["type"] == "state" and message["match"]["phase"] != "ended"
        if seated and (message.get("event") or {}).get("round") == rnd:
            return
        if message["type"] == "next_match":
            rehello(phone, message["join_code"])
        message = phone.wait(lambda m: m["type"] in kinds, 15)
