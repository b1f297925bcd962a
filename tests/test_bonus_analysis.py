"""The bonus section of the analysis (grace_arena.analysis.bonuses) on tables small enough
to work by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from grace_arena.analysis.bonuses import analyze_bonuses, wilson
from grace_arena.io.record_io import BONUS_PART_COLUMNS, CHOICE_COLUMNS


def parts_table() -> pd.DataFrame:
    # model m on 2 bonuses of 2 parts: confidences 0.9 (right), 0.8 (wrong), 0.3 (wrong),
    # 0.2 (right); no verbal confidence
    rows = [
        ("m", "p", "b1", 0, "e", "Science", "x", 0.9, None, 1, True),
        ("m", "p", "b1", 1, "h", "Science", "y", 0.8, None, 0, True),
        ("m", "p", "b2", 0, "e", "History", "z", 0.3, None, 0, False),
        ("m", "p", "b2", 1, "m", "History", "w", 0.2, None, 1, False),
    ]
    return pd.DataFrame(rows, columns=list(BONUS_PART_COLUMNS))


def choices_table() -> pd.DataFrame:
    def row(part, choice, consulted, guess, conf, model_correct, draft, draft_correct, answer,
            correct, points, agreed, changed, bonus="b1", team="Red"):  # fmt: skip
        right = (choice == "abstain" and points > 0) if choice == "abstain" else None
        return ("1", "ev", team, "p", bonus, part, None, None, choice, consulted, "m", guess,
                conf, model_correct, draft, draft_correct, answer, correct, points, agreed,
                changed, right)  # fmt: skip

    rows = [
        # consulted a right model (0.9), drafted wrong, gave the model's answer: better
        row(0, "consult", True, "x", 0.9, True, "q", False, "x", True, 10, True, True),
        # consulted a wrong model (0.8), drafted right, followed the model: worse
        row(1, "consult", True, "y", 0.8, False, "r", True, "y", False, 0, True, True),
        # alone, right; then an abstention where the model was wrong (right: 5)
        row(0, "own", False, None, None, None, None, None, "z", True, 15, None, None, "b2", "Blue"),
        row(1, "abstain", False, None, None, None, None, None, None, False, 5, None, None, "b2",
            "Blue"),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=list(CHOICE_COLUMNS))


def test_calibration_per_part_is_worked_by_hand() -> None:
    out = analyze_bonuses(parts_table(), None, n_resamples=0)
    m = out["models"]["m"]
    assert set(m) == {"logit"}  # no verbal confidence: left out, said once
    assert out["notes"] == ["m gave no verbal confidence on bonus parts: not measured"]
    logit = m["logit"]
    assert (logit["n"], logit["bonuses"], logit["accuracy"]) == (4, 2, 0.5)
    # bins: 0.9 → |1 − 0.9|, 0.8 → |0 − 0.8|, 0.3 → |0 − 0.3|, 0.2 → |1 − 0.2|, each 1/4
    assert logit["ece_10_bin"] == pytest.approx((0.1 + 0.8 + 0.3 + 0.8) / 4)
    assert logit["brier"] == pytest.approx((0.01 + 0.64 + 0.09 + 0.64) / 4)
    assert logit["selective_acc@10"] == 1.0  # the most confident part is right
    assert [b["count"] for b in logit["reliability"] if b["count"]] == [1, 1, 1, 1]
    assert logit["small_sample"] is True
    assert list(logit["by_difficulty"]) == ["e", "m", "h"]
    assert logit["by_difficulty"]["e"]["accuracy"] == 0.5
    assert set(logit["by_category"]) == {"History", "Science"}


def test_consults_abstentions_and_reliance_are_counted_by_hand() -> None:
    out = analyze_bonuses(parts_table(), choices_table(), n_resamples=0)
    c = out["consult"]["all"]
    assert (c["parts"], c["points"]) == (4, 30)
    assert (c["consult_rate"]["k"], c["consult_rate"]["n"]) == (2, 4)
    assert c["consult_rate"]["ci"] == list(wilson(2, 4))
    assert (c["consult_accuracy"]["k"], c["consult_accuracy"]["n"]) == (1, 2)
    assert (c["own_accuracy"]["k"], c["own_accuracy"]["n"]) == (1, 1)
    assert (c["abstained_right"]["k"], c["abstained_right"]["n"]) == (1, 1)
    assert (c["changed_for_the_better"], c["changed_for_the_worse"]) == (1, 1)
    assert (c["followed_the_model"]["k"], c["followed_the_model"]["n"]) == (2, 2)
    assert set(out["consult"]["teams"]) == {"Blue", "Red"}
    # the teams answered 3 of 4 parts, 1 wrong; the model at coverage 3/4 keeps 0.9, 0.8, 0.3
    s = out["selective"]
    assert s["team"] == {"coverage": 0.75, "risk": pytest.approx(1 / 3)}
    assert s["model_at_team_coverage"] == {"coverage": 0.75, "risk": pytest.approx(2 / 3)}
    assert s["model_full_coverage_risk"] == 0.5
    bins = {b["lower"]: b for b in out["reliance"]["bins"]}
    assert bins[0.8]["n"] == 2 and bins[0.8]["reliance"]["k"] == 2
    assert bins[0.8]["model_accuracy"]["k"] == 1


def test_a_right_abstention_is_right_whatever_it_scores_and_choices_alone_do() -> None:
    choices = choices_table()
    choices.loc[3, "points"] = 0  # --consult-points 15,10,0: right, and worth nothing
    out = analyze_bonuses(None, choices, n_resamples=0)
    assert out["consult"]["all"]["abstained_right"]["k"] == 1
    assert out["models"] == {} and out["selective"]["model_parts"] == 0  # no model table


def test_an_answer_said_aloud_after_a_consult_is_left_out_of_what_needs_it() -> None:
    choices = choices_table()
    choices.loc[0, ["answer", "agreed", "changed"]] = [None, None, None]  # said aloud
    c = analyze_bonuses(None, choices, n_resamples=0)["consult"]["all"]
    assert c["answered_aloud_after_consult"] == 1
    assert (c["followed_the_model"]["k"], c["followed_the_model"]["n"]) == (1, 1)
    assert (c["changed_after_consult"]["k"], c["changed_after_consult"]["n"]) == (1, 1)
    assert (c["consult_accuracy"]["k"], c["consult_accuracy"]["n"]) == (1, 2)  # still ruled


def test_nothing_to_say_without_bonus_data() -> None:
    assert analyze_bonuses(None, None) is None
    assert wilson(0, 0) == (None, None)
    low, high = wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
