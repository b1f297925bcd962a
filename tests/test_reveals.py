"""A word revealed as a ``reveal`` (the change to the state a client has) rather than a whole
state: a client that takes reveals ends up with exactly the states a client that does not is
sent, through a tossup read, buzzed, ruled, paused, stepped and thrown out, in screen and
read-aloud rooms, with and without a model player, an exhibition's display included; the
pages' own ``applyReveal`` (``common.js``, in Chromium) does what ``apply_reveal`` does.

A real server on a free port, real websockets; the clients are threads that keep every
message and answer pings."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any

import pytest
from live import Client, LiveServer, display_grant, moderator, new_match
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from grace_arena.protocol import TeamSetup, apply_reveal

pytestmark = pytest.mark.server(per_module=True, secret="reveal-tests", first_match=None)

HUMANS = [TeamSetup(id="red", name="Red"), TeamSetup(id="blue", name="Blue")]
WITH_MODEL = [
    TeamSetup(id="red", name="Red"),
    TeamSetup(id="model", name="Robo", kind="model", model="tfidf", threshold=0.3),
]


class Recorder:
    """A client in a thread of its own: says hello (and joins), keeps every message."""

    def __init__(self, server: LiveServer, hello: dict[str, Any], join: dict | None = None):
        self._connect = connect(server.ws_url, open_timeout=10, max_queue=None)
        self.ws = self._connect.__enter__()
        self.messages: list[dict[str, Any]] = []
        self.ws.send(json.dumps(hello))
        self._until("welcome")
        if join is not None:
            self.ws.send(json.dumps(join))
            self._until("joined")
        self._until("state")
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _until(self, kind: str) -> None:
        while True:
            msg = json.loads(self.ws.recv(timeout=10))
            self._keep(msg)
            if msg["type"] == kind:
                return
            assert msg["type"] != "error", msg

    def _keep(self, msg: dict[str, Any]) -> None:
        if msg["type"] == "ping":
            self.ws.send(json.dumps({"type": "pong", "sent": msg["sent"], "time": time.time()}))
        else:
            self.messages.append(msg)

    def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed, OSError):
            while True:
                self._keep(json.loads(self.ws.recv()))

    def send(self, **message: Any) -> None:
        self.ws.send(json.dumps(message))

    def close(self) -> list[dict[str, Any]]:
        self._connect.__exit__(None, None, None)
        self.thread.join(5)
        return self.messages


def states(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[tuple]]:
    """The states a client has, one per state or reveal it got (a reveal applied to the state
    before it), and the (state, reveal) pairs applied."""
    out: list[dict[str, Any]] = []
    pairs = []
    for msg in messages:
        if msg["type"] == "state":
            out.append(msg)
        elif msg["type"] == "reveal":
            assert out, "a reveal before any state"
            after = apply_reveal(out[-1], msg)
            assert after is not None, f"a reveal that does not follow its state: {msg}"
            pairs.append((out[-1], msg))
            out.append(after)
    return out, pairs


def _comparable(state: dict[str, Any]) -> dict[str, Any]:
    """A state without what depends on the instant it was built (each role's is built once
    per change, a reveal a moment apart)."""
    clock = state.get("game_clock")
    return {
        **state,
        "server_time": None,
        "game_clock": {**clock, "left": None} if clock else None,
    }


def _from_first_reading(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    first = next(i for i, s in enumerate(seen) if s["match"]["phase"] == "reading")
    return [_comparable(s) for s in seen[first:]]


def _wait(mod, predicate, timeout: float = 15.0) -> dict[str, Any]:
    return mod.state(predicate, timeout=timeout)


def _play(mod, buzzer: Recorder) -> None:
    """A tossup read and buzzed, ruled wrong, read on, paused, stepped, resumed, to its end;
    a second started and thrown out; a third read for a moment, then paused."""
    mod.send(type="start_tossup")
    _wait(mod, lambda s: s["match"]["phase"] == "reading" and s["tossup"]["position"] >= 3)
    buzzer.send(type="buzz")
    state = _wait(mod, lambda s: s["match"]["phase"] != "reading")
    if state["match"]["phase"] in ("buzzed", "prompted"):
        mod.send(type="rule", ruling="incorrect")
    _wait(mod, lambda s: s["match"]["phase"] == "reading" and not s["match"]["paused"])
    time.sleep(0.3)
    mod.send(type="pause")
    _wait(mod, lambda s: s["match"]["paused"] or s["match"]["phase"] != "reading")
    for _ in range(2):
        mod.send(type="step", unit="word")
        time.sleep(0.1)
    mod.send(type="resume")
    state = _wait(mod, lambda s: s["match"]["phase"] not in ("reading", "awaiting"), 30)
    if state["match"]["phase"] in ("buzzed", "prompted"):  # the model's buzz
        mod.send(type="rule", ruling="correct")
        _wait(mod, lambda s: s["match"]["phase"] in ("answered", "dead"))
    mod.send(type="start_tossup")
    _wait(mod, lambda s: s["match"]["phase"] == "reading" and s["tossup"]["position"] >= 2)
    mod.send(type="throw_out")
    _wait(mod, lambda s: s["match"]["phase"] == "thrown_out")
    mod.send(type="start_tossup")
    _wait(mod, lambda s: s["match"]["phase"] == "reading" and s["tossup"]["position"] >= 4)
    mod.send(type="pause")
    _wait(mod, lambda s: s["match"]["paused"] or s["match"]["phase"] != "reading")
    time.sleep(0.5)  # (everything sent has arrived)


@pytest.mark.parametrize(
    ("mode", "teams", "exhibition"),
    [
        ("screen", HUMANS, False),
        ("read_aloud", HUMANS, False),
        ("screen", WITH_MODEL, False),
        ("screen", WITH_MODEL, True),
    ],
    ids=["screen", "read-aloud", "model", "exhibition"],
)
def test_a_client_that_takes_reveals_has_every_state_the_others_are_sent(
    server, mode, teams, exhibition
):
    extra = {"answer_time": 10.0} if mode == "read_aloud" else {}
    match_id, code = new_match(
        server, teams=teams, reading_mode=mode, exhibition=exhibition, **extra
    )
    team = teams[0].id
    made: list[Recorder] = []
    mod = moderator(server, match_id)
    try:
        _pace(mod, 900)
        for name, reveals in (("Plain", False), ("Reveals", True)):
            hello = {"type": "hello", "role": "player", "join_code": code, "reveals": reveals}
            made.append(Recorder(server, hello, {"type": "join", "team": team, "name": name}))
        for reveals in (False, True):
            hello = {"type": "hello", "role": "display", "join_code": code, "reveals": reveals,
                     "token": display_grant(server, code)}  # fmt: skip
            made.append(Recorder(server, hello))
        _play(mod, made[0])
    finally:
        got = [r.close() for r in made]
        mod.close()
    plain_phone, phone, plain_display, display = got
    for plain, revealed, role in (
        (plain_phone, phone, "player"),
        (plain_display, display, "display"),
    ):
        assert not any(m["type"] == "reveal" for m in plain)
        seen, pairs = states(revealed)
        expected = _from_first_reading([m for m in plain if m["type"] == "state"])
        assert _from_first_reading(seen) == expected, role
        if role == "display" and exhibition:
            assert not pairs  # (the models' curves move with every word: whole states)
        else:
            words = sum(1 for s in expected if not s["events"])
            # every state that only moved the words came as a reveal
            assert len(pairs) >= words * 0.9 > 10, (role, len(pairs), words)
        for before, reveal in pairs:
            if role == "display" or mode == "screen":
                assert (
                    reveal["words"] and len(reveal["words"]) == reveal["position"] - reveal["after"]
                )
            else:  # a read-aloud room's phones show no words while they are read
                assert reveal["words"] is None and before["tossup"]["words"] is None


def _pace(mod, wpm: int) -> None:
    mod.send(type="set_pace", wpm=wpm)
    _wait(mod, lambda s: s["reading"]["wpm"] == wpm)


def test_a_moderator_that_asks_for_reveals_gets_whole_states(server):
    match_id, _code = new_match(server, reading_mode="screen")
    mod = Client(server.ws_url)
    token = server.run(server.events.match_moderator_token(match_id))
    mod.send(type="hello", role="moderator", match_id=match_id, token=token, reveals=True)
    try:
        mod.wait("welcome")
        _pace(mod, 900)
        mod.send(type="start_tossup")
        _wait(mod, lambda s: s["tossup"] is not None and s["tossup"]["position"] >= 5)
        mod.send(type="pause")
        _wait(mod, lambda s: s["match"]["paused"])
    finally:
        mod.close()
    assert not any(m["type"] == "reveal" for m in mod.received)


@pytest.mark.slow
def test_the_pages_apply_a_reveal_as_the_server_means_it(server, pages):
    """``applyReveal`` in the page (Chromium) gives what ``apply_reveal`` gives, for every
    reveal a screen room's phone and display were sent, and refuses one that does not follow
    the state."""
    pytest.importorskip("browser")
    match_id, code = new_match(server, teams=HUMANS, reading_mode="screen")
    mod = moderator(server, match_id)
    made = []
    try:
        _pace(mod, 900)
        hello = {"type": "hello", "role": "player", "join_code": code, "reveals": True}
        made.append(Recorder(server, hello, {"type": "join", "team": "red", "name": "Ann"}))
        grant = display_grant(server, code)
        made.append(Recorder(server, {**hello, "role": "display", "token": grant}))
        _play(mod, made[0])
    finally:
        got = [r.close() for r in made]
        mod.close()
    pairs = [p for messages in got for p in states(messages)[1]]
    assert len(pairs) > 20
    page = pages()
    page.goto(f"{server.http_url}/?code={code}")
    applied = page.evaluate(
        "pairs => pairs.map(([s, r]) => window.GraceArena.applyReveal(s, r))", pairs
    )
    assert applied == [apply_reveal(s, r) for s, r in pairs]
    state, reveal = pairs[0]
    wrong = [{**reveal, "after": reveal["after"] + 1}, {**reveal, "tossup": "tossup-99"}]
    assert page.evaluate(
        "([s, rs]) => rs.map((r) => window.GraceArena.applyReveal(s, r))", [state, wrong]
    ) == [None, None]
    assert page.evaluate("s => window.GraceArena.applyReveal(s, {})", {"tossup": None}) is None
