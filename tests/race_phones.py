"""Phones for compensated races on a real server (tests and ``bench/bench_races.py``): each
reads its socket all the time on a thread of its own, as a browser does, so that it answers
the server's pings at once, or holds its pongs back as a cheat would."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from live import Client, LiveServer

from grace_arena.server.arbiter import MIN_CLOCK_SAMPLES


class Phone(Client):
    """A client that reads on a thread of its own once :meth:`listen` is called.

    ``hold``: each ping is answered that many seconds after it is read, stamped with this
    clock at the midpoint of the held round trip, so that every sample gives the same offset
    (a spread of 0, as an honest clock's): a phone that makes itself look ``hold`` away, to
    be credited a press that long before its buzz arrives. The answers go out from timers,
    so that one held pong does not hold up the next ping."""

    def __init__(self, url: str, *, hold: float = 0.0) -> None:
        super().__init__(url)
        self.hold = hold
        self._stop = threading.Event()
        self._reader: threading.Thread | None = None

    def _next(self, timeout: float) -> dict[str, Any]:
        if not self.hold or self._unread:
            return super()._next(timeout)
        message = json.loads(self.ws.recv(timeout=timeout))
        if message["type"] == "ping":
            pong = {"type": "pong", "sent": message["sent"], "time": time.time() + self.hold / 2}
            timer = threading.Timer(self.hold, self._send_quietly, args=(pong,))
            timer.daemon = True
            timer.start()
        self.received.append(message)
        return message

    def _send_quietly(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(Exception):  # the connection may be closed by then
            self.ws.send(json.dumps(message))

    def join(self, join_code: str, team: str, name: str) -> Phone:
        self.send(type="hello", role="player", join_code=join_code)
        self.wait("welcome")
        self.send(type="join", team=team, name=name)
        self.joined = self.wait("joined")
        return self

    def listen(self) -> Phone:
        """Read on a thread from now on (:meth:`seen` then looks at what was read)."""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        with contextlib.suppress(Exception):  # closed
            while not self._stop.is_set():
                self.drain(0.1)

    def seen(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10.0, since: int = 0
    ) -> dict[str, Any]:
        """The first message read (the ``since``-th on) so far or within ``timeout`` that
        ``predicate`` takes."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            for message in self.received[since:]:
                if predicate(message):
                    return message
            time.sleep(0.01)
        raise TimeoutError(f"no such message; last: {self.received[-3:]}")

    def press(self, earlier: float = 0.0) -> float:
        """Buzz now, claiming a press ``earlier`` seconds before; the true press time."""
        now = time.time()
        self.send(type="buzz", client_time=now - earlier)
        return now

    def close(self) -> None:
        self._stop.set()
        super().close()
        if self._reader is not None:
            self._reader.join(2)


def moderator_phone(server: LiveServer) -> Phone:
    room = server.room()
    phone = Phone(server.ws_url)
    token = server.run(server.events.match_moderator_token(room.rm.id))
    phone.send(type="hello", role="moderator", match_id=room.rm.id, token=token)
    phone.wait("welcome")
    return phone


def wait_for_clocks(server: LiveServer, count: int, timeout: float = 30.0) -> None:
    """Until ``count`` connections of the room have a clock the server trusts."""
    room = server.room()
    deadline = time.time() + timeout
    while time.time() < deadline:
        samples = [len(c.clock.samples) for c in list(room.connections)]
        if sum(n >= MIN_CLOCK_SAMPLES + 2 for n in samples) >= count:
            return
        time.sleep(0.05)
    raise TimeoutError(f"clock samples: {samples}")


def open_floor(mod: Phone, words: int = 3) -> None:
    """The moderator starts the next tossup, pauses it and reveals ``words`` words: the floor
    is open for a race (``mod`` listens)."""

    def state(test: Callable[[dict[str, Any]], bool]) -> None:
        mod.seen(lambda m: m["type"] == "state" and test(m), since=mark)

    mark = len(mod.received)
    mod.send(type="start_tossup")
    state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    state(lambda s: s["match"]["paused"])
    for _ in range(words):
        mod.send(type="step", unit="word")
    state(lambda s: s["tossup"]["position"] >= words - 1)


@contextlib.contextmanager
def stalled(server: LiveServer) -> Iterator[None]:
    """The server's loop blocked (a call that does not return, as a broadcast to hundreds or
    a garbage collection) from before the block's body runs until after it."""
    started, release = threading.Event(), threading.Event()

    def block() -> None:
        started.set()
        release.wait(10)

    server.loop.call_soon_threadsafe(block)
    if not started.wait(10):
        raise TimeoutError("the server's loop did not run the stall")
    try:
        yield
    finally:
        release.set()
