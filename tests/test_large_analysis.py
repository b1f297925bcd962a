"""The analysis past memory (DuckDB over Parquet) gives the numbers the in-memory analysis
gives, for every metric it computes: on the benchmark's data (models sharing questions,
categories, missing verbal confidences, human and model buzzes over matches), with both
definitions of h_t, and on hand-made rows."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grace_arena.analysis import analyze
from grace_arena.analysis.large import (
    LARGE_METRICS,
    LargeAnalysisError,
    analyze_large,
)

BENCH = Path(__file__).parents[1] / "bench" / "bench_analysis.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_analysis", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def _write(frame: pd.DataFrame, folder: Path, parts: int) -> Path:
    """The frame in ``parts`` Parquet files, in order (the file names sort as the parts)."""
    folder.mkdir()
    for i, chunk in enumerate(np.array_split(np.arange(len(frame)), parts)):
        frame.iloc[chunk].to_parquet(folder / f"part-{i:03d}.parquet")
    return folder


def _close(a, b, *, tol: float, where: str) -> None:
    if a is None or b is None:
        assert a is None and b is None, f"{where}: {a!r} vs {b!r}"
        return
    assert math.isclose(a, b, rel_tol=tol, abs_tol=tol), f"{where}: {a!r} vs {b!r}"


def _compare(large: dict, memory: dict, *, ci_tol: float = 1e-6) -> int:
    """Every metric of the large result against the in-memory one; how many were compared."""
    compared = 0
    assert set(large["models"]) == set(memory["models"])
    for model, kinds in large["models"].items():
        for kind, summary in kinds.items():
            mem = memory["models"][model][kind]
            pairs = [(summary, mem, "all"), (summary["final"], mem["final"], "final")]
            pairs += [
                (s, mem["by_category"][cat], f"category {cat}")
                for cat, s in summary["by_category"].items()
            ]
            assert set(summary["by_category"]) == set(mem["by_category"])
            for ours, theirs, part in pairs:
                for name in (*large["metrics"], "n", "n_missing", "n_questions",
                             "n_questions_skipped"):  # fmt: skip
                    if name == "accuracy" and part.startswith("category"):
                        continue  # the in-memory categories carry no accuracy
                    _close(ours[name], theirs[name], tol=1e-12,
                           where=f"{model} {kind} {part} {name}")  # fmt: skip
                    compared += 1
            for ours, theirs, part in pairs[:2]:
                for name, (low, high) in ours["ci"].items():
                    _close(low, theirs["ci"][name][0], tol=ci_tol, where=f"{part} ci {name}")
                    _close(high, theirs["ci"][name][1], tol=ci_tol, where=f"{part} ci {name}")
                    compared += 2
    return compared


@pytest.mark.parametrize("definition", ["reference", "paper"])
def test_the_large_analysis_equals_the_in_memory_one(tmp_path, monkeypatch, definition):
    from grace_arena.analysis import large

    if definition == "paper":  # the steps sorted in five ranges of questions
        monkeypatch.setattr(large, "SORT_ROWS", 5_000)
    steps, buzzes = _bench().synthetic(24_000, 6_000, 3, seed=1)
    step_dir = _write(steps, tmp_path / "steps", parts=3)
    buzz_dir = _write(buzzes, tmp_path / "buzzes", parts=4)
    memory = analyze(steps, buzzes, n_resamples=200, seed=3, h_definition=definition)
    large = analyze_large(
        step_dir, buzz_dir, n_resamples=200, seed=3, h_definition=definition,
        memory_limit="512MB", threads=2, rank=definition == "reference",
    )  # fmt: skip
    assert _compare(large, memory) > 1000
    # ACE, AUROC, AURC and the accuracy at 80 % coverage, exact from the counts per distinct
    # (confidence, correctness), when asked for
    ranked = ("ace", "auroc", "aurc", "acc_at_80")
    if definition == "reference":
        assert set(ranked) <= set(large["metrics"]) and "ace" not in large["not_computed"]
        assert large["models"]["model-1"]["verbal"]["by_category"]["Science"]["auroc"] > 0.5
    else:
        assert not set(ranked) & set(large["models"]["model-0"]["logit"])
    assert large["settings"]["h_definition"] == definition
    # h_t mattered: CalScore differs from GRACE's MCE (h = 0) on these data
    m = large["models"]["model-0"]["logit"]
    assert m["calscore"] != m["mce_grace"]


def test_hand_made_rows_give_the_hand_computed_numbers(tmp_path):
    """Two steps of one question (wrong at 0.5 by word 4, right at 0.8 by word 9); human team
    A right at word 6, team B wrong at word 2: h = (0/2, 1/2) by the reference definition, so
    CalScore = 1 − r(((1)(−1)(0.5) + (0.5)(+1)(0.8)) / 2) = 1 − r(−0.05) = 0.52704
    (metrics.calscore's docstring), Brier = (0.25 + 0.04) / 2 = 0.145."""
    steps = pd.DataFrame({
        "model": ["m", "m"], "question_id": ["q1", "q1"], "step": [0, 1],
        "word_index": [4, 9], "correct": [0.0, 1.0], "confidence_logit": [0.5, 0.8],
        "confidence_verbal": [None, 0.9],
    })  # fmt: skip
    buzzes = pd.DataFrame({
        "match": ["1", "1"], "question_id": ["q1", "q1"], "team": ["A", "B"],
        "team_kind": ["human", "human"], "word_index": [6, 2], "correct": [1.0, 0.0],
    })  # fmt: skip
    (tmp_path / "s").mkdir()
    (tmp_path / "b").mkdir()
    steps.to_parquet(tmp_path / "s" / "x.parquet")
    buzzes.to_parquet(tmp_path / "b" / "x.parquet")
    out = analyze_large(tmp_path / "s", tmp_path / "b", n_resamples=0, rank=True)
    logit = out["models"]["m"]["logit"]
    assert round(logit["calscore"], 5) == 0.52704
    # ranked: 0.8 (right) above 0.5 (wrong): AUROC 1; risks 0 then 1/2: AURC 1/4; ACE's
    # bins hold one row each: (|0 − 0.5| + |1 − 0.8|) / 2; at 80 % coverage both rows: 1/2
    assert (logit["auroc"], logit["aurc"], logit["acc_at_80"]) == (1.0, 0.25, 0.5)
    assert logit["ace"] == pytest.approx(0.35, abs=1e-15)
    assert logit["final"]["auroc"] is None  # one row: no pair to order
    assert logit["brier"] == pytest.approx(0.145, abs=1e-15)
    assert logit["final"]["n"] == 1 and logit["final"]["brier"] == pytest.approx(0.04)
    verbal = out["models"]["m"]["verbal"]
    assert (verbal["n"], verbal["n_missing"]) == (1, 1)
    assert logit["ci"]["calscore"] == [None, None]


def test_bad_input_is_named(tmp_path):
    with pytest.raises(LargeAnalysisError, match="no Parquet file"):
        analyze_large(tmp_path / "nothing-*.parquet")
    (tmp_path / "s").mkdir()
    pd.DataFrame({"model": ["m"], "question_id": ["q"]}).to_parquet(tmp_path / "s" / "a.parquet")
    with pytest.raises(LargeAnalysisError, match=r"lack column.*step"):
        analyze_large(tmp_path / "s")
    dup = pd.DataFrame({
        "model": ["m", "m"], "question_id": ["q", "q"], "step": [0, 0], "word_index": [1, 2],
        "correct": [1.0, 0.0], "confidence_logit": [0.5, 0.5], "confidence_verbal": [0.1, 0.2],
    })  # fmt: skip
    dup.to_parquet(tmp_path / "s" / "a.parquet")
    with pytest.raises(LargeAnalysisError, match="duplicate step: model='m' question='q'"):
        analyze_large(tmp_path / "s")


def test_the_command_prints_the_table_and_writes_the_json(tmp_path):
    import json

    from typer.testing import CliRunner

    from grace_arena.cli import app

    steps, buzzes = _bench().synthetic(4_000, 800, 2, seed=2)
    step_dir = _write(steps, tmp_path / "steps", parts=2)
    buzz_dir = _write(buzzes, tmp_path / "buzzes", parts=1)
    out = tmp_path / "large.json"
    result = CliRunner().invoke(
        app,
        ["analyze-large", "--steps", str(step_dir / "*.parquet"), "--buzzes", str(buzz_dir),
         "--resamples", "50", "--json", str(out), "--memory-limit", "256MB"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "model-0" in result.output and "CalScore" in result.output
    written = json.loads(out.read_text())
    memory = analyze(steps, buzzes, n_resamples=0)
    assert written["models"]["model-1"]["logit"]["calscore"] == pytest.approx(
        memory["models"]["model-1"]["logit"]["calscore"], abs=1e-12
    )
    cached = ["analyze-large", "--steps", str(step_dir), "--buzzes", str(buzz_dir),
              "--resamples", "0", "--cache", str(tmp_path / "cache"), "--rank"]  # fmt: skip
    first = CliRunner().invoke(app, cached)
    assert first.exit_code == 0, first.output
    assert "AUROC" in first.output
    import re

    read = re.search(r"read (\d+) of (\d+) buckets", first.output)
    assert read and read[1] == read[2] and int(read[1]) > 1
    second = CliRunner().invoke(app, cached)
    assert f"read 0 of {read[2]} buckets" in second.output
    bad = CliRunner().invoke(app, ["analyze-large", "--steps", str(tmp_path / "none*.parquet")])
    assert bad.exit_code == 1 and "no Parquet file matches" in bad.output


def _same(a: dict, b: dict, ci_tol: float = 1e-12) -> int:
    """Every number of two large results (metrics, counts, intervals), to 1e-12 (the
    intervals to ``ci_tol``)."""
    compared = 0
    assert set(a["models"]) == set(b["models"])
    for model, kinds in a["models"].items():
        for kind, summary in kinds.items():
            other = b["models"][model][kind]
            pairs = [(summary, other), (summary["final"], other["final"])]
            assert set(summary["by_category"]) == set(other["by_category"])
            pairs += [(s, other["by_category"][c]) for c, s in summary["by_category"].items()]
            for ours, theirs in pairs:
                for name in (*LARGE_METRICS, "n", "n_missing", "n_questions"):
                    _close(ours[name], theirs[name], tol=1e-12, where=f"{model} {kind} {name}")
                    compared += 1
                for name, ends in ours.get("ci", {}).items():
                    for x, y in zip(ends, theirs["ci"][name], strict=True):
                        _close(x, y, tol=ci_tol, where=f"{model} {kind} ci {name}")
                        compared += 1
    return compared


def test_a_cache_redoes_only_the_questions_of_new_changed_or_removed_files(tmp_path):
    """With a cache, one more match (its buzzes and a new packet's steps, each a new file)
    reads only the buckets of its questions and gives what a fresh analysis of every file
    gives; a changed file and a removed one are read again (or forgotten) likewise."""
    steps, buzzes = _bench().synthetic(24_000, 6_000, 3, seed=4)
    step_dir = _write(steps, tmp_path / "steps", parts=4)
    buzz_dir = _write(buzzes, tmp_path / "buzzes", parts=6)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "notes.txt").write_text("mine")  # a folder's other files are left alone
    kwargs = {"n_resamples": 100, "seed": 5, "memory_limit": "512MB", "threads": 2}

    def both() -> tuple[dict, dict]:
        cached = analyze_large(step_dir, buzz_dir, cache=cache, **kwargs)
        fresh = analyze_large(step_dir, buzz_dir, **kwargs)
        # the intervals: made again, or the kept totals moved by the questions that changed
        # (then single-precision products of the changes: to 1e-6)
        tol = 1e-6 if cached["bootstrap"] == "updated" else 1e-12
        assert _same(cached, fresh, ci_tol=tol) > 1000
        return cached, fresh

    # the last step file and buzz file come later, as one more match
    later = tmp_path / "later"
    later.mkdir()
    (step_dir / "part-003.parquet").rename(later / "steps.parquet")
    (buzz_dir / "part-005.parquet").rename(later / "buzzes.parquet")
    first, _ = both()
    assert first["cache"]["buckets_read"] == first["cache"]["buckets"]
    assert _compare(first, analyze(pd.read_parquet(step_dir), pd.concat(
        [pd.read_parquet(p) for p in sorted(buzz_dir.glob("*.parquet"))], ignore_index=True),
        n_resamples=100, seed=5)) > 1000  # fmt: skip

    # nothing new: nothing read
    again, _ = both()
    assert again["cache"]["buckets_read"] == 0 and again["bootstrap"] == "updated"

    # one more match's buzzes on questions already there: only their buckets are read
    one_match = pd.read_parquet(later / "buzzes.parquet").iloc[:40]
    one_match.to_parquet(buzz_dir / "part-900.parquet")
    touched = one_match["question_id"].nunique()
    cached, _ = both()
    assert 0 < cached["cache"]["buckets_read"] <= touched
    assert cached["bootstrap"] == "updated"  # the same questions: the draws kept serve
    assert (
        cached["models"]["model-0"]["logit"]["calscore"]
        != (first["models"]["model-0"]["logit"]["calscore"])
    )

    # a new packet's steps and the rest of the match
    (later / "steps.parquet").rename(step_dir / "part-003.parquet")
    (later / "buzzes.parquet").rename(buzz_dir / "part-005.parquet")
    cached, _ = both()
    assert cached["bootstrap"] == "made"  # more questions: other draws
    assert cached["cache"]["buckets_read"] < cached["cache"]["buckets"]

    # a changed file (other rulings) and a removed one
    changed = pd.read_parquet(buzz_dir / "part-002.parquet")
    changed["correct"] = 1.0 - changed["correct"]
    changed.to_parquet(buzz_dir / "part-002.parquet")
    (step_dir / "part-001.parquet").unlink()
    cached, _ = both()
    assert (cache / "notes.txt").read_text() == "mine"
    # an analysis without intervals moves the kept totals too: the next one uses them
    (buzz_dir / "part-900.parquet").unlink()
    analyze_large(step_dir, buzz_dir, cache=cache, **{**kwargs, "n_resamples": 0})
    cached, _ = both()
    assert cached["bootstrap"] == "updated"
    # kept draws lost: the intervals are made again
    for draws in cache.glob("draws-*.npy"):
        draws.unlink()
    (buzz_dir / "part-002.parquet").touch()
    cached, _ = both()
    assert cached["bootstrap"] == "made"
    n_questions = pd.concat([pd.read_parquet(p) for p in step_dir.glob("*.parquet")])
    assert (
        cached["models"]["model-0"]["logit"]["n"]
        == ((n_questions["model"] == "model-0") & n_questions["confidence_logit"].notna()).sum()
    )


def test_a_file_replaced_with_its_size_and_time_kept_is_read_again(tmp_path):
    """The cache knows a file by its size, times and inode: one replaced by another of the
    same size whose modification time was put back (``cp -p``, ``rsync -t``) is not taken
    for the file it replaced."""
    import os
    import time

    from grace_arena.analysis.large import _stat

    path = tmp_path / "part-000.parquet"
    path.write_bytes(b"a" * 64)
    before = os.stat(path)
    kept = _stat([str(path)])
    time.sleep(0.01)
    replacement = tmp_path / "new.parquet"
    replacement.write_bytes(b"b" * 64)
    replacement.replace(path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns
    assert _stat([str(path)]) != kept
