"""The command line, run as a user runs it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from backends import on_both_backends
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.cli.options import redacted
from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore

runner = CliRunner()


@pytest.mark.parametrize("args", [[], ["db"], ["packet"], ["demo"], ["db", "upgrade"]])
def test_every_command_has_help(args):
    result = runner.invoke(app, [*args, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_db_upgrade_prints_the_record_and_creates_the_schema(db_url):
    result = runner.invoke(app, ["db", "upgrade", "--db", db_url])
    assert result.exit_code == 0, result.output
    assert db_url in result.output
    assert MatchStore(make_engine(db_url)).matches() == []


def test_default_db_comes_from_the_environment(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.setenv("GRACE_ARENA_DB", url)
    result = runner.invoke(app, ["db", "upgrade"])
    assert result.exit_code == 0 and url in result.output


@pytest.mark.slow
@on_both_backends
def test_demo_plays_a_match_into_the_record(db_url):
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from grace_arena.cli import app; app()",
            "demo",
            "--scripted",
            "--db",
            db_url,
            "--wpm",
            "0",
            "--tossups",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "Final scores" in out.stdout and redacted(db_url) in out.stdout
    assert f":{make_url(db_url).password}@" not in out.stdout
    store = MatchStore(make_engine(db_url))
    (match,) = store.matches()
    assert match.ended_at is not None
    replayed = store.open(match.id)
    assert replayed.match.phase == "ended"
    assert len(replayed.match.game.played) == 3
    listed = runner.invoke(app, ["db", "matches", "--db", db_url])
    assert "Demo match" in listed.output
