"""``grace-arena protest``: the TD lists the open protests with what upholding each would do,
resolves them, and corrects a ruling of any cycle, against the record; a match another process
serves is refused in one line and left as it was."""

from __future__ import annotations

from protests_child import play
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core import protests
from grace_arena.record import lease
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore

runner = CliRunner()


def grace(*args: str):
    return runner.invoke(app, ["protest", *args])


def test_the_td_lists_resolves_and_corrects_from_the_command_line(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'club.db'}"
    upgrade(url)
    engine = make_engine(url)
    store = MatchStore(engine)
    match_id = play(store)
    m = str(match_id)
    listed = grace("list", "--db", url)
    assert listed.exit_code == 0, listed.output
    lines = [line for line in listed.output.splitlines() if line.startswith("match")]
    assert len(lines) == 2
    assert 'by Red on tossup 3 (t2) (answer given: "Carver"): on the line. Open; upheld, the ' \
           "score would be Red 50, Blue 40 (now Red 35, Blue 40): it would change the result " \
           "(Red ahead, not Blue ahead)." in lines[0]  # fmt: skip
    red, blue = (p.seq for p in protests.protests(store.open(match_id).match.state))
    missing = grace("resolve", m, str(red), "--db", url)
    assert missing.exit_code == 1 and "say --upheld or --denied" in missing.output
    done = grace("resolve", m, str(red), "--upheld", "--by", "Dana", "--reason", "on the line",
                 "--db", url)  # fmt: skip
    assert done.exit_code == 0, done.output
    assert ("Upheld by Dana: on the line; the score went from Red 35, Blue 40 to Red 50, Blue 40: "
            "it changed the result (Red ahead, not Blue ahead)." in done.output)  # fmt: skip
    assert "score: Red 35, Blue 40 → Red 50, Blue 40" in done.output
    again = grace("resolve", m, str(red), "--denied", "--db", url)
    assert again.exit_code == 1 and "already resolved: upheld by Dana" in again.output
    assert grace("resolve", m, str(blue), "--denied", "--db", url).exit_code == 0
    assert "no open protests" in grace("list", "--db", url).output
    assert len(grace("list", "--all", "--match", m, "--db", url).output.splitlines()) == 3
    # the cycles with their numbers, then a correction by number
    cycles = grace("cycles", m, "--db", url).output
    assert "tossup 3 (t2)" in cycles and "Red-1 (Red) correct +10 (corrects" in cycles
    seq = next(r.seq for r in protests.cycles(store.open(match_id).match.state)[1].rulings
               if r.part == 2)  # fmt: skip
    fixed = grace("correct", m, str(seq), "--ruling", "incorrect", "--reason", "misheard",
                  "--db", url)  # fmt: skip
    assert fixed.exit_code == 0, fixed.output
    assert "score: Red 50, Blue 40 → Red 50, Blue 30" in fixed.output
    bad = grace("correct", m, str(seq), "--ruling", "prompt", "--db", url)
    assert bad.exit_code == 1 and "correct or incorrect" in bad.output
    assert store.open(match_id).match.scores == {"red": 50, "blue": 30}
    # a match another process serves is not written
    other = lease.Holder.this_process("http://elsewhere:8000")
    lease.acquire(engine, match_id, other)
    seq_before = store.open(match_id).seq
    held = grace("correct", m, str(seq), "--ruling", "correct", "--db", url)
    assert held.exit_code == 1 and "is served by process" in held.output
    assert store.open(match_id).seq == seq_before
    engine.dispose()
