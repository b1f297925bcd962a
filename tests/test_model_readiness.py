"""A model that cannot play says so: where its confidence never reaches its threshold on a
packet (or on fewer than a fifth of the tossups), ``precompute``, ``model import``, ``event
schedule``, ``serve`` and the moderator's set-up say it, with what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.model.outputs import import_outputs, read_outputs, token_map
from grace_arena.model.policy import BuzzPolicy
from grace_arena.model.precompute import ensure_precomputed
from grace_arena.model.readiness import min_buzzes, readiness, readiness_warning
from grace_arena.record.db import open_engine

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("private_cache")

CLUB_TOSSUPS = [
    ("The treasurer keeps this object in a blue tin beside the kettle. It was bought at the "
     "spring fair. For 10 points, name this object used to stir the tea.", "the <b>spoon</b>"),
    ("Members meet in this room above the bakery. Its windows face the car park. For 10 "
     "points, name this room where the club meets.", "the <b>upstairs room</b>"),
    ("This member brings biscuits on Thursdays and keeps score with a pencil. For 10 points, "
     "name this member whose nickname is Biscuit.", "<b>Margaret</b>"),
    ("The club's mascot is this animal, painted on the door by a former captain. For 10 "
     "points, name this animal.", "the <b>hedgehog</b>"),
    ("This game is played when the buzzers are packed away. Players draw tiles from a bag. "
     "For 10 points, name this game.", "<b>dominoes</b>"),
]  # fmt: skip


def club_packet(tmp_path: Path) -> Path:
    """A club's own packet, about nothing the offline model's corpus knows."""
    packet = {
        "format": "grace-arena-packet/1",
        "packet": {"id": "club-night-1", "title": "Club night"},
        "tossups": [
            {"id": f"c{i}", "category": "Pop Culture", "text": text, "answer": answer}
            for i, (text, answer) in enumerate(CLUB_TOSSUPS, start=1)
        ],
    }
    path = tmp_path / "club.json"
    path.write_text(json.dumps(packet), encoding="utf-8")
    return path


def test_a_model_must_buzz_on_a_fifth_of_the_tossups():
    assert [min_buzzes(n) for n in (0, 1, 5, 6, 20, 26)] == [0, 1, 1, 2, 4, 6]


def _entropy_everywhere(tmp_path: Path, sample, buzzing: int = 0) -> Path:
    """The club's case as a competitor's file: "entropy" at 0.10 on every tossup, its own
    buzz on the first ``buzzing`` tossups."""
    lines = ["question_id,token_position,guess,confidence,buzz,correct"]
    for i, t in enumerate(sample.tossups):
        last = token_map(t.tokens()).n_tokens - 1
        lines.append(f"{t.id},{last},entropy,0.1,{int(i < buzzing)},0")
    path = tmp_path / "entropy.buzz.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_model_that_gives_one_answer_at_0_10_everywhere_is_told_what_to_do(
    db_url, sample, tmp_path
):
    engine = open_engine(db_url)
    outputs = read_outputs(_entropy_everywhere(tmp_path, sample))
    import_outputs(engine, sample, "entropy", [("e", outputs)])
    r = readiness(engine, "entropy", sample.packet.id, BuzzPolicy(own_buzzes=False))
    assert (r.precomputed, r.buzzes, r.best_confidence) == (26, 0, 0.1)
    assert (r.common_guess, r.common_count, r.suggestion) == ("entropy", 26, (0.1, 26, 0))
    warning = readiness_warning(r, packet="club.docx")
    assert warning == (
        "model entropy never buzzes on packet grace-arena-sample-1: its logit confidence "
        "never reaches the threshold 0.50 on any of the 26 tossups (highest 0.10). It gave "
        "the same answer, 'entropy', to 26 of them: what it knows does not cover this packet. "
        "What to do: play another model (an LLM: grace-arena precompute --packet club.docx "
        "--model openai/gpt-4o-mini); or a lower threshold (at 0.10 it buzzes on 26, 0 right); "
        "or a competitor's outputs (grace-arena model import FILE --packet club.docx)."
    )
    # played on its own buzzes, which it never makes: said so, with the threshold as a cure
    own = readiness_warning(readiness(engine, "entropy", sample.packet.id, BuzzPolicy()))
    assert own is not None
    assert "its own outputs never buzz on the 26 tossups" in own
    assert "let a threshold decide instead of its own buzzes (at 0.10" in own


@pytest.mark.parametrize(("buzzing", "warned"), [(5, True), (6, False)])
def test_fewer_buzzes_than_a_fifth_of_the_tossups_is_said_and_a_fifth_is_not(
    db_url, sample, tmp_path, buzzing, warned
):
    engine = open_engine(db_url)
    outputs = read_outputs(_entropy_everywhere(tmp_path, sample, buzzing=buzzing))
    import_outputs(engine, sample, "few", [("f", outputs)])
    warning = readiness_warning(readiness(engine, "few", sample.packet.id, BuzzPolicy()))
    if not warned:
        assert warning is None
        return
    assert warning is not None and warning.startswith("model few will rarely buzz")
    assert "its own outputs buzz on 5 of the 26 tossups, fewer than a fifth of them (6)" in warning


def test_precompute_says_the_offline_model_cannot_play_a_club_packet(db_url, tmp_path):
    packet = club_packet(tmp_path)
    result = runner.invoke(app, ["precompute", "--packet", str(packet), "--db", db_url])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "warning: model tfidf never buzzes on packet club-night-1" in said
    assert "never reaches the threshold 0.50 on any of the 5 tossups" in said
    assert f"precompute --packet {packet} --model openai/gpt-4o-mini" in said
    assert "a lower threshold (at 0." in said and f"model import FILE --packet {packet}" in said
    # at the threshold it suggests, it is quiet
    threshold = said.split("a lower threshold (at ")[1].split(" ")[0]
    again = runner.invoke(
        app, ["precompute", "--packet", str(packet), "--db", db_url, "--threshold", threshold]
    )
    assert again.exit_code == 0 and "warning" not in again.output


def test_on_the_sample_packet_the_offline_model_says_nothing(db_url, sample):
    result = runner.invoke(app, ["precompute", "--packet", str(sample.path), "--db", db_url])
    assert result.exit_code == 0 and "warning" not in result.output


def test_event_schedule_and_serve_say_a_model_team_will_not_buzz(db_url, sample, tmp_path, capsys):
    made = runner.invoke(
        app,
        ["event", "create", "c", "--team", "Red", "--model-team", "tfidf@1.0=Robo", "--db",
         db_url],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    scheduled = runner.invoke(
        app, ["event", "schedule", "c", "--packet", str(sample.path), "--db", db_url]
    )
    assert scheduled.exit_code == 0, scheduled.output
    said = " ".join(scheduled.output.split())
    assert "warning: Robo: model tfidf never buzzes on packet grace-arena-sample-1" in said
    assert "threshold 1.00 on any of the 26 tossups" in said
    assert "a lower threshold (at 0.99 it buzzes on 24, 23 right)" in said
    # serve checks an event's model teams before it starts
    from grace_arena.cli.serve import _check_event

    _check_event(db_url, "c", None)
    err = " ".join(capsys.readouterr().err.split())
    assert "warning: Robo: model tfidf never buzzes on packet grace-arena-sample-1" in err


def test_the_checks_agree_with_the_record_for_the_offline_model(db_url, sample):
    """Hand count: at a threshold, the tossups whose best step reaches it."""
    ensure_precomputed(db_url, sample)
    engine = open_engine(db_url)
    from grace_arena.model.policy import load_steps

    steps = load_steps(engine, "tfidf", sample.packet.id)
    for threshold in (0.5, 0.9, 0.9999):
        reached = sum(any(s.confidence_logit >= threshold for s in rows) for rows in steps.values())
        r = readiness(engine, "tfidf", sample.packet.id, BuzzPolicy(threshold=threshold))
        assert r.buzzes == reached
        assert (readiness_warning(r) is None) == (reached >= 6)


@pytest.mark.anyio
async def test_the_moderators_set_up_says_a_model_team_will_not_buzz(server):
    """The server checks the match it sets up and its reply carries the warning, which the
    set-up shows as the match opens."""
    from test_tui import SIZE, shown, until
    from textual.widgets import DataTable, Input, Select

    from moderator_tui import make_tui
    from moderator_tui.setup import LobbyScreen, SetupScreen

    app = make_tui(server.http_url, token=server.events.tokens.server(), backoff=(0.05, 0.5))
    async with app.run_test(size=SIZE) as pilot:
        setup = await until(pilot, lambda: shown(app, SetupScreen), "set-up")
        await until(pilot, lambda: setup.packets, "the packets")
        while any(t.kind == "model" for t in setup.teams):  # the defaults' model team
            row = next(i for i, t in enumerate(setup.teams) if t.kind == "model")
            setup.query_one("#teams", DataTable).move_cursor(row=row)
            await pilot.click("#remove-team")
        setup.query_one("#team-kind", Select).value = "model:tfidf"
        setup.query_one("#threshold", Input).value = "1"
        setup.query_one("#team-name", Input).value = "Robo"
        await pilot.click("#add-team")
        assert setup.teams[-1].model == "tfidf" and setup.teams[-1].threshold == 1.0
        await pilot.press("ctrl+s")
        await until(pilot, lambda: shown(app, LobbyScreen), "the lobby")
        notes = await until(
            pilot,
            lambda: [n for n in app._notifications if n.title == "This model will not play"],
            "the warning",
        )
        (note,) = notes
        assert note.severity == "warning"
        assert note.message.startswith("Robo: model tfidf never buzzes on packet")
        assert "a lower threshold (at 0.99 it buzzes on 24, 23 right)" in note.message
        assert app.join is not None and app.join.warnings == [note.message]


def test_serve_says_its_first_matchs_model_will_not_buzz(db_url, tmp_path):
    """A real ``serve`` process on a club's packet, with the offline model as the third team:
    the warning is printed before it listens."""
    from live import free_port
    from processes import ServerProcess

    packet = club_packet(tmp_path)
    with ServerProcess(db_url, free_port(), "--packet", str(packet)) as server:
        printed = " ".join("".join(server.lines).split())
        server.stop()
    assert "warning: Model (tfidf): model tfidf never buzzes on packet club-night-1" in printed
    assert printed.index("warning: Model (tfidf)") < printed.index("listening on")
