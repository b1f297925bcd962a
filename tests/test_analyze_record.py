"""``grace-arena analyze`` on a record and on the files exported from it: the same numbers.

``play_synthetic_match`` builds a small but complete record through the real engine and
store (a packet with a power mark and a pronunciation guide, two human teams and a model
team, negs, a lost race, an undone ruling, a prompt, a thrown-out tossup, model steps with
missing verbal confidences); the export tests use it too.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from backends import on_both_backends
from sqlmodel import Session
from typer.testing import CliRunner

from grace_arena.analysis.summary import analyze, comparable
from grace_arena.cli import app
from grace_arena.core.commands import (
    Buzz,
    EndMatch,
    GiveAnswer,
    Join,
    Reveal,
    Rule,
    StartTossup,
    ThrowOut,
    UndoRuling,
)
from grace_arena.core.config import ModelBuzz, ScoringRules, TeamKind, TeamSpec
from grace_arena.core.events import BuzzTiming, Ruling
from grace_arena.core.packet import Packet, PacketMeta, Tossup
from grace_arena.core.specs import match_config
from grace_arena.io.record_io import load_record, load_record_data, question_id
from grace_arena.record.models import ModelStepRow
from grace_arena.record.store import MatchStore

T0 = 1_700_000_000.0
PACKET_ID = "synthetic-1"

TOSSUPS = [
    Tossup(
        id="fa-1",
        category="Fine Arts",
        subcategory="Classical Music",
        text='This composer wrote a famous (*) symphony in C minor. Nietzsche ("NEE-chuh") '
        "admired his late quartets. For 10 points, name this German composer of Fidelio.",
        answer="Ludwig van <b>Beethoven</b>",
    ),
    Tossup(
        id="sci-1",
        category="Science",
        text="This element has atomic number 8. It makes up about a fifth of the air. For 10 "
        "points, name this gas that we breathe.",
        answer="<b>oxygen</b> [accept O]",
    ),
    Tossup(
        id="his-1",
        category="History",
        text="This man crossed the Delaware on Christmas night. He later became the first "
        "president. For 10 points, name this American general.",
        answer="George <b>Washington</b>",
    ),
    Tossup(
        id="lit-1",
        category="Literature",
        text="This novel opens with the line Call me Ishmael. Its captain hunts a white whale. "
        "For 10 points, name this novel by Herman Melville.",
        answer="<b>Moby-Dick</b>",
    ),
]
PACKET = Packet(
    format="grace-arena-packet/1",
    packet=PacketMeta(id=PACKET_ID, title="Synthetic packet"),
    tossups=TOSSUPS,
)
MODEL = "bot-model"


def _now(step: list[float]) -> float:
    step[0] += 1.0
    return step[0]


def play_synthetic_match(store: MatchStore) -> int:
    """Play the synthetic match into ``store`` and add model steps; returns the match id."""
    store.save_packet(PACKET)
    teams = [
        TeamSpec(id="red", name="Red"),
        TeamSpec(id="blue", name="Blue"),
        TeamSpec(
            id="bot",
            name="Bot",
            kind=TeamKind.MODEL,
            model=MODEL,
            buzzes={
                "sci-1": ModelBuzz(word_index=6, guess="oxygen", confidence=0.9),
                "lit-1": ModelBuzz(word_index=3, guess="Ulysses", confidence=0.6),
            },
        ),
    ]
    config = match_config(
        PACKET, teams, rules=ScoringRules(answer_time=None, buzz_window=0.0), title="Synthetic"
    )
    clock = [T0]
    rm = store.create(config, now=clock[0])
    rm.handle(Join(team="red", player="r1", name="Ruth"), now=_now(clock))
    rm.handle(Join(team="red", player="r2", name="Raj"), now=_now(clock))
    rm.handle(Join(team="blue", player="b1", name="Bo"), now=_now(clock))

    def buzz(team: str, player: str, answer: str | None = None, mono: float | None = None):
        return rm.handle(
            Buzz(
                team=team,
                player=player,
                answer=answer,
                timing=BuzzTiming(received_mono=mono, received_wall=clock[0] + 0.5),
            ),
            now=_now(clock),
        )

    def rule(ruling: Ruling):
        return rm.handle(Rule(ruling=ruling), now=_now(clock))

    # fa-1: red negs at word 2 (a blue buzz loses the race), blue gets it in power at word 4
    rm.handle(StartTossup(tossup_id="fa-1"), now=_now(clock))
    rm.handle(Reveal(to=2), now=_now(clock))
    buzz("red", "r1", "Mozart", mono=10.0)
    buzz("blue", "b1", mono=10.05)
    rule(Ruling.INCORRECT)
    rm.handle(Reveal(to=4), now=_now(clock))
    buzz("blue", "b1", "Beethoven")
    rule(Ruling.CORRECT)
    # sci-1: the model buzzes at word 6 and is right (a ruling undone first)
    rm.handle(StartTossup(tossup_id="sci-1"), now=_now(clock))
    rm.handle(Reveal(to=10), now=_now(clock))
    rule(Ruling.INCORRECT)
    rm.handle(UndoRuling(), now=_now(clock))
    rule(Ruling.CORRECT)
    # his-1: thrown out after a buzz
    rm.handle(StartTossup(tossup_id="his-1"), now=_now(clock))
    rm.handle(Reveal(to=8), now=_now(clock))
    buzz("red", "r2", "Washington")
    rm.handle(ThrowOut(reason="misread"), now=_now(clock))
    # lit-1: the model negs at word 3; red is prompted and then right at the last word
    rm.handle(StartTossup(tossup_id="lit-1"), now=_now(clock))
    rm.handle(Reveal(to=3), now=_now(clock))
    rule(Ruling.INCORRECT)
    spec = rm.match.current_tossup
    assert spec is not None
    rm.handle(Reveal(to=spec.n_words - 1), now=_now(clock))
    buzz("red", "r2", "Melville")
    rule(Ruling.PROMPT)
    rm.handle(GiveAnswer(team="red", player="r2", text="Moby-Dick"), now=_now(clock))
    rule(Ruling.CORRECT)
    assert rm.match.phase.value == "answered"
    rm.handle(EndMatch(), now=_now(clock))

    # model steps: one per clue, confidence rising; some verbal confidences missing
    with Session(store.engine) as session:
        for tossup in TOSSUPS:
            ends = tossup.tokens().clue_ends
            for step, end in enumerate(ends):
                last = step == len(ends) - 1
                session.add(
                    ModelStepRow(
                        model=MODEL,
                        packet_id=PACKET_ID,
                        tossup_id=tossup.id,
                        step=step,
                        word_index=end,
                        guess="guess",
                        confidence_logit=round(0.3 + 0.3 * step, 2),
                        confidence_verbal=None if step == 1 else [0.1, 0.5, 0.9, 1.0][step],
                        confidence_logit_geo=0.2,
                        sequence_prob=0.1,
                        correct=last or tossup.id == "sci-1",
                        would_buzz=step >= 1,
                        latency_s=0.5,
                        prompt_tokens=100,
                        completion_tokens=5,
                        cost_usd=0.0001,
                    )
                )
        session.commit()
    return rm.id


@pytest.fixture
def record(store: MatchStore) -> tuple[MatchStore, int]:
    return store, play_synthetic_match(store)


@on_both_backends
def test_the_record_reads_as_ruled_buzzes_outside_thrown_out_tossups(record) -> None:
    store, match_id = record
    data = load_record_data(store.engine, [match_id])
    steps, buzzes, matches = data.steps, data.buzzes, data.matches
    got = sorted(
        zip(
            buzzes.question_id.tolist(),
            buzzes.team.tolist(),
            buzzes.player.tolist(),
            buzzes.word_index.tolist(),
            buzzes.correct.tolist(),
            strict=True,
        )
    )
    q = {t.id: question_id(PACKET_ID, t.id) for t in TOSSUPS}
    lit_last = TOSSUPS[3].tokens().clue_ends[-1]
    assert got == sorted(
        [
            (q["fa-1"], "Red", "Ruth", 2, 0.0),
            (q["fa-1"], "Blue", "Bo", 4, 1.0),
            (q["sci-1"], "Bot", MODEL, 6, 1.0),
            (q["lit-1"], "Bot", MODEL, 3, 0.0),
            (q["lit-1"], "Red", "Raj", lit_last, 1.0),  # prompted, then correct
        ]
    )
    # three tossups counted (his-1 thrown out), three teams heard each
    assert len(data.heard) == 9
    assert set(data.heard.question_id.astype(str)) == {q["fa-1"], q["sci-1"], q["lit-1"]}
    assert matches[0].counted == ["fa-1", "sci-1", "lit-1"]
    # steps of the three counted tossups only (his-1 was thrown out)
    assert set(steps.question_id.tolist()) == {q["fa-1"], q["sci-1"], q["lit-1"]}
    lengths = dict(zip(steps.question_id.tolist(), steps.n_words.tolist(), strict=True))
    assert lengths == {q[t.id]: len(t.tokens().words) for t in TOSSUPS if t.id != "his-1"}


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}/{k}: missing" for k in set(a) ^ set(b)]
        for k in set(a) & set(b):
            out += _diff(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _diff(x, y, f"{path}[{i}]")
        ]
    if isinstance(a, float) and isinstance(b, float):
        return [] if math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15) else [f"{path}: {a} != {b}"]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


@on_both_backends
def test_analyze_on_the_record_and_on_its_exported_files_gives_the_same_numbers(
    record, db_url: str, tmp_path: Path
) -> None:
    runner = CliRunner()
    from_db, from_files = tmp_path / "db.json", tmp_path / "files.json"
    result = runner.invoke(
        app, ["analyze", "--db", db_url, "--json", str(from_db), "--resamples", "200"]
    )
    assert result.exit_code == 0, result.output
    for fmt, name in (("csv", "buzzes.csv"), ("steps", "steps.csv")):
        result = runner.invoke(
            app, ["export", "--db", db_url, "--format", fmt, "--out", str(tmp_path / name)]
        )
        assert result.exit_code == 0, result.output
    result = runner.invoke(
        app,
        [
            "analyze",
            "--steps",
            str(tmp_path / "steps.csv"),
            "--buzzes",
            str(tmp_path / "buzzes.csv"),
            "--json",
            str(from_files),
            "--resamples",
            "200",
        ],
    )
    assert result.exit_code == 0, result.output
    a = json.loads(from_db.read_text())
    b = json.loads(from_files.read_text())
    assert _diff(comparable(a), comparable(b)) == []
    # and the numbers are there
    metrics = a["models"][MODEL]["logit"]
    for key in ("calscore", "calscore_ref", "mce_grace", "mce_grace_ref", "ece", "ace", "max_ce",
                "brier", "bss", "log_loss", "ocr_0.7", "ocr_0.8", "ocr_0.9", "conf_right",
                "conf_wrong", "n", "n_missing"):  # fmt: skip
        assert key in metrics and key in metrics["final"]
    # without --match every step in the record counts, his-1's too: step 1 of 4 tossups
    assert a["models"][MODEL]["verbal"]["n_missing"] == 4
    assert a["teams"]["Red"]["questions_heard"] == 3
    assert a["expected_wins"]["teams"]["Bot"]["n_questions"] == 3
    assert [p["player"] for p in a["players"]][:1] == ["Bo"]  # power buzz at clue 1 of 3


def test_the_parquet_export_is_the_analysis_data_set(record, db_url: str, tmp_path: Path) -> None:
    """export --format parquet writes the tables the analysis reads; analysed from the
    folder (analyze --data, or analysis.load in a notebook) they give the record's numbers."""
    from grace_arena.analysis import analyze as analyze_api
    from grace_arena.analysis import load

    runner = CliRunner()
    folder = tmp_path / "tables"
    result = runner.invoke(
        app, ["export", "--db", db_url, "--format", "parquet", "--out", str(folder)]
    )
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "buzzes.parquet", "heard.parquet", "roster.parquet", "steps.parquet", "tossups.parquet"
    ]  # fmt: skip
    from_db, from_folder = tmp_path / "db.json", tmp_path / "folder.json"
    for source, out in ((["--db", db_url], from_db), (["--data", str(folder)], from_folder)):
        done = runner.invoke(app, ["analyze", *source, "--json", str(out), "--resamples", "100"])
        assert done.exit_code == 0, done.output
    a, b = json.loads(from_db.read_text()), json.loads(from_folder.read_text())
    assert _diff(comparable(a), comparable(b)) == []
    data = load(folder)
    assert len(data.steps) == a["counts"]["steps"] and len(data.buzzes) == a["counts"]["buzzes"]
    assert set(data.tossups.columns) >= {"question_id", "category", "n_words", "n_clues"}
    assert "guess" in data.steps.columns  # every logged field of a step comes along
    from_api = analyze_api(load(db_url), n_resamples=100).to_dict()
    assert _diff(comparable(a), comparable(json.loads(json.dumps(from_api)))) == []


def test_analyze_writes_the_report_and_the_kalshibench_summary(
    record, db_url: str, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    result = CliRunner().invoke(
        app, ["analyze", "--db", db_url, "--report", str(out), "--resamples", "50"]
    )
    assert result.exit_code == 0, result.output
    assert "Models" in result.output and MODEL in result.output
    names = {p.name for p in out.iterdir()}
    assert {"report.md", "report.html", "summary.json", "analysis.json"} <= names
    assert {f"reliability_{MODEL}_logit.png", "buzz_rates.png", "accuracy.png",
            "buzz_given_correct.png"} <= names  # fmt: skip
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["benchmark"] == "GRACE Arena" and summary["num_models"] == 1
    assert set(summary["leaderboard"]["logit"]) == {
        "by_calscore",
        "by_ece",
        "by_brier_score",
        "by_auroc",
    }
    assert summary["leaderboard"]["logit"]["by_calscore"] == [MODEL]
    md = (out / "report.md").read_text()
    assert "## Leaderboard" in md and "Per category" in md and "Fine Arts" in md
    assert "<table>" in (out / "report.html").read_text()


def test_analyze_from_the_record_agrees_with_the_library(record) -> None:
    store, match_id = record
    steps, buzzes, _ = load_record(store.engine, [match_id])
    result = analyze(steps, buzzes, n_resamples=0)
    # hand check of one number: Brier over all logit steps
    conf = steps.confidence_logit
    brier = float(((conf - steps.correct) ** 2).mean())
    assert result["models"][MODEL]["logit"]["brier"] == pytest.approx(brier)
    assert result["models"][MODEL]["logit"]["ci"]["brier"] == [None, None]


def test_analyze_reports_bad_files_and_mixed_sources(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = tmp_path / "steps.csv"
    bad.write_text("model,question_id,step\nm,q,1\n")
    result = runner.invoke(app, ["analyze", "--steps", str(bad)])
    assert result.exit_code == 1
    assert "missing column(s) word_index" in result.output
    bad.write_text(
        "model,question_id,step,word_index,correct,confidence_logit,confidence_verbal\n"
        "m,q,1,4,yes,1.5,\n"
    )
    result = runner.invoke(app, ["analyze", "--steps", str(bad)])
    assert result.exit_code == 1 and "line 2" in result.output
    result = runner.invoke(app, ["analyze", "--steps", str(bad), "--db", "sqlite://"])
    assert result.exit_code == 2


@on_both_backends
def test_a_model_team_that_never_buzzed_is_still_a_model_team(
    store: MatchStore, db_url: str, tmp_path: Path
) -> None:
    """Who heard what carries each team's kind: a model player whose threshold was never
    crossed is listed as a model, not as a human team among the human quartiles, whether the
    analysis reads the record or the Parquet files exported from it."""
    from grace_arena.analysis import analyze as analyze_api
    from grace_arena.analysis import load

    store.save_packet(PACKET)
    teams = [
        TeamSpec(id="red", name="Red"),
        TeamSpec(id="quiet", name="Quiet", kind=TeamKind.MODEL, model=MODEL, buzzes={}),
    ]
    config = match_config(PACKET, teams, rules=ScoringRules(answer_time=None), title="Quiet")
    clock = [T0]
    rm = store.create(config, now=clock[0])
    rm.handle(Join(team="red", player="r1", name="Ruth"), now=_now(clock))
    rm.handle(StartTossup(tossup_id="fa-1"), now=_now(clock))
    rm.handle(Reveal(to=4), now=_now(clock))
    rm.handle(Buzz(team="red", player="r1"), now=_now(clock))
    rm.handle(Rule(ruling=Ruling.CORRECT), now=_now(clock))
    rm.handle(EndMatch(), now=_now(clock))

    data = load_record_data(store.engine, [rm.id])
    kinds = dict(zip(data.heard.team.astype(str), data.heard.team_kind.astype(str), strict=True))
    assert kinds == {"Red": "human", "Quiet": "model"}
    folder = tmp_path / "tables"
    result = CliRunner().invoke(
        app, ["export", "--db", db_url, "--format", "parquet", "--out", str(folder)]
    )
    assert result.exit_code == 0, result.output
    for source in (db_url, folder):
        result = analyze_api(load(source), n_resamples=10).to_dict()
        teams_table = result["teams"]
        assert {name: t["kind"] for name, t in teams_table.items()} == {
            "Red": "human",
            "Quiet": "model",
        }
        # one ruled buzz, by one of the two teams that played
        assert result["counts"]["buzzes"] == 1
        assert (result["counts"]["teams"], result["counts"]["teams_buzzing"]) == (2, 1)
    out = tmp_path / "report"
    result = CliRunner().invoke(
        app, ["analyze", "--db", db_url, "--report", str(out), "--resamples", "10"]
    )
    assert result.exit_code == 0, result.output
    assert "1 ruled buzzes by 1 of the 2 team(s) that played" in (out / "report.md").read_text()
