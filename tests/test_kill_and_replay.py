"""A real ``kill -9`` of a process applying commands loses no committed event or buzz."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kill_child import digest

from grace_arena.core.match import Match
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore

HERE = Path(__file__).resolve().parent


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seed", "kill_after"),
    # seeds from 10 play tossup–bonus cycles: the kill may come in a bonus
    # from 20 with officiating: timeouts, conferral clocks, pauses, replacements
    [(1, 40), (2, 150), (3, 333), (11, 120), (12, 260), (21, 300)],
)
def test_kill_minus_nine_then_replay(record_url, seed, kill_after):
    url = record_url
    upgrade(url)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    child = subprocess.Popen(
        [sys.executable, str(HERE / "kill_child.py"), url, str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    printed: list[dict] = []
    assert child.stdout is not None
    for line in child.stdout:
        printed.append(json.loads(line))
        if len(printed) >= kill_after:
            os.kill(child.pid, signal.SIGKILL)  # mid-loop: it keeps committing until it dies
            break
    rest, err = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL, err
    printed += [json.loads(line) for line in rest.splitlines() if line.strip()]
    assert len(printed) >= kill_after

    store = MatchStore(make_engine(url))
    match_id = printed[0]["match"]
    events = store.events(match_id)
    stored_seq = events[-1].seq
    last = printed[-1]
    # every event reported as committed is in the record (the child may have committed one
    # more command's events after its last line, but never fewer)
    assert stored_seq >= last["seq"]
    assert [e.seq for e in events] == list(range(1, stored_seq + 1))
    # every buzz reported is stored
    stored_buzzes = {b.buzz_id for b in store.buzzes(match_id)}
    reported = {b for line in printed for b in line["buzzes"]}
    assert reported <= stored_buzzes
    assert reported, "the run should have had buzzes"
    # the state rebuilt from the record equals the last state the child reported
    upto = [e for e in events if e.seq <= last["seq"]]
    assert digest(Match.replay(upto).state) == last["digest"]
    # and the whole record replays and the match goes on
    reopened = store.open(match_id)
    assert reopened.seq == stored_seq
    if seed >= 10:
        kinds = [e.type for e in events]
        assert "bonus_part_ruled" in kinds, "the run should have had bonus parts"
    if seed >= 20:
        assert {"timeout_called", "bonus_part_read"} <= set(kinds)
        assert any(e.type == "tossup_started" and e.replaces for e in events)
