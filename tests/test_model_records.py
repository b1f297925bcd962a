"""What threshold selection reads from the record and from files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from backends import on_both_backends
from engine_helpers import config
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.commands import Buzz, Join, Reveal, Rule, StartTossup
from grace_arena.core.events import BuzzTiming, Ruling
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.model.precompute import ensure_precomputed
from grace_arena.model.records import (
    human_curve_from_file,
    human_records_from_db,
    trajectories_from_db,
)

T = 1_700_000_000.0


def play_one_tossup(store) -> None:
    rm = store.create(config(n_tossups=2), now=T)
    rm.handle(Join(team="red", player="r1", name="Ruth"), now=T)
    rm.handle(Join(team="blue", player="b1", name="Bo"), now=T)
    rm.handle(StartTossup(), now=T)
    rm.handle(Reveal(to=4), now=T + 1)
    rm.handle(Buzz(team="red", player="r1", timing=BuzzTiming(received_mono=1.0)), now=T + 2)
    rm.handle(Rule(ruling=Ruling.CORRECT), now=T + 3)


@on_both_backends
def test_human_records_from_the_record(store):
    play_one_tossup(store)
    fractions, n_records = human_records_from_db(store.engine)
    assert fractions == [pytest.approx(5 / 20)]  # word 4 of 20 heard
    assert n_records == 2  # two human teams on the one tossup started


@on_both_backends
def test_threshold_ew_from_the_record(store, db_url):
    play_one_tossup(store)
    ensure_precomputed(db_url, load_packet(SAMPLE_PACKET_PATH))
    result = CliRunner().invoke(
        app, ["model", "threshold", "tfidf", "--db", db_url, "--method", "ew"]
    )
    assert result.exit_code == 0, result.output
    assert "1 correct of 2 human records" in result.output


def test_trajectories_from_the_record(db_url):
    packet = load_packet(SAMPLE_PACKET_PATH)
    ensure_precomputed(db_url, packet)
    from grace_arena.record.db import make_engine

    trajectories = trajectories_from_db(make_engine(db_url), "tfidf", confidence="logit")
    assert len(trajectories) == len(packet.tossups)
    moby = next(t for t in trajectories if t.question_id.endswith("/lit-american-1"))
    assert moby.n_words == len(packet.tossup("lit-american-1").tokens().words)
    assert moby.word_index.tolist() == list(packet.tossup("lit-american-1").tokens().clue_ends)
    assert moby.correct[-1] and np.all(np.isfinite(moby.confidence))
    verbal = trajectories_from_db(make_engine(db_url), "tfidf", confidence="verbal")
    assert np.all(np.isnan(verbal[0].confidence))  # missing stays missing


def test_human_curve_files(tmp_path):
    coef = tmp_path / "c.json"
    coef.write_text(json.dumps({"coefficients": [0, 0, -1, 1]}))
    assert human_curve_from_file(coef)(0.25) == pytest.approx(0.75)
    fitted = tmp_path / "f.json"
    fitted.write_text(json.dumps({"fractions_correct": np.linspace(0, 1, 101).tolist(),
                                  "n_records": 101}))  # fmt: skip
    assert human_curve_from_file(fitted)(0.5) == pytest.approx(0.5, abs=0.03)
    rows = tmp_path / "r.csv"
    lines = ["fraction,correct"] + [f"{x:.2f},1" for x in np.linspace(0, 1, 51)] + [",0"] * 51
    rows.write_text("\n".join(lines) + "\n")
    # Half the records answered, evenly: w(x) ≈ 1 − x/2.
    assert human_curve_from_file(rows)(1.0) == pytest.approx(0.5, abs=0.05)
