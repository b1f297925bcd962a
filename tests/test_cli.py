"""The command line, run as a user runs it."""

from __future__ import annotations

import shlex
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


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["db"],
        ["packet"],
        ["demo"],
        ["db", "upgrade"],
        ["judge"],
        ["event"],
        ["event", "create"],
        ["event", "schedule"],
        ["event", "show"],
        ["event", "standings"],
        ["serve"],
        ["moderate"],
        ["export"],
    ],
)
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
    # answer lines shown with their marks as styles, endings in words, next steps as commands
    assert "<b>" not in out.stdout and "correct_answer" not in out.stdout
    shown = shlex.quote(redacted(db_url))  # a hidden password's *** is quoted for the shell
    assert f"db matches --db {shown}" in out.stdout
    assert f"analyze --report report --db {shown}" in out.stdout
    store = MatchStore(make_engine(db_url))
    (match,) = store.matches()
    assert match.ended_at is not None
    replayed = store.open(match.id)
    assert replayed.match.phase == "ended"
    assert len(replayed.match.game.played) == 3
    listed = runner.invoke(app, ["db", "matches", "--db", db_url])
    assert "Demo match" in listed.output


def test_judge_prints_the_directive_and_why():
    result = runner.invoke(app, ["judge", "Margaret Eleanor Atwood", "Atwood"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "accept"
    assert lines[1].startswith("why: a person's surname")
    assert "form: Margaret Eleanor Atwood" in lines
    assert "similarity: 1.00" in lines


def test_judge_prints_a_directed_prompt_and_a_reject():
    line = '<b>Battle of Hastings</b> [prompt on Hastings by asking "which battle?"]'
    prompt = runner.invoke(app, ["judge", line, "hastings"])
    assert prompt.output.splitlines()[:2] == [
        'prompt (ask: "which battle?")',
        "why: is the form 'Hastings' (prompt clause)",
    ]
    reject = runner.invoke(app, ["judge", line, "Stamford Bridge"])
    assert reject.output.splitlines()[:2] == ["reject", "why: matches no form of the line"]


def test_judge_lists_the_forms_it_reads():
    result = runner.invoke(
        app, ["judge", "Atlanta, Georgia [do not accept Georgia]", "Georgia", "--forms"]
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.splitlines()[0] == "reject"
    assert "  Atlanta  <- 'Georgia' after a comma qualifies it (from 'Atlanta, Georgia')" in out
    assert "reject forms:\n  Georgia  <- reject clause" in out
    assert "underlining: none (the looser conventions apply)" in out


def test_judge_refuses_a_strictness_that_is_not_positive():
    result = runner.invoke(app, ["judge", "<b>Iraq</b>", "Iran", "--strictness", "0"])
    assert result.exit_code == 2
    assert "must be > 0" in result.output


def test_commands_printed_for_the_user_run_from_where_they_are(tmp_path):
    from grace_arena.resources import command_prefix

    bin_dir = tmp_path / "project" / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "grace-arena"
    script.write_text("#!/bin/sh\n")
    # not on the PATH: by its path from where the user is, as the README writes it
    nowhere = lambda name: None  # noqa: E731
    project = tmp_path / "project"
    assert command_prefix(cwd=project, bin_dir=bin_dir, which=nowhere) == ".venv/bin/grace-arena"
    assert command_prefix(cwd=tmp_path / "elsewhere", bin_dir=bin_dir, which=nowhere) == str(script)
    # on the PATH (an activated environment, pipx): the bare name
    found = lambda name: str(script)  # noqa: E731
    assert command_prefix(cwd=project, bin_dir=bin_dir, which=found) == "grace-arena"
    # another grace-arena first on the PATH: this one, by its path
    other = lambda name: "/usr/bin/grace-arena"  # noqa: E731
    assert command_prefix(cwd=project, bin_dir=bin_dir, which=other) == ".venv/bin/grace-arena"
    # a folder name with a space is quoted for the shell
    spaced = tmp_path / "my project" / "bin"
    spaced.mkdir(parents=True)
    (spaced / "grace-arena").write_text("#!/bin/sh\n")
    assert (
        command_prefix(cwd=tmp_path, bin_dir=spaced, which=nowhere)
        == "'my project/bin/grace-arena'"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["analyze"],
        ["export", "--format", "csv", "--out", "out.csv"],
        ["db", "matches"],
        ["db", "events"],
        ["event", "show", "club"],
        ["event", "standings", "club"],
        ["event", "schedule", "club", "--packet", "questions/sample_packet.yaml"],
        ["model", "show", "tfidf", "--packet", "questions/sample_packet.yaml"],
        ["model", "threshold", "tfidf", "--packet", "questions/sample_packet.yaml"],
        ["model", "calibrate", "tfidf"],
    ],
)
def test_commands_that_only_read_refuse_a_record_that_is_not_there(args, tmp_path, monkeypatch):
    """A mistyped --db (or the README's file before the demo wrote it) is an error that says
    where the default record is, not an empty record made on the spot and reported on."""
    monkeypatch.setenv("GRACE_ARENA_DB", f"sqlite:///{tmp_path / 'default.db'}")
    missing = tmp_path / "missing.db"
    result = CliRunner().invoke(app, [*args, "--db", f"sqlite:///{missing}"])
    assert result.exit_code == 1, result.output
    assert f"no record at {missing}" in result.output
    assert f"without --db, commands use sqlite:///{tmp_path / 'default.db'}" in result.output
    assert not missing.exists()


def test_event_create_names_the_record_in_its_next_command(tmp_path):
    url = f"sqlite:///{tmp_path / 'club.db'}"
    result = CliRunner().invoke(
        app, ["event", "create", "club", "--team", "Red", "--team", "Blue", "--db", url]
    )
    assert result.exit_code == 0, result.output
    (hint,) = [line for line in result.output.splitlines() if line.startswith("next:")]
    assert hint.endswith(f"--db {url}") and "event schedule club" in hint


def test_serve_says_so_when_its_port_is_taken():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["serve", "--host", "127.0.0.1", "--port", str(port)])
    assert result.exit_code == 1
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in result.output
    assert "--port" in result.output


def test_serve_refuses_a_model_whose_team_name_is_not_well_formed(tmp_path, monkeypatch):
    """``--model`` names the first match's model team ("Model (MODEL)")."""
    import grace_arena.server.app

    def run(*args, **kwargs):
        raise AssertionError("the server started")

    monkeypatch.setattr(grace_arena.server.app, "run", run)
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    result = runner.invoke(
        app, ["serve", "--host", "127.0.0.1", "--port", "0", "--model", "\u202etfidf", "--db", url]
    )
    assert result.exit_code == 2, result.output
    output = " ".join(result.output.replace("│", " ").split())
    assert "--model" in output and "a bidirectional control (U+202E)" in output
