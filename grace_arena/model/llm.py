"""The LLM guesser: any litellm provider string, GRACE's prompts, two confidences per prefix.

For each clue prefix it makes two independent calls, sent together, both at temperature 0:

1. the guess (appendix E.1 prompt with ``k`` TF-IDF exemplars), asking for token
   log-probabilities (``logprobs=True, top_logprobs=0``); the logit confidences are computed over
   the answer span only (:mod:`grace_arena.model.confidence`);
2. the verbalized confidence (appendix D.4 prompt, same exemplars), parsed with
   :func:`~grace_arena.model.confidence.parse_verbal`. The guess of this second call is kept in
   ``extra["verbal_guess"]``; the stored guess is the first call's.

A provider that rejects log-probabilities (litellm raises ``UnsupportedParamsError``: Anthropic,
Bedrock, Mistral, ``ollama/``, reasoning models) is remembered for the rest of the run; its
guesses are made without them, recorded with ``extra["logprobs"] = "unsupported"`` and no logit
confidence, and verbalized confidence still works. ``drop_params`` is never used, since it would
make log-probabilities vanish silently.

``concurrency`` bounds the HTTP requests in flight to the provider: a request holds one of
``concurrency`` slots from the moment it is sent until its response arrives. litellm's own work
before and after a request (building it, parsing the reply, pricing it) holds no slot, so with a
fast server the next request goes out while the last reply is being parsed. This works for the
providers for which litellm sends through the aiohttp session it is given (``shared_session``:
OpenAI and OpenAI-compatible servers, ``hosted_vllm/``, Anthropic and most others); for any other
provider, and whenever litellm sends through a session of its own, the whole call holds the slot,
so the bound holds either way. Passing a session relies on an internal of litellm's, its cache of
HTTP clients (see :func:`_forget_litellm_clients`), checked on first use: if it is not where and
what this module expects, the guesser passes no session, litellm sends through its own, and one
warning says so. Requests are retried by litellm (``num_retries`` with
``retry_strategy="exponential_backoff_retry"``) and cached by content
(:class:`~grace_arena.model.cache.ResponseCache`). Cost is what litellm priced the response at
(its ``response_cost``, else ``litellm.completion_cost``) when it knows the model's price, else
``None``. litellm is imported only when the first request is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from grace_arena.model.base import Guess, Prefix
from grace_arena.model.cache import ResponseCache, cache_key
from grace_arena.model.confidence import (
    answer_span,
    clean_answer,
    logit_confidences,
    parse_verbal,
    parse_verbal_answer,
)
from grace_arena.model.prompts import guess_messages, verbal_messages
from grace_arena.model.tfidf import ExemplarRetriever

__all__ = ["DEFAULT_K", "LLMGuesser", "import_litellm"]

DEFAULT_K = 3

log = logging.getLogger(__name__)


def import_litellm() -> Any:
    """Import litellm with its price table read locally (no download at import time)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


@dataclass
class _Limits:
    """The ``concurrency`` slots of one guesser on one event loop, and its HTTP session."""

    calls: asyncio.Semaphore  # held by a call until its first request reaches the session
    requests: asyncio.Semaphore  # held by a request from sending until its response arrives
    session: Any = None  # aiohttp.ClientSession, made on first use
    closer: asyncio.Task[None] | None = None  # closes the session when the loop shuts down
    sent: int = 0  # requests that went through a session with the middleware
    queued: int = 0  # requests waiting for a slot


@dataclass
class _Call:
    limits: _Limits
    holds_call_slot: bool = False
    started: float = 0.0  # when it got its slot: the call's, then its first request's
    sent: bool = False

    def release_call_slot(self) -> None:
        if self.holds_call_slot:
            self.holds_call_slot = False
            self.limits.calls.release()


_HANDOFF_TURNS = 3

# The litellm call being made in this task, for the session middleware below.
_CURRENT_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(
    "grace_arena_llm_call", default=None
)


def _forget_litellm_clients() -> None:
    """Drop the HTTP clients litellm has cached for the running event loop.

    litellm keeps its clients per event loop, made with the session of the call that made them,
    and reuses them whatever session later calls pass. Dropping them when a session opens or
    closes makes the next call build its client on the session it passes. litellm closes the
    clients it owns after a grace period; our sessions are closed by ``aclose``.

    The cache (``litellm.in_memory_llm_clients_cache``, its ``cache_dict`` keyed by the client's
    name and ``-`` and the loop's id, its ``delete_cache``) is not litellm's API: call this only
    where :func:`_litellm_clients_as_expected` says it is as this reads it.
    """
    litellm = import_litellm()
    cache = litellm.in_memory_llm_clients_cache
    suffix = f"-{id(asyncio.get_running_loop())}"
    for key in [k for k in cache.cache_dict if str(k).endswith(suffix)]:
        cache.delete_cache(key)


_PROBE_KEY = "grace-arena-probe"


class _Probe:
    """What the check below stores in litellm's client cache, and removes."""


def _find_litellm_clients() -> bool:
    """Whether litellm's client cache is there and files a client set in the running loop
    under the key :func:`_forget_litellm_clients` looks for, and deletes it by that key."""
    litellm = import_litellm()
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    key = f"{_PROBE_KEY}-{id(asyncio.get_running_loop())}"
    probe = _Probe()
    try:
        cache.set_cache(_PROBE_KEY, probe)
        filed = cache.cache_dict.get(key) is probe
        cache.delete_cache(key)
        return filed and key not in cache.cache_dict
    except Exception:  # no such cache, or not a cache of this shape
        return False


#: Whether litellm's client cache was found as expected (None: not looked at yet).
_clients_found: bool | None = None


def _litellm_clients_as_expected() -> bool:
    """Whether the guesser may pass litellm its own HTTP session: litellm's client cache is as
    :func:`_forget_litellm_clients` reads it. Checked once, on first use, in a running loop;
    if not, one warning: without a way to drop litellm's clients, a client it made on a closed
    session would be reused, so the guesser passes none and litellm uses sessions of its own."""
    global _clients_found
    if _clients_found is None:
        _clients_found = _find_litellm_clients()
        if not _clients_found:
            log.warning(
                "litellm's client cache (litellm.in_memory_llm_clients_cache) is not as "
                "grace_arena.model.llm expects: the LLM guesser passes litellm no HTTP "
                "session of its own, and each call holds its concurrency slot until litellm "
                "has parsed its response"
            )
    return _clients_found


async def _close_when_cancelled(guesser: LLMGuesser) -> None:
    # asyncio.run() cancels the tasks left at its end, and lets them finish.
    try:
        await asyncio.Future()
    except asyncio.CancelledError:
        await guesser.aclose()


async def _limit_requests(request: Any, handler: Any) -> Any:
    """aiohttp client middleware: the request takes a slot from its call's guesser.

    The call's own slot is handed over at this point; from here on only requests in flight
    count. Whichever session litellm sends through (it caches clients across sessions), the
    slot taken is that of the guesser making the call.
    """
    call = _CURRENT_CALL.get()
    if call is None:
        return await handler(request)
    call.release_call_slot()
    limits = call.limits
    limits.sent += 1
    limits.queued += 1
    try:
        await limits.requests.acquire()
    finally:
        limits.queued -= 1
    try:
        if not call.sent:  # its latency counts from here, not from waiting for the slot
            call.sent, call.started = True, time.perf_counter()
        response = await handler(request)
    finally:
        limits.requests.release()
    if limits.queued:
        # aiohttp writes the request that takes this slot over a few turns of the event loop
        # (headers, then a task for the body): let it go out before this task parses its
        # reply, which takes milliseconds without a pause.
        for _ in range(_HANDOFF_TURNS):
            await asyncio.sleep(0)
    return response


class LLMGuesser:
    """Guesses with a chat model through litellm (see the module docstring)."""

    def __init__(
        self,
        model: str,
        *,
        retriever: ExemplarRetriever | None = None,
        k: int = DEFAULT_K,
        api_base: str | None = None,
        api_key: str | None = None,
        concurrency: int = 4,
        num_retries: int = 3,
        timeout: float = 120.0,
        max_tokens: int = 24,
        verbal: bool = True,
        cache: ResponseCache | None = None,
        name: str | None = None,
        completion_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency!r}")
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k!r}")
        self.model = model
        self.name = name or model
        self.retriever = retriever
        self.k = k
        self.api_base = api_base
        # An OpenAI-compatible local server accepts any key, but the client insists on one.
        self.api_key = api_key or ("sk-local" if api_base else None)
        self.concurrency = concurrency
        self.num_retries = num_retries
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.verbal = verbal
        self.cache = cache
        # Passed to every litellm call as is (e.g. extra_headers); not part of the cache key.
        self.completion_kwargs = dict(completion_kwargs or {})
        self.logprobs_supported: bool | None = None  # None: not asked yet
        self.calls = 0
        self.cache_hits = 0
        self._limits: dict[int, _Limits] = {}
        self._price_known = True
        self._exemplars: dict[tuple[str, str, int], list[tuple[str, str, str]]] = {}

    def _limits_here(self) -> _Limits:
        # One set per event loop: a guesser may serve several asyncio.run() calls.
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._limits:
            self._limits = {
                loop_id: _Limits(
                    asyncio.Semaphore(self.concurrency), asyncio.Semaphore(self.concurrency)
                )
            }
        limits = self._limits[loop_id]
        if (limits.session is None or limits.session.closed) and _litellm_clients_as_expected():
            import aiohttp

            _forget_litellm_clients()
            limits.session = aiohttp.ClientSession(middlewares=(_limit_requests,))
            limits.closer = asyncio.get_running_loop().create_task(_close_when_cancelled(self))
        return limits

    async def aclose(self) -> None:
        """Close this event loop's HTTP session (a later call opens a new one).

        Not needed under ``asyncio.run``, which cancels the task that closes it at the end.
        """
        limits = self._limits.get(id(asyncio.get_running_loop()))
        if limits is None or limits.session is None:
            return
        session, limits.session = limits.session, None
        if limits.closer is not None and limits.closer is not asyncio.current_task():
            limits.closer.cancel()
        limits.closer = None
        await session.close()
        _forget_litellm_clients()

    async def _acompletion(
        self, litellm: Any, sent: list[bool] | None = None, **kwargs: Any
    ) -> tuple[Any, float]:
        """``litellm.acompletion`` within this guesser's concurrency (module docstring), and
        its latency in seconds, not counting the wait for a slot.

        Appends to ``sent`` if the call went to the provider: it was answered or failed there,
        or it was cancelled after its request went out (the provider may still charge for it).
        A call that litellm refused before sending (unsupported parameters) or that was
        cancelled before its request went out does not count.
        """
        limits = self._limits_here()
        call = _Call(limits)
        await limits.calls.acquire()
        call.holds_call_slot, call.started = True, time.perf_counter()
        token = _CURRENT_CALL.set(call)
        went_out = True
        try:
            response = await litellm.acompletion(shared_session=limits.session, **kwargs)
            return response, time.perf_counter() - call.started
        except (asyncio.CancelledError, litellm.UnsupportedParamsError):
            went_out = call.sent
            raise
        finally:
            _CURRENT_CALL.reset(token)
            call.release_call_slot()
            if sent is not None and went_out:
                sent.append(True)

    async def warm_up(self) -> None:
        """One mock completion through litellm (no request is sent), so that the modules and
        tables it loads on its first call are loaded before the first real one; and the OpenAI
        SDK's resource classes, which its first client loads (about a second of CPU)."""
        litellm = import_litellm()
        with contextlib.suppress(ImportError):
            import openai.resources  # noqa: F401
        await litellm.acompletion(
            model=self.model,
            messages=[{"role": "user", "content": "Warm up."}],
            mock_response="Ready.",
            **self._params(logprobs=True, max_tokens=self.max_tokens),
        )

    # -- one request -------------------------------------------------------------------------

    def _params(self, *, logprobs: bool, max_tokens: int) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": 0, "max_tokens": max_tokens}
        if logprobs:
            # llama-cpp-python's server returns logprobs only when top_logprobs is sent.
            params.update(logprobs=True, top_logprobs=0)
        return params

    async def _request(
        self,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        sent: list[bool] | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """The normalised response and whether it came from the cache (``sent``: see
        :meth:`_acompletion`)."""
        key = cache_key(self.model, messages, params)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            self.cache_hits += 1
            return hit, True
        litellm = import_litellm()
        self.calls += 1
        response, latency = await self._acompletion(
            litellm,
            sent,
            model=self.model,
            messages=messages,
            api_base=self.api_base,
            api_key=self.api_key,
            num_retries=self.num_retries,
            retry_strategy="exponential_backoff_retry",
            timeout=self.timeout,
            **self.completion_kwargs,
            **params,
        )
        body = _normalise(litellm, response, latency, price_known=self._price_known)
        if body["cost_usd"] is None:
            self._price_known = False  # do not ask again for every call of this model
        if self.cache is not None:
            self.cache.put(key, self.model, body)
        return body, False

    async def _guess_call(
        self, messages: list[dict[str, str]], sent: list[bool] | None = None
    ) -> tuple[dict[str, Any], bool]:
        if self.logprobs_supported is not False:
            litellm = import_litellm()
            try:
                body, cached = await self._request(
                    messages, self._params(logprobs=True, max_tokens=self.max_tokens), sent
                )
            except litellm.UnsupportedParamsError:
                self.logprobs_supported = False
            else:
                if body.get("tokens") is not None:
                    self.logprobs_supported = True
                return body, cached
        return await self._request(
            messages, self._params(logprobs=False, max_tokens=self.max_tokens), sent
        )

    # -- one prefix --------------------------------------------------------------------------

    def prepare(self, prefixes: Sequence[Prefix]) -> None:
        """Retrieve the exemplars of many prefixes in one batch, ahead of their guesses.

        One batch is about a hundred times cheaper than a retrieval per prefix, which would
        otherwise take the CPU that sends requests.
        """
        if self.retriever is None or self.k == 0 or not prefixes:
            return
        found = self.retriever.retrieve_many(
            [p.text for p in prefixes],
            self.k,
            question_texts=[p.question_text for p in prefixes],
            exclude_ids=[[p.corpus_id, p.tossup_id] for p in prefixes],
        )
        for p, entries in zip(prefixes, found, strict=True):
            self._exemplars[_prefix_key(p)] = [(e.id, e.text, e.page) for e in entries]

    def exemplars_for(self, prefix: Prefix) -> list[tuple[str, str, str]]:
        """``(id, question, answer)`` of the ``k`` exemplars for ``prefix`` (never itself)."""
        if self.retriever is None or self.k == 0:
            return []
        if (prepared := self._exemplars.pop(_prefix_key(prefix), None)) is not None:
            return prepared
        found = self.retriever.retrieve(
            prefix.text,
            self.k,
            question_text=prefix.question_text,
            exclude_ids=[prefix.corpus_id, prefix.tossup_id],
        )
        return [(e.id, e.text, e.page) for e in found]

    async def guess(self, prefix: Prefix) -> Guess:
        """The guess call and the verbalized-confidence call, sent together: they are
        independent, so a prefix takes one round trip, not two."""
        exemplars = self.exemplars_for(prefix)
        pairs = [(q, a) for _, q, a in exemplars]
        used = [{"id": i, "answer": a} for i, _, a in exemplars]
        cached: list[bool] = []  # one per call answered, True when from the cache
        sent: list[bool] = []  # one per call that went to the provider (see _acompletion)

        async def answered(request: Any) -> dict[str, Any]:
            body, hit = await request
            cached.append(hit)
            return body

        try:
            async with asyncio.TaskGroup() as group:
                answer = group.create_task(
                    answered(self._guess_call(guess_messages(prefix.text, pairs), sent))
                )
                verbal = None
                if self.verbal:
                    verbal = group.create_task(
                        answered(
                            self._request(
                                verbal_messages(prefix.text, pairs),
                                self._params(logprobs=False, max_tokens=self.max_tokens + 16),
                                sent,
                            )
                        )
                    )
        except Exception as exc:  # after litellm's retries: record and move on
            while isinstance(exc, ExceptionGroup):  # a call's error, from the task group
                exc = exc.exceptions[0]
            return Guess(
                guess=None,
                exemplars=used,
                calls=len(sent),
                cache_hits=cached.count(True),
                error=f"{type(exc).__name__}: {str(exc)[:300]}",
            )
        refused = self.logprobs_supported is False
        return _build_guess(
            answer.result(),
            None if verbal is None else verbal.result(),
            used,
            len(sent),
            cached.count(True),
            refused=refused,
        )


def _prefix_key(prefix: Prefix) -> tuple[str, str, str, int]:
    return (prefix.kind, prefix.packet_id, prefix.tossup_id, prefix.step)


def _normalise(
    litellm: Any, response: Any, latency: float, *, price_known: bool = True
) -> dict[str, Any]:
    """What we keep of a response: text, token logprobs, usage, cost, latency."""
    choice = response.choices[0]
    content = choice.message.content or ""
    # litellm deletes the attribute when the provider sent none: never read it directly.
    logprobs = getattr(choice, "logprobs", None)
    items = getattr(logprobs, "content", None) if logprobs is not None else None
    if items is None and isinstance(logprobs, dict):
        items = logprobs.get("content")
    tokens = None
    if items:
        tokens = [
            [_field(t, "token"), float(_field(t, "logprob"))]
            for t in items
            if _field(t, "logprob") is not None
        ]
    usage = getattr(response, "usage", None)
    # litellm prices the response while logging it; ask completion_cost only if it did not.
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    if cost is None and price_known:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # unknown (local) models have no price
            cost = None
    cost = float(cost) if cost is not None else None
    return {
        "content": content,
        "tokens": tokens,
        "prompt_tokens": getattr(usage, "prompt_tokens", None),
        "completion_tokens": getattr(usage, "completion_tokens", None),
        "cost_usd": cost,
        "latency_s": latency,
        "response_model": getattr(response, "model", None),
    }


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _sum(*values: float | int | None) -> Any:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _build_guess(
    answer: dict[str, Any],
    verbal: dict[str, Any] | None,
    exemplars: list[dict[str, Any]],
    calls: int,
    hits: int,
    *,
    refused: bool = False,
) -> Guess:
    extra: dict[str, Any] = {"raw": answer["content"][:500]}
    mean = geo = seq = None
    tokens = answer.get("tokens")
    if tokens is None:
        guess = clean_answer(answer["content"])
        extra["logprobs"] = "unsupported" if refused else "missing"
    else:
        guess, span = answer_span([(t, lp) for t, lp in tokens])
        conf = logit_confidences(span)
        if conf is not None:
            mean, geo, seq = conf
        extra["logprobs"] = "ok" if conf is not None else "empty_span"
        extra["answer_tokens"] = len(span)
    verbal_conf = None
    if verbal is not None:
        verbal_conf = parse_verbal(verbal["content"])
        extra["verbal_raw"] = verbal["content"][:500]
        extra["verbal_guess"] = parse_verbal_answer(verbal["content"])
        extra["verbal_parsed"] = verbal_conf is not None
        extra["latency_verbal_s"] = verbal.get("latency_s")
    extra["latency_guess_s"] = answer.get("latency_s")
    parts = [answer] + ([verbal] if verbal is not None else [])
    return Guess(
        guess=guess or None,
        confidence_logit=mean,
        confidence_logit_geo=geo,
        sequence_prob=seq,
        confidence_verbal=verbal_conf,
        latency_s=_sum(*(p.get("latency_s") for p in parts)),
        prompt_tokens=_sum(*(p.get("prompt_tokens") for p in parts)),
        completion_tokens=_sum(*(p.get("completion_tokens") for p in parts)),
        cost_usd=_sum(*(p.get("cost_usd") for p in parts)),
        exemplars=exemplars,
        extra=extra,
        calls=calls,
        cache_hits=hits,
    )
