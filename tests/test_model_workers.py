"""The LLM guesser split over worker processes, against the stub server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.model.base import Guess, packet_prefixes
from grace_arena.model.cache import ResponseCache
from grace_arena.model.corpus import load_corpus
from grace_arena.model.llm import LLMGuesser
from grace_arena.model.policy import BuzzPolicy
from grace_arena.model.precompute import _store, precompute
from grace_arena.model.tfidf import ExemplarRetriever
from grace_arena.model.workers import WorkerPool, _PipeWriter, _run
from grace_arena.record.db import open_engine
from grace_arena.record.models import ModelStepRow
from grace_arena.record.store import MatchStore

ANSWERS = {"Melville": "Moby-Dick", "Geneva": "Frankenstein", "whal": "Moby-Dick"}

pytestmark = [
    pytest.mark.slow,  # each pool starts Python processes that import litellm
    pytest.mark.usefixtures("private_cache"),
    pytest.mark.llm_server(answers=ANSWERS, latency=0.05),
]
TOSSUPS = ["lit-american-1", "lit-british-1", "sci-physics-1"]


def _steps(engine) -> dict[tuple[str, int], tuple]:
    with Session(engine) as session:
        rows = session.exec(select(ModelStepRow)).all()
    return {
        (r.tossup_id, r.step): (
            r.guess,
            r.confidence_logit,
            r.confidence_verbal,
            r.correct,
            tuple(e["id"] for e in r.exemplars),
        )
        for r in rows
    }


def test_a_pool_stores_what_one_process_stores_within_the_concurrency(sample, llm_server, tmp_path):
    in_process = open_engine(f"sqlite:///{tmp_path / 'one.db'}")
    guesser = LLMGuesser(
        "openai/stub",
        retriever=ExemplarRetriever(load_corpus()),
        api_base=llm_server.api_base,
        num_retries=0,
        concurrency=3,
    )
    asyncio.run(precompute(in_process, sample, guesser, tossups=TOSSUPS))

    cache = tmp_path / "pool-cache.sqlite"
    with WorkerPool(
        "openai/stub",
        workers=2,
        api_base=llm_server.api_base,
        concurrency=3,
        num_retries=0,
        cache=ResponseCache(cache),
    ) as pool:
        assert pool.shares == [2, 1] and pool.name == "openai/stub"
        llm_server.max_in_flight = 0
        before = len(llm_server.requests)
        pooled = open_engine(f"sqlite:///{tmp_path / 'pool.db'}")
        stats = asyncio.run(precompute(pooled, sample, pool, tossups=TOSSUPS))
        steps = _steps(pooled)
        assert stats.errors == 0 and stats.stored == len(steps) == stats.steps
        assert stats.calls == 2 * stats.steps == len(llm_server.requests) - before
        assert llm_server.max_in_flight == 3  # the limit is over all workers, and is used
        assert steps == _steps(in_process)

        # The same workers serve another event loop, from the cache they share.
        again = open_engine(f"sqlite:///{tmp_path / 'again.db'}")
        sent = len(llm_server.requests)
        stats = asyncio.run(precompute(again, sample, pool, tossups=TOSSUPS))
        assert stats.calls == 0 and stats.cache_hits == 2 * stats.steps
        assert len(llm_server.requests) == sent and _steps(again) == steps
    for worker in pool._workers:
        assert worker.proc.returncode == 0  # closed, not killed


def test_a_dead_worker_fails_only_what_it_holds(sample, llm_server, tmp_path):
    engine = open_engine(f"sqlite:///{tmp_path / 'r.db'}")
    with WorkerPool(
        "openai/stub", workers=2, api_base=llm_server.api_base, concurrency=2, num_retries=0
    ) as pool:
        os.kill(pool._workers[1].proc.pid, signal.SIGKILL)
        pool._workers[1].proc.wait()
        stats = asyncio.run(precompute(engine, sample, pool, tossups=TOSSUPS))
        # at most the places it had when it died; the rest went to the live worker
        assert stats.errors <= 2 * pool.shares[1]
        assert stats.stored == stats.steps - stats.errors
        assert stats.questions_done == stats.questions  # every step was accounted for
        assert all("worker" in m for m in stats.error_messages)
        again = asyncio.run(precompute(engine, sample, pool, tossups=TOSSUPS))
        assert again.errors == 0 and again.stored == stats.errors  # the next run fills them
        os.kill(pool._workers[0].proc.pid, signal.SIGKILL)
        pool._workers[0].proc.wait()
        fresh = open_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
        dead = asyncio.run(precompute(fresh, sample, pool, tossups=TOSSUPS))
        assert dead.errors == dead.steps and dead.stored == 0  # all dead: errors, no hang


def test_a_worker_that_cannot_start_says_so(tmp_path, capfd):
    with pytest.raises(RuntimeError, match="before it was ready"):
        WorkerPool("openai/stub", workers=2, concurrency=2, corpus=tmp_path / "missing.jsonl")
    assert "cannot build the guesser" in capfd.readouterr().err


def test_each_worker_needs_a_request_in_flight():
    with pytest.raises(ValueError, match="--concurrency 1 is less than --workers 2"):
        WorkerPool("openai/stub", workers=2, concurrency=1)


def test_precompute_command_with_workers(llm_server, tmp_path):
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    result = CliRunner().invoke(
        app,
        [
            "precompute",
            "--packet",
            str(SAMPLE_PACKET_PATH),
            "--model",
            "openai/stub",
            "--api-base",
            llm_server.api_base,
            "--workers",
            "2",
            "--concurrency",
            "4",
            "--retries",
            "0",
            "--tossup",
            "lit-american-1",
            "--db",
            db,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "starting 2 worker processes" in result.output
    assert "6 steps stored" in result.output and "12 calls" in result.output
    assert "cost unknown (no price for this model)" in result.output  # not "$0.0000"


def test_a_batch_commit_skips_a_step_another_run_stored(sample, tmp_path):
    engine = open_engine(f"sqlite:///{tmp_path / 'r.db'}")
    MatchStore(engine).save_packet(sample, source=sample.path)
    prefixes = [p for p in packet_prefixes(sample) if p.tossup_id == "lit-american-1"]
    steps = [(p, Guess(guess="Moby-Dick", confidence_logit=0.9)) for p in prefixes]
    assert len(_store(engine, "m", steps[2:3], BuzzPolicy())) == 1
    stored = _store(engine, "m", steps, BuzzPolicy())
    assert [p.step for p in stored] == [p.step for p in prefixes if p.step != 2]
    assert len(_steps(engine)) == len(steps)


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop is not installed on Windows")
def test_a_worker_runs_on_uvloop_where_installed(monkeypatch):
    assert _run(_loop_module()).startswith("uvloop")
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if it were not installed
    assert _run(_loop_module()).startswith("asyncio")


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_send_to_a_worker_waits_while_its_pipe_is_full(loop):
    """The pipe to a worker (a real one, on either event loop): a send that fills it waits
    until the other end reads, and a send after the other end closed raises."""
    if loop == "uvloop" and sys.platform == "win32":
        pytest.skip("uvloop is not installed on Windows")
    run = __import__("uvloop").run if loop == "uvloop" else asyncio.run
    chunk = b"x" * (1 << 20)  # more than a pipe holds (64 KiB on Linux)

    async def main() -> tuple[bool, int]:
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        _, pipe = await asyncio.get_running_loop().connect_write_pipe(
            _PipeWriter, os.fdopen(write_fd, "wb")
        )
        sending = asyncio.ensure_future(pipe.send(chunk))
        await asyncio.sleep(0.1)
        waited = not sending.done()
        received = 0
        while not sending.done():
            try:
                received += len(os.read(read_fd, 1 << 16))
            except BlockingIOError:
                await asyncio.sleep(0.01)
        await sending
        os.close(read_fd)
        with pytest.raises(ConnectionError):
            for _ in range(100):  # until the loop has seen the other end go
                await pipe.send(b"more")
                await asyncio.sleep(0.01)
        return waited, received

    waited, received = run(main())
    assert waited
    # It went on once nearly all of it was read: what the pipe holds and the transport's
    # low-water mark were left.
    assert len(chunk) - (1 << 17) <= received < len(chunk)
