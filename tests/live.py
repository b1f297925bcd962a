"""A real server on a free loopback port, and real websocket clients, for tests and benches."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from grace_arena.protocol import MatchSetup, TeamSetup
from grace_arena.server.app import HttpLimits, Settings, create_app, web_server

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def two_teams(**overrides: Any) -> MatchSetup:
    data = {
        "packet_id": "grace-arena-sample-1",
        "teams": [TeamSetup(id="red", name="Red"), TeamSetup(id="blue", name="Blue")],
        "wpm": 600,
        "answer_time": None,
    }
    data.update(overrides)
    return MatchSetup(**data)


class LiveServer:
    def __init__(self, settings: Settings, *, http_limits: HttpLimits | None = None) -> None:
        self.port = free_port()
        settings.public_url = f"http://127.0.0.1:{self.port}"
        self.app = create_app(settings)
        self.arena = self.app.state.arena
        #: The rooms layer (join codes, schedules, players: an event's rooms, matches' own).
        self.events = self.app.state.rooms
        # the server `serve` runs: stopped, it tells the clients why (the rooms retired)
        self.server = web_server(self.app, host="127.0.0.1", port=self.port, limits=http_limits)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            if time.time() > deadline or not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The server's event loop (it runs in a thread of its own)."""
        return self.server.servers[0].get_loop()

    def run(self, work: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
        """Run a coroutine on the server's loop (where its state may change) and wait for it."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    def room(self, match_id: int | None = None):
        rooms = self.arena.rooms
        return rooms[match_id] if match_id is not None else next(iter(rooms.values()))


class Client:
    """A websocket client that answers pings and collects what it receives."""

    def __init__(self, url: str) -> None:
        self._connect = connect(url, open_timeout=10, ping_interval=None, max_queue=None)
        self.ws: ClientConnection = self._connect.__enter__()
        self.received: list[dict[str, Any]] = []
        self._unread: list[dict[str, Any]] = []

    def send(self, **message: Any) -> None:
        self.ws.send(json.dumps(message))

    def send_raw(self, text: str) -> None:
        self.ws.send(text)

    def _next(self, timeout: float) -> dict[str, Any]:
        if self._unread:
            return self._unread.pop(0)
        message = json.loads(self.ws.recv(timeout=timeout))
        if message["type"] == "ping":
            # (a ping read after the server closed the connection is answered by nobody)
            with contextlib.suppress(ConnectionClosed):
                self.send(type="pong", sent=message["sent"], time=time.time())
        if message["type"] == "state" and message.get("events"):
            # The events of a change come inside its state; tests may wait for them one by one.
            unpacked = [{"type": "event", "event": e} for e in message["events"]]
            self.received.extend(unpacked)
            self._unread = [*unpacked[1:], message]
            self.received.append(message)
            return unpacked[0]
        self.received.append(message)
        return message

    def wait(
        self, predicate: Callable[[dict[str, Any]], bool] | str, timeout: float = 10.0
    ) -> dict[str, Any]:
        if isinstance(predicate, str):
            kind = predicate
            predicate = lambda m: m["type"] == kind  # noqa: E731
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError(f"no such message; last: {self.received[-3:]}")
            message = self._next(left)
            if predicate(message):
                return message

    def state(
        self, predicate: Callable[[dict[str, Any]], bool] = lambda s: True, timeout: float = 10.0
    ) -> dict[str, Any]:
        return self.wait(lambda m: m["type"] == "state" and predicate(m), timeout)

    def drain(self, seconds: float = 0.2) -> None:
        with contextlib.suppress(TimeoutError):
            while True:
                self._next(seconds)

    def close(self) -> None:
        self._connect.__exit__(None, None, None)


def display_grant(server: LiveServer, code: str) -> str:
    """The grant of the room's display (another room reading the same packet keeps its words
    from a code alone)."""
    sr = server.events.rooms[code.strip().upper()]
    return server.events.tokens.display(sr.event_id, sr.room_id)


def display_url(server: LiveServer, code: str, query: str = "") -> str:
    """A room's display page with the room's grant, as ``serve`` prints it for the
    projector."""
    return f"{server.http_url}/display?code={code}&token={display_grant(server, code)}{query}"


def projector_url(server: LiveServer, event: str, query: str = "") -> str:
    """The event's projector page with the event's grant, as ``serve`` prints it."""
    event_id = server.events.served_event(event)
    assert event_id is not None
    grant = server.events.tokens.display(event_id)
    return f"{server.http_url}/display?event={event}&token={grant}{query}"


def new_match(server: LiveServer, **overrides: Any) -> tuple[int, str]:
    """A fresh match through the HTTP API, as the moderator's screen makes one (slow reading:
    the moderator steps by hand): its id and join code. ``overrides`` go to :func:`two_teams`."""
    request = urllib.request.Request(
        f"{server.http_url}/api/matches",
        data=two_teams(wpm=30, **overrides).model_dump_json().encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {server.events.tokens.server()}",
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=120) as reply:
        created = json.loads(reply.read())
    return created["match_id"], created["join_code"]


def moderator(server: LiveServer, match_id: int | None = None) -> Client:
    room = server.room(match_id)
    client = Client(server.ws_url)
    client.send(
        type="hello",
        role="moderator",
        match_id=room.rm.id,
        token=server.run(server.events.match_moderator_token(room.rm.id)),
    )
    client.wait("welcome")
    client.state()
    return client


def player(server: LiveServer, team: str, name: str, match_id: int | None = None) -> Client:
    room = server.room(match_id)
    client = Client(server.ws_url)
    client.send(type="hello", role="player", join_code=room.join_code)
    client.wait("welcome")
    client.send(type="join", team=team, name=name)
    client.joined = client.wait("joined")  # type: ignore[attr-defined]
    client.state()
    return client


@contextlib.contextmanager
def clients(*made: Client) -> Iterator[tuple[Client, ...]]:
    try:
        yield made
    finally:
        for c in made:
            with contextlib.suppress(Exception):
                c.close()


def buzz_first_word(mod: Client, phone: Client) -> None:
    """The moderator starts the next tossup and pauses it, reveals one word, and the phone
    buzzes: its player has the floor."""
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    mod.state(lambda s: s["match"]["paused"])
    mod.send(type="step", unit="word")
    mod.state(lambda s: s["tossup"]["position"] >= 0)
    phone.send(type="buzz")
    mod.state(lambda s: s["floor"] is not None)


def buzz_and_rule_correct(mod: Client, buzzer: Client, then: str = "answered") -> None:
    """The player buzzes and takes the floor; the moderator rules it correct, and the match
    goes on to ``then`` (``bonus`` where bonuses are played)."""
    buzzer.drain(0.05)
    buzzer.send(type="buzz")
    assert buzzer.wait("buzz_result")["outcome"] == "won"
    mod.state(lambda s: s["floor"] is not None)
    mod.send(type="rule", ruling="correct")
    mod.state(lambda s: s["match"]["phase"] == then)


def play_a_correct_buzz(mod: Client, buzzer: Client) -> None:
    """The moderator starts a tossup and pauses it; the player buzzes; ruled correct."""
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    mod.state(lambda s: s["match"]["paused"])
    buzz_and_rule_correct(mod, buzzer)


def win_first_word(mod: Client, phone: Client, answer: str) -> None:
    """The phone's team wins the next tossup at its first word (:func:`buzz_first_word`): the
    phone answers, the moderator rules it correct."""
    buzz_first_word(mod, phone)
    phone.send(type="answer", text=answer)
    mod.state(lambda s: s["floor"]["answer"] == answer)
    mod.send(type="rule", ruling="correct")
