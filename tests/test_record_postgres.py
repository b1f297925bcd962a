"""What only a record on a PostgreSQL server meets: several processes on one record at once.

The record's other tests run on PostgreSQL as well as SQLite (see backends.py).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time

import pytest
from live import free_port
from sqlalchemy.engine import make_url
from test_server_restart import start_server
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.record.db import at_head

UPGRADE = "import sys; from grace_arena.record.db import upgrade; upgrade(sys.argv[1])"


@pytest.mark.slow
def test_processes_starting_together_on_a_new_record_all_find_it_at_head(postgres_url):
    """Every command migrates the record first: servers started at once on an empty database
    must not each create the tables."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", UPGRADE, postgres_url], stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 4, "\n".join(errors)
    assert at_head(postgres_url)


def test_the_records_password_is_neither_printed_nor_written_in_a_report(
    postgres_url, tmp_path, sample
):
    """What a command prints (a terminal, a projector, a log) and what a report keeps show
    the record's URL without its password."""
    secret = f":{make_url(postgres_url).password}@"
    grace = tmp_path / "grace.json"
    grace.write_text(
        json.dumps(
            [
                {
                    "tossup_index": 1,
                    "category": "Literature",
                    "question": sample.tossups[0].text,
                    "answer": sample.tossups[0].answer,
                    "question_buzzpoints": sample.tossups[0].text,
                    "position": [{"3": "[H1, +]"}],
                }
            ]
        )
    )
    runner = CliRunner()
    said = []
    for args in (
        ["db", "upgrade"],
        ["db", "matches"],
        ["db", "events"],
        ["import", "grace", str(grace), "--event", "night"],
        ["precompute", "--packet", str(grace)],
        ["analyze", "--json", str(tmp_path / "a.json"), "--report", str(tmp_path / "report"),
         "--resamples", "0"],
    ):  # fmt: skip
        result = runner.invoke(app, [*args, "--db", postgres_url])
        assert result.exit_code == 0, result.output
        said.append(result.output)
    server = start_server(postgres_url, free_port())
    try:
        assert server.stdout is not None
        printed = itertools.takewhile(lambda line: "listening on" not in line, server.stdout)
        said.append("".join(printed))
    finally:
        server.kill()
        server.wait(10)
    written = [p.read_text() for p in tmp_path.rglob("*") if p.suffix in (".json", ".md", ".html")]
    assert said and written
    for text in said + written:
        assert secret not in text
    assert make_url(postgres_url).render_as_string(hide_password=True) in said[0]


def test_a_pooled_connection_is_pinged_only_after_idling_and_a_dead_one_is_replaced(
    postgres_url, monkeypatch
):
    """The pool pings a connection before handing it out when it idled over
    ``PING_AFTER_IDLE`` or the server said something on it meanwhile (one the server ended,
    as a restart does, is found dead and replaced, and the statement runs), and not one used
    just now that the server said nothing on (a round trip saved in every commit of a busy
    server)."""
    from sqlalchemy import text

    from grace_arena.record import db

    engine, killer = db.make_engine(postgres_url), db.make_engine(postgres_url)
    pings: list[object] = []
    ping = engine.dialect.do_ping
    monkeypatch.setattr(engine.dialect, "do_ping", lambda conn: pings.append(conn) or ping(conn))

    def backend() -> int:
        with engine.connect() as conn:
            return conn.execute(text("SELECT pg_backend_pid()")).scalar_one()

    def cut(pid: int) -> None:
        with killer.connect() as conn:
            assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar()
        time.sleep(0.1)  # its last message on its way

    try:
        first = backend()
        assert [backend() for _ in range(5)] == [first] * 5 and pings == []  # in use: no ping
        cut(first)  # ended while in use (a restart): pinged, replaced, the statement runs
        second = backend()
        assert second != first and len(pings) == 1
        assert [backend() for _ in range(3)] == [second] * 3 and len(pings) == 1

        monkeypatch.setattr(db, "PING_AFTER_IDLE", 0.3)
        time.sleep(0.4)
        assert backend() == second and len(pings) == 2  # idle: pinged, alive, kept
        time.sleep(0.4)
        cut(second)  # ended while idle: the ping finds it dead, a new one serves
        third = backend()
        assert third not in (first, second) and len(pings) == 3
    finally:
        engine.dispose()
        killer.dispose()
