"""The judge on QANTA's real answer lines, where the data is beside the project.

The rows themselves are committed in tests/judge_regression.csv and checked by test_judge.py
without the data; these tests check that those rows are the ones tests/judge_qanta.py makes from
the data, and the rates the work on the judge is held to.
"""

from __future__ import annotations

import csv

import pytest
from judge_qanta import (
    DATA,
    EXCLUDED,
    NOT_HANDLED,
    NOTE,
    TABLE,
    build_rows,
    load_pairs,
    page_title,
    rates,
)

pytestmark = pytest.mark.skipif(not DATA.exists(), reason=f"{DATA} is absent")


@pytest.fixture(scope="module")
def pairs() -> list:
    return load_pairs()


def test_the_table_holds_the_rows_made_from_the_data(pairs: list) -> None:
    with TABLE.open(newline="", encoding="utf-8") as f:
        committed = [row for row in csv.DictReader(f) if row["note"].startswith(NOTE)]
    made = build_rows(pairs)
    assert len(committed) == len(made) >= 800
    assert committed == made, "run: .venv/bin/python tests/judge_qanta.py --write"


def test_page_titles_are_taken_by_their_own_lines_and_never_by_unrelated_ones(
    pairs: list,
) -> None:
    measured = rates(pairs)
    print(measured)
    assert measured["rate"] >= 0.95
    assert measured["unrelated_accepts"] == 0
    assert measured["kept"] == measured["pairs"] - sum(p.page in EXCLUDED for p in pairs)


def test_every_page_left_out_or_not_handled_says_why(pairs: list) -> None:
    pages = {pair.page for pair in pairs}
    for page, reason in EXCLUDED.items():
        assert page in pages and len(reason) > 10, page
    for page, (expected, reason) in NOT_HANDLED.items():
        assert page in pages and expected in ("accept", "prompt") and len(reason) > 10, page


def test_page_title() -> None:
    assert page_title("Louis_XIII_of_France") == "Louis XIII of France"
    assert page_title("The_Awakening_(Chopin_novel)") == "The Awakening"
    assert page_title("Abydos,_Egypt") == "Abydos, Egypt"
