"""Protests and corrections over a real websocket: the moderator files a protest and corrects
an earlier cycle while the match goes on; the moderator's state shows the cycles and the
protests, the phones see the score follow, a player may not amend, and the record replays to
the live match."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from backends import on_both_backends
from live import clients, moderator, player, win_first_word

from grace_arena.core.match import Match


def scores(state: dict) -> dict[str, int]:
    return {t["id"]: t["score"] for t in state["teams"]}


@on_both_backends
def test_the_moderator_protests_and_corrects_an_earlier_cycle_over_the_websocket(server):
    mod = moderator(server)
    red, blue = player(server, "red", "Ruth"), player(server, "blue", "Bo")
    with clients(mod, red, blue):
        win_first_word(mod, red, "Carver")
        mod.state(lambda s: s["match"]["phase"] in ("answered", "bonus"))
        win_first_word(mod, blue, "Carver")
        st = mod.state(lambda s: len(s["officiating"]["cycles"]) == 2
                       and s["match"]["phase"] == "answered")  # fmt: skip
        first = st["officiating"]["cycles"][0]["rulings"]
        assert [(r["team"], r["player_name"], r["ruling"]) for r in first] == [
            ("red", "Ruth", "correct")
        ]
        before = scores(st)
        tossup_points = first[0]["points"]
        # a protest of the first tossup by blue; the match goes on as it was
        mod.send(type="protest", team="blue", tossup="1", answer="Carver",
                 reason="Ruth's answer came after time")  # fmt: skip
        st = mod.state(lambda s: s["officiating"]["protests"])
        [protest] = st["officiating"]["protests"]
        assert (protest["team"], protest["question"], protest["status"]) == (
            "blue", "tossup 1 (lit-american-1)", "open",
        )  # fmt: skip
        assert "Ruth's answer came after time. Open; upheld" in protest["text"]
        assert st["match"]["phase"] == "answered" and scores(st) == before
        # a player may neither protest nor correct from a phone
        red.send(type="correct", seq=first[0]["seq"], ruling="incorrect")
        assert red.wait("error")["code"] == "not_allowed"
        # the moderator corrects the first cycle two tossups on: every screen follows
        mod.send(type="correct", seq=first[0]["seq"], ruling="incorrect", reason="misheard")
        st = mod.state(lambda s: s["officiating"]["cycles"][0]["rulings"][0]["corrected"])
        corrected = st["officiating"]["cycles"][0]["rulings"][0]
        assert corrected["ruling"] == "incorrect" and corrected["points"] <= 0
        expected = {"red": before["red"] - tossup_points + corrected["points"],
                    "blue": before["blue"]}  # fmt: skip
        assert scores(st) == expected
        seen = blue.state(lambda s: scores(s) == expected)
        assert seen["officiating"] is None  # the moderator's only
        # not while a tossup is being read: an error, and nothing changes
        mod.send(type="start_tossup")
        mod.state(lambda s: s["match"]["phase"] == "reading")
        mod.send(type="pause")  # (the reading stays where it is, however slow the machine)
        mod.state(lambda s: s["match"]["paused"])
        mod.send(type="correct", seq=corrected["seq"], ruling="correct")
        error = mod.wait("error")
        assert error["code"] == "illegal" and "cannot correct while the match is reading" in \
            error["message"]  # fmt: skip
        room = server.room()
        store = room.rm.store
        assert Match.replay(store.events(room.rm.id)).state == room.match.state


def http(server, method: str, path: str, token: str | None, body: dict | None = None):
    """(status, JSON reply) of an HTTP request to the live server."""
    request = urllib.request.Request(
        f"{server.http_url}{path}", method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json",
                 **({"Authorization": f"Bearer {token}"} if token else {})},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_td_resolves_a_protest_of_a_served_match_with_the_td_token(server):
    mod = moderator(server)
    red, blue = player(server, "red", "Ruth"), player(server, "blue", "Bo")
    match_id = server.room().rm.id
    path = f"/api/matches/{match_id}/protests"
    td = server.events.tokens.td()
    with clients(mod, red, blue):
        win_first_word(mod, red, "Carver")
        st = mod.state(lambda s: s["match"]["phase"] == "answered")
        red_points = scores(st)["red"]
        mod.send(type="protest", team="blue", tossup="1", reason="the answer was incomplete")
        st = mod.state(lambda s: s["officiating"]["protests"])
        number = st["officiating"]["protests"][0]["number"]
        # the TD's token only: not the moderator's, not the server's, not none
        moderator_token = server.run(server.events.match_moderator_token(match_id))
        for token in (None, moderator_token, server.events.tokens.server()):
            assert http(server, "GET", path, token)[0] == 401
        status, listed = http(server, "GET", path, td)
        assert status == 200 and [(p["number"], p["status"]) for p in listed] == [(number, "open")]
        assert listed[0]["changes_result"]  # red's only points: upheld, nobody leads
        bad = http(server, "POST", f"{path}/{number}", td, {"decision": "maybe", "by": "Dana"})
        assert bad[0] == 422
        upheld = {"decision": "upheld", "by": "Dana", "reason": "incomplete"}
        status, resolved = http(server, "POST", f"{path}/{number}", td, upheld)
        assert status == 200, resolved
        assert (resolved["status"], resolved["decided_by"]) == ("upheld", "Dana")
        # every screen follows: the moderator's, and the phones'
        st = mod.state(lambda s: s["officiating"]["protests"][0]["status"] == "upheld")
        assert scores(st)["red"] < red_points
        blue.state(lambda s: scores(s) == scores(st))
        again = http(server, "POST", f"{path}/{number}", td, {"decision": "denied", "by": "Eve"})
        assert again[0] == 409 and "already resolved" in again[1]["detail"]
        assert http(server, "GET", "/api/matches/999/protests", td)[0] == 404
