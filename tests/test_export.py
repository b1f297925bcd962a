"""``grace-arena export``: a synthetic match through every format."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jsonschema
import pytest
from backends import on_both_backends
from engine_helpers import config
from test_analyze_record import MODEL, PACKET_ID, play_synthetic_match
from typer.testing import CliRunner

from grace_arena.analysis.frames import STEP_COLUMNS, read_buzzes
from grace_arena.cli import app
from grace_arena.core.commands import Buzz, Join, Reveal, Rule, StartTossup
from grace_arena.core.events import BuzzTiming, Ruling
from grace_arena.io.exports import export
from grace_arena.io.imports import grace_word_maps, import_grace
from grace_arena.io.record_io import BUZZ_EXPORT_COLUMNS, STEP_EXPORT_COLUMNS, load_record_data
from grace_arena.record.store import MatchStore

QBJ_SCHEMA = Path(__file__).parent / "fixtures" / "analysis" / "qbj_match.schema.json"

pytestmark = on_both_backends


@pytest.fixture
def match_id(store: MatchStore) -> int:
    return play_synthetic_match(store)


def test_csv_and_jsonl_hold_every_buzz_with_every_field(store, match_id, tmp_path) -> None:
    csv_path, jsonl_path = tmp_path / "b.csv", tmp_path / "b.jsonl"
    export(store.engine, "csv", csv_path, [match_id])
    export(store.engine, "jsonl", jsonl_path, [match_id])
    with csv_path.open() as handle:
        rows = list(csv.DictReader(handle))
    lines = [json.loads(line) for line in jsonl_path.read_text().splitlines()]
    assert list(rows[0]) == list(BUZZ_EXPORT_COLUMNS)
    assert len(rows) == len(lines) == len(store.buzzes(match_id)) == 7
    assert [r["outcome"] for r in rows].count("lost_race") == 1
    by_id = {r["buzz_id"]: r for r in lines}
    red_neg = by_id[1]
    assert (red_neg["team"], red_neg["player"], red_neg["word_index"]) == ("Red", "Ruth", 2)
    assert (red_neg["ruling"], red_neg["correct"], red_neg["points"]) == ("incorrect", 0, -5)
    assert red_neg["received_wall"] is not None and red_neg["received_mono"] == 10.0
    lost = by_id[2]
    assert lost["outcome"] == "lost_race" and lost["holder_buzz_id"] == 1
    assert lost["margin"] == pytest.approx(0.05)
    power = by_id[3]
    assert (power["points"], power["power"]) == (15, True)
    model = next(r for r in lines if r["tossup_id"] == "sci-1")
    assert (model["team_kind"], model["player_kind"], model["answer"]) == (
        "model",
        "model",
        "oxygen",
    )
    # the undone ruling is in the history
    assert [(h["ruling"], h["undone"]) for h in model["ruling_history"]] == [
        ("incorrect", True),
        ("correct", False),
    ]
    thrown = [r for r in lines if r["tossup_id"] == "his-1"]
    assert thrown and all(r["thrown_out"] for r in thrown)
    # the CSV cell of the history is compact JSON
    assert json.loads(rows[0]["ruling_history"])[0]["ruling"] == "incorrect"


def test_a_refused_buzz_carries_its_repeats_and_no_analysis_counts_them(store, tmp_path) -> None:
    t = 1_700_000_000.0
    rm = store.create(config(), now=t)
    for team, player in (("red", "r1"), ("blue", "b1")):
        rm.handle(Join(team=team, player=player, name=player), now=t)
    rm.handle(StartTossup(), now=t)
    rm.handle(Reveal(to=4), now=t)
    for i in range(6):  # red takes the floor, then blue presses five times
        team, player = ("red", "r1") if i == 0 else ("blue", "b1")
        timing = BuzzTiming(received_wall=t + i, received_mono=float(i))
        rm.handle(Buzz(team=team, player=player, timing=timing), now=t + i)
    rm.handle(Rule(ruling=Ruling.CORRECT), now=t + 9)
    csv_path, jsonl_path = tmp_path / "b.csv", tmp_path / "b.jsonl"
    export(store.engine, "csv", csv_path, [rm.id])
    export(store.engine, "jsonl", jsonl_path, [rm.id])
    lines = [json.loads(line) for line in jsonl_path.read_text().splitlines()]
    assert [(r["outcome"], r["repeats"], r["last_repeat_wall"]) for r in lines] == [
        ("won", 0, None),
        ("lost_race", 4, t + 5),
    ]
    with csv_path.open() as handle:
        assert [r["repeats"] for r in csv.DictReader(handle)] == ["0", "4"]
    # the analysis counts buzzes that took the floor: one, from the record as from the file
    assert len(load_record_data(store.engine, [rm.id]).buzzes) == 1
    assert len(read_buzzes(csv_path)[0]) == 1


def test_steps_carry_the_analyze_columns_first(store, match_id, tmp_path) -> None:
    path = tmp_path / "steps.csv"
    export(store.engine, "steps", path, [match_id])
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[: len(STEP_COLUMNS)] == list(STEP_COLUMNS)
    assert list(rows[0]) == list(STEP_EXPORT_COLUMNS)
    # the thrown-out tossup's steps are left out of a --match export
    assert {r["tossup_id"] for r in rows} == {"fa-1", "sci-1", "lit-1"}
    first = rows[0]
    assert first["model"] == MODEL and first["question_id"].startswith(f"{PACKET_ID}/")
    assert first["latency_s"] == "0.5" and first["prompt_tokens"] == "100"
    assert any(r["confidence_verbal"] == "" for r in rows)  # missing stays empty


def test_qbj_follows_the_quizbowl_schema(store, match_id, tmp_path) -> None:
    path = tmp_path / "m.qbj"
    export(store.engine, "qbj", path, [match_id])
    match = json.loads(path.read_text())
    jsonschema.validate(match, json.loads(QBJ_SCHEMA.read_text()))
    assert match["tossups_read"] == 3  # his-1 thrown out
    assert "his-1" in match["notes"]
    questions = match["match_questions"]
    assert [q["tossup_question"]["question_number"] for q in questions] == [1, 2, 4]
    first = questions[0]["buzzes"]
    got = [(b["team"]["name"], b["player"]["name"], b["buzz_position"]["word_index"],
            b["result"]["value"]) for b in first]  # fmt: skip
    assert got == [("Red", "Ruth", 2, -5), ("Blue", "Bo", 4, 15)]
    lit = questions[2]["buzzes"]
    assert [(b["team"]["name"], b["result"]["value"]) for b in lit] == [("Bot", -5), ("Red", 10)]
    red = next(t for t in match["match_teams"] if t["team"]["name"] == "Red")
    assert [p["name"] for p in red["lineups"][0]["players"]] == ["Ruth", "Raj"]
    raj = next(p for p in red["match_players"] if p["player"]["name"] == "Raj")
    assert raj["tossups_heard"] == 3
    assert [(c["number"], c["answer_type"]["value"]) for c in raj["answer_counts"]] == [(1, 10)]
    assert match["_grace_arena"]["team_kinds"]["Bot"] == "model"


def test_a_schema_violation_is_caught(store, match_id, tmp_path) -> None:
    """The schema is not vacuous: a buzz without a result fails it."""
    path = tmp_path / "m.qbj"
    export(store.engine, "qbj", path, [match_id])
    match = json.loads(path.read_text())
    del match["match_questions"][0]["buzzes"][0]["result"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(match, json.loads(QBJ_SCHEMA.read_text()))


def test_grace_export_codes_teams_and_round_trips_through_import(store, match_id, tmp_path) -> None:
    path = tmp_path / "g.json"
    files = export(store.engine, "grace", path, [match_id])
    assert files == [path, tmp_path / "g.teams.json"]
    tossups = json.loads(path.read_text())
    mapping = json.loads((tmp_path / "g.teams.json").read_text())
    assert {code: [t["team"] for t in v] for code, v in mapping.items()} == {
        "H1": ["Red"],
        "H2": ["Blue"],
        "M1": ["Bot"],
    }
    assert [t["tossup_index"] for t in tossups] == ["fa-1", "sci-1", "lit-1"]
    fa = tossups[0]
    assert fa["category"] == "Classical Music"  # the finer label
    # GRACE counts "(*)" and the guide as words: our word 5 ("symphony") is its word 6
    _, to_grace = grace_word_maps(fa["question"])
    assert (to_grace[4], to_grace[5]) == (4, 6)
    assert fa["position"] == [{"2": "[H1, -]"}, {"4": "[H2, +]"}]
    assert "wrote [H1, -] a famous [H2, +] (*) symphony" in fa["question_buzzpoints"]
    lit = tossups[2]
    last = len(lit["question"].split()) - 1
    assert lit["position"] == [{"3": "[M1, -]"}, {str(last): "[H1, +]"}]

    # import the exported file into a fresh record and export again: the same file
    from grace_arena.record.db import open_engine

    engine = open_engine(f"sqlite:///{tmp_path / 'again.db'}")
    result = import_grace(engine, path)
    assert result.warnings == [] and result.buzzes == 5
    again = tmp_path / "again.json"
    export(engine, "grace", again, result.matches)
    assert json.loads(again.read_text()) == tossups


def test_export_command_and_folder_outputs(store, match_id, db_url, tmp_path) -> None:
    store.create(  # a second match: qbj and grace outputs become folders
        __import__("engine_helpers").config(n_tossups=1), now=1.0
    )
    runner = CliRunner()
    result = runner.invoke(
        app, ["export", "--db", db_url, "--format", "qbj", "--out", str(tmp_path / "qbj")]
    )
    assert result.exit_code == 0, result.output
    # (and the packet the synthetic match read, for MODAQ: the second has none in the record)
    assert sorted(p.name for p in (tmp_path / "qbj").iterdir()) == [
        "match-1.qbj",
        "match-2.qbj",
        f"{PACKET_ID}.json",
    ]
    result = runner.invoke(app, ["export", "--db", db_url, "--format", "nope", "--out", "x"])
    assert result.exit_code == 2
    result = runner.invoke(
        app, ["export", "--db", db_url, "--match", "99", "--format", "csv", "--out", "x.csv"]
    )
    assert result.exit_code == 1 and "no match 99" in result.output
