"""``analyze`` (what ``grace-arena analyze`` computes) against hand-worked numbers.

The metrics are defined once (:mod:`grace_arena.analysis.metrics`, ``curves``); these tests
check that the analysis feeds them the right rows: per model and confidence kind, all steps,
final steps, per category, h_t from the human buzzes, missing confidences left out, and
bootstrap intervals over questions.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from grace_arena.analysis.metrics import METRICS, QUESTION_METRICS
from grace_arena.analysis.metrics import normalized_sigmoid as r
from grace_arena.analysis.summary import analyze

COLUMNS = ("model", "question_id", "step", "word_index", "correct", "confidence_logit",
           "confidence_verbal", "category")  # fmt: skip
STEPS = [
    ("m1", "q1", 1, 9, False, 0.5, 0.3, "Science"),
    ("m1", "q1", 2, 19, True, 0.8, None, "Science"),
    ("m1", "q2", 1, 4, False, 0.9, None, "History"),
    ("m1", "q2", 2, 9, False, 0.2, None, "History"),
    ("m2", "q1", 1, 9, True, 1.0, 1.0, "Science"),
    ("m2", "q1", 2, 19, True, 1.0, 1.0, "Science"),
]
# q1: team A right at word 12, team B wrong at 3 → h = [0/2, 1/2] at words 9 and 19.
HUMANS = [
    {"question_id": "q1", "team": "A", "team_kind": "human", "word_index": 12, "correct": 1},
    {"question_id": "q1", "team": "B", "team_kind": "human", "word_index": 3, "correct": 0},
]


def run(steps=STEPS, humans=HUMANS, **kw):
    table = pd.DataFrame([dict(zip(COLUMNS, s, strict=True)) for s in steps])
    return analyze(table, pd.DataFrame(humans), n_resamples=kw.pop("n_resamples", 0), **kw)


def test_shape_and_json() -> None:
    result = run()
    assert set(result["models"]) == {"m1", "m2"}
    metrics = result["models"]["m1"]["logit"]
    decomposition = {f"brier_{p}" for p in ("reliability", "resolution", "uncertainty", "binned")}
    flat = {*QUESTION_METRICS, *METRICS, *decomposition, "n", "n_missing", "n_questions",
            "n_questions_skipped"}  # fmt: skip
    assert flat <= set(metrics) and flat <= set(metrics["final"])
    assert set(metrics["by_category"]) == {"History", "Science"}
    assert set(metrics["by_category"]["Science"]) == flat
    json.dumps(result, allow_nan=False)


def test_logit_numbers() -> None:
    m = run()["models"]["m1"]["logit"]
    # q1: mean((1−0)(−1)(0.5), (1−½)(+1)(0.8)) = −0.05;  q2 (no humans): (−0.9 − 0.2)/2 = −0.55
    assert m["calscore"] == pytest.approx(((1 - r(-0.05)) + (1 - r(-0.55))) / 2)
    # MCE ignores humans: q1 (−0.5 + 0.8)/2 = 0.15; q2 −0.55
    assert m["mce_grace"] == pytest.approx(((1 - r(0.15)) + (1 - r(-0.55))) / 2)
    # reference code: q1 1 − (0 + ½·0.8)/2 = 0.8; q2 1 − 0 = 1 → 0.9
    assert m["calscore_ref"] == pytest.approx(0.9)
    # rows: (0.5,0) (0.8,1) (0.9,0) (0.2,0): Brier (0.25 + 0.04 + 0.81 + 0.04)/4 = 0.285
    assert m["brier"] == pytest.approx(0.285)
    assert (m["n"], m["n_missing"], m["n_questions"], m["n_questions_skipped"]) == (4, 0, 2, 0)
    # final steps: (0.8, right, h=½) and (0.2, wrong, h=0); Brier (0.04 + 0.04)/2
    final = m["final"]
    assert final["brier"] == pytest.approx(0.04)
    assert final["calscore"] == pytest.approx(((1 - r(0.4)) + (1 - r(-0.2))) / 2)
    assert final["n"] == 2
    # by category: History is q2 alone
    assert m["by_category"]["History"]["calscore"] == pytest.approx(1 - r(-0.55))
    assert m["by_category"]["History"]["n"] == 2


def test_paper_h_definition() -> None:
    # Add C right at word 15. At the last word of step 1 (9) only B's neg at 3 is heard:
    # reference 0 correct teams / 3 buzzes, paper 0 / 1: both 0. At word 19 all three are
    # heard: reference 2 / 3, paper 2 / 3. A neg heard early only moves the paper's
    # denominator, so make the step end between B's neg and A's buzz to tell them apart.
    humans = [*HUMANS, {"question_id": "q1", "team": "C", "team_kind": "human",
                        "word_index": 15, "correct": 1}]  # fmt: skip
    ref = run(humans=humans)["models"]["m1"]["logit"]["calscore"]
    paper = run(humans=humans, h_definition="paper")["models"]["m1"]["logit"]["calscore"]
    expected = ((1 - r((-0.5 + (1 - 2 / 3) * 0.8) / 2)) + (1 - r(-0.55))) / 2
    assert ref == pytest.approx(expected) and paper == pytest.approx(expected)
    # steps ending at word 13: reference h = 1 (A) / 3 buzzes; paper 1 correct / 2 heard
    steps = [("m1", "q1", 1, 13, True, 1.0, None, None)]
    ref = run(steps=steps, humans=humans)["models"]["m1"]["logit"]["calscore"]
    paper = run(steps=steps, humans=humans, h_definition="paper")["models"]["m1"]["logit"]
    assert ref == pytest.approx(1 - r(2 / 3))
    assert paper["calscore"] == pytest.approx(1 - r(1 / 2))


def test_missing_confidences_are_left_out() -> None:
    m = run()["models"]["m1"]["verbal"]
    # Only q1 step 1 has a verbal confidence: 0.3, wrong, h = 0 → 1 − r(−0.3)
    assert m["calscore"] == pytest.approx(1 - r(-0.3))
    assert (m["n"], m["n_missing"]) == (1, 3)
    assert (m["n_questions"], m["n_questions_skipped"]) == (1, 1)
    assert m["bss"] is None  # one row, one class
    final = m["final"]
    assert final["calscore"] is None
    assert (final["n"], final["n_missing"], final["n_questions_skipped"]) == (0, 2, 2)


def test_perfect_model_before_any_human() -> None:
    m = run(humans=[])["models"]["m2"]["logit"]
    assert m["calscore"] == pytest.approx(0.0, abs=1e-12)
    assert m["ece"] == pytest.approx(0.0)
    # With the humans, step 2 is weighted by ½: mean (1 + ½)/2 = ¾ → 1 − r(¾)
    assert run()["models"]["m2"]["logit"]["calscore"] == pytest.approx(1 - r(0.75))


def test_bootstrap_interval_brackets_the_two_questions() -> None:
    m = run(n_resamples=200, seed=3)["models"]["m1"]["logit"]
    low, high = m["ci"]["calscore"]
    q1, q2 = 1 - r(-0.05), 1 - r(-0.55)
    assert low == pytest.approx(min(q1, q2)) and high == pytest.approx(max(q1, q2))
    # Brier: q1 twice (0.25 + 0.04)/2 = 0.145 ... q2 twice (0.81 + 0.04)/2 = 0.425
    assert m["ci"]["brier"] == pytest.approx([0.145, 0.425])
    # m2 has one question: the interval collapses onto the value
    m2 = run(n_resamples=20)["models"]["m2"]["logit"]
    assert m2["ci"]["ece"] == pytest.approx([m2["ece"], m2["ece"]])


def test_duplicate_and_out_of_range_steps_are_rejected() -> None:
    with pytest.raises(ValueError, match="duplicate step"):
        run(steps=[STEPS[0], STEPS[0]])
    bad = ("m1", "q7", 3, 10, True, 1.7, None, None)
    with pytest.raises(ValueError, match=r"confidence_logit .* 1\.7 at model='m1' question='q7'"):
        run(steps=[bad])


def test_sh_and_accuracy() -> None:
    m = run()["models"]["m1"]["logit"]
    assert m["accuracy"] == pytest.approx(0.25)
    assert m["final"]["accuracy"] == pytest.approx(0.5)
    # SH per question (appendix H): q1 c = [0.5, 0.8], g = [0, 1], h = [0, ½]:
    # b = [0.5, 0.4], b·g = [0, 0.4], K = [0, ½·0.4]; SH = 0.2 + (1 − ½)·0.4 = 0.4
    # q2 never right: 0 → mean 0.2
    assert m["sh"] == pytest.approx(0.2)
    assert not math.isnan(m["sh"])
    # accuracy over the rows each confidence kind scores: m1 has one verbal confidence
    # (q1 step 1, wrong), which is not a final step
    verbal = run()["models"]["m1"]["verbal"]
    assert verbal["n"] == 1 and verbal["accuracy"] == 0.0
    assert verbal["final"]["accuracy"] is None


def test_report_tables_escape_what_markdown_and_html_would_read() -> None:
    """Every table of report.md parses (markdown-it, as report.html is made) into rows of as
    many cells as its header, and names with pipes, markup or HTML come out as text."""
    from markdown_it import MarkdownIt

    from grace_arena.analysis.report import html_report, markdown_report

    hostile = "a|b *c* <script>x</script> [l](u) _d_"
    steps = pd.DataFrame([dict(zip(COLUMNS, s, strict=True)) for s in STEPS])
    steps["model"] = steps["model"].replace("m2", hostile)
    steps["would_buzz"] = (steps["confidence_logit"] > 0.6).astype(int)  # figure 6's table
    humans = pd.DataFrame([{**h, "team": "Red | *bold*"} for h in HUMANS])
    result = analyze(steps, humans, n_resamples=20)
    markdown = markdown_report(result)
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    tables = 0
    widths: list[int] = []
    for token in tokens:
        if token.type == "table_open":
            tables, widths = tables + 1, []
        elif token.type == "tr_open":
            widths.append(0)
        elif token.type in ("th_open", "td_open"):
            widths[-1] += 1
        elif token.type == "table_close":
            assert len(set(widths)) == 1, widths  # header and every row alike
    assert tables >= 8
    assert "P(buzz \\| correct)" in markdown
    html = html_report(markdown)
    assert "<script>" not in html and "<em>" not in html
    assert "a|b *c* &lt;script&gt;x&lt;/script&gt; [l](u) _d_" in html
    assert "<th>P(buzz | correct)</th>" in html and "<td>Red | *bold*</td>" in html


def test_the_analysis_intervals_are_bootstrap_ci_s() -> None:
    """analyze computes every interval in one matrix product per chunk of resamples; each is
    what bootstrap_ci gives for that model, confidence kind and set of steps."""
    from grace_arena.analysis.metrics import bootstrap_ci, human_fraction

    rng = np.random.default_rng(7)
    rows = []
    for model in ("a", "b"):
        for q in range(30):
            for step in range(5):
                c = float(np.clip((step + 1) / 5 * rng.uniform(0.5, 1.3), 0, 1))
                right = bool(rng.random() < c * 0.8)
                verbal = round(c, 1) if rng.random() > 0.1 else None
                rows.append((model, f"q{q:02d}", step, 10 * step + 9, right, c, verbal, "Science"))
    steps = pd.DataFrame([dict(zip(COLUMNS, r, strict=True)) for r in rows])
    humans = pd.DataFrame(
        [
            {
                "question_id": f"q{q:02d}",
                "team": f"T{t}",
                "team_kind": "human",
                "word_index": int(rng.integers(0, 50)),
                "correct": int(rng.random() < 0.6),
            }
            for q in range(30)
            for t in range(3)
        ]
    )
    result = analyze(steps, humans, n_resamples=300, seed=4)
    for model in ("a", "b"):
        mine = steps[steps.model == model].sort_values(["question_id", "step"])
        h = human_fraction(mine.word_index, humans.word_index, humans.correct,
                           step_groups=mine.question_id, buzz_groups=humans.question_id,
                           buzz_team=humans.team)  # fmt: skip
        last = mine.groupby("question_id").step.transform("max") == mine.step
        for kind in ("logit", "verbal"):
            conf = mine[f"confidence_{kind}"].to_numpy(dtype=float)
            for scope, use in (("all", np.ones(len(mine), bool)), ("final", last.to_numpy())):
                m = result["models"][model][kind]
                block = m if scope == "all" else m["final"]
                for metric in ("calscore", "ece", "brier"):
                    expected = bootstrap_ci(
                        conf[use], mine.correct.to_numpy(float)[use],
                        groups=mine.question_id.to_numpy()[use], metric=metric,
                        human_frac=h[use], n_resamples=300, seed=4,
                    )  # fmt: skip
                    assert block["ci"][metric] == pytest.approx(list(expected), abs=1e-6), (
                        model, kind, scope, metric,
                    )  # fmt: skip


def test_first_buzz_rows_and_key_lookups_agree_on_both_paths() -> None:
    """The earliest buzz per key (lowest word, then first row) is the same whether it is
    found by one packed sort or, where the packed key could overflow, by a lexsort; the
    count of each key the same by a counting pass or by a sort; absent keys look up −1."""
    from grace_arena.analysis import summary

    rng = np.random.default_rng(3)
    keys = rng.integers(0, 50, 2000)
    words = rng.integers(0, 8, 2000)  # many ties on (key, word): the first row wins
    got_keys, got_rows = summary._first_rows(keys, words)
    want = {}
    for row, (k, w) in enumerate(zip(keys.tolist(), words.tolist(), strict=True)):
        if k not in want or w < words[want[k]]:
            want[k] = row
    assert got_keys.tolist() == sorted(want)
    assert got_rows.tolist() == [want[k] for k in sorted(want)]
    huge = keys * 2**55  # (key + 1) · span · n no longer fits in 63 bits: the lexsort path
    lex_keys, lex_rows = summary._first_rows(huge, words)
    assert (
        lex_keys.tolist() == (got_keys * 2**55).tolist() and lex_rows.tolist() == got_rows.tolist()
    )

    for spread in (1, 2**40):  # a counting pass, then np.unique
        present, counts = summary.distinct_counts(keys * spread)
        values, expected = np.unique(keys * spread, return_counts=True)
        assert present.tolist() == values.tolist() and counts.tolist() == expected.tolist()
    assert summary._lookup(np.array([2, 5, 9]), np.array([5, 1, 9, 10, 2])).tolist() == [
        1, -1, 2, -1, 0,
    ]  # fmt: skip
    assert summary._lookup(np.array([], dtype=np.int64), np.array([3])).tolist() == [-1]


def test_a_missing_name_in_a_plain_text_column_reads_as_an_empty_name() -> None:
    """A missing player (or match) in a plain-text column is one more name, "", as it is in
    a categorical column: its buzz is not credited to anybody else."""
    from grace_arena.analysis.summary import shared_codes

    codes, names = shared_codes(pd.Series(["a", None, "b"]))
    assert names.tolist() == ["", "a", "b"] and codes[0].tolist() == [1, 0, 2]
    buzzes = pd.DataFrame(
        {
            "question_id": pd.Categorical(["q1", "q2", "q1"]),
            "team": pd.Categorical(["A", "A", "B"]),
            "team_kind": ["human"] * 3,
            "word_index": [3, 5, 4],
            "correct": [1, 0, 1],
            "match": ["m1"] * 3,
            "player": ["ann", None, "bob"],
            "n_words": [10, 10, 10],
        }
    )
    players = {p["player"]: p for p in analyze(None, buzzes, n_resamples=0)["players"]}
    assert sorted(players) == ["", "ann", "bob"]
    # ann: right at 4/10 of q1 (20 − 8 = 12), silent on q2 (0); bob: right at 5/10 of q1
    assert (players["ann"]["team"], players["ann"]["mean_score"]) == ("A", 6.0)
    assert (players["bob"]["team"], players["bob"]["mean_score"]) == ("B", 5.0)
    assert (players[""]["team"], players[""]["mean_score"]) == ("A", -2.5)


def test_buzzes_that_nobody_is_listed_as_having_heard_rank_no_player() -> None:
    buzzes = pd.DataFrame(
        {"question_id": ["q1"], "team": ["A"], "team_kind": ["human"], "word_index": [3],
         "correct": [1]}
    )  # fmt: skip
    assert analyze(None, buzzes, heard=[], n_resamples=0)["players"] == []


def test_rank_players_refuses_a_code_that_names_nobody() -> None:
    from grace_arena.analysis.curves import rank_players

    with pytest.raises(ValueError, match=r"player must index the 2 names, got player\[1\] = 2"):
        rank_players([0, 2], [0.5, 0.5], [1, 1], names=["ann", "bob"])
