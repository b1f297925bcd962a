"""Model-player benchmarks: TF-IDF guessing and retrieval, precompute wall time, LLM throughput.

    .venv/bin/python bench/bench_model.py            # everything (a few minutes)
    .venv/bin/python bench/bench_model.py --quick    # skip the 100,000-document corpus

Prints numbers; asserts nothing. Each timing is the median of several runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import numpy as np

from grace_arena.core.packet import SAMPLE_PACKET_PATH, Packet, PacketMeta, Tossup, load_packet
from grace_arena.model.base import packet_prefixes
from grace_arena.model.cache import ResponseCache
from grace_arena.model.corpus import CorpusEntry, load_corpus
from grace_arena.model.llm import LLMGuesser
from grace_arena.model.precompute import ensure_precomputed, precompute
from grace_arena.model.prompts import guess_messages
from grace_arena.model.tfidf import ExemplarRetriever, TfidfGuesser
from grace_arena.model.workers import WorkerPool
from grace_arena.record.db import open_engine


def median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_sample_packet(runs: int) -> None:
    packet = load_packet(SAMPLE_PACKET_PATH)
    corpus = load_corpus()
    texts = [p.text for p in packet_prefixes(packet)]
    train = median_time(lambda: TfidfGuesser(corpus), runs)
    guesser = TfidfGuesser(corpus)
    t = median_time(lambda: guesser.guess_texts(texts), runs)
    print(f"TF-IDF training on the practice corpus ({len(corpus)} questions): {train * 1e3:.1f} ms")
    print(
        f"TF-IDF guesses, all {len(texts)} clue prefixes of the sample packet: "
        f"{t * 1e3:.1f} ms = {len(texts) / t:,.0f} guesses/s (batched)"
    )
    one = median_time(lambda: [guesser.guess_texts([x]) for x in texts], runs)
    print(f"  one prefix at a time: {len(texts) / one:,.0f} guesses/s")
    retriever = ExemplarRetriever(corpus)
    prefixes = packet_prefixes(packet)
    r = median_time(
        lambda: retriever.retrieve_many(
            texts, 3, question_texts=[p.question_text for p in prefixes]
        ),
        runs,
    )
    print(f"exemplar retrieval (k=3, question excluded): {len(texts) / r:,.0f} prefixes/s")

    def fresh_precompute() -> None:
        with tempfile.TemporaryDirectory() as d:
            ensure_precomputed(f"sqlite:///{Path(d) / 'r.db'}", packet)

    w = median_time(fresh_precompute, runs)
    n_parts = sum(len(b.parts) for b in packet.bonuses)
    print(
        f"precompute (tfidf) on the sample packet into a new record ({len(texts)} clue "
        f"prefixes, {n_parts} bonus parts): {w:.2f} s wall"
    )
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite:///{Path(d) / 'r.db'}"
        ensure_precomputed(url, packet)
        again = median_time(lambda: ensure_precomputed(url, packet), runs)
    print(f"  re-run (nothing to do): {again:.2f} s wall")


def synthetic_corpus(n_docs: int, n_pages: int, rng: np.random.Generator) -> list[CorpusEntry]:
    vocab = np.array([f"w{i}" for i in range(50_000)])
    topic_words = rng.integers(0, vocab.size, size=(n_pages, 40))
    entries = []
    for i in range(n_docs):
        page = i % n_pages
        common = rng.zipf(1.3, size=30) % vocab.size
        topical = rng.choice(topic_words[page], size=20)
        words = vocab[np.concatenate([common, topical])]
        rng.shuffle(words)
        entries.append(CorpusEntry(f"d{i}", f"page{page}", " ".join(words)))
    return entries


def bench_large(runs: int) -> None:
    rng = np.random.default_rng(0)
    n_docs, n_pages, n_queries = 100_000, 10_000, 10_000
    start = time.perf_counter()
    corpus = synthetic_corpus(n_docs, n_pages, rng)
    print(
        f"\nsynthetic corpus: {n_docs:,} documents, {n_pages:,} answers "
        f"({time.perf_counter() - start:.1f} s to make)"
    )
    queries = [" ".join(e.text.split()[:25]) for e in corpus[:n_queries]]
    start = time.perf_counter()
    guesser = TfidfGuesser(corpus)
    print(f"TF-IDF guesser training: {time.perf_counter() - start:.1f} s")
    t = median_time(lambda: guesser.guess_texts(queries), runs)
    print(
        f"TF-IDF guesses, {n_queries:,} prefixes vs {n_pages:,} answer documents: "
        f"{n_queries / t:,.0f} guesses/s"
    )
    start = time.perf_counter()
    retriever = ExemplarRetriever(corpus)
    print(f"retriever indexing: {time.perf_counter() - start:.1f} s")
    r = median_time(lambda: retriever.retrieve_many(queries, 3), runs)
    print(
        f"exemplar retrieval, {n_queries:,} prefixes vs {n_docs:,} documents (k=3): "
        f"{n_queries / r:,.0f} prefixes/s"
    )


def corpus_packet(corpus: list[CorpusEntry]) -> Packet:
    """The practice corpus as one packet (a tossup per entry): a longer run than the sample
    packet, whose prompts all differ, so that start-up weighs less in the throughput."""
    return Packet(
        format="grace-arena-packet/1",
        packet=PacketMeta(id="bench-practice-corpus", title="The practice corpus as a packet"),
        tossups=[
            Tossup(id=e.id, category=e.category or "Other", text=e.text, answer=e.answer or e.page)
            for e in corpus
        ],
    )


class ServerProcess:
    """The stub server in its own process, so it does not share the client's GIL."""

    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grace_arena.model.stub_server", "--latency", str(latency)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.api_base = self.proc.stdout.readline().strip()

    def stats(self) -> dict:
        with urllib.request.urlopen(f"{self.api_base}/stats") as r:
            return json.load(r)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def raw_litellm_rate(api_base: str, messages: list[list[dict]], concurrency: int) -> float:
    """Calls/s of bare ``litellm.acompletion`` calls: the client's own ceiling."""
    from grace_arena.model.llm import import_litellm

    litellm = import_litellm()

    async def run() -> float:
        limit = asyncio.Semaphore(concurrency)

        async def one(m: list[dict]) -> None:
            async with limit:
                await litellm.acompletion(
                    model="openai/stub", api_base=api_base, api_key="sk-local", messages=m,
                    temperature=0, max_tokens=24, logprobs=True, top_logprobs=0,
                )  # fmt: skip

        start = time.perf_counter()
        await asyncio.gather(*(one(m) for m in messages))
        return len(messages) / (time.perf_counter() - start)

    return asyncio.run(run())


def bench_llm(
    latency: float, concurrencies: list[int], runs: int, pool_runs: list[tuple[int, int]]
) -> None:
    packet = load_packet(SAMPLE_PACKET_PATH)
    retriever = ExemplarRetriever(load_corpus())
    print(
        f"\nLLM precompute of the sample packet against the stub server in its own process "
        f"({latency * 1e3:.0f} ms per request; 2 calls per prefix)"
    )
    prefixes = packet_prefixes(packet)
    messages = [
        guess_messages(p.text, [(e.text, e.page) for e in ex])
        for p, ex in zip(
            prefixes,
            retriever.retrieve_many(
                [p.text for p in prefixes], 3, question_texts=[p.question_text for p in prefixes]
            ),
            strict=True,
        )
    ] * 2  # as many calls as a precompute (guess + verbal per prefix)
    server = ServerProcess(latency)
    try:
        with tempfile.TemporaryDirectory() as d:
            cache = None
            # (the tossups last: the second run below reads the last cache made)
            kinds = (
                ("bonus parts", {"tossups": [], "bonuses": True}),
                ("tossup clue prefixes", {"bonuses": False}),
            )
            for concurrency in concurrencies:
                bound = concurrency / latency
                raw = statistics.median(
                    raw_litellm_rate(server.api_base, messages, concurrency) for _ in range(runs)
                )
                for kind, which in kinds:
                    rates = []
                    cpus = []
                    for run in range(runs):
                        tag = f"{concurrency}-{run}-{kind[:5]}"
                        cache = ResponseCache(Path(d) / f"cache-{tag}.sqlite")
                        engine = open_engine(f"sqlite:///{Path(d) / f'r-{tag}.db'}")
                        guesser = LLMGuesser(
                            "openai/stub",
                            retriever=retriever,
                            api_base=server.api_base,
                            concurrency=concurrency,
                            cache=cache,
                        )
                        start, cpu = time.perf_counter(), time.process_time()
                        stats = asyncio.run(precompute(engine, packet, guesser, **which))
                        rates.append(stats.calls / (time.perf_counter() - start))
                        cpus.append((time.process_time() - cpu) / stats.calls)
                        engine.dispose()
                    rate = statistics.median(rates)
                    cpu = statistics.median(cpus)
                    print(
                        f"  concurrency {concurrency:2d}, {kind} ({stats.calls} calls): bound "
                        f"{bound:5.0f} calls/s, achieved {rate:6.1f} calls/s (median of {runs}) "
                        f"= {rate / bound:.0%} of the bound; bare litellm calls {raw:6.1f}/s = "
                        f"{raw / bound:.0%}; precompute / bare = {rate / raw:.0%}; "
                        f"client CPU {cpu * 1e3:.1f} ms per call, "
                        f"so one core does at most {1 / cpu:.0f} calls/s"
                    )
            long_packet = corpus_packet(load_corpus())
            for concurrency, workers in pool_runs:
                bound = concurrency / latency
                for label, pkt in (("sample packet", packet), ("practice corpus", long_packet)):
                    rates, starts, calls = [], [], 0
                    for run in range(runs):
                        tag = f"{concurrency}x{workers}-{label}-{run}"  # a new record and cache
                        engine = open_engine(f"sqlite:///{Path(d) / f'w-{tag}.db'}")
                        start = time.perf_counter()
                        with WorkerPool(
                            "openai/stub",
                            workers=workers,
                            api_base=server.api_base,
                            concurrency=concurrency,
                            cache=str(Path(d) / f"cache-w-{tag}.sqlite"),
                        ) as pool:
                            starts.append(time.perf_counter() - start)
                            start = time.perf_counter()
                            stats = asyncio.run(precompute(engine, pkt, pool, bonuses=False))
                            rates.append(stats.calls / (time.perf_counter() - start))
                            calls = stats.calls
                        engine.dispose()
                    rate = statistics.median(rates)
                    print(
                        f"  concurrency {concurrency:2d} in {workers} worker processes (precompute "
                        f"--workers {workers}), {label} ({len(pkt.tossups)} tossups, {calls} "
                        f"calls): bound {bound:5.0f} calls/s, achieved {rate:6.1f} calls/s "
                        f"(median of {runs}) = {rate / bound:.0%} of the bound (runs: "
                        f"{', '.join(f'{r / bound:.0%}' for r in rates)}); a new pool's start-up "
                        f"(not counted) {statistics.median(starts):.1f} s"
                    )
            engine = open_engine(f"sqlite:///{Path(d) / 'again.db'}")
            before = server.stats()["requests"]
            guesser = LLMGuesser(
                "openai/stub", retriever=retriever, api_base=server.api_base, cache=cache
            )
            start = time.perf_counter()
            stats = asyncio.run(precompute(engine, packet, guesser, bonuses=False))
            wall = time.perf_counter() - start
            sent = server.stats()["requests"] - before
            hits = stats.cache_hits / max(stats.cache_hits + stats.calls, 1)
            print(
                f"  second run into a new record: {stats.cache_hits} cache hits, "
                f"{stats.calls} calls ({hits:.0%} hits), {sent} requests, {wall:.2f} s"
            )
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="skip the 100k-document corpus")
    parser.add_argument("--large-runs", type=int, default=1)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument(
        "--pool",
        nargs="*",
        default=["4x2", "8x2"],
        help="CONCURRENCYxWORKERS runs through worker processes (default 4x2 8x2)",
    )
    args = parser.parse_args()
    bench_sample_packet(args.runs)
    pools = [tuple(int(x) for x in spec.split("x")) for spec in args.pool]
    bench_llm(args.latency, args.concurrency, 3, pools)  # type: ignore[arg-type]
    if not args.quick:
        bench_large(args.large_runs)


if __name__ == "__main__":
    main()
