"""Phones that keep pressing while the record is away: the room's queue stays one press a
player, and every press is answered once the record is back."""

from __future__ import annotations

import threading
import time

from live import LiveServer, buzz_first_word, clients, moderator, player, two_teams
from processes import hold_lock

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings

PLAYERS, PRESSES = 16, 25


def test_presses_during_a_record_outage_wait_as_one_a_player_and_are_all_answered(tmp_path):
    path = tmp_path / "record.db"
    settings = Settings(
        db_url=f"sqlite:///{path}",
        packets=[SAMPLE_PACKET_PATH],
        secret="s",
        first_match=two_teams(),
        rate_per_second=1000.0,
        rate_burst=1000,
    )
    with LiveServer(settings) as server:
        mod = moderator(server)
        phones = [player(server, ("red", "blue")[i % 2], f"P{i}") for i in range(PLAYERS)]
        with clients(mod, *phones):
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            room = server.room()
            locker = hold_lock(path, 4.0)
            mod.send(type="step")  # a change that waits for the record: the room holds
            mod.state(lambda s: s["record"] is not None, timeout=5)

            queued: list[int] = []
            stop = threading.Event()

            async def queue_length() -> int:
                pipeline = room.pipeline
                return len(pipeline._queue)

            def watch() -> None:
                while not stop.is_set():
                    queued.append(server.run(queue_length()))
                    time.sleep(0.02)

            watcher = threading.Thread(target=watch)
            watcher.start()
            for _ in range(PRESSES):
                for phone in phones:
                    phone.send(type="buzz")
            time.sleep(0.5)  # the presses are read while the record is still away
            locker.wait(30)
            results = [
                [phone.wait("buzz_result", timeout=20) for _ in range(PRESSES)] for phone in phones
            ]
            stop.set()
            watcher.join()
            # one press a player (and the step) waited; nothing more piled up
            assert max(queued) <= PLAYERS + 1, max(queued)
            outcomes = [r["outcome"] for answers in results for r in answers]
            assert len(outcomes) == PLAYERS * PRESSES
            winners = {
                r["buzz_id"] for answers in results for r in answers if r["outcome"] == "won"
            }
            assert len(winners) == 1
            buzzes = server.arena.store.buzzes(room.rm.id)
            assert sum(b.outcome == "won" for b in buzzes) == 1
            assert len(buzzes) <= PLAYERS * PRESSES


def test_a_ruling_sent_twice_while_the_record_is_away_does_not_rule_the_bonus_after_it(tmp_path):
    """The moderator rules a buzz correct while the record is away and, seeing nothing change,
    rules it again: the second ruling was for that buzz, and is refused once the bonus is up
    rather than taken for its first part (points nobody earned)."""
    path = tmp_path / "record.db"
    setup = two_teams(format="naqt", reading_mode="screen", bonus_answer_time=60)
    settings = Settings(
        db_url=f"sqlite:///{path}", packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup
    )
    with LiveServer(settings) as server:
        mod, red = moderator(server), player(server, "red", "Ann")
        with clients(mod, red):
            buzz_first_word(mod, red)
            locker = hold_lock(path, 3.0)
            mod.send(type="rule", ruling="correct")
            mod.state(lambda s: s["record"] is not None, timeout=5)
            mod.send(type="rule", ruling="correct")
            locker.wait(30)
            refused = mod.wait(lambda m: m["type"] == "error", timeout=15)
            assert refused["code"] == "illegal" and "buzz" in refused["message"]
            mod.drain(0.3)
            st = next(m for m in reversed(mod.received) if m["type"] == "state")
            assert st["match"]["phase"] == "bonus" and st["record"] is None
            assert st["bonus"]["part"] == 0 and st["teams"][0]["score"] == 15
            match = server.room().match
            assert match.game.bonus.results == ()
