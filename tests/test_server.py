"""The game server with several real websocket clients on a free loopback port."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import threading
import time
import urllib.request

import pytest
from backends import on_both_backends
from live import Client, LiveServer, clients, moderator, player, two_teams
from websockets.exceptions import ConnectionClosed, InvalidStatus

from grace_arena.core.judge import parse_answer_line
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.protocol import TeamSetup
from grace_arena.server.app import Settings, token_sha256
from grace_arena.server.arbiter import MAX_OFFSET_SPREAD, MIN_CLOCK_SAMPLES
from grace_arena.server.connection import LAG_DROP
from grace_arena.server.schedules import match_moderator_hashes

FIRST = load_packet(SAMPLE_PACKET_PATH).tossups[0]
FIRST_ANSWER = parse_answer_line(FIRST.answer).main


def start_paused(mod: Client, steps: int = 0) -> None:
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    mod.state(lambda s: s["match"]["paused"])
    for _ in range(steps):
        mod.send(type="step", unit="word")
    if steps:
        mod.state(lambda s: s["tossup"]["position"] >= steps - 1)


@on_both_backends
@pytest.mark.server(new_names_per_address=100)  # fifty phones on one address
def test_fifty_simultaneous_buzzes_have_exactly_one_winner(server):
    mod = moderator(server)
    players = [player(server, "red" if i % 2 else "blue", f"P{i}") for i in range(50)]
    with clients(mod, *players):
        start_paused(mod, steps=3)
        for p in players:
            p.drain(0.05)
        position = server.room().match.game.position  # paused: the reader may have got in first
        barrier = threading.Barrier(len(players))

        def press(p: Client) -> None:
            barrier.wait()
            p.send(type="buzz", client_time=0.0)

        threads = [threading.Thread(target=press, args=(p,)) for p in players]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results = [p.wait("buzz_result") for p in players]
        outcomes = sorted(r["outcome"] for r in results)
        assert outcomes.count("won") == 1
        assert outcomes.count("lost_race") == 49
        lost = [r for r in results if r["outcome"] == "lost_race"]
        assert all(r["margin"] is not None and r["margin"] >= 0 for r in lost)
        room = server.room()
        buzzes = server.arena.store.buzzes(room.rm.id)
        assert len(buzzes) == 50
        assert sorted(b.outcome for b in buzzes).count("won") == 1
        winner = next(b for b in buzzes if b.outcome == "won")
        assert winner.word_index == position >= 2 and winner.received_mono is not None
        assert all(b.holder_buzz_id == winner.buzz_id for b in buzzes if b is not winner)


@on_both_backends
def test_neg_locks_the_team_out_and_the_other_team_can_answer(server):
    mod = moderator(server)
    red, blue = player(server, "red", "Ruth"), player(server, "blue", "Bo")
    with clients(mod, red, blue):
        start_paused(mod, steps=2)
        red.send(type="buzz")
        assert red.wait("buzz_result")["outcome"] == "won"
        st = mod.state(lambda s: s["floor"] is not None)
        assert st["floor"]["player_name"] == "Ruth"
        mod.send(type="rule", ruling="incorrect")
        st = red.state(lambda s: s["match"]["phase"] == "reading")
        assert (
            next(t for t in st["teams"] if t["id"] == "red") | {} and st["teams"][0]["score"] == -5
        )
        red.send(type="buzz")
        assert red.wait("buzz_result")["outcome"] == "locked_out"
        blue.send(type="buzz")
        assert blue.wait("buzz_result")["outcome"] == "won"
        mod.send(type="rule", ruling="correct")
        st = blue.state(lambda s: s["match"]["phase"] == "answered")
        assert {t["id"]: t["score"] for t in st["teams"]} == {"red": -5, "blue": 15}
        # once the tossup is over, players see the answer line
        assert st["tossup"]["answer"] == FIRST.answer


def test_prompt_in_screen_mode_with_typed_answers(db_url):
    settings = Settings(
        db_url=db_url,
        packets=[SAMPLE_PACKET_PATH],
        secret="x",
        first_match=two_teams(reading_mode="screen"),
    )
    with LiveServer(settings) as server:
        mod = moderator(server)
        red = player(server, "red", "Ruth")
        with clients(mod, red):
            start_paused(mod, steps=4)
            st = red.state(lambda s: s["tossup"] and s["tossup"]["position"] == 3)
            assert len(st["tossup"]["words"]) == 4  # screen mode: players see the text
            red.send(type="buzz")
            red.wait("buzz_result")
            red.send(type="answer", text="Okonkwo")  # not the answer of any sample tossup
            ev = mod.wait(lambda m: m["type"] == "event" and m["event"]["type"] == "answer_given")
            assert ev["event"]["suggestion"] == "reject"
            mod.send(type="rule", ruling="prompt")
            st = red.state(lambda s: s["match"]["phase"] == "prompted")
            assert st["floor"]["player_name"] == "Ruth"
            red.send(type="answer", text=FIRST_ANSWER)
            ev = mod.wait(lambda m: m["type"] == "event" and m["event"]["type"] == "answer_given")
            assert ev["event"]["suggestion"] == "accept"
            # players never see the judge's suggestion
            public = [m for m in red.received if m["type"] == "event"]
            assert public and all("suggestion" not in m["event"] for m in public)


def test_dead_tossup_when_every_team_negs(server):
    mod = moderator(server)
    red, blue = player(server, "red", "R"), player(server, "blue", "B")
    with clients(mod, red, blue):
        start_paused(mod, steps=1)
        for p in (red, blue):
            p.send(type="buzz")
            p.wait("buzz_result")
            mod.state(lambda s: s["floor"] is not None)
            mod.send(type="rule", ruling="incorrect")
            mod.state(lambda s: s["floor"] is None)
        st = red.state(lambda s: s["match"]["phase"] == "dead")
        assert st["tossup"]["answer"] == FIRST.answer


def test_reading_advances_by_itself_and_the_moderator_controls_pace(server):
    mod = moderator(server)
    with clients(mod):
        mod.send(type="set_pace", wpm=1200)
        mod.state(lambda s: s["reading"]["wpm"] == 1200)
        mod.send(type="start_tossup")
        st = mod.state(lambda s: s["tossup"] and s["tossup"]["position"] >= 5, timeout=10)
        assert st["reading"]["running"]
        mod.send(type="pause")
        paused = mod.state(lambda s: s["match"]["paused"])
        mod.drain(0.3)
        assert mod.received[-1].get("tossup", paused["tossup"])["position"] >= 5
        mod.send(type="step", unit="clue")
        st = mod.state(lambda s: s["tossup"]["position"] in s["tossup"]["clue_ends"])
        assert st["tossup"]["position"] in st["tossup"]["clue_ends"]


@on_both_backends
def test_reconnect_with_token_comes_back_as_the_same_player(server):
    red = player(server, "red", "Ruth")
    token, player_id = red.joined["token"], red.joined["player"]
    red.close()
    room = server.room()
    again = Client(server.ws_url)
    with clients(again):
        again.send(type="hello", role="player", join_code=room.join_code.lower(), token=token)
        welcome = again.wait("welcome")
        assert welcome["needs_join"] is False
        joined = again.wait("joined")
        assert (joined["player"], joined["name"]) == (player_id, "Ruth")
        state = again.state()
        assert state["teams"][0]["size"] == 1  # players see team sizes, not rosters
    events = server.arena.store.events(room.rm.id)
    assert sum(e.type == "player_joined" for e in events) == 1


def test_display_sees_no_answer_before_the_ruling(db_url):
    setup = two_teams(
        teams=[
            TeamSetup(id="red", name="Red"),
            TeamSetup(id="bot", name="Bot", kind="model", model="tfidf", threshold=0.0),
        ]
    )
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=setup)
    with LiveServer(settings) as server:
        mod = moderator(server)
        room = server.room()
        display = Client(server.ws_url)
        display.send(type="hello", role="display", join_code=room.join_code)
        display.wait("welcome")
        with clients(mod, display):
            st = display.state()
            mod.send(type="start_tossup")
            # threshold 0: the model buzzes on its first clue
            st = display.state(lambda s: s["floor"] is not None and s["floor"]["kind"] == "model")
            assert st["floor"]["answer"] is None and st["tossup"]["answer"] is None
            modst = mod.state(lambda s: s["floor"] is not None)
            guess = modst["floor"]["answer"]
            assert guess and modst["floor"]["suggestion"] in ("accept", "reject", "prompt")
            assert modst["models"][0]["buzz_word"] == modst["floor"]["word_index"]
            accepted = [
                m
                for m in display.received
                if m["type"] == "event" and m["event"]["type"] == "buzz_accepted"
            ]
            assert accepted and "answer" not in accepted[0]["event"]
            mod.send(type="rule", ruling="incorrect")
            ruled = display.wait(lambda m: m["type"] == "event" and m["event"]["type"] == "ruled")
            assert ruled["event"]["answer"] == guess


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("not json", "bad_message"),
        ('{"type": "launch_rockets"}', "bad_message"),
        ('{"type": "buzz", "client_time": "soon"}', "bad_message"),
        ('{"type": "buzz", "client_time": 1e400}', "bad_message"),
        ('{"type": "buzz", "client_time": NaN}', "bad_message"),
        ('{"type": "ping", "sent": -Infinity}', "bad_message"),
        # finite, but offsets taken of two such readings overflow to infinity
        ('{"type": "pong", "sent": 1.7e308, "time": -1.7e308}', "bad_message"),
        ('{"type": "buzz", "client_time": -1.7e308}', "bad_message"),
        ('{"type": "rule", "ruling": "correct"}', "not_allowed"),
        ('{"type": "hello", "role": "player", "join_code": "ZZZZZ"}', "not_allowed"),
        ('{"type": "rule", "ruling": "maybe"}', "bad_message"),
    ],
)
def test_bad_messages_get_an_error_reply_and_the_connection_stays(server, raw, code):
    red = player(server, "red", "Ruth")
    with clients(red):
        red.send_raw(raw)
        error = red.wait("error")
        assert error["code"] == code and error["message"]
        red.send(type="ping", sent=1.0)
        assert red.wait("pong")["sent"] == 1.0


def test_handshake_errors(server):
    room = server.room()
    c = Client(server.ws_url)
    with clients(c):
        c.send(type="buzz")
        assert c.wait("error")["code"] == "not_allowed"
        c.send(type="hello", role="moderator", match_id=room.rm.id, token="wrong")
        assert c.wait("error")["code"] == "unauthorized"
        c.send(type="hello", role="player", join_code="NOPE1")
        assert c.wait("error")["code"] == "not_found"
        c.send(type="hello", role="player", join_code=room.join_code, token="p-1.forged")
        assert c.wait("error")["code"] == "unauthorized"
        c.send(type="hello", role="player", join_code=room.join_code)
        c.wait("welcome")
        c.send(type="buzz")
        assert c.wait("error")["code"] == "not_allowed"
        c.send(type="join", team="nobody", name="X")
        assert c.wait("error")["code"] == "not_found"
        c.send(type="join", team="red", name="X")
        assert c.wait("joined")["team"] == "red"


def test_illegal_moderator_command_gets_an_illegal_error(server):
    mod = moderator(server)
    with clients(mod):
        mod.send(type="rule", ruling="correct")
        error = mod.wait("error")
        assert error["code"] == "illegal" and "cannot rule" in error["message"]


def test_http_api_creates_matches_with_the_server_token(server):
    body = json.dumps(two_teams(title="Second room").model_dump()).encode()
    request = urllib.request.Request(
        f"{server.http_url}/api/matches",
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {server.events.tokens.server()}",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        created = json.load(response)
    assert created["join_url"].endswith(f"?code={created['join_code']}")
    assert len(server.arena.rooms) == 2
    bad = urllib.request.Request(
        f"{server.http_url}/api/matches",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(bad, timeout=10)
    assert err.value.code == 401
    with urllib.request.urlopen(f"{server.http_url}/api/join/{created['join_code']}/qr.svg") as r:
        assert r.headers["content-type"].startswith("image/svg")
    with urllib.request.urlopen(f"{server.http_url}/", timeout=10) as r:
        assert b"<html" in r.read().lower()


def test_oversized_messages_and_floods_get_errors_and_the_connection_stays(db_url):
    settings = Settings(
        db_url=db_url,
        packets=[SAMPLE_PACKET_PATH],
        secret="x",
        first_match=two_teams(),
        rate_burst=10,
        rate_per_second=5.0,
    )
    with LiveServer(settings) as server:
        red = player(server, "red", "Ruth")
        with clients(red):
            red.send(type="answer", text="x" * 200, pad="y" * 5000)
            assert red.wait("error")["code"] == "too_large"
            for i in range(30):
                red.send(type="ping", sent=float(i))
            red.wait(lambda m: m["type"] == "error" and m["code"] == "rate_limited")
            pongs = [m for m in red.received if m["type"] == "pong"]
            assert len(pongs) < 30
            time.sleep(1.0)  # the bucket refills
            red.send(type="ping", sent=99.0)
            assert red.wait(lambda m: m["type"] == "pong" and m["sent"] == 99.0)
        buzzes = server.arena.store.buzzes(server.room().rm.id)
        assert buzzes == []


class SlowPongClient(Client):
    """A client ``delay`` seconds of round trip away: each ping is answered ``delay`` after it
    is read, stamped with this clock at the midpoint. The answers go out from timers, as a
    network delays every message alike: one ping's delay does not hold up the next one (a
    client that slept through each ping would answer a burst of pings ever later, and their
    offsets would disagree as a bad clock's do)."""

    def __init__(self, url: str, delay: float) -> None:
        super().__init__(url)
        self.delay = delay

    def _next(self, timeout: float) -> dict:
        message = json.loads(self.ws.recv(timeout=timeout))
        if message["type"] == "ping":
            received = time.time()
            pong = {"type": "pong", "sent": message["sent"], "time": received + self.delay / 2}
            timer = threading.Timer(self.delay, self._send_quietly, args=(pong,))
            timer.daemon = True
            timer.start()
        self.received.append(message)
        return message

    def _send_quietly(self, message: dict) -> None:
        with contextlib.suppress(Exception):  # the connection may be closed by then
            self.ws.send(json.dumps(message))


def joined_player(client: Client) -> str:
    return client.joined["player"]  # type: ignore[attr-defined]


@on_both_backends
def test_compensated_mode_awards_the_earliest_estimated_press(db_url):
    settings = Settings(
        db_url=db_url,
        packets=[SAMPLE_PACKET_PATH],
        secret="x",
        first_match=two_teams(compensated=True),
        race_window=0.4,
    )
    with LiveServer(settings) as server:
        room = server.room()
        mod = moderator(server)
        # Two players 0.1 s and 0.5 s of round trip away: the margins of a real room, not of
        # loopback, so that a buzz the server reads a little late (it shares this process on a
        # loaded machine) still falls within its player's measured round trip, as the server
        # requires before it compensates.
        near = SlowPongClient(server.ws_url, delay=0.1)
        far = SlowPongClient(server.ws_url, delay=0.5)
        with clients(mod, near, far):
            for client, team, name in ((near, "red", "Near"), (far, "blue", "Far")):
                client.send(type="hello", role="player", join_code=room.join_code)
                client.wait("welcome")
                client.send(type="join", team=team, name=name)
                client.joined = client.wait("joined")  # type: ignore[attr-defined]
            stop = threading.Event()

            def answer_pings() -> None:  # the near player reads its pings throughout
                while not stop.is_set():
                    near.drain(0.2)

            answering = threading.Thread(target=answer_pings)
            answering.start()

            # ping/pong rounds until the server trusts its estimate of both clocks (enough
            # samples that agree), else it would rightly fall back to arrival order
            def clocks() -> list[tuple]:
                return [
                    (c.player, len(c.clock.samples), c.clock.spread, c.clock.ignored)
                    for c in list(room.connections)
                    if c.player in (joined_player(near), joined_player(far))
                ]

            def trusted() -> bool:
                return len(clocks()) == 2 and all(
                    n >= MIN_CLOCK_SAMPLES and spread is not None and spread <= MAX_OFFSET_SPREAD
                    for _, n, spread, _ in clocks()
                )

            deadline = time.time() + 30
            try:
                far.drain(1.5)
                while time.time() < deadline and not trusted():
                    far.drain(0.5)
            finally:
                stop.set()
                answering.join()
            assert trusted(), clocks()
            start_paused(mod, steps=5)
            time.sleep(0.5)  # both presses come well after word 4 was revealed
            near.send(type="buzz", client_time=time.time())
            # the far player pressed earlier; its buzz arrives later, within the window
            far.send(type="buzz", client_time=time.time() - 0.2)
            far_result = far.wait("buzz_result")
            near_result = near.wait("buzz_result")
        events = server.arena.store.events(room.rm.id)
        accepted = next(e for e in events if e.type == "buzz_accepted")
        refused = next(e for e in events if e.type == "buzz_refused")
        assert accepted.timing.arbitration == "compensated" == refused.timing.arbitration, (
            accepted.timing,
            refused.timing,
        )
        assert (far_result["outcome"], near_result["outcome"]) == ("won", "lost_race")
        assert accepted.timing.rtt >= 0.45  # measured by the server from the slow pongs
        assert accepted.timing.estimated_press < refused.timing.estimated_press
        assert (
            accepted.timing.estimated_press >= accepted.timing.received_wall - accepted.timing.rtt
        )
        assert accepted.word_index == 4


@on_both_backends
def test_a_restarted_server_restores_pace_arbitration_and_the_model_panel(db_url):
    setup = two_teams(
        wpm=333,
        compensated=True,
        teams=[
            TeamSetup(id="red", name="Red"),
            TeamSetup(id="bot", name="Bot", kind="model", model="tfidf", threshold=0.9),
        ],
    )
    first = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=setup)
    with LiveServer(first) as server:
        before = server.room()
        trajectories = before.trajectories
        assert trajectories["bot"]
    again = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x")
    with LiveServer(again) as server:
        room = server.room()
        assert room.rm.id == before.rm.id
        assert (room.wpm, room.compensated) == (333, True)
        assert room.trajectories == trajectories
        mod = moderator(server)
        with clients(mod):
            mod.send(type="start_tossup")
            st = mod.state(lambda s: s["tossup"] is not None)
            assert st["models"][0]["guess"]  # the moderator sees the model's current guess


def _api(server: LiveServer, path: str, body: object = None) -> object:
    """A call of the HTTP API with the server token; the reply's JSON."""
    request = urllib.request.Request(
        f"{server.http_url}{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {server.events.tokens.server()}",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@on_both_backends
def test_a_restarted_server_reopens_its_matches_in_the_order_they_were_made(db_url):
    def settings(first=None) -> Settings:
        return Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=first)

    with LiveServer(settings(two_teams(title="First"))) as server:
        second = _api(server, "/api/matches", two_teams(title="Second").model_dump())
        made = [server.room().rm.id, second["match_id"]]
        # a new moderator token for the first match: its row is written after the second's
        server.arena.store.add_moderator_token(made[0], token_sha256("another token"))
    with LiveServer(settings()) as server:
        assert list(server.arena.rooms) == made
        assert [m["match_id"] for m in _api(server, "/api/matches")] == made


@on_both_backends
def test_a_match_id_past_the_records_integers_is_a_client_error(server):
    """Match ids are 32-bit integers in a PostgreSQL record: a larger one is refused as such,
    not looked up (which PostgreSQL answers with an error)."""
    for match_id, status in ((2**31 - 1, 404), (2**31, 422), (2**63 - 1, 422)):
        with pytest.raises(urllib.error.HTTPError) as err:
            _api(server, f"/api/matches/{match_id}/summary")
        assert err.value.code == status, match_id


@on_both_backends
def test_a_hello_the_record_could_not_look_up_is_a_bad_message_and_the_connection_stays(server):
    """A match id past the record's integers, or a join code holding NUL (which PostgreSQL
    cannot compare), used to reach the record: the error it raised dropped the connection
    with a traceback. The same goes for an event's name in the standings' address."""
    c = Client(server.ws_url)
    with clients(c):
        for hello in (
            {"role": "moderator", "match_id": 2**31, "token": "x"},
            {"role": "moderator", "match_id": 2**70, "token": "x"},
            {"role": "moderator", "match_id": 0, "token": "x"},
            {"role": "player", "join_code": "AB\x00CD"},
        ):
            c.send(type="hello", **hello)
            reply = c.wait("error")
            assert (reply["code"], reply["in_reply_to"]) == ("bad_message", "hello"), hello
        c.send(type="hello", role="player", join_code=server.room().join_code)
        assert c.wait("welcome")
    for name in ("a%00b", "%00", "99999999999", "%C2%B2"):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{server.http_url}/api/events/{name}/standings", timeout=10)
        assert err.value.code == 404, name


@on_both_backends
def test_text_holding_a_nul_character_is_refused_and_the_connection_stays(db_url):
    """PostgreSQL's text columns cannot hold NUL: a name, an answer, a reason or a match set-up
    with one is a bad message on every backend, and what follows is recorded as usual."""
    settings = Settings(
        db_url=db_url,
        packets=[SAMPLE_PACKET_PATH],
        secret="x",
        first_match=two_teams(reading_mode="screen"),
    )
    with LiveServer(settings) as server:
        mod, red = moderator(server), Client(server.ws_url)
        with clients(mod, red):
            red.send(type="hello", role="player", join_code=server.room().join_code)
            red.wait("welcome")
            red.send(type="join", team="red", name="Ru\x00th")
            assert red.wait(lambda m: m["type"] in ("error", "joined"))["code"] == "bad_message"
            red.send(type="join", team="red", name="Ruth")
            red.wait("joined")
            start_paused(mod, steps=4)
            red.send(type="buzz")
            assert red.wait("buzz_result")["outcome"] == "won"
            red.send(type="answer", text="Oko\x00nkwo")
            assert red.wait("error")["code"] == "bad_message"
            red.send(type="answer", text="Okonkwo")
            ev = mod.wait(lambda m: m["type"] == "event" and m["event"]["type"] == "answer_given")
            assert ev["event"]["text"] == "Okonkwo"
            mod.send(type="throw_out", reason="mis\x00read")
            assert mod.wait("error")["code"] == "bad_message"
        (buzz,) = server.arena.store.buzzes(server.room().rm.id)
        assert buzz.answer == "Okonkwo"
        setup = two_teams().model_dump()
        for bad in (
            {"title": "Night\x00"},
            {"teams": [{"id": "red", "name": "R\x00"}]},
            {"teams": [{"id": "bot", "name": "Bot", "kind": "model", "model": "tf\x00idf"}]},
        ):
            with pytest.raises(urllib.error.HTTPError) as err:
                _api(server, "/api/matches", {**setup, **bad})
            assert err.value.code == 422
        assert len(server.arena.store.matches()) == 1


@on_both_backends
def test_a_join_with_a_name_that_is_not_well_formed_is_a_bad_message_and_stores_nothing(server):
    """Invisible names and right-to-left overrides used to be taken. The error says what is
    wrong; the player may try again on the same connection."""
    room = server.room()
    c = Client(server.ws_url)
    with clients(c):
        c.send(type="hello", role="player", join_code=room.join_code)
        c.wait("welcome")
        for name, said in (
            ("\u200b", "a name needs a visible character"),
            ("\u200d\ufeff\u2800 \u3164", "a name needs a visible character"),
            ("\u0301\u0301", "a name needs a visible character"),
            ("\u202eNAJ", "a bidirectional control (U+202E)"),
            ("Ann\u2066", "a bidirectional control (U+2066)"),
            ("Ann\x07", "a control character (U+0007)"),
            ("Ann\nLee", "a control character (U+000A)"),
        ):
            c.send(type="join", team="red", name=name)
            reply = c.wait(lambda m: m["type"] in ("error", "joined"))
            assert (reply["type"], reply["code"], reply["in_reply_to"]) == (
                "error",
                "bad_message",
                "join",
            ), name
            assert reply["message"].startswith("malformed message: join.name: "), reply
            assert said in reply["message"], reply
        # a lone surrogate's escape is not JSON to the server's parser
        c.send_raw('{"type": "join", "team": "red", "name": "\\ud800"}')
        reply = c.wait(lambda m: m["type"] in ("error", "joined"))
        assert reply["code"] == "bad_message" and "Invalid JSON" in reply["message"], reply
        assert not any(room.rm.match.state.players.values())
        events = server.arena.store.events(room.rm.id)
        assert not [ev for ev in events if ev.type == "player_joined"]
        c.send(type="join", team="red", name="  Jose\u0301  ")  # kept composed, trimmed
        assert c.wait("joined")["name"] == "Jos\u00e9"
    assert list(room.rm.match.state.players["red"].values()) == ["Jos\u00e9"]


@on_both_backends
def test_a_match_set_up_with_bad_names_or_settings_out_of_range_is_refused(server):
    """With the server token, POST /api/matches took any numbers: -1e20 points for a correct
    answer (every ruling then dropped the moderator's connection), a negative answer time (every
    buzz timed out at once), a buzz window of 1e308 s. Each is a 422 naming the field and its
    range; no match is made."""
    setup = two_teams().model_dump()
    for bad, said in (
        ({"correct_points": -1e20}, "correct_points must be from 1 to 100 points, not -1e+20"),
        ({"power_points": 0}, "power_points must be from 1 to 100 points or none"),
        ({"neg_points": 5}, "neg_points must be from -100 to 0 points, not 5"),
        ({"answer_time": -5}, "answer_time must be from 1 to 120 seconds or none (no limit)"),
        ({"buzz_window": 1e308}, "buzz_window must be from 0 to 60 seconds, not 1e+308"),
        ({"wpm": 5}, "wpm must be from 30 to 1200 words a minute, not 5"),
        ({"teams": [{"id": "red", "name": "\u200b"}]}, "a name needs a visible character"),
        ({"teams": [{"id": "red", "name": "\u202eRed"}]}, "a bidirectional control (U+202E)"),
        ({"teams": [{"id": "red", "name": "R\ud800"}]}, "a lone surrogate (U+D800)"),
        ({"title": "Night\udfff"}, "a lone surrogate (U+DFFF)"),
        ({"tossup_ids": ["\ud800"]}, "a lone surrogate (U+D800)"),
    ):
        with pytest.raises(urllib.error.HTTPError) as err:
            _api(server, "/api/matches", {**setup, **bad})  # (json.dumps escapes surrogates)
        assert err.value.code == 422, bad
        (error,) = json.load(err.value)["detail"]
        assert said in error["msg"], error
    assert len(server.arena.store.matches()) == 1
    made = _api(server, "/api/matches", {**setup, "correct_points": 20, "power_points": None})
    rules = server.room(made["match_id"]).match.config.rules
    assert (rules.correct_points, rules.power_points) == (20, None)


def test_the_packet_list_tells_no_answers(server, sample):
    """Anyone who can reach the server can list packets: ids and categories, no answer line."""
    with urllib.request.urlopen(f"{server.http_url}/api/packets", timeout=10) as response:
        listed = json.load(response)
    (packet,) = listed
    assert [t["id"] for t in packet["tossups"]] == [t.id for t in sample.tossups]
    text = json.dumps(listed)
    assert all(t.answer not in text for t in sample.tossups)
    assert all(set(t) == {"id", "category"} for t in packet["tossups"])


def test_a_name_of_spaces_is_refused_and_the_player_can_try_again(server):
    room = server.room()
    c = Client(server.ws_url)
    with clients(c):
        c.send(type="hello", role="player", join_code=room.join_code)
        c.wait("welcome")
        c.send(type="join", team="red", name="    ")
        assert c.wait("error")["code"] == "bad_message"
        c.send(type="join", team="red", name="  Ruth  ")
        assert c.wait("joined")
        assert "Ruth" in room.rm.match.state.players["red"].values()


def test_tokens_of_any_text_are_refused_cleanly(server):
    """A non-ASCII token used to raise TypeError (HTTP 500, a dropped connection)."""
    bad = urllib.request.Request(
        f"{server.http_url}/api/matches",
        headers={"Authorization": "Bearer t\u00f6ken-\u2603".encode().decode("latin-1")},
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(bad, timeout=10)
    assert caught.value.code == 401
    room = server.room()
    c = Client(server.ws_url)
    with clients(c):
        c.send(type="hello", role="moderator", match_id=room.rm.id, token="m\u00f6d\u2603")
        assert c.wait("error")["code"] == "unauthorized"
        c.send(type="hello", role="player", join_code=room.join_code, token="p.\u00e9\u2603")
        assert c.wait("error")["code"] == "unauthorized"
        c.send(type="hello", role="player", join_code=room.join_code)  # the connection stays
        assert c.wait("welcome")


def test_binary_frames_and_deep_json_get_an_error_reply_and_the_connection_stays(server):
    red = player(server, "red", "Ruth")
    with clients(red):
        red.ws.send(b"\x00\x01binary")
        assert "binary" in red.wait("error")["message"]
        red.send_raw("[" * 1000 + "]" * 1000)
        assert red.wait("error")["code"] == "bad_message"
        red.send_raw('{"type": "buzz", "client_time": ' + "[" * 1000 + "]" * 1000 + "}")
        assert red.wait("error")["code"] == "bad_message"
        red.send(type="ping", sent=3.0)
        assert red.wait("pong")["sent"] == 3.0


def test_no_hello_in_time_gets_a_reply_and_a_close_not_a_traceback(db_url, caplog):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams(),
        hello_timeout=0.5,
    )  # fmt: skip
    with LiveServer(settings) as server:
        c = Client(server.ws_url)
        with clients(c):
            error = c.wait("error", timeout=5)
            assert error["code"] == "timeout"
            with pytest.raises(ConnectionClosed):
                c.ws.recv(timeout=5)
            assert c.ws.close_code == 1008
        # pings (or refused hellos) do not put the deadline off: it is the whole handshake's
        # (a client pinging every 0.1 s would otherwise be kept for as long as it pings)
        pinger = Client(server.ws_url)
        with clients(pinger):
            with pytest.raises(ConnectionClosed):
                for _ in range(200):
                    pinger.send(type="ping", sent=1.0)
                    time.sleep(0.1)
                    pinger.drain(0.05)
            assert any(m.get("code") == "timeout" for m in pinger.received)
    assert "Traceback" not in caplog.text and "TimeoutError" not in caplog.text


class ForgedPongClient(Client):
    """A cheat: never answers pings honestly; claims pongs of pings sent 5 s ago."""

    def _next(self, timeout: float) -> dict:
        message = json.loads(self.ws.recv(timeout=timeout))
        if message["type"] == "ping":
            now = time.time()
            self.send(type="pong", sent=message["sent"] - 5.0, time=now - 2.5)  # never sent
            self.send(type="pong", sent=now - 5.0, time=now - 2.5)  # invented
        self.received.append(message)
        return message


def test_a_forged_round_trip_buys_no_earlier_press(db_url):
    """A pong counts only if it answers a ping the server sent, within a second: a client
    claiming a 5 s round trip used to win races it lost (word 11 recorded instead of 29)."""
    from grace_arena.server.arbiter import MAX_RTT, ClockEstimate

    clock = ClockEstimate()
    clock.sent(100.0)
    assert not clock.add(95.0, 0.0, 100.1)  # a ping never sent
    assert not clock.add(100.0, 0.0, 100.0 + MAX_RTT + 0.5)  # held back too long
    assert clock.add(100.0, 50.0, 100.2) and clock.rtt == pytest.approx(0.2)
    assert not clock.add(100.0, 50.0, 100.3)  # the same ping answered twice
    assert clock.ignored == 3

    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x",
        first_match=two_teams(compensated=True), race_window=0.4,
    )  # fmt: skip
    with LiveServer(settings) as server:
        room = server.room()
        mod = moderator(server)
        honest = player(server, "red", "Honest")
        cheat = ForgedPongClient(server.ws_url)
        with clients(mod, honest, cheat):
            cheat.send(type="hello", role="player", join_code=room.join_code)
            cheat.wait("welcome")
            cheat.send(type="join", team="blue", name="Cheat")
            cheat.wait("joined")
            cheat.drain(1.0)
            start_paused(mod, steps=5)
            time.sleep(0.3)
            honest.send(type="buzz", client_time=time.time())
            time.sleep(0.1)  # the cheat presses later and claims it pressed 3 s ago
            cheat.send(type="buzz", client_time=time.time() - 3.0)
            assert honest.wait("buzz_result")["outcome"] == "won"
            assert cheat.wait("buzz_result")["outcome"] == "lost_race"
        refused = next(e for e in server.arena.store.events(room.rm.id) if e.type == "buzz_refused")
        assert refused.timing.rtt is None and refused.timing.clock_offset is None
        # the record says the cheat's buzz counted as it arrived, and why
        assert refused.timing.arbitration == "arrival_fallback"
        assert refused.timing.fallback == "no ping of the server was answered in time"


def test_pongs_held_back_buy_a_press_no_more_than_the_cap(db_url):
    """A phone answers every ping 0.9 s late, stamping its pongs so that every sample gives
    the same offset (a spread of 0, as an honest clock's): it passes every plausibility check
    and claims its press 0.85 s before its buzz arrived. Credited that, it won a race it lost
    by 140 ms (and a word or more in the text); credited at most the room's round trip (and
    at most the cap, in a room whose phones answer slowly), it loses it, and the record says
    what it was credited."""
    from grace_arena.server.arbiter import DEFAULT_MAX_CREDIT, ROOM_SLACK

    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x",
        first_match=two_teams(compensated=True), race_window=0.4,
    )  # fmt: skip
    with LiveServer(settings) as server:
        room = server.room()
        mod = moderator(server)
        honest = player(server, "red", "Honest")
        cheat = SlowPongClient(server.ws_url, delay=0.9)
        with clients(mod, honest, cheat):
            cheat.send(type="hello", role="player", join_code=room.join_code)
            cheat.wait("welcome")
            cheat.send(type="join", team="blue", name="Cheat")
            cheat.wait("joined")

            def samples(client_name: str) -> int:
                return next(
                    (len(c.clock.samples) for c in list(room.connections)
                     if c.role == "player" and c.player and
                     room.match.state.players.get(c.team, {}).get(c.player) == client_name),
                    0,
                )  # fmt: skip

            deadline = time.time() + 20
            while time.time() < deadline and min(samples("Cheat"), samples("Honest")) < 4:
                cheat.drain(0.3)
                honest.drain(0.05)
            start_paused(mod, steps=5)
            honest.drain(0.3)
            cheat.drain(0.3)
            honest.send(type="buzz", client_time=time.time())
            time.sleep(0.14)
            cheat.send(type="buzz", client_time=time.time() - 0.85)
            assert honest.wait("buzz_result")["outcome"] == "won"
            assert cheat.wait("buzz_result")["outcome"] == "lost_race"
        refused = next(e for e in server.arena.store.events(room.rm.id) if e.type == "buzz_refused")
        assert refused.timing.arbitration == "compensated"  # every check passed...
        assert refused.timing.min_rtt >= 0.85 and refused.timing.clock_spread < 0.05
        # ...but the room's bound held (this test's honest phone answers when it is read)
        bound = min(DEFAULT_MAX_CREDIT, refused.timing.room_rtt + ROOM_SLACK)
        assert refused.timing.credit <= bound + 1e-9
        row = next(b for b in server.arena.store.buzzes(room.rm.id) if b.outcome == "lost_race")
        assert row.credit == pytest.approx(refused.timing.credit)  # in the buzz table too


def _raw_player(server, join_code: str) -> socket.socket:
    """A websocket client by hand that says hello, joins, and then never reads again."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    assert b" 101 " in sock.recv(1024)

    def send(message: dict) -> None:
        payload, mask = json.dumps(message).encode(), os.urandom(4)
        assert len(payload) < 126
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)

    send({"type": "hello", "role": "player", "join_code": join_code})
    send({"type": "join", "team": "red", "name": "Sleepy"})
    return sock


def test_a_client_that_stops_reading_is_closed_and_its_backlog_freed(db_url, caplog):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams(),
        max_queue_bytes=64 * 1024, rate_per_second=1000.0, rate_burst=1000,
    )  # fmt: skip
    with LiveServer(settings) as server:
        room = server.room()
        mod = moderator(server)
        sleepy = _raw_player(server, room.join_code)
        with clients(mod), contextlib.closing(sleepy):
            deadline = time.time() + 10
            while not any(c.player for c in room.connections if c.role == "player"):
                assert time.time() < deadline
                time.sleep(0.05)
            (conn,) = [c for c in room.connections if c.role == "player"]
            start_paused(mod)
            # full states to everyone, as every change sends them, on the server's own loop
            loop = room.loop
            for _ in range(400):  # until the kernel's buffers and the backlog are full
                for _ in range(50):
                    loop.call_soon_threadsafe(room.broadcast_state)
                mod.drain(0.01)
                if conn.dropped_for_lag:
                    break
            assert conn.dropped_for_lag and conn.queued_bytes == 0
            # the server's log says so (the client sees a close without a close frame)
            (drop,) = [r for r in caplog.records if LAG_DROP in r.getMessage()]
            assert drop.levelname == "WARNING"
            assert drop.getMessage().startswith("dropped a player connection from 127.0.0.1")
            assert all(item is None for item in list(conn.queue._queue))  # the backlog is freed
            # the socket is dropped: the server lets go of the connection and its slot
            deadline = time.time() + 10
            while conn in room.connections or server.arena.connections_from["127.0.0.1"] > 1:
                assert time.time() < deadline, "the lagging connection was kept"
                time.sleep(0.05)
            # the others go on as before
            mod.send(type="step", unit="word")
            assert mod.state(lambda s: s["tossup"]["position"] >= 0)


def test_players_per_match_and_connections_per_address_are_limited(db_url):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams(),
        max_players_per_match=2, max_connections_per_address=4,
    )  # fmt: skip
    with LiveServer(settings) as server:
        room = server.room()
        first, second = player(server, "red", "One"), player(server, "blue", "Two")
        third = Client(server.ws_url)
        with clients(first, second, third):
            third.send(type="hello", role="player", join_code=room.join_code)
            third.wait("welcome")
            third.send(type="join", team="red", name="Three")
            error = third.wait("error")
            assert error["code"] == "not_allowed" and "full (2 players)" in error["message"]
            fourth = Client(server.ws_url)  # the fourth connection from 127.0.0.1
            with clients(fourth), pytest.raises(InvalidStatus) as refused:
                Client(server.ws_url)  # the fifth
            assert refused.value.response.status_code == 403
        deadline = time.time() + 10
        while server.arena.connections_from:  # closed connections are counted out
            assert time.time() < deadline, server.arena.connections_from
            time.sleep(0.05)
        with clients(Client(server.ws_url)):
            pass


def test_closing_a_room_with_clients_connected_raises_nothing(server):
    """Shutting down with a client still in the room used to raise TypeError (a None sent
    as a message), so the rooms after it were not closed."""
    import asyncio

    room = server.room()
    red = player(server, "red", "Ruth")
    with clients(red):
        loop = room.loop
        asyncio.run_coroutine_threadsafe(room.close(), loop).result(timeout=10)


@on_both_backends
def test_moderator_tokens_are_random_per_match_and_stored_hashed(db_url, tmp_path):

    tokens = []
    for url in (db_url, f"sqlite:///{tmp_path / 'other.db'}"):
        settings = Settings(
            db_url=url, packets=[SAMPLE_PACKET_PATH], secret="same", first_match=two_teams()
        )
        with LiveServer(settings) as server:
            room = server.room()
            token = server.run(server.events.match_moderator_token(room.rm.id))
            tokens.append((room.rm.id, token))
            hashes = match_moderator_hashes(server.arena.engine, room.rm.id)
            assert hashes == [token_sha256(token)]  # its room's
            intruder = Client(server.ws_url)
            with clients(intruder):
                intruder.send(type="hello", role="moderator", match_id=room.rm.id, token="x" * 32)
                assert intruder.wait("error")["code"] == "unauthorized"
    # match 1 of two records with the same secret: two different tokens
    assert tokens[0][0] == tokens[1][0] and tokens[0][1] != tokens[1][1]


def test_one_moderator_at_a_time_a_second_watches_or_takes_over(server):
    room = server.room()
    token = server.run(server.events.match_moderator_token(room.rm.id))
    first = moderator(server)
    second, watcher = Client(server.ws_url), Client(server.ws_url)
    with clients(first, second, watcher):
        hello = {"type": "hello", "role": "moderator", "match_id": room.rm.id, "token": token}
        second.send(**hello)
        refused = second.wait("error")
        assert refused["code"] == "in_use" and refused["in_reply_to"] == "hello"

        watcher.send(**hello, watch=True)
        assert watcher.wait("welcome")["watching"] is True
        watcher.state()
        watcher.send(type="start_tossup")
        assert watcher.wait("error")["code"] == "not_allowed"

        second.send(**hello, take_over=True)
        assert second.wait("welcome")["watching"] is False
        assert first.wait(lambda m: m["type"] == "error")["code"] == "taken_over"
        first.send(type="start_tossup")
        assert first.wait("error")["code"] == "not_allowed"
        second.send(type="start_tossup")
        second.state(lambda s: s["match"]["phase"] == "reading")
        # the watchers follow the match with the moderator's view
        assert watcher.state(lambda s: s["match"]["phase"] == "reading")["tossup"]["answer"]


def test_watchers_learn_who_controls_and_a_moderator_takes_control_back_on_its_socket(server):
    room = server.room()
    token = server.run(server.events.match_moderator_token(room.rm.id))
    hello = {"type": "hello", "role": "moderator", "match_id": room.rm.id, "token": token}
    first = moderator(server)
    second, watcher = Client(server.ws_url), Client(server.ws_url)
    with clients(first, second, watcher):
        watcher.send(**hello, watch=True)
        assert watcher.wait("welcome")["watching"] is True
        assert watcher.wait("control")["controlled"] is True  # someone controls it now

        second.send(**hello, take_over=True)
        assert second.wait("welcome")["watching"] is False
        assert first.wait("error")["code"] == "taken_over"
        assert first.wait("control")["controlled"] is True
        assert watcher.wait("control")["controlled"] is True

        # the one taken over takes control back on the same connection
        first.send(**hello, take_over=True)
        assert first.wait("welcome")["watching"] is False
        first.state()
        assert second.wait("error")["code"] == "taken_over"
        assert second.wait("control")["controlled"] is True
        assert watcher.wait("control")["controlled"] is True
        first.send(type="start_tossup")
        first.state(lambda s: s["match"]["phase"] == "reading")

        # the one in control leaves: the watchers learn at once that nobody controls it
        first.close()
        left = second.wait("control")
        assert left["controlled"] is False and "no moderator" in left["message"]
        assert watcher.wait("control")["controlled"] is False
        second.send(**hello)  # nobody controls the match: a plain hello takes control
        assert second.wait("welcome")["watching"] is False
        assert watcher.wait("control")["controlled"] is True
        second.send(type="pause")
        second.state(lambda s: s["match"]["paused"])

        # a watcher's plain hello again while another controls the match is refused, and it
        # goes on watching: it still gets the match's states
        watcher.send(**hello)
        assert watcher.wait("error")["code"] == "in_use"
        second.send(type="resume")
        watcher.state(lambda s: not s["match"]["paused"])

        # the one in control says hello again to watch: the others learn nobody controls it
        second.send(**hello, watch=True)
        assert second.wait("welcome")["watching"] is True
        assert watcher.wait("control")["controlled"] is False
        assert room.controller is None


def test_a_moderator_token_controls_its_own_match_only(server):
    room = server.room()
    request = urllib.request.Request(
        f"{server.http_url}/api/matches",
        data=json.dumps(two_teams(title="Second room").model_dump()).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {server.events.tokens.server()}",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        other = json.load(response)["match_id"]
    token = server.run(server.events.match_moderator_token(room.rm.id))
    mod = moderator(server)
    with clients(mod):
        # a hello again with this match's token for the other match is refused ...
        mod.send(type="hello", role="moderator", match_id=other, token=token)
        assert mod.wait("error")["code"] == "unauthorized"
        assert server.arena.rooms[other].controller is None
        # ... and the moderator still controls its own match
        mod.send(type="start_tossup")
        mod.state(lambda s: s["match"]["phase"] == "reading")


def test_players_and_displays_never_see_a_packet_id(db_url):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        room = server.room()
        ids = [t.id for t in room.match.config.tossups]
        mod = moderator(server)
        red = player(server, "red", "Ruth")
        display = Client(server.ws_url)
        with clients(mod, red, display):
            display.send(type="hello", role="display", join_code=room.join_code)
            display.wait("welcome")
            start_paused(mod, steps=2)
            red.send(type="buzz")
            red.wait("buzz_result")
            mod.send(type="rule", ruling="correct")
            for watcher in (red, display):
                st = watcher.state(lambda s: s["match"]["phase"] == "answered")
                assert st["tossup"]["id"] == "tossup-1" and st["match"]["tossup_ids"] == []
                watcher.drain(0.2)
                text = json.dumps(watcher.received)
                assert not any(tossup_id in text for tossup_id in ids)
            st = mod.state(lambda s: s["match"]["phase"] == "answered")
            assert st["tossup"]["id"] == ids[0] and st["match"]["tossup_ids"] == ids


@on_both_backends
def test_pace_changes_are_events_of_the_record_and_can_undo_is_in_the_state(db_url):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams()
    )
    with LiveServer(settings) as server:
        room = server.room()
        mod = moderator(server)
        red = player(server, "red", "Ruth")
        with clients(mod, red):
            mod.send(type="set_pace", wpm=240)
            assert mod.state(lambda s: s["reading"]["wpm"] == 240)
            start_paused(mod, steps=2)
            red.send(type="buzz")
            red.wait("buzz_result")
            assert mod.state(lambda s: s["floor"] is not None)["match"]["can_undo"] is False
            mod.send(type="rule", ruling="incorrect")
            assert mod.state(lambda s: s["match"]["can_undo"])
            mod.send(type="undo")
            assert (
                mod.state(lambda s: s["match"]["phase"] == "buzzed")["match"]["can_undo"] is False
            )
        events = server.arena.store.events(room.rm.id)
        assert [e.wpm for e in events if e.type == "pace_changed"] == [240]
    # A restarted server reads at the pace the record has.
    with LiveServer(settings) as server:
        assert server.room().wpm == 240


def test_the_server_asks_for_more_open_files_than_the_usual_1024():
    """A thousand connections that never finish their request held the 1,024 files of the
    usual soft limit, and nobody else got in; the server raises its limit (up to the hard
    one) before it listens."""
    import resource

    from grace_arena.server.app import OPEN_FILES, allow_more_open_files

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
        now = allow_more_open_files()
        assert now == min(OPEN_FILES, hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
