"""When each part of the analysis runs, and on which thread: nothing here computes.

The analysis (:func:`grace_arena.analysis.summary.analyze`) is a list of :class:`Task`: a
pure function with its arguments, some of which are the results of other tasks
(:class:`Result`). :func:`run_tasks` runs them on a pool of threads (numpy leaves the
interpreter free while it computes), each as soon as the tasks it needs are done and a
thread is free, the earliest in the list first among those ready: a plan puts its longest
task as early as what it needs allows. Since every task computes from its arguments alone,
the results do not depend on how the tasks are scheduled, nor on how many threads run them.

    >>> from operator import add
    >>> plan = [Task("a", add, (1, 2)), Task("b", add, (Result("a"), 10))]
    >>> run_tasks(plan, workers=2)["b"]
    13
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from threadpoolctl import threadpool_limits

__all__ = ["Result", "Task", "run_tasks"]


@dataclass(frozen=True, slots=True)
class Result:
    """An argument of a task that is the result of the task ``key`` (its item ``item`` when
    given: ``Result("rows", 2)`` is ``results["rows"][2]``)."""

    key: Hashable
    item: Any = None

    def value(self, results: Mapping[Hashable, Any]) -> Any:
        found = results[self.key]
        return found if self.item is None else found[self.item]


@dataclass(frozen=True, eq=False)  # a task is itself: its arguments may be arrays
class Task:
    """``fn(*args, **kwargs)`` under the name ``key``, where each :class:`Result` among the
    arguments stands for that task's result."""

    key: Hashable
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def needs(self) -> frozenset[Hashable]:
        """The keys of the tasks whose results it takes."""
        values = (*self.args, *self.kwargs.values())
        return frozenset(v.key for v in values if isinstance(v, Result))

    def call(self, results: Mapping[Hashable, Any]) -> Callable[[], Any]:
        """The call, with the results it needs in place."""

        def given(v: Any) -> Any:
            return v.value(results) if isinstance(v, Result) else v

        args = tuple(given(v) for v in self.args)
        kwargs = {name: given(v) for name, v in self.kwargs.items()}
        return lambda: self.fn(*args, **kwargs)


class _Inline(Executor):
    """Runs each task as it is submitted, in the calling thread."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to whoever asks for the result
            future.set_exception(exc)
        return future


def run_tasks(tasks: Sequence[Task], *, workers: int) -> dict[Hashable, Any]:
    """Run every task, at most ``workers`` at a time (threads; one: in this thread, in
    order), each once the tasks it needs are done, the earliest in ``tasks`` first among
    those ready; returns each task's result by key.

    BLAS runs on one thread meanwhile: the tasks already share the cores, and OpenBLAS's
    own threads spin between short products (docs/analysis.md, "Speed"). A task that
    raises stops the run: no task starts after it, and its exception is raised once the
    tasks running meanwhile end.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got workers = {workers!r}")
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError(f"task keys must differ, got {keys!r}")
    for t in tasks:
        if unknown := t.needs - set(keys):
            raise ValueError(f"task {t.key!r} needs {sorted(map(repr, unknown))}, which no task is")
    results: dict[Hashable, Any] = {}
    waiting = {t.key: (t, t.needs) for t in tasks}  # in the order given
    pool: Executor = _Inline() if workers == 1 else ThreadPoolExecutor(max_workers=workers)
    with threadpool_limits(limits=1, user_api="blas"), pool:
        running: dict[Future[Any], Task] = {}
        while waiting or running:
            for key, (t, needs) in list(waiting.items()):
                if len(running) == workers:
                    break
                if needs <= results.keys():
                    del waiting[key]
                    running[pool.submit(t.call(results))] = t
            if not running:
                stuck = ", ".join(repr(key) for key in waiting)
                raise ValueError(f"tasks wait for each other: {stuck}")
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                results[running.pop(future).key] = future.result()
    return results
