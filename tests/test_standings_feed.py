"""An event's standings are pushed, not pulled: computed once per change and published as a
versioned snapshot (the record's version); a client asking with the version it shows is
answered when newer standings are published; no request computes anything; and the
snapshot rebuilt from the record after a restart equals the live one."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request

from backends import on_both_backends
from event_helpers import code_of, event_server, make_event, room_moderator, room_player
from live import clients

from grace_arena.protocol import StandingsView
from grace_arena.record.db import make_engine
from grace_arena.record.schedule import standings_stamp
from grace_arena.server.standings_feed import StandingsFeed


def _view(version: int = 0) -> StandingsView:
    return StandingsView(event="night", title="Night", rounds=3, rows=[], version=version)


def test_the_feed_keeps_the_newest_and_wakes_who_waits_for_it() -> None:
    async def scenario() -> None:
        feed = StandingsFeed()
        assert await feed.newer(1, 0, 0.0) is None  # nothing published yet
        feed.publish(1, 5, _view())
        waiting = asyncio.ensure_future(feed.newer(1, 5, 30.0))
        await asyncio.sleep(0)
        assert not waiting.done()  # version 5 is what it shows: it waits
        feed.publish(1, 3, _view())  # an older computation that crossed: dropped
        await asyncio.sleep(0)
        assert not waiting.done()
        feed.publish(1, 7, _view())
        got = await waiting
        assert got is not None and (got.version, got.view.version) == (7, 7)
        # a wait that times out gets the latest, whatever its version
        same = await feed.newer(1, 7, 0.01)
        assert same is not None and same.version == 7
        assert feed.computations == 3

    asyncio.run(scenario())


def _standings(base: str, after: int | None = None) -> dict:
    query = f"?after={after}" if after is not None else ""
    with urllib.request.urlopen(f"{base}/api/events/night/standings{query}", timeout=60) as r:
        return json.load(r)


@on_both_backends
def test_a_ruling_reaches_who_waits_for_newer_standings_and_requests_compute_nothing(
    db_url,
) -> None:
    plan = make_event(db_url)
    room1 = code_of(plan, "1")
    with event_server(db_url) as server:
        first = _standings(server.http_url)
        computed = server.events.feed.computations
        for _ in range(5):  # asked again and again: the same snapshot, nothing computed
            assert _standings(server.http_url) == first
        assert server.events.feed.computations == computed

        replies: list[dict] = []
        asking = threading.Thread(
            target=lambda: replies.append(_standings(server.http_url, first["version"]))
        )
        asking.start()
        mod = room_moderator(server, room1)
        alice = room_player(server, room1, "red", "Alice")
        with clients(mod, alice):
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            for _ in range(3):
                mod.send(type="step", unit="word")
            mod.state(lambda s: s["tossup"]["position"] >= 2)
            # words revealed are no change to the standings: the same version
            assert _standings(server.http_url)["version"] == first["version"]
            alice.drain(0.05)
            alice.send(type="buzz")
            assert alice.wait("buzz_result")["outcome"] == "won"
            mod.state(lambda s: s["floor"] is not None)
            mod.send(type="rule", ruling="correct")
            mod.state(lambda s: s["match"]["phase"] == "answered")
            # the one waiting is answered with standings newer than those it had, and
            # then with those that have the ruling
            asking.join(60)
            assert replies and replies[0]["version"] > first["version"]
            latest = replies[0]
            for _ in range(5):  # (each newer snapshot, as it is published)
                if any(r["points"] > 0 for r in latest["rows"]):
                    break
                latest = _standings(server.http_url, latest["version"])
            red = next(r for r in latest["rows"] if r["team"] == "red")
            assert red["points"] > 0
        live = _standings(server.http_url)
        # the version is the record's: any process sharing it gives the same
        assert live["version"] == standings_stamp(make_engine(db_url), plan.id)

    # rebuilt from the record by a process started afresh: the same standings, same version
    with event_server(db_url) as again:
        rebuilt = _standings(again.http_url)
    assert rebuilt["version"] == live["version"]
    assert rebuilt["rows"] == live["rows"]
    assert rebuilt["schedule"] == live["schedule"]
