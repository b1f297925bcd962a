"""Many rooms of one event on one server: does a room read and lock out as well as it does alone?

    .venv/bin/python bench/bench_event.py [--rooms 16] [--players 8] [--seconds 30]
                                          [--alone-seconds 120]
    .venv/bin/python bench/bench_event.py --db postgresql+psycopg://user:pass@host/db

An event of ``--rooms`` rooms, each playing a human team of ``--players`` players against the
offline model player (GRACE's format: human team vs model), all rooms reading in screen mode
at 4 words/s (240 wpm) on one ``grace-arena serve --event`` process. Each room's moderator
starts its first tossup at a moment of its own within a word's time, as the moderators of an
event do; ``--in-phase`` starts them all at the same instant instead (the worst case: every
room's words fall due together, 16 commits and 144 states at once). Every second a player in
some room (the rooms take turns) buzzes; its moderator rules the buzz correct as soon as it
sees it and starts the next tossup; a model player's own buzzes are ruled the same way.

Measured at the clients, on the machine's clock (server and clients share it):

- **word lateness**: each revealed word, as a player's state, from the ``server_time`` in it to
  its arrival at the player (the delivery); the reveal's lateness: each gap between the
  ``server_time`` of two consecutive words (when the server had the word committed and its
  state built) minus the 0.25 s the pace asks for (a server too busy to keep time shows here);
  and the same gap as the player read it (the gap at the client: the client processes' own
  waits for the two cores they share with the server add to it);
- the reveal's lateness again, leaving out the phase's first second: in it every room starts
  its first tossup (a synced commit each), and a word due then waits behind them; with many
  rooms those few late words are a good part of the worst 1 %, with one room a fraction of
  a gap. Both figures are printed;
- **buzz → lock-out**: from the moment a player sends ``buzz`` to the moment the last client of
  the room (its 8 players and its moderator) has the state with the floor taken.

The same run first plays one room alone (another event of one room on the same server) for
``--alone-seconds`` (120 s by default, so that its p99 rests on some 450 gaps between words
rather than 110), then all the rooms: the ratios compare the two. The packet is the sample
packet's tossups several times over, so that the room alone, whose tossups a buzz a second ends,
does not run out of them. The clients run in ``--client-procs`` processes
(asyncio); the machine's cores are shared by all, so compare ratios from one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
SECRET = "bench-event-secret"
WPM = 240
SPACING = 60 / WPM


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))] if values else 0.0


def make_events(db_url: str, rooms: int, seconds: float) -> dict[str, list[str]]:
    """Two events in the record: ``solo`` (one room) and ``full`` (``rooms`` rooms), each room
    a human team against the offline model player. Returns each event's room join codes."""
    from grace_arena.core import schedule as pairing
    from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
    from grace_arena.model.precompute import ensure_precomputed
    from grace_arena.record.db import make_engine, upgrade
    from grace_arena.record.schedule import RoundPlan, TeamEntry, create_event, set_schedule
    from grace_arena.record.store import MatchStore

    upgrade(db_url)
    engine = make_engine(db_url)
    # The sample packet's tossups, several times under ids of their own: a room alone with a
    # buzz every second ends a tossup about every second, and must not run out of them.
    sample = load_packet(SAMPLE_PACKET_PATH)
    copies = 2 + int(seconds) // len(sample.tossups)  # a tossup a second, to spare
    packet = sample.model_copy(
        update={
            "packet": sample.packet.model_copy(update={"id": "bench-event"}),
            "tossups": [
                t.model_copy(update={"id": f"{t.id}-{k}"})
                for k in range(copies)
                for t in sample.tossups
            ],
        }
    )
    MatchStore(engine).save_packet(packet)
    ensure_precomputed(db_url, packet, "tfidf")
    codes = {}
    for name, n in (("solo", 1), ("full", rooms)):
        humans = [TeamEntry(f"h{i}", f"H{i}") for i in range(1, n + 1)]
        model = TeamEntry("model", "Model", "model", "tfidf", 0.9)
        create_event(
            engine,
            name,
            teams=[*humans, model],
            defaults={"reading_mode": "screen", "wpm": WPM, "answer_time": None},
        )
        names = [str(i) for i in range(1, n + 1)]
        games = pairing.schedule(
            [t.id for t in humans], ["model"], rounds=1, rooms=names, format="grace"
        )
        plan = set_schedule(
            engine, name, rooms=names, rounds=[RoundPlan(1, packet.packet.id)], games=games
        )
        codes[name] = [r.join_code for r in plan.rooms]
    engine.dispose()
    return codes


def start_server(db_url: str, port: int, event: str) -> tuple[subprocess.Popen, dict[str, str]]:
    """``grace-arena serve --event``; the moderator token it printed for each room's code."""
    import re

    proc = subprocess.Popen(
        [sys.executable, "-c", "from grace_arena.cli import app; app()", "serve",
         "--db", db_url, "--host", "127.0.0.1", "--port", str(port), "--secret", SECRET,
         "--event", event, "--max-connections-per-address", "5000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
    )  # fmt: skip
    assert proc.stdout is not None
    tokens, code = {}, None
    for line in proc.stdout:
        found = re.match(r"match \d+ — join code (\w+)", line)
        if found:
            code = found.group(1)
        elif line.startswith("moderator token:") and code:
            tokens[code] = line.split(":", 1)[1].strip()
        elif line.startswith("listening on"):
            # keep reading what it prints, so that the pipe never fills
            import threading

            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, tokens
    raise RuntimeError("the server did not start")


# --------------------------------------------------------------------------------------------
# Clients (each client process plays some rooms)


class Conn:
    def __init__(self, ws, room: dict, role: str) -> None:
        self.ws, self.room, self.role = ws, room, role
        self.last: dict | None = None

    async def read(self) -> None:
        room = self.room
        try:
            async for raw in self.ws:
                now = time.time()
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind == "ping":
                    await self.ws.send(
                        json.dumps({"type": "pong", "sent": msg["sent"], "time": now})
                    )
                    continue
                if kind != "state":
                    continue
                floor = (msg.get("floor") or {}).get("buzz_id")
                if floor is not None and floor not in room["lockout_seen"].setdefault(self, set()):
                    room["lockout_seen"][self].add(floor)
                    room["lockouts"].setdefault(floor, []).append(now)
                tossup = msg.get("tossup") or {}
                if self.role == "player" and msg["match"]["phase"] == "reading" and tossup:
                    key = (tossup["id"], tossup["position"])
                    prev = self.last
                    if prev is None or key != prev["key"]:
                        room["delivery"].append(now - msg["server_time"])
                        if prev and prev["key"][0] == key[0] and key[1] == prev["key"][1] + 1:
                            room["spacing"].append(now - prev["at"] - SPACING)
                            room["reveal"].append(msg["server_time"] - prev["server"] - SPACING)
                            room["reveal_at"].append(msg["server_time"])
                        self.last = {"key": key, "at": now, "server": msg["server_time"]}
                if self.role == "moderator":
                    await moderate(self, msg)
        except ConnectionClosed:
            pass


async def moderate(mod: Conn, msg: dict) -> None:
    """Rule every buzz correct at once; start the next tossup when one is over."""
    phase = msg["match"]["phase"]
    room = mod.room
    if phase == "buzzed" and msg["floor"]["buzz_id"] != room.get("ruled"):
        room["ruled"] = msg["floor"]["buzz_id"]
        await mod.ws.send(json.dumps({"type": "rule", "ruling": "correct"}))
    elif (
        phase in ("idle", "answered", "dead", "thrown_out")
        and room.get("started") != msg["match"]["tossups_played"]
    ):
        if "started" not in room:  # rooms start their first tossup at their own moment
            await asyncio.sleep(room["offset"])
        room["started"] = msg["match"]["tossups_played"]
        await mod.ws.send(json.dumps({"type": "start_tossup"}))


async def open_room(
    port: int, code: str, token: str, players: int, team: str, offset: float
) -> dict:
    url = f"ws://127.0.0.1:{port}/ws"
    room: dict = {"code": code, "delivery": [], "spacing": [], "reveal": [], "reveal_at": [],
                  "lockouts": {},
                  "lockout_seen": {},
                  "buzzes": [], "players": [], "offset": offset}  # fmt: skip
    ws = await connect(url, max_queue=None, ping_interval=None)
    await ws.send(json.dumps({"type": "hello", "role": "moderator", "join_code": code,
                              "token": token}))  # fmt: skip
    room["mod"] = Conn(ws, room, "moderator")
    for i in range(players):
        ws = await connect(url, max_queue=None, ping_interval=None)
        await ws.send(json.dumps({"type": "hello", "role": "player", "join_code": code}))
        while json.loads(await ws.recv())["type"] != "welcome":
            pass
        await ws.send(json.dumps({"type": "join", "team": team, "name": f"P{i}"}))
        while json.loads(await ws.recv())["type"] != "joined":
            pass
        room["players"].append(Conn(ws, room, "player"))
    return room


async def play(rooms: list[dict], seconds: float, buzz_at: dict[str, list[float]]) -> None:
    tasks = [asyncio.create_task(c.read()) for r in rooms for c in [r["mod"], *r["players"]]]

    async def buzzer(room: dict) -> None:
        for at in buzz_at.get(room["code"], []):
            await asyncio.sleep(max(0.0, at - time.time()))
            conn = random.choice(room["players"])
            sent = time.time()
            await conn.ws.send(json.dumps({"type": "buzz"}))
            room["buzzes"].append(sent)

    buzzers = [asyncio.create_task(buzzer(r)) for r in rooms]
    await asyncio.sleep(seconds)
    for task in [*buzzers, *tasks]:
        task.cancel()
    for r in rooms:
        for c in [r["mod"], *r["players"]]:
            await c.ws.close()


def lockout_times(room: dict, clients: int) -> list[float]:
    """Per buzz sent: the time until every client of the room had the floor taken by a buzz
    that came after it."""
    out = []
    firsts = sorted((min(ts), max(ts), len(ts)) for ts in room["lockouts"].values())
    for sent in room["buzzes"]:
        after = [(first, last, n) for first, last, n in firsts if first >= sent]
        if after and after[0][2] >= clients and after[0][0] - sent < 5:
            out.append(after[0][1] - sent)
    return out


def client_process(port, rooms, players, seconds, start, buzz_at, out, in_phase) -> None:
    async def main() -> None:
        opened = [
            await open_room(
                port, code, token, players, team, 0.0 if in_phase else random.uniform(0, SPACING)
            )
            for code, token, team in rooms
        ]
        await asyncio.sleep(max(0.0, start - time.time()))
        await play(opened, seconds, buzz_at)
        results = {
            "delivery": [x for r in opened for x in r["delivery"]],
            "spacing": [x for r in opened for x in r["spacing"]],
            "reveal": [x for r in opened for x in r["reveal"]],
            # after the phase's first second, in which every room starts its first tossup
            "reveal steady": [
                x
                for r in opened
                for x, at in zip(r["reveal"], r["reveal_at"], strict=True)
                if at >= start + 1.0
            ],
            "lockout": [x for r in opened for x in lockout_times(r, players + 1)],
            "buzzes": sum(len(r["buzzes"]) for r in opened),
        }
        out.put(results)

    asyncio.run(main())


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_phase(port, rooms, players, seconds, procs, pid, in_phase) -> dict[str, list[float]]:
    """Play ``rooms`` (code, moderator token, team) at once for ``seconds``; one buzz a
    second, the rooms taking turns. Also the server's CPU seconds over the play. Each room
    starts its first tossup at a moment of its own within a word's time, as moderators do
    (``in_phase``: all at the same instant, so that every room's words fall due together)."""
    start = time.time() + 5.0 + 0.05 * len(rooms) * players
    buzz_at: dict[str, list[float]] = {}
    for k in range(int(seconds) - 2):
        code = rooms[k % len(rooms)][0]
        buzz_at.setdefault(code, []).append(start + 1.5 + k)
    queue: multiprocessing.Queue = multiprocessing.Queue()
    shares = [rooms[i::procs] for i in range(procs)]
    workers = [
        multiprocessing.Process(
            target=client_process,
            args=(port, share, players, seconds, start, buzz_at, queue, in_phase),
        )
        for share in shares
        if share
    ]
    for w in workers:
        w.start()
    time.sleep(max(0.0, start - time.time()))
    cpu_before = cpu_seconds(pid)
    merged: dict[str, list[float]] = {
        "delivery": [], "spacing": [], "reveal": [], "reveal steady": [], "lockout": [],
        "buzzes": []
    }  # fmt: skip
    time.sleep(seconds)
    merged["cpu"] = [cpu_seconds(pid) - cpu_before]
    for _ in workers:
        part = queue.get(timeout=seconds + 120)
        for key in ("delivery", "spacing", "reveal", "reveal steady", "lockout"):
            merged[key].extend(part[key])
        merged["buzzes"].append(part["buzzes"])
    for w in workers:
        w.join(30)
    return merged


def report(label: str, data: dict[str, list[float]]) -> dict[str, float]:
    row = {
        "delivery p50": statistics.median(data["delivery"]) * 1e3,
        "delivery p99": pct(data["delivery"], 99) * 1e3,
        "reveal late p99": pct(data["reveal"], 99) * 1e3,
        "reveal p99 after 1 s": pct(data["reveal steady"], 99) * 1e3,
        "gap at client p99": pct(data["spacing"], 99) * 1e3,
        "lock-out p50": statistics.median(data["lockout"]) * 1e3 if data["lockout"] else 0.0,
        "lock-out p99": pct(data["lockout"], 99) * 1e3,
        # server CPU per word revealed in a room (each word is a commit and a state to all)
        "cpu per word": data["cpu"][0] / max(1, len(data["spacing"]) / players_of(data)) * 1e3,
    }
    print(
        f"{label:<22} {row['delivery p50']:>9.1f} {row['delivery p99']:>9.1f} "
        f"{row['reveal late p99']:>11.1f} {row['gap at client p99']:>9.1f} "
        f"{row['lock-out p50']:>9.1f} {row['lock-out p99']:>9.1f}"
        f" {row['cpu per word']:>9.2f}   ({len(data['reveal']) // players_of(data)} gaps "
        f"between words, {len(data['delivery'])} word states, "
        f"{len(data['lockout'])} of {sum(data['buzzes'])} buzzes locked out; "
        f"server CPU {data['cpu'][0]:.1f} s; reveal late p99 after the phase's first second "
        f"{row['reveal p99 after 1 s']:.1f} ms)"
    )
    return row


def players_of(data: dict) -> int:
    return int(data.get("players", [8])[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=16)
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument(
        "--alone-seconds",
        type=float,
        default=120.0,
        help="how long the room alone plays: a room alone reads some 4 words a second, so 30 s "
        "give some 110 gaps between words, whose p99 is their second worst (16 rooms give "
        "1,700 in 30 s); 120 s give some 450",
    )
    parser.add_argument("--client-procs", type=int, default=2)
    parser.add_argument("--db", help="the record (default: a SQLite file in a temporary folder)")
    parser.add_argument(
        "--in-phase",
        action="store_true",
        help="every room starts reading at the same instant (the worst case: all the rooms' "
        "words fall due together); by default each starts at its own moment within a word",
    )
    args = parser.parse_args()
    from live import free_port

    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        db_url = args.db or f"sqlite:///{Path(tmp) / 'event.db'}"
        print(f"record: {db_url.split('@')[-1]}")
        codes = make_events(db_url, args.rooms, max(args.alone_seconds, args.seconds))
        # the room alone on a server process of its own (a server serves the events it was
        # started for), then the full event's rooms on another, one after the other
        solo_port = free_port()
        solo_proc, solo_tokens = start_server(db_url, solo_port, "solo")
        port = free_port()
        proc, tokens = start_server(db_url, port, "full")
        try:
            solo_code = codes["solo"][0]
            solo = [(solo_code, solo_tokens[solo_code], "h1")]
            full = [(c, tokens[c], f"h{i}") for i, c in enumerate(codes["full"], start=1)]
            print(
                f"\n{args.players} players + a model player per room, {WPM} wpm, a buzz a second"
                f"\n{'(ms)':<22} {'delivery':>9} {'delivery':>9} {'reveal late':>11} "
                f"{'gap late':>9} {'lock-out':>9} {'lock-out':>9} {'CPU/word':>9}\n{'':<22} "
                f"{'p50':>9} {'p99':>9} {'p99':>11} {'(client)':>9} {'p50':>9} {'p99':>9} "
                f"{'(server)':>9}"
            )
            solo_data = run_phase(
                solo_port, solo, args.players, args.alone_seconds, 1, solo_proc.pid, args.in_phase
            )
            solo_proc.terminate()
            solo_proc.wait(10)
            solo_data["players"] = [args.players]
            alone = report("1 room alone", solo_data)
            full_data = run_phase(
                port, full, args.players, args.seconds, args.client_procs, proc.pid, args.in_phase
            )
            full_data["players"] = [args.players]
            many = report(f"{args.rooms} rooms at once", full_data)
            print("\nratio (rooms at once / alone), goal <= 1.5:")
            for key in (
                "delivery p99",
                "reveal late p99",
                "reveal p99 after 1 s",
                "gap at client p99",
                "lock-out p99",
                "cpu per word",
            ):
                base = max(alone[key], 1e-9)
                print(f"  {key:<20} {many[key] / base:>6.2f}")
        finally:
            for server in (solo_proc, proc):
                server.terminate()
                server.wait(10)


if __name__ == "__main__":
    main()
