"""The LLM guesser through litellm: a mock response, and a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time

import pytest

from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.model import llm
from grace_arena.model.base import packet_prefixes
from grace_arena.model.cache import ResponseCache, cache_key
from grace_arena.model.corpus import load_corpus
from grace_arena.model.llm import LLMGuesser
from grace_arena.model.prompts import GUESS_INSTRUCTIONS, VERBAL_INSTRUCTIONS
from grace_arena.model.stub_server import StubServer, split_tokens
from grace_arena.model.tfidf import ExemplarRetriever

ANSWERS = {"Melville": "Moby-Dick", "whal": "Moby-Dick", "Frankenstein": "Frankenstein"}

pytestmark = [pytest.mark.usefixtures("private_cache"), pytest.mark.llm_server(answers=ANSWERS)]


@pytest.fixture(scope="module")
def retriever() -> ExemplarRetriever:
    return ExemplarRetriever(load_corpus())


@pytest.fixture(scope="module")
def prefixes():
    return packet_prefixes(load_packet(SAMPLE_PACKET_PATH))


def _guesser(server: StubServer, retriever, **kw) -> LLMGuesser:
    kw.setdefault("cache", None)
    kw.setdefault("num_retries", 2)
    return LLMGuesser("openai/stub", retriever=retriever, api_base=server.api_base, **kw)


def test_mock_response_with_logprobs_gives_span_confidences():
    probs = [0.9, 0.6, 0.8]
    mock = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Moby-Dick."},
                "logprobs": {
                    "content": [
                        {"token": t, "logprob": math.log(p), "bytes": None, "top_logprobs": []}
                        for t, p in zip(["Mob", "y-D", "ick"], probs, strict=True)
                    ]
                    + [{"token": ".", "logprob": -3.0, "bytes": None, "top_logprobs": []}]
                },
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 4, "total_tokens": 104},
    }
    guesser = LLMGuesser(
        "openai/gpt-4o-mini", verbal=False, completion_kwargs={"mock_response": mock}
    )
    prefix = packet_prefixes(load_packet(SAMPLE_PACKET_PATH))[0]
    guess = asyncio.run(guesser.guess(prefix))
    assert guess.error is None
    assert guess.guess == "Moby-Dick"
    assert guess.confidence_logit == pytest.approx(sum(probs) / 3)  # the "." is left out
    assert guess.confidence_logit_geo == pytest.approx(math.prod(probs) ** (1 / 3))
    assert guess.sequence_prob == pytest.approx(math.prod(probs))
    assert guess.confidence_verbal is None
    assert guess.prompt_tokens == 100 and guess.completion_tokens == 4
    assert guess.cost_usd is not None and guess.cost_usd > 0  # gpt-4o-mini has a price


@pytest.mark.parametrize("provider", ["openai", "hosted_vllm"])
def test_prompts_and_confidences_over_http(llm_server, retriever, prefixes, provider):
    guesser = LLMGuesser(
        f"{provider}/stub", retriever=retriever, api_base=llm_server.api_base, k=3, cache=None
    )
    prefix = prefixes[2]  # lit-american-1 after three clues
    guess = asyncio.run(guesser.guess(prefix))
    assert guess.error is None, guess.error
    assert len(llm_server.requests) == 2 and guess.calls == 2
    # Sent together, in either order: the guess is the one that asks for log-probabilities.
    [ask] = [r for r in llm_server.requests if "logprobs" in r]
    [verbal] = [r for r in llm_server.requests if "logprobs" not in r]
    # The guess: E.1 prompt, temperature 0, logprobs asked for.
    assert ask["model"] == "stub" and ask["temperature"] == 0
    assert ask["logprobs"] is True and ask["top_logprobs"] == 0
    [message] = ask["messages"]
    content = message["content"]
    assert message["role"] == "user"
    assert content.startswith(GUESS_INSTRUCTIONS + "\n\nQuestion: ")
    assert content.endswith(f"Question: {prefix.text}\nThe answer is:")
    assert content.count("Question: ") == 4 and content.count("The answer is: ") == 3
    for ex in guess.exemplars:
        assert f"The answer is: {ex['answer']}\n" in content
    assert prefix.question_text not in content
    # The verbalized confidence: D.4 prompt, same exemplars, no probabilities in them.
    v = verbal["messages"][0]["content"]
    assert v.startswith(VERBAL_INSTRUCTIONS) and v.endswith(f"Question: {prefix.text}")
    assert v.count("Probability:") == 1  # only in the instructions
    assert "logprobs" not in verbal and verbal["temperature"] == 0
    # Confidences: every stub token has probability 0.9.
    assert guess.guess == "Moby-Dick"
    n = len(split_tokens("Moby-Dick"))
    assert guess.confidence_logit == pytest.approx(0.9)
    assert guess.confidence_logit_geo == pytest.approx(0.9)
    assert guess.sequence_prob == pytest.approx(0.9**n)
    assert guess.confidence_verbal == pytest.approx(0.8)
    assert guess.extra["logprobs"] == "ok" and guess.extra["verbal_guess"] == "Moby-Dick"
    assert guess.cost_usd is None  # unknown local model: no price, and no crash
    assert guess.prompt_tokens > 0 and guess.latency_s > 0
    assert len(guess.exemplars) == 3


def test_retries_after_429_and_500(llm_server, retriever, prefixes):
    llm_server.fail_next = [429, 500]
    guess = asyncio.run(_guesser(llm_server, retriever).guess(prefixes[0]))
    assert guess.error is None, guess.error
    assert guess.guess is not None
    assert len(llm_server.requests) == 4  # 2 failures, the guess and the verbal call
    assert guess.calls == 2 and guess.confidence_verbal is not None


def test_a_prefix_sends_its_two_calls_together(retriever, prefixes):
    with StubServer(answers=ANSWERS, latency=0.1) as server:
        guess = asyncio.run(_guesser(server, retriever, concurrency=2).guess(prefixes[0]))
        assert guess.error is None and guess.calls == 2
        assert server.max_in_flight == 2  # one round trip for the prefix, not two
    with StubServer(answers=ANSWERS, latency=0.1) as server:
        guess = asyncio.run(_guesser(server, retriever, concurrency=1).guess(prefixes[0]))
        assert guess.error is None and guess.calls == 2
        assert server.max_in_flight == 1  # the limit still holds


def test_a_failed_call_fails_the_prefix(retriever, prefixes):
    with StubServer(answers=ANSWERS, latency=0.1) as server:
        server.fail_next = [500]  # the first request to arrive fails; no retries
        guesser = _guesser(server, retriever, num_retries=0, cache=None)
        guess = asyncio.run(guesser.guess(prefixes[0]))
    assert guess.guess is None and guess.error is not None and "500" in guess.error
    assert guess.confidence_verbal is None  # the other call was cancelled ...
    # ... in flight, or it was answered first: either way both requests went to the server.
    assert guess.calls == 2 and len(server.requests) == 2


def test_an_error_after_the_retries_is_reported_not_raised(llm_server, retriever, prefixes):
    llm_server.fail_next = [500] * 50
    guess = asyncio.run(_guesser(llm_server, retriever, num_retries=0).guess(prefixes[0]))
    assert guess.guess is None
    assert guess.error is not None and "500" in guess.error


def test_concurrency_limit_is_respected(retriever, prefixes):
    with StubServer(answers=ANSWERS, latency=0.1) as server:
        guesser = _guesser(server, retriever, concurrency=3, verbal=False)

        async def run_all():
            return await asyncio.gather(*(guesser.guess(p) for p in prefixes[:12]))

        guesses = asyncio.run(run_all())
    assert all(g.error is None for g in guesses)
    assert server.max_in_flight == 3  # 12 requests, never more than 3 at once


@pytest.mark.parametrize("provider", ["openai", "hosted_vllm"])
def test_only_requests_in_flight_hold_a_slot(retriever, prefixes, provider):
    """litellm sends through the guesser's session; its latency leaves out the wait."""
    with StubServer(answers=ANSWERS, latency=0.1) as server:
        guesser = LLMGuesser(
            f"{provider}/stub",
            retriever=retriever,
            api_base=server.api_base,
            concurrency=1,
            verbal=False,
            cache=None,
        )

        async def run_all():
            try:
                started = time.perf_counter()
                guesses = await asyncio.gather(*(guesser.guess(p) for p in prefixes[:4]))
                return guesses, guesser._limits_here().sent, time.perf_counter() - started
            finally:
                await guesser.aclose()

        guesses, sent, took = asyncio.run(run_all())
    assert all(g.error is None for g in guesses)
    assert sent == 4  # every request passed the guesser's own slots
    assert server.max_in_flight == 1
    # Four calls queued behind one slot, one after the other: each measured from its own
    # request, their latencies add up to about what the whole took (they overlap only by the
    # reading of a reply while the next request goes out); measured from the moment they were
    # queued, the waits would count 1 + 2 + 3 + 4 requests' time, 2.5 times the whole.
    assert all(g.extra["latency_guess_s"] > 0 for g in guesses)
    assert sum(g.extra["latency_guess_s"] for g in guesses) < 1.75 * took


def test_two_guessers_on_one_loop_keep_their_own_limits(retriever, prefixes):
    # litellm caches one client per provider and loop, whichever session made it: each
    # request must still count against the guesser that made it.
    with (
        StubServer(answers=ANSWERS, latency=0.05) as one,
        StubServer(answers=ANSWERS, latency=0.05) as three,
    ):
        narrow = _guesser(one, retriever, concurrency=1, verbal=False)
        wide = _guesser(three, retriever, concurrency=3, verbal=False)

        async def run_all():
            a = asyncio.gather(*(narrow.guess(p) for p in prefixes[:6]))
            b = asyncio.gather(*(wide.guess(p) for p in prefixes[:9]))
            out = await asyncio.gather(a, b)
            await narrow.aclose()
            # With the first session closed the other guesser still keeps its limit.
            out.append(await asyncio.gather(*(wide.guess(p) for p in prefixes[9:15])))
            await wide.aclose()
            return out

        results = asyncio.run(run_all())
    assert all(g.error is None for gs in results for g in gs)
    assert one.max_in_flight == 1 and three.max_in_flight == 3
    assert len(one.requests) == 6 and len(three.requests) == 15


def test_litellm_files_its_clients_where_the_guesser_drops_them(llm_server, retriever, prefixes):
    """Fails (never skips) on a litellm whose client cache moved or changed shape: the guesser
    could then no longer drop a client made on a session it has closed."""
    import litellm

    async def run() -> tuple[list[str], list[str]]:
        assert llm._find_litellm_clients()
        suffix = f"-{id(asyncio.get_running_loop())}"

        def this_loops() -> list[str]:
            cache = litellm.in_memory_llm_clients_cache.cache_dict
            return [k for k in cache if str(k).endswith(suffix)]

        guesser = _guesser(llm_server, retriever, verbal=False)
        assert (await guesser.guess(prefixes[0])).error is None
        made = this_loops()
        await guesser.aclose()
        return made, this_loops()

    made, left = asyncio.run(run())
    assert made  # the client made on the guesser's session, filed under this loop
    assert left == []


def test_without_litellm_client_cache_litellm_sends_through_its_own_sessions(
    monkeypatch, caplog, retriever, prefixes
):
    """litellm's client cache not as expected: one warning, no session of the guesser's, and
    calls on two event loops in turn still answered within the concurrency."""
    monkeypatch.setattr(llm, "_clients_found", None)
    monkeypatch.setattr(llm, "_find_litellm_clients", lambda: False)
    with StubServer(answers=ANSWERS, latency=0.05) as server:
        guesser = _guesser(server, retriever, concurrency=1, verbal=False)

        async def run(some):
            guesses = await asyncio.gather(*(guesser.guess(p) for p in some))
            return guesses, guesser._limits_here()

        with caplog.at_level(logging.WARNING, logger=llm.__name__):
            first, limits = asyncio.run(run(prefixes[:3]))
            second, _ = asyncio.run(run(prefixes[3:6]))
    assert all(g.error is None for g in first + second)
    assert limits.session is None and limits.sent == 0
    assert server.max_in_flight == 1 and len(server.requests) == 6
    warnings = [r for r in caplog.records if r.name == llm.__name__]
    assert len(warnings) == 1 and "client cache" in warnings[0].getMessage()


def test_cache_prevents_repeat_calls(llm_server, retriever, prefixes, tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite")
    first = asyncio.run(_guesser(llm_server, retriever, cache=cache).guess(prefixes[1]))
    assert first.calls == 2 and first.cache_hits == 0 and len(cache) == 2
    seen = len(llm_server.requests)
    again = asyncio.run(_guesser(llm_server, retriever, cache=cache).guess(prefixes[1]))
    assert len(llm_server.requests) == seen  # nothing sent
    assert again.calls == 0 and again.cache_hits == 2
    assert (again.guess, again.confidence_logit, again.confidence_verbal) == (
        first.guess,
        first.confidence_logit,
        first.confidence_verbal,
    )


def test_cache_key_depends_on_content_only():
    messages = [{"role": "user", "content": "hi"}]
    key = cache_key("openai/x", messages, {"temperature": 0})
    assert key == cache_key("openai/x", [dict(messages[0])], {"temperature": 0})
    assert key != cache_key("openai/y", messages, {"temperature": 0})
    assert key != cache_key("openai/x", messages, {"temperature": 0, "logprobs": True})
    assert key != cache_key("openai/x", [{"role": "user", "content": "hi!"}], {"temperature": 0})


def test_a_provider_that_rejects_logprobs_still_gives_verbal_confidence(prefixes):
    # litellm refuses logprobs for Anthropic before sending anything (UnsupportedParamsError).
    guesser = LLMGuesser(
        "anthropic/claude-3-haiku-20240307",
        api_key="test-key",
        cache=None,
        completion_kwargs={"mock_response": "The answer is: Moby-Dick\nProbability: 0.7"},
    )
    guess = asyncio.run(guesser.guess(prefixes[0]))
    assert guess.error is None, guess.error
    assert guesser.logprobs_supported is False
    assert guess.guess == "Moby-Dick"
    assert guess.confidence_logit is None and guess.sequence_prob is None
    assert guess.confidence_verbal == pytest.approx(0.7)
    assert guess.extra["logprobs"] == "unsupported"
    again = asyncio.run(guesser.guess(prefixes[1]))
    assert again.extra["logprobs"] == "unsupported" and again.confidence_verbal == 0.7


def test_a_server_that_sends_no_logprobs(retriever, prefixes):
    with StubServer(answers=ANSWERS, logprobs=False) as server:
        guess = asyncio.run(_guesser(server, retriever).guess(prefixes[0]))
    assert guess.error is None
    assert guess.guess == "Moby-Dick"
    assert guess.confidence_logit is None and guess.extra["logprobs"] == "missing"
    assert guess.confidence_verbal == pytest.approx(0.8)


def test_an_unparsable_verbal_confidence_is_missing(retriever, prefixes):
    with StubServer(answers=ANSWERS, verbal_probability="quite high") as server:
        guess = asyncio.run(_guesser(server, retriever).guess(prefixes[0]))
    assert guess.confidence_verbal is None  # never 0 or 0.5
    assert guess.extra["verbal_parsed"] is False
    assert guess.confidence_logit == pytest.approx(0.9)


def test_litellm_is_not_imported_by_the_model_package():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import grace_arena.model.policy, grace_arena.model.precompute, grace_arena.model.llm\n"
        "import grace_arena.model.threshold, grace_arena.cli.model\n"
        "print('litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_stub_server_takes_many_connections_at_once():
    """A listen backlog of 5 dropped the connections a client opened at once beyond it, which
    its TCP stack retried only a second later (a benchmark at concurrency 8 measured that
    second): 32 connections opened before the server accepts any all get through, and 160
    requests, 32 at a time, are all answered."""
    import socket
    from http.server import BaseHTTPRequestHandler

    from grace_arena.model.stub_server import _Server

    with _Server(("127.0.0.1", 0), BaseHTTPRequestHandler) as waiting:  # accepts nothing
        opened = [socket.create_connection(waiting.server_address, timeout=30) for _ in range(32)]
        for sock in opened:
            sock.close()

    body = b'{"model": "stub", "messages": [{"role": "user", "content": "Melville?"}]}'
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: stub\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
    )

    async def one(port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request)
        reply = await reader.read()
        writer.close()
        assert reply.startswith(b"HTTP/1.0 200") or reply.startswith(b"HTTP/1.1 200")

    async def rounds(port: int) -> None:
        for _ in range(5):
            await asyncio.gather(*(one(port) for _ in range(32)))

    with StubServer(latency=0.05) as server:
        asyncio.run(rounds(server.port))
        assert len(server.requests) == 160


def test_a_new_cache_file_opened_at_once_by_several_openers(tmp_path):
    # A pool's workers open the same new cache file together; setting up WAL mode there can
    # find the file locked without SQLite's busy timeout applying (a few % of tries here).
    failures: list[str] = []
    for trial in range(200):
        path = tmp_path / f"cache-{trial}.sqlite"
        start = threading.Barrier(4)

        def open_and_put(path=path, start=start) -> None:
            start.wait()
            try:
                cache = ResponseCache(path)
                cache.put(cache_key("m", [], {}), "m", {"content": "x"})
                cache.close()
            except Exception as exc:
                failures.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=open_and_put) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
