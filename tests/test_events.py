"""Events: many matches and imported pooled buzzpoints as one body of data.

GRACE's public buzzpoints pool every room's buzzes per tossup (a dozen teams, several correct,
several on one word). They are kept whole as pooled buzzes of an event; matches played here
belong to events too, and the analysis pools per tossup every match that heard it.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy
from backends import on_both_backends
from sqlalchemy.engine import make_url
from sqlmodel import Session, func, select
from typer.testing import CliRunner

from grace_arena.analysis.summary import analyze, human_fraction_column, natural_key
from grace_arena.cli import app
from grace_arena.core.commands import Buzz, Join, Reveal, Rule, StartTossup
from grace_arena.core.config import ScoringRules, TeamKind, TeamSpec
from grace_arena.core.events import Ruling
from grace_arena.core.specs import match_config
from grace_arena.io.exports import export
from grace_arena.io.imports import import_grace
from grace_arena.io.record_io import load_record, load_record_data
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.models import (
    ArenaEventRow,
    BuzzRow,
    EventImportRow,
    EventPlayerRow,
    EventTeamRow,
    MatchRow,
    ModelBonusPartRow,
    ModelStepRow,
    PacketRow,
    PooledBuzzRow,
)
from grace_arena.record.store import MatchStore, RecordError

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
PACKET3 = SHARED / "grace_packet3_buzzpoints.json"
PACKET1 = SHARED / "grace_packet1_buzzpoints.json"
OLD_RECORD = Path(__file__).parent / "fixtures" / "records" / "record_0003.db"
needs_shared = pytest.mark.skipif(
    not (PACKET3.exists() and PACKET1.exists()), reason="../shared/data is not here"
)

CLUED = (
    "One two three (*) four five. Six seven ('SEV-en') eight nine ten. "
    "Eleven twelve thirteen fourteen fifteen."
)


def _hard_file(tmp_path: Path, *, extra: list | None = None, name: str = "pooled.json") -> Path:
    """A pooled file with the hard cases: a dozen buzzes on one word, correct buzzes after
    correct buzzes, a buzz on the first and on the last word, markers that are not words."""
    words = CLUED.split()
    last = len(words) - 1
    dozen = [{str(last): f"[H{i}, {'+' if i % 3 else '-'}]"} for i in range(1, 13)]
    data = [
        {
            "tossup_index": 7,
            "category": "Physics",
            "question": CLUED,
            "answer": "counting",
            "question_buzzpoints": CLUED,
            "position": [
                {"0": "[H13, -]"},
                {"3": "[M1, +]"},  # "(*)": heard as "three"
                {"4": "[H1, +]"},
                {"4": "[H2, +]"},  # a correct buzz after a correct buzz, same word
                {"8": "[M2, -]"},  # "('SEV-en')": heard as "seven"
                *dozen,
            ],
        },
        {
            "tossup_index": 8,
            "category": "Euro Lit",
            "question": "Name this novel. Its hero is a whale hunter.",
            "answer": "Moby-Dick",
            "question_buzzpoints": "",
            "position": extra or [],
        },
    ]
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=1))
    return path


def _count(engine, table) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(table)).one()


# ---------------------------------------------------------------------------------------
# Import: every buzzpoint kept, all or nothing, idempotent, exact round trip
# ---------------------------------------------------------------------------------------


@on_both_backends
def test_a_pooled_file_keeps_every_buzzpoint(store: MatchStore, tmp_path: Path) -> None:
    path = _hard_file(tmp_path)
    result = import_grace(store.engine, path, event="study")
    assert (result.tossups, result.buzzes) == (2, 17)
    with Session(store.engine) as session:
        rows = session.exec(select(PooledBuzzRow).order_by(PooledBuzzRow.id)).all()
        teams = session.exec(select(EventTeamRow)).all()
    assert len(rows) == 17
    assert [(r.team_id, r.word_index, r.correct) for r in rows[:5]] == [
        ("H13", 0, False),
        ("M1", 2, True),  # GRACE word 3 is "(*)", heard as our word 2 ("three")
        ("H1", 3, True),
        ("H2", 3, True),
        ("M2", 6, False),  # GRACE word 8 is the pronunciation guide after our word 6
    ]
    last = rows[-1]
    assert last.word_index == 14 and last.fraction_revealed == 1.0 and last.clue_index == 2
    assert rows[1].clue_index == 0 and rows[4].clue_index == 1
    assert sum(r.word_index == 14 for r in rows) == 12
    assert {t.team_id: t.kind for t in teams} == {
        **{f"H{i}": "human" for i in range(1, 14)},
        "M1": "model",
        "M2": "model",
    }
    assert store.matches() == []  # pooled data is not a match


@on_both_backends
def test_a_second_import_changes_nothing(store: MatchStore, tmp_path: Path) -> None:
    path = _hard_file(tmp_path)
    import_grace(store.engine, path, event="study")
    again = import_grace(store.engine, [path, path], event="study")
    assert again.buzzes == 0 and "already imported" in again.skipped[0]
    assert _count(store.engine, PooledBuzzRow) == 17
    assert _count(store.engine, EventImportRow) == 1
    # into another event it is another body of data
    other = import_grace(store.engine, path, event="replication")
    assert other.buzzes == 17 and _count(store.engine, PooledBuzzRow) == 34
    assert _count(store.engine, PacketRow) == 1


@on_both_backends
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"-1": "[H1, +]"}, "word -1 is outside the question"),
        ({"99": "[H1, +]"}, r"word 99 is outside the question \(words 0..8\)"),
        ({"2": "[X1, +]"}, "unknown team mark 'X1'"),
        ({"2": "[H1 +]"}, "position must look like"),
        ({"2": "[H1, +]", "3": "[H2, -]"}, "one-key object"),
    ],
)
def test_a_bad_buzzpoint_is_named_and_nothing_is_written(
    store: MatchStore, tmp_path: Path, bad: dict, message: str
) -> None:
    good = _hard_file(tmp_path, name="good.json")
    path = _hard_file(tmp_path, extra=[{"1": "[H1, +]"}, bad], name="bad.json")
    with pytest.raises(ValueError, match=message) as caught:
        import_grace(store.engine, [good, path], event="study")
    text = str(caught.value)
    assert "bad.json" in text and "tossup 8 (#2)" in text and "position 2" in text
    for table in (PooledBuzzRow, EventImportRow, PacketRow, EventTeamRow, ArenaEventRow):
        assert _count(store.engine, table) == 0, table


@on_both_backends
def test_a_malformed_grace_file_writes_nothing(store: MatchStore, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    for content, message in (
        (json.dumps({"not": "a list"}), "not GRACE buzzpoints"),
        ("[{", "not JSON"),
        (json.dumps([{"tossup_index": 1}]), "tossup #1 has no 'question'"),
    ):
        path.write_text(content)
        with pytest.raises(ValueError, match=message):
            import_grace(store.engine, path)
    assert _count(store.engine, ArenaEventRow) == 0


@on_both_backends
def test_a_team_cannot_change_kind_within_an_event(store: MatchStore, tmp_path: Path) -> None:
    import_grace(store.engine, _hard_file(tmp_path, name="a.json"), event="study")
    path = _hard_file(tmp_path, extra=[{"1": "[M1, +]"}], name="b.json")
    data = json.loads(path.read_text())
    data[0]["position"] = [{"1": "[M13, +]"}]  # fine: a new model team
    data[1]["tossup_index"] = 9
    path.write_text(json.dumps(data))
    import_grace(store.engine, path, event="study")  # M1 and M13 are models in both files
    clash = tmp_path / "clash.json"
    data[0]["position"] = [{"1": "[H1, +]"}]
    clash.write_text(json.dumps(data).replace("Name this novel", "Name this book"))
    import_grace(store.engine, clash, event="study")  # H1 stays human: fine
    assert _count(store.engine, EventImportRow) == 3


@on_both_backends
def test_the_round_trip_is_exact(store: MatchStore, tmp_path: Path) -> None:
    path = _hard_file(tmp_path)
    import_grace(store.engine, path, event="study")
    out = tmp_path / "back.json"
    export(store.engine, "grace", out, events=["study"])
    assert json.loads(out.read_text()) == json.loads(path.read_text())


@needs_shared
def test_both_shared_packets_round_trip_with_every_buzzpoint(
    store: MatchStore, tmp_path: Path
) -> None:
    result = import_grace(store.engine, [PACKET3, PACKET1])
    assert [(p, t, b) for _, p, t, b in result.per_file] == [
        ("grace_packet3_buzzpoints", 20, 207),
        ("grace_packet1_buzzpoints", 20, 20),
    ]
    assert _count(store.engine, PooledBuzzRow) == 227
    export(store.engine, "grace", tmp_path / "out", events=["grace"])
    for original in (PACKET3, PACKET1):
        back = json.loads((tmp_path / "out" / original.name).read_text())
        assert back == json.loads(original.read_text())
    # H3 of packet 3 and H9 of packet 1 are teams of one event, across both files
    assert len(store.event_teams(store.find_events(["grace"])[0].id)) == 19


def test_export_maps_words_when_the_files_positions_are_not_kept(
    store: MatchStore, tmp_path: Path
) -> None:
    path = _hard_file(tmp_path)
    import_grace(store.engine, path, event="study")
    with Session(store.engine) as session:
        for row in session.exec(select(PooledBuzzRow)).all():
            row.source_word_index = None
            session.add(row)
        session.commit()
    out = tmp_path / "g.json"
    export(store.engine, "grace", out, events=["study"])
    words = [next(iter(p)) for p in json.loads(out.read_text())[0]["position"]]
    # our word -> the first whitespace token holding it: "(*)" and the guide map back to
    # the word they follow
    assert words[:5] == ["0", "2", "4", "4", "7"]


# ---------------------------------------------------------------------------------------
# Analysis over an event: pooled h_t, figure 4, natural order, notes
# ---------------------------------------------------------------------------------------


def _r(x: float) -> float:
    def s(v: float) -> float:
        return 1.0 / (1.0 + math.exp(-v))

    return (s(x) - s(-1.0)) / (s(1.0) - s(-1.0))


def _small_event(store: MatchStore, tmp_path: Path) -> None:
    """One tossup of 15 words in 3 clues (ends at words 4, 9, 14); human buzzes H1 + at 3,
    H2 − at 6, H3 + and H4 + at 9, model M1 + at 4; model steps at the three clue ends."""
    data = [
        {
            "tossup_index": 1,
            "category": "Science",
            "question": "One two three four five. Six seven eight nine ten. "
            "Eleven twelve thirteen fourteen fifteen.",
            "answer": "counting",
            "question_buzzpoints": "",
            "position": [{"3": "[H1, +]"}, {"4": "[M1, +]"}, {"6": "[H2, -]"},
                         {"9": "[H3, +]"}, {"9": "[H4, +]"}],
        }
    ]  # fmt: skip
    path = tmp_path / "small.json"
    path.write_text(json.dumps(data))
    import_grace(store.engine, path, event="small")
    with Session(store.engine) as session:
        for step, (word, conf, ok) in enumerate([(4, 0.2, False), (9, 0.6, True), (14, 0.9, True)]):
            session.add(
                ModelStepRow(
                    model="m", packet_id="small", tossup_id="1", step=step, word_index=word,
                    guess="x", confidence_logit=conf, confidence_verbal=conf, correct=ok,
                )
            )  # fmt: skip
        session.commit()


def test_pooled_h_t_and_calscore_by_hand(store: MatchStore, tmp_path: Path) -> None:
    _small_event(store, tmp_path)
    steps, buzzes, _ = load_record(store.engine, events=["small"])
    assert len(steps) == 3 and len(buzzes) == 5
    # reference: teams whose latest buzz so far is correct / 4 human buzzes
    ref = human_fraction_column(steps, buzzes)
    np.testing.assert_allclose(ref, [1 / 4, 3 / 4, 3 / 4])
    # paper: correct human buzzes so far / human buzzes so far
    paper = human_fraction_column(steps, buzzes, definition="paper")
    np.testing.assert_allclose(paper, [1 / 1, 3 / 4, 3 / 4])
    # CalScore = 1 − r(mean_t[(1 − h_t) g±_t c_t]), g± = (−1, +1, +1), c = (0.2, 0.6, 0.9)
    by_ref = 1 - _r(((1 - 0.25) * -0.2 + 0.25 * 0.6 + 0.25 * 0.9) / 3)
    by_paper = 1 - _r(((1 - 1.0) * -0.2 + 0.25 * 0.6 + 0.25 * 0.9) / 3)
    for definition, expected in (("reference", by_ref), ("paper", by_paper)):
        result = analyze(steps, buzzes, n_resamples=0, h_definition=definition)
        assert result["models"]["m"]["logit"]["calscore"] == pytest.approx(expected)
        assert result["settings"]["h_definition"] == definition
    assert not analyze(steps, buzzes, n_resamples=0)["notes"]


def _play(store: MatchStore, sample, event: str, teams: list[TeamSpec], plan) -> int:
    """A match of the sample packet in ``event``: ``plan`` lists (tossup, [(team, word,
    correct)]) played in order."""
    config = match_config(
        sample, teams, rules=ScoringRules(answer_time=None, buzz_window=0.0), title=event
    )
    now = 1000.0
    rm = store.create(config, now=now, event=event)
    for team in teams:
        if team.kind is TeamKind.HUMAN:
            rm.handle(
                Join(team=team.id, player=f"{team.id}-p", name=f"{team.name} player"), now=now
            )
    for tossup, buzzes in plan:
        rm.handle(StartTossup(tossup_id=tossup), now=now)
        for team, word, correct in buzzes:
            rm.handle(Reveal(to=word), now=now)
            rm.handle(Buzz(team=team, player=f"{team}-p"), now=now)
            rm.handle(Rule(ruling=Ruling.CORRECT if correct else Ruling.INCORRECT), now=now)
    return rm.id


@on_both_backends
def test_matches_of_an_event_pool_per_tossup_and_keep_team_identity(
    store: MatchStore, sample
) -> None:
    store.save_packet(sample)
    t = sample.tossups[0].id
    red, blue, green = (TeamSpec(id=c, name=c.title()) for c in ("red", "blue", "green"))
    m1 = _play(store, sample, "club", [red, blue], [(t, [("blue", 5, False), ("red", 9, True)])])
    m2 = _play(store, sample, "club", [red, green], [(t, [("green", 3, True)])])
    lone = _play(store, sample, "elsewhere", [red], [(t, [("red", 1, True)])])
    data = load_record_data(store.engine, events=["club"])
    assert sorted(m.id for m in data.matches) == [m1, m2] and data.events == ["club"]
    assert data.normalised_by == "matches played"
    result = analyze(data, n_resamples=0)
    assert result["teams"]["Red"]["matches_played"] == 2
    assert result["teams"]["Red"]["questions_heard"] == 2
    # all three buzzes of the event are on the tossup's pooled list, one per team-match
    q = f"{sample.packet.id}/{t}"
    assert sorted(data.buzzes.team[data.buzzes.question_id == q].tolist()) == [
        "Blue",
        "Green",
        "Red",
    ]
    # the event's Red and the other event's Red are different teams
    everything = analyze(load_record_data(store.engine), n_resamples=0)
    assert {"Red (club)", "Red (elsewhere)", "Blue", "Green"} <= set(everything["teams"])
    with Session(store.engine) as session:
        row = session.get(MatchRow, lone)
        event = session.get(ArenaEventRow, row.event_id)
        players = session.exec(select(EventPlayerRow).where(EventPlayerRow.event_id == event.id))
        assert event.name == "elsewhere" and [p.name for p in players] == ["Red player"]
    with pytest.raises(RecordError, match="no event 'nope'"):
        load_record(store.engine, events=["nope"])


def test_a_match_created_alone_gets_an_event_of_its_own(store: MatchStore, sample) -> None:
    config = match_config(sample, [TeamSpec(id="a", name="A")], title="Solo")
    rm = store.create(config, now=0.0)
    (event,) = store.events_of_record()
    assert event.name == f"match-{rm.id}" and event.title == "Solo"
    assert [t.team_id for t in store.event_teams(event.id)] == ["a"]
    bot = TeamSpec(id="a", name="A", kind=TeamKind.MODEL, model="tfidf")
    with pytest.raises(RecordError, match="registered in this event as a human team"):
        store.create(match_config(sample, [bot], title="Clash"), now=0.0, event=event.name)


@needs_shared
def test_figure_4_of_grace_packet_3(store: MatchStore) -> None:
    import_grace(store.engine, PACKET3)
    data = load_record_data(store.engine, events=["grace"])
    assert data.n_pooled == 207 and data.normalised_by == "tossups heard"
    result = analyze(data, n_resamples=0)
    assert list(result["teams"]) == sorted(result["teams"], key=natural_key)
    assert list(result["teams"])[:3] == ["H1", "H2", "H3"]
    fig = result["curves"]["figure4"]
    assert fig["normalised_by"] == "tossups heard"
    groups = fig["groups"]
    assert list(groups) == ["Q1", "Q2", "Q3", "Q4", "M1", "M2", "M3"]
    humans = [t for g in ("Q1", "Q2", "Q3", "Q4") for t in groups[g]["teams"]]
    assert sorted(humans, key=natural_key) == [t for t, v in result["teams"].items()
                                               if v["kind"] == "human"]  # fmt: skip
    totals = [sum(groups[g]["correct_buzzes"]) / len(groups[g]["teams"]) for g in groups
              if g.startswith("Q")]  # fmt: skip
    assert totals == sorted(totals, reverse=True)  # Q1: the most correct buzzes
    # the end of each human curve is the group's correct buzzes per tossup heard
    q1 = groups["Q1"]
    per_team = [result["teams"][t]["correct"] / 20 for t in q1["teams"]]
    assert q1["correct"][-1] == pytest.approx(np.mean(per_team))
    assert result["notes"] and "no model steps" in result["notes"][0]


@on_both_backends
def test_analyze_and_export_commands_take_an_event(db_url: str, tmp_path: Path) -> None:
    path = _hard_file(tmp_path)
    runner = CliRunner()
    done = runner.invoke(app, ["import", "grace", str(path), "--db", db_url, "--event", "study"])
    assert done.exit_code == 0, done.output
    assert "2 tossups, 17 buzzpoints" in done.output
    bad = _hard_file(tmp_path, extra=[{"40": "[H1, +]"}], name="bad.json")
    failed = runner.invoke(app, ["import", "grace", str(bad), "--db", db_url, "--event", "x"])
    assert failed.exit_code == 1 and "bad.json: tossup 8 (#2): position 1" in failed.output
    assert "nothing was imported" in failed.output
    out = runner.invoke(
        app,
        ["analyze", "--db", db_url, "--event", "study", "--resamples", "0", "--report",
         str(tmp_path / "report")],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "GRACE fig. 4" in out.output and "no model steps" in out.output
    report = (tmp_path / "report" / "report.md").read_text()
    assert "What this data can and cannot show" in report and "It cannot show" in report
    assert (tmp_path / "report" / "buzz_rates.png").stat().st_size > 10_000
    wrong = runner.invoke(app, ["analyze", "--db", db_url, "--event", "nope"])
    assert wrong.exit_code == 1 and "no event 'nope'" in wrong.output
    paper = runner.invoke(app, ["analyze", "--db", db_url, "--h", "paper", "--json",
                                str(tmp_path / "a.json"), "--resamples", "0"])  # fmt: skip
    assert paper.exit_code == 0, paper.output
    assert json.loads((tmp_path / "a.json").read_text())["settings"]["h_definition"] == "paper"
    exported = runner.invoke(
        app, ["export", "--db", db_url, "--event", "study", "--format", "grace", "--out",
              str(tmp_path / "x.json")]
    )  # fmt: skip
    assert exported.exit_code == 0, exported.output
    assert json.loads((tmp_path / "x.json").read_text()) == json.loads(path.read_text())


# ---------------------------------------------------------------------------------------
# A record written before events existed
# ---------------------------------------------------------------------------------------


def _old_record_at(url: str) -> None:
    """The record of migration 0003 (before events) at ``url``: a copy of the file on SQLite;
    on a server, the schema of 0003 and the file's rows (ids kept, sequences moved past them)."""
    if make_url(url).get_backend_name() == "sqlite":
        shutil.copy(OLD_RECORD, str(make_url(url).database))
        return
    upgrade(url, "0003")
    source = sqlalchemy.create_engine(f"sqlite:///file:{OLD_RECORD}?mode=ro&uri=true")
    target = make_engine(url)
    theirs, ours = sqlalchemy.MetaData(), sqlalchemy.MetaData()
    theirs.reflect(source)
    ours.reflect(target)
    with source.connect() as read, target.begin() as write:
        for table in ours.sorted_tables:
            if table.name == "alembic_version":
                continue
            rows = [dict(r._mapping) for r in read.execute(theirs.tables[table.name].select())]
            if rows:
                write.execute(table.insert(), rows)
            if "id" in table.c and isinstance(table.c.id.type, sqlalchemy.Integer):
                write.exec_driver_sql(
                    f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), max(id)) "
                    f'FROM "{table.name}"'
                )
    source.dispose()
    target.dispose()


@on_both_backends
def test_an_old_record_migrates_with_an_event_per_match(db_url: str, tmp_path: Path) -> None:
    _old_record_at(db_url)
    url = db_url
    engine = make_engine(url)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == "0003"
        before = conn.exec_driver_sql("SELECT count(*) FROM buzz").scalar()
    engine.dispose()
    upgrade(url)
    engine = make_engine(url)
    store = MatchStore(engine)
    events = store.events_of_record()
    matches = store.matches()
    assert [e.name for e in events] == ["match-1", "match-2"]
    assert [m.event_id for m in matches] == [e.id for e in events]
    assert events[0].title == matches[0].title == "Demo match"
    assert all("created_for_match" in e.meta for e in events)  # read as before events
    assert {t.team_id for t in store.event_teams(events[1].id)} == {"M1", "H9"}
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(EventPlayerRow)).one() == 4
        # its buzzes were stored before refused presses were counted: none repeated
        counts = {(b.repeats, b.last_repeat_wall) for b in session.exec(select(BuzzRow))}
        assert counts == {(0, None)}
    _steps, buzzes, infos = load_record(engine)
    assert len(infos) == 2 and len(buzzes) > 0 and before == 25
    # the old GRACE import (a replayed match) still exports as the file it came from
    if PACKET1.exists():
        export(engine, "grace", tmp_path / "p1.json", [2])
        assert json.loads((tmp_path / "p1.json").read_text()) == json.loads(PACKET1.read_text())
    # a new match in the migrated record gets its own event
    import_grace(engine, _hard_file(tmp_path), event="study")
    assert [e.name for e in store.events_of_record()] == ["match-1", "match-2", "study"]
    engine.dispose()


# ---------------------------------------------------------------------------------------
# Two records, one event
# ---------------------------------------------------------------------------------------


def _record(where: Path | str) -> MatchStore:
    """A migrated record: a SQLite file, or a database URL."""
    url = where if isinstance(where, str) else f"sqlite:///{where}"
    upgrade(url)
    return MatchStore(make_engine(url))


def test_two_sites_merge_into_one_event(record_url: str, tmp_path: Path, sample) -> None:
    """Site A's record on each backend; site B's a SQLite file, merged into A and back."""
    from grace_arena.record.merge import merge_record

    pooled = _hard_file(tmp_path)
    t = sample.tossups[0].id
    red, blue, green = (TeamSpec(id=c, name=c.title()) for c in ("red", "blue", "green"))
    site_a, site_b = _record(record_url), _record(tmp_path / "b.db")
    for site in (site_a, site_b):
        site.save_packet(sample)
        import_grace(site.engine, pooled, event="comp")
    _play(site_a, sample, "comp", [red, blue], [(t, [("red", 4, True)])])
    _play(site_b, sample, "site-b", [red, green], [(t, [("green", 2, False), ("red", 6, True)])])
    with Session(site_b.engine) as session:
        session.add(ModelStepRow(model="m", packet_id=sample.packet.id, tossup_id=t, step=0,
                                 word_index=5, confidence_logit=0.5, correct=True))  # fmt: skip
        session.add(ModelBonusPartRow(model="m", packet_id=sample.packet.id,
                                      bonus_id=sample.bonuses[0].id, part=0, guess="Twain",
                                      confidence_logit=0.7, correct=True))  # fmt: skip
        session.commit()

    merged = merge_record(site_a.engine, site_b.engine, event="comp")
    assert len(merged.matches) == 1 and merged.skipped_imports == 1 and merged.model_steps == 1
    assert merged.model_bonus_parts == 1  # the models' answers to bonus parts come along
    again = merge_record(site_a.engine, site_b.engine, event="comp")
    assert (again.matches, again.imports, again.model_steps) == ([], 0, 0)
    assert again.model_bonus_parts == 0
    assert again.skipped_matches == 1

    data = load_record_data(site_a.engine, events=["comp"])
    assert len(data.matches) == 2 and data.n_pooled == 17  # the shared file counted once
    result = analyze(data, n_resamples=0)
    assert result["teams"]["Red"]["matches_played"] == 2  # one team at both sites
    assert result["teams"]["Red"]["correct"] == 2 and result["teams"]["Green"]["incorrect"] == 1
    # every event, buzz and ruling came over: the merged match replays to the same state
    (ours,) = [m for m in site_a.matches() if m.source == "record"]
    replayed = site_a.open(ours.id).match
    original = site_b.open(site_b.matches()[0].id).match
    assert replayed.scores == original.scores and replayed.scores["green"] == -5

    # a record holding the first one's matches adds nothing when merged back
    back = merge_record(site_b.engine, site_a.engine, event="site-b")
    assert back.skipped_matches == 1 and len(back.matches) == 1

    # a team that is human at one site and a model at the other: nothing is written
    bot = TeamSpec(id="blue", name="Blue", kind=TeamKind.MODEL, model="tfidf")
    site_c = _record(tmp_path / "c.db")
    site_c.save_packet(sample)
    _play(site_c, sample, "x", [bot], [])
    before = len(site_a.matches())
    with pytest.raises(RecordError, match="'blue' is registered in this event as a human"):
        merge_record(site_a.engine, site_c.engine, event="comp")
    assert len(site_a.matches()) == before


def test_import_record_command(record_url: str, tmp_path: Path, sample) -> None:
    site_b = _record(tmp_path / "b.db")
    site_b.save_packet(sample)
    red = TeamSpec(id="red", name="Red")
    _play(site_b, sample, "night", [red], [(sample.tossups[0].id, [("red", 3, True)])])
    url = record_url
    runner = CliRunner()
    args = ["import", "record", str(tmp_path / "b.db"), "--event", "all", "--db", url]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "1 match(es)" in first.output and "their match 1 is match 1 here" in first.output
    second = runner.invoke(app, args)
    assert "already here: 1 match(es)" in second.output
    missing = runner.invoke(app, ["import", "record", str(tmp_path / "nope.db"), "--event", "x"])
    assert missing.exit_code == 1 and "no record at" in missing.output


@on_both_backends
def test_matches_on_their_own_read_as_before_events(store: MatchStore, sample) -> None:
    """Matches created without an event (the server's and the demo's, and every match of a
    migrated record) are taken together by team name, as before events existed."""
    t = sample.tossups[0].id
    red, blue = TeamSpec(id="red", name="Red"), TeamSpec(id="blue", name="Blue")
    config = match_config(sample, [red, blue], rules=ScoringRules(answer_time=None), title="A")
    for _ in range(2):
        rm = store.create(config, now=0.0)
        rm.handle(Join(team="red", player="r", name="R"), now=0.0)
        rm.handle(StartTossup(tossup_id=t), now=0.0)
        rm.handle(Reveal(to=4), now=0.0)
        rm.handle(Buzz(team="red", player="r"), now=0.0)
        rm.handle(Rule(ruling=Ruling.CORRECT), now=0.0)
    result = analyze(load_record_data(store.engine), n_resamples=0)
    assert set(result["teams"]) == {"Red", "Blue"}
    assert result["teams"]["Red"]["matches_played"] == 2
    assert result["teams"]["Red"]["correct"] == 2
    _play(store, sample, "club", [red], [(t, [("red", 2, True)])])
    labels = set(analyze(load_record_data(store.engine), n_resamples=0)["teams"])
    assert labels == {"Red (own matches)", "Red (club)", "Blue"}


def test_a_match_merged_while_in_progress_is_brought_up_to_date(
    record_url: str, tmp_path: Path, sample
) -> None:
    from grace_arena.record.merge import merge_record

    site_a, site_b = _record(record_url), _record(tmp_path / "b.db")
    site_b.save_packet(sample)
    red = TeamSpec(id="red", name="Red")
    config = match_config(sample, [red], rules=ScoringRules(answer_time=None), title="Live")
    rm = site_b.create(config, now=0.0, event="night")
    rm.handle(Join(team="red", player="r", name="R"), now=0.0)
    first, second = sample.tossups[0].id, sample.tossups[1].id
    for tossup in (first, second):
        rm.handle(StartTossup(tossup_id=tossup), now=1.0)
        rm.handle(Reveal(to=3), now=1.0)
        rm.handle(Buzz(team="red", player="r"), now=1.0)
        rm.handle(Rule(ruling=Ruling.CORRECT), now=1.0)
        merged = merge_record(site_a.engine, site_b.engine, event="comp")
        if tossup == first:
            assert len(merged.matches) == 1 and not merged.updated
        else:
            assert merged.matches == [] and len(merged.updated) == 1
    assert len(site_a.matches()) == 1
    _, buzzes, _ = load_record(site_a.engine, events=["comp"])
    assert len(buzzes) == 2  # not three: the copy was refilled, not duplicated
    assert site_a.open(site_a.matches()[0].id).match.scores == rm.match.scores
    # presses that add to a refusal's count and store no event bring the copy up to date too
    rm.handle(Buzz(team="red", player="r"), now=2.0)  # no tossup live: refused, an event
    assert len(merge_record(site_a.engine, site_b.engine, event="comp").updated) == 1
    rm.handle(Buzz(team="red", player="r"), now=3.0)  # the same refusal again: counted
    assert len(merge_record(site_a.engine, site_b.engine, event="comp").updated) == 1
    refused = site_a.buzzes(site_a.matches()[0].id)[-1]
    assert (refused.outcome, refused.repeats, refused.last_repeat_wall) == ("not_live", 1, 3.0)
    again = merge_record(site_a.engine, site_b.engine, event="comp")
    assert (again.matches, again.updated, again.skipped_matches) == ([], [], 1)


def test_a_record_is_not_merged_into_itself(tmp_path: Path, monkeypatch) -> None:
    from grace_arena.record.merge import merge_record

    site = _record(tmp_path / "self.db")
    with pytest.raises(RecordError, match="that is this record"):
        merge_record(site.engine, make_engine(f"sqlite:///{tmp_path / 'self.db'}"), event="x")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRACE_ARENA_DB", "sqlite:///self.db")
    runner = CliRunner()
    out = runner.invoke(app, ["import", "record", "self.db", "--event", "x"])
    assert out.exit_code == 1 and "that is this record" in out.output
    typo = runner.invoke(app, ["import", "record", f"sqlite:///{tmp_path / 'nope.db'}",
                               "--event", "x"])  # fmt: skip
    assert typo.exit_code == 1 and "no record at" in typo.output
    assert not (tmp_path / "nope.db").exists()


def test_a_server_record_is_not_merged_into_itself_under_another_url(
    postgres_url: str, sample
) -> None:
    """One PostgreSQL database reached by two URLs that differ (here in an option) is one
    record: merging it into itself would copy every match again."""
    from grace_arena.record.merge import merge_record

    site = _record(postgres_url)
    site.save_packet(sample)
    _play(site, sample, "night", [TeamSpec(id="red", name="Red")], [])
    spelled = make_url(postgres_url).update_query_dict({"application_name": "site-b"})
    other = make_engine(spelled.render_as_string(hide_password=False))
    with pytest.raises(RecordError, match="that is this record"):
        merge_record(site.engine, other, event="night-again")
    assert len(site.matches()) == 1
    other.dispose()
    site.engine.dispose()


@on_both_backends
def test_an_event_name_too_long_for_the_record_is_refused_clearly(
    db_url: str, store: MatchStore, tmp_path: Path
) -> None:
    """PostgreSQL keeps an event's name to 100 characters where SQLite would take more: the
    name is refused alike on both, saying so, and nothing is written."""
    from grace_arena.record.merge import merge_record

    long = "x" * 101
    args = ["import", "grace", str(_hard_file(tmp_path)), "--event", long, "--db", db_url]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 1 and "at most 100 characters" in out.output, out.output
    with pytest.raises(RecordError, match="at most 100 characters"):
        merge_record(store.engine, _record(tmp_path / "other.db").engine, event=long)
    assert store.events_of_record() == []
    import_grace(store.engine, _hard_file(tmp_path), event="x" * 100)  # at the limit: fine


def test_a_file_without_buzzpoints_round_trips(store: MatchStore, tmp_path: Path) -> None:
    path = tmp_path / "quiet.json"
    data = json.loads(_hard_file(tmp_path).read_text())
    for entry in data:
        entry["position"] = []
    path.write_text(json.dumps(data))
    assert import_grace(store.engine, path, event="quiet").buzzes == 0
    export(store.engine, "grace", tmp_path / "back.json", events=["quiet"])
    assert json.loads((tmp_path / "back.json").read_text()) == data


def test_precompute_takes_a_grace_file_and_calscore_uses_its_pooled_buzzes(
    db_url: str, tmp_path: Path, private_cache
) -> None:
    path = _hard_file(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["import", "grace", str(path), "--db", db_url]).exit_code == 0
    done = runner.invoke(app, ["precompute", "--packet", str(path), "--db", db_url])
    assert done.exit_code == 0, done.output
    data = load_record_data(make_engine(db_url), events=["grace"])
    assert len(data.steps) > 0 and set(data.steps.question_id) <= set(data.buzzes.question_id)
    result = analyze(data, n_resamples=0)
    assert result["models"] and not result["notes"]
    h = human_fraction_column(data.steps, data.buzzes)
    assert (h > 0).any()  # the pooled human buzzes reach the model's steps


def test_merging_an_old_record_reads_it_without_changing_it(
    record_url: str, tmp_path: Path
) -> None:
    import hashlib

    old = tmp_path / "old.db"
    shutil.copy(OLD_RECORD, old)
    before = hashlib.sha256(old.read_bytes()).hexdigest()
    url = record_url
    runner = CliRunner()
    out = runner.invoke(app, ["import", "record", str(old), "--event", "old", "--db", url])
    assert out.exit_code == 0, out.output
    assert "2 match(es)" in out.output
    assert hashlib.sha256(old.read_bytes()).hexdigest() == before
    again = runner.invoke(app, ["import", "record", str(old), "--event", "old", "--db", url])
    assert "already here: 2 match(es)" in again.output
