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
            match_id = server.room().rm.id
    events = MatchStore(engine).events(match_id)
    engine.dispose()
    assert Match.replay(events).scores == live
    assert [e.type for e in events if e.type.startswith("ai_")] == [
        "ai_modes_set", "ai_buzzed", "ai_answers_shown", "ai_muted",
    ]  # fmt: skip
