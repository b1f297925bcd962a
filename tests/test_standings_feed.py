"""An event's standings are pushed, not pulled: computed once per change and published as a
versioned snapshot (the record's version); a client asking with the version it shows is
answered when newer standings are published; no request computes anything; and the
snapshot rebuilt from the record after a restart equals the live one."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.request

import pytest
from backends import on_both_backends
from event_helpers import (
    HUMANS,
    code_of,
    event_server,
    make_event,
    room_moderator,
    room_player,
)
from live import buzz_and_rule_correct, clients, play_a_correct_buzz

from grace_arena.protocol import StandingsView
from grace_arena.record import standings_record
from grace_arena.record.db import make_engine
from grace_arena.record.schedule import NoSuchPhase, standings_stamp
from grace_arena.server.standings_feed import Snapshot, StandingsFeed


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
        # nor encoded again and again: one reply per version (its rooms' live status kept
        # up to STANDINGS_REPLY_FRESH old)
        assert list(server.events.standings_replies) == [(plan.id, first["version"], None, None)]

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
            # a tossup started is a tossup heard: a newer version
            started = _standings(server.http_url)["version"]
            assert started > first["version"]
            for _ in range(3):
                mod.send(type="step", unit="word")
            mod.state(lambda s: s["tossup"]["position"] >= 2)
            # words revealed are no change to the standings: the same version
            assert _standings(server.http_url)["version"] == started
            buzz_and_rule_correct(mod, alice)
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
        # the replies encoded for older versions are dropped
        assert {k[1] for k in server.events.standings_replies} == {live["version"]}
        # the version is the record's: any process sharing it gives the same
        assert live["version"] == standings_stamp(make_engine(db_url), plan.id)

    # rebuilt from the record by a process started afresh: the same standings, same version
    with event_server(db_url) as again:
        rebuilt = _standings(again.http_url)
    assert rebuilt["version"] == live["version"]
    assert rebuilt["rows"] == live["rows"]
    assert rebuilt["schedule"] == live["schedule"]


def _newer(base: str, after: int, wait: float = 20.0) -> dict:
    url = f"{base}/api/events/night/standings?after={after}&wait={wait}"
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.load(r)


def _points(view: dict, team: str) -> int:
    return next(r["points"] for r in view["rows"] if r["team"] == team)


def _until(base: str, after: int, test) -> dict:
    """The first standings newer than ``after`` that pass ``test`` (each newer snapshot, as
    it is published: a few at most)."""
    view = _newer(base, after)
    for _ in range(5):
        if view["version"] > after and test(view):
            return view
        view = _newer(base, view["version"])
    raise AssertionError(f"no newer standings passed: {view}")


@on_both_backends
def test_a_bonus_part_ruled_and_one_corrected_after_the_match_reach_the_standings(
    db_url,
) -> None:
    """A bonus part's points reach who waits for newer standings at once (no tossup ruled
    after it), and so does a correction of one made after the match ended."""
    plan = make_event(db_url, teams=HUMANS, rounds=1, rooms=("1",), fmt="round_robin",
                      defaults={"format": "acf", "answer_time": None, "wpm": 600})  # fmt: skip
    room1 = code_of(plan, "1")
    with event_server(db_url) as server:
        base = server.http_url
        mod = room_moderator(server, room1)
        alice = room_player(server, room1, "red", "Alice")
        with clients(mod, alice):
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            mod.send(type="step", unit="word")
            buzz_and_rule_correct(mod, alice, then="bonus")
            tossup = _standings(base)  # (the tossup's computation, waited for)
            assert _points(tossup, "red") == 10
            # the bonus's first part ruled correct: newer standings, with its points
            mod.send(type="rule", ruling="correct")
            mod.state(lambda s: s["bonus"] and s["bonus"]["part"] == 1)
            ruled = _until(base, tossup["version"], lambda v: _points(v, "red") == 20)
            assert ruled["version"] > tossup["version"]
            # the match ends (the room has played all its matches: its moderator stays)
            mod.send(type="end_match")
            st = mod.state(lambda s: s["match"]["phase"] == "ended")
            ended = _until(base, ruled["version"], lambda v: any(r["played"] for r in v["rows"]))
            part = next(
                r for c in st["officiating"]["cycles"] for r in c["rulings"] if r["part"] == 1
            )
            assert (part["team"], part["ruling"]) == ("red", "correct")
            # corrected after the match: the standings follow
            mod.send(type="correct", seq=part["seq"], ruling="incorrect", reason="misheard")
            mod.state(lambda s: s["teams"][0]["score"] == 10)
            corrected = _until(base, ended["version"], lambda v: _points(v, "red") == 10)
            assert corrected["version"] > ended["version"]
        assert _standings(base)["version"] == standings_stamp(make_engine(db_url), plan.id)


@on_both_backends
@pytest.mark.parametrize(
    "kept",
    [
        {"views": {}, "phases": []},  # no event view
        {"views": [], "phases": []},
        {"views": {"": {"event": "night"}}},
        {"views": {"": _view().model_dump(mode="json")}, "phases": [{"id": "p"}]},
    ],
    ids=["no-event-view", "views-a-list", "view-not-a-view", "phases-malformed"],
)
def test_a_malformed_snapshot_in_the_record_is_computed_again(db_url, kept) -> None:
    """Standings kept in the record that cannot be read (another version wrote them, or a
    hand) are not served: the first request gets them computed from the record."""
    plan = make_event(db_url, teams=HUMANS, rounds=1, rooms=("1",), fmt="round_robin")
    engine = make_engine(db_url)
    try:
        assert standings_record.publish(engine, plan.id, 0, kept)
    finally:
        engine.dispose()
    with event_server(db_url) as server:
        view = _standings(server.http_url)
    assert [r["team"] for r in view["rows"]] == ["blue", "red"]
    assert view["schedule"][0]["teams"] == ["Red", "Blue"]


def test_a_phase_is_found_in_the_snapshot_a_client_is_given_not_the_newest(db_url) -> None:
    """The standings of a phase come from the snapshot a request was answered with (a long
    poll's, maybe older than the newest computation): its phases and pools, of the same
    computation, name what it has."""
    plan = make_event(db_url, teams=HUMANS, rounds=1, rooms=("1",), fmt="round_robin")
    phases = [
        {"id": "prelim", "name": "Prelims", "kind": "prelim",
         "pools": [{"id": "a", "name": "Pool A"}]},
    ]  # fmt: skip
    pool_view = _view().model_copy(update={"phase": "Prelims", "pool": "Pool A"})
    older = Snapshot(4, _view(4), {"prelim": _view(4), "prelim/a": pool_view}, phases)
    with event_server(db_url) as server:
        newest = _standings(server.http_url)  # (computed here: the event has no phase now)
        assert newest["phases"] == []
        rooms = server.events
        assert rooms.scoped_standings(plan.id, older, "Prelims", "Pool A") == pool_view
        assert rooms.scoped_standings(plan.id, older, "prelim", None) == _view(4)
        with pytest.raises(NoSuchPhase, match="no pool 'B'"):
            rooms.scoped_standings(plan.id, older, "Prelims", "B")
        bare = Snapshot(5, _view(5))
        with pytest.raises(NoSuchPhase, match="no phase 'Prelims'"):
            rooms.scoped_standings(plan.id, bare, "Prelims", None)


def test_a_burst_of_changes_is_computed_once_after_the_computation_under_way(db_url) -> None:
    """Rulings in many rooms within a moment: the one computing now, then one for all the
    others, no sooner than ``STANDINGS_EVERY`` after it began (a projector gets a few
    versions a second at most, each complete)."""
    from grace_arena.server import rooms as rooms_module

    plan = make_event(db_url)
    with event_server(db_url) as server:
        _standings(server.http_url)  # computed once, here (this process leads)
        events = server.events

        async def burst() -> tuple[int, float]:
            before = events.standings_computed
            began = asyncio.get_running_loop().time()
            for _ in range(20):  # (forced: as a match's first tossup is)
                events.refresh_standings(plan.id, force=True)
                await asyncio.sleep(0.005)
            while not events._refreshing[plan.id].done():
                await asyncio.sleep(0.01)
            return events.standings_computed - before, asyncio.get_running_loop().time() - began

        computed, took = server.run(burst())
    assert computed == 2
    assert took >= rooms_module.STANDINGS_EVERY


def test_a_client_waiting_while_rooms_keep_ruling_gets_each_version_as_it_is_published(
    db_url,
) -> None:
    """A request that comes while the standings are being computed waits for the next ones
    published, not for the computations to stop: while rooms keep ruling they follow one
    another for as long as the rulings come (a request that waited for the last of them
    went seconds without an answer)."""
    plan = make_event(db_url)
    with event_server(db_url) as server:
        shown = _standings(server.http_url)["version"]
        events = server.events

        async def asked_while_computing() -> tuple[int, float]:
            loop = asyncio.get_running_loop()
            endless = loop.create_task(asyncio.sleep(30))  # computations one after another
            events._refreshing[plan.id] = endless
            try:
                began = loop.time()
                asking = asyncio.ensure_future(
                    events.standings_snapshot(plan.id, after=shown, wait=20.0)
                )
                await asyncio.sleep(0.2)
                assert not asking.done()
                kept = events.feed.latest(plan.id)
                events.feed.publish(plan.id, shown + 1, kept.view, kept.scoped, phases=kept.phases)
                got = await asyncio.wait_for(asking, 5.0)
                return got.version, loop.time() - began
            finally:
                endless.cancel()

        version, took = server.run(asked_while_computing())
    assert version == shown + 1
    assert took < 5.0  # (not the 10 s it once waited for the computations to end)


def test_a_ruling_made_here_is_counted_by_the_next_request_while_a_computation_runs(
    db_url,
) -> None:
    """A ruling made here while a computation that began before it runs: a request right
    after it waits for the computation that counts it (not for the one under way, nor for
    the computations to stop)."""
    plan = make_event(db_url)
    room1 = code_of(plan, "1")
    with event_server(db_url) as server:
        events = server.events
        _standings(server.http_url)  # this process leads the event's standings

        def idle() -> None:
            async def done() -> None:
                while (t := events._refreshing.get(plan.id)) is not None and not t.done():
                    await asyncio.sleep(0.02)

            server.run(done())

        mod = room_moderator(server, room1)
        alice = room_player(server, room1, "red", "Alice")
        with clients(mod, alice):
            idle()
            # a computation that reads the record, then takes a while (a big event)
            original = events._compute_if_moved

            def slow(event_id, force):
                out = original(event_id, force)
                time.sleep(2.0)
                return out

            events._compute_if_moved = slow
            # the tossup started: a change of the standings, computed (slowly) from now
            play_a_correct_buzz(mod, alice)
            # the moderator asks right after the ruling, while the computation of the
            # tossup's start (begun before the ruling) is under way
            assert not server.run(_computing_done(events, plan.id))
            got = _standings(server.http_url)
            red = next(r for r in got["rows"] if r["team"] == "red")
            idle()
            events._compute_if_moved = original
    assert red["points"] > 0, "the ruling made here before the request is not counted"


async def _computing_done(events, event_id) -> bool:
    task = events._refreshing.get(event_id)
    return task is None or task.done()
