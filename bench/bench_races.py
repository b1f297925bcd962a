"""What a phone that holds its pongs back gains in compensated races, with and without a stall
of the server's loop, against a real server.

    .venv/bin/python bench/bench_races.py [--races 15] [--gap 0.02] [--stall 0.12]

A server on a loopback port (in this process, on a thread of its own), a compensated match, a
moderator, an honest phone that answers every ping at once, and a cheat that answers every ping
0.5 s late, stamped so that its samples agree (its round trips look 0.5 s long), and claims
each press 0.15 s before it buzzes (more than the server's cap, within its round trip). All
read their sockets all the time, as browsers do. In every race the honest phone presses and
the cheat ``--gap`` later; the moderator then rules the winner correct and starts the next
tossup. With a stall, the server's loop is blocked from just before the honest press until
``--stall`` after it (a broadcast to hundreds, a garbage collection): both buzzes wait for it.

The cheat's **gain** in a race is how much earlier than the honest press the server placed
the cheat's, beyond the truth (this process's clock is the server's):
``(cheat pressed − honest pressed) − (cheat estimated − honest estimated)``. A gain above the
gap wins the cheat a race it lost. Prints, with and without the stall: the races, the cheat's
wins, the median and the largest gain, each phone's median credit, the honest buzz's median
read delay and how many honest presses fell back to arrival time. The machines are shared
and noisy: compare the medians from one run.

Run it against another checkout (the rule before, say) with ``PYTHONPATH=that/checkout``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from live import LiveServer, clients, two_teams  # noqa: E402
from race_phones import Phone, moderator_phone, open_floor, stalled, wait_for_clocks  # noqa: E402

from grace_arena.core.packet import SAMPLE_PACKET_PATH  # noqa: E402
from grace_arena.server.app import Settings  # noqa: E402

#: The cheats: a phone that holds its pongs back (round trips that look 0.5 s long) and claims
#: its presses 0.15 s early, and one that answers its pongs at once and claims 30 ms.
CHEATS = {"holds pongs 0.5 s": (0.5, 0.15), "lies 30 ms": (0.0, 0.03)}
#: The sample packet's tossups, less one: the races one match can hold.
RACES_PER_MATCH = 25


@dataclass
class Race:
    gain: float  # seconds
    cheat_won: bool
    honest_credit: float
    cheat_credit: float
    read_delay: float | None  # the honest buzz's (None: not recorded by this server)
    honest_fallback: bool


def _decided(server: LiveServer, seen: int) -> tuple[dict, int]:
    """The buzzes of the race after the first ``seen`` buzz events, by team."""
    deadline = time.time() + 15
    while time.time() < deadline:
        events = server.arena.store.events(server.room().rm.id)
        buzzes = [e for e in events if e.type in ("buzz_accepted", "buzz_refused")]
        if len(buzzes) >= seen + 2:
            return {e.team: e for e in buzzes[seen : seen + 2]}, seen + 2
        time.sleep(0.02)
    raise TimeoutError("the race was not decided")


def races(count: int, gap: float, stall: float | None, cheat_kind: str, folder: Path) -> list[Race]:
    hold, claim = CHEATS[cheat_kind]
    name = f"races-{len(list(folder.iterdir()))}.db"
    settings = Settings(
        db_url=f"sqlite:///{folder / name}", packets=[SAMPLE_PACKET_PATH],
        secret="x", first_match=two_teams(compensated=True), race_window=0.5,
    )  # fmt: skip
    done: list[Race] = []
    with LiveServer(settings) as server:
        code = server.room().join_code
        mod = moderator_phone(server).listen()
        honest = Phone(server.ws_url).join(code, "red", "Honest").listen()
        cheat = Phone(server.ws_url, hold=hold).join(code, "blue", "Cheat").listen()
        with clients(mod, honest, cheat):
            wait_for_clocks(server, 3)
            seen = 0
            for _ in range(count):
                open_floor(mod, words=2)
                time.sleep(0.05)
                if stall is None:
                    honest_at = honest.press()
                    time.sleep(gap)
                    cheat_at = cheat.press(earlier=claim)
                else:
                    with stalled(server):
                        honest_at = honest.press()
                        time.sleep(gap)
                        cheat_at = cheat.press(earlier=claim)
                        time.sleep(max(0.0, honest_at + stall - time.time()))
                by_team, seen = _decided(server, seen)
                h, c = by_team["red"].timing, by_team["blue"].timing
                gain = (cheat_at - honest_at) - (c.estimated_press - h.estimated_press)
                done.append(
                    Race(
                        gain=gain,
                        cheat_won=by_team["blue"].type == "buzz_accepted",
                        honest_credit=h.credit or 0.0,
                        cheat_credit=c.credit or 0.0,
                        read_delay=getattr(h, "read_delay", None),
                        honest_fallback=h.arbitration == "arrival_fallback",
                    )
                )
                mark = len(mod.received)
                mod.send(type="rule", ruling="correct")
                mod.seen(
                    lambda m: m["type"] == "event" and m["event"]["type"] == "tossup_ended",
                    since=mark,
                )
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--races", type=int, default=15, help="races with and without a stall")
    parser.add_argument("--gap", type=float, default=0.02, help="the cheat presses this later")
    parser.add_argument("--stall", type=float, default=0.12, help="the loop's stall (seconds)")
    args = parser.parse_args()
    if not 1 <= args.races <= RACES_PER_MATCH:
        parser.error(f"--races must be between 1 and {RACES_PER_MATCH} (one match's tossups)")
    import grace_arena

    print(f"grace_arena from {Path(grace_arena.__file__).parent}")
    print(
        f"{args.races} races each; the honest phone presses first, the cheat "
        f"{args.gap * 1000:.0f} ms later"
    )
    header = (
        f"{'cheat':<19}{'server loop':<16}{'races':>6}{'cheat won':>10}{'gain ms':>9}{'max ms':>8}"
        f"{'honest credit ms':>17}{'cheat credit ms':>16}{'read delay ms':>14}{'fallbacks':>10}"
    )
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        for cheat, stall in [(c, s) for c in CHEATS for s in (None, args.stall)]:
            run = races(args.races, args.gap, stall, cheat, Path(tmp))
            delays = [r.read_delay for r in run if r.read_delay is not None]
            label = "free" if stall is None else f"stalled {stall * 1000:.0f} ms"
            print(
                f"{cheat:<19}{label:<16}{len(run):>6}{sum(r.cheat_won for r in run):>10}"
                f"{statistics.median(r.gain for r in run) * 1000:>9.1f}"
                f"{max(r.gain for r in run) * 1000:>8.1f}"
                f"{statistics.median(r.honest_credit for r in run) * 1000:>17.1f}"
                f"{statistics.median(r.cheat_credit for r in run) * 1000:>16.1f}"
                + (f"{statistics.median(delays) * 1000:>14.1f}" if delays else f"{'-':>14}")
                + f"{sum(r.honest_fallback for r in run):>10}",
                flush=True,
            )
    print(
        "gain: how much earlier than the honest press the cheat's was placed, beyond the truth "
        f"(a gain above {args.gap * 1000:.0f} ms wins it the race)"
    )


if __name__ == "__main__":
    main()
