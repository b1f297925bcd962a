"""Bonuses in what leaves the record: the QBJ export's per-part points and the team fields
stats programs read, the bonus parts as CSV rows, and the standings' bonus points and PPB."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jsonschema
from backends import on_both_backends
from engine_helpers import config
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.commands import (
    AnswerPart,
    Buzz,
    Join,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    ThrowOutBonus,
    UndoRuling,
)
from grace_arena.core.events import Ruling
from grace_arena.core.formats import rules_for
from grace_arena.core.standings import bonus_lines, bonuses_played
from grace_arena.io.exports import export

QBJ_SCHEMA = Path(__file__).parent / "fixtures" / "analysis" / "qbj_match.schema.json"
C, X = Ruling.CORRECT, Ruling.INCORRECT


def _played(store):
    """Red and Blue, NAQT with bouncebacks: three cycles (one bounceback, one ruling undone
    and made again, one bonus thrown out and replaced), then a dead tossup."""
    t = 1_700_000_000.0
    cfg = config(n_tossups=4, rules=rules_for("naqt", bouncebacks=True), bonus_parts=(3, 3, 3, 3),
                 reading_mode="screen")  # fmt: skip
    rm = store.create(cfg, now=t)
    for team in ("red", "blue"):
        rm.handle(Join(team=team, player=f"{team}-1", name=team.title() + " One"), now=t)

    def win(team: str, word: int) -> None:
        rm.handle(StartTossup(), now=t)
        rm.handle(Reveal(to=word), now=t)
        rm.handle(Buzz(team=team, player=f"{team}-1"), now=t)
        rm.handle(Rule(ruling=C), now=t)

    win("red", 12)  # past the power mark: 10
    rm.handle(AnswerPart(team="red", player="red-1", text="part 0"), now=t)
    rm.handle(RulePart(ruling=C), now=t)
    rm.handle(RulePart(ruling=X), now=t)  # bounces back to blue...
    rm.handle(AnswerPart(team="blue", player="blue-1", text="part one"), now=t)
    rm.handle(RulePart(ruling=C), now=t)  # ...who gets it
    rm.handle(RulePart(ruling=C), now=t)
    win("blue", 2)  # a power: 15
    rm.handle(RulePart(ruling=X), now=t)
    rm.handle(UndoRuling(), now=t)
    rm.handle(RulePart(ruling=C), now=t)
    rm.handle(ThrowOutBonus(reason="misread"), now=t)  # b1 out (its 10 too); b2 replaces it
    for ruling in (C, C, X, X):
        rm.handle(RulePart(ruling=ruling), now=t)
    rm.handle(StartTossup(), now=t)  # a dead tossup: nobody answers
    rm.handle(Reveal(to=19), now=t)
    return rm


@on_both_backends
def test_bonuses_leave_the_record_as_they_stand(store, tmp_path) -> None:
    rm = _played(store)
    events = store.events(rm.id)
    played = bonuses_played(events)
    assert [(b.bonus_id, b.team, b.points, b.bounceback_points) for b in played] == [
        ("b0", "red", 20, 10),
        ("b2", "blue", 20, 0),
    ]
    lines = bonus_lines(events)
    assert (lines["red"].bonuses_heard, lines["red"].bonus_points) == (1, 20)
    assert (lines["blue"].bonus_points, lines["blue"].bounceback_points) == (20, 10)
    assert rm.match.scores == {"red": 10 + 20, "blue": 15 + 20 + 10}

    export(store.engine, "qbj", tmp_path / "m.qbj", [rm.id])
    match = json.loads((tmp_path / "m.qbj").read_text())
    jsonschema.validate(match, json.loads(QBJ_SCHEMA.read_text()))
    first, second = (q["bonus"] for q in match["match_questions"][:2])
    assert first["question"] == {"question_number": 1, "type": "bonus", "parts": 3}
    assert first["parts"] == [
        {"controlled_points": 10, "bounceback_points": 0},
        {"controlled_points": 0, "bounceback_points": 10},
        {"controlled_points": 10, "bounceback_points": 0},
    ]
    assert second["question"]["question_number"] == 3  # b2: the packet's third bonus
    assert "bonus" not in match["match_questions"][2]
    teams = {t["team"]["name"]: t for t in match["match_teams"]}
    assert (teams["Red"]["bonus_points"], teams["Red"]["bonus_bounceback_points"]) == (20, 0)
    assert (teams["Blue"]["bonus_points"], teams["Blue"]["bonus_bounceback_points"]) == (20, 10)
    assert teams["Red"]["correct_tossups_without_bonuses"] == 0
    # points on the QBJ add up to the match's scores, as a stats program adds them
    for name, team_id in (("Red", "red"), ("Blue", "blue")):
        tossups = sum(b["result"]["value"] for q in match["match_questions"]
                      for b in q["buzzes"] if b["team"]["name"] == name)  # fmt: skip
        team = teams[name]
        total = tossups + team["bonus_points"] + team["bonus_bounceback_points"]
        assert total == rm.match.scores[team_id]

    result = CliRunner().invoke(
        app, ["export", "--format", "bonuses", "--out", str(tmp_path / "b.csv"),
              "--db", store.engine.url.render_as_string(hide_password=False),
              "--match", str(rm.id)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with (tmp_path / "b.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["bonus_id"], r["part"], r["ruling"], r["points"], r["bounceback_team"],
             r["bounceback_points"]) for r in rows] == [
        ("b0", "1", "correct", "10", "", ""),
        ("b0", "2", "incorrect", "0", "blue", "10"),
        ("b0", "3", "correct", "10", "", ""),
        ("b2", "1", "correct", "10", "", ""),
        ("b2", "2", "correct", "10", "", ""),
        ("b2", "3", "incorrect", "0", "red", "0"),
    ]  # fmt: skip
    assert rows[0]["answer"] == "part 0" and rows[1]["bounceback_answer"] == "part one"


def test_the_parquet_folder_carries_the_bonus_parts(store, tmp_path) -> None:
    import pandas as pd

    rm = _played(store)
    files = export(store.engine, "parquet", tmp_path / "tables", [rm.id])
    assert tmp_path / "tables" / "bonus_parts.parquet" in files
    frame = pd.read_parquet(tmp_path / "tables" / "bonus_parts.parquet")
    assert len(frame) == 6 and int(frame["points"].sum()) == 40
    assert frame["bounceback_points"].dropna().tolist() == [10, 0]


def test_an_event_made_with_rules_plays_them_and_a_wrong_name_is_refused(db_url) -> None:
    from grace_arena.record.db import make_engine, upgrade
    from grace_arena.record.schedule import load_plan

    upgrade(db_url)
    runner = CliRunner()
    made = runner.invoke(app, ["event", "create", "night", "--team", "Red", "--team", "Blue",
                               "--rules", "naqt", "--bouncebacks", "--db", db_url])  # fmt: skip
    assert made.exit_code == 0, made.output
    engine = make_engine(db_url)
    defaults = load_plan(engine, "night").defaults
    engine.dispose()
    assert (defaults["format"], defaults["bouncebacks"]) == ("naqt", True)
    wrong = runner.invoke(app, ["event", "create", "day", "--team", "Red", "--team", "Blue",
                                "--rules", "acff", "--db", db_url])  # fmt: skip
    assert wrong.exit_code == 2 and "'acff' is not a format" in wrong.output
