"""A whole event with bonuses and consults, scripted against a real server: 4 human teams
and 2 model teams over 2 rounds in 3 rooms, ACF rules with a model to consult (QANTA 2026:
15 for a part answered alone, 10 after consulting, 5 for a right abstention). The standings,
PPB and P/20TUH equal the hand computation below; the QBJ files validate; the analysis
reports the bonus parts and the consults.

Games (each match: the sample packet's first three tossups; a model team buzzes where its
precomputed TF-IDF trajectory crosses its threshold: Robo at 0.5 on tossups 2 and 3 (words
101 and 72), Careful at 0.99 on tossup 3 only (word 88)):

    round 1: room 1 Red–Robo, room 2 Blue–Careful, room 3 Green–Gold
    round 2: room 1 Red–Blue, room 2 Green–Robo,   room 3 Gold–Careful

Every match (X the first team, a human team; Y the second):
  T1  X buzzes at the first word, correct: +10. X's bonus (the packet's first): part 1 X
      consults (its draft "hemingway") then answers, correct: +10; part 2 alone, correct:
      +15; part 3 X abstains: the model's answer to it was wrong (TF-IDF says "Carmen" for
      Cairo), so the abstention is right: +5. X: 10 + 30 = 40.
  T2  X buzzes at the first word, incorrect: −5 (a neg). Then
      - Y human: Y buzzes, correct: +10; Y's bonus (the second): part 1 alone correct +15,
        part 2 consulted and answered, incorrect 0, part 3 alone incorrect 0: Y 25.
      - Robo: the reading goes on, Robo buzzes at word 101, ruled correct +10; its bonus
        (the model answers each part at once), ruled correct, incorrect, correct: +20.
      - Careful: no buzz: the tossup is dead.
  T3  no human buzzes; Robo (word 72) or Careful (word 88) buzzes, ruled correct, +10 and
      its bonus ruled correct, incorrect, correct +20; between two human teams, dead.

Scores: X 35 in every match; Y human 25; Robo 60; Careful 30.
    round 1: Red 35–60 Robo, Blue 35–30 Careful, Green 35–25 Gold
    round 2: Red 35–25 Blue, Green 35–60 Robo, Gold 35–30 Careful

| team    | W–L | pts | PPG | TUH | P/20TUH | bonuses | bonus pts | PPB  |
|---------|-----|-----|-----|-----|---------|---------|-----------|------|
| Robo    | 2–0 | 120 | 60  | 6   | 400     | 4       | 80        | 20   |
| Red     | 1–1 | 70  | 35  | 6   | 233.33  | 2       | 60        | 30   |
| Green   | 1–1 | 70  | 35  | 6   | 233.33  | 2       | 60        | 30   |
| Blue    | 1–1 | 60  | 30  | 6   | 200     | 2       | 45        | 22.5 |
| Gold    | 1–1 | 60  | 30  | 6   | 200     | 2       | 45        | 22.5 |
| Careful | 0–2 | 60  | 30  | 6   | 200     | 2       | 40        | 20   |

Ranked by win %, then PPB, then P/20TUH: Robo 1; Red and Green 2 (equal on all three);
Blue and Gold 4; Careful 6. Consults: 8 of the 24 parts the human teams played (one on each
of their 8 bonuses), 6 abstentions, all right.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jsonschema
import pytest
from backends import on_both_backends
from event_helpers import code_of, event_server, make_event, rehello, room_moderator, room_player
from live import Client, clients
from test_event_e2e import _seat
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core import schedule as pairing
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.record.db import make_engine
from grace_arena.record.schedule import RoundPlan, TeamEntry, set_schedule

QBJ_SCHEMA = Path(__file__).parent / "fixtures" / "analysis" / "qbj_match.schema.json"
TEAMS = [
    *(TeamEntry(t, t.title()) for t in ("red", "blue", "green", "gold")),
    TeamEntry("robo", "Robo", "model", "tfidf", 0.5),
    TeamEntry("careful", "Careful", "model", "tfidf", 0.99),
]
GAMES = [
    pairing.Game(1, "1", 0, ("red", "robo")),
    pairing.Game(1, "2", 0, ("blue", "careful")),
    pairing.Game(1, "3", 0, ("green", "gold")),
    pairing.Game(2, "1", 0, ("red", "blue")),
    pairing.Game(2, "2", 0, ("green", "robo")),
    pairing.Game(2, "3", 0, ("gold", "careful")),
]
ROOMS = ("1", "2", "3")


def _bonus_part(mod: Client, part: int) -> dict:
    return mod.state(
        lambda s: s["match"]["phase"] == "bonus" and s["bonus"]["part"] == part
        and s["bonus"]["answer"] is None
    )["bonus"]  # fmt: skip


def _answer(mod: Client, phone: Client, part: int, text: str, ruling: str) -> None:
    phone.send(type="answer", text=text, part=part + 1)
    mod.state(lambda s: s["bonus"] is not None and s["bonus"]["answer"] == text)
    mod.send(type="rule", ruling=ruling, part=part + 1)


def _model_bonus(mod: Client) -> None:
    """A model team's bonus: it answers each part at once; ruled correct, incorrect, correct."""
    for part, ruling in enumerate(("correct", "incorrect", "correct")):
        state = mod.state(
            lambda s, p=part: s["match"]["phase"] == "bonus" and s["bonus"]["part"] == p
            and s["bonus"]["answer"] is not None
        )  # fmt: skip
        assert state["bonus"]["answered_by"] == "model:tfidf" or state["bonus"]["answered_by"]
        mod.send(type="rule", ruling=ruling, part=part + 1)


def _latest(mod: Client) -> dict:
    return next(m for m in reversed(mod.received) if m["type"] == "state")


def _read_to_a_model_buzz_or_the_end(mod: Client) -> None:
    """Reveal clue by clue (read aloud: the moderator's steps); a model's buzz is ruled
    correct and its bonus played."""
    while True:
        state = _latest(mod)
        phase = state["match"]["phase"]
        if phase in ("answered", "dead"):
            return
        if phase == "buzzed":
            assert state["floor"]["kind"] == "model"
            mod.send(type="rule", ruling="correct")
            _model_bonus(mod)
            mod.state(lambda s: s["match"]["phase"] == "answered")
            return
        if phase == "reading" and state["match"]["paused"]:
            mod.send(type="resume")  # (paused, the reading does not end at its last word)
        elif phase == "reading":
            mod.send(type="step", unit="clue")
        mod.state()  # (awaiting: the buzz window runs out)


def _buzz_first_word(mod: Client, phone: Client) -> None:
    """The phone buzzes within the first words (the reading, at 600 words a minute, may have
    revealed a word or two before the pause: far before any model's buzz, word 72 at least)."""
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    mod.state(lambda s: s["match"]["paused"])
    mod.send(type="step", unit="word")
    mod.state(lambda s: s["tossup"]["position"] >= 0)
    phone.drain(0.05)
    phone.send(type="buzz")
    assert phone.wait("buzz_result")["outcome"] == "won"
    mod.state(lambda s: s["floor"] is not None)


def play_match(mod: Client, phones: dict[str, Client], teams: tuple[str, str]) -> None:
    x, y = teams
    # T1: X correct, X's bonus: consult + correct, alone correct, abstain
    _buzz_first_word(mod, phones[x])
    mod.send(type="rule", ruling="correct")
    _bonus_part(mod, 0)
    phones[x].send(type="consult", part=1, draft="hemingway")
    seen = mod.state(lambda s: s["bonus"] is not None and s["bonus"]["consulted"] is not None)
    assert seen["bonus"]["consulted"]["draft"] == "hemingway"
    _answer(mod, phones[x], 0, "mark twain", "correct")
    _bonus_part(mod, 1)
    _answer(mod, phones[x], 1, "pap", "correct")
    _bonus_part(mod, 2)
    phones[x].send(type="abstain", part=3)
    mod.state(lambda s: s["match"]["phase"] == "answered")
    # T2: X negs; Y answers (a human team) or the reading goes on (a model team)
    _buzz_first_word(mod, phones[x])
    mod.send(type="rule", ruling="incorrect")
    mod.state(lambda s: any(t["locked_out"] for t in s["teams"]))
    if y in phones:
        phones[y].send(type="buzz")
        assert phones[y].wait("buzz_result")["outcome"] == "won"
        mod.state(lambda s: s["floor"] is not None and s["floor"]["team"] == y)
        mod.send(type="rule", ruling="correct")
        _bonus_part(mod, 0)
        _answer(mod, phones[y], 0, "jane austen", "correct")
        _bonus_part(mod, 1)
        phones[y].send(type="consult", part=2)
        mod.state(lambda s: s["bonus"] is not None and s["bonus"]["consulted"] is not None)
        _answer(mod, phones[y], 1, "netherfield", "incorrect")
        _bonus_part(mod, 2)
        _answer(mod, phones[y], 2, "emma", "incorrect")
        mod.state(lambda s: s["match"]["phase"] == "answered")
    else:
        _read_to_a_model_buzz_or_the_end(mod)
    # T3: no human buzzes
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    _read_to_a_model_buzz_or_the_end(mod)
    mod.send(type="end_match")


@on_both_backends
@pytest.mark.slow
def test_an_event_with_bonuses_and_consults_of_four_human_and_two_model_teams(
    db_url, tmp_path
) -> None:
    defaults = {
        "answer_time": None, "wpm": 600, "buzz_window": 0.3, "format": "acf",
        "consult_model": "tfidf", "bonus_answer_time": None,
    }  # fmt: skip
    make_event(db_url, teams=TEAMS, rounds=2, rooms=ROOMS, defaults=defaults, tossups=3)
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    ids = tuple(t.id for t in packet.tossups[:3])
    plan = set_schedule(engine, "night", rooms=list(ROOMS), games=GAMES,
                        rounds=[RoundPlan(r, packet.packet.id, ids) for r in (1, 2)])  # fmt: skip
    engine.dispose()
    codes = {room: code_of(plan, room) for room in ROOMS}
    first_room = {"red": "1", "blue": "2", "green": "3", "gold": "3"}
    with event_server(db_url, rate_per_second=1000.0, rate_burst=1000) as server:
        events = server.events
        tokens = {n: server.run(events.moderator_token(events.rooms[c])) for n, c in codes.items()}
        mods = {n: room_moderator(server, c) for n, c in codes.items()}
        phones = {
            team: room_player(server, codes[room], team, team.title() + " One")
            for team, room in first_room.items()
        }
        with clients(*mods.values(), *phones.values()):
            for rnd in (1, 2):
                for game in (g for g in GAMES if g.round == rnd):
                    mod = mods[game.room]
                    if rnd == 2:  # the room moved on once its teams were free
                        mod.wait("next_match", 30)
                        rehello(mod, codes[game.room], role="moderator", token=tokens[game.room])
                        mod.wait("welcome")
                        assert mod.state()["event"]["round"] == 2
                    here = {t: phones[t] for t in game.teams if t in phones}
                    for phone in here.values():
                        _seat(phone, codes[game.room], rnd)
                    play_match(mod, here, game.teams)
                    mod.state(lambda s: s["match"]["phase"] == "ended")
    # the standings: the hand computation of the module docstring
    runner = CliRunner()
    result = runner.invoke(app, ["event", "standings", "night", "--json", "--db", db_url])
    assert result.exit_code == 0, result.output
    rows = {r["team"]: r for r in json.loads(result.output)["rows"]}
    expected = {  # W, L, points, PPG, TUH, P/20TUH, bonuses heard, bonus points, PPB, rank
        "robo": (2, 0, 120, 60.0, 6, 400.0, 4, 80, 20.0, 1),
        "red": (1, 1, 70, 35.0, 6, 70 / 6 * 20, 2, 60, 30.0, 2),
        "green": (1, 1, 70, 35.0, 6, 70 / 6 * 20, 2, 60, 30.0, 2),
        "blue": (1, 1, 60, 30.0, 6, 200.0, 2, 45, 22.5, 4),
        "gold": (1, 1, 60, 30.0, 6, 200.0, 2, 45, 22.5, 4),
        "careful": (0, 2, 60, 30.0, 6, 200.0, 2, 40, 20.0, 6),
    }
    for team, (won, lost, points, ppg, tuh, p20, heard, bonus, ppb, rank) in expected.items():
        row = rows[team]
        got = (row["won"], row["lost"], row["points"], row["tossups_heard"], row["bonuses_heard"],
               row["bonus_points"], row["rank"])  # fmt: skip
        assert got == (won, lost, points, tuh, heard, bonus, rank), team
        assert row["points_per_game"] == pytest.approx(ppg), team
        assert row["points_per_20_tuh"] == pytest.approx(p20), team
        assert row["points_per_bonus"] == pytest.approx(ppb), team
    result = runner.invoke(app, ["event", "standings", "night", "--db", db_url])
    said = " ".join(result.output.split())
    assert "under consult rules: a part scores 15 alone, 10 after consulting, 5" in said
    # one CSV row per part heard, with the team's choice (an abstention is no wrong answer)
    result = runner.invoke(app, ["export", "--format", "bonuses", "--event", "night",
                                 "--out", str(tmp_path / "parts.csv"), "--db", db_url])  # fmt: skip
    assert result.exit_code == 0, result.output
    with (tmp_path / "parts.csv").open(newline="") as fh:
        parts = list(csv.DictReader(fh))
    assert len(parts) == 3 * (6 + 2 + 4 + 2)  # bonuses: 6 X, 2 Y, 4 Robo, 2 Careful
    chosen = [r["choice"] for r in parts if r["choice"]]
    assert (chosen.count("consult"), chosen.count("abstain"), chosen.count("own")) == (8, 6, 10)
    assert {r["points"] for r in parts if r["choice"] == "abstain"} == {"5"}
    # every match exported in QBJ and valid; the tournament file holds both rounds
    out = tmp_path / "qbj"
    result = runner.invoke(
        app, ["export", "--format", "qbj", "--event", "night", "--out", str(out), "--db", db_url]
    )
    assert result.exit_code == 0, result.output
    schema = json.loads(QBJ_SCHEMA.read_text())
    match_files = sorted(out.glob("match-*.qbj"))
    assert len(match_files) == 6
    for path in match_files:
        match = json.loads(path.read_text())
        jsonschema.validate(match, schema)
        for team in match["match_teams"]:  # the consult points are the bonus points
            name = team["team"]["name"].lower()
            assert team["bonus_points"] in {"robo": (40,), "careful": (20,)}.get(name, (30, 15))
    tournament = json.loads((out / "night.qbj").read_text())
    (event,) = [o for o in tournament["objects"] if o["type"] == "Tournament"]
    assert [len(r["matches"]) for r in event["phases"][0]["rounds"]] == [3, 3]
    rules = event["scoring_rules"]  # a part scores by the team's choice: at most 15 (alone)
    assert rules["maximum_bonus_score"] == 45 and "points_per_bonus_part" not in rules
    assert rules["bonus_divisor"] == 5  # 15, 10 and 5 a part
    # the analysis: the model's answers to bonus parts, and the consults
    report = tmp_path / "report"
    result = runner.invoke(
        app, ["analyze", "--db", db_url, "--event", "night", "--resamples", "50",
              "--json", str(tmp_path / "a.json"), "--report", str(report)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Models on bonus parts" in result.output and "Consults on bonus parts" in result.output
    bonuses = json.loads((tmp_path / "a.json").read_text())["bonuses"]
    assert bonuses["counts"]["choices"] == 24 and bonuses["counts"]["teams"] == 4
    consult = bonuses["consult"]["all"]
    assert consult["consult_rate"]["k"] == 8 and consult["consult_rate"]["n"] == 24
    assert (consult["abstain_rate"]["k"], consult["abstained_right"]["k"]) == (6, 6)
    assert consult["changed_after_consult"] == {**consult["changed_after_consult"], "k": 6, "n": 6}
    assert consult["points"] == 6 * 30 + 2 * 15
    assert bonuses["models"]["tfidf"]["logit"]["n"] == sum(len(b.parts) for b in packet.bonuses)
    markdown = (report / "report.md").read_text()
    assert "## Bonuses: models on bonus parts, and teams consulting a model" in markdown
    assert "8/24" in markdown
