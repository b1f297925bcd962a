"""The server's pings (for each client's clock estimate) with real websocket clients on a free
loopback port: connections that start together are not pinged together ever after."""

from __future__ import annotations

import time

from live import LiveServer, clients, player, two_teams

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings

INTERVAL = 0.6


def test_connections_that_join_together_are_pinged_at_phases_of_their_own(db_url):
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="x", first_match=two_teams(),
        ping_interval=INTERVAL,
    )  # fmt: skip
    with LiveServer(settings) as server:
        room = server.room()
        players = [player(server, ("red", "blue")[i % 2], f"P{i}") for i in range(10)]
        with clients(*players):
            conns = [c for c in room.connections if c.role == "player"]
            assert len(conns) == 10

            async def start_together() -> float:
                # as if every phone had joined in the same instant (after a restart, say)
                for conn in conns:
                    conn.stop_pinging()
                    conn.start_pinging(INTERVAL)
                return time.time()

            started = server.run(start_together())
            time.sleep(2.5 * INTERVAL)
            gaps = []
            for p in players:
                p.drain(0.05)
                sent = [
                    m["sent"] for m in p.received if m["type"] == "ping" and m["sent"] >= started
                ]
                # the quick burst (six pings 0.05 s apart), then the pings every interval
                assert len(sent) >= 8
                assert sent[5] - sent[0] < 0.25 + 0.2
                assert abs((sent[7] - sent[6]) - INTERVAL) < 0.2
                gaps.append(sent[6] - sent[5])
            # the first ping of the interval comes at a phase of each connection's own, between
            # the burst and an interval after it: not all at once, as before
            assert all(0.05 - 0.01 <= g <= INTERVAL + 0.2 for g in gaps), gaps
            assert max(gaps) - min(gaps) > INTERVAL / 4, gaps
