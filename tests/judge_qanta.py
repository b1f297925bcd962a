"""Regression rows for the answer judge from real answer lines: QANTA's questions.

``../shared/data/qanta.buzzdev.json.gz`` (beside the project, not part of it) holds 1,152 past
quizbowl questions, each with an answer line (``answer``) and a canonical answer (``page``, a
Wikipedia title). For every distinct (answer line, page) pair:

* the page's title, underscores and parenthesized qualifiers removed, is judged against its own
  answer line: it should be accepted or prompted;
* it is judged against five unrelated answer lines, which should reject it. An unrelated line
  belongs to a question with another page and shares no word of substance with the title (a
  line that names the answer in passing, "South African mining" for South Africa, is related).

Pages that do not name the answer at all are left out, each with its reason (``EXCLUDED``);
pages the judge does not take yet stay in the table as known failures with their reason
(``NOT_HANDLED``). The rows are committed in ``tests/judge_regression.csv`` so that the tests
need nothing from outside the project; ``tests/test_judge_qanta.py`` checks, where the data is
present, that the table holds exactly these rows and that the rates hold.

    .venv/bin/python tests/judge_qanta.py           # print the rates
    .venv/bin/python tests/judge_qanta.py --write   # rewrite the QANTA rows of the table
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import random
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from grace_arena.core.judge import Directive, judge, normalize
from grace_arena.core.judge.text import FILLER, stem

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "qanta.buzzdev.json.gz"
TABLE = Path(__file__).with_name("judge_regression.csv")
NOTE = "QANTA"  # every row this module writes has a note that starts with this
UNRELATED_PER_PAGE = 5

_CHARACTER = "the page is the work; the answer is a character in it"
EXCLUDED: dict[str, str] = {
    "The_Sound_and_the_Fury": _CHARACTER,
    "The_Awakening_(Chopin_novel)": _CHARACTER,
    "The_Magic_Mountain": _CHARACTER,
    "My_Ántonia": _CHARACTER,
    "Of_Mice_and_Men": _CHARACTER,
    "One_Hundred_Years_of_Solitude": _CHARACTER,
    "The_Dead_(short_story)": _CHARACTER,
    "Middlemarch": _CHARACTER,
    "The_Tin_Drum": _CHARACTER,
    "The_Wife_of_Bath's_Tale": "the page is the tale; the answer is its teller",
    "Cupid_and_Psyche": "the page is the story; the answer is one of its two characters",
    "Oresteia": "the page is the trilogy; the answer is one of its plays",
    "Πάν": "the page title is in Greek script",
    "Indian_Rebellion_of_1857": "the page belongs to another question (the answer is the "
    "mutiny on the Bounty)",
    "Josa": "the page title is not a name of the answer (José Saramago)",
    "DER": "the page title is not a name of the answer (Russia and Ukraine)",
    "String_octet": "the answer line lost its first letter (tring octets)",
    "Substitution_reaction": "the answer line lost its first letter (ubstitution)",
    "Integrin": "the answer line lost its first letter (ntegrins)",
    "Graph_coloring": "the page is the topic; the answer is a number defined in it",
    "Identity_document": "the page is documents in general; the answer is one card",
    "Biological_life_cycle": "the page is another concept than the answer (an economic hypothesis)",
    "Drainage_system_(geomorphology)": "the page is a landform pattern; the answer is river "
    "systems",
    "Dynamo_theory": "the page is the theory; the answer is the dynamo itself",
    "Deformation_(engineering)": "the page is deformation; the answer is one measure of it",
    "Economic_surplus": "the page is surplus in general; the answer is one kind of it",
    "China–India_relations": "the page is the relations; the answer names the two states",
    "Trigonometric_functions": "the page is the functions; the answer is one of them",
    "Pupillary_response": "the page is the response; the answer is one kind of it",
    "French_Revolution": "the page is the event; the answer is the state it made",
    "Intelligence_quotient": "the page is the score; the answer is the tests",
    "Matter_wave": "the page is the wave; the answer is its wavelength",
    "Fight-or-flight_response": "the page is one response; the answer is the stress response",
    "Witchcraft": "the page is the practice; the answer is the people",
    "Michaelis–Menten_kinetics": "the page is the kinetics; the answer is its equation",
    "Spin–spin_relaxation": "the page is one relaxation; the answer is spin relaxation in general",
}
NOT_HANDLED: dict[str, tuple[str, str]] = {
    "Nitrogen": ("prompt", "an element given for its molecule (dinitrogen gas)"),
    "Flag_of_the_United_States": ("accept", "reordered words with a demonym (American flag)"),
    "Linearity": ("accept", "a derivation (-ity) on a line without a word forms clause"),
    "Good": ("accept", "a derivation (goodness) on a line without a word forms clause"),
    "Irreducible_polynomial": ("prompt", "reordered words against a misspelt line"),
    "Fujiwara_no_Michinaga": ("accept", "a Japanese name in the other order"),
    "Exact_sequence": ("prompt", "an adjective answer given with the noun it describes"),
    "Ancient_Egypt": ("accept", "a place given for its people (Egypt, Egyptians)"),
    "Speaker_of_the_United_States_House_of_Representatives": (
        "accept",
        "a qualifier inside the answer (United States)",
    ),
    "Haitian_Vodou": ("prompt", "an adjective before a capitalized name"),
    "Stanford_prison_experiment": ("accept", "a word after the answer saying what it was"),
    "2015_United_Kingdom_general_election": ("accept", "reordered words"),
    "2015_FIFA_corruption_case": ("accept", "a synonym (case, scandal)"),
    "Thermal_efficiency": ("accept", "a synonym (thermal, thermodynamic)"),
    "Bach_cantata": ("accept", "reordered words"),
    "Mining_industry_of_South_Africa": ("accept", "reordered words with a demonym"),
    "Superfluid_helium-4": ("accept", "reordered number and element (helium-4, 4-helium)"),
    "French_campaign_in_Egypt_and_Syria": ("accept", "a synonym (campaign, invasion)"),
    "Roman_currency": ("accept", "a synonym (currency, coins)"),
    "Morgan_le_Fay": ("accept", "a spelling variant in a word of three letters (Fay, Fey)"),
}


def page_title(page: str) -> str:
    """``Louis_XIII_of_France`` -> ``Louis XIII of France``; ``Thebes_(Greece)`` -> ``Thebes``."""
    return re.sub(r"\s*\([^)]*\)", "", page.replace("_", " ")).strip()


@dataclass(frozen=True)
class Pair:
    qanta_id: int
    answer: str
    page: str

    @property
    def title(self) -> str:
        return page_title(self.page)


def load_pairs(path: Path = DATA) -> list[Pair]:
    """Distinct (answer line, page) pairs of the questions that have a page, in file order."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        questions = json.load(f)
    seen: set[tuple[str, str]] = set()
    pairs: list[Pair] = []
    for q in questions:
        if q.get("page") and (q["answer"], q["page"]) not in seen:
            seen.add((q["answer"], q["page"]))
            pairs.append(Pair(int(q["qanta_id"]), q["answer"], q["page"]))
    return pairs


@cache
def _substance(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in normalize(text).split() if len(w) >= 3 and w not in FILLER)


def unrelated_lines(pair: Pair, pairs: list[Pair], k: int = UNRELATED_PER_PAGE) -> list[str]:
    """``k`` answer lines of other pages that share no word of substance with the title,
    chosen by a generator seeded with the question's id (the same lines every time)."""
    words = _substance(pair.title)
    pool = sorted(
        {p.answer for p in pairs if p.page != pair.page and not words & _substance(p.answer)}
    )
    return random.Random(pair.qanta_id).sample(pool, k)


def check_lists(pairs: list[Pair]) -> None:
    """Every page named in ``EXCLUDED`` and ``NOT_HANDLED`` is in the data."""
    pages = {pair.page for pair in pairs}
    stale = sorted(set(EXCLUDED) - pages) + sorted(set(NOT_HANDLED) - pages)
    if stale:
        raise ValueError(f"pages not in the data: {stale}")


def build_rows(pairs: list[Pair]) -> list[dict[str, str]]:
    check_lists(pairs)
    rows: list[dict[str, str]] = []
    for pair in pairs:
        if pair.page in EXCLUDED:
            continue
        note = f"{NOTE} {pair.qanta_id}: page title against its own line"
        if pair.page in NOT_HANDLED:
            expected, reason = NOT_HANDLED[pair.page]
            note += f"; known_failure: {reason}"
        else:
            verdict = judge(pair.title, pair.answer).directive
            # A title its own line rejects must be excluded or listed as not handled.
            expected = verdict.value if verdict is not Directive.REJECT else "accept"
        rows.append(_row(pair.answer, pair.title, expected, note))
        for line in unrelated_lines(pair, pairs):
            note = f"{NOTE} {pair.qanta_id}: page title against an unrelated line"
            rows.append(_row(line, pair.title, "reject", note))
    return rows


def _row(line: str, given: str, expected: str, note: str) -> dict[str, str]:
    return {
        "answer_line": line,
        "given": given,
        "expected": expected,
        "prompt_question": "",
        "note": note,
    }


def rates(pairs: list[Pair]) -> dict[str, float | int]:
    """How the judge does on the pairs: own lines taken, and unrelated lines that do not
    reject (the issue's measure was over questions; both are given)."""
    kept = [p for p in pairs if p.page not in EXCLUDED]
    taken = [judge(p.title, p.answer).directive is not Directive.REJECT for p in kept]
    accepts = prompts = 0
    for pair in kept:
        for line in unrelated_lines(pair, pairs):
            directive = judge(pair.title, line).directive
            accepts += directive is Directive.ACCEPT
            prompts += directive is Directive.PROMPT
    return {
        "pairs": len(pairs),
        "kept": len(kept),
        "taken": sum(taken),
        "rate": sum(taken) / len(kept),
        "all_pairs_rate": sum(
            judge(p.title, p.answer).directive is not Directive.REJECT for p in pairs
        )
        / len(pairs),
        "unrelated": UNRELATED_PER_PAGE * len(kept),
        "unrelated_accepts": accepts,
        "unrelated_prompts": prompts,
    }


def write_table(rows: list[dict[str, str]], table: Path = TABLE) -> None:
    """Replace the table's QANTA rows by ``rows``, keeping every other row as it is."""
    with table.open(newline="", encoding="utf-8") as f:
        kept = [row for row in csv.DictReader(f) if not row["note"].startswith(NOTE)]
    with table.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept + rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the QANTA rows")
    args = parser.parse_args()
    pairs = load_pairs()
    for name, value in rates(pairs).items():
        print(f"{name}: {value:.4f}" if isinstance(value, float) else f"{name}: {value}")
    if args.write:
        rows = build_rows(pairs)
        write_table(rows)
        print(f"wrote {len(rows)} rows to {TABLE}")


if __name__ == "__main__":
    main()
