"""The durable record: migrations, events before effects, projections, replay; on SQLite and
on PostgreSQL."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from backends import on_both_backends
from engine_helpers import config
from sqlalchemy import inspect, text
from sqlmodel import SQLModel

import grace_arena.record.models  # noqa: F401
from grace_arena.core.commands import Buzz, Join, Reveal, Rule, StartTossup, UndoRuling
from grace_arena.core.config import ModelBuzz
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import BuzzTiming, Ruling
from grace_arena.record.db import alembic_config, make_engine, upgrade
from grace_arena.record.store import MatchStore, RecordError

T = 1_700_000_000.0

pytestmark = on_both_backends


def test_upgrade_head_on_an_empty_database_matches_the_models(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), SQLModel.metadata)
        assert diff == []
        tables = set(inspect(conn).get_table_names())
        assert {"event", "buzz", "ruling", "match", "team", "player", "model_step"} <= tables
        if conn.dialect.name == "sqlite":
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"


def test_upgrade_is_idempotent(db_url):
    upgrade(db_url)
    upgrade(db_url)


def test_threads_of_one_process_may_upgrade_at_once(db_url):
    """A server opening two rooms' matches at once checks the record's schema from two
    threads; Alembic's process-wide state made one of them fail (KeyError: 'script')."""
    from concurrent.futures import ThreadPoolExecutor

    upgrade(db_url)
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda _: upgrade(db_url), range(16))) == [db_url] * 16


def test_every_migration_downgrades_and_the_record_upgrades_again(db_url):
    upgrade(db_url)
    command.downgrade(alembic_config(db_url), "base")
    engine = make_engine(db_url)
    with engine.connect() as conn:
        assert set(inspect(conn).get_table_names()) == {"alembic_version"}
    upgrade(db_url)
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
    engine.dispose()


def play_some(store: MatchStore):
    buzzes = {"t0": ModelBuzz(word_index=9, guess="Carver", confidence=0.7)}
    rm = store.create(config(model_buzzes=buzzes), now=T, join_code="ABCD")
    rm.handle(Join(team="red", player="r1", name="Ruth"), now=T)
    rm.handle(Join(team="blue", player="b1", name="Bo"), now=T)
    rm.handle(StartTossup(), now=T)
    rm.handle(Reveal(to=4), now=T + 1)
    rm.handle(
        Buzz(
            team="red",
            player="r1",
            timing=BuzzTiming(
                received_mono=10.0,
                received_wall=T + 1.5,
                client_press=T + 1.4,
                clock_offset=0.01,
                rtt=0.03,
            ),
        ),
        now=T + 1.5,
    )
    rm.handle(Buzz(team="blue", player="b1", timing=BuzzTiming(received_mono=10.02)), now=T + 1.52)
    rm.handle(Rule(ruling=Ruling.INCORRECT), now=T + 3)
    rm.handle(Reveal(to=12), now=T + 4)  # the model buzzes at word 9
    rm.handle(Rule(ruling=Ruling.CORRECT), now=T + 5)
    rm.handle(UndoRuling(), now=T + 6)
    rm.handle(Rule(ruling=Ruling.INCORRECT), now=T + 7)  # a model's answer cannot be prompted
    rm.handle(Reveal(to=14), now=T + 7.5)
    rm.handle(Buzz(team="blue", player="b1", timing=BuzzTiming(received_mono=16.0)), now=T + 7.6)
    rm.handle(Rule(ruling=Ruling.PROMPT), now=T + 7.8)  # Bo is asked for more
    return rm


def test_buzzes_and_rulings_are_projected_with_every_logged_field(store):
    rm = play_some(store)
    buzzes = store.buzzes(rm.id)
    assert [(b.buzz_id, b.team_id, b.outcome) for b in buzzes] == [
        (1, "red", "won"),
        (2, "blue", "lost_race"),
        (3, "bot", "won"),
        (4, "blue", "won"),
    ]
    red, blue, bot, bo = buzzes
    assert (red.word_index, red.clue_index, red.char_offset) == (4, 0, 24)
    assert red.fraction_revealed == pytest.approx(5 / 20)
    assert (red.client_press, red.clock_offset, red.rtt) == (T + 1.4, 0.01, 0.03)
    assert red.received_mono == 10.0 and red.received_wall == T + 1.5
    assert (red.ruling, red.points, red.interrupt) == ("incorrect", -5, True)
    assert blue.margin == pytest.approx(0.02) and blue.holder_buzz_id == 1
    assert (bot.player_kind, bot.answer, bot.suggestion, bot.model_confidence) == (
        "model",
        "Carver",
        "prompt",
        0.7,
    )
    # correct was undone, then ruled incorrect: the buzz shows the ruling in force
    assert bot.ruling == "incorrect" and bot.points == -5
    assert (bo.word_index, bo.ruling, bo.points) == (14, "prompt", 0)
    rulings = store.rulings(rm.id)
    assert [(r.ruling, r.undone_seq is not None) for r in rulings] == [
        ("incorrect", False),
        ("correct", True),
        ("incorrect", False),
        ("prompt", False),
    ]


def test_a_race_and_its_rulings_in_one_transaction_are_projected_as_one_by_one(store):
    """Buzzes, won or refused, are written with their events' multi-row INSERTs: a ruling or
    another buzz later in the same transaction finds their rows, as it would one commit
    later."""
    rm = store.create(config(), now=T, join_code="ABCD")
    rm.handle(Join(team="red", player="r1", name="Ruth"), now=T)
    rm.handle(Join(team="blue", player="b1", name="Bo"), now=T)
    rm.handle(StartTossup(), now=T)
    rm.handle(Reveal(to=4), now=T + 1)
    results = rm.handle_many(
        [
            Buzz(team="red", player="r1", timing=BuzzTiming(received_mono=10.0, rtt=0.03)),
            Buzz(team="blue", player="b1", timing=BuzzTiming(received_mono=10.01)),
            Rule(ruling=Ruling.INCORRECT),
            Buzz(team="blue", player="b1", timing=BuzzTiming(received_mono=10.5)),
            Rule(ruling=Ruling.CORRECT),
        ],
        now=T + 1.5,
    )
    assert not any(isinstance(r, IllegalCommand) for r in results)
    red, blue_lost, blue = store.buzzes(rm.id)
    assert (red.outcome, red.ruling, red.points, red.interrupt, red.rtt) == (
        "won", "incorrect", -5, True, 0.03,
    )  # fmt: skip
    assert (blue_lost.outcome, blue_lost.holder_buzz_id, blue_lost.ruling) == ("lost_race", 1, None)
    assert (blue.buzz_id, blue.outcome, blue.ruling, blue.points > 0) == (3, "won", "correct", True)
    assert (red.answer, red.suggestion, red.model_confidence, red.margin) == (None,) * 4
    assert all(b.repeats == 0 and not b.thrown_out for b in (red, blue_lost, blue))
    assert store.open(rm.id).match.state == rm.match.state


def test_reopening_replays_to_the_same_state(store):
    rm = play_some(store)
    again = store.open(rm.id)
    assert again.match.state == rm.match.state
    assert store.find_by_join_code("ABCD").id == rm.id


def test_an_illegal_command_stores_nothing(store):
    rm = play_some(store)
    count = store.event_count(rm.id)
    with pytest.raises(IllegalCommand):
        rm.handle(StartTossup(), now=T + 8)
    assert store.event_count(rm.id) == count


def test_a_failed_commit_leaves_the_live_match_unchanged(store, monkeypatch):
    rm = play_some(store)
    before = rm.match.state

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(store, "append", broken)
    with pytest.raises(RuntimeError):
        rm.handle(Rule(ruling=Ruling.CORRECT), now=T + 9)
    assert rm.match.state is before


def _flooded(store: MatchStore):
    """A tossup whose floor red's r1 holds, blue's b1 pressing."""
    rm = store.create(config(), now=T)
    rm.handle(Join(team="red", player="r1", name="Ruth"), now=T)
    rm.handle(Join(team="blue", player="b1", name="Bo"), now=T)
    rm.handle(StartTossup(), now=T)
    rm.handle(Reveal(to=4), now=T)
    rm.handle(Buzz(team="red", player="r1", timing=BuzzTiming(received_mono=1.0)), now=T)
    return rm


def _presses(n: int, *, at: float, player: str = "b1", team: str = "blue") -> list[Buzz]:
    return [
        Buzz(team=team, player=player, timing=BuzzTiming(received_wall=at + i, received_mono=2.0))
        for i in range(n)
    ]


def test_repeated_presses_are_counted_on_the_first_refusals_row(store):
    rm = _flooded(store)
    count = store.event_count(rm.id)
    results = rm.handle_many(_presses(10, at=T + 10), now=T + 20)
    assert [r[0].type for r in results] == ["buzz_refused"] + ["buzz_repeated"] * 9
    assert store.event_count(rm.id) == count + 1  # the first press alone is an event
    refused = store.buzzes(rm.id)[-1]
    assert (refused.buzz_id, refused.outcome, refused.holder_buzz_id) == (2, "lost_race", 1)
    assert (refused.repeats, refused.last_repeat_wall) == (9, T + 19)
    assert (refused.margin, refused.received_wall) == (1.0, T + 10)  # the first press's race
    # a change made of repeats alone is committed too, and an earlier press (decided later,
    # as a compensated race may) leaves the time of the last one
    rm.handle_many(_presses(2, at=T + 30), now=T + 31)
    rm.handle_many(_presses(1, at=T + 5), now=T + 32)
    refused = store.buzzes(rm.id)[-1]
    assert (refused.repeats, refused.last_repeat_wall) == (12, T + 31)
    assert store.event_count(rm.id) == count + 1 and len(store.buzzes(rm.id)) == 2
    # a press without a receipt time counts at the time it was handled
    rm.handle(Buzz(team="blue", player="b1"), now=T + 40)
    assert store.buzzes(rm.id)[-1].last_repeat_wall == T + 40
    assert store.open(rm.id).match.state == rm.match.state  # replay is the live match


def test_the_repeats_of_several_matches_in_one_transaction_count_on_their_own_rows(store):
    first, second = _flooded(store), _flooded(store)
    batch = []
    for rm, n in ((first, 3), (second, 5)):
        _, state, events = rm.decide_many(_presses(n, at=T), now=T)
        batch.append((rm.id, events, None))
        rm.match.state = state
    store.append_many(batch)  # what the server's group writer does
    assert [store.buzzes(rm.id)[-1].repeats for rm in (first, second)] == [2, 4]
    assert [store.buzzes(rm.id)[-1].buzz_id for rm in (first, second)] == [2, 2]


def test_a_repeat_of_a_buzz_the_record_does_not_hold_stores_nothing(store):
    rm = _flooded(store)
    (refusal,) = rm.handle(_presses(1, at=T)[0], now=T)
    (repeat,) = rm.match.decide(_presses(1, at=T)[0], now=T)
    count = store.event_count(rm.id)
    with pytest.raises(RecordError, match="repeats a buzz"):
        store.append(rm.id, [repeat.model_copy(update={"buzz_id": 42})])
    words = rm.match.decide(Join(team="blue", player="b2", name="Bea"), now=T)
    with pytest.raises(RecordError, match="repeats a buzz"):  # nor the batch's other events
        store.append(rm.id, [repeat, *words, repeat.model_copy(update={"buzz_id": 42})])
    assert store.event_count(rm.id) == count and store.buzzes(rm.id)[-1].repeats == 0
    assert refusal.buzz_id == repeat.buzz_id


def test_opening_an_unknown_match_is_a_clear_error(store):
    with pytest.raises(RecordError, match="no match 42"):
        store.open(42)


def test_every_moderator_token_of_a_match_stays_valid_whatever_the_restarts(store):
    """Each server start without the old token in memory issues one more; the first stays
    valid (it used to lapse after four more)."""
    import hashlib

    rm = store.create(config(), now=0.0)
    hashes = [hashlib.sha256(f"token {i}".encode()).hexdigest() for i in range(12)]
    for h in hashes:
        store.add_moderator_token(rm.id, h)
    store.add_moderator_token(rm.id, hashes[0])  # the same token again adds nothing
    assert store.moderator_tokens(rm.id) == hashes


def test_name_keys_of_an_older_record_leave_out_what_shows_nothing(db_url):
    """Migration 0009: keys computed again; a player that looked like another one of its team
    keeps a key of its own (nothing merged), and a new join of the name finds the first."""
    from sqlmodel import Session, select

    from grace_arena.record.models import EventPlayerRow
    from grace_arena.record.store import ensure_event, register_player, register_team

    command.upgrade(alembic_config(db_url), "0008")
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO arena_event (name, title, created_at, meta) "
                    "VALUES ('ev', 'Ev', '2026-01-01', '{}')"
                )
            )
            event_id = conn.execute(text("SELECT id FROM arena_event")).scalar_one()
            conn.execute(
                text(
                    "INSERT INTO event_team (event_id, team_id, name, kind) "
                    "VALUES (:e, 'red', 'Red', 'human')"
                ),
                {"e": event_id},
            )
            for pid, name, key in (
                ("p1", "Alice", "alice"),
                ("p2", "Al\u200bice", "al\u200bice"),
                ("p3", "Bo\u2060", "bo\u2060"),
                ("p4", "Cy", "cy"),
                ("p5", "Cy\u200b", "cy#p5"),  # a key of its own already
            ):
                conn.execute(
                    text(
                        "INSERT INTO event_player (event_id, player_id, team_id, name, kind, "
                        "name_key) VALUES (:e, :p, 'red', :n, 'human', :k)"
                    ),
                    {"e": event_id, "p": pid, "n": name, "k": key},
                )
        upgrade(db_url)
        with Session(engine) as session:
            keys = {row.player_id: row.name_key for row in session.exec(select(EventPlayerRow))}
            assert keys == {"p1": "alice", "p2": "alice#p2", "p3": "bo", "p4": "cy", "p5": "cy#p5"}
            ensure_event(session, "ev")
            register_team(session, event_id, team_id="red", name="Red", kind="human", model=None)
            found = register_player(
                session, event_id, player_id="p9", team_id="red", name="Al\u2060ice", kind="human"
            )
            assert found == "p1"
    finally:
        engine.dispose()
