"""An LLM guesser split over worker processes, for more calls per second than one process makes.

litellm spends several milliseconds of CPU on every call (building the request, parsing the
reply, its cost lookup and logging), so one Python process tops out at about a hundred calls per
second however many requests it keeps in flight. :class:`WorkerPool` runs the same guesser
(:func:`~grace_arena.model.precompute.make_guesser` with the same arguments) in ``workers``
processes and is itself a guesser: :func:`~grace_arena.model.precompute.precompute` uses it as
is, and stores every step in the parent process, so the record has one writer.

- The concurrency limit is split between the workers (their shares add up to it), so the
  requests in flight across all of them stay within it.
- Each worker is given at most twice its share of prefixes at a time, and a freed place goes to
  the next prefix waiting: a worker that is slower (or hits its cache less) gets less work.
- The workers share the response cache file (SQLite, safe across processes).
- Requests go to a worker's stdin and guesses come back on a pipe of their own, one JSON object
  per line; whatever litellm prints goes to the worker's stderr. A worker that dies turns the
  prefixes it holds into errors (the steps are not stored, so the next run tries them again);
  the prefixes after them go to the workers still alive.

The pool starts its processes when it is made and waits until each has built its guesser;
``close()`` (or leaving a ``with`` block) stops them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from grace_arena.model.base import Guess, Prefix

__all__ = ["WorkerPool"]

_READY = "ready"
T = TypeVar("T")


def _shares(total: int, parts: int) -> list[int]:
    return [total // parts + (i < total % parts) for i in range(parts)]


class _PipeWriter(asyncio.Protocol):
    """The write end of the pipe to a worker, with flow control: :meth:`send` waits while the
    pipe is full (the transport's ``pause_writing`` and ``resume_writing``, asyncio's protocol
    API), and raises ``ConnectionResetError`` once the worker has closed it."""

    def __init__(self) -> None:
        self.transport: asyncio.WriteTransport | None = None
        self.lost: Exception | None = None
        self._writable = asyncio.Event()
        self._writable.set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc or ConnectionResetError("the worker closed its end of the pipe")
        self._writable.set()  # a send waiting for room finds the pipe gone

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    async def send(self, data: bytes) -> None:
        """Write ``data``, then wait until the pipe has room for more."""
        transport = self.transport
        if self.lost is not None or transport is None or transport.is_closing():
            raise ConnectionResetError("the pipe to the worker is closed") from self.lost
        transport.write(data)
        await self._writable.wait()
        if self.lost is not None:
            raise ConnectionResetError("the pipe to the worker is closed") from self.lost

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class _Worker:
    """One worker process and, per event loop, the pipes to it."""

    def __init__(self, spec: dict[str, Any]) -> None:
        read_fd, write_fd = os.pipe()  # guesses come back on their own pipe
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grace_arena.model.workers", json.dumps(spec), str(write_fd)],
            stdin=subprocess.PIPE,
            pass_fds=(write_fd,),
        )
        os.close(write_fd)
        self.results = os.fdopen(read_fd, "rb")
        self.loop: asyncio.AbstractEventLoop | None = None
        self.reader: asyncio.StreamReader | None = None
        self.read_transport: asyncio.BaseTransport | None = None
        self.writer: _PipeWriter | None = None
        self.pending: dict[int, asyncio.Future[Guess]] = {}
        self.listener: asyncio.Task | None = None
        self.dead: str | None = None

    def wait_ready(self) -> None:
        line = self.results.readline()
        if line.strip() != _READY.encode():
            self.proc.wait()
            self.dead = f"worker exited with code {self.proc.returncode} before it was ready"
            raise RuntimeError(f"{self.dead} (its error is above)")

    async def attach(self) -> None:
        """Streams on this event loop (a new loop gets new ones; the pipes stay open)."""
        loop = asyncio.get_running_loop()
        if self.loop is loop:
            return
        self.loop = loop
        self.reader = asyncio.StreamReader(limit=2**24, loop=loop)
        self.read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(self.reader, loop=loop),
            os.fdopen(os.dup(self.results.fileno()), "rb"),
        )
        assert self.proc.stdin is not None
        _, self.writer = await loop.connect_write_pipe(
            _PipeWriter, os.fdopen(os.dup(self.proc.stdin.fileno()), "wb")
        )
        self.listener = loop.create_task(self._listen())

    async def _listen(self) -> None:
        assert self.reader is not None
        while line := await self.reader.readline():
            message = json.loads(line)
            future = self.pending.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result(Guess(**message["guess"]))
        self.dead = f"worker exited (code {self.proc.poll()})"
        for future in self.pending.values():
            if not future.done():
                future.set_result(Guess(guess=None, error=self.dead))
        self.pending.clear()

    async def send(self, message: dict[str, Any]) -> None:
        assert self.writer is not None
        await self.writer.send(json.dumps(message).encode() + b"\n")

    async def detach(self) -> None:
        if self.listener is not None:
            self.listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.listener
        if self.writer is not None:
            self.writer.close()
        if self.read_transport is not None:
            self.read_transport.close()
        self.loop = self.reader = self.read_transport = self.writer = self.listener = None

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()  # the worker finishes what it has, then exits
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.results.close()


class WorkerPool:
    """A guesser that runs ``make_guesser(model, **options)`` in ``workers`` processes.

    ``options`` are :func:`~grace_arena.model.precompute.make_guesser`'s keyword arguments
    (JSON values; ``corpus`` a path); ``concurrency`` is the limit over all workers. Only LLM
    guessers make sense here: the TF-IDF guesser is faster in one process.
    """

    def __init__(self, model: str, *, workers: int = 2, **options: Any) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers!r}")
        concurrency = int(options.pop("concurrency", 4))
        if concurrency < workers:
            raise ValueError(
                f"each worker needs at least one request in flight: --concurrency "
                f"{concurrency} is less than --workers {workers}"
            )
        if options.get("corpus") is not None:
            options["corpus"] = str(options["corpus"])
        if (path := getattr(options.get("cache"), "path", None)) is not None:
            options["cache"] = str(path)  # a ResponseCache: the workers open its file
        self.name = options.get("name") or model
        self.model = model
        self.concurrency = concurrency
        self.shares = _shares(concurrency, workers)
        self._workers = [
            _Worker({"model": model, **options, "concurrency": share}) for share in self.shares
        ]
        self._ids = 0
        self._prepare: list[Prefix] = []
        self._free: tuple[asyncio.AbstractEventLoop, asyncio.Task[asyncio.Queue[int]]] | None = None
        try:
            for worker in self._workers:
                worker.wait_ready()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers (each finishes the prefixes it was given first)."""
        for worker in self._workers:
            worker.close()

    async def _places(self) -> asyncio.Queue[int]:
        """This loop's queue of free places (worker ``i`` appears twice its share), once the
        streams to the workers are open on this loop."""
        loop = asyncio.get_running_loop()
        if self._free is None or self._free[0] is not loop:
            self._free = (loop, loop.create_task(self._attach()))
        return await self._free[1]

    async def _attach(self) -> asyncio.Queue[int]:
        free: asyncio.Queue[int] = asyncio.Queue()
        for i, share in enumerate(self.shares):
            for _ in range(2 * share):
                free.put_nowait(i)
        prepare = [dataclasses.asdict(p) for p in self._prepare]
        self._prepare = []
        for worker in self._workers:
            await worker.attach()
            if prepare and worker.dead is None:
                with contextlib.suppress(ConnectionError, OSError):
                    await worker.send({"prepare": prepare})
        return free

    def prepare(self, prefixes: Sequence[Prefix]) -> None:
        """Have every worker prepare ``prefixes`` in one batch (e.g. retrieve the LLM
        guesser's exemplars) before its first guess: any of them may be given any prefix."""
        self._prepare = list(prefixes)

    async def guess(self, prefix: Prefix) -> Guess:
        free = await self._places()
        while True:
            i = await free.get()
            worker = self._workers[i]
            if worker.dead is None:
                break
            if all(w.dead is not None for w in self._workers):
                free.put_nowait(i)  # for the next prefix waiting, which fails the same way
                return Guess(guess=None, error=worker.dead)
            # A dead worker's place is dropped: the prefix goes to one that is alive.
        try:
            self._ids += 1
            ident = self._ids
            future: asyncio.Future[Guess] = asyncio.get_running_loop().create_future()
            worker.pending[ident] = future
            try:
                await worker.send({"id": ident, "prefix": dataclasses.asdict(prefix)})
            except (ConnectionError, OSError) as exc:
                worker.pending.pop(ident, None)
                worker.dead = f"worker unreachable: {exc}"
                return Guess(guess=None, error=worker.dead)
            return await future
        finally:
            free.put_nowait(i)

    async def aclose(self) -> None:
        """Let go of this event loop's streams; the workers keep running (``close`` stops
        them)."""
        for worker in self._workers:
            await worker.detach()
        self._free = None


# -- the worker process ------------------------------------------------------------------------


async def _serve(spec: dict[str, Any], out: Any) -> None:
    from grace_arena.model.llm import LLMGuesser
    from grace_arena.model.precompute import make_guesser

    guesser = make_guesser(spec.pop("model"), **spec)
    if isinstance(guesser, LLMGuesser):
        await guesser.warm_up()  # litellm's first-call work now, not in the first guesses
    out.write(_READY.encode() + b"\n")
    out.flush()
    loop = asyncio.get_running_loop()
    requests = asyncio.StreamReader(limit=2**24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(requests), sys.stdin)
    prepare = getattr(guesser, "prepare", None)

    async def one(message: dict[str, Any]) -> None:
        prefix = Prefix(**message["prefix"])
        try:
            guess = await guesser.guess(prefix)
        except Exception as exc:  # a guesser reports its errors; this is a last resort
            guess = Guess(guess=None, error=f"{type(exc).__name__}: {exc}")
        out.write(json.dumps({"id": message["id"], "guess": dataclasses.asdict(guess)}).encode())
        out.write(b"\n")
        out.flush()

    tasks: set[asyncio.Task] = set()
    while line := await requests.readline():
        message = json.loads(line)
        if "prepare" in message:
            if prepare is not None:
                prepare([Prefix(**p) for p in message["prepare"]])
            continue
        task = asyncio.create_task(one(message))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)
    if (aclose := getattr(guesser, "aclose", None)) is not None:
        await aclose()


def _run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on uvloop where it is installed, else on asyncio's loop. A worker is all
    requests and replies, and uvloop takes less CPU for each (see ``bench/bench_model.py``)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def main() -> None:
    spec, fd = json.loads(sys.argv[1]), int(sys.argv[2])
    out = os.fdopen(fd, "wb")
    sys.stdout = sys.stderr  # anything printed goes to stderr, not into the results
    try:
        _run(_serve(spec, out))
    except (OSError, ValueError) as exc:  # e.g. a corpus that cannot be read
        print(f"grace-arena worker: cannot build the guesser: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
