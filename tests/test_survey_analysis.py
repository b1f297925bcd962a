"""Survey answers as human trajectories in the analysis: hand-worked numbers, the ``--survey``
file and the record giving the same result, and the report's survey section."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import httpx
import pytest
from live import LiveServer
from test_survey import write_packet
from typer.testing import CliRunner

from grace_arena.analysis.frames import FileFormatError
from grace_arena.analysis.survey import SurveyStep, analyze_survey, read_survey_csv, survey_scores
from grace_arena.cli import app
from grace_arena.server.app import Settings

# Two questions: q1 has 4 clues of 10 words (clue ends 9, 19, 29, 39), q2 2 clues of 10 words.
# (correct, would buzz) after each clue:
ANSWERS = {
    ("A", "q1"): [(0, 0), (1, 0), (1, 1), (1, 0)],
    ("A", "q2"): [(0, 1), (1, 0)],
    ("B", "q1"): [(0, 0), (0, 0), (0, 0), (1, 0)],
    ("B", "q2"): [(1, 1), (1, 1)],
}


def known_steps() -> list[SurveyStep]:
    return [
        SurveyStep(p, q, step, 10 * step + 9, bool(ok), bool(buzz), guess=f"g{step}")
        for (p, q), rows in ANSWERS.items()
        for step, (ok, buzz) in enumerate(rows)
    ]


def test_human_numbers_match_the_hand_worked_example():
    result = analyze_survey(known_steps())
    # Appendix F.3. A: q1 correct buzz at clue 3 of 4 → 20 − 20·0.75 = 5; q2 wrong buzz → −5;
    # mean 0. B: q1 finished without a buzz → 0; q2 correct buzz at clue 1 of 2 → 10; mean 5.
    ranked = [(p["participant"], p["mean_score"], p["rank"]) for p in result["participants"]]
    assert ranked == [("B", 5.0, 1), ("A", 0.0, 2)]
    halves = {p["participant"]: p["half"] for p in result["participants"]}
    assert halves == {"A": 1, "B": 2}
    # Figure 6, up to each first buzz. A: q1 steps 0-2 (g = 0, 1, 1; b = 0, 0, 1), q2 step 0
    # (g = 0, b = 1): P(b|g=1) = 1/2, P(b|g=0) = 1/2. B: q1 all 4 steps without a buzz
    # (g = 0, 0, 0, 1), q2 step 0 (g = 1, b = 1): P(b|g=1) = 1/2, P(b|g=0) = 0/3.
    per = {p["participant"]: p for p in result["participants"]}
    assert (per["A"]["p_buzz_given_correct"], per["A"]["p_buzz_given_incorrect"]) == (0.5, 0.5)
    assert (per["B"]["p_buzz_given_correct"], per["B"]["p_buzz_given_incorrect"]) == (0.5, 0.0)
    groups = result["groups"]
    assert groups["humans (all)"]["p_buzz_given_correct"] == pytest.approx(0.5)
    assert groups["humans (all)"]["p_buzz_given_incorrect"] == pytest.approx(0.25)  # (½ + 0) / 2
    assert groups["humans, bottom half"]["p_buzz_given_incorrect"] == pytest.approx(0.5)
    assert groups["humans, top half"]["p_buzz_given_incorrect"] == pytest.approx(0.0)
    # Figure 5, every step: fractions 0.25, 0.5, 0.75, 1 on q1 and 0.5, 1 on q2.
    # [0.2, 0.3): A✗ B✗ → 0; [0.5, 0.6): A✓ B✗ (q1) A✗ B✓ (q2) → ½; [0.7, 0.8): A✓ B✗ → ½;
    # [0.9, 1]: all four right → 1.
    everyone = result["accuracy"]["humans (all)"]
    assert everyone["accuracy"] == [None, None, 0.0, None, None, 0.5, None, 0.5, None, 1.0]
    assert everyone["count"] == [0, 0, 2, 0, 0, 4, 0, 2, 0, 4]
    assert set(result["accuracy"]) == {"humans (all)", "humans Q1", "humans Q4"}
    # by fraction (quarters): A's q2 wrong buzz at 0.5 is the bottom half's only P(b|g=0) > 0
    bottom = result["buzz_by_fraction"]["humans, bottom half"]
    assert bottom["p_buzz_given_incorrect"] == [None, 0.0, 1.0, None]
    assert bottom["p_buzz_given_correct"] == [None, None, 0.0, 1.0]


def test_scores_skip_questions_left_part_way_without_a_buzz():
    steps = [
        SurveyStep("C", "q1", 0, 9, False, False),
        SurveyStep("C", "q1", 1, 19, True, False),  # two of four clues, no buzz yet
        SurveyStep("C", "q2", 0, 9, False, True),
    ]
    assert survey_scores(steps, {"q1": 4, "q2": 2}) == [("C", 0.5, False)]
    with pytest.raises(ValueError, match="duplicate survey step"):
        analyze_survey([*steps, SurveyStep("C", "q2", 0, 9, True, True)])


def write_survey_csv(path: Path, steps: list[SurveyStep]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(
            ["participant", "question_id", "step", "word_index", "guess", "would_buzz", "correct"]
        )
        for s in steps:
            out.writerow(
                [
                    s.participant,
                    s.question_id,
                    s.step,
                    s.word_index,
                    s.guess,
                    int(s.would_buzz),
                    int(s.correct),
                ]
            )
    return path


def test_analyze_reads_a_survey_file_beside_model_steps(tmp_path):
    survey = write_survey_csv(tmp_path / "survey.csv", known_steps())
    steps = tmp_path / "steps.csv"
    steps.write_text(
        "model,question_id,step,word_index,correct,confidence_logit,confidence_verbal,n_words,"
        "would_buzz\n"
        "m,q1,0,9,0,0.9,,40,1\n"  # a wrong buzz at the first clue
        "m,q1,1,19,1,0.9,,40,1\n"
        "m,q2,0,9,1,0.2,,20,0\n"
        "m,q2,1,19,1,0.8,,20,1\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    report = tmp_path / "report"
    result = CliRunner().invoke(
        app,
        [
            "analyze",
            "--survey",
            str(survey),
            "--steps",
            str(steps),
            "--json",
            str(out),
            "--report",
            str(report),
            "--resamples",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["survey"]["groups"]["humans (all)"]["p_buzz_given_incorrect"] == 0.25
    # the model side by side: q1 stops at its first (wrong) buzz; q2: correct without, then with
    assert data["curves"]["buzz_given_correct"]["m"]["p_buzz_given_correct"] == 0.5
    assert data["curves"]["buzz_given_correct"]["m"]["p_buzz_given_incorrect"] == 1.0
    assert data["survey"]["buzz_by_fraction"]["m"]["kind"] == "model"
    assert "humans (all)" in result.output and "P(buzz | correct)" in result.output
    md = (report / "report.md").read_text()
    assert "## Survey: human trajectories" in md and "| humans, top half | human |" in md
    # the file does not say which policy its would_buzz came from: the report says so
    assert "| m | model (policy not recorded) |" in md
    assert (report / "survey_buzz_given_correct.png").stat().st_size > 1000
    assert (report / "accuracy.png").exists()


def test_analyze_without_survey_answers_has_no_survey_section(tmp_path):
    steps = tmp_path / "steps.csv"
    steps.write_text(
        "model,question_id,step,word_index,correct,confidence_logit,confidence_verbal\n"
        "m,q1,0,9,0,0.9,\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        app, ["analyze", "--steps", str(steps), "--json", str(out), "--resamples", "0"]
    )
    assert result.exit_code == 0, result.output
    assert "survey" not in json.loads(out.read_text())


def test_a_bad_survey_file_names_the_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "participant,question_id,step,word_index,guess,would_buzz,correct\nA,q1,0,9,x,maybe,1\n",
        encoding="utf-8",
    )
    with pytest.raises(FileFormatError, match="line 2: column 'would_buzz' must be 0 or 1"):
        read_survey_csv(bad)
    result = CliRunner().invoke(app, ["analyze", "--survey", str(bad)])
    assert result.exit_code == 1 and "would_buzz" in result.output


def test_the_record_and_the_file_give_the_same_human_numbers(tmp_path, db_url):
    """Answers given through the server are analysed from the record like the same answers
    written to a survey file."""
    packet = write_packet(tmp_path, "survey-a", "Survey A")
    scripts = {
        "Ann": [
            ("Moby-Dick", True),
            ("Moby-Dick", False),
            ("Moby-Dick", False),
            ("", False),
            ("Frankenstein", True),
        ],
        "Bo": [
            ("", False),
            ("whale", True),
            ("Moby Dick", True),
            ("Dracula", True),
            ("Frankenstein", False),
        ],
    }
    with (
        LiveServer(Settings(db_url=db_url, survey_packets=[packet])) as server,
        httpx.Client(base_url=server.http_url) as client,
    ):
        code = next(iter(server.app.state.surveys.plans))
        for name, answers in scripts.items():
            token = client.post(f"/api/survey/{code}/participants", json={"name": name}).json()
            auth = {"Authorization": f"Bearer {token['token']}"}
            for guess, buzz in answers:
                clue = client.get(f"/api/survey/{code}/state", headers=auth).json()["clue"]
                body = {
                    "tossup_id": clue["tossup_id"],
                    "step": clue["step"],
                    "guess": guess,
                    "would_buzz": buzz,
                }
                assert client.put(f"/api/survey/{code}/answer", json=body, headers=auth).is_success
    out = tmp_path / "db.json"
    result = CliRunner().invoke(
        app, ["analyze", "--db", db_url, "--json", str(out), "--resamples", "0"]
    )
    assert result.exit_code == 0, result.output
    from_record = json.loads(out.read_text())["survey"]
    # Ann: whale correct buzz at clue 1 of 3 → 20 − 20/3; monster correct buzz at clue 2 of 2
    # → 0; Bo: "whale" is a prompt, so his buzz at clue 2 is wrong → −5; monster wrong buzz → −5
    scores = {p["name"]: p["mean_score"] for p in from_record["participants"]}
    assert scores == {"Ann": pytest.approx((20 - 20 / 3) / 2), "Bo": -5.0}

    from grace_arena.io.record_io import survey_steps
    from grace_arena.record.db import make_engine

    steps = survey_steps(make_engine(db_url))
    assert {s.question_id for s in steps} == {"survey-a/whale", "survey-a/monster"}
    survey = write_survey_csv(tmp_path / "survey.csv", steps)
    out_files = tmp_path / "files.json"
    result = CliRunner().invoke(
        app, ["analyze", "--survey", str(survey), "--json", str(out_files), "--resamples", "0"]
    )
    assert result.exit_code == 0, result.output
    from_file = json.loads(out_files.read_text())["survey"]
    for p in from_file["participants"]:  # the file has no names: participant ids stand in
        p["name"] = next(
            q["name"] for q in from_record["participants"] if q["participant"] == p["participant"]
        )
    assert from_file == from_record


def test_the_crowds_reliability_by_hand() -> None:
    from grace_arena.analysis.survey import SurveyStep, analyze_survey, crowd_reliability

    steps = [
        SurveyStep("A", "q1", 0, 4, correct=True, would_buzz=True),
        SurveyStep("B", "q1", 0, 4, correct=False, would_buzz=False),
        SurveyStep("A", "q1", 1, 9, correct=True, would_buzz=True),
        SurveyStep("B", "q1", 1, 9, correct=True, would_buzz=True),
    ]
    # clue 0: half the crowd would buzz (confidence 0.5), half of the answers are right;
    # clue 1: all would buzz (1.0) and all are right
    filled = [b for b in crowd_reliability(steps) if b["count"]]
    assert [(b["lower"], b["accuracy"], b["count"]) for b in filled] == [
        (0.5, 0.5, 2),
        (0.9, 1.0, 2),
    ]
    assert filled[0]["gap"] == 0.0 and filled[1]["gap"] == 0.0
    assert analyze_survey(steps)["reliability"]["humans (all)"][5]["count"] == 2
