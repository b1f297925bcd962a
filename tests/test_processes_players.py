"""Two server processes share one record, each serving a room of one event: a player in play
on one is in use on the other (by name or by token) until the phone that plays them leaves;
a phone waiting on one for a match that opens on the other is sent there."""

from __future__ import annotations

import pytest
from backends import on_both_backends
from event_helpers import code_of, make_event
from live import Client, clients, free_port
from processes import ServerProcess

pytestmark = pytest.mark.slow


def serve_rooms(db_url: str, *rooms: str) -> ServerProcess:
    args = [arg for room in rooms for arg in ("--room", room)]
    return ServerProcess(db_url, free_port(), "--event", "night", *args)


def _hello(server: ServerProcess, code: str, **hello) -> Client:
    phone = Client(server.ws_url)
    phone.send(type="hello", role="player", join_code=code, **hello)
    return phone


def _reply(phone: Client) -> dict:
    return phone.wait(lambda m: m["type"] in ("joined", "error"))


@on_both_backends
def test_a_player_in_play_on_one_process_is_in_use_on_the_other(db_url) -> None:
    """Ann plays in room 1 on A. On B (room 2's code) a phone joins Red as Ann, and her kept
    token says hello: both are told she is in use (there used to be two live Anns, one a
    process). Once her phone leaves A, her token takes her seat on B."""
    plan = make_event(db_url)
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    with serve_rooms(db_url, "1") as a, serve_rooms(db_url, "2") as b:
        ann = _hello(a, room1)
        ann.wait("welcome")
        ann.send(type="join", team="red", name="Ann")
        token = ann.wait("joined")["token"]
        with clients(ann):
            ann.state()
            by_name = _hello(b, room2)
            with clients(by_name):
                by_name.wait("welcome")
                by_name.send(type="join", team="red", name="ANN")
                refused = _reply(by_name)
                assert refused["type"] == "error" and refused["code"] == "in_use", refused
                assert "Ann" in refused["message"] and a.url in refused["message"]
            by_token = _hello(b, room2, token=token)
            with clients(by_token):
                refused = _reply(by_token)
                assert refused["type"] == "error" and refused["code"] == "in_use", refused
            ann.drain(0.3)  # still hers, on A
        # her phone left A: her token is hers on B
        back = _hello(b, room2, token=token)
        with clients(back):
            assert _reply(back)["name"] == "Ann"


@on_both_backends
def test_a_phone_waiting_on_one_process_is_sent_to_its_match_on_the_other(db_url) -> None:
    """Blue plays round 1 in room 2 on B, then waits there for round 2 in room 1, which A
    serves. When A opens it, B sends Blue's phone on (it used to wait for ever): its hello
    with room 1's code is told where room 1 is served, and there it plays."""
    plan = make_event(db_url)
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    with serve_rooms(db_url, "1") as a, serve_rooms(db_url, "2") as b:
        bea = _hello(b, room2)
        bea.wait("welcome")
        bea.send(type="join", team="blue", name="Bea")
        token = bea.wait("joined")["token"]
        with clients(bea):
            bea.state()
            for server, code in ((b, room2), (a, room1)):
                mod = Client(server.ws_url)
                with clients(mod):
                    mod.send(type="hello", role="moderator", join_code=code,
                             token=server.tokens[code])  # fmt: skip
                    mod.wait("welcome")
                    mod.send(type="end_match")
                    mod.wait(lambda m: m["type"] == "state" and m["match"]["phase"] == "ended")
                if server is b:
                    assert "round 2 in room 1" in bea.wait("waiting")["message"]
            moved = bea.wait("next_match", timeout=20)
            assert moved["join_code"] == room1, moved
            bea.send(type="hello", role="player", join_code=room1, token=token)
            elsewhere = bea.wait("error")
            assert elsewhere["code"] == "elsewhere" and elsewhere["url"] == a.url, elsewhere
        there = _hello(a, room1, token=token)
        with clients(there):
            assert _reply(there)["name"] == "Bea"
            state = there.state()
            assert {t["id"] for t in state["teams"]} == {"red", "blue"}
