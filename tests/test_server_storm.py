"""Buzz storms and floods: many buzzes at once are decided and committed together, refused
buzzes are answered to their players alone, and a flooding client is rate-limited while the
moderator is still served."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import pytest
from backends import on_both_backends
from live import LiveServer, two_teams
from websockets.asyncio.client import connect

from grace_arena.core.commands import Buzz, Join, Pause, Reveal, SetPace, StartTossup
from grace_arena.core.config import TeamSpec
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import BuzzTiming
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.specs import match_config
from grace_arena.server.app import Settings
from grace_arena.server.room import Room


class Sink:
    """Stands in for a connection in a room's broadcast: keeps what it is sent."""

    closed = False

    def __init__(self, role: str) -> None:
        self.role = role
        self.sent: list[dict[str, Any]] = []

    def write_now(self, data: bytes, frame: bytes | None = None) -> bool:
        self.sent.append(json.loads(data))
        return True

    def send(self, text: str) -> None:
        self.sent.append(json.loads(text))

    def send_model(self, message: Any) -> None:
        self.sent.append(message.model_dump(mode="json"))

    def close(self, code: int, reason: str) -> None:
        self.closed = True

    def end(self) -> None:
        pass


def config_of_two_teams():
    packet = load_packet(SAMPLE_PACKET_PATH)
    return match_config(packet, [TeamSpec(id="red", name="Red"), TeamSpec(id="blue", name="Blue")])


def _room(store) -> Room:
    config = config_of_two_teams()
    rm = store.create(config, now=time.time(), join_code="STORM")
    return Room(rm, join_code="STORM")


@on_both_backends
def test_commands_queued_together_are_committed_in_one_transaction(store, monkeypatch):
    # a commit of 300 buzzes on a loaded machine can take over a second, which the room
    # reports to its clients as a stalled record (a state) and then as one that answers (one
    # more): not what this test counts
    monkeypatch.setattr("grace_arena.server.pipeline.STALL_AFTER", 60.0)

    async def scenario() -> None:
        room = _room(store)
        for i in range(300):
            await room.command(Join(team="red" if i % 2 else "blue", player=f"p{i}", name=f"P{i}"))
        await room.command(StartTossup())
        await room.command(Pause())
        await room.command(Reveal())
        players, mod = Sink("player"), Sink("moderator")
        room.connections.update({players, mod})  # type: ignore[arg-type]
        commits: list[int] = []
        append = store.append

        def counted(match_id, events, **options):
            commits.append(len(events))
            append(match_id, events, **options)

        store.append = counted
        futures = [
            room.submit(
                Buzz(
                    team="red" if i % 2 else "blue",
                    player=f"p{i}",
                    timing=BuzzTiming(received_wall=time.time(), received_mono=time.monotonic()),
                )
            )
            for i in range(300)
        ]
        results = await asyncio.gather(*futures)
        assert commits == [300]  # one transaction for the whole storm
        kinds = [events[0].type for events in results]
        assert kinds.count("buzz_accepted") == 1 and kinds.count("buzz_refused") == 299
        assert len(players.sent) == 1 and len(mod.sent) == 1  # one state each, not 300
        assert [e["type"] for e in mod.sent[0]["events"]].count("buzz_refused") == 299
        # the phones' state holds the buzz that took the floor, not the 299 refusals (each
        # phone hears of its own from its result): a storm's state stays small for 300 phones
        assert [e["type"] for e in players.sent[0]["events"]] == ["buzz_accepted"]

        # A storm of refused buzzes alone reaches the moderator, not every player; presses
        # that repeat a refusal already told (the same race lost again) reach nobody.
        more = [
            room.submit(Buzz(team="blue", player=f"p{i}", timing=BuzzTiming()))
            for i in range(0, 40, 2)
        ]
        kinds = [events[0].type for events in await asyncio.gather(*more)]
        # p0 holds the floor: its own press loses a race of its own, the others repeat theirs
        assert kinds == ["buzz_refused"] + ["buzz_repeated"] * 19
        assert len(players.sent) == 1 and len(mod.sent) == 2
        assert [e["type"] for e in mod.sent[1]["events"]] == ["buzz_refused"]
        again = [room.submit(Buzz(team="blue", player=f"p{i}")) for i in range(0, 40, 2)]
        await asyncio.gather(*again)
        assert len(players.sent) == 1 and len(mod.sent) == 2

        # A refused command in a batch refuses that command only.
        bad = room.submit(StartTossup())
        good = room.submit(Buzz(team="red", player="p1", timing=BuzzTiming()))
        with pytest.raises(IllegalCommand):
            await bad
        assert (await good)[0].type == "buzz_repeated"
        await room.close()

    asyncio.run(scenario())


@on_both_backends
def test_a_failed_commit_takes_nothing_of_the_batch(store):
    """A commit the record refuses (not for want of the record: a refusal, a bug) fails its
    batch: nothing of it takes effect, its callers hear of it, the room goes on."""

    async def scenario() -> None:
        room = _room(store)
        await room.command(Join(team="red", player="p1", name="Ann"))
        seq = room.rm.seq
        append = store.append

        def fail(match_id, events, **options):
            raise ValueError("refused")

        store.append = fail
        futures = [room.submit(StartTossup()), room.submit(Pause())]
        for future in futures:
            with pytest.raises(ValueError):
                await future
        assert room.rm.seq == seq and room.match.game.phase.value == "idle"
        store.append = append
        await room.command(StartTossup())  # and it goes on
        assert room.match.game.phase.value == "reading"
        await room.close()

    asyncio.run(scenario())


@on_both_backends
def test_a_command_the_record_refuses_fails_alone_not_with_the_batch_decided_with_it(store):
    """A batch the record refuses for another reason than its availability (a value it
    cannot store, a bug) is committed again command by command: the refused command fails,
    the pace change and the pause decided with it are committed."""

    async def scenario() -> None:
        room = _room(store)
        await room.command(Join(team="red", player="p1", name="Ann"))
        await room.command(StartTossup())
        append = store.append

        def refuse_joins(match_id, events, **options):
            if any(ev.type == "player_joined" for ev in events):
                raise ValueError("a value the record cannot store")
            append(match_id, events, **options)

        store.append = refuse_joins
        futures = [
            room.submit(SetPace(wpm=200)),
            room.submit(Join(team="blue", player="p2", name="Bob")),
            room.submit(Pause()),
        ]
        results = await asyncio.gather(*futures, return_exceptions=True)
        assert isinstance(results[1], ValueError)
        assert [ev.type for ev in results[0]] == ["pace_changed"]
        assert [ev.type for ev in results[2]] == ["reading_paused"]
        assert room.match.game.paused and room.match.state.pace == 200
        assert "p2" not in room.match.state.players["blue"]
        await room.close()
        stored = [ev.type for ev in store.events(room.rm.id)]
        assert stored[-2:] == ["pace_changed", "reading_paused"]
        assert "p2" not in store.open(room.rm.id).match.state.players["blue"]

    asyncio.run(scenario())


def _running_clock(store):
    rm = store.create(config_of_two_teams(), now=time.time(), join_code="CLOCKS")
    rm.handle(Join(team="red", player="r1", name="R"), now=time.time())
    rm.handle(StartTossup(), now=time.time())
    rm.handle(Buzz(team="red", player="r1"), now=time.time())
    assert rm.match.game.deadline is not None
    return rm


def test_a_held_clock_is_not_resumed_again_and_again_by_a_record_that_refuses(store, caplog):
    """A match held with a running clock; the record then refuses every write for good (a
    read-only standby): one command fails, and the resumption is not tried in a loop."""
    from sqlalchemy.exc import InternalError

    from grace_arena.server.pipeline import CommitPipeline, RoomClosed

    rm = _running_clock(store)
    calls = []

    def refuse(match_id, events, **options):
        calls.append(1)
        raise InternalError("INSERT", {}, Exception("read-only transaction"))

    store.append = refuse

    async def scenario() -> None:
        pipeline = CommitPipeline(rm, None, on_committed=lambda events: None,
                                  held_since=time.time() - 5.0)  # fmt: skip
        with pytest.raises(InternalError):
            await pipeline.submit(SetPace(wpm=250))
        await asyncio.sleep(1.0)
        await pipeline.close(RoomClosed("over"), timeout=0.5)

    asyncio.run(scenario())
    assert len(calls) <= 2


def test_a_batch_committed_alone_and_cancelled_leaves_no_caller_waiting(store):
    """A batch refused together is committed command by command; the room closes while the
    first is being committed (its wait runs out, the work is cancelled): every caller of the
    batch is told."""
    from sqlalchemy.exc import IntegrityError

    from grace_arena.server.pipeline import CommitPipeline, RoomClosed

    rm = _running_clock(store)
    calls = []
    append = store.append

    def flaky(match_id, events, **options):
        calls.append(len(events))
        if len(calls) == 1:
            raise IntegrityError("INSERT", {}, Exception("refused together"))
        time.sleep(1.0)  # the first command alone takes a while
        return append(match_id, events, **options)

    store.append = flaky

    async def scenario() -> list[bool]:
        pipeline = CommitPipeline(rm, None, on_committed=lambda events: None)
        futures = [pipeline.submit(SetPace(wpm=w)) for w in (210, 220, 230)]
        await asyncio.sleep(0.3)
        await pipeline.close(RoomClosed("the server stops"), timeout=0.2)
        await asyncio.sleep(1.5)
        for future in futures:
            if future.done() and not future.cancelled():
                future.exception()
        return [f.done() for f in futures]

    assert all(asyncio.run(scenario()))


@on_both_backends
def test_a_record_that_blinks_holds_the_room_and_it_goes_on_by_itself(store):
    """A commit that fails for want of the record (locked, restarting, unreachable) is tried
    again with the same commands decided afresh: the room says so meanwhile, nothing is lost,
    and the batch is committed once the record answers, in one transaction."""
    from sqlalchemy.exc import OperationalError

    async def scenario() -> None:
        room = _room(store)
        await room.command(Join(team="red", player="p1", name="Ann"))
        mod = Sink("moderator")
        room.connections.add(mod)  # type: ignore[arg-type]
        append = store.append
        failures = []

        def blink(match_id, events, **options):
            if len(failures) < 3:
                failures.append(len(events))
                raise OperationalError("INSERT", {}, Exception("database is locked"))
            append(match_id, events, **options)

        store.append = blink
        futures = [room.submit(StartTossup()), room.submit(Pause())]
        await asyncio.gather(*futures)
        assert failures == [2, 2, 2]  # the same two events each time
        assert room.match.game.phase.value == "reading" and room.match.game.paused
        held = [m["record"] for m in mod.sent if m.get("record")]
        assert held and "database is locked" in held[-1]["message"]
        assert "retrying" in held[-1]["message"]
        assert mod.sent[-1]["record"] is None  # and it says when the record is back
        assert room.pipeline.failures == 3
        await room.close()
        assert [ev.type for ev in store.events(room.rm.id)][-3:] == [
            "player_joined", "tossup_started", "reading_paused",
        ]  # fmt: skip

    asyncio.run(scenario())


def test_a_slow_commit_gives_the_clock_back_the_time_it_took_once(store):
    """A commit that took longer than STALL_AFTER held the room that long: a running clock
    gets that time back at once (its players see the new deadline), and only that time, not
    a whole clock again when the timer next commits."""
    from grace_arena.core.commands import TimeUp
    from grace_arena.core.config import ScoringRules
    from grace_arena.server.pipeline import STALL_AFTER

    async def scenario() -> None:
        packet = load_packet(SAMPLE_PACKET_PATH)
        config = match_config(
            packet,
            [TeamSpec(id="red", name="Red"), TeamSpec(id="blue", name="Blue")],
            rules=ScoringRules(answer_time=3.0),
        )
        room = Room(store.create(config, now=time.time(), join_code="SLOW"), join_code="SLOW")
        await room.command(Join(team="red", player="p1", name="Ann"))
        await room.command(StartTossup())
        append, slow = store.append, STALL_AFTER + 0.5

        def slowly(match_id, events, **options):
            if any(ev.type == "buzz_accepted" for ev in events):
                time.sleep(slow)
            append(match_id, events, **options)

        store.append = slowly
        await room.command(Buzz(team="red", player="p1", timing=BuzzTiming()))
        # the clock is given back at once, by a commit of its own (before the timer's)
        resumed = await _polled(lambda: _events_of(store, room, "clock_resumed"))
        # (stored first, then applied to the live match: read its deadline once applied)
        await _polled(lambda: room.match.state.seq >= resumed[-1].seq)
        deadline = room.match.game.deadline
        # the timer's own commit gives nothing more
        with contextlib.suppress(IllegalCommand):
            await room.command(TimeUp())
        assert room.match.game.deadline == deadline
        await _polled(lambda: room.match.game.floor is None)  # the time ran out, once
        await room.close()
        return resumed

    (resumed,) = asyncio.run(scenario())
    events = store.events(store.matches()[0].id)
    (buzz,) = [e for e in events if e.type == "buzz_accepted"]
    # the time the slow commit held the room (on the record's clock: from before the buzz
    # was decided until the clock was given back), given back to the deadline, once
    assert resumed.reason == "record" and resumed.down_since <= buzz.t <= resumed.t
    assert resumed.deadline == pytest.approx(buzz.deadline + resumed.t - resumed.down_since)
    assert [e.type for e in events].count("clock_resumed") == 1
    assert [e.by for e in events if e.type == "ruled"] == ["timer"]


def _events_of(store, room, kind: str) -> list:
    return [e for e in store.events(room.rm.id) if e.type == kind]


async def _polled(check, limit: float = 30.0):
    """Poll ``check`` on the loop until it is truthy (a limit for a loaded machine only)."""
    for _ in range(int(limit / 0.02)):
        if value := check():
            return value
        await asyncio.sleep(0.02)
    raise TimeoutError(f"waited {limit:g} s")


# -- against a live server ------------------------------------------------------------------


async def _hello(ws, **hello: Any) -> None:
    await ws.send(json.dumps({"type": "hello", **hello}))
    while json.loads(await ws.recv())["type"] != "welcome":
        pass


async def _until(ws, predicate, timeout: float = 30.0) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        while True:
            message = json.loads(await ws.recv())
            if message["type"] == "ping":
                await ws.send(
                    json.dumps({"type": "pong", "sent": message["sent"], "time": time.time()})
                )
            if predicate(message):
                return message


async def _players(server: LiveServer, n: int) -> list:
    room = server.room()

    async def one(i: int):
        ws = await connect(server.ws_url, max_queue=None, ping_interval=None, open_timeout=30)
        await _hello(ws, role="player", join_code=room.join_code)
        team = "red" if i % 2 else "blue"
        await ws.send(json.dumps({"type": "join", "team": team, "name": f"P{i}"}))
        await _until(ws, lambda m: m["type"] == "joined")
        return ws

    made = []
    for start in range(0, n, 50):
        made += await asyncio.gather(*(one(i) for i in range(start, min(n, start + 50))))
    return made


async def _moderator(server: LiveServer):
    room = server.room()
    ws = await connect(server.ws_url, max_queue=None, ping_interval=None)
    token = server.run(server.events.match_moderator_token(room.rm.id))
    await _hello(ws, role="moderator", match_id=room.rm.id, token=token)
    return ws


def _at_first_word(m: dict[str, Any]) -> bool:
    return m["type"] == "state" and (m["tossup"] or {}).get("position") == 0


async def _quiet(ws, seconds: float = 0.3) -> list[dict[str, Any]]:
    """What ``ws`` receives until it has been quiet for ``seconds``."""
    got = []
    while True:
        try:
            got.append(json.loads(await asyncio.wait_for(ws.recv(), seconds)))
        except TimeoutError:
            return got


@pytest.mark.slow
@on_both_backends
def test_a_storm_of_buzzes_has_one_winner_and_refusals_reach_only_their_players(db_url):
    n = 200
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=two_teams(),
        new_names_per_address=n + 10,  # two hundred phones on one address
    )  # fmt: skip

    async def scenario(server: LiveServer) -> None:
        players = await _players(server, n)
        mod = await _moderator(server)
        for command in ({"type": "start_tossup"}, {"type": "pause"}, {"type": "step"}):
            await mod.send(json.dumps(command))
        await _until(mod, _at_first_word)
        await asyncio.gather(*(_quiet(ws) for ws in players))
        await asyncio.gather(*(ws.send(json.dumps({"type": "buzz"})) for ws in players))
        heard: list[list[dict[str, Any]]] = [[] for _ in players]
        results = await asyncio.gather(*(
            _until(ws, lambda m, got=got: got.append(m) or m["type"] == "buzz_result")
            for ws, got in zip(players, heard, strict=True)
        ))  # fmt: skip
        assert sorted(r["outcome"] for r in results).count("won") == 1
        # Each phone got one change of the storm (the floor taken), not one per buzz. (A
        # commit slower than a second also sends the record's health, down then up, and the
        # clock given back: states of no buzz, which a slow machine may add.)
        after = await asyncio.gather(*(_quiet(ws) for ws in players))
        storm = [
            sum(
                m["type"] == "state" and any(e["type"].startswith("buzz") for e in m["events"])
                for m in got
            )
            for got in (a + b for a, b in zip(heard, after, strict=True))
        ]
        assert max(storm) == 1 and min(storm) == 1
        await mod.send(json.dumps({"type": "rule", "ruling": "correct"}))
        await _until(mod, lambda m: m["type"] == "state" and m["match"]["phase"] == "answered")
        for ws in [*players, mod]:
            await ws.close()

    with LiveServer(settings) as server:
        asyncio.run(scenario(server))
        buzzes = server.arena.store.buzzes(server.room().rm.id)
        assert len(buzzes) == n and sum(b.outcome == "won" for b in buzzes) == 1


@pytest.mark.slow
@on_both_backends
def test_a_flooding_player_hears_of_every_press_and_the_record_counts_the_repeats(db_url):
    settings = Settings(
        db_url=db_url,
        packets=[SAMPLE_PACKET_PATH],
        secret="s",
        first_match=two_teams(),
        rate_per_second=1000.0,
        rate_burst=1000,
    )
    n, each = 9, 30

    async def scenario(server: LiveServer) -> None:
        winner, *flooders = await _players(server, n + 1)
        mod = await _moderator(server)
        for command in ({"type": "start_tossup"}, {"type": "pause"}, {"type": "step"}):
            await mod.send(json.dumps(command))
        await _until(mod, _at_first_word)
        await winner.send(json.dumps({"type": "buzz"}))
        won = await _until(winner, lambda m: m["type"] == "buzz_result")
        assert won["outcome"] == "won"
        await asyncio.gather(*(_quiet(ws) for ws in [*flooders, mod]))
        events_before = server.arena.store.event_count(server.room().rm.id)

        async def flood(ws) -> list[dict[str, Any]]:
            for _ in range(each):
                await ws.send(json.dumps({"type": "buzz"}))
            return [
                await _until(ws, lambda m: m["type"] in ("buzz_result", "error"))
                for _ in range(each)
            ]

        answers = await asyncio.gather(*(flood(ws) for ws in flooders))
        for results in answers:
            # every press answered, each as the race the player lost first
            assert {(r["type"], r["outcome"]) for r in results} == {("buzz_result", "lost_race")}
            assert len({r["buzz_id"] for r in results}) == 1
        assert len({results[0]["buzz_id"] for results in answers}) == n
        # the phones hear of nobody's presses; the moderator of each player's first only
        heard = await asyncio.gather(*(_quiet(ws) for ws in [*flooders, winner, mod]))
        assert all(m["type"] != "state" for got in heard[:-1] for m in got)
        states = [m for m in heard[-1] if m["type"] == "state"]
        told = [(e["type"], e["reason"]) for m in states for e in m["events"]]
        assert told == [("buzz_refused", "lost_race")] * n
        assert all(m["events"] for m in states)  # no state for repeats alone
        for ws in flooders:  # one press at a time: each a change made of a repeat alone
            await ws.send(json.dumps({"type": "buzz"}))
            assert (await _until(ws, lambda m: m["type"] == "buzz_result"))["buzz_id"]
        heard = await asyncio.gather(*(_quiet(ws) for ws in [*flooders, winner, mod]))
        assert [m for got in heard for m in got if m["type"] not in ("ping", "pong")] == []
        match_id = server.room().rm.id
        # the record grew by one refusal per player, and counts the rest
        assert server.arena.store.event_count(match_id) == events_before + n
        refused = [b for b in server.arena.store.buzzes(match_id) if b.outcome != "won"]
        assert len(refused) == n and [b.repeats for b in refused] == [each] * n
        assert all(b.last_repeat_wall >= b.received_wall for b in refused)
        for ws in [winner, *flooders, mod]:
            await ws.close()

    with LiveServer(settings) as server:
        asyncio.run(scenario(server))


@pytest.mark.slow
def test_a_flood_is_rate_limited_and_the_moderator_is_still_served(db_url):
    settings = Settings(
        db_url=db_url,
        packets=[SAMPLE_PACKET_PATH],
        secret="s",
        first_match=two_teams(),
        rate_per_second=20.0,
        rate_burst=40,
    )
    flooders, each = 20, 100

    async def scenario(server: LiveServer) -> None:
        players = await _players(server, flooders)
        mod = await _moderator(server)
        await mod.send(json.dumps({"type": "start_tossup"}))
        await mod.send(json.dumps({"type": "pause"}))
        await _until(mod, lambda m: m["type"] == "state" and m["match"]["paused"])

        async def flood(ws) -> None:
            for _ in range(each):
                await ws.send(json.dumps({"type": "buzz"}))

        await asyncio.gather(*(flood(ws) for ws in players))
        await mod.send(json.dumps({"type": "rule", "ruling": "correct"}))
        await _until(mod, lambda m: m["type"] == "state" and m["match"]["phase"] == "answered")

        async def answers(ws) -> list[dict[str, Any]]:
            """What ``ws`` receives until every buzz it sent has its answer (or 30 s)."""
            got: list[dict[str, Any]] = []
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(30):
                    while sum(m["type"] in ("buzz_result", "error") for m in got) < each:
                        got.append(json.loads(await ws.recv()))
            got.extend(await _quiet(ws, 0.3))  # and nothing more
            return got

        got = await asyncio.gather(*(answers(ws) for ws in players))
        for messages in got:
            limited = sum(m.get("code") == "rate_limited" for m in messages)
            answered = sum(m["type"] in ("buzz_result", "error") for m in messages)
            assert limited >= each - 40 - 20  # past the burst, most are refused at the door
            assert answered == each  # every buzz got its answer
        for ws in players:  # every connection is still open
            await ws.send(json.dumps({"type": "ping", "sent": 1.0}))
            await _until(ws, lambda m: m["type"] == "pong", 10)
        for ws in [*players, mod]:
            await ws.close()

    with LiveServer(settings) as server:
        asyncio.run(scenario(server))
