"""Competitors' outputs (QANTA JSONL, the QANTA runner's CSVs) as model players: the token map,
import (judged where ``correct`` is absent; an unknown id stores nothing), export, the round
trips, a roster, and an imported model buzzing in a match where its file says."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest
from backends import on_both_backends
from sqlmodel import Session, select
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.commands import Reveal, StartTossup
from grace_arena.core.config import ScoringRules
from grace_arena.core.match import Match
from grace_arena.core.specs import match_config
from grace_arena.core.tokenize import tokenize
from grace_arena.model.outputs import (
    OutputsError,
    import_outputs,
    read_outputs,
    read_roster,
    token_map,
    weight_class_of,
    write_outputs,
)
from grace_arena.model.outputs import export_outputs as collect
from grace_arena.model.policy import BuzzPolicy, load_steps, model_buzzes, model_team
from grace_arena.model.precompute import ensure_precomputed
from grace_arena.record.db import open_engine
from grace_arena.record.models import ModelBonusPartRow, ModelStepRow

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("private_cache")

TOSSUP = "lit-american-1"  # its text has the power mark: the runner counts "(*)" as a token


def _rows(engine, table, model):
    with Session(engine) as session:
        return list(session.exec(select(table).where(table.model == model)).all())


def test_the_runners_tokens_and_our_words_are_matched_by_their_offsets():
    text = 'Nietzsche ("NEE-chuh") wrote this (*) book — a. For 10 points, name it.'
    tokens = tokenize(text)
    # the runner: text.split(/\s+/) — the guide, "(*)" and the dash are tokens of their own
    runner = text.split()
    assert runner[1] == '("NEE-chuh")' and runner[4] == "(*)" and runner[6] == "—"
    tmap = token_map(tokens)
    assert tmap.n_tokens == len(runner) == 13 and len(tokens) == 10
    words = [w.text for w in tokens.words]
    # each token -> the last of our words heard once it is read
    assert [words[w] for w in tmap.word_of_token] == [
        "Nietzsche", "Nietzsche", "wrote", "this", "this", "book", "book", "a.", "For", "10",
        "points,", "name", "it.",
    ]  # fmt: skip
    # each word -> the token it is (the same text)
    assert [runner[t] for t in tmap.token_of_word] == words
    glued = token_map(tokenize("one two(*)three four."))  # a marker inside a token
    assert glued.token_of_word == (0, 1, 1, 2) and glued.word_of_token == (0, 2, 3)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _buzz_csv(tmp_path: Path, sample) -> Path:
    """A competitor's tossup file on two tossups: rows at a few tokens (one at the power mark),
    one buzz each, one row with no ``correct`` (judged on import)."""
    power = sample.tossup(TOSSUP).text.split().index("(*)")
    return _write(
        tmp_path / "rival.buzz.csv",
        "question_id,token_position,guess,confidence,buzz,correct\n"
        f"{TOSSUP},5,The_Old_Man_and_the_Sea,0.91,0,0\n"
        f"{TOSSUP},{power},Moby-Dick,0.35,1,1\n"
        f"{TOSSUP},{power + 10},Moby-Dick,0.6,1,\n"
        "lit-british-1,0,Beowulf,0.2,0,0\n"
        "lit-british-1,40,Frankenstein,0.55,0,1\n",
    )


def _bonus_csv(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "rival.bonus.csv",
        "question_id,part_number,guess,confidence,explanation,correct\n"
        'b-lit-american-1,1,Mark_Twain,0.8,"a writer, surely",\n'
        "b-lit-american-1,2,nothing,0.1,,0\n"
        "b-lit-american-1,3,Cairo,0.7,,1\n",
    )


@on_both_backends
def test_runner_csvs_are_imported_judged_where_correct_is_absent_and_exported_back_exactly(
    db_url, sample, tmp_path
):
    engine = open_engine(db_url)
    buzz, bonus = read_outputs(_buzz_csv(tmp_path, sample)), read_outputs(_bonus_csv(tmp_path))
    assert (buzz.kind, buzz.format, bonus.kind) == ("tossup", "runner", "bonus")
    stats = import_outputs(
        engine,
        sample,
        "rival",
        [("rival.buzz.csv", buzz), ("rival.bonus.csv", bonus)],
        weight_class="midweight",
    )
    assert (stats.steps, stats.tossups, stats.parts, stats.bonuses) == (5, 2, 3, 1)
    assert stats.judged == 2  # the two rows with an empty correct
    steps = sorted(_rows(engine, ModelStepRow, "rival"), key=lambda r: (r.tossup_id, r.step))
    tokens = sample.tossup(TOSSUP).tokens()
    power = sample.tossup(TOSSUP).text.split().index("(*)")
    at_power = next(s for s in steps if s.extra["token_position"] == power)
    # the "(*)" token: the word before it has been heard
    assert tokens.words[at_power.word_index].end <= tokens.text.index("(*)")
    assert at_power.word_index == tokens.power_index - 1
    assert at_power.confidence_logit == 0.35 and at_power.would_buzz is True
    judged = next(s for s in steps if s.extra["token_position"] == power + 10)
    assert judged.correct is True and judged.judge_directive == "accept"  # our judge
    given = next(s for s in steps if s.extra["token_position"] == 5)
    assert given.correct is False and given.judge_directive is None  # as the file said
    assert all(s.extra["imported"]["weight_class"] == "midweight" for s in steps)
    parts = sorted(_rows(engine, ModelBonusPartRow, "rival"), key=lambda r: r.part)
    assert [p.part for p in parts] == [0, 1, 2]
    assert parts[0].correct is True and parts[0].extra["explanation"] == "a writer, surely"

    tossups, bonuses = collect(engine, sample, "rival", "runner")
    expected = (*buzz.rows[:2], replace(buzz.rows[2], correct=True), *buzz.rows[3:])
    assert tossups.rows == expected  # the same rows, the judged one with our verdict
    assert bonuses.rows[1:] == bonus.rows[1:] and bonuses.rows[0].correct is True
    # a file our export wrote reads back and writes again byte for byte
    out = tmp_path / "out"
    out.mkdir()
    write_outputs(tossups, out / "rival.buzz.csv")
    write_outputs(read_outputs(out / "rival.buzz.csv"), out / "again.buzz.csv")
    assert (out / "rival.buzz.csv").read_bytes() == (out / "again.buzz.csv").read_bytes()


@on_both_backends
def test_qanta_jsonl_round_trips_exactly_through_the_record(db_url, sample, tmp_path):
    engine = open_engine(db_url)
    lines = [
        {
            "qid": TOSSUP,
            "run_outputs": [
                {"token_position": p, "guess": g, "confidence": c, "buzz": b, "correct": k}
                for p, g, c, b, k in [
                    (0, "Walden", 0.05, False, False),
                    (30, "Moby-Dick", 0.4, False, True),
                    (31, "Moby-Dick", 0.45, True, True),
                ]
            ],
        },
        {
            "qid": "b-lit-british-1",
            "part_outputs": [],
        },
    ]
    path = _write(tmp_path / "q.jsonl", json.dumps(lines[0]) + "\n")
    read = read_outputs(path)
    assert read.format == "qanta" and len(read.rows) == 3
    import_outputs(engine, sample, "q", [(path.name, read)])
    tossups, bonuses = collect(engine, sample, "q", "qanta")
    assert bonuses is None and tossups.rows == read.rows
    write_outputs(tossups, tmp_path / "back.jsonl")
    assert [json.loads(x) for x in (tmp_path / "back.jsonl").read_text().splitlines()] == [lines[0]]


@on_both_backends
def test_unknown_question_ids_are_named_and_nothing_is_imported(db_url, sample, tmp_path):
    engine = open_engine(db_url)
    good = read_outputs(_bonus_csv(tmp_path))
    bad = read_outputs(
        _write(
            tmp_path / "bad.buzz.csv",
            "question_id,token_position,guess,confidence,buzz,correct\n"
            f"{TOSSUP},3,x,0.1,0,0\n"
            "qb-2026-017,3,x,0.1,0,0\n"
            "qb-2026-018,3,x,0.1,0,0\n",
        )
    )
    with pytest.raises(OutputsError) as caught:
        import_outputs(engine, sample, "rival", [("good", good), ("bad.buzz.csv", bad)])
    message = str(caught.value)
    assert "'qb-2026-017'" in message and "'qb-2026-018'" in message
    assert "nothing was imported" in message
    assert _rows(engine, ModelStepRow, "rival") == []
    assert _rows(engine, ModelBonusPartRow, "rival") == []  # not even the good file
    # a token past the tossup's end, a part that does not exist: the same
    n = token_map(sample.tossup(TOSSUP).tokens()).n_tokens
    past = _write(
        tmp_path / "past.buzz.csv",
        f"question_id,token_position,guess,confidence,buzz\n{TOSSUP},{n},x,0.1,0\n",
    )
    with pytest.raises(OutputsError, match=f"has {n} tokens"):
        import_outputs(engine, sample, "rival", [("past", read_outputs(past))])
    part = _write(
        tmp_path / "part.bonus.csv",
        "question_id,part_number,guess,confidence,correct\nb-lit-american-1,4,x,0.1,0\n",
    )
    with pytest.raises(OutputsError, match="has 3 parts, not part 4"):
        import_outputs(engine, sample, "rival", [("part", read_outputs(part))])
    assert _rows(engine, ModelStepRow, "rival") == []


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("question_id,guess\nx,y\n", "neither token_position"),
        ("question_id,token_position,guess,confidence,buzz\nx,3,y,high,0\n", "'high' is not a"),
        ("question_id,token_position,guess,confidence,buzz\nx,-1,y,0.1,0\n", "below 0"),
        ("question_id,token_position,guess,confidence,buzz\nx,1,y,0.1,maybe\n", "not 0/1"),
    ],
)
def test_a_malformed_file_says_where(tmp_path, text, says):
    with pytest.raises(OutputsError, match=says):
        read_outputs(_write(tmp_path / "m.buzz.csv", text))


def test_a_runner_file_that_does_not_fit_a_jsonl_or_csv_is_refused(tmp_path):
    with pytest.raises(OutputsError, match="not JSON"):
        read_outputs(_write(tmp_path / "m.jsonl", "{nope\n"))
    with pytest.raises(OutputsError, match=r"expected a runner \.csv or a QANTA \.jsonl"):
        read_outputs(_write(tmp_path / "m.txt", "x"))


@on_both_backends
def test_our_model_exported_and_imported_again_plays_the_same(db_url, sample, tmp_path):
    """tfidf's steps → runner CSV and QANTA JSONL → imported under new names: the same words,
    guesses, confidences and verdicts, and the same buzzes under the policy exported."""
    ensure_precomputed(db_url, sample)
    engine = open_engine(db_url)
    policy = BuzzPolicy(threshold=0.9)
    ours = load_steps(engine, "tfidf", sample.packet.id)
    for fmt in ("runner", "qanta"):
        tossups, bonuses = collect(engine, sample, "tfidf", fmt, policy=policy)
        suffix = ".csv" if fmt == "runner" else ".jsonl"
        write_outputs(tossups, tmp_path / f"t{suffix}")
        write_outputs(bonuses, tmp_path / f"b{suffix}")
        name = f"copy-{fmt}"
        files = [(p, read_outputs(tmp_path / p)) for p in (f"t{suffix}", f"b{suffix}")]
        import_outputs(engine, sample, name, files)
        theirs = load_steps(engine, name, sample.packet.id)
        assert set(theirs) == set(ours)
        for tid, rows in ours.items():
            assert [(r.word_index, r.guess, r.confidence_logit, r.correct) for r in rows] == [
                (r.word_index, r.guess, r.confidence_logit, r.correct) for r in theirs[tid]
            ]
        assert model_buzzes(theirs, BuzzPolicy()) == model_buzzes(ours, policy)
        mine = {(r.bonus_id, r.part): r for r in _rows(engine, ModelBonusPartRow, "tfidf")}
        for r in _rows(engine, ModelBonusPartRow, name):
            assert (r.guess, r.confidence_logit, r.correct) == (
                mine[(r.bonus_id, r.part)].guess,
                mine[(r.bonus_id, r.part)].confidence_logit,
                mine[(r.bonus_id, r.part)].correct,
            )


def test_an_imported_model_buzzes_in_a_match_where_its_file_says(db_url, sample, tmp_path):
    """Its first buzz row is at a low confidence, after a row at a high one that does not
    buzz: the match's model buzzes at the first, whatever the threshold."""
    engine = open_engine(db_url)
    import_outputs(engine, sample, "rival", [("r", read_outputs(_buzz_csv(tmp_path, sample)))])
    team = model_team(engine, "rival", sample, BuzzPolicy(threshold=0.5), team_id="rival")
    power = sample.tossup(TOSSUP).text.split().index("(*)")
    tokens = sample.tossup(TOSSUP).tokens()
    at = token_map(tokens).word_of_token[power]
    assert team.buzzes[TOSSUP].word_index == at and team.buzzes[TOSSUP].confidence == 0.35
    assert "lit-british-1" not in team.buzzes  # it never buzzed there, at 0.55 or not
    # with own_buzzes=False the threshold decides instead: token 5, at 0.91
    thresholded = model_team(engine, "rival", sample, BuzzPolicy(own_buzzes=False))
    assert thresholded.buzzes[TOSSUP].word_index == token_map(tokens).word_of_token[5]
    from grace_arena.core.config import TeamSpec

    config = match_config(
        sample, [TeamSpec(id="red", name="Red"), team], rules=ScoringRules(), tossup_ids=[TOSSUP]
    )
    match, _ = Match.create(config, now=0.0)
    match.handle(StartTossup(), now=1.0)
    events = match.handle(Reveal(to=len(tokens) - 1), now=2.0)
    accepted = [e for e in events if e.type == "buzz_accepted"]
    assert [(e.team, e.kind, e.word_index, e.answer) for e in accepted] == [
        ("rival", "model", at, "Moby-Dick")
    ]


def test_a_roster_names_each_model_and_its_weight_class(db_url, sample, tmp_path):
    _buzz_csv(tmp_path, sample)
    _bonus_csv(tmp_path)
    (tmp_path / "other.buzz.jsonl").write_text(
        json.dumps(
            {
                "qid": TOSSUP,
                "run_outputs": [
                    {"token_position": 9, "guess": "Walden", "confidence": 0.9, "buzz": True}
                ],
            }
        )
        + "\n"
    )
    roster = _write(
        tmp_path / "ai_roster.csv",
        "player_id,name,type,tossup_model,bonus_model,tossup_model_cost,skill_level,weight_class\n"
        "ai_1,Alpha,ai,rival,rival,0.4,Mid,lightweight\n"
        "h_1,Hannah,human,,,,,\n"
        "ai_2,Bravo,ai,other,,1.2,Mid,heavyweight\n",
    )
    entries = read_roster(roster)
    assert [(e.name, e.weight_class) for e in entries] == [
        ("Alpha", "lightweight"),
        ("Bravo", "heavyweight"),
    ]
    result = runner.invoke(
        app,
        ["model", "import", "--roster", str(roster), "--packet", str(sample.path), "--db", db_url],
    )
    assert result.exit_code == 0, result.output
    assert "Alpha on grace-arena-sample-1: 5 steps on 2 tossups, 3 bonus parts" in result.output
    assert "judged here" in result.output
    engine = open_engine(db_url)
    (bravo,) = _rows(engine, ModelStepRow, "Bravo")
    assert bravo.extra["imported"] == {
        "format": "qanta",
        "file": "other.buzz.jsonl",
        "weight_class": "heavyweight",
    }
    assert bravo.correct is False and bravo.judge_directive == "reject"  # judged: no correct
    assert weight_class_of(engine, "Alpha", sample.packet.id) == "lightweight"
    assert weight_class_of(engine, "Bravo", sample.packet.id) == "heavyweight"
    assert weight_class_of(engine, "tfidf", sample.packet.id) is None
    # the same again is refused (nothing doubled) unless --replace
    again = runner.invoke(
        app,
        ["model", "import", "--roster", str(roster), "--packet", str(sample.path), "--db", db_url],
    )
    assert again.exit_code == 1 and "already has 8 rows" in again.output
    bad = _write(tmp_path / "bad.csv", "name,tossup_model,bonus_model,weight_class\nX,r,r,huge\n")
    with pytest.raises(OutputsError, match="'huge' of X is not one of"):
        read_roster(bad)


def test_model_export_and_import_commands(db_url, sample, tmp_path):
    ensure_precomputed(db_url, sample)
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        ["model", "export", "tfidf", "--packet", str(sample.path), "--format", "runner",
         "--out", str(out), "--db", db_url],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with (out / "tfidf.buzz.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == sum(len(t.tokens().clue_ends) for t in sample.tossups)
    assert list(rows[0]) == ["question_id", "token_position", "guess", "confidence", "buzz",
                             "correct"]  # fmt: skip
    result = runner.invoke(
        app,
        ["model", "import", str(out / "tfidf.buzz.csv"), str(out / "tfidf.bonus.csv"),
         "--packet", str(sample.path), "--name", "tfidf", "--db", db_url],
    )  # fmt: skip
    assert result.exit_code == 2 and "a model this program runs itself" in result.output
    unknown = _write(
        tmp_path / "u.buzz.csv",
        "question_id,token_position,guess,confidence,buzz\nnope-1,0,x,0.1,0\n",
    )
    result = runner.invoke(
        app,
        ["model", "import", str(unknown), "--packet", str(sample.path), "--db", db_url],
    )
    assert result.exit_code == 1 and "'nope-1'" in result.output


def test_model_show_lists_an_imported_models_tokens_and_its_own_buzzes(db_url, sample, tmp_path):
    path = _buzz_csv(tmp_path, sample)
    result = runner.invoke(
        app, ["model", "import", str(path), "--packet", str(sample.path), "--db", db_url]
    )
    assert result.exit_code == 0, result.output
    assert "rival on grace-arena-sample-1: 5 steps on 2 tossups" in result.output
    shown = runner.invoke(
        app,
        ["model", "show", "rival", "--packet", str(sample.path), "--db", db_url,
         "--tossup", TOSSUP, "--tossup", "lit-british-1"],
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert shown.exit_code == 0, shown.output
    power = sample.tossup(TOSSUP).text.split().index("(*)")
    assert f"token {power}: {sample.tossup(TOSSUP).tokens().power_index - 1}" in shown.output
    assert "never buzzes (its file never says buzz)" in shown.output  # lit-british-1
    assert "rival: buzzes on 1 tossups, 1 correct" in shown.output


@on_both_backends
def test_an_event_plays_an_imported_model_that_covers_only_some_tossups(db_url, sample, tmp_path):
    """Its rows follow the runner's tokens, two tossups of 26: no "not precomputed" for it."""
    engine = open_engine(db_url)
    import_outputs(engine, sample, "rival", [("r", read_outputs(_buzz_csv(tmp_path, sample)))])
    assert ensure_precomputed(db_url, sample, "rival").steps == 156
    made = runner.invoke(
        app, ["event", "create", "c", "--team", "Red", "--model-team", "rival=Rival", "--db",
              db_url],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    scheduled = runner.invoke(
        app, ["event", "schedule", "c", "--packet", str(sample.path), "--db", db_url]
    )
    assert scheduled.exit_code == 0, scheduled.output
    said = " ".join(scheduled.output.split())
    assert "needs its guesses" not in said
    # it buzzes on 1 of 26: said, as for any model
    assert "warning: Rival: model rival will rarely buzz" in said
    from grace_arena.cli.serve import _check_event

    _check_event(db_url, "c", None)  # no "has no guesses": serve would start
