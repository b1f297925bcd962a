"""Bonuses in a live room: the moderator's one key rules each part, a phone's answer is its
team's, what each role sees, and the record replays to the same scores (both backends)."""

from __future__ import annotations

from backends import on_both_backends
from live import LiveServer, clients, moderator, player, two_teams, win_first_word

from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore
from grace_arena.server.app import Settings


@on_both_backends
def test_a_bonus_is_played_part_by_part_and_replays_from_the_record(db_url):
    setup = two_teams(format="naqt", bouncebacks=True, reading_mode="screen",
                      bonus_answer_time=60)  # fmt: skip
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup)
    with LiveServer(settings) as server:
        mod = moderator(server)
        red, red2, blue = (player(server, "red", "Ann"), player(server, "red", "Ada"),
                           player(server, "blue", "Bo"))  # fmt: skip
        with clients(mod, red, red2, blue):
            win_first_word(mod, red, "Moby Dick")
            state = mod.state(lambda s: s["match"]["phase"] == "bonus")
            bonus = state["bonus"]
            assert (bonus["id"], bonus["team"], bonus["turn"]) == ("b-lit-american-1", "red", "red")
            assert (
                bonus["parts"][0]["answer"]
                == "Mark <b>Twain</b> [or Samuel Langhorne <b>Clemens</b>]"
            )
            assert state["match"]["format"] == "naqt" and state["match"]["bonuses"]
            # a phone sees the lead-in and the part up, never an answer line before its ruling
            seen = blue.state(lambda s: s["match"]["phase"] == "bonus")["bonus"]
            assert seen["id"] == "bonus-1" and seen["leadin"].startswith("This author's narrator")
            assert [p["text"] is not None for p in seen["parts"]] == [True, False, False]
            assert all(p["answer"] is None for p in seen["parts"])
            # the team's first answer stands; the other team cannot answer its part
            # the tossup's answer box, sent late, is not taken for part 1's
            red.send(type="answer", text="Moby Dick")
            assert "that answer was for the tossup" in red.wait("error")["message"]
            red.send(type="answer", text="mark twain", part=1, bounceback=False)
            mod.state(lambda s: s["bonus"] and s["bonus"]["answer"] == "mark twain")
            assert mod.received[-1]["bonus"]["suggestion"] == "accept"
            red2.send(type="answer", text="hemingway", part=1)
            assert "the first answer stands" in red2.wait("error")["message"]
            blue.send(type="answer", text="twain", part=1)
            assert "this part is team 'red''s to answer" in blue.wait("error")["message"]
            mod.send(type="rule", ruling="correct")
            state = mod.state(lambda s: s["bonus"] and s["bonus"]["part"] == 1)
            assert state["teams"][0]["score"] == 15 + 10
            # missed by red, it bounces back to blue, who gets it
            mod.send(type="rule", ruling="incorrect")
            mod.state(lambda s: s["bonus"] and s["bonus"]["bounceback"])
            seen = blue.state(lambda s: s["bonus"] and s["bonus"]["turn"] == "blue")["bonus"]
            assert seen["parts"][1]["answer"] is None  # not before blue answered
            blue.send(type="answer", text="pap finn", part=2, bounceback=True)
            mod.state(lambda s: s["bonus"] and s["bonus"]["answer"] == "pap finn")
            mod.send(type="rule", ruling="correct")
            state = mod.state(lambda s: s["bonus"] and s["bonus"]["part"] == 2)
            assert state["bonus"]["points"] == {"red": 10, "blue": 10}
            shown = red.state(lambda s: s["bonus"] and s["bonus"]["part"] == 2)["bonus"]["parts"][1]
            assert shown["answer"].startswith("<b>Pap</b>") and shown["bounceback_points"] == 10
            # undo takes back the last part's ruling
            mod.send(type="undo")
            mod.state(lambda s: s["bonus"] and s["bonus"]["part"] == 1 and s["bonus"]["bounceback"])
            mod.send(type="rule", ruling="correct")
            mod.state(lambda s: s["bonus"] and s["bonus"]["part"] == 2)
            mod.send(type="throw_out_bonus", reason="the part was misread")
            state = mod.state(lambda s: s["bonus"] and s["bonus"]["id"] == "b-lit-british-1")
            assert {t["id"]: t["score"] for t in state["teams"]} == {"red": 15, "blue": 0}
            # (a ruling that names no part rules the part up as it arrives: one at a time)
            for part, ruling in enumerate(("correct", "correct", "incorrect")):
                mod.send(type="rule", ruling=ruling)
                if ruling == "correct":
                    mod.state(lambda s, part=part: s["bonus"] and s["bonus"]["part"] == part + 1)
                else:
                    mod.state(lambda s: s["bonus"] and s["bonus"]["bounceback"])
                    mod.send(type="rule", ruling="incorrect")
            state = mod.state(lambda s: s["match"]["phase"] == "answered")
            assert state["bonus"]["done"] and state["bonus"]["points"] == {"red": 20, "blue": 0}
            live = {t["id"]: t["score"] for t in state["teams"]}
            assert live == {"red": 35, "blue": 0}
            match_id = server.room().rm.id
    # the record replays to the same match
    engine = make_engine(db_url)
    events = MatchStore(engine).events(match_id)
    engine.dispose()
    assert Match.replay(events).scores == live
    assert [e.type for e in events].count("bonus_part_ruled") == 8
