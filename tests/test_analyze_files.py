"""``grace-arena analyze --steps/--buzzes`` on small hand-written files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grace_arena.analysis.frames import read_buzzes, read_steps
from grace_arena.analysis.metrics import normalized_sigmoid
from grace_arena.cli import app

STEPS = """model,question_id,step,word_index,correct,confidence_logit,confidence_verbal,category
m,q1,0,9,0,0.5,0.9,Science
m,q1,1,19,1,0.8,,Science
m,q2,0,4,1,1.0,1.0,History
"""
BUZZES = """question_id,team,team_kind,word_index,correct,outcome,thrown_out
q1,A,human,12,1,won,0
q1,B,human,5,0,won,0
q1,C,human,7,1,lost_race,0
q2,A,human,2,1,won,1
q2,Bot,model,3,1,won,0
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    steps, buzzes = tmp_path / "steps.csv", tmp_path / "buzzes.csv"
    steps.write_text(STEPS)
    buzzes.write_text(BUZZES)
    return steps, buzzes


def test_files_read_as_documented(files) -> None:
    steps_path, buzzes_path = files
    steps = read_steps(steps_path)
    assert steps.confidence_verbal[1] != steps.confidence_verbal[1]  # empty = missing (NaN)
    buzzes, heard = read_buzzes(buzzes_path)
    # the lost race and the thrown-out row are not ruled buzzes
    assert sorted(zip(buzzes.question_id, buzzes.team, strict=True)) == [
        ("q1", "A"),
        ("q1", "B"),
        ("q2", "Bot"),
    ]
    # every team seen in the file (C lost a race) heard every question seen (A's only q2 buzz
    # was thrown out, Bot's counts)
    rows = set(heard.astype(str).itertuples(index=False, name=None))
    assert len(heard) == 8 and ("", "C", "q1", "human") in rows
    assert {team: kind for _, team, _, kind in rows} == {
        "A": "human",
        "B": "human",
        "C": "human",
        "Bot": "model",
    }


def test_calscore_from_files_by_hand(files, tmp_path: Path) -> None:
    steps_path, buzzes_path = files
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        app,
        ["analyze", "--steps", str(steps_path), "--buzzes", str(buzzes_path), "--json", str(out),
         "--resamples", "0"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    logit = data["models"]["m"]["logit"]
    # q1: human teams A (right at 12) and B (wrong at 5) buzzed: h = [0, 1/2] at words 9, 19.
    # mean((1-h) g± c) = ((1)(-1)(0.5) + (0.5)(+1)(0.8)) / 2 = -0.05; q2: h = 0 (the only
    # human buzz there was thrown out): mean = 1.0.
    q1 = 1 - normalized_sigmoid(-0.05)
    q2 = 1 - normalized_sigmoid(1.0)
    assert logit["calscore"] == pytest.approx((q1 + q2) / 2)
    assert logit["calscore_ref"] == pytest.approx(((1 - 0.4 / 2) + (1 - 1.0)) / 2)
    assert logit["brier"] == pytest.approx((0.25 + 0.04 + 0.0) / 3)
    assert logit["final"]["n"] == 2 and logit["final"]["brier"] == pytest.approx(0.02)
    verbal = data["models"]["m"]["verbal"]
    assert (verbal["n"], verbal["n_missing"]) == (2, 1)
    assert set(logit["by_category"]) == {"Science", "History"}
    assert logit["ci"] == {"calscore": [None, None], "ece": [None, None], "brier": [None, None]}
    assert data["teams"]["B"] == {
        "kind": "human",
        "model": None,
        "threshold": None,
        "questions_heard": 2,
        "matches_played": None,  # the file names no matches
        "buzzes": 1,
        "correct": 0,
        "incorrect": 1,
        "mean_fraction_correct": None,  # no n_words column: fractions unknown
    }
    assert data["expected_wins"]["human_curve"] is None  # needs question lengths


def test_bad_cells_are_named_by_line_and_column(files, tmp_path: Path) -> None:
    steps_path, _ = files
    ok = tmp_path / "true.csv"  # true/false read as 1/0
    ok.write_text(STEPS.replace("m,q2,0,4,1,1.0,1.0", "m,q2,0,4,true,1.0,1.0"))
    assert read_steps(ok).correct.tolist() == read_steps(steps_path).correct.tolist()
    bad = tmp_path / "bad.csv"
    bad.write_text(STEPS.replace("m,q2,0,4,1,1.0", "m,q2,0,4,2,1.0"))
    with pytest.raises(ValueError, match="line 4: column 'correct' must be 0 or 1"):
        read_steps(bad)
    bad.write_text(STEPS.replace("m,q1,1,19,1,0.8", "m,q1,1,19.5,1,0.8"))
    with pytest.raises(ValueError, match="line 3: column 'word_index' must be an integer"):
        read_steps(bad)
    bad.write_text(STEPS.replace("m,q1,1,19,1,0.8", "m,q1,1,19,1,1.8"))
    with pytest.raises(ValueError, match=r"line 3: confidence_logit must lie in \[0, 1\]"):
        read_steps(bad)
    # in a buzz file the line counts every row, also those that are not ruled buzzes
    bad.write_text(BUZZES.replace("q2,Bot,model,3,1", "q2,Bot,model,x,1"))
    with pytest.raises(ValueError, match="line 6: column 'word_index' must be an integer"):
        read_buzzes(bad)
    bad.write_text(BUZZES.replace("q1,C,human", "q1,C,robot"))
    with pytest.raises(ValueError, match="line 4: team_kind must be 'human' or 'model'"):
        read_buzzes(bad)


def test_parquet_files_give_the_same_analysis_as_csv(files, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    steps_csv, buzzes_csv = files
    # typed columns as a notebook would write them: floats with nulls, booleans
    steps = pacsv.read_csv(steps_csv)
    steps = steps.set_column(4, "correct", steps.column("correct").cast(pa.bool_()))
    pq.write_table(steps, tmp_path / "steps.parquet")
    pq.write_table(pacsv.read_csv(buzzes_csv), tmp_path / "buzzes.parquet")
    out = {}
    for suffix in ("csv", "parquet"):
        target = tmp_path / f"{suffix}.json"
        steps_file, buzzes_file = tmp_path / f"steps.{suffix}", tmp_path / f"buzzes.{suffix}"
        args = ["analyze", "--steps", str(steps_file), "--buzzes", str(buzzes_file),
                "--json", str(target), "--resamples", "50"]  # fmt: skip
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        data = json.loads(target.read_text())
        out[suffix] = {k: v for k, v in data.items() if k not in ("generated_at", "source")}
    assert out["parquet"] == out["csv"]
    assert out["csv"]["counts"]["steps"] == 3 and out["csv"]["counts"]["buzzes"] == 3
    # a Parquet file with a column missing is refused with the file named
    pq.write_table(steps.drop_columns(["correct"]), tmp_path / "bad.parquet")
    result = CliRunner().invoke(app, ["analyze", "--steps", str(tmp_path / "bad.parquet")])
    assert result.exit_code == 1 and "missing column(s) correct" in result.output


def test_the_terminal_tables_fit_80_columns(files) -> None:
    steps_path, buzzes_path = files
    args = ["analyze", "--steps", str(steps_path), "--buzzes", str(buzzes_path),
            "--resamples", "20"]  # fmt: skip
    result = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in result.stdout  # no header or number cut short
    for header in ("CalScore", "AUROC", "acc@80%", "smECE", "Platt", "isot."):
        assert header in result.stdout
