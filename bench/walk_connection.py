"""The walk of one connection through the server's code: how many times it enters a file, and
how often it comes back to a file it had just left.

A real server (in this process) serves an event; one phone says ``hello`` to a room and
``join``s a team, up to the ``state`` that seats it. Every call and return in the server's
threads (the event loop and the worker threads) during that time is traced; the files of the
project each thread passes through are listed in order (consecutive repeats merged). Printed:
the files entered, the entries, and the returns (``A -> B -> A``) of that walk, per file set:
``grace_arena/server`` with ``record/schedule.py``, and every file of ``grace_arena``.

    .venv/bin/python bench/walk_connection.py
"""

from __future__ import annotations

import dis
import json
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from event_helpers import code_of, event_server, make_event  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

import grace_arena  # noqa: E402

PACKAGE = str(Path(grace_arena.__file__).resolve().parent) + "/"


def main() -> None:
    """Counted: each *fresh* call (not a coroutine resumed after an await: an await chain
    resumes every frame of it, which says nothing of the design) from a function of one file
    into a function of another, both in the file set; and how many of those are calls back
    into the file that called the current one (``A`` calls ``B``, which calls ``A`` again: a
    file that has to come back to the one it was reached from)."""
    tracing = threading.Event()
    calls: list[tuple[str, str]] = []  # (caller file, callee file), in order, all threads
    lock = threading.Lock()
    starts: dict[object, int] = {}  # code -> offset of its first RESUME (3.11+)

    def fresh(frame) -> bool:
        """A new call, not a generator or coroutine resumed where it was suspended."""
        code = frame.f_code
        if not code.co_flags & (0x20 | 0x80 | 0x100 | 0x200):  # generator, coroutine...
            return True
        start = starts.get(code)
        if start is None:
            start = starts[code] = next(
                (i.offset for i in dis.get_instructions(code) if i.opname == "RESUME"), 0
            )
        return frame.f_lasti <= start

    def project(path: str) -> str | None:
        return path[len(PACKAGE) :] if path.startswith(PACKAGE) else None

    def profile(frame, event, _arg):
        if not tracing.is_set() or event != "call":
            return
        if not fresh(frame):
            return
        callee = project(frame.f_code.co_filename)
        caller = frame.f_back
        while caller is not None and project(caller.f_code.co_filename) is None:
            caller = caller.f_back  # through the libraries between two of our files
        if callee is None or caller is None:
            return
        origin = project(caller.f_code.co_filename)
        if origin != callee:
            with lock:
                calls.append((origin, callee))

    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/record.db"
        plan = make_event(url)
        code = code_of(plan, "1")
        threading.setprofile(profile)
        with event_server(url) as server, connect(server.ws_url) as ws:
            tracing.set()
            ws.send(json.dumps({"type": "hello", "role": "player", "join_code": code}))
            while json.loads(ws.recv(timeout=10))["type"] != "welcome":
                pass
            ws.send(json.dumps({"type": "join", "team": "red", "name": "Alice"}))
            while json.loads(ws.recv(timeout=10))["type"] != "state":
                pass
            tracing.clear()
        threading.setprofile(None)

    def report(label: str, keep) -> None:
        kept = [(a, b) for a, b in calls if keep(a) and keep(b)]
        came_from: dict[str, str] = {}
        back = 0
        for a, b in kept:
            if came_from.get(a) == b:
                back += 1
            came_from[b] = a
        entered = Counter(b for _, b in kept)
        print(f"{label}: {len(kept)} entries into {len(entered)} files, {back} calls back into "
              "the file that called the caller")  # fmt: skip
        for name, count in entered.most_common():
            print(f"  {count:4d}  {name}")
        if "--walk" in sys.argv:
            print("  " + ", ".join(f"{a}>{b}" for a, b in kept))

    report(
        "grace_arena/server + record/schedule.py",
        lambda f: f.startswith("server/") or f == "record/schedule.py",
    )
    report("every file of grace_arena", lambda f: True)


if __name__ == "__main__":
    main()
