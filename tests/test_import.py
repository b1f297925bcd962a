"""``grace-arena import``: GRACE buzzpoints and QANTA questions into the record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backends import on_both_backends
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.tokenize import tokenize
from grace_arena.io.exports import export
from grace_arena.io.imports import (
    grace_category,
    grace_word_maps,
    import_grace,
    import_qanta,
    parse_grace_position,
)
from grace_arena.io.record_io import load_record
from grace_arena.model.corpus import load_corpus
from grace_arena.record.store import MatchStore

SHARED = Path("/work/shared/data")
GRACE_SAMPLE = SHARED / "grace_packet1_buzzpoints.json"
QANTA_SAMPLE = SHARED / "qanta.buzzdev.json.gz"
QANTA_SMALL = Path(__file__).parent / "fixtures" / "analysis" / "qanta_small.json"

needs_grace = pytest.mark.skipif(not GRACE_SAMPLE.exists(), reason="GRACE sample not here")


# ---------------------------------------------------------------------------------------
# Word positions
# ---------------------------------------------------------------------------------------


def test_grace_word_maps_skip_markers_and_map_back() -> None:
    text = 'Nietzsche ("NEE-chuh") wrote this (*) book — in 1883. For 10 points, name it.'
    to_ours, to_grace = grace_word_maps(text)
    words = [w.text for w in tokenize(text).words]
    tokens = text.split()
    assert tokens[1] == '("NEE-chuh")' and tokens[4] == "(*)" and tokens[6] == "—"
    # a marker or a lone dash is heard as the word before it
    assert to_ours[1] == 0 and to_ours[4] == to_ours[3] == 2 and to_ours[6] == 3
    assert [tokens[g] for g in to_grace] == words


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(["word", "(*)", '("guide")', "—", "U.S.", "end.", "For", "10", "points,"]),
        min_size=1,
        max_size=30,
    )
)
def test_grace_word_maps_are_inverse_on_words(tokens: list[str]) -> None:
    text = " ".join(["Start", *tokens])
    to_ours, to_grace = grace_word_maps(text)
    assert len(to_ours) == len(text.split())
    assert len(to_grace) == len(tokenize(text).words)
    assert all(to_ours[g] == w for w, g in enumerate(to_grace))
    assert to_ours == sorted(to_ours)  # later GRACE words never map earlier


def test_positions_and_categories_parse() -> None:
    assert parse_grace_position({"17": "[H9, -]"}).correct is False
    assert parse_grace_position({"3": "[M1,+]"}).is_model
    for bad in ({"x": "[H1, +]"}, {"1": "H1 +"}, {"1": "[H1, +]", "2": "[H2, -]"}):
        with pytest.raises(ValueError, match="position"):
            parse_grace_position(bad)
    assert [grace_category(c) for c in ("Other Fine Arts", "Chemistry", "World/Other Lit",
                                        "Euro Hist", "Other Sci", "Religion", "Trash", None)] == [
        "Fine Arts", "Science", "Literature", "History", "Science", "Religion", "Pop Culture",
        "Other Academic",
    ]  # fmt: skip


# ---------------------------------------------------------------------------------------
# GRACE
# ---------------------------------------------------------------------------------------


@needs_grace
def test_grace_sample_round_trips_exactly(store: MatchStore, tmp_path: Path) -> None:
    result = import_grace(store.engine, GRACE_SAMPLE)
    assert (result.tossups, result.buzzes, result.warnings, result.event) == (20, 20, [], "grace")
    out = tmp_path / "back.json"
    export(store.engine, "grace", out, events=["grace"])
    assert json.loads(out.read_text()) == json.loads(GRACE_SAMPLE.read_text())
    mapping = json.loads((tmp_path / "back.teams.json").read_text())
    assert {code: v[0]["kind"] for code, v in mapping.items()} == {"M1": "model", "H9": "human"}


@needs_grace
def test_grace_import_is_idempotent_and_analysable(store: MatchStore) -> None:
    import_grace(store.engine, GRACE_SAMPLE)
    again = import_grace(store.engine, GRACE_SAMPLE)
    assert again.buzzes == 0 and "already imported" in again.skipped[0]
    assert store.matches() == []
    steps, buzzes, _ = load_record(store.engine, events=["grace"])
    assert len(steps) == 0 and len(buzzes) == 20
    kinds = dict(zip(buzzes.team.tolist(), buzzes.team_kind.tolist(), strict=True))
    assert kinds == {"M1": "model", "H9": "human"}
    # exh-1: M1 at GRACE word 69; the pronunciation guide before it is not one of our words
    m1 = (buzzes.question_id == "grace_packet1_buzzpoints/exh-1") & (buzzes.team == "M1")
    assert buzzes.word_index[m1].tolist() == [68] and buzzes.correct[m1].tolist() == [1.0]


@on_both_backends
def test_grace_file_with_negs_and_several_teams(store: MatchStore, tmp_path: Path) -> None:
    text = "This (*) man crossed the Delaware. He was the first president. For 10 points, name him."
    data = [
        {
            "tossup_index": 1,
            "category": "American Hist",
            "question": text,
            "answer": "George Washington",
            "question_buzzpoints": "",
            "position": [{"3": "[H1, -]"}, {"3": "[M2, -]"}, {"9": "[H2, +]"}],
        },
        {
            "tossup_index": 2,
            "category": "Geo/CE",
            "question": "Name this  river. It flows through Cairo.",
            "answer": "Nile",
            "question_buzzpoints": "",
            "position": [],
        },
    ]
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    result = import_grace(store.engine, path, event="mine")
    assert result.warnings == [] and result.buzzes == 3
    _, buzzes, _ = load_record(store.engine, events=["mine"])
    rows = list(
        zip(buzzes.team.tolist(), buzzes.word_index.tolist(), buzzes.correct.tolist(), strict=True)
    )
    # GRACE word 3 is "crossed", our word 2 ("(*)" is not a word); GRACE word 9 ("first") is
    # our word 8. Pooled, in the file's order, nothing replayed.
    assert rows == [("H1", 2, 0.0), ("M2", 2, 0.0), ("H2", 8, 1.0)]
    out = tmp_path / "out.json"
    export(store.engine, "grace", out, events=["mine"])
    back = json.loads(out.read_text())
    for original, exported in zip(data, back, strict=True):
        for key in ("tossup_index", "category", "question", "answer", "position"):
            assert exported[key] == original[key], key
    assert back[0]["question_buzzpoints"] == ""  # as the file had it


def test_a_malformed_grace_file_is_refused(store: MatchStore, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(ValueError, match="not GRACE buzzpoints"):
        import_grace(store.engine, path)
    assert store.matches() == []


# ---------------------------------------------------------------------------------------
# QANTA
# ---------------------------------------------------------------------------------------


@on_both_backends
def test_qanta_questions_become_packets_and_a_corpus(store: MatchStore, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    result = import_qanta(store.engine, QANTA_SMALL, packet_size=3, corpus_out=corpus)
    assert result.packets == ["qanta-qanta_small-001", "qanta-qanta_small-002"]
    assert result.tossups == 4
    assert any("malformed" in w for w in result.warnings)  # question 3's answer line
    entries = load_corpus(corpus)
    assert [e.id for e in entries] == ["qanta-1", "qanta-2", "qanta-3", "qanta-4"]
    assert entries[3].category == "Pop Culture" and entries[0].page == "Ludwig van Beethoven"
    from sqlmodel import Session, select

    from grace_arena.record.models import TossupRow

    with Session(store.engine) as session:
        rows = session.exec(select(TossupRow).order_by(TossupRow.tossup_id)).all()
    assert [r.tossup_id for r in rows] == ["qanta-1", "qanta-2", "qanta-3", "qanta-4"]
    oxygen = rows[1]
    assert oxygen.clue_ends == list(tokenize(oxygen.text).clue_ends)
    assert len(oxygen.clue_ends) == 3  # QANTA's sentence spans (the empty one dropped)
    again = import_qanta(store.engine, QANTA_SMALL, packet_size=3)
    assert again.packets == result.packets
    with Session(store.engine) as session:
        assert len(session.exec(select(TossupRow)).all()) == 4


@pytest.mark.skipif(not QANTA_SAMPLE.exists(), reason="QANTA sample not here")
def test_the_qanta_sample_imports(tmp_path: Path) -> None:
    result = import_qanta(None, QANTA_SAMPLE, limit=200, corpus_out=tmp_path / "c.jsonl")
    assert len(load_corpus(tmp_path / "c.jsonl")) == 200
    assert not any("left out" in w for w in result.warnings)


@on_both_backends
def test_import_commands(db_url: str, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["import", "qanta", str(QANTA_SMALL), "--db", db_url])
    assert result.exit_code == 0, result.output
    assert "4 tossups in 1 packet(s)" in result.output
    result = runner.invoke(app, ["import", "qanta", str(QANTA_SMALL), "--no-record"])
    assert result.exit_code == 2
    missing = tmp_path / "missing.json"
    result = runner.invoke(app, ["import", "grace", str(missing), "--db", db_url])
    assert result.exit_code == 1 and "missing.json" in result.output
    if GRACE_SAMPLE.exists():
        result = runner.invoke(app, ["import", "grace", str(GRACE_SAMPLE), "--db", db_url])
        assert result.exit_code == 0 and "20 buzzpoints" in result.output, result.output
        result = runner.invoke(app, ["import", "grace", str(GRACE_SAMPLE), "--db", db_url])
        assert "already imported" in result.output
