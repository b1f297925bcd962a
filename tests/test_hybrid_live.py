"""Hybrid teams (QANTA 2026) in a live room: every screen sees the AI players with their
weight classes and modes; a captain's phone sets its AI's mode, a phone presses its semi AI's
key and the AI's answer is scored by its weight class, the team consults its AIs and sees all
their answers, the moderator mutes another team's AI; the record replays to the same scores
(both backends)."""

from __future__ import annotations

import time

from backends import on_both_backends
from live import Client, LiveServer, clients, moderator, player
from test_hybrid import _config

from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore
from grace_arena.server.app import Settings


def _ais(state: dict, team: str) -> dict[str, dict]:
    return {a["id"]: a for t in state["teams"] if t["id"] == team for a in t["ais"]}


@on_both_backends
def test_hybrid_teams_play_in_a_live_room(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    config = _config(lw={"t0": 2}, mw={"t1": 2}).model_copy(
        update={"reading_mode": "screen", "wpm": 30}
    )
    MatchStore(engine).create(config, now=time.time(), join_code="HYBRD")
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s")
    with LiveServer(settings) as server:
        server.run(server.events.room_by_code("HYBRD"))
        mod = moderator(server)
        red, blue = player(server, "red", "Ann"), player(server, "blue", "Bo")
        display = Client(server.ws_url)
        display.send(type="hello", role="display", join_code="HYBRD")
        with clients(mod, red, blue, display):
            shown = _ais(display.state(), "red")
            assert {i: (a["weight_class"], a["mode"], a["k"]) for i, a in shown.items()} == {
                "lw": ("lightweight", "autonomous", 1), "mw": ("midweight", "autonomous", 1)
            }  # fmt: skip
            red.send(type="ai_modes", modes={"lw": "semi"})
            red.state(lambda s: _ais(s, "red")["lw"]["mode"] == "semi")
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.send(type="step", unit="word")
            mod.send(type="step", unit="word")
            mod.send(type="step", unit="word")
            mod.state(lambda s: s["tossup"]["position"] >= 2)
            blue.send(type="press_ai", ai="lw")
            assert "not an AI player of team 'blue'" in blue.wait("error")["message"]
            red.send(type="press_ai", ai="lw")
            floor = mod.state(lambda s: s["floor"] is not None)["floor"]
            assert (floor["player"], floor["player_name"], floor["kind"]) == ("lw", "Lw", "model")
            assert floor["answer"] == "Carver"
            mod.send(type="rule", ruling="correct")
            state = mod.state(lambda s: s["match"]["phase"] == "bonus")
            assert {t["id"]: t["score"] for t in state["teams"]} == {"red": 10, "blue": 0}
            red.send(type="consult", part=1)
            seen = blue.state(lambda s: s["bonus"] and s["bonus"]["consulted"])["bonus"]
            assert seen["consulted"]["guess"] == "lw: part 0 · mw: part 0"
            shown = [
                m["event"]
                for m in blue.received
                if m["type"] == "event" and m["event"]["type"] == "ai_answers_shown"
            ]
            assert shown and all(
                set(a) == {"player", "model", "weight_class", "guess"} for a in shown[0]["answers"]
            )  # no verdict, no confidence
            red.send(type="answer", text="part 0", part=1)
            mod.state(lambda s: s["bonus"] and s["bonus"]["answer"] == "part 0")
            mod.send(type="rule", ruling="correct", part=1)
            state = mod.state(lambda s: s["bonus"] and s["bonus"]["part"] == 1)
            assert (state["bonus"]["parts"][0]["choice"], state["bonus"]["parts"][0]["points"]) == (
                "consult",
                7,
            )
            mod.send(type="abstain", part=2)
            mod.state(lambda s: s["match"]["phase"] == "answered")
            # the moderator mutes blue's heavyweight for the rest of the match
            mod.send(type="mute_ai", ai="hw", team="blue")
            state = display.state(lambda s: _ais(s, "blue")["hw"]["mode"] == "muted")
            live = {t["id"]: t["score"] for t in state["teams"]}
            assert live == {"red": 10 + 7 + 1, "blue": 0}
            blue.send(type="mute_ai", ai="hw")
            assert "muted already" in blue.wait("error")["message"]
            # the moderator hands Ann's buzz to the semi AI of her team (it has no guess here)
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            red.send(type="buzz")
            mod.state(lambda s: s["floor"] is not None)
            red.send(type="buzz_source", ai="lw")
            assert red.wait("error")["code"] == "not_allowed"  # the moderator's to do
            mod.send(type="buzz_source", ai="lw")
            floor = mod.state(lambda s: s["floor"] and s["floor"]["player"] == "lw")["floor"]
            assert floor["kind"] == "model"
            mod.send(type="rule", ruling="incorrect")
            state = mod.state(lambda s: s["floor"] is None and s["match"]["phase"] != "buzzed")
            live = {t["id"]: t["score"] for t in state["teams"]}
            match_id = server.room().rm.id
    events = MatchStore(engine).events(match_id)
    engine.dispose()
    assert Match.replay(events).scores == live
    assert [e.type for e in events if e.type.startswith("ai_")] == [
        "ai_modes_set", "ai_buzzed", "ai_answers_shown", "ai_muted", "ai_buzz_source_set",
    ]  # fmt: skip


@on_both_backends
def test_a_server_opens_a_qanta26_match_of_hybrid_teams_from_imported_outputs(db_url, tmp_path):
    """The set-up names each team's AI players by their models in the record (their outputs
    imported from runner CSVs, each with its weight class); a model not there is refused."""
    import urllib.error
    import urllib.request

    from live import new_match, two_teams
    from test_qanta26_event import _write_csvs

    from grace_arena.core.packet import load_packet
    from grace_arena.model.outputs import import_outputs, read_outputs
    from grace_arena.protocol import AiSetup, TeamSetup

    upgrade(db_url)
    engine = make_engine(db_url)
    sample = load_packet(SAMPLE_PACKET_PATH)
    for name, weight in (("alpha", "lightweight"), ("delta", "heavyweight")):
        files = _write_csvs(tmp_path, sample, name)
        import_outputs(engine, sample, name, [(str(p), read_outputs(p)) for p in files],
                       weight_class=weight)  # fmt: skip
    teams = [
        TeamSetup(id="red", name="Red", ais=[AiSetup(model="alpha", name="Alpha")]),
        TeamSetup(id="blue", name="Blue", ais=[AiSetup(model="delta")]),
    ]
    setup = two_teams(format="qanta26", teams=teams, wpm=30)
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup)
    with LiveServer(settings) as server:
        config = server.room().match.config
        assert config.rules.format == "qanta26" and config.rules.qanta is not None
        red = player(server, "red", "Ann")
        with clients(red):
            state = next(m for m in reversed(red.received) if m["type"] == "state")
            assert [(a["id"], a["name"], a["weight_class"]) for a in state["teams"][0]["ais"]] == [
                ("ai:alpha", "Alpha", "lightweight")
            ]
            assert state["teams"][1]["ais"][0]["weight_class"] == "heavyweight"
        # a model the record does not have is refused, by name
        bad = [TeamSetup(id="red", name="Red", ais=[AiSetup(model="nobody")]),
               TeamSetup(id="blue", name="Blue")]  # fmt: skip
        try:
            new_match(server, format="qanta26", teams=bad)
        except urllib.error.HTTPError as exc:
            assert exc.code in (400, 404, 422) and "nobody" in exc.read().decode()
        else:
            raise AssertionError("a match with an AI not in the record was made")
    engine.dispose()


def test_serve_refuses_an_ai_it_cannot_play_before_starting(tmp_path):
    from typer.testing import CliRunner

    from grace_arena.cli import app

    db = f"sqlite:///{tmp_path / 'record.db'}"
    runner = CliRunner()
    result = runner.invoke(app, ["serve", "--db", db, "--rules", "qanta26", "--ai", "red=nobody",
                                 "--port", "0"])  # fmt: skip
    assert result.exit_code == 2
    assert "no steps of model 'nobody'" in result.output and "model import" in result.output
    result = runner.invoke(app, ["serve", "--db", db, "--rules", "qanta26", "--ai", "green=x"])
    assert result.exit_code == 2 and "red=MODEL or blue=MODEL" in result.output
    result = runner.invoke(app, ["serve", "--db", db, "--rules", "qanta26", "--ai", "red=x:huge"])
    assert result.exit_code == 2 and "lightweight, midweight or heavyweight" in result.output
