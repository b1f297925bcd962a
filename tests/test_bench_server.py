"""``bench/bench_server.py``'s lock-out rounds say why a lock-out did not reach every client (a
buzz refused, clients closed by the server and how) rather than time out, against a real
``grace-arena serve``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_server as bench

pytestmark = pytest.mark.slow


def test_a_lockout_that_does_not_come_is_explained(tmp_path: Path) -> None:
    async def run() -> None:
        proc, port = bench.start_arena(tmp_path)
        try:
            match = bench.create_match(port, mode="read_aloud", wpm=120)
            peers = await bench.arena_players(port, match["join_code"], 3, bench.locked)
            _, mod = await bench.arena_moderator(port, match)
            # no tossup started: the buzz is refused, and nobody is locked out
            with pytest.raises(bench.LockoutMissed) as missed:
                await bench.buzz_round(peers, others=(mod,), folder=tmp_path, limit=2.0)
            said = str(missed.value)
            assert said.startswith("3 of 3 clients did not get the lock-out in ")
            assert "3 are still connected" in said
            assert (
                'the buzzer was told: {"type": "buzz_result", "buzz_id": 1, "outcome": "not_live"'
                in said
            )
            assert "closed" not in said and "lagging" not in said

            # the server stops: it closes every connection, saying why
            proc.terminate()
            await asyncio.wait([p.task for p in peers], timeout=15)
            with pytest.raises(bench.LockoutMissed) as missed:
                await bench.buzz_round(peers, folder=tmp_path, limit=2.0)
            said = str(missed.value)
            assert "3 were closed by the server with code 1001 (this server process is" in said
            assert "still connected" not in said
        finally:
            proc.kill()
            proc.wait()

    asyncio.run(run())


def test_clients_dropped_for_lagging_are_counted_from_the_server_log(tmp_path: Path) -> None:
    from grace_arena.server.connection import LAG_DROP

    assert bench.lag_drops(tmp_path) == 0  # no log yet
    (tmp_path / "server.log").write_text(
        f"dropped a player connection from 127.0.0.1: {LAG_DROP} (1048700 bytes waiting)\n"
        "some other warning\n"
        f"dropped a display connection from 127.0.0.1: {LAG_DROP} (1048800 bytes waiting)\n"
    )
    assert bench.lag_drops(tmp_path) == 2
    said = bench.closes_said([[1006, ""], [1006, ""], [1001, "stopping"]], 2)
    assert said == (
        "3 client connections ended during the run: 1 closed with code 1001 (stopping)"
        ", 2 closed without a close frame (code 1006); the server's log says it dropped 2"
        " clients for lagging: the client processes did not read fast enough, and their"
        " samples stop there"
    )


def test_runs_are_summed_up_as_the_median_of_each_runs_ratios() -> None:
    fast = {"arena": [2.0, 4.0, 6.0], "raw": [1.0, 2.0, 3.0], "raw+store": [2.0, 4.0, 6.0]}
    slow = {"arena": [3.0, 3.0, 9.0], "raw": [1.0, 1.0, 1.0], "raw+store": [1.0, 2.0, 3.0]}
    # (p50 ratio, p99 ratio, median of the rounds' ratios to the rounds next to them)
    assert bench.run_ratios(fast) == {"raw": (2.0, 2.0, 2.0), "raw+store": (1.0, 1.0, 1.0)}
    assert bench.run_ratios(slow) == {"raw": (3.0, 9.0, 3.0), "raw+store": (1.5, 3.0, 3.0)}
    odd = {"arena": [1.0, 1.0, 1.0], "raw": [1.0, 1.0, 1.0], "raw+store": [1.0, 1.0, 1.0]}
    runs = [bench.run_ratios(t) for t in (fast, slow, odd)]
    assert bench.median_ratios(runs) == {"raw": (2.0, 2.0, 2.0), "raw+store": (1.0, 1.0, 1.0)}
