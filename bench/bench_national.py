"""A national event on this machine: many rooms behind one address, on several processes.

    .venv/bin/python bench/bench_national.py [--rooms 100] [--players 12] [--processes 2]
                                             [--seconds 60] [--buzz-every 5] [--watchers 20]
                                             [--postgres postgresql+psycopg://USER:PASS@HOST/postgres]

One event of ``--rooms`` rooms, each a human team of ``--players`` phones against the offline
model player, with a moderator and a room display each, all reading in screen mode at 240 wpm;
the rooms spread over ``--processes`` ``grace-arena serve --event`` processes sharing one
PostgreSQL record (a database of its own on the server ``--postgres`` names, default
``$GRACE_ARENA_TEST_POSTGRES``, dropped afterwards; SQLite when none is given), every client
connected through HAProxy (``grace-arena proxy``: the event's one address, routing by join
code). Each room's phones buzz, one of them every ``--buzz-every`` seconds on average; its
moderator rules every buzz correct as soon as it sees it and starts the next tossup.
``--watchers`` clients keep the event's standings up as a projector or a phone does (asking
with the version they show: the server answers when newer standings are published).

Measured, the clients on the machine's clock (server and clients share it):

- **reveal delivery**: each word revealed, from the ``server_time`` in its ``reveal`` (or
  state) to its arrival at a phone (overall, and the worst room's p99); phones and displays
  take words as reveals, as the pages do;
- **lock-out**: from a phone's ``buzz`` that took the floor (its ``buzz_result`` says so) to
  the moment the last client of its room (phones, moderator, display) has the state with that
  buzz on the floor;
- **durable commit**: each synced transaction of a process to the record, as the process timed
  it (``/api/health``): as the room waited for it, and in the record alone (the worker
  thread's call, without the waits for a thread and for the busy loop to resume the room);
- **standings after a ruling**: from the moderator's ``rule`` (correct) to the arrival, at each
  watcher, of the first standings in which the team has the points;
- **CPU and memory**: each server process's, HAProxy's and PostgreSQL's CPU over the play; each
  server process's resident memory before its clients connected and with them, and so the cost
  of one socket (memory, and CPU per second) and of one room.

The machine's two cores are shared by the servers, HAProxy, PostgreSQL and the clients (in
``--client-procs`` processes): a figure here is an upper bound of what a server alone costs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
SECRET = "bench-national-secret"
WPM = 240
EVENT = "full"  # bench_event's event of --rooms rooms


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))] if values else 0.0


def raise_open_files() -> None:
    with contextlib.suppress(Exception):
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# --------------------------------------------------------------------------------------------
# Processes: the record, the servers, the proxy


@contextlib.contextmanager
def record(postgres: str | None, folder: Path):
    """A fresh record: a database of its own on the PostgreSQL server, or a SQLite file."""
    if not postgres:
        yield f"sqlite:///{folder / 'national.db'}"
        return
    import sqlalchemy
    from sqlalchemy.engine import make_url

    server = sqlalchemy.create_engine(postgres, isolation_level="AUTOCOMMIT")
    name = f"grace_bench_{uuid.uuid4().hex[:12]}"
    with server.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(postgres).set(database=name).render_as_string(hide_password=False)
    finally:
        with server.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        server.dispose()


#: Each room's display grant (its join code -> token), read from the projector links the
#: server processes print.
DISPLAY_TOKENS: dict[str, str] = {}


def start_server(db_url: str, port: int, proxy: str, rooms: list[str]) -> tuple:
    """``grace-arena serve --event`` for ``rooms``, behind ``proxy``; the moderator token it
    printed for each room's code."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from grace_arena.cli import app; app()", "serve",
         "--db", db_url, "--host", "127.0.0.1", "--port", str(port), "--secret", SECRET,
         "--event", EVENT, "--proxy", proxy, "--public-url", f"http://127.0.0.1:{port}",
         "--max-connections-per-address", "100000",
         "--max-http-connections-per-address", "100000", "--new-names-per-address", "100000",
         *[arg for room in rooms for arg in ("--room", room)]],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
    )  # fmt: skip
    assert proc.stdout is not None
    tokens, code = {}, None
    displays = DISPLAY_TOKENS  # each room's display grant, from its projector's link
    for line in proc.stdout:
        found = re.match(r"match \d+ — join code (\w+)", line)
        if found:
            code = found.group(1)
        elif line.startswith("moderator token:") and code:
            tokens[code] = line.split(":", 1)[1].strip()
        elif shown := re.search(r"projector: \S*[?&]code=(\w+)&token=([^\s&]+)", line):
            displays[shown.group(1)] = urllib.parse.unquote(shown.group(2))
        elif line.startswith("listening on"):
            threading.Thread(target=proc.stdout.read, daemon=True).start()  # never fills
            return proc, tokens
    raise RuntimeError("a server process did not start")


def health(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=10) as reply:
        return json.load(reply)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux); 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def pids_named(name: str) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() == name:
                    out.append(int(entry.name))
    return out


def children_of(pid: int) -> list[int]:
    out = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            out += [int(c) for c in (task / "children").read_text().split()]
    return out


# --------------------------------------------------------------------------------------------
# Clients (each client process plays some rooms)


class Conn:
    def __init__(self, ws, room: dict, role: str) -> None:
        self.ws, self.room, self.role = ws, room, role
        self.last_key: tuple | None = None
        self.pending: list[float] = []  # this phone's buzzes sent, not yet answered

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
                if now < room["start"]:
                    continue  # (connected before the play: only pings are answered)
                if kind == "error":
                    key = f"{msg.get('code')} ({msg.get('in_reply_to')})"
                    room["errors"][key] = room["errors"].get(key, 0) + 1
                    if msg.get("in_reply_to") == "buzz" and self.pending:
                        self.pending.pop(0)
                    continue
                if kind == "buzz_result" and self.pending:
                    sent = self.pending.pop(0)
                    if msg["outcome"] == "won":  # the buzz that took the floor, and when
                        room["won"][msg["buzz_id"]] = sent
                    continue
                if kind == "reveal":  # (a word: the change to the state this client has)
                    if self.role == "player":
                        self.delivered(msg["tossup"], msg["position"], msg["server_time"], now)
                    continue
                if kind != "state":
                    continue
                floor = (msg.get("floor") or {}).get("buzz_id")
                seen = room["lockout_seen"].setdefault(id(self), set())
                if floor is not None and floor not in seen:
                    seen.add(floor)
                    room["lockouts"].setdefault(floor, []).append(now)
                tossup = msg.get("tossup") or {}
                if self.role == "player" and msg["match"]["phase"] == "reading" and tossup:
                    self.delivered(tossup["id"], tossup["position"], msg["server_time"], now)
                if self.role == "moderator":
                    await moderate(self, msg)
        except ConnectionClosed:
            pass

    def delivered(self, tossup: str, position: int, server_time: float, now: float) -> None:
        """A word revealed reached this phone (a state or reveal that moved the position)."""
        if (tossup, position) != self.last_key:
            self.room["delivery"].append(now - server_time)
            self.last_key = (tossup, position)


async def moderate(mod: Conn, msg: dict) -> None:
    """Rule every buzz correct at once (noted: the team and when); start the next tossup."""
    phase = msg["match"]["phase"]
    room = mod.room
    floor = msg.get("floor")
    if phase == "buzzed" and floor and floor["buzz_id"] != room.get("ruled"):
        room["ruled"] = floor["buzz_id"]
        room["rulings"].append((floor["team"], time.time()))
        await mod.ws.send(json.dumps({"type": "rule", "ruling": "correct"}))
    elif (
        phase in ("idle", "answered", "dead", "thrown_out")
        and "started" in room  # (its first tossup started: ``first_tossup``)
        and room["started"] != msg["match"]["tossups_played"]
    ):
        room["started"] = msg["match"]["tossups_played"]
        await mod.ws.send(json.dumps({"type": "start_tossup"}))


async def hello(url: str, message: dict, until: str):
    """A socket through the proxy that said hello and got ``until``; sent ``elsewhere`` (the
    proxy caught up with a move a moment late), it says hello again, as a page does."""
    for _ in range(20):
        ws = await connect(url, max_queue=None, ping_interval=None, open_timeout=60)
        await ws.send(json.dumps(message))
        while True:
            reply = json.loads(await ws.recv())
            if reply["type"] == until:
                return ws
            if reply["type"] == "error":
                break
        await ws.close()
        if reply.get("code") != "elsewhere":
            raise RuntimeError(f"refused: {reply}")
        await asyncio.sleep(0.5)
    raise RuntimeError(f"still sent elsewhere: {reply}")


async def open_room(
    proxy_port: int, code: str, token: str, display: str | None, players: int, team: str
) -> dict:
    url = f"ws://127.0.0.1:{proxy_port}/ws?code={code}"
    room: dict = {"code": code, "team": team, "delivery": [], "lockouts": {},
                  "lockout_seen": {}, "buzzes": [], "won": {}, "errors": {}, "players": [],
                  "rulings": [],
                  "offset": random.uniform(0, 60 / WPM)}  # fmt: skip
    ws = await hello(url, {"type": "hello", "role": "moderator", "join_code": code,
                           "token": token}, "welcome")  # fmt: skip
    room["mod"] = Conn(ws, room, "moderator")
    ws = await hello(url, {"type": "hello", "role": "display", "join_code": code,
                           "token": display, "reveals": True}, "welcome")  # fmt: skip
    room["display"] = Conn(ws, room, "display")
    for i in range(players):
        ws = await hello(
            url, {"type": "hello", "role": "player", "join_code": code, "reveals": True}, "welcome"
        )
        await ws.send(json.dumps({"type": "join", "team": team, "name": f"P{i}"}))
        while (reply := json.loads(await ws.recv()))["type"] != "joined":
            if reply["type"] == "error":
                raise RuntimeError(f"P{i} of room {code} refused: {reply}")
        room["players"].append(Conn(ws, room, "player"))
    return room


def lockout_times(room: dict, clients: int) -> list[float]:
    """Per phone's buzz that took the floor: the time from its sending until every client of
    the room had the state with it (a buzz refused, or beaten by another, locks no one out;
    the model player's buzzes are not timed: when it pressed is not known here)."""
    out = []
    for buzz_id, sent in room["won"].items():
        seen = room["lockouts"].get(buzz_id, [])
        if len(seen) >= clients:
            out.append(max(seen) - sent)
    return out


def client_process(proxy_port, rooms, players, seconds, start, every, out, ready) -> None:
    raise_open_files()

    async def main() -> None:
        opened, conns, readers = [], [], []
        for code, token, display, team in rooms:
            # each room's clients read (and answer pings, as phones do) from when they are
            # connected; what they see counts from the start of the play
            room = await open_room(proxy_port, code, token, display, players, team)
            room["start"] = start
            opened.append(room)
            mine = [room["mod"], room["display"], *room["players"]]
            conns += mine
            readers += [asyncio.create_task(c.read()) for c in mine]
        ready.put(len(opened))
        await asyncio.sleep(max(0.0, start - time.time()))

        async def first_tossup(room: dict) -> None:  # rooms start at their own moment
            await asyncio.sleep(room["offset"])
            room["started"] = 0
            await room["mod"].ws.send(json.dumps({"type": "start_tossup"}))

        kicks = [asyncio.create_task(first_tossup(r)) for r in opened]

        async def buzzer(room: dict) -> None:
            while True:
                await asyncio.sleep(random.expovariate(1 / every))
                conn = random.choice(room["players"])
                room["buzzes"].append(time.time())
                conn.pending.append(room["buzzes"][-1])
                await conn.ws.send(json.dumps({"type": "buzz"}))

        buzzers = [asyncio.create_task(buzzer(r)) for r in opened]
        await asyncio.sleep(seconds)
        for task in [*buzzers, *readers, *kicks]:
            task.cancel()
        for c in conns:
            with contextlib.suppress(Exception):
                await c.ws.close()
        out.put(
            {
                "rooms": [
                    {
                        "code": r["code"],
                        "delivery": r["delivery"],
                        "lockout": lockout_times(r, players + 2),
                        "buzzes": len(r["buzzes"]),
                        "won": len(r["won"]),
                        "errors": r["errors"],
                        "rulings": r["rulings"],
                    }
                    for r in opened
                ]
            }
        )

    asyncio.run(main())


def watch_standings(proxy_port: int, stop: threading.Event, seen: list) -> None:
    """A projector's (or a phone's) way to keep the standings up: ask with the version shown;
    each answer's arrival, version and every team's points."""
    version = None
    base = f"http://127.0.0.1:{proxy_port}/api/events/{EVENT}/standings"
    while not stop.is_set():
        query = f"?after={version}" if version is not None else ""
        try:
            with urllib.request.urlopen(base + query, timeout=40) as reply:
                view = json.load(reply)
        except OSError:
            time.sleep(0.5)
            continue
        seen.append((time.time(), view["version"], {r["team"]: r["points"] for r in view["rows"]}))
        if view["version"] == version:
            time.sleep(0.2)
        version = view["version"]


def standings_latencies(rulings: list[tuple[str, float]], seen: list) -> list[float]:
    """For each ruling (team, sent) and this watcher's answers: the time to the first answer
    after it in which the team has more points than in the last answer before it."""
    out = []
    for team, sent in rulings:
        before = [points for at, _, points in seen if at <= sent]
        base = before[-1].get(team, 0) if before else 0
        for at, _, points in seen:
            if at > sent and points.get(team, 0) > base:
                out.append(at - sent)
                break
    return out


# --------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=100)
    parser.add_argument("--players", type=int, default=12, help="phones per room")
    parser.add_argument("--processes", type=int, default=2, help="server processes")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--buzz-every", type=float, default=5.0, help="mean seconds per room")
    parser.add_argument("--watchers", type=int, default=20, help="clients showing standings")
    parser.add_argument("--client-procs", type=int, default=2)
    parser.add_argument(
        "--postgres",
        default=os.environ.get("GRACE_ARENA_TEST_POSTGRES"),
        help="a PostgreSQL server's URL (a role that may create databases); default "
        "$GRACE_ARENA_TEST_POSTGRES; none: SQLite",
    )
    args = parser.parse_args()
    raise_open_files()
    from bench_event import make_events
    from live import free_port

    from grace_arena.record.db import make_engine
    from grace_arena.server.proxy import ProxyLayout, ProxyRunner

    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} "
        f"{load[2]:.1f} before the run; python {sys.version.split()[0]}"
    )
    with tempfile.TemporaryDirectory() as tmp, record(args.postgres, Path(tmp)) as db_url:
        backend = "PostgreSQL" if db_url.startswith("postgresql") else "SQLite"
        print(f"record: {backend} ({db_url.split('@')[-1]})")
        codes = make_events(db_url, args.rooms, args.seconds)[EVENT]
        proxy_port = free_port()
        proxy_url = f"http://127.0.0.1:{proxy_port}"
        engine = make_engine(db_url)
        layout = ProxyLayout("127.0.0.1", proxy_port, Path(tmp) / "proxy")
        runner = ProxyRunner(engine, layout, quiet=True)
        runner.start()
        stop = threading.Event()

        def keep_current() -> None:
            while not stop.wait(0.5):
                with contextlib.suppress(Exception):
                    runner.refresh()

        threading.Thread(target=keep_current, daemon=True).start()
        names = [str(i) for i in range(1, args.rooms + 1)]
        servers = []
        tokens: dict[str, str] = {}
        try:
            for k in range(args.processes):
                port = free_port()
                proc, printed = start_server(db_url, port, proxy_url, names[k :: args.processes])
                servers.append((proc, port))
                tokens.update(printed)
            deadline = time.time() + 60
            while len(runner.read().rooms) < args.rooms and time.time() < deadline:
                time.sleep(0.2)
            runner.refresh()
            print(
                f"{args.rooms} rooms on {args.processes} server processes behind HAProxy at "
                f"{proxy_url} ({len(runner.table.rooms)} rooms routed by join code)"
            )
            before = {port: (rss_mb(proc.pid), health(port)) for proc, port in servers}
            rooms = [
                (c, tokens[c], DISPLAY_TOKENS.get(c), f"h{i}") for i, c in enumerate(codes, start=1)
            ]
            queue: multiprocessing.Queue = multiprocessing.Queue()
            ready: multiprocessing.Queue = multiprocessing.Queue()
            shares = [rooms[i :: args.client_procs] for i in range(args.client_procs)]
            # the clients connect first (the play starts once they all have)
            connect_began = time.time()
            start = connect_began + 30 + 0.06 * args.rooms * (args.players + 2)
            workers = [
                multiprocessing.Process(
                    target=client_process,
                    args=(
                        proxy_port,
                        share,
                        args.players,
                        args.seconds,
                        start,
                        args.buzz_every,
                        queue,
                        ready,
                    ),
                )
                for share in shares
                if share
            ]
            for w in workers:
                w.start()
            opened = sum(ready.get(timeout=600) for _ in workers)
            connected = time.time() - connect_began
            if time.time() > start:
                print("warning: the clients connected after the play began (a loaded machine)")
            time.sleep(max(0.0, start - time.time()))
            with_clients = {port: (rss_mb(proc.pid), health(port)) for proc, port in servers}
            watched: list[list] = [[] for _ in range(args.watchers)]
            watchers = [
                threading.Thread(target=watch_standings, args=(proxy_port, stop, seen), daemon=True)
                for seen in watched
            ]
            for w in watchers:
                w.start()
            haproxy = [runner.proc.pid, *children_of(runner.proc.pid)] if runner.proc else []
            postgres = pids_named("postgres")
            cpu0 = {port: cpu_seconds(proc.pid) for proc, port in servers}
            hap0 = sum(cpu_seconds(p) for p in haproxy)
            pg0 = {p: cpu_seconds(p) for p in postgres}
            t0 = time.time()
            time.sleep(args.seconds)
            took = time.time() - t0
            cpu = {port: cpu_seconds(proc.pid) - cpu0[port] for proc, port in servers}
            hap = sum(cpu_seconds(p) for p in haproxy) - hap0
            # (a backend that ended meanwhile took its CPU with it; one that began counts whole)
            pg = sum(max(0.0, cpu_seconds(p) - pg0.get(p, 0.0)) for p in pids_named("postgres"))
            after = {port: health(port) for _, port in servers}
            parts = [queue.get(timeout=args.seconds + 300) for _ in workers]
            for w in workers:
                w.join(30)
            stop.set()
            for w in watchers:
                w.join(45)
        finally:
            stop.set()
            for proc, _ in servers:
                proc.terminate()
            for proc, _ in servers:
                with contextlib.suppress(Exception):
                    proc.wait(20)
            runner.stop()
            engine.dispose()

    played = [r for p in parts for r in p["rooms"]]
    delivery = [x for r in played for x in r["delivery"]]
    lockout = [x for r in played for x in r["lockout"]]
    rulings = [
        (team, at) for r in played for team, at in r["rulings"] if team.startswith("h")
    ]  # (the model player is one team in every room: its points say nothing of one ruling)
    standings = [x for seen in watched for x in standings_latencies(rulings, seen)]
    room_p99 = [pct(r["delivery"], 99) for r in played if r["delivery"]]
    room_lock = [pct(r["lockout"], 99) for r in played if r["lockout"]]
    phones = args.rooms * args.players
    sockets = opened * (args.players + 2)
    print(
        f"\n{args.rooms} rooms, {phones} phones, {args.rooms} displays, {args.rooms} moderators "
        f"({sockets} sockets, connected in {connected:.0f} s), {args.watchers} standings "
        f"watchers; {WPM} wpm, a buzz every {args.buzz_every:g} s per room; {took:.0f} s of play"
    )
    print(f"\n{'(ms)':<34} {'p50':>9} {'p99':>9}  goal      samples")
    rows = [
        ("reveal delivery", delivery, None, f"{len(delivery)} word states"),
        ("lock-out at every client of a room", lockout, 100, f"{len(lockout)} of "
         f"{sum(r['won'] for r in played)} phones' buzzes that took the floor "
         f"({sum(r['buzzes'] for r in played)} sent)"),
        ("standings at a watcher after a ruling", standings, 1000, f"{len(standings)} of "
         f"{len(rulings) * args.watchers} (rulings x watchers)"),
    ]  # fmt: skip
    for label, values, goal, note in rows:
        p50 = statistics.median(values) * 1e3 if values else float("nan")
        p99 = pct(values, 99) * 1e3 if values else float("nan")
        print(f"{label:<34} {p50:>9.1f} {p99:>9.1f}  {'≤ ' + str(goal) if goal else '':<8}  {note}")
    for (_, port), k in zip(servers, range(len(servers)), strict=True):
        h = after[port]
        print(
            f"{'durable commit, process ' + str(k + 1):<34} {h['commit_p50_ms'] or 0:>9.1f} "
            f"{h['commit_p99_ms'] or 0:>9.1f}  ≤ 20      last {h['synced_commits']} synced commits"
        )
    for (_, port), k in zip(servers, range(len(servers)), strict=True):
        h = after[port]
        print(
            f"{'  of which in the record, process ' + str(k + 1):<34} "
            f"{h['commit_record_p50_ms'] or 0:>9.1f} {h['commit_record_p99_ms'] or 0:>9.1f}  "
            f"{'':<8}  (the worker thread's call, without the waits for the loop)"
        )
    for (_, port), k in zip(servers, range(len(servers)), strict=True):
        h = after[port]
        if h.get("standings_computations"):
            print(
                f"{'standings computation, process ' + str(k + 1):<34} "
                f"{h['standings_p50_ms'] or 0:>9.1f} {h['standings_p99_ms'] or 0:>9.1f}  "
                f"{'':<8}  {h['standings_computations']} computations"
            )
    for (_, port), k in zip(servers, range(len(servers)), strict=True):
        h = after[port]
        if h.get("gc_full_passes") is not None:
            print(
                f"{'collector pauses, process ' + str(k + 1):<34} {'':>9} "
                f"{h['gc_pause_p99_ms']:>9.1f}  {'':<8}  {h['gc_full_passes']} full passes "
                f"since start-up, longest pause {h['gc_pause_max_ms']:.1f} ms"
            )
    errors: dict[str, int] = {}
    for r in played:
        for key, n in r["errors"].items():
            errors[key] = errors.get(key, 0) + n
    if errors:
        print("errors the clients were sent: " + ", ".join(f"{n} {k}" for k, n in errors.items()))
    if room_p99:
        print(
            f"\nper room: reveal delivery p99 median {statistics.median(room_p99) * 1e3:.1f} ms, "
            f"worst room {max(room_p99) * 1e3:.1f} ms; lock-out p99 median "
            f"{statistics.median(room_lock or [0]) * 1e3:.1f} ms, worst room "
            f"{max(room_lock or [0]) * 1e3:.1f} ms"
        )
    print(
        f"\n{'process':<22} {'rooms':>6} {'sockets':>8} {'CPU %':>7} {'RSS MB':>8} "
        f"{'+MB w/ sockets':>15} {'KB/socket':>10} {'CPU ms/s per room':>18} "
        f"{'µs/s per socket':>16}"
    )
    for k, (_proc, port) in enumerate(servers):
        rss0, h0 = before[port]
        rss1, h1 = with_clients[port]
        n = max(1, h1["connections"])
        share = cpu[port] / took
        print(
            f"{'server ' + str(k + 1):<22} {h0['matches']:>6} {h1['connections']:>8} "
            f"{share * 100:>7.1f} {rss1:>8.1f} {rss1 - rss0:>15.1f} "
            f"{(rss1 - rss0) * 1024 / n:>10.1f} {share * 1e3 / max(1, h0['matches']):>18.2f} "
            f"{share * 1e6 / n:>16.1f}"
        )
    print(f"{'HAProxy':<22} {'':>6} {sockets:>8} {hap / took * 100:>7.1f}")
    print(f"{'PostgreSQL (all)':<22} {'':>6} {'':>8} {pg / took * 100:>7.1f}")


if __name__ == "__main__":
    main()
