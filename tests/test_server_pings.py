"""The server's pings (for each client's clock estimate): connections that start together are
not pinged together ever after. The server's connections, on a clock the test controls
(tests/virtual_clock.py), so that when each ping is sent is exact however loaded the machine."""

from __future__ import annotations

import asyncio
import json
import random
import types
from itertools import pairwise

import pytest
import virtual_clock

from grace_arena.server import connection as connection_module
from grace_arena.server.connection import Connection

INTERVAL = 0.6


class Socket:
    """What a connection needs of its websocket until it writes to it (nothing here does)."""

    def __init__(self) -> None:
        self.scope: dict = {}
        self.client = None


def test_connections_that_join_together_are_pinged_at_phases_of_their_own(monkeypatch):
    def pinged(conn: Connection) -> list[float]:
        """When ``conn``'s pings were sent (what is queued for it is nothing else)."""
        texts = []
        while not conn.queue.empty():
            texts.append(json.loads(conn.queue.get_nowait()))
        assert {m["type"] for m in texts} == {"ping"}
        return [m["sent"] for m in texts]

    async def scenario() -> list[list[float]]:
        loop = asyncio.get_running_loop()
        # the connections' clock is the loop's; their phases are drawn from a seeded generator
        clock = types.SimpleNamespace(time=loop.time, monotonic=loop.time)
        monkeypatch.setattr(connection_module, "time", clock)
        monkeypatch.setattr(connection_module, "random", random.Random(37))
        conns = [Connection(Socket()) for _ in range(10)]
        # as if every phone had joined in the same instant (after a restart, say)
        for conn in conns:
            conn.start_pinging(INTERVAL)
        started = loop.time()
        await asyncio.sleep(2.5 * INTERVAL)
        for conn in conns:
            conn.stop_pinging()
        return [[t - started for t in pinged(conn)] for conn in conns]

    gaps = []
    for sent in virtual_clock.run(scenario()):
        # the quick burst (six pings 0.05 s apart), then the pings every interval
        assert len(sent) >= 8 and sent[0] == 0.0
        assert [b - a for a, b in pairwise(sent[:6])] == pytest.approx([0.05] * 5)
        assert sent[7] - sent[6] == pytest.approx(INTERVAL)
        gaps.append(sent[6] - sent[5])
    # the first ping of the interval comes at a phase of each connection's own, between the
    # burst and an interval after it: not all at once, as before
    assert all(0.05 <= g <= INTERVAL for g in gaps), gaps
    assert max(gaps) - min(gaps) > INTERVAL / 4, gaps
