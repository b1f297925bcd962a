"""The column-wise analysis gives the numbers of the reference implementations.

``grace_arena.analysis.metrics`` / ``curves`` define every metric question by question;
``grace_arena.analysis.columnar`` computes the same on whole arrays for speed. Random tables
(edge confidences 0, 0.1, 0.5, 0.9, 1.0 and missing ones included) must agree to 1e-9.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grace_arena.analysis.columnar import (
    accuracy_curves,
    bootstrap_model,
    buzz_given_correct_table,
    buzz_rate_curves,
    first_buzzes,
    human_fraction_column,
    model_rows,
    player_scores,
    sh_by_model,
    summarize_table,
)
from grace_arena.analysis.curves import (
    BuzzRecord,
    PolicyStep,
    accuracy_by_fraction,
    buzz_given_correct,
    cumulative_buzz_rates,
    rank_players,
    sh_question,
)
from grace_arena.analysis.metrics import (
    Step,
    bootstrap_ci,
    group_by_question,
    human_fraction_by_step,
    step_metric,
    summarize_steps,
)
from grace_arena.analysis.summary import analyze
from grace_arena.analysis.tables import BuzzTable, StepTable

EDGES = [None, 0.0, 0.1, 0.5, 0.9, 1.0]
N_WORDS = 40


def random_data(seed: int, n_questions: int = 12) -> tuple[list[dict], list[dict]]:
    rng = np.random.default_rng(seed)
    steps = []
    for model in ("m-b", "m-a"):
        for q in rng.permutation(n_questions):
            n_steps = int(rng.integers(1, 6))
            for t in rng.permutation(n_steps):  # rows out of order on purpose

                def conf() -> float | None:
                    return EDGES[rng.integers(len(EDGES))] if rng.random() < 0.5 else rng.random()

                steps.append(
                    {
                        "model": model,
                        "question_id": f"q{q}",
                        "step": int(t),
                        "word_index": int(t * 7 + 3),
                        "correct": int(rng.random() < 0.5),
                        "confidence_logit": conf(),
                        "confidence_verbal": conf(),
                        "category": ["Science", "History", None][q % 3] if t == 0 else None,
                        "n_words": N_WORDS,
                        "would_buzz": int(rng.random() < 0.3),
                    }
                )
    buzzes = []
    for q in range(n_questions):
        for match in ("1", "2"):
            for team in ("A", "B", "C"):
                if rng.random() < 0.5:
                    buzzes.append(
                        {
                            "question_id": f"q{q}",
                            "team": team if team != "C" else "Bot",
                            "team_kind": "human" if team != "C" else "model",
                            "match": match,
                            "player": f"{team}{int(rng.integers(2))}",
                            "word_index": int(rng.integers(0, N_WORDS + 3)),
                            "correct": int(rng.random() < 0.6),
                            "n_words": N_WORDS,
                            "clue_index": int(rng.integers(0, 4)),
                            "n_clues": 4,
                        }
                    )
    return steps, buzzes


def as_steps(rows: list[dict]) -> list[Step]:
    return [
        Step(r["model"], r["question_id"], r["step"], r["word_index"], bool(r["correct"]),
             r["confidence_logit"], r["confidence_verbal"], r["category"])
        for r in rows
    ]  # fmt: skip


def human_buzzes(rows: list[dict]) -> dict[str, list[tuple[str, int, bool]]]:
    out: dict[str, list[tuple[str, int, bool]]] = {}
    for r in rows:
        if r["team_kind"] == "human":
            team = f"{r['match']}\x1f{r['team']}"
            out.setdefault(r["question_id"], []).append((team, r["word_index"], bool(r["correct"])))
    return out


def assert_same(a: Any, b: Any, path: str = "") -> None:
    if isinstance(a, dict):
        assert set(a) == set(b), (path, set(a) ^ set(b))
        for k in a:
            assert_same(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        if math.isnan(a):
            assert math.isnan(b), path
        else:
            assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (path, a, b)
    else:
        assert a == b, (path, a, b)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_summaries_match_summarize_steps(seed: int) -> None:
    steps, buzzes = random_data(seed)
    reference = summarize_steps(as_steps(steps), human_buzzes(buzzes))
    got = summarize_table(StepTable.from_rows(steps), BuzzTable.from_rows(buzzes))
    assert_same(reference, got)


@pytest.mark.parametrize("definition", ["reference", "paper"])
def test_human_fraction_matches_the_reference_per_step(definition: str) -> None:
    steps, buzzes = random_data(3)
    # a team buzzing twice on one question (another room, or a neg then a correct answer)
    buzzes = buzzes + [{**b, "correct": 1 - b["correct"], "word_index": b["word_index"] + 3}
                       for b in buzzes[::4]]  # fmt: skip
    table = StepTable.from_rows(steps)
    h = human_fraction_column(table, BuzzTable.from_rows(buzzes), definition=definition)
    hb = human_buzzes(buzzes)
    expected = [
        float(
            human_fraction_by_step(
                [r["word_index"]], hb.get(r["question_id"], ()), definition=definition
            )[0]
        )
        for r in steps
    ]
    np.testing.assert_allclose(h, expected)
    assert (h > 0).any() and (h == 0).any()


@pytest.mark.parametrize("seed", [0, 1])
def test_bootstrap_matches_bootstrap_ci_draw_for_draw(seed: int) -> None:
    steps, buzzes = random_data(seed)
    hb = human_buzzes(buzzes)
    table = StepTable.from_rows(steps)
    models = model_rows(table, human_fraction_column(table, BuzzTable.from_rows(buzzes)))
    combos = [("logit", False), ("logit", True), ("verbal", False), ("verbal", True)]
    for m in models:
        got = bootstrap_model(m, combos, n_resamples=150, seed=seed + 7, chunk=40)
        mine = [s for s in as_steps(steps) if s.model == m.model]
        for kind, final in combos:
            chosen = [g[-1] for g in group_by_question(mine).values()] if final else mine
            for name in ("calscore", "ece", "brier"):
                expected = bootstrap_ci(
                    chosen,
                    step_metric(name, kind=kind, human_buzzes=hb),
                    n_resamples=150,
                    seed=seed + 7,
                )
                assert_same(expected, got[(kind, final)][name], f"{m.model}/{kind}/{final}/{name}")


def test_bootstrap_rejects_bad_arguments() -> None:
    steps, _ = random_data(0)
    m = model_rows(StepTable.from_rows(steps))[0]
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_model(m, n_resamples=0)
    with pytest.raises(ValueError, match="level"):
        bootstrap_model(m, level=1.0)


def test_sh_matches_sh_question_per_question() -> None:
    steps, buzzes = random_data(5)
    hb = human_buzzes(buzzes)
    table = StepTable.from_rows(steps)
    for m in model_rows(table, human_fraction_column(table, BuzzTable.from_rows(buzzes))):
        mine = [s for s in as_steps(steps) if s.model == m.model]
        for kind in ("logit", "verbal"):
            values = []
            for qid, group in group_by_question(mine).items():
                conf = np.array(
                    [
                        np.nan if (c := getattr(s, f"confidence_{kind}")) is None else c
                        for s in group
                    ]
                )
                keep = ~np.isnan(conf)
                if keep.any():
                    h = human_fraction_by_step([s.word_index for s in group], hb.get(qid, ()))
                    ok = np.array([s.correct for s in group])
                    values.append(sh_question(conf[keep], ok[keep], h[keep]))
            got, n = sh_by_model(m, kind)
            assert n == len(values)
            assert got == pytest.approx(float(np.mean(values)), rel=1e-9)


def test_policy_and_accuracy_curves_match_the_reference() -> None:
    steps, _ = random_data(9)
    models = model_rows(StepTable.from_rows(steps))
    reference = buzz_given_correct(
        PolicyStep(r["model"], r["question_id"], r["step"], bool(r["correct"]),
                   bool(r["would_buzz"]))
        for r in steps
    )  # fmt: skip
    assert buzz_given_correct_table(models) == reference
    lengths = {r["question_id"]: N_WORDS for r in steps}
    expected = accuracy_by_fraction(as_steps(steps), lengths)
    got = accuracy_curves(models)
    for model, curve in expected.items():
        assert_same(curve.count.tolist(), got[model]["count"])
        assert_same(
            [None if math.isnan(a) else a for a in curve.accuracy.tolist()],
            got[model]["accuracy"],
        )


def test_buzz_rates_and_player_scores_match_the_reference() -> None:
    _, buzzes = random_data(11)
    table = BuzzTable.from_rows(buzzes)
    grid = np.linspace(0, 1, 21)
    heard: dict[str, int] = {}
    for _, team, _ in table.heard:
        heard[team] = heard.get(team, 0) + 1
    reference = cumulative_buzz_rates(
        [
            BuzzRecord(r["team"], r["team_kind"], f"{r['match']}\x1f{r['question_id']}",
                       r["word_index"], r["n_words"], bool(r["correct"]))
            for r in buzzes
        ],
        grid=grid,
        questions_played=heard,
    )  # fmt: skip
    got = buzz_rate_curves(table, grid)
    assert set(got) == set(reference)
    for team, curve in reference.items():
        assert_same(curve.correct.tolist(), got[team]["correct"])
        assert_same(curve.incorrect.tolist(), got[team]["incorrect"])
        assert got[team]["n_questions"] == curve.n_questions

    # players: every player credited with each question their team heard in that match
    first: dict[tuple[str, str, str], tuple[int, float, bool]] = {}
    roster: dict[tuple[str, str], set[str]] = {}
    for r in buzzes:
        roster.setdefault((r["match"], r["team"]), set()).add(r["player"])
        key = (r["match"], r["player"], r["question_id"])
        c = min((r["clue_index"] + 1) / r["n_clues"], 1.0)
        if key not in first or r["word_index"] < first[key][0]:
            first[key] = (r["word_index"], c, bool(r["correct"]))
    records = []
    for match, team, question in table.heard:
        for player in roster.get((match, team), ()):
            hit = first.get((match, player, question))
            records.append((player, None if hit is None else hit[1], bool(hit and hit[2])))
    expected = [(r.player, r.mean_score, r.n) for r in rank_players(records)]
    got_players = [(p, score, n) for p, _, score, n in player_scores(table)]
    assert_same(expected, got_players)


def test_first_buzzes_take_the_earliest_buzz_of_each_heard_question() -> None:
    table = BuzzTable.from_rows(
        [
            {"question_id": "q", "team": "A", "team_kind": "human", "word_index": 9,
             "correct": 1, "n_words": 10},
            {"question_id": "q", "team": "A", "team_kind": "human", "word_index": 4,
             "correct": 0, "n_words": 10},
            {"question_id": "r", "team": "B", "team_kind": "model", "word_index": 1,
             "correct": 1, "n_words": 4},
        ]
    )  # fmt: skip
    fb = first_buzzes(table)
    got = {
        (t, q): (None if math.isnan(x) else x, c)
        for t, q, x, c in zip(fb.team, fb.question_id, fb.fraction, fb.correct, strict=True)
    }
    assert got == {
        ("A", "q"): (0.5, False),
        ("A", "r"): (None, False),  # heard, no buzz
        ("B", "q"): (None, False),
        ("B", "r"): (0.5, True),
    }


def test_a_duplicate_step_is_refused_with_its_name() -> None:
    steps, _ = random_data(0)
    with pytest.raises(ValueError, match="duplicate step: model='m-b'"):
        model_rows(StepTable.from_rows([*steps, steps[0]]))


def test_analyze_on_empty_inputs_is_defined() -> None:
    result = analyze(StepTable.empty(), BuzzTable.empty(), n_resamples=10)
    assert result["models"] == {} and result["teams"] == {} and result["players"] == []
    assert result["expected_wins"]["human_curve"] is None


def test_the_analysis_imports_no_framework() -> None:
    """The analysis runs without the server, the TUI or the model client; the computing
    modules do not even need the database layer."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import grace_arena.analysis, grace_arena.analysis.columnar, grace_arena.analysis.summary\n"
        "import grace_arena.analysis.tables, grace_arena.analysis.report\n"
        "pure = [m for m in ('sqlmodel', 'sqlalchemy') if m in sys.modules]\n"
        "import grace_arena.analysis.record_io, grace_arena.analysis.exports\n"
        "import grace_arena.analysis.imports\n"
        "bad = ['fastapi', 'textual', 'litellm', 'uvicorn', 'websockets', 'matplotlib']\n"
        "print(pure, [m for m in bad if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] []", out.stdout
