"""The analysis' scheduler: tasks run once what they need is done, the earliest first, and the
results do not depend on how many threads run them."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from operator import add, mul
from pathlib import Path

import pytest

from grace_arena.analysis import summary
from grace_arena.analysis.tasks import Result, Task, run_tasks

BENCH = Path(__file__).parents[1] / "bench" / "bench_analysis.py"


def plan() -> list[Task]:
    return [
        Task("a", add, (1, 2)),
        Task("b", mul, (Result("a"), 10)),
        Task("pair", divmod, (17, 5)),
        Task("c", add, (Result("b"), Result("pair", 1))),
        Task("d", sorted, ([3, 1, 2],), {"reverse": True}),
    ]


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_each_task_gets_the_results_it_needs(workers: int) -> None:
    done = run_tasks(plan(), workers=workers)
    assert done == {"a": 3, "b": 30, "pair": (3, 2), "c": 32, "d": [3, 2, 1]}


def test_among_the_tasks_ready_the_earliest_starts_first() -> None:
    started: list[str] = []

    def note(name: str, *_: object) -> str:
        started.append(name)
        return name

    tasks = [
        Task("h", note, ("h",)),
        Task("rows", note, ("rows", Result("h"))),
        Task("bootstrap", note, ("bootstrap", Result("rows"))),
        Task("teams", note, ("teams",)),
    ]
    run_tasks(tasks, workers=1)
    # teams was ready from the start, but the bootstrap comes earlier in the plan
    assert started == ["h", "rows", "bootstrap", "teams"]


def test_no_more_tasks_run_at_once_than_workers() -> None:
    lock = threading.Lock()
    now = [0]
    most = [0]

    def busy(_: int) -> None:
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.02)
        with lock:
            now[0] -= 1

    run_tasks([Task(i, busy, (i,)) for i in range(8)], workers=3)
    assert most[0] == 3


def test_a_task_that_raises_stops_the_run_with_its_error() -> None:
    started: list[int] = []

    def fail() -> None:
        raise ValueError("duplicate step: model='m' question='q1' step=1")

    tasks = [
        Task("bad", fail),
        Task("after", started.append, (Result("bad"),)),
        Task("later", started.append, (2,)),
    ]
    with pytest.raises(ValueError, match="duplicate step"):
        run_tasks(tasks, workers=1)
    assert started == []


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ([Task("a", add, (1, 2)), Task("a", add, (1, 2))], "keys must differ"),
        ([Task("a", add, (Result("nope"), 2))], "which no task is"),
        (
            [Task("a", add, (Result("b"), 1)), Task("b", add, (Result("a"), 1))],
            "wait for each other",
        ),
    ],
)
def test_a_plan_that_cannot_run_is_refused(tasks: list[Task], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_tasks(tasks, workers=2)


def test_the_analysis_is_the_same_on_one_thread_and_on_several(monkeypatch) -> None:
    # the benchmark's data: models sharing questions, categories, missing verbal confidences,
    # human and model teams over matches
    spec = importlib.util.spec_from_file_location("bench_analysis", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    steps, buzzes = bench.synthetic(8000, 800, 3, 1)
    results = []
    for workers in (1, 3):
        monkeypatch.setattr(summary, "WORKERS", workers)
        result = summary.analyze(steps, buzzes, n_resamples=50, seed=3)
        results.append(json.dumps(summary.comparable(result), sort_keys=True))
    assert results[0] == results[1]
