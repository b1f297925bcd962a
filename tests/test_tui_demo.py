"""``grace-arena demo`` in a real terminal (tmux), driven as a person would: it starts on the
set-up screen, creates a match, shows the join URL, and quits cleanly with its quit key.

Without tmux this skips, except in CI (``CI`` set), where ``.ci/run`` installs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from live import free_port

from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore

TMUX = shutil.which("tmux")
if TMUX is None and not os.environ.get("CI"):
    pytest.skip(
        "tmux is missing (apt-get install tmux); these tests run in CI, where .ci/run installs it",
        allow_module_level=True,
    )

pytestmark = pytest.mark.slow
GRACE_ARENA = Path(sys.executable).with_name("grace-arena")


class Terminal:
    """One tmux session on a private tmux server (its own socket): send keys, read the screen."""

    def __init__(self, command: list[str], size: tuple[int, int]) -> None:
        assert TMUX is not None, "tmux is needed (CI installs it)"
        self.socket = f"grace-test-{uuid.uuid4().hex[:8]}"
        self.exit_file = Path(f"/tmp/{self.socket}.exit")
        shell = " ".join(_quote(c) for c in command)
        script = f"{shell}; echo $? > {self.exit_file}; sleep 60"
        self._tmux("new-session", "-d", "-s", "t", "-x", str(size[0]), "-y", str(size[1]), script)

    def _tmux(self, *args: str) -> str:
        # The terminal's size is tmux's: no COLUMNS/LINES from the test process (set under
        # pytest), which the program would believe instead.
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        out = subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=10, env=env
        )
        return out.stdout

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t")

    def wait_for(self, check: Callable[[str], object], what: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if check(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen:\n{text}")
            time.sleep(0.2)

    def exit_code(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while not self.exit_file.exists():
            if time.monotonic() > deadline:
                raise AssertionError(f"the program did not exit; the screen:\n{self.screen()}")
            time.sleep(0.1)
        return int(self.exit_file.read_text().strip())

    def close(self) -> None:
        self._tmux("kill-server")
        self.exit_file.unlink(missing_ok=True)


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


@pytest.fixture
def terminal_factory() -> Iterator[Callable[..., Terminal]]:
    made: list[Terminal] = []

    def make(command: list[str], size: tuple[int, int] = (100, 30)) -> Terminal:
        term = Terminal(command, size)
        made.append(term)
        return term

    yield make
    for term in made:
        term.close()


def test_demo_starts_shows_the_join_url_and_quits_cleanly(terminal_factory, db_url, tmp_path):
    port = free_port()
    term = terminal_factory(
        [
            str(GRACE_ARENA),
            "demo",
            "--db",
            db_url,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ]
    )
    term.wait_for(lambda s: "set up a match" in s and "26 of 26" in s, "the set-up screen", 60)
    # The offline model player is one of the teams; create the match with its defaults.
    term.keys("C-s")
    lobby = term.wait_for(lambda s: "code=" in s, "the join URL", 60)
    match = re.search(rf"http://127\.0\.0\.1:{port}/\?code=([A-Z0-9]{{6}})", lobby)
    assert match, lobby
    assert "█" in lobby and "▀" in lobby  # the QR code
    assert "Model (tfidf)" in lobby and "nobody yet" in lobby
    term.keys("s")
    term.wait_for(lambda s: "Ready — press n for the first tossup" in s, "the live screen")
    term.keys("q")
    term.wait_for(lambda s: "y yes" in s.lower(), "the quit question")
    term.keys("y")
    assert term.exit_code() == 0
    after = term.screen()
    # a long temporary path wraps at the terminal's edge: read the lines joined
    joined = after.replace("\n", "")
    assert "Traceback" not in after and f"The record is in {db_url}" in joined
    assert f"analyze --report report --db {db_url}" in joined
    assert "1 unfinished match carries on when you run the demo again" in joined
    store = MatchStore(make_engine(db_url))
    (row,) = store.matches()
    assert row.join_code == match.group(1) and row.ended_at is None  # the match goes on
