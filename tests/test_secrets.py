"""Secrets stay off the command line: the server's secret and a moderator's token come from the
environment or a file, are never in the process's arguments (``ps``), and the commands the server
prints carry the token in the environment; the old options still work, with a warning."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from live import free_port
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.server.tokens import Tokens

SECRET = "a-secret-nobody-else-reads"


def _serve(db_url: str, *args: str, env: dict[str, str] | None = None) -> tuple[list[str], str]:
    """``grace-arena serve`` in a process of its own, until it listens: what it printed, and
    its arguments as every user of the machine reads them (``/proc/PID/cmdline``, what ``ps``
    shows). Stopped then (by its pid)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from grace_arena.cli import app; app()", "serve", "--db", db_url,
         "--host", "127.0.0.1", "--port", str(port), "--model", "", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "300", **(env or {})},
    )  # fmt: skip
    lines: list[str] = []
    listening = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("listening on"):
                listening.set()
        listening.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert listening.wait(90), "\n".join(lines)
        assert proc.poll() is None, "\n".join(lines)
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        reader.join(10)
    return lines, cmdline


def _printed(lines: list[str], prefix: str) -> str:
    (line,) = [line for line in lines if line.startswith(prefix)]
    return line[len(prefix) :].strip()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="no /proc")
def test_serve_takes_its_secret_from_a_file_and_never_shows_it(db_url, tmp_path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n", encoding="utf-8")
    secret_file.chmod(0o600)
    lines, cmdline = _serve(db_url, "--secret-file", str(secret_file))
    assert "--secret-file" in cmdline and SECRET not in cmdline
    server_token = Tokens(SECRET).server()
    assert _printed(lines, "server token (for the moderator's set-up):") == server_token
    assert not [line for line in lines if line.startswith("warning:")], lines
    moderator = _printed(lines, "moderator:")
    token = _printed(lines, "moderator token:")
    assert moderator.startswith(f"GRACE_ARENA_TOKEN={token} "), moderator
    assert " moderate --server http://127.0.0.1:" in moderator
    assert moderator.endswith("--match 1") and "--token" not in moderator


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="no /proc")
def test_serve_takes_its_secret_from_the_environment_without_a_warning(db_url) -> None:
    lines, cmdline = _serve(db_url, env={"GRACE_ARENA_SECRET": SECRET})
    assert SECRET not in cmdline
    assert _printed(lines, "server token (for the moderator's set-up):") == Tokens(SECRET).server()
    assert not [line for line in lines if line.startswith("warning:")], lines


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="no /proc")
def test_serve_still_takes_secret_on_the_command_line_and_warns(db_url) -> None:
    lines, cmdline = _serve(db_url, "--secret", SECRET)
    assert SECRET in cmdline  # what the warning is about
    assert _printed(lines, "server token (for the moderator's set-up):") == Tokens(SECRET).server()
    warning = _printed(lines, "warning:")
    assert "--secret on the command line can be read by every user" in warning
    assert "GRACE_ARENA_SECRET" in warning and "--secret-file" in warning


@pytest.fixture
def tui(monkeypatch) -> list[dict]:
    """``moderate`` up to its screen: what the screen would be made with."""
    import moderator_tui

    made: list[dict] = []

    class Screen:
        def run(self) -> None:
            pass

    def make_tui(base: str, **kwargs) -> Screen:
        made.append({"base": base, **kwargs})
        return Screen()

    monkeypatch.setattr(moderator_tui, "make_tui", make_tui)
    return made


def test_moderate_takes_its_token_from_a_file(tui, tmp_path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("server-token-123\n", encoding="utf-8")
    result = CliRunner().invoke(
        app,
        ["moderate", "--server", "http://127.0.0.1:9", "--token-file", str(token_file)],
        env={"GRACE_ARENA_TOKEN": ""},
    )
    assert result.exit_code == 0, result.output
    assert tui[0]["token"] == "server-token-123"
    assert "warning" not in result.output


def test_moderate_takes_its_token_from_the_environment_without_a_warning(tui) -> None:
    result = CliRunner().invoke(
        app,
        ["moderate", "--server", "http://127.0.0.1:9"],
        env={"GRACE_ARENA_TOKEN": "server-token-123"},
    )
    assert result.exit_code == 0, result.output
    assert tui[0]["token"] == "server-token-123"
    assert "warning" not in result.output


def test_moderate_still_takes_token_on_the_command_line_and_warns(tui) -> None:
    result = CliRunner().invoke(
        app,
        ["moderate", "--server", "http://127.0.0.1:9", "--token", "server-token-123"],
        env={"GRACE_ARENA_TOKEN": ""},
    )
    assert result.exit_code == 0, result.output
    assert tui[0]["token"] == "server-token-123"
    assert "warning: --token on the command line can be read by every user" in result.output


def test_a_secret_file_that_is_empty_or_missing_is_a_usage_error(tui, tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n", encoding="utf-8")
    for path, says in ((empty, "is empty"), (tmp_path / "missing", "No such file")):
        result = CliRunner().invoke(
            app,
            ["moderate", "--token-file", str(path)],
            env={"GRACE_ARENA_TOKEN": ""},
        )
        assert result.exit_code == 2, result.output
        assert says in result.output
    assert not tui


def test_the_help_says_secret_options_are_visible_to_other_users() -> None:
    for command, option in (("serve", "--secret"), ("moderate", "--token"), ("survey", "--secret")):
        result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "300"})
        text = " ".join(result.output.replace("│", " ").split())
        assert "Visible to every user of this machine (ps)" in text, command
        assert f"{option}-file" in text, command
