"""Content checks for the committed sample packet and practice corpus.

These tests read the files as plain YAML/JSON on purpose: they check the content
(counts, categories, pyramidal shape, corpus coverage), while the packet loader and the
tokenizer have their own tests.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
PACKET_PATH = ROOT / "questions" / "sample_packet.yaml"
CORPUS_PATH = ROOT / "questions" / "practice_corpus.jsonl"

ALLOWED_CATEGORIES = {
    "Literature",
    "History",
    "Science",
    "Fine Arts",
    "Religion",
    "Mythology",
    "Philosophy",
    "Social Science",
    "Geography",
    "Current Events",
    "Pop Culture",
    "Other Academic",
}
ID_PATTERN = re.compile(r"[A-Za-z0-9._-]+")
CORPUS_FIELDS = ("id", "page", "answer", "category", "text")
BOLD = re.compile(r"<b>(.*?)</b>")


@cache
def _packet() -> dict[str, Any]:
    data = yaml.safe_load(PACKET_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict), "the sample packet must be a YAML mapping"
    return data


def _tossups() -> list[dict[str, Any]]:
    tossups = _packet().get("tossups")
    assert isinstance(tossups, list), "'tossups' must be a list"
    return tossups


@cache
def _corpus() -> tuple[dict[str, Any], ...]:
    rows = []
    lines = CORPUS_PATH.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        assert line.strip(), f"practice_corpus.jsonl line {number} is blank"
        row = json.loads(line)
        assert isinstance(row, dict), f"line {number} is not a JSON object"
        rows.append(row)
    return tuple(rows)


def _rough_sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.?!])[\"”]?\s+", " ".join(text.split()))
    return [part for part in parts if len(part.split()) >= 2]


def _main_answer(answer_line: str) -> str:
    match = BOLD.search(answer_line)
    assert match, f"answer line has no <b>…</b> required part: {answer_line!r}"
    return match.group(1).strip()


# --- the sample packet ---------------------------------------------------------------------


def test_packet_header() -> None:
    data = _packet()
    assert data["format"] == "grace-arena-packet/1"
    meta = data["packet"]
    assert meta["id"] and meta["title"]
    assert meta["license"] == "CC BY 4.0"


def test_packet_has_enough_tossups_with_unique_ids() -> None:
    tossups = _tossups()
    assert len(tossups) >= 24
    ids = [t["id"] for t in tossups]
    assert all(isinstance(i, str) and ID_PATTERN.fullmatch(i) for i in ids), ids
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert duplicates == []


def test_packet_categories_are_allowed_and_spread() -> None:
    categories = Counter(t["category"] for t in _tossups())
    assert set(categories) <= ALLOWED_CATEGORIES, set(categories) - ALLOWED_CATEGORIES
    assert len(categories) >= 6, categories
    for big in ("Literature", "History", "Science"):
        assert categories[big] >= 3, (big, categories)
    # No single category swamps the packet (ACF-style spread: about a fifth at most).
    assert max(categories.values()) <= len(_tossups()) // 4 + 1, categories


def test_every_tossup_is_pyramidal_shaped() -> None:
    problems = []
    for tossup in _tossups():
        text = " ".join(str(tossup["text"]).replace("(*)", " ").split())
        if text.count("For 10 points") != 1:
            problems.append((tossup["id"], "needs exactly one 'For 10 points'"))
            continue
        clues, giveaway = text.split("For 10 points")
        # The giveaway is a sentence of its own, after at least four clue sentences.
        if not re.search(r"[.?!][\"”]?\s*$", clues) or not giveaway.startswith(","):
            problems.append((tossup["id"], "'For 10 points,' must begin the last sentence"))
        if len(_rough_sentences(clues)) < 4:
            problems.append((tossup["id"], f"only {len(_rough_sentences(clues))} clue sentences"))
        if len(giveaway.split()) > 40 or len(giveaway) > len(clues) / 2:
            problems.append((tossup["id"], "the giveaway should be one short sentence at the end"))
    assert problems == []


def test_power_marks_sit_in_the_middle_of_the_question() -> None:
    with_power = 0
    for tossup in _tossups():
        words = tossup["text"].split()
        assert words.count("(*)") <= 1, tossup["id"]
        if "(*)" not in words:
            continue
        with_power += 1
        fraction = words.index("(*)") / (len(words) - 1)
        assert 0.4 <= fraction <= 0.8, (tossup["id"], round(fraction, 2))
    assert with_power >= len(_tossups()) * 3 // 4


def test_answer_lines_have_a_required_part_not_given_away_early() -> None:
    for tossup in _tossups():
        main = _main_answer(tossup["answer"])
        assert main, tossup["id"]
        assert tossup["answer"].count("[") == tossup["answer"].count("]"), tossup["id"]
        # The answer itself must not appear before the giveaway sentence.
        body = " ".join(_rough_sentences(tossup["text"])[:-1])
        pattern = r"\b" + re.escape(main) + r"\b"
        assert not re.search(pattern, body, re.IGNORECASE), (tossup["id"], main)


def test_some_tossups_exercise_the_tokenizer() -> None:
    text = " ".join(t["text"] for t in _tossups())
    assert re.search(r'\("[^"]+"\)', text), 'expected a pronunciation guide like ("NEE-chuh")'
    assert "U.S." in text and "Dr." in text
    assert re.search(r"\d\.\d", text), "expected a decimal number"
    assert re.search(r'\."\s+[A-Z]', text), "expected a sentence ending in a quotation"


# --- the practice corpus -------------------------------------------------------------------


def test_corpus_size_fields_and_ids() -> None:
    rows = _corpus()
    assert len(rows) >= 150
    for row in rows:
        for field in CORPUS_FIELDS:
            value = row.get(field)
            assert isinstance(value, str) and value.strip(), (row.get("id"), field)
        assert row["category"] in ALLOWED_CATEGORIES, row["id"]
        assert re.fullmatch(r"pc-\d{4}", row["id"]), row["id"]
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids)


def test_corpus_items_are_short_paragraphs() -> None:
    for row in _corpus():
        words = len(row["text"].split())
        assert 8 <= words <= 120, (row["id"], words)
    texts = [row["text"] for row in _corpus()]
    assert len(set(texts)) == len(texts), "duplicate corpus texts"


def test_every_sample_answer_is_a_corpus_page_with_several_items() -> None:
    pages = Counter(row["page"] for row in _corpus())
    for tossup in _tossups():
        main = _main_answer(tossup["answer"])
        assert pages[main] >= 2, f"{tossup['id']}: no (or too few) corpus items for {main!r}"


def test_corpus_has_competition_beyond_the_sample_answers() -> None:
    sample_pages = {_main_answer(t["answer"]) for t in _tossups()}
    pages = {row["page"] for row in _corpus()}
    others = pages - sample_pages
    assert len(others) >= 40, len(others)
    categories = {row["category"] for row in _corpus() if row["page"] in others}
    assert len(categories) >= 6, categories


def test_corpus_items_do_not_copy_sample_sentences() -> None:
    sample_sentences = {
        " ".join(s.split()).lower()
        for t in _tossups()
        for s in _rough_sentences(t["text"].replace("(*)", " "))
        if len(s.split()) >= 8
    }
    for row in _corpus():
        for sentence in _rough_sentences(row["text"]):
            assert " ".join(sentence.split()).lower() not in sample_sentences, row["id"]


def test_allowed_categories_match_the_packet_model() -> None:
    from grace_arena.core.packet import CATEGORIES

    # (the sample is written in GRACE's categories; "Uncategorized" is for imported packets)
    assert set(CATEGORIES) == {*ALLOWED_CATEGORIES, "Uncategorized"}


def test_the_first_twenty_tossups_each_have_an_original_bonus_of_their_category() -> None:
    bonuses = _packet().get("bonuses")
    assert isinstance(bonuses, list) and len(bonuses) >= 20
    tossups = _tossups()
    for tossup, bonus in zip(tossups[:20], bonuses, strict=False):
        assert bonus["id"] == f"b-{tossup['id']}"
        assert bonus["category"] == tossup["category"]
        assert bonus["leadin"].endswith("For 10 points each:")
        parts = bonus["parts"]
        assert [p["difficulty"] for p in parts] == ["e", "m", "h"], bonus["id"]
        for part in parts:
            assert BOLD.search(part["answer"]), (bonus["id"], part)
            # a part never gives away a tossup's answer, nor another part's
            main = BOLD.search(part["answer"]).group(1).lower()
            assert main not in bonus["leadin"].lower(), (bonus["id"], main)
    # no bonus answer is the answer of a tossup of the packet (they would spoil each other)
    tossup_answers = {BOLD.search(t["answer"]).group(1).lower() for t in tossups}
    bonus_answers = {BOLD.search(p["answer"]).group(1).lower() for b in bonuses for p in b["parts"]}
    assert not tossup_answers & bonus_answers
