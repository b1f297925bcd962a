"""``grace-arena model calibrate``: a recalibration map fitted on a model's recorded steps,
stored, and applied by the buzz policy (``precompute`` and ``model show``)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from grace_arena.analysis.recalibration import Calibrator, read_calibration, recalibration_report
from grace_arena.cli import app
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.model.policy import BuzzPolicy
from grace_arena.record.db import make_engine
from grace_arena.record.models import ModelStepRow


def step(conf: float) -> SimpleNamespace:
    return SimpleNamespace(step=0, word_index=5, guess="x", confidence_logit=conf)


def test_the_policy_thresholds_the_recalibrated_confidence() -> None:
    halve = Calibrator("temperature", {"temperature": 2.0})  # σ(logit(0.9)/2) = 0.75
    plain = BuzzPolicy(threshold=0.8)
    calibrated = BuzzPolicy(threshold=0.8, calibration=halve)
    assert plain.would_buzz(step(0.9)) and not calibrated.would_buzz(step(0.9))
    assert calibrated.confidence_of(step(0.9)) == pytest.approx(0.75)
    assert calibrated.would_buzz(step(0.99))  # σ(logit(0.99)/2) = 0.909
    assert calibrated.confidence_of(SimpleNamespace(confidence_logit=None)) is None


def test_calibrate_stores_a_map_that_precompute_applies(
    db_url: str, tmp_path: Path, private_cache
) -> None:
    runner = CliRunner()
    packet = str(SAMPLE_PACKET_PATH)
    done = runner.invoke(app, ["precompute", "--packet", packet, "--db", db_url])
    assert done.exit_code == 0, done.output
    out = tmp_path / "tfidf.json"
    done = runner.invoke(
        app,
        ["model", "calibrate", "tfidf", "--method", "platt", "--db", db_url, "--out", str(out)],
    )
    assert done.exit_code == 0, done.output
    assert "platt" in done.output and "isotonic" in done.output
    stored = json.loads(out.read_text())
    assert stored["method"] == "platt" and stored["confidence"] == "logit"
    # the numbers printed and stored are the library's on the same steps
    engine = make_engine(db_url)
    with Session(engine) as session:
        rows = session.exec(select(ModelStepRow).where(ModelStepRow.model == "tfidf")).all()
    conf = np.array([r.confidence_logit for r in rows], dtype=float)
    correct = np.array([bool(r.correct) for r in rows], dtype=float)
    groups = np.array([r.tossup_id for r in rows])
    report = recalibration_report(conf, correct, groups=groups)
    assert stored["cv"]["platt"]["after"] == pytest.approx(report["platt"]["after"])
    assert stored["params"] == pytest.approx(report["platt"]["params"])
    # precompute under another name with the map: would_buzz follows the recalibrated value
    fitted = read_calibration(out)
    done = runner.invoke(
        app,
        ["precompute", "--packet", packet, "--db", db_url, "--name", "tfidf-cal",
         "--threshold", "0.6", "--calibration", str(out)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    with Session(engine) as session:
        cal = session.exec(select(ModelStepRow).where(ModelStepRow.model == "tfidf-cal")).all()
    assert len(cal) == len(rows)
    for r in cal:
        expected = (
            r.confidence_logit is not None
            and bool(r.guess)
            and (fitted.predict([r.confidence_logit])[0] >= 0.6)
        )
        assert r.would_buzz == expected
        assert r.extra["policy"]["calibration"]["method"] == "platt"
    assert any(r.would_buzz != (r.confidence_logit >= 0.6) for r in cal)  # the map mattered
    # a map of another confidence kind is refused
    done = runner.invoke(
        app,
        ["model", "show", "tfidf", "--packet", packet, "--db", db_url, "--confidence",
         "verbal", "--calibration", str(out)],
    )  # fmt: skip
    assert done.exit_code != 0 and "recalibrates the logit confidence" in done.output
