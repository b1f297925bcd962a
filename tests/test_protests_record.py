"""Protests and corrections in the record, on SQLite and PostgreSQL: a process killed with
SIGKILL after committing them loses none; the buzz and ruling rows follow the corrections; a
protest resolved on the reopened record holds across another reopening."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from grace_arena.core import protests as filed
from grace_arena.core.commands import ResolveProtest
from grace_arena.core.stats import match_play
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore

HERE = Path(__file__).parent


def test_protests_and_corrections_survive_a_kill_and_are_projected(record_url):
    upgrade(record_url)
    child = subprocess.Popen(
        [sys.executable, str(HERE / "protests_child.py"), record_url],
        stdout=subprocess.PIPE, text=True, cwd=HERE,
        env={**os.environ, "PYTHONPATH": str(HERE)},
    )  # fmt: skip
    try:
        line = child.stdout.readline()
        assert line, "the child died before it played the match"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
        child.stdout.close()
    match_id = json.loads(line)["match"]
    engine = make_engine(record_url)
    store = MatchStore(engine)
    rm = store.open(match_id)
    state = rm.match.state
    # red 10 + 20 (+10 corrected) − 5; blue 10 + 30
    assert state.game.scores == {"red": 35, "blue": 40}
    protests = filed.protests(state)
    assert [(p.team, p.tossup_id, p.part, p.open) for p in protests] == [
        ("red", "t2", None, True), ("blue", "t1", 0, True),
    ]  # fmt: skip
    # the buzz row credits the player the correction names; the ruling amended is kept
    buzzes = {b.buzz_id: b for b in store.buzzes(match_id)}
    assert (buzzes[1].player_id, buzzes[1].ruling, buzzes[1].points) == ("red-2", "correct", 10)
    rulings = store.rulings(match_id)
    assert [(r.buzz_id, r.ruling, r.undone_seq is not None) for r in rulings] == [
        (1, "correct", True), (2, "correct", False), (3, "incorrect", False),
        (1, "correct", False),
    ]  # fmt: skip
    # the TD resolves red's protest on the record: upheld, red's neg becomes a ten
    impact = filed.impact(state, protests[0].seq)
    assert impact.if_upheld == {"red": 50, "blue": 40} and impact.changes_result
    rm.handle(ResolveProtest(protest=protests[0].seq, decision="upheld", by="TD"), now=3000.0)
    rm.handle(ResolveProtest(protest=protests[1].seq, decision="denied", by="TD",
                             reason="the answer was not given"), now=3001.0)  # fmt: skip
    again = MatchStore(make_engine(record_url)).open(match_id)
    assert again.match.state == rm.match.state
    assert again.match.state.game.scores == {"red": 50, "blue": 40}
    assert [p.decision for p in filed.protests(again.match.state)] == ["upheld", "denied"]
    buzz3 = next(b for b in store.buzzes(match_id) if b.buzz_id == 3)
    assert (buzz3.ruling, buzz3.points) == ("correct", 10)
    red = match_play(store.events(match_id), match_id=match_id).result().teams["red"]
    assert (red.points, red.negs, red.correct, red.bonus_points) == (50, 0, 2, 30)
    engine.dispose()
