"""Precompute into the record, idempotently; the buzz policy; the model commands."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from backends import on_both_backends
from sqlmodel import Session, select
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.config import TeamKind
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.model.base import packet_prefixes
from grace_arena.model.cache import ResponseCache
from grace_arena.model.corpus import load_corpus
from grace_arena.model.llm import LLMGuesser
from grace_arena.model.policy import BuzzPolicy, first_buzz, load_steps, model_team
from grace_arena.model.precompute import (
    PrecomputeStats,
    cost_text,
    ensure_precomputed,
    make_guesser,
    precompute,
)
from grace_arena.model.stub_server import StubServer
from grace_arena.model.tfidf import ExemplarRetriever
from grace_arena.record.db import make_engine, open_engine
from grace_arena.record.models import ModelStepRow, TossupRow

runner = CliRunner()

pytestmark = pytest.mark.usefixtures("private_cache")


def _rows(engine, model=None) -> list[ModelStepRow]:
    with Session(engine) as session:
        query = select(ModelStepRow)
        if model:
            query = query.where(ModelStepRow.model == model)
        return list(session.exec(query).all())


@on_both_backends
def test_tfidf_precompute_stores_every_step_and_is_idempotent(db_url, sample):
    first = ensure_precomputed(db_url, sample)
    n = len(packet_prefixes(sample))
    assert first.stored == n and first.errors == 0
    engine = make_engine(db_url)
    rows = _rows(engine)
    assert len(rows) == n
    row = next(r for r in rows if r.tossup_id == "lit-american-1" and r.step == 5)
    assert row.model == "tfidf" and row.packet_id == sample.packet.id
    assert row.word_index == sample.tossup("lit-american-1").tokens().clue_ends[5]
    assert row.guess == "Moby-Dick" and row.correct is True and row.judge_directive == "accept"
    assert 0 < row.confidence_logit <= 1 and row.confidence_verbal is None
    assert row.would_buzz is (row.confidence_logit >= 0.5)
    assert row.latency_s is not None and row.extra["policy"]["threshold"] == 0.5
    with Session(engine) as session:  # the packet is stored alongside
        assert len(session.exec(select(TossupRow)).all()) == len(sample.tossups)
    again = ensure_precomputed(db_url, sample)
    assert again.stored == 0 and again.skipped == n
    assert len(_rows(engine)) == n


def test_model_team_buzzes_at_the_last_word_of_the_first_confident_prefix(db_url, sample):
    ensure_precomputed(db_url, sample)
    engine = make_engine(db_url)
    policy = BuzzPolicy(confidence="logit", threshold=0.9)
    team = model_team(engine, "tfidf", sample, policy, team_id="m1")
    assert team.kind is TeamKind.MODEL and team.model == "tfidf" and team.id == "m1"
    steps = load_steps(engine, "tfidf", sample.packet.id)
    checked = 0
    for tossup in sample.tossups:
        rows = steps[tossup.id]
        qualifying = [r for r in rows if r.confidence_logit >= 0.9]
        if not qualifying:
            assert tossup.id not in team.buzzes
            continue
        first = min(qualifying, key=lambda r: r.step)
        buzz = team.buzzes[tossup.id]
        assert buzz.word_index == tossup.tokens().clue_ends[first.step]
        assert buzz.guess == first.guess and buzz.confidence == first.confidence_logit
        checked += 1
    assert checked >= 10
    # The gate moves every buzz to a prefix ending at or after word 60.
    gated = model_team(engine, "tfidf", sample, BuzzPolicy(threshold=0.9, not_before_word=60))
    assert gated.buzzes and all(b.word_index >= 60 for b in gated.buzzes.values())
    assert any(gated.buzzes[k].word_index > team.buzzes[k].word_index for k in gated.buzzes)
    with pytest.raises(LookupError, match="precompute"):
        model_team(engine, "never-run", sample, policy)


def test_first_buzz_on_hand_made_steps():
    def step(i, w, c, guess="x"):
        return ModelStepRow(
            model="m", packet_id="p", tossup_id="t", step=i, word_index=w,
            guess=guess, confidence_logit=c, confidence_verbal=None,
        )  # fmt: skip

    steps = [step(2, 30, 0.95), step(0, 10, 0.2), step(1, 20, 0.7, guess=None), step(3, 40, 0.6)]
    assert first_buzz(steps, BuzzPolicy(threshold=0.5)).step == 2  # no guess: no buzz
    assert first_buzz(steps, BuzzPolicy(threshold=0.2)).step == 0  # >= threshold
    assert first_buzz(steps, BuzzPolicy(threshold=0.5, not_before_word=31)).step == 3
    assert first_buzz(steps, BuzzPolicy(threshold=0.99)) is None
    assert first_buzz(steps, BuzzPolicy(confidence="verbal", threshold=0.0)) is None  # missing
    with pytest.raises(ValueError, match="confidence"):
        BuzzPolicy(confidence="vibes")  # type: ignore[arg-type]


def _llm(server, **kw) -> LLMGuesser:
    return LLMGuesser(
        "openai/stub",
        retriever=ExemplarRetriever(load_corpus()),
        api_base=server.api_base,
        num_retries=0,
        **kw,
    )


def test_llm_precompute_is_idempotent_and_makes_no_second_calls(db_url, sample, tmp_path):
    engine = open_engine(db_url)
    tossups = ["lit-american-1", "lit-british-1"]
    with StubServer(answers={"Melville": "Moby-Dick", "Geneva": "Frankenstein"}) as server:
        stats = asyncio.run(precompute(engine, sample, _llm(server, cache=None), tossups=tossups))
        assert stats.stored == 12 and stats.calls == 24 and stats.errors == 0
        assert stats.questions_done == 2
        rows = _rows(engine, "openai/stub")
        assert len(rows) == 12
        assert all(r.confidence_logit == pytest.approx(0.9) for r in rows if r.guess != "None")
        assert all(r.confidence_verbal == pytest.approx(0.8) for r in rows)
        assert all(len(r.exemplars) == 3 for r in rows)
        assert {r.prompt_tokens > 0 for r in rows} == {True}
        sent = len(server.requests)
        again = asyncio.run(precompute(engine, sample, _llm(server, cache=None), tossups=tossups))
        assert len(server.requests) == sent  # no calls
        assert again.stored == 0 and again.calls == 0 and again.skipped == 12
        assert len(_rows(engine, "openai/stub")) == 12


def test_a_fresh_record_is_filled_from_the_cache(sample, tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with StubServer(answers={"Melville": "Moby-Dick"}) as server:
        for i in range(2):
            engine = open_engine(f"sqlite:///{tmp_path / f'r{i}.db'}")
            stats = asyncio.run(
                precompute(engine, sample, _llm(server, cache=cache), tossups=["lit-american-1"])
            )
            assert stats.stored == 6
            if i == 0:
                assert stats.calls == 12 and stats.cache_hits == 0
            else:
                assert stats.calls == 0 and stats.cache_hits == 12
        assert len(server.requests) == 12
    assert all(r.extra["cached"] for r in _rows(engine))


@on_both_backends
def test_failed_steps_are_not_stored_and_a_rerun_fills_them(db_url, sample):
    engine = open_engine(db_url)
    with StubServer(answers={"Melville": "Moby-Dick"}) as server:
        server.fail_next = [500] * 6  # the first six requests fail
        g = _llm(server, cache=None, concurrency=1, verbal=False)
        stats = asyncio.run(precompute(engine, sample, g, tossups=["lit-american-1"]))
        assert stats.errors > 0 and stats.stored == 6 - stats.errors
        assert "500" in stats.error_messages[0]
        stats = asyncio.run(precompute(engine, sample, g, tossups=["lit-american-1"]))
        assert stats.errors == 0 and len(_rows(engine)) == 6


def test_a_prompt_directive_is_stored_as_incorrect(db_url, tmp_path):
    packet_file = tmp_path / "p.yaml"
    packet_file.write_text(
        "format: grace-arena-packet/1\npacket: {id: pr, title: Prompt test}\ntossups:\n"
        "  - id: t1\n    category: Literature\n"
        "    clues: [This novel features a white whale., Name this Melville novel.]\n"
        '    answer: "<b>Moby-Dick</b> [prompt on whale]"\n'
    )
    packet = load_packet(packet_file)
    engine = open_engine(db_url)
    with StubServer(answers={"whale": "whale"}) as server:
        asyncio.run(precompute(engine, packet, _llm(server, cache=None, k=0)))
    rows = _rows(engine)
    assert {(r.guess, r.correct, r.judge_directive) for r in rows} == {("whale", False, "prompt")}


def test_ensure_precomputed_refuses_to_run_an_llm(db_url, sample):
    with pytest.raises(LookupError, match="not been precomputed"):
        ensure_precomputed(db_url, sample, model="openai/gpt-4o-mini")


def test_make_guesser_defaults_to_tfidf():
    assert make_guesser().name == "tfidf"
    g = make_guesser("openai/x", cache=None, k=2)
    assert isinstance(g, LLMGuesser) and g.k == 2


# -- the commands -------------------------------------------------------------------------------


def test_precompute_show_and_threshold_commands(db_url, tmp_path):
    packet = str(SAMPLE_PACKET_PATH)
    result = runner.invoke(app, ["precompute", "--packet", packet, "--db", db_url])
    assert result.exit_code == 0, result.output
    assert "156 steps stored" in result.output
    result = runner.invoke(app, ["precompute", "--packet", packet, "--db", db_url])
    assert result.exit_code == 0 and "0 steps stored, 156 already in the record" in result.output

    result = runner.invoke(
        app, ["model", "show", "tfidf", "--packet", packet, "--db", db_url, "--threshold", "0.9"]
    )
    assert result.exit_code == 0, result.output
    assert "BUZZ" in result.output and "buzzes at word" in result.output
    assert "lit-american-1" in result.output

    result = runner.invoke(app, ["model", "threshold", "tfidf", "--db", db_url, "--alpha", "0.2"])
    assert result.exit_code == 0, result.output
    assert "threshold" in result.output

    curve = tmp_path / "curve.json"
    curve.write_text(json.dumps({"coefficients": [0, 0, -1, 1]}))  # w(x) = 1 - x
    result = runner.invoke(
        app,
        ["model", "threshold", "tfidf", "--db", db_url, "--method", "ew",
         "--human-curve", str(curve)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "expected wins" in result.output

    result = runner.invoke(app, ["model", "threshold", "tfidf", "--db", db_url, "--method", "ew"])
    assert result.exit_code == 1 and "--human-curve" in result.output

    result = runner.invoke(app, ["model", "show", "nobody", "--packet", packet, "--db", db_url])
    assert result.exit_code == 1


@pytest.mark.parametrize(
    "args", [["precompute"], ["model"], ["model", "show"], ["model", "threshold"]]
)
def test_model_commands_have_help(args):
    result = runner.invoke(app, [*args, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_make_guesser_takes_a_cache_path(tmp_path):
    for path in (tmp_path / "a.sqlite", str(tmp_path / "b.sqlite")):
        guesser = make_guesser("openai/stub", cache=path)
        assert isinstance(guesser, LLMGuesser) and isinstance(guesser.cache, ResponseCache)
        assert guesser.cache.path == Path(path)
    assert make_guesser("openai/stub", cache=None).cache is None


def test_cost_text_says_when_the_price_is_unknown():
    assert cost_text(PrecomputeStats()) == "cost $0.0000"  # e.g. TF-IDF: no calls
    assert cost_text(PrecomputeStats(cost_usd=0.0123, priced=3)) == "cost $0.0123"
    assert cost_text(PrecomputeStats(unpriced=4)) == "cost unknown (no price for this model)"
    assert cost_text(PrecomputeStats(cost_usd=0.5, priced=1, unpriced=2)) == (
        "cost $0.5000 + 2 steps with no known price"
    )
    assert cost_text(PrecomputeStats(priced=1, unpriced=2)) == (  # a free model, priced at 0
        "cost $0.0000 + 2 steps with no known price"
    )


def test_a_priced_model_adds_up_its_cost(db_url, sample):
    # mock_response: litellm answers without a request, and prices it as gpt-4o-mini.
    guesser = LLMGuesser(
        "openai/gpt-4o-mini",
        retriever=ExemplarRetriever(load_corpus()),
        cache=None,
        completion_kwargs={"mock_response": "Moby-Dick. Probability: 0.9"},
    )
    stats = asyncio.run(
        precompute(open_engine(db_url), sample, guesser, tossups=["lit-american-1"])
    )
    assert stats.errors == 0 and stats.priced == 6 and stats.unpriced == 0
    assert stats.cost_usd > 0 and cost_text(stats) == f"cost ${stats.cost_usd:.4f}"


@on_both_backends
def test_bonus_parts_are_precomputed_with_the_parts_read_before_them(db_url, sample):
    """Each part is asked after the lead-in and the earlier parts with their answers; stored
    per part, judged, and the run is idempotent like the tossup steps."""
    from grace_arena.model.base import bonus_prefixes
    from grace_arena.model.policy import load_bonus_answers
    from grace_arena.record.models import ModelBonusPartRow

    first = ensure_precomputed(db_url, sample)
    n_parts = sum(len(b.parts) for b in sample.bonuses)
    assert n_parts == 60 and first.parts == first.parts_stored == n_parts
    engine = make_engine(db_url)
    with Session(engine) as session:
        rows = session.exec(select(ModelBonusPartRow)).all()
    assert len(rows) == n_parts
    third = next(r for r in rows if r.bonus_id == "b-lit-american-1" and r.part == 2)
    asked = third.extra["asked"]
    assert asked.startswith("This author's narrator begins a novel")
    assert "ANSWER: Mark Twain." in asked and "ANSWER: Pap Finn." in asked
    assert asked.endswith("drift past it in a fog.")
    assert third.judge_directive in ("accept", "prompt", "reject")
    assert third.correct is (third.judge_directive == "accept")
    assert third.confident is (third.confidence_logit >= 0.5)
    prefixes = bonus_prefixes(sample)
    assert [p.text for p in prefixes if p.tossup_id == "b-lit-american-1"][2] == asked
    again = ensure_precomputed(db_url, sample)
    assert again.parts_stored == 0 and again.parts_skipped == n_parts
    answers = load_bonus_answers(engine, "tfidf", sample)
    assert len(answers) == 20 and all(len(a) == 3 for a in answers.values())
    team = model_team(engine, "tfidf", sample, BuzzPolicy())
    assert team.bonus_answers == answers
    # a bonus whose last part was not stored (its guess failed) is not complete: left out
    with Session(engine) as session:
        session.delete(
            session.exec(
                select(ModelBonusPartRow).where(
                    ModelBonusPartRow.bonus_id == "b-lit-american-1", ModelBonusPartRow.part == 2
                )
            ).one()
        )
        session.commit()
    assert "b-lit-american-1" not in load_bonus_answers(engine, "tfidf", sample)
    from grace_arena.model.policy import missing_bonus_parts

    assert missing_bonus_parts(engine, "tfidf", sample) == ["b-lit-american-1"]


def test_an_llm_is_asked_bonus_parts_in_the_same_run_and_cache(sample, tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    bonus = sample.bonuses[0]
    with StubServer(answers={"Adventures of Huckleberry Finn": "Mark Twain"}) as server:
        engine = open_engine(f"sqlite:///{tmp_path / 'r.db'}")
        guesser = _llm(server, cache=cache)
        stats = asyncio.run(precompute(engine, sample, guesser, tossups=[], bonuses=[bonus.id]))
        assert (stats.steps, stats.parts, stats.parts_stored, stats.errors) == (0, 3, 3, 0)
        assert stats.calls == 6  # a guess and a verbal confidence per part
        again = asyncio.run(
            precompute(open_engine(f"sqlite:///{tmp_path / 'r2.db'}"), sample,
                       _llm(server, cache=cache), tossups=[], bonuses=[bonus.id])
        )  # fmt: skip
        assert again.calls == 0 and again.cache_hits == 6 and again.parts_stored == 3
        prompts = [json.dumps(r["messages"]) for r in server.requests]
    assert any("ANSWER: Mark Twain." in p for p in prompts)  # part 2 is asked after part 1's
    from grace_arena.record.models import ModelBonusPartRow

    with Session(engine) as session:
        first = session.exec(select(ModelBonusPartRow).where(ModelBonusPartRow.part == 0)).one()
    assert first.guess == "Mark Twain" and first.correct is True
    assert first.confidence_logit == pytest.approx(0.9)
    assert first.confidence_verbal == pytest.approx(0.8)


def test_precompute_picks_tossups_bonuses_or_both(tmp_path):
    from grace_arena.record.models import ModelBonusPartRow

    db = f"sqlite:///{tmp_path / 'r.db'}"
    base = ["precompute", "--packet", str(SAMPLE_PACKET_PATH), "--db", db]
    result = runner.invoke(app, [*base, "--tossup", "lit-american-1"])
    assert result.exit_code == 0, result.output
    engine = make_engine(db)
    with Session(engine) as session:
        assert session.exec(select(ModelBonusPartRow)).all() == []  # tossups only
    result = runner.invoke(app, [*base, "--bonus", "b-lit-british-1"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "3 bonus parts stored" in said and "0 steps stored" in said
    with Session(engine) as session:
        parts = session.exec(select(ModelBonusPartRow)).all()
        assert {(p.bonus_id, p.part) for p in parts} == {("b-lit-british-1", i) for i in range(3)}
    assert len(_rows(engine)) == 6  # no more tossup steps than the first run's
    result = runner.invoke(app, [*base, "--bonus", "b-lit-british-1", "--no-bonuses"])
    assert result.exit_code == 2 and "not both" in result.output
