"""Buzz arbitration latency, reveal fan-out and durable buzz commits, against a real server.

    .venv/bin/python bench/bench_server.py [--clients 10 100 500] [--rounds 15]
    .venv/bin/python bench/bench_server.py --clients      # no arbitration rounds
    .venv/bin/python bench/bench_server.py --only-storms  # sections 1b and 1c alone
    .venv/bin/python bench/bench_server.py --only-lockout --clients 500 --runs 5  # medians

1. Arbitration: N players connected on loopback; one buzzes; the time from sending the buzz
   to the lock-out (a state with the floor taken) reaching EVERY client. Measured against two
   minimal raw-websockets servers that broadcast the arena's lock-out message (as a client got
   it in the same run) to all their clients on a buzz: "raw", the floor for any websocket
   fan-out in Python (no framework, no record, no state to build), and "raw+store", which first
   commits the buzz to SQLite (WAL, synchronous=FULL, in a thread) as the arena must (it
   stores every change before it tells anyone): the floor for a fan-out of a stored change.
   The rounds of the three alternate (their order turning), so that they meet the same noise
   on a shared machine; the ratios of the medians and of the p99s are reported, and the
   median of each round's ratio to the raw rounds next to it. With ``--runs N`` the section
   runs N times in a row (each with a new match, new players and a new raw server) and ends
   with the median over the runs of each of those ratios, and the load average before and
   after: one run's ratios swing with whatever else the machine does meanwhile. A round
   starts once the clients (all in this process) have read everything sent before it, and
   this process's garbage collector is held off during a round: it stands in for N devices.
   A match has as many rounds as its packet has tossups; the rounds go on in a new match with
   new players. If some client does not get the lock-out, the run says why (the buzz or a
   command refused, clients closed by the server and how, the lagging clients the server's
   log says it dropped) and goes on to the next section.
2. Reveal fan-out: N clients in screen mode at 4 words/s, and the server process's CPU use over
   the run. The clients (``fanout_client.py``, in a few processes) measure each word's state
   against the ``server_time`` in it (same machine clock) twice: when its bytes reached the
   client's socket (the kernel's receive timestamp: the delivery) and when the client process
   got to read it (that plus the client's own wait for one of the two shared cores). The same
   clients against a bare websockets server broadcasting a message of the same size at the same
   rate give the floor. Each reading starts once the client processes are idle: reading the
   messages of 500 joins keeps them busy for about a second after the last one.
1b. Storms: N players buzz at once: when the last of them has its outcome, how late the answer
   timer fired, and how long the moderator's ruling took; 1c. a flood: 50 players sending 100
   buzzes each at 50 a second, the moderator's rulings meanwhile.
3. Durable write: the latency of committing one buzz, on SQLite (WAL, synchronous=FULL) and on
   PostgreSQL when a server is given (``--postgres URL`` or ``$GRACE_ARENA_TEST_POSTGRES``, as
   for the tests: the run makes a database and drops it), runs alternating between the two so
   that both meet the same noise; ``--only-commits`` runs this section alone:

       .venv/bin/python bench/bench_server.py --only-commits --postgres postgresql+psycopg://...

The server runs in its own process (``grace-arena serve``, its log in the run's folder); the
arbitration clients run here on asyncio.
The machines are shared and noisy: compare the ratio and medians from one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from grace_arena.server.connection import LAG_DROP

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
SECRET = "bench-secret"
POSTGRES_ENV = "GRACE_ARENA_TEST_POSTGRES"
LOCKOUT = ['{"type": "locked"}']  # the arena's lock-out message, as a client got it in the run

RAW_SERVER = r"""
import asyncio, json, sqlite3, sys
from websockets.asyncio.server import serve, broadcast
clients = set()
# the arena's lock-out state, word for word, so that clients parse the same message
LOCKED = sys.argv[2]
# a buzz that asks for it is committed first, as durably as the arena's record commits it
db = sqlite3.connect(sys.argv[3], isolation_level=None, check_same_thread=False)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE IF NOT EXISTS buzz (id INTEGER PRIMARY KEY, message TEXT)")
def store(raw):
    db.execute("BEGIN")
    db.execute("INSERT INTO buzz (message) VALUES (?)", (raw,))
    db.execute("COMMIT")
async def handler(ws):
    clients.add(ws)
    try:
        async for raw in ws:
            message = json.loads(raw)
            if message.get("type") == "buzz":
                if message.get("store"):
                    await asyncio.to_thread(store, raw)
                broadcast(clients, LOCKED)
    finally:
        clients.discard(ws)
async def main():
    async with serve(handler, "127.0.0.1", int(sys.argv[1]), max_queue=None, compression=None):
        await asyncio.Future()
asyncio.run(main())
"""


def free_port() -> int:
    from live import free_port as fp

    return fp()


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


def wait_http(url: str, proc: subprocess.Popen) -> None:
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("server exited") from None
            time.sleep(0.2)
    raise RuntimeError("server did not start")


def start_arena(folder: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    with (folder / "server.log").open("ab") as log:  # its warnings: lagging clients dropped
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from grace_arena.cli import app; app()",
                "serve",
                "--db",
                f"sqlite:///{folder / 'bench.db'}",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-match",
                "--secret",
                SECRET,
                "--max-players",
                "1000",
                "--max-connections-per-address",
                "2000",
                "--new-names-per-address",
                "2000",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    wait_http(f"http://127.0.0.1:{port}/api/health", proc)
    return proc, port


def lag_drops(folder: Path) -> int:
    """How many clients the server's log says it dropped for lagging so far."""
    path = folder / "server.log"
    if not path.exists():
        return 0
    return sum(LAG_DROP in line for line in path.read_text(errors="replace").splitlines())


def create_match(port: int, *, mode: str, wpm: int, answer_time: float | None = None) -> dict:
    from grace_arena.server.app import Tokens

    body = {
        "packet_id": "grace-arena-sample-1",
        "teams": [{"id": "red", "name": "Red"}, {"id": "blue", "name": "Blue"}],
        "reading_mode": mode,
        "wpm": wpm,
        "answer_time": answer_time,
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/matches",
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {Tokens(SECRET).server()}",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


class Peer:
    """One client: reads everything, answers pings, signals the messages we wait for, and
    keeps what tells why a lock-out did not come (refusals, its own close)."""

    def __init__(self, ws, predicate) -> None:
        self.ws = ws
        self.predicate = predicate
        self.hit = asyncio.Event()
        self.hit_at = 0.0
        self.lateness: list[float] = []
        #: The errors and buzz results it got, the last state, and how it was closed.
        self.replies: list[dict] = []
        self.last_state: dict | None = None
        self.closed: tuple[int, str] | None = None
        #: Told once it has what we wait for, or is closed (a round's count of who is in).
        self.watcher: Callable[[Peer], None] | None = None
        self.task = asyncio.create_task(self.read())

    async def read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self._read()
        code = self.ws.close_code
        self.closed = (1006 if code is None else code, self.ws.close_reason or "")
        if self.watcher is not None:
            self.watcher(self)

    async def _read(self) -> None:
        async for raw in self.ws:
            now = time.time()
            message = json.loads(raw)
            kind = message.get("type")
            if kind == "ping":
                await self.ws.send(
                    json.dumps({"type": "pong", "sent": message["sent"], "time": now})
                )
            elif kind == "state":
                self.last_state = message
                if message.get("tossup"):
                    self.lateness.append(now - message["server_time"])
            elif kind in ("error", "buzz_result"):
                self.replies.append(message)
            if self.predicate(message) and not self.hit.is_set():
                if message.get("type") == "state":
                    LOCKOUT[0] = raw
                self.hit_at = now
                self.hit.set()
                if self.watcher is not None:
                    self.watcher(self)


class LockoutMissed(Exception):
    """Some clients did not get a round's lock-out (the message says why, as far as known)."""


def why_missed(peers: list[Peer], waited: float, others: list[Peer], drops: int | None) -> str:
    """Why some of ``peers`` did not get the lock-out within ``waited`` seconds, as far as the
    clients (``others``: the moderator) and the server's log (``drops``) tell."""
    missing = [p for p in peers if not p.hit.is_set()]
    lines = [f"{len(missing)} of {len(peers)} clients did not get the lock-out in {waited:.1f} s"]
    closes: dict[tuple[int, str], int] = {}
    for p in missing:
        if p.closed is not None:
            closes[p.closed] = closes.get(p.closed, 0) + 1
    for (code, reason), k in sorted(closes.items()):
        if code == 1006:
            lines.append(
                f"{k} were closed without a close frame (code 1006): how the server drops a"
                " client too far behind, or a network failure"
            )
        else:
            lines.append(
                f"{k} were closed by the server with code {code} ({reason or 'no reason'})"
            )
    if drops:
        lines.append(
            f'the server\'s log says it dropped {drops} clients for lagging ("{LAG_DROP}"):'
            " this process did not read fast enough"
        )
    still = len(missing) - sum(closes.values())
    if still:
        lines.append(f"{still} are still connected")
    for who, peer in [("the buzzer", peers[0]), *(("the moderator", o) for o in others)]:
        for reply in peer.replies[-2:]:
            if reply.get("type") == "error" or reply.get("outcome") != "won":
                lines.append(f"{who} was told: {json.dumps(reply)[:200]}")
    return "; ".join(lines)


def locked(message: dict) -> bool:
    return (message.get("type") == "state" and message.get("floor") is not None) or (
        message.get("type") == "locked"
    )


async def arena_players(port: int, code: str, n: int, predicate) -> list[Peer]:
    async def one(i: int) -> Peer:
        ws = await connect(f"ws://127.0.0.1:{port}/ws", max_queue=None, ping_interval=None)
        await ws.send(json.dumps({"type": "hello", "role": "player", "join_code": code}))
        while json.loads(await ws.recv())["type"] != "welcome":
            pass
        await ws.send(
            json.dumps({"type": "join", "team": "red" if i % 2 else "blue", "name": f"P{i}"})
        )
        while json.loads(await ws.recv())["type"] != "joined":
            pass
        return Peer(ws, predicate)

    peers = []
    for start in range(0, n, 50):  # join in batches
        peers += await asyncio.gather(*(one(i) for i in range(start, min(n, start + 50))))
    return peers


async def arena_moderator(port: int, match: dict):
    ws = await connect(f"ws://127.0.0.1:{port}/ws", max_queue=None, ping_interval=None)
    await ws.send(
        json.dumps(
            {
                "type": "hello",
                "role": "moderator",
                "match_id": match["match_id"],
                "token": match["moderator_token"],
            }
        )
    )
    return ws, Peer(ws, lambda m: False)


async def idle(limit: float = 10.0) -> None:
    """Wait until this process's clients have read what they were sent (under a fifth of a
    core over a tenth of a second), so that a round measures the buzz alone."""
    start = time.time()
    while time.time() - start < limit:
        cpu = time.process_time()
        await asyncio.sleep(0.1)
        if time.process_time() - cpu < 0.02:
            return


async def buzz_round(
    peers: list[Peer],
    *,
    store: bool = False,
    others: tuple[Peer, ...] = (),
    folder: Path | None = None,
    limit: float = 30.0,
) -> float:
    """Once the clients have read what they were sent before (at first the joins, then the
    round's set-up), the first buzzes (``store``: asking the raw server to store it first);
    the seconds until the last client has the lock-out. The garbage collector is held off
    meanwhile: this process stands in for N devices. Raises :class:`LockoutMissed`, saying
    why, if some client has not got it within ``limit`` seconds (``others``: the moderator,
    whose refusals are said too; ``folder``: where the server's log is)."""
    await idle()
    for p in [*peers, *others]:
        p.hit.clear()
        p.replies.clear()
    waiting = {p for p in peers if not p.task.done()}  # (a closed client never gets it)
    everyone = asyncio.Event()

    def seen(peer: Peer) -> None:
        waiting.discard(peer)
        if not waiting:
            everyone.set()

    for p in peers:
        p.watcher = seen
    gc.collect()
    gc.disable()
    try:
        sent = time.time()
        buzz = {"type": "buzz", "client_time": sent} | ({"store": True} if store else {})
        with contextlib.suppress(ConnectionClosed):  # (said below)
            await peers[0].ws.send(json.dumps(buzz))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(everyone.wait(), limit if waiting else 0)
    finally:
        gc.enable()
        for p in peers:
            p.watcher = None
    if not all(p.hit.is_set() for p in peers):
        await asyncio.sleep(0.5)  # the closes and refusals under way
        drops = lag_drops(folder) if folder is not None else None
        raise LockoutMissed(why_missed(peers, time.time() - sent, list(others), drops))
    return max(p.hit_at for p in peers) - sent


class ArenaRounds:
    """The arena's side of section 1: ``n`` players and a moderator of a match in read-aloud
    mode; each round starts a tossup, reads a word, waits for a buzz's lock-out and rules it
    correct. When the match has played every tossup of its packet, the rounds go on in a new
    match with new players."""

    def __init__(self, port: int, n: int, folder: Path) -> None:
        self.port, self.n, self.folder = port, n, folder
        self.peers: list[Peer] = []
        self.mod: Peer | None = None

    async def open(self) -> None:
        match = create_match(self.port, mode="read_aloud", wpm=120)
        self.peers = await arena_players(self.port, match["join_code"], self.n, locked)
        _, self.mod = await arena_moderator(self.port, match)

    def _tossups_left(self) -> bool:
        state = self.mod.last_state if self.mod is not None else None
        if state is None:
            return True
        return state["match"]["tossups_played"] < state["match"]["tossups_total"]

    async def round(self) -> float:
        if self.mod is None or not self._tossups_left():
            await self.close()
            await self.open()
        assert self.mod is not None
        for command in ({"type": "start_tossup"}, {"type": "pause"}, {"type": "step"}):
            await self.mod.ws.send(json.dumps(command))
        await asyncio.sleep(0.3)
        latency = await buzz_round(self.peers, others=(self.mod,), folder=self.folder)
        await self.mod.ws.send(json.dumps({"type": "rule", "ruling": "correct"}))
        await asyncio.sleep(0.2)
        return latency

    async def close(self) -> None:
        for p in [*self.peers, *([self.mod] if self.mod else [])]:
            await p.ws.close()
        self.peers, self.mod = [], None


class RawRounds:
    """The raw websockets server of section 1 and its ``n`` clients; a round is a buzz (stored
    first with ``store``) and its lock-out to all."""

    def __init__(self, n: int, folder: Path) -> None:
        self.n, self.folder = n, folder
        self.peers: list[Peer] = []
        self.proc: subprocess.Popen | None = None

    async def open(self, message: str) -> None:
        port = free_port()
        db = self.folder / f"raw-{port}.db"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", RAW_SERVER, str(port), message, str(db)]
        )
        for _ in range(100):
            try:
                ws = await connect(f"ws://127.0.0.1:{port}", ping_interval=None)
                await ws.close()
                break
            except OSError:
                await asyncio.sleep(0.1)
        for _ in range(self.n):
            ws = await connect(f"ws://127.0.0.1:{port}", max_queue=None, ping_interval=None)
            self.peers.append(Peer(ws, locked))

    async def round(self, *, store: bool) -> float:
        await asyncio.sleep(0.3)
        return await buzz_round(self.peers, store=store)

    async def close(self) -> None:
        for p in self.peers:
            await p.ws.close()
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


#: Section 1's kinds of rounds, in the order of the first round.
KINDS = ("arena", "raw", "raw+store")


async def bench_arbitration(port: int, n: int, rounds: int, folder: Path) -> dict[str, list[float]]:
    """``rounds`` lock-outs of each of :data:`KINDS`, alternating (the order turns each
    round), after one of each not counted (the first pays for what a fresh connection
    does once, and gives the lock-out message the raw server sends)."""
    arena, raw = ArenaRounds(port, n, folder), RawRounds(n, folder)
    try:
        await arena.round()
        await raw.open(LOCKOUT[0])
        await raw.round(store=False)
        await raw.round(store=True)
        play = {
            "arena": arena.round,
            "raw": lambda: raw.round(store=False),
            "raw+store": lambda: raw.round(store=True),
        }
        out: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for i in range(rounds):
            for kind in KINDS[i % 3 :] + KINDS[: i % 3]:
                out[kind].append(await play[kind]())
        return out
    finally:
        await arena.close()
        await raw.close()


def paired_ratio(a: list[float], b: list[float]) -> float:
    """The median of the rounds' ratios ``a[i] / b[i]`` (rounds run next to each other)."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def run_ratios(times: dict[str, list[float]]) -> dict[str, tuple[float, float, float]]:
    """One run's ratios of the arena to each raw kind: of the p50s, of the p99s, and the
    median of each round's ratio to the one next to it (:func:`paired_ratio`)."""
    a = times["arena"]
    return {
        kind: (
            statistics.median(a) / statistics.median(times[kind]),
            pct(a, 99) / pct(times[kind], 99),
            paired_ratio(a, times[kind]),
        )
        for kind in KINDS[1:]
    }


def median_ratios(
    runs: list[dict[str, tuple[float, float, float]]],
) -> dict[str, tuple[float, float, float]]:
    """Per raw kind, the median over runs of each of :func:`run_ratios`' three ratios."""
    return {
        kind: tuple(statistics.median(r[kind][i] for r in runs) for i in range(3))  # type: ignore[misc]
        for kind in runs[0]
    }


def load_average() -> str:
    """The machine's load average (1, 5 and 15 minutes), as ``uptime`` says it."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


async def lockout_runs(port: int, n: int, rounds: int, runs: int, folder: Path) -> None:
    """Section 1 ``runs`` times in a row for ``n`` clients, each run with a new match, new
    players and a new raw server: each run's p50 and p99 of each kind and its ratios, then
    the median over runs of each ratio (the figure to compare, as one run's ratio swings
    with whatever else the machine does meanwhile), and the load average before and after."""
    print(
        f"{n:>8} clients, {runs} runs of {rounds} rounds of each kind; load average"
        f" {load_average()}"
    )
    print(
        f"{'run':>8} {'arena p50':>10} {'p99':>7} {'raw+store p50':>14} {'p99':>7}"
        f" {'raw p50':>8} {'p99':>7}   {'ratio to raw+store: p50':>23} {'p99':>5}"
        f" {'per round':>9}   {'to raw: p50':>11} {'p99':>5} {'per round':>9}"
    )
    done: list[dict[str, tuple[float, float, float]]] = []
    for run in range(1, runs + 1):
        try:
            times = await bench_arbitration(port, n, rounds, folder)
        except LockoutMissed as exc:
            print(f"{run:>8} stopped: {exc}")
            continue
        ratios = run_ratios(times)
        done.append(ratios)
        cells = " ".join(
            f"{statistics.median(times[kind]) * 1e3:>{w}.1f} {pct(times[kind], 99) * 1e3:>7.1f}"
            for kind, w in (("arena", 10), ("raw+store", 14), ("raw", 8))
        )
        store, raw = ratios["raw+store"], ratios["raw"]
        print(
            f"{run:>8} {cells}   {store[0]:>23.2f} {store[1]:>5.2f} {store[2]:>9.2f}"
            f"   {raw[0]:>11.2f} {raw[1]:>5.2f} {raw[2]:>9.2f}"
        )
    if not done:
        return
    medians = median_ratios(done)
    store, raw = medians["raw+store"], medians["raw"]
    print(
        f"{'median':>8} of {len(done)} runs' ratios: arena / raw+store p50 {store[0]:.2f},"
        f" p99 {store[1]:.2f}, per round {store[2]:.2f}; arena / raw p50 {raw[0]:.2f},"
        f" p99 {raw[1]:.2f}, per round {raw[2]:.2f}"
    )
    print(f"{'':>8} load average after: {load_average()}")
    if drops := lag_drops(folder):
        print(f"{'':>8} the server's log says it dropped {drops} clients for lagging")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


RAW_FANOUT_SERVER = r"""
import asyncio, json, sys, time
from websockets.asyncio.server import serve, broadcast
clients = set()
async def handler(ws):
    clients.add(ws)
    try:
        async for _ in ws:
            pass
    except Exception:  # a client process that ends without closing
        pass
    finally:
        clients.discard(ws)
async def main():
    pad = "x" * max(0, int(sys.argv[2]) - 80)
    async with serve(handler, "127.0.0.1", int(sys.argv[1]), max_queue=None, compression=None):
        print("listening", flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.readline)  # start
        stop = loop.run_in_executor(None, sys.stdin.readline)
        while not stop.done():
            await asyncio.sleep(0.25)  # 4 words per second
            state = {"type": "state", "tossup": {"pad": pad}, "server_time": time.time()}
            broadcast(clients, json.dumps(state, separators=(",", ":")))
asyncio.run(main())
"""
CLIENT = ROOT / "bench" / "fanout_client.py"


def fanout_clients(port: int, code: str, n: int, procs: int, *, raw: bool) -> list:
    """``n`` players in ``procs`` client processes (``fanout_client.py``), all connected."""
    shares = [n // procs + (i < n % procs) for i in range(procs)]
    clients = [
        subprocess.Popen(
            [sys.executable, str(CLIENT), str(port), code, str(k), str(sum(shares[:i]))]
            + (["--raw"] if raw else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i, k in enumerate(shares)
    ]
    for c in clients:
        assert c.stdout is not None and c.stdout.readline().strip() == "ready"
    return clients


#: The connections of section 2's client processes that the server closed during the run:
#: ``[code, reason]`` each (1006 when it sent no close frame).
CLOSED: list[list] = []


def collect(clients: list) -> list[list]:
    """Stop the client processes and merge their samples (and their closes, in
    :data:`CLOSED`)."""
    samples: list[list] = []
    for c in clients:
        c.stdin.write("\n")
        c.stdin.flush()
        out = json.loads(c.stdout.readline())
        samples += out["samples"]
        CLOSED.extend(out["closed"])
        c.wait(30)
    return samples


def closes_said(closed: list[list], drops: int) -> str | None:
    """What became of the connections the server closed, in a sentence (None if none was)."""
    if not closed and not drops:
        return None
    counts: dict[tuple[int, str], int] = {}
    for code, reason in closed:
        counts[(code, reason)] = counts.get((code, reason), 0) + 1
    parts = [
        f"{k} closed without a close frame (code 1006)"
        if code == 1006
        else f"{k} closed with code {code} ({reason or 'no reason'})"
        for (code, reason), k in sorted(counts.items())
    ]
    said = f"{len(closed)} client connections ended during the run: " + ", ".join(parts)
    if drops:
        said += (
            f"; the server's log says it dropped {drops} clients for lagging: the client"
            " processes did not read fast enough, and their samples stop there"
        )
    return said


def measures(samples: list[list]) -> dict[str, list]:
    """The samples (``[server_time, arrival, read, size]``) as ``arrival``, ``read`` and
    ``sizes`` lists."""
    return {
        "arrival": [a for _, a, _, _ in samples if a is not None],
        "read": [r for _, _, r, _ in samples],
        "sizes": [n for _, _, _, n in samples],
    }


async def settle(clients: list, limit: float = 10.0) -> float:
    """Wait until the client processes are idle (under a fifth of a core each over a quarter
    of a second): every join sends the new state to every client connected, so 500 joins
    are about 125,000 messages for the client processes to read. Returns the seconds waited."""
    start = time.time()
    last = [cpu_seconds(c.pid) for c in clients]
    while time.time() - start < limit:
        await asyncio.sleep(0.25)
        now = [cpu_seconds(c.pid) for c in clients]
        if all(b - a < 0.05 for a, b in zip(last, now, strict=True)):
            break
        last = now
    return time.time() - start


async def bench_fanout(
    port: int, pid: int, n: int, seconds: float, procs: int
) -> tuple[dict[str, list], float, float]:
    """The arena reading a tossup in screen mode at 4 words/s to ``n`` players; returns the
    clients' measures (``fanout_client.py``), the server's CPU share of one core, and how long
    the clients took to settle after joining."""
    match = create_match(port, mode="screen", wpm=240)  # 4 words per second
    clients = fanout_clients(port, match["join_code"], n, procs, raw=False)
    mod, _ = await arena_moderator(port, match)
    settled = await settle(clients)
    cpu0, t0 = cpu_seconds(pid), time.time()
    await mod.send(json.dumps({"type": "start_tossup"}))
    await asyncio.sleep(seconds)
    cpu = (cpu_seconds(pid) - cpu0) / (time.time() - t0)
    await mod.send(json.dumps({"type": "pause"}))
    measured = measures(collect(clients))
    await mod.close()
    return measured, cpu, settled


async def bench_fanout_raw(n: int, seconds: float, procs: int, size: int) -> dict[str, list]:
    """The same clients and measures against a bare websockets server that broadcasts a
    message of ``size`` bytes with a ``server_time`` 4 times a second: the floor."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", RAW_FANOUT_SERVER, str(port), str(size)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None and server.stdin is not None
        assert server.stdout.readline().strip() == "listening"
        clients = fanout_clients(port, "-", n, procs, raw=True)
        await settle(clients)
        server.stdin.write("start\n")
        server.stdin.flush()
        await asyncio.sleep(seconds)
        server.stdin.write("stop\n")
        server.stdin.flush()
        return measures(collect(clients))
    finally:
        server.kill()
        server.wait()


class Listener:
    """One storm or flood client: reads everything, answers pings, notes when what we wait
    for came."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.results: list[float] = []  # arrival of each buzz_result
        self.limited = 0
        self.errors = 0
        self.states: list[tuple[float, dict]] = []
        self.closed_code: int | None = None
        self.task = asyncio.create_task(self.read())

    async def read(self) -> None:
        try:
            async for raw in self.ws:
                now = time.time()
                message = json.loads(raw)
                kind = message["type"]
                if kind == "ping":
                    pong = {"type": "pong", "sent": message["sent"], "time": now}
                    await self.ws.send(json.dumps(pong))
                elif kind == "buzz_result":
                    self.results.append(now)
                elif kind == "error":
                    self.errors += 1
                    self.limited += message["code"] == "rate_limited"
                elif kind == "state":
                    self.states.append((now, message))
        except ConnectionClosed as exc:
            self.closed_code = exc.rcvd.code if exc.rcvd else 1006

    async def until(self, predicate, since: int = 0, timeout: float = 120.0) -> tuple[float, dict]:
        """The first state from the ``since``-th on that ``predicate`` holds for."""
        deadline = time.time() + timeout
        seen = since
        while time.time() < deadline:
            for when, state in self.states[seen:]:
                if predicate(state):
                    return when, state
            seen = len(self.states)
            await asyncio.sleep(0.005)
        raise TimeoutError("no such state")


async def storm_players(port: int, code: str, n: int) -> list[Listener]:
    async def one(i: int) -> Listener:
        ws = await connect(
            f"ws://127.0.0.1:{port}/ws", max_queue=None, ping_interval=None, open_timeout=60
        )
        await ws.send(json.dumps({"type": "hello", "role": "player", "join_code": code}))
        while json.loads(await ws.recv())["type"] != "welcome":
            pass
        team = "red" if i % 2 else "blue"
        await ws.send(json.dumps({"type": "join", "team": team, "name": f"P{i}"}))
        while (reply := json.loads(await ws.recv()))["type"] != "joined":
            if reply["type"] == "error":
                raise RuntimeError(f"join refused: {reply['message']}")
        return Listener(ws)

    peers = []
    for start in range(0, n, 50):
        peers += await asyncio.gather(*(one(i) for i in range(start, min(n, start + 50))))
    return peers


async def storm_moderator(port: int, match: dict) -> Listener:
    ws = await connect(f"ws://127.0.0.1:{port}/ws", max_queue=None, ping_interval=None)
    hello = {"type": "hello", "role": "moderator", "match_id": match["match_id"]}
    await ws.send(json.dumps({**hello, "token": match["moderator_token"]}))
    return Listener(ws)


async def bench_storm(
    port: int, n: int, rounds: int, answer_time: float = 2.0
) -> dict[str, list[float]]:
    """``n`` players buzz at once, ``rounds + 1`` times: per race, the seconds until every
    player has its outcome and how many states each phone got for it (one per buzz before
    batching); in the first race, how late the answer timer fired; in the others, the seconds
    from the moderator's ruling (sent as soon as the floor is taken) to the state that
    shows it."""
    match = create_match(port, mode="read_aloud", wpm=120, answer_time=answer_time)
    peers = await storm_players(port, match["join_code"], n)
    mod = await storm_moderator(port, match)
    results: dict[str, list[float]] = {"all": [], "timer": [], "ruling": [], "states": []}
    for race in ["timer", *["ruling"] * rounds]:
        # The answer timer does not run while reading is paused: that race is read on.
        paused = race == "ruling"
        commands = ["start_tossup", "pause", "step"] if paused else ["start_tossup"]
        mark = len(mod.states)
        for command in commands:
            await mod.ws.send(json.dumps({"type": command}))
        await mod.until(
            lambda s, p=paused: (
                (s["tossup"] or {}).get("position", -1) >= 0 and s["match"]["paused"] is p
            ),
            mark,
        )
        await idle()
        before = [len(p.states) for p in peers]
        mark = len(mod.states)
        for p in peers:
            p.results.clear()
        sent = time.time()
        await asyncio.gather(*(p.ws.send(json.dumps({"type": "buzz"})) for p in peers))
        _, floor = await mod.until(lambda s: s["floor"] is not None, mark)
        mark = len(mod.states)
        if race == "timer":
            deadline = floor["deadline"]
            fired, _ = await mod.until(lambda s: s["floor"] is None, mark)
            results["timer"].append(fired - deadline)
        else:
            ruled = time.time()
            await mod.ws.send(json.dumps({"type": "rule", "ruling": "correct"}))
            done, _ = await mod.until(lambda s: s["match"]["phase"] == "answered", mark)
            results["ruling"].append(done - ruled)
        deadline_all = time.time() + 120
        while any(not p.results for p in peers) and time.time() < deadline_all:
            await asyncio.sleep(0.01)
        results["all"].append(max(p.results[0] for p in peers) - sent)
        results["states"].append(max(len(p.states) - b for p, b in zip(peers, before, strict=True)))
    for p in [*peers, mod]:
        await p.ws.close()
    return results


async def bench_flood(port: int, n: int, each: int) -> dict[str, float]:
    """``n`` players each send ``each`` buzzes, 50 a second, while the moderator rules
    on the buzzes that take the floor: the moderator's waits, the buzzes refused at the door,
    and how many connections the server closed."""
    match = create_match(port, mode="read_aloud", wpm=120, answer_time=None)
    peers = await storm_players(port, match["join_code"], n)
    mod = await storm_moderator(port, match)
    await mod.ws.send(json.dumps({"type": "start_tossup"}))
    await mod.until(lambda s: s["match"]["phase"] == "reading")
    await idle()

    async def flood(p: Listener) -> None:
        for _ in range(each):  # 50 a second, over two and a half times the rate allowed
            await p.ws.send(json.dumps({"type": "buzz"}))
            await asyncio.sleep(0.02)

    waits = []
    mark = len(mod.states)
    flooding = asyncio.gather(*(flood(p) for p in peers))
    for _ in range(2):  # rule each team's buzz incorrect as soon as it has the floor
        _, state = await mod.until(lambda s: s["floor"] is not None, mark)
        buzz_id = state["floor"]["buzz_id"]
        sent, mark = time.time(), len(mod.states)
        await mod.ws.send(json.dumps({"type": "rule", "ruling": "incorrect"}))
        done, _ = await mod.until(lambda s, b=buzz_id: (s["floor"] or {}).get("buzz_id") != b, mark)
        waits.append(done - sent)
        mark = len(mod.states) - 1
    await flooding
    await asyncio.sleep(2.0)
    out = {
        "moderator_wait_max": max(waits),
        "moderator_wait_p50": statistics.median(waits),
        "rate_limited": sum(p.limited for p in peers),
        "answered": sum(len(p.results) for p in peers),
        "closed": sum(p.closed_code is not None for p in peers),
        "sent": n * each,
    }
    for p in [*peers, mod]:
        await p.ws.close()
    return out


def bench_commit(url: str, n: int) -> list[float]:
    """The time to commit each of ``n`` buzzes (each in a tossup of its own) to a new record."""
    from engine_helpers import config

    from grace_arena.core.commands import Buzz, Join, Reveal, Rule, StartTossup
    from grace_arena.core.events import Ruling
    from grace_arena.record.db import make_engine, upgrade
    from grace_arena.record.store import MatchStore

    upgrade(url)
    engine = make_engine(url)
    rm = MatchStore(engine).create(config(n_tossups=n), now=0.0)
    rm.handle(Join(team="red", player="r", name="R"), now=0.0)
    times = []
    for _ in range(n):
        rm.handle(StartTossup(), now=0.0)
        rm.handle(Reveal(to=3), now=0.0)
        t0 = time.perf_counter()
        rm.handle(Buzz(team="red", player="r"), now=0.0)
        times.append(time.perf_counter() - t0)
        rm.handle(Rule(ruling=Ruling.CORRECT), now=0.0)
    engine.dispose()
    return times


def bench_commits(folder: Path, n: int, runs: int, postgres: str | None) -> None:
    """3. Durable buzz commits on SQLite and on PostgreSQL, runs alternating between them."""
    import sqlalchemy
    from backends import postgres_database

    results: dict[str, list[tuple[float, float]]] = {"SQLite (WAL, synchronous=FULL)": []}
    admin = None
    if postgres:
        admin = sqlalchemy.create_engine(postgres, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            version = str(conn.exec_driver_sql("SHOW server_version").scalar()).split()[0]
            durable = ", ".join(
                f"{name}={conn.exec_driver_sql(f'SHOW {name}').scalar()}"
                for name in ("synchronous_commit", "fsync")
            )
        results[f"PostgreSQL {version} ({durable})"] = []
    for run in range(runs):
        for name in results:
            if name.startswith("SQLite"):
                times = bench_commit(f"sqlite:///{folder / f'commit-{run}.db'}", n)
            else:
                assert admin is not None
                with postgres_database(admin) as url:
                    times = bench_commit(url, n)
            results[name].append((statistics.median(times), pct(times, 99)))
    if admin is not None:
        admin.dispose()
    print(
        f"\n3. durable buzz commit: {n} buzzes per run, {runs} runs per backend alternating;"
        " the median over runs of each run's p50 and p99 (ms)"
    )
    print(f"   {'backend':<52} {'p50':>7} {'p99':>7}")
    for name, per_run in results.items():
        p50 = statistics.median(r[0] for r in per_run) * 1e3
        p99 = statistics.median(r[1] for r in per_run) * 1e3
        print(f"   {name:<52} {p50:>7.2f} {p99:>7.2f}")
    if not postgres:
        print(
            f"   PostgreSQL: not measured; give a server with --postgres URL or ${POSTGRES_ENV}"
            " (postgresql+psycopg://USER:PASSWORD@HOST/postgres, a role that may create a"
            " database)"
        )


async def bench_live(args: argparse.Namespace, folder: Path) -> None:
    """Sections 1, 1b, 1c and 2: against a real server."""
    proc, port = start_arena(folder)
    try:
        print(
            "\n1. buzz -> lock-out on every client (ms), rounds alternating; raw+store: the"
            " raw server commits the buzz (SQLite WAL, synchronous=FULL) before it broadcasts"
        )
        if args.runs <= 1:
            print(
                f"{'clients':>8} {'':>10} {'p50':>7} {'p90':>7} {'p99':>7}   {'ratio p50':>9}"
                f" {'p90':>5} {'p99':>5} {'per round':>9}"
            )
        for n in [] if args.only_storms else args.clients:
            if args.runs > 1:
                await lockout_runs(port, n, args.rounds, args.runs, folder)
                continue
            try:
                times = await bench_arbitration(port, n, args.rounds, folder)
            except LockoutMissed as exc:
                print(f"{n:>8} stopped: {exc}")
                continue
            for kind in KINDS:
                t = times[kind]
                row = f"{n if kind == 'arena' else '':>8} {kind:>10} "
                row += f"{statistics.median(t) * 1e3:>7.1f} {pct(t, 90) * 1e3:>7.1f}"
                row += f" {pct(t, 99) * 1e3:>7.1f}"
                if kind == "arena":
                    print(row)
                    continue
                a = times["arena"]
                print(
                    f"{row}   {statistics.median(a) / statistics.median(t):>9.2f}"
                    f" {pct(a, 90) / pct(t, 90):>5.2f} {pct(a, 99) / pct(t, 99):>5.2f}"
                    f" {paired_ratio(a, t):>9.2f}   (arena / {kind})"
                )
            if round(0.99 * (args.rounds - 1)) == args.rounds - 1:
                print(
                    f"{'':>8} (of {args.rounds} rounds the p99 is the slowest: one stall of the"
                    " machine makes it; the per-round ratio is the median of each round's to"
                    " the one next to it)"
                )
            for kind in KINDS:
                every = " ".join(f"{x * 1e3:.1f}" for x in times[kind])
                print(f"{'':>8} every {kind} round: {every}")
            if drops := lag_drops(folder):
                print(f"{'':>8} the server's log says it dropped {drops} clients for lagging")
        if args.only_lockout:
            return
        print(f"\n1b. buzz storms: every player buzzes at once (answer timer {2.0:g} s)")
        print(
            f"{'players':>8} {'outcomes p50':>11} {'max':>9} {'timer late':>13} "
            f"{'ruling p50':>11} {'max':>10} {'states/phone':>13}   (seconds)"
        )
        for n in args.storm:
            storm = await bench_storm(port, n, args.storm_rounds)
            print(
                f"{n:>8} {statistics.median(storm['all']):>11.3f} {max(storm['all']):>9.3f} "
                f"{storm['timer'][0]:>13.3f} {statistics.median(storm['ruling']):>11.3f} "
                f"{max(storm['ruling']):>10.3f} {max(storm['states']):>13.0f}"
            )
            races = " ".join(f"{x:.3f}" for x in storm["all"])
            rulings = " ".join(f"{x:.3f}" for x in storm["ruling"])
            print(f"{'':>8} every race's last outcome: {races}; rulings: {rulings}")
        flood = await bench_flood(port, args.flood[0], args.flood[1])
        print(
            f"\n1c. flood: {args.flood[0]} players x {args.flood[1]} buzzes at 50/s each: "
            f"moderator's rulings p50 {flood['moderator_wait_p50']:.3f} s, "
            f"max {flood['moderator_wait_max']:.3f} s; "
            f"{flood['rate_limited']:.0f} messages rate-limited "
            f"({flood['sent']:.0f} buzzes sent), "
            f"{flood['answered']:.0f} answered; {flood['closed']:.0f} connections closed"
        )
        if args.only_storms:
            return
        print(
            f"\n2. reveal fan-out: {args.fanout_clients} screen-mode clients at 4 words/s "
            f"(in {args.fanout_procs} client processes)"
        )
        drops = lag_drops(folder)
        arena, cpu, settled = await bench_fanout(
            port, proc.pid, args.fanout_clients, args.fanout_seconds, args.fanout_procs
        )
        arena_closed, drops = list(CLOSED), lag_drops(folder) - drops
        size = round(statistics.mean(arena["sizes"]))
        raw = await bench_fanout_raw(
            args.fanout_clients, args.fanout_seconds, args.fanout_procs, size
        )
        print(
            f"   (the client processes took {settled:.1f} s to read the join messages)\n"
            f"   word states delivered: {len(arena['read'])} (mean {size} bytes); "
            f"server CPU {cpu * 100:.0f}% of one core\n"
            f"   lateness (ms)            {'arena p50':>10} {'arena p99':>10} "
            f"{'raw p50':>9} {'raw p99':>9}"
        )
        for key, label in (
            ("arrival", "arrival at the socket"),
            ("read", "read by the client"),
        ):
            a, r = arena[key], raw[key]
            print(
                f"   {label:<24} {statistics.median(a) * 1e3:>10.1f} {pct(a, 99) * 1e3:>10.1f}"
                f" {statistics.median(r) * 1e3:>9.1f} {pct(r, 99) * 1e3:>9.1f}"
            )
        if said := closes_said(arena_closed, drops):
            print(f"   {said}")
    finally:
        proc.terminate()
        proc.wait(10)


async def main() -> None:
    parser = argparse.ArgumentParser(description="GRACE Arena server benchmarks")
    parser.add_argument("--clients", type=int, nargs="*", default=[10, 100, 500])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="section 1 this many times in a row per number of clients (a new match, new"
        " players and a new raw server each), with the median over runs of each ratio",
    )
    parser.add_argument("--storm", type=int, nargs="*", default=[300, 500], help="racers")
    parser.add_argument("--storm-rounds", type=int, default=5, help="races per storm size")
    parser.add_argument("--flood", type=int, nargs=2, default=[50, 100], help="players, buzzes")
    parser.add_argument("--fanout-clients", type=int, default=500)
    parser.add_argument("--fanout-seconds", type=float, default=15.0)
    parser.add_argument("--fanout-procs", type=int, default=2, help="client processes")
    parser.add_argument("--commits", type=int, default=300, help="buzzes per commit run")
    parser.add_argument("--commit-runs", type=int, default=5, help="commit runs per backend")
    parser.add_argument(
        "--postgres",
        default=os.environ.get(POSTGRES_ENV),
        help=f"a PostgreSQL server for section 3 (default: ${POSTGRES_ENV}), as the tests take"
        " it: a role that may create a database, which the run makes and drops",
    )
    parser.add_argument("--only-commits", action="store_true", help="section 3 alone")
    parser.add_argument("--only-lockout", action="store_true", help="section 1 alone")
    parser.add_argument(
        "--only-storms", action="store_true", help="sections 1b and 1c alone (storms, flood)"
    )
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.only_commits:
            await bench_live(args, folder)
        if not (args.only_storms or args.only_lockout):
            bench_commits(folder, args.commits, args.commit_runs, args.postgres)


if __name__ == "__main__":
    asyncio.run(main())
