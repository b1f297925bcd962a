"""Protests and corrections reach every export: the hand-worked event of test_stats, its first
game amended after the fact, read back from QBJ (its buzzes and notes), SQBS, the standings
and the stats report, all agreeing with the numbers worked by hand below.

Round 1, Red 75 – Blue 20 as played (test_stats). Then, the match over:
  a correction two cycles back: T1's power was Ada's, not Ann's (points unchanged);
  a correction of T2's bonus part 3, Red ✗ → ✓: Red +10;
  Blue's protest of T3 (Bo's neg at word 10, before the power mark at 64), upheld: −5 → 15,
    Blue +20;
  Red's protest of T4's bonus part 2 (its bounceback ✗), denied.
  Red 75 + 10 = 85, Blue 20 + 20 = 40.
Round 2 is as played: Red 20, Green 105. Red 105 in all, Blue 40.
"""

from __future__ import annotations

import json

import jsonschema
from backends import on_both_backends
from test_export import QBJ_SCHEMA
from test_sqbs import export as export_sqbs
from test_stats import played_event, plays_of

from grace_arena.core import protests
from grace_arena.core.commands import CorrectRuling, FileProtest, ResolveProtest
from grace_arena.core.events import Ruling
from grace_arena.core.stats import event_stats
from grace_arena.io.exports import export
from grace_arena.io.stats_report import html_stats
from grace_arena.record.schedule import event_standings
from grace_arena.record.store import MatchStore


def amend_round_one(store: MatchStore, match_id: int) -> None:
    rm = store.open(match_id)
    now = iter(range(5000, 5100))

    def seq(cycle: int, team: str, part: int | None = None) -> int:
        rulings = protests.cycles(rm.match.state)[cycle - 1].rulings
        return next(r.seq for r in rulings if r.team == team and r.part == part and
                    not r.bounceback)  # fmt: skip

    rm.handle(CorrectRuling(seq=seq(1, "red"), player="ada", reason="Ada buzzed"), now=next(now))
    rm.handle(CorrectRuling(seq=seq(2, "red", 2), ruling=Ruling.CORRECT,
                            reason="Iowa State was right"), now=next(now))  # fmt: skip
    blue = rm.handle(FileProtest(team="blue", tossup="3", answer="Walden",
                                 reason="the answer line accepts it"), now=next(now))  # fmt: skip
    red = rm.handle(FileProtest(team="red", tossup="4", part=2, answer="Pip",
                                reason="a pronunciation"), now=next(now))  # fmt: skip
    rm.handle(ResolveProtest(protest=blue[0].seq, decision="upheld", by="Dana (TD)",
                             reason="Walden is on the line"), now=next(now))  # fmt: skip
    rm.handle(ResolveProtest(protest=red[0].seq, decision="denied", by="Dana (TD)",
                             reason="not the answer"), now=next(now))  # fmt: skip
    assert rm.match.scores == {"red": 85, "blue": 40}


@on_both_backends
def test_amendments_reach_qbj_sqbs_the_standings_and_the_stats_report(db_url, tmp_path):
    plan, engine = played_event(db_url)
    try:
        store = MatchStore(engine)
        first = next(g for g in plan.games if g.teams == ("red", "blue"))
        amend_round_one(store, first.match_id)
        path = tmp_path / "m.qbj"
        export(engine, "qbj", path, [first.match_id])
        plays = plays_of(engine, plan)
        _, rows = event_standings(engine, "stats")
    finally:
        engine.dispose()
    qbj = json.loads(path.read_text())
    jsonschema.validate(qbj, json.loads(QBJ_SCHEMA.read_text()))
    questions = qbj["match_questions"]
    buzz = [[(b["player"]["name"], b["result"]["value"]) for b in q["buzzes"]] for q in questions]
    assert buzz == [[("Ada", 15)], [("Bo", -5), ("Ada", 10)], [("Bo", 15), ("Ann", 0)],
                    [("Bo", 10)]]  # fmt: skip
    assert [p["controlled_points"] for p in questions[1]["bonus"]["parts"]] == [10, 10, 10]
    red = next(t for t in qbj["match_teams"] if t["team"]["name"] == "Red")
    assert red["bonus_points"] == 50
    notes = qbj["notes"].splitlines()

    def noted(*parts: str) -> bool:
        return any(all(p in n for p in parts) for n in notes)

    assert noted("Protest", "by Blue on tossup 3 (lit-european-1)", "Upheld by Dana (TD): Walden")
    assert noted("by Red on bonus part 2 of tossup 4 (lit-world-1)", "Denied by Dana (TD)")
    assert noted("Correction", "of tossup 1 (lit-american-1)", "Ada (Red)")
    # the standings read from the record's rows and the stats replayed agree with the hand
    stats = event_stats(plan.team_infos(), plays)
    assert stats.standings == rows
    by = {s.team: s for s in rows}
    assert (by["red"].points, by["blue"].points) == (105, 40)
    assert (by["blue"].powers, by["blue"].negs) == (1, 1)
    # bonuses Red controlled: 20 and 30 (as corrected) in round 1, 0 in round 2
    assert (by["red"].bonus_points, by["red"].bonuses_heard) == (50, 3)
    players = {p.name: p for p in stats.players}
    assert (players["Ann"].powers, players["Ada"].powers) == (1, 1)  # Ann's other one: round 2
    # the stats report lists them with the game
    page = html_stats(plan, stats, plays)
    assert 'id="protests"' in page and "Upheld by Dana (TD)" in page
    # SQBS: the game's scores as amended (id, teams, scores, tossups heard, round)
    out = tmp_path / "stats.sqbs"
    result = export_sqbs(db_url, out)
    assert result.exit_code == 0, result.output
    lines = out.read_bytes().decode().split("\r\n")
    assert lines[13:19] == ["0", "1", "85", "40", "4", "1"]
