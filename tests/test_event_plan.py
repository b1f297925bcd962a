"""An event's teams, schedule and standings in the record; packets read back; match leases;
the ``grace-arena event`` commands."""

from __future__ import annotations

import json
import re

import pytest
from backends import on_both_backends
from event_helpers import HUMANS, make_event
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core import schedule as pairing
from grace_arena.core.commands import Buzz as BuzzCommand
from grace_arena.core.commands import (
    EndMatch,
    Join,
    Reveal,
    Rule,
    StartTossup,
    ThrowOut,
    UndoRuling,
)
from grace_arena.core.events import Ruling
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet, parse_packet
from grace_arena.core.specs import match_config
from grace_arena.io.exports import qbj_match
from grace_arena.io.record_io import load_matches
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.packets import packet_from_record
from grace_arena.record.schedule import (
    RoundPlan,
    StandingsReader,
    TeamEntry,
    create_event,
    event_id_of,
    event_standings,
    load_plan,
    set_schedule,
)
from grace_arena.record.store import GameTaken, MatchStore, RecordError

runner = CliRunner()


@on_both_backends
def test_an_event_keeps_its_teams_players_and_schedule(db_url) -> None:
    plan = make_event(db_url, players=[("red", "Alice"), ("blue", "Bob")])
    assert [t.id for t in plan.teams] == ["red", "blue", "robo", "careful"]
    assert plan.team("robo") == TeamEntry("robo", "Robo", "model", "tfidf", 0.5, None)
    assert {(p.team, p.name) for p in plan.players} == {("red", "Alice"), ("blue", "Bob")}
    assert [r.name for r in plan.rooms] == ["1", "2"]
    assert len({r.join_code for r in plan.rooms}) == 2
    assert [(g.round, g.room_id, g.teams) for g in plan.games] == [
        (1, "1", ("red", "robo")),
        (1, "2", ("blue", "careful")),
        (2, "1", ("red", "blue")),
        (3, "1", ("red", "careful")),
        (3, "2", ("blue", "robo")),
    ]
    assert plan.current_game("2").round == 1
    assert plan.next_game_of("blue").round == 1


def test_teams_must_be_well_formed(db_url) -> None:
    make_event(db_url)
    engine = make_engine(db_url)
    cases = [
        ([TeamEntry("a", "A")], "at least two teams"),
        ([TeamEntry("a", "A"), TeamEntry("a", "B")], "ids must differ"),
        ([TeamEntry("a", "Red"), TeamEntry("b", "red")], "names must differ"),
        ([TeamEntry("a", "A"), TeamEntry("m", "M", "model")], "names its model"),
        ([TeamEntry("a", "A"), TeamEntry("m", "M", "model", "tfidf", 1.5)], "not in \\[0, 1\\]"),
        ([TeamEntry("a b", "A"), TeamEntry("b", "B")], "letters, digits"),
    ]
    for teams, message in cases:
        with pytest.raises(RecordError, match=message):
            create_event(engine, "other", teams=teams)
    with pytest.raises(RecordError, match="exists already"):
        create_event(engine, "night", teams=HUMANS)


@on_both_backends
def test_the_schedule_cannot_change_once_a_round_has_started(db_url, sample) -> None:
    plan = make_event(db_url)
    engine = make_engine(db_url)
    codes = {r.name: r.join_code for r in plan.rooms}
    # before any match: a new schedule replaces the old, and rooms keep their codes
    again = set_schedule(
        engine,
        "night",
        rooms=["1", "2", "3"],
        rounds=[RoundPlan(1, sample.packet.id)],
        games=pairing.schedule(["red", "blue"], ["robo"], rounds=1, rooms=["1", "2", "3"]),
    )
    assert {r.name: r.join_code for r in again.rooms if r.name in codes} == codes
    assert len(again.games) == 2
    # a match of round 1 is created: no more changes, and the message says why
    game = next(g for g in again.games if not g.bye)
    _create_game_match(engine, again, game.id, sample)
    with pytest.raises(RecordError, match=r"round 1 has started \(match \d+ in room 1\)"):
        set_schedule(engine, "night", rooms=["1"], rounds=again.rounds, games=[])
    with pytest.raises(RecordError, match="can no longer be replaced"):
        create_event(engine, "night", teams=HUMANS, replace=True)


@on_both_backends
def test_one_scheduled_match_gets_one_match_even_when_two_processes_race(db_url, sample) -> None:
    plan = make_event(db_url)
    engine = make_engine(db_url)
    game = plan.games[0]
    first = _create_game_match(engine, plan, game.id, sample)
    with pytest.raises(GameTaken):
        _create_game_match(engine, plan, game.id, sample)
    assert load_plan(engine, "night").games[0].match_id == first.id
    assert len(MatchStore(engine).matches()) == 1  # the loser stored nothing


def _red_vs_blue(db_url, sample):
    """An event of 2 rounds and round 2's Red vs Blue match (room 1), created: the engine and
    the match."""
    plan = make_event(db_url, rounds=2)
    engine = make_engine(db_url)
    game = next(g for g in plan.games if g.teams == ("red", "blue"))
    return engine, _create_game_match(engine, plan, game.id, sample)


@on_both_backends
def test_standings_add_up_to_the_rulings(db_url, sample) -> None:
    engine, match = _red_vs_blue(db_url, sample)
    # Tossup 1: Red negs, Blue gets it; tossup 2: Red gets it.
    match.handle(Join(team="red", player="p1", name="Alice"), now=1.0)
    match.handle(Join(team="blue", player="p2", name="Bob"), now=1.0)
    match.handle(StartTossup(), now=2.0)
    match.handle(Reveal(to=5), now=3.0)
    match.handle(BuzzCommand(team="red", player="p1"), now=4.0)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=5.0)
    match.handle(BuzzCommand(team="blue", player="p2"), now=6.0)
    match.handle(Rule(ruling=Ruling.CORRECT), now=7.0)
    match.handle(StartTossup(), now=8.0)
    match.handle(Reveal(to=30), now=8.5)
    match.handle(BuzzCommand(team="red", player="p1"), now=9.0)
    match.handle(Rule(ruling=Ruling.CORRECT), now=10.0)
    _, live = event_standings(engine, "night")
    assert {s.team: s.live for s in live} == {"red": 1, "blue": 1, "robo": 0, "careful": 0}
    match.handle(EndMatch(), now=11.0)
    _, rows = event_standings(engine, "night")
    by = {s.team: s for s in rows}
    scores = match.match.scores
    assert by["red"].points == scores["red"] and by["blue"].points == scores["blue"]
    assert (by["red"].correct, by["red"].incorrect, by["red"].negs) == (1, 1, 1)
    assert (by["blue"].correct, by["blue"].incorrect) == (1, 0)
    assert by["red"].points == by["red"].powers * 15 + (1 - by["red"].powers) * 10 - 5
    assert by["red"].tossups_heard == by["blue"].tossups_heard == 2
    winner, loser = ("red", "blue") if scores["red"] > scores["blue"] else ("blue", "red")
    assert (by[winner].won, by[loser].lost, by[winner].rank) == (1, 1, 1)
    assert by["robo"].played == 0 and by["robo"].points_per_tossup is None


@on_both_backends
def test_a_standings_reader_rereads_only_what_changed_and_agrees_with_a_full_read(
    db_url, sample
) -> None:
    engine, match = _red_vs_blue(db_url, sample)
    reader = StandingsReader(engine, event_id_of(engine, "night"))

    def same() -> tuple[int, int]:
        """The reader's standings and schedule are a full read's; what it has read so far."""
        plan, rows = reader.read()
        full_plan, full_rows = event_standings(engine, "night")
        assert (plan.games, rows) == (full_plan.games, full_rows)
        return reader.plans_read, reader.matches_read

    assert same() == (1, 1)
    assert same() == (1, 1)  # nothing changed: nothing read but the marks
    match.handle(Join(team="red", player="p1", name="Alice"), now=1.0)
    match.handle(StartTossup(), now=2.0)
    assert same() == (1, 2)
    match.handle(Reveal(to=5), now=3.0)
    match.handle(BuzzCommand(team="red", player="p1"), now=4.0)
    match.handle(Rule(ruling=Ruling.CORRECT), now=5.0)
    assert same() == (1, 3)
    assert {s.team: s.points for s in reader.read()[1]}["red"] == match.match.scores["red"] > 0
    # another process creates and plays round 1's first match: the plan is read again
    plan = load_plan(engine, "night")
    other_game = next(g for g in plan.games if g.teams == ("red", "robo"))
    other = _create_game_match(engine, plan, other_game.id, sample)
    assert same() == (2, 4)
    other.handle(Join(team="red", player="p1", name="Alice"), now=1.0)
    other.handle(StartTossup(), now=2.0)
    other.handle(Reveal(to=3), now=3.0)
    other.handle(BuzzCommand(team="red", player="p1"), now=4.0)
    other.handle(Rule(ruling=Ruling.CORRECT), now=5.0)
    assert same() == (2, 5)  # that match alone
    other.handle(EndMatch(), now=6.0)
    assert same() == (3, 6)
    match.handle(UndoRuling(), now=7.0)
    assert same() == (3, 7)
    assert same() == (3, 7)


@on_both_backends
def test_a_tossup_ruled_again_after_an_undo_is_heard_once(db_url, sample) -> None:
    engine, match = _red_vs_blue(db_url, sample)
    last_word = match.match.config.tossups[0].n_words - 1
    match.handle(Join(team="red", player="p1", name="Alice"), now=1.0)
    match.handle(Join(team="blue", player="p2", name="Bob"), now=1.0)
    # tossup 1: Blue negs; Red buzzes on the last word, is ruled incorrect (no penalty) and
    # the tossup is dead; the moderator takes that ruling back and rules Red correct
    match.handle(StartTossup(), now=2.0)
    match.handle(Reveal(to=5), now=3.0)
    match.handle(BuzzCommand(team="blue", player="p2"), now=4.0)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=5.0)
    match.handle(Reveal(to=last_word), now=6.0)
    match.handle(BuzzCommand(team="red", player="p1"), now=7.0)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=8.0)
    assert match.match.game.phase == "dead"
    match.handle(UndoRuling(), now=9.0)
    match.handle(Rule(ruling=Ruling.CORRECT), now=10.0)
    _, rows = event_standings(engine, "night")
    by = {s.team: s for s in rows}
    # (a match under way counts in the points only, as points in play)
    assert {t: (by[t].points, by[t].live_points) for t in ("red", "blue")} == {
        "red": (10, 10),
        "blue": (-5, -5),
    }
    # tossup 2: Blue gets it, then the moderator throws it out: it was not heard, and
    # Blue's points on it go with it
    match.handle(StartTossup(), now=11.0)
    match.handle(Reveal(to=5), now=12.0)
    match.handle(BuzzCommand(team="blue", player="p2"), now=13.0)
    match.handle(Rule(ruling=Ruling.CORRECT), now=14.0)
    match.handle(ThrowOut(), now=15.0)
    match.handle(EndMatch(), now=16.0)
    _, rows = event_standings(engine, "night")
    by = {s.team: s for s in rows}
    assert by["red"].tossups_heard == by["blue"].tossups_heard == 1
    assert (by["blue"].points, by["blue"].correct, by["blue"].incorrect) == (-5, 0, 1)
    assert (by["red"].points, by["red"].correct, by["red"].incorrect) == (10, 1, 0)
    assert by["blue"].negs == 1 and by["red"].points_per_tossup == 10.0
    assert {t: by[t].points for t in ("red", "blue")} == match.match.scores
    assert (by["red"].won, by["blue"].lost) == (1, 1)
    # the QBJ export of the match says as much
    (info,) = load_matches(engine, [match.id])
    assert qbj_match(engine, info)["tossups_read"] == 1


@on_both_backends
def test_a_neg_on_the_first_tossup_lists_a_team_below_teams_on_nothing(db_url, sample) -> None:
    engine, match = _red_vs_blue(db_url, sample)
    match.handle(Join(team="blue", player="p2", name="Bob"), now=1.0)
    match.handle(StartTossup(), now=2.0)
    match.handle(Reveal(to=5), now=3.0)
    match.handle(BuzzCommand(team="blue", player="p2"), now=4.0)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=5.0)  # the tossup is read on
    _, rows = event_standings(engine, "night")
    # no team has finished a game: all share the first rank, the team in the minus listed last
    assert [(s.team, s.rank, s.points, s.tossups_heard) for s in rows] == [
        ("careful", 1, 0, 0),
        ("red", 1, 0, 0),
        ("robo", 1, 0, 0),
        ("blue", 1, -5, 0),
    ]


@on_both_backends
def test_a_packet_is_read_back_from_the_record(db_url, sample) -> None:
    make_event(db_url)
    engine = make_engine(db_url)
    assert packet_from_record(engine, sample.packet.id) == sample
    with pytest.raises(LookupError, match="no packet 'nope'"):
        packet_from_record(engine, "nope")


def test_an_older_record_rebuilds_a_packet_from_its_tossups(db_url) -> None:
    """A packet stored before whole packets were kept: clue boundaries given explicitly come
    back as clues."""
    packet = parse_packet(
        """
format: grace-arena-packet/1
packet: {id: clues-1, title: Clues}
tossups:
  - id: t1
    category: Science
    clues: ["This gas is inert. It glows red", "in signs. Name it."]
    answer: <b>neon</b>
"""
    )
    make_event(db_url)
    engine = make_engine(db_url)
    MatchStore(engine).save_packet(packet)
    from sqlmodel import Session

    from grace_arena.record.models import PacketRow

    with Session(engine) as session:
        row = session.get(PacketRow, "clues-1")
        row.meta = {k: v for k, v in row.meta.items() if k != "document"}
        session.add(row)
        session.commit()
    back = packet_from_record(engine, "clues-1")
    assert back.tossups[0].clues == packet.tossups[0].clues
    assert back.tossups[0].tokens().clue_ends == packet.tossups[0].tokens().clue_ends


def test_event_commands(db_url, tmp_path) -> None:
    result = runner.invoke(
        app,
        ["event", "create", "club", "--team", "Red", "--team", "Blue", "--team", "Green",
         "--model-team", "tfidf@0.6=Robo", "--player", "Red:Alice", "--db", db_url],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "robo: Robo — model tfidf, threshold 0.6" in result.output
    result = runner.invoke(
        app,
        ["event", "schedule", "club", "--packet", str(SAMPLE_PACKET_PATH), "--rooms", "2",
         "--rounds", "3", "--tossups", "1-4", "--db", db_url],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    plan = load_plan(make_engine(db_url), "club")
    assert len(plan.rounds) == 3 and plan.rounds[0].tossup_ids is not None
    assert len(plan.rounds[0].tossup_ids) == 4
    assert len([g for g in plan.games if not g.bye]) == 6  # 4 teams: each pair once
    for code in (r.join_code for r in plan.rooms):
        assert code in result.output
    shown = runner.invoke(app, ["event", "show", "club", "--db", db_url])
    assert shown.exit_code == 0 and "Alice" in shown.output and "not started" in shown.output
    standings = runner.invoke(app, ["event", "standings", "club", "--json", "--db", db_url])
    assert standings.exit_code == 0, standings.output
    data = json.loads(standings.output)
    assert [r["team"] for r in data["rows"]] == ["blue", "green", "red", "robo"]
    table = runner.invoke(app, ["event", "standings", "club", "--db", db_url])
    assert "standings" in table.output and "Robo" in table.output
    # the packet given by its id (already in the record) works as well as its file
    again = runner.invoke(
        app, ["event", "schedule", "club", "--packet", plan.rounds[0].packet_id, "--db", db_url]
    )
    assert again.exit_code == 0, again.output
    # the same tossups every round: said, as teams would hear them again; one range per round
    assert "round 2 reads tossups that round 1 read too" in result.output
    per_round = runner.invoke(
        app,
        ["event", "schedule", "club", "--packet", str(SAMPLE_PACKET_PATH), "--rounds", "3",
         "--tossups", "1-4", "--tossups", "5-8", "--tossups", "9-12", "--db", db_url],
    )  # fmt: skip
    assert per_round.exit_code == 0, per_round.output
    assert "warning" not in per_round.output
    packet = load_packet(SAMPLE_PACKET_PATH)
    rounds = load_plan(make_engine(db_url), "club").rounds
    assert [r.tossup_ids for r in rounds] == [
        tuple(t.id for t in packet.tossups[i : i + 4]) for i in (0, 4, 8)
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["event", "create", "x", "--team", "Red"], "at least two teams"),
        (["event", "create", "x", "--team", "A", "--model-team", "tfidf@2"], "between 0 and 1"),
        (["event", "create", "x", "--team", "A", "--player", "Z:Bo"], "no team 'Z' (teams: A)"),
        (["event", "show", "nope"], "no event 'nope'"),
        (["event", "schedule", "nope", "--packet", "x"], "no event 'nope'"),
    ],
)
def test_event_commands_say_what_is_wrong(db_url, args, message) -> None:
    upgrade(db_url)  # a record without that event (one not there at all: test_cli.py)
    result = runner.invoke(app, [*args, "--db", db_url])
    assert result.exit_code != 0
    assert message in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--team", "\u200b"], "'\\u200b': a name needs a visible character"),
        (["--team", "\u202eNAJ"], "a bidirectional control (U+202E)"),
        (["--team", "Red\tTeam"], "a control character (U+0009)"),
        (["--team", "Red\udcff"], "a lone surrogate (U+DCFF)"),  # undecodable bytes in argv
        (["--team", "x" * 101], "a name has at most 100 characters"),
        (["--model-team", "tfidf@0.6=\u2066Bot"], "a bidirectional control (U+2066)"),
        (["--model-team", "tf\x00idf"], "NUL (U+0000)"),
        (["--player", "Red:\u200d\u200d"], "a name needs a visible character"),
        (["--player", "Red:Al\x1bice"], "a control character (U+001B)"),
        (["--player", "Red:" + "x" * 41], "a name has at most 40 characters"),
        (["--wpm", "5"], "wpm must be from 30 to 1200 words a minute, not 5"),
        (["--wpm", "5000"], "wpm must be from 30 to 1200 words a minute, not 5000"),
        (["--reading-mode", "mime"], "'read_aloud' or 'screen'"),
        (["--title", "Night\x00"], "NUL (U+0000)"),
    ],
)
def test_event_create_refuses_names_and_settings_saying_why_and_stores_nothing(
    db_url, args, message
) -> None:
    upgrade(db_url)
    result = runner.invoke(
        app, ["event", "create", "club", "--team", "Red", "--team", "Blue", *args, "--db", db_url]
    )
    assert result.exit_code == 2, result.output  # a usage error, before the record is touched
    assert message in " ".join(result.output.replace("│", " ").split()), result.output
    with pytest.raises(RecordError, match="no event"):
        load_plan(make_engine(db_url), "club")


def test_event_create_keeps_names_as_the_server_does(db_url) -> None:
    result = runner.invoke(
        app,
        ["event", "create", "club", "--team", "  Jose\u0301  Reds ", "--team", "\u674e\u961f",
         "--model-team", "tfidf=\U0001f916 Bot", "--player", "jos\u00e9 reds:Ana\u0301",
         "--wpm", "240", "--db", db_url],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    plan = load_plan(make_engine(db_url), "club")
    assert [t.name for t in plan.teams] == ["Jos\u00e9 Reds", "\u674e\u961f", "\U0001f916 Bot"]
    assert [(p.team, p.name) for p in plan.players] == [(plan.teams[0].id, "An\u00e1")]
    # (read aloud, no answer clock unless one is given: the moderator rules)
    assert plan.defaults == {"reading_mode": "read_aloud", "wpm": 240, "answer_time": None}


@pytest.mark.parametrize(
    ("defaults", "message"),
    [
        ({"correct_points": -1e20}, "correct_points must be from 1 to 100 points"),
        ({"answer_time": -5}, "answer_time must be from 1 to 120 seconds"),
        ({"buzz_window": 1e308}, "buzz_window must be from 0 to 60 seconds"),
        ({"wpm": 9000}, "wpm must be from 30 to 1200 words a minute"),
        ({"scoring": "fast"}, "scoring: Extra inputs are not permitted"),
    ],
)
def test_an_events_match_settings_out_of_range_are_refused(db_url, defaults, message) -> None:
    """The settings every match of the event will be created with: one out of its range would
    have made each of them fail to start (or play broken)."""
    upgrade(db_url)
    with pytest.raises(RecordError, match=re.escape(message)):
        create_event(make_engine(db_url), "club", teams=HUMANS, defaults=defaults)
    with pytest.raises(RecordError, match="no event"):
        load_plan(make_engine(db_url), "club")


def _create_game_match(engine, plan, game_id, packet):
    """The scheduled match ``game_id`` created in the record, as a server does."""
    from grace_arena.core.config import TeamKind, TeamSpec

    game = next(g for g in plan.games if g.id == game_id)
    teams = [
        TeamSpec(id=t.id, name=t.name)
        if t.kind == "human"
        else TeamSpec(id=t.id, name=t.name, kind=TeamKind.MODEL, model=t.model)
        for t in (plan.team(tid) for tid in game.teams)
    ]
    rnd = plan.round_(game.round)
    config = match_config(packet, teams, tossup_ids=rnd.tossup_ids)
    return MatchStore(engine).create(config, now=0.0, event=plan.name, game_id=game_id)


@on_both_backends
def test_standings_count_bonus_points_and_points_per_bonus(db_url, sample) -> None:
    from grace_arena.core.commands import RulePart
    from grace_arena.core.formats import rules_for
    from grace_arena.core.specs import match_config

    plan = make_event(db_url, rounds=2)
    engine = make_engine(db_url)
    game = next(g for g in plan.games if g.teams == ("red", "blue"))
    from grace_arena.core.config import TeamSpec

    teams = [TeamSpec(id=t, name=t.title()) for t in game.teams]
    config = match_config(sample, teams, tossup_ids=plan.round_(game.round).tossup_ids,
                          rules=rules_for("acf", bouncebacks=True))  # fmt: skip
    match = MatchStore(engine).create(config, now=0.0, event=plan.name, game_id=game.id)
    match.handle(Join(team="red", player="p1", name="Alice"), now=1.0)
    match.handle(StartTossup(), now=2.0)
    match.handle(Reveal(to=5), now=3.0)
    match.handle(BuzzCommand(team="red", player="p1"), now=4.0)
    match.handle(Rule(ruling=Ruling.CORRECT), now=5.0)
    for ruling in (Ruling.CORRECT, Ruling.INCORRECT, Ruling.CORRECT, Ruling.CORRECT):
        match.handle(RulePart(ruling=ruling), now=6.0)  # (the 2nd bounces back to Blue)
    match.handle(EndMatch(), now=7.0)
    _, rows = event_standings(engine, "night")
    by = {s.team: s for s in rows}
    assert (by["red"].points, by["red"].bonus_points, by["red"].bonuses_heard) == (30, 20, 1)
    assert by["red"].points_per_bonus == 20.0
    assert (by["blue"].points, by["blue"].bounceback_points) == (10, 10)
    assert by["blue"].points_per_bonus is None
    assert match.match.scores == {"red": 30, "blue": 10}
    # every standings screen shows PPB once bonuses are played
    from rich.console import Console

    from grace_arena.cli.event import standings_table
    from grace_arena.server.views import standings_view
    from moderator_tui.event import standings_table as tui_table

    view = standings_view("night", "Night", 2, rows)
    assert {r.team: r.points_per_bonus for r in view.rows}["red"] == 20.0
    for table in (standings_table("Night", rows), tui_table(view)):
        console = Console(width=120, record=True, color_system=None)
        console.print(table)
        text = console.export_text()
        assert "PPB" in text and "20.00" in text
    engine.dispose()


def test_a_game_format_given_as_pairings_says_what_pairings_are():
    from grace_arena.core.schedule import ScheduleError, schedule

    with pytest.raises(ScheduleError, match=r"one of round-robin, grace \(how teams are paired"):
        schedule(["a", "b"], [], rounds=1, rooms=["r1"], format="acf")  # type: ignore[arg-type]


@on_both_backends
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_standings_reader_reads_each_event_once_and_agrees_with_a_full_read(
    db_url, sample, seed
) -> None:
    """A match of bonuses with bouncebacks played by a random walk of the moderator's
    commands (rulings made, undone and corrected, bonus parts ruled, tossups and bonuses
    thrown out, words revealed): after every command the reader's results, read on from the
    events stored since its last read, are a full read's, and it decoded each event once."""
    import random

    from sqlmodel import Session, select

    from grace_arena.core.commands import CorrectRuling, RulePart, ThrowOutBonus
    from grace_arena.core.config import TeamSpec
    from grace_arena.core.errors import IllegalCommand
    from grace_arena.core.formats import rules_for
    from grace_arena.core.standings import RESULT_EVENTS
    from grace_arena.record.models import EventRow
    from grace_arena.record.schedule import match_results

    plan = make_event(db_url, rounds=2)
    engine = make_engine(db_url)
    game = next(g for g in plan.games if g.teams == ("red", "blue"))
    teams = [TeamSpec(id=t, name=t.title()) for t in game.teams]
    config = match_config(sample, teams, rules=rules_for("acf", bouncebacks=True))
    match = MatchStore(engine).create(config, now=0.0, event=plan.name, game_id=game.id)
    reader = StandingsReader(engine, event_id_of(engine, "night"))
    match.handle(Join(team="red", player="p1", name="Alice"), now=1.0)
    match.handle(Join(team="blue", player="p2", name="Bob"), now=1.0)
    rng = random.Random(seed)
    done, now = 0, 2.0

    def command():
        kind = rng.choices(
            ["start", "reveal", "buzz", "rule", "part", "undo", "throw", "throw_bonus", "correct"],
            weights=[4, 4, 4, 4, 8, 1, 0.4, 0.4, 1],
        )[0]
        if kind == "start":
            return StartTossup()
        if kind == "reveal":
            return Reveal(to=rng.randrange(1, 40))
        if kind == "buzz":
            team = rng.choice(["red", "blue"])
            return BuzzCommand(team=team, player="p1" if team == "red" else "p2")
        if kind == "rule":
            return Rule(ruling=rng.choice([Ruling.CORRECT, Ruling.INCORRECT]))
        if kind == "part":
            return RulePart(ruling=rng.choice([Ruling.CORRECT, Ruling.INCORRECT]))
        if kind == "undo":
            return UndoRuling()
        if kind == "throw":
            return ThrowOut()
        if kind == "throw_bonus":
            return ThrowOutBonus()
        state = match.match.state
        made = [state.officiating.rulings[e.seq] for e in state.game.ledger]
        made = [r for r in made if r.ruling is not Ruling.PROMPT]
        if not made:
            return UndoRuling()
        ruling = rng.choice(made)  # ruled the other way
        flipped = Ruling.INCORRECT if ruling.ruling is Ruling.CORRECT else Ruling.CORRECT
        return CorrectRuling(seq=ruling.seq, ruling=flipped)

    while done < 150:
        now += 1.0
        try:
            if not match.handle(command(), now=now):
                continue
        except IllegalCommand:
            continue
        done += 1
        full = load_plan(engine, "night")
        assert reader.read_results()[1] == match_results(engine, full)
    with Session(engine) as session:
        stored = session.exec(select(EventRow.type).where(EventRow.match_id == match.id)).all()
    kinds = set(stored)
    assert {"bonus_part_ruled", "ruling_undone", "ruling_corrected", "words_revealed"} <= kinds
    # each event decoded once, up to the last that may change the result
    read = reader._replays._read[match.id].seq
    assert reader._replays.events_read == read
    assert max(i for i, t in enumerate(stored, 1) if t in RESULT_EVENTS) <= read
    _, results = reader.read_results()
    mine = next(r for r in results if r.match_id == match.id)
    assert {t: line.points for t, line in mine.teams.items()} == match.match.scores
    engine.dispose()


@on_both_backends
def test_a_standings_reader_reads_on_an_event_that_became_visible_after_a_later_one(
    db_url, sample
) -> None:
    """Events of a match seen out of order (a tossup's start and its throw-out, then the word
    revealed between them): the reader replays up to the gap, and reads on from it the next
    time though the match's last result event did not move."""
    from sqlmodel import Session

    from grace_arena.core.commands import ThrowOut
    from grace_arena.core.events import event_to_dict
    from grace_arena.core.match import Match
    from grace_arena.record.models import EventRow
    from grace_arena.record.schedule import match_results

    engine, match = _red_vs_blue(db_url, sample)
    match.handle(Join(team="red", player="p1", name="Alice"), now=1.0)
    reader = StandingsReader(engine, event_id_of(engine, "night"))
    reader.read_results()
    shadow = Match(match.match.state)  # what the room decides, stored by hand below
    (start,) = shadow.handle(StartTossup(), now=2.0)
    (revealed,) = shadow.handle(Reveal(to=3), now=3.0)
    (ended,) = shadow.handle(ThrowOut(), now=4.0)

    def store(*events) -> None:
        with Session(engine) as session:
            for ev in events:
                session.add(EventRow(match_id=match.id, seq=ev.seq, type=ev.type, t=ev.t,
                                     payload=event_to_dict(ev)))  # fmt: skip
            session.commit()

    store(start, ended)
    reader.read_results()
    store(revealed)
    _, results = reader.read_results()
    assert results == match_results(engine, load_plan(engine, "night"))
    mine = next(r for r in results if r.match_id == match.id)
    assert mine.tossups_heard == 0  # thrown out: not heard
    engine.dispose()
