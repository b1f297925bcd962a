"""What the analysis' tables, report and exports say of an event with two model teams of one
model at two thresholds (``--model-team tfidf@0.5=Robo --model-team tfidf@0.9=Careful``),
two human teams, a player whose every press lost a race, and a prompt.

The event is made as ``grace-arena event create`` makes it (:func:`event_helpers.make_event`)
and each scheduled match is played through the record's own match API, its model teams built
as the server builds them (the precomputed steps, each team's buzz policy).
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from event_helpers import make_event
from sqlmodel import Session, select
from typer.testing import CliRunner

from grace_arena.analysis import analyze, load
from grace_arena.analysis.frames import read_buzzes
from grace_arena.cli import app
from grace_arena.core.commands import Buzz, EndMatch, Join, Reveal, Rule, StartTossup, TimeUp
from grace_arena.core.config import ScoringRules, TeamSpec
from grace_arena.core.events import Ruling
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.phases import Phase
from grace_arena.core.specs import match_config
from grace_arena.model.policy import BuzzPolicy, model_team
from grace_arena.record.db import make_engine
from grace_arena.record.models import BuzzRow, MatchRow
from grace_arena.record.schedule import TeamEntry
from grace_arena.record.store import MatchStore

TEAMS = [
    TeamEntry("red", "Red"),
    TeamEntry("blue", "Blue"),
    TeamEntry("robo", "Robo", "model", "tfidf", 0.5),
    TeamEntry("careful", "Careful", "model", "tfidf", 0.9),
]
THRESHOLDS = {"Robo": 0.5, "Careful": 0.9}


def _play(db_url: str) -> None:
    """Two rounds on six tossups of the sample packet, and a match of the two model teams
    against each other. In each match each human team's Ann
    buzzes at the fourth word of a tossup (the first for one team, the second for the
    other), her teammate Lee presses just after (he loses the race: his only kind of press),
    Ann is prompted and then ruled wrong; the reading goes on, and every model buzz is ruled
    as the judge suggests."""
    plan = make_event(db_url, teams=TEAMS, rounds=2, tossups=6, rooms=("1",))
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    store = MatchStore(engine)
    clock = [1_700_000_000.0]

    def now() -> float:
        clock[0] += 1.0
        return clock[0]

    def model_spec(t: TeamEntry) -> TeamSpec:
        """A model team as the server builds it: its buzzes from its own policy."""
        assert t.model is not None and t.threshold is not None
        policy = BuzzPolicy(threshold=t.threshold)
        spec = model_team(engine, t.model, packet, policy, team_id=t.id, name=t.name)
        return spec.model_copy(update={"confidence": "logit", "threshold": t.threshold})

    games = [(g.id, g.round, list(g.teams)) for g in plan.games if not g.bye]
    # and a match of the two model teams (the event's schedule pairs humans with models)
    games.append((None, 1, ["robo", "careful"]))
    follow_ons = 0  # a model buzzing at once on the word where the other was ruled wrong
    for game_id, round_number, team_ids in games:
        specs = []
        for team_id in team_ids:
            t = next(t for t in TEAMS if t.id == team_id)
            specs.append(model_spec(t) if t.kind == "model" else TeamSpec(id=t.id, name=t.name))
        rnd = plan.round_(round_number)
        assert rnd is not None and rnd.tossup_ids is not None
        config = match_config(
            packet, specs, rules=ScoringRules(answer_time=None, buzz_window=0.0),
            tossup_ids=list(rnd.tossup_ids), title=f"round {round_number}",
        )  # fmt: skip
        rm = store.create(config, now=now(), event="night", game_id=game_id)
        humans = [t.id for t in specs if t.kind.value == "human"]
        for human in humans:
            rm.handle(Join(team=human, player=f"{human}-ann", name="Ann"), now=now())
            rm.handle(Join(team=human, player=f"{human}-lee", name="Lee"), now=now())
        for number, tossup_id in enumerate(rnd.tossup_ids):
            rm.handle(StartTossup(tossup_id=tossup_id), now=now())
            if number < len(humans):  # each human team in turn, on a tossup of its own
                human = humans[number]
                rm.handle(Reveal(to=3), now=now())
                assert rm.match.game.floor is None  # no model buzzed before word 3
                rm.handle(Buzz(team=human, player=f"{human}-ann", answer="nothing"), now=now())
                lee = rm.handle(Buzz(team=human, player=f"{human}-lee"), now=now())
                assert lee[0].type == "buzz_refused" and lee[0].reason == "lost_race"
                rm.handle(Rule(ruling=Ruling.PROMPT), now=now())
                rm.handle(Rule(ruling=Ruling.INCORRECT), now=now())
            while (phase := rm.match.game.phase) not in (Phase.ANSWERED, Phase.DEAD):
                if phase in (Phase.BUZZED, Phase.PROMPTED):
                    floor = rm.match.game.floor
                    accept = floor is not None and floor.suggestion == "accept"
                    ruling = Ruling.CORRECT if accept else Ruling.INCORRECT
                    done = rm.handle(Rule(ruling=ruling), now=now())
                    follow_ons += any(e.type == "buzz_accepted" for e in done)
                elif phase == Phase.AWAITING:
                    rm.handle(TimeUp(), now=now())
                else:  # on to the end: the reading stops where a model buzzes
                    n_words = config.tossups[number].n_words
                    rm.handle(Reveal(to=n_words), now=now())
        rm.handle(EndMatch(), now=now())
    engine.dispose()
    assert follow_ons  # the event holds one: Careful buzzed where Robo was ruled wrong


@pytest.fixture(scope="module")
def event_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('event') / 'record.db'}"
    _play(url)
    return url


def _record_counts(db_url: str) -> dict[str, Counter]:
    """Per team name, from the record itself: ruled buzzes that took the floor, right ones,
    and the tossups the team heard."""
    engine = make_engine(db_url)
    names = {t.id: t.name for t in TEAMS}
    out: dict[str, Counter] = {n: Counter() for n in names.values()}
    with Session(engine) as session:
        for b in session.exec(select(BuzzRow)).all():
            if b.outcome == "won" and b.ruling in ("correct", "incorrect"):
                out[names[b.team_id]]["buzzes"] += 1
                out[names[b.team_id]]["correct"] += b.ruling == "correct"
        n_matches = len(session.exec(select(MatchRow)).all())
    engine.dispose()
    assert n_matches >= 2
    return out


@pytest.fixture(scope="module")
def analysed(event_db: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("report")
    result = CliRunner().invoke(
        app,
        ["analyze", "--db", event_db, "--event", "night", "--resamples", "20",
         "--report", str(out), "--json", str(out / "all.json")],
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return {
        "json": json.loads((out / "all.json").read_text()),
        "md": (out / "report.md").read_text(),
        "terminal": result.stdout,
        "folder": out,
    }


def _md_rows(md: str, section: str) -> list[list[str]]:
    """The rows of the first table under ``## section`` (cells stripped, header left out)."""
    part = md.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in part.splitlines() if line.startswith("|")]
    return [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in lines[2:]]


def test_two_model_teams_of_one_model_are_two_teams_in_every_table(
    event_db: str, analysed: dict, tmp_path: Path
) -> None:
    counts = _record_counts(event_db)
    assert counts["Robo"]["buzzes"] and counts["Careful"]["buzzes"]
    data = analysed["json"]
    for name, threshold in THRESHOLDS.items():
        team = data["teams"][name]
        assert (team["kind"], team["model"], team["threshold"]) == ("model", "tfidf", threshold)
        assert (team["buzzes"], team["correct"]) == (
            counts[name]["buzzes"],
            counts[name]["correct"],
        )
    assert data["teams"]["Red"]["model"] is None and data["teams"]["Red"]["threshold"] is None
    # the players' table: the model is the only player of each of its teams, once per team
    players = {(p["player"], p["team"]): p for p in data["players"]}
    heard = {n: t["questions_heard"] for n, t in data["teams"].items()}
    for name in THRESHOLDS:
        assert players[("tfidf", name)]["n_questions"] == heard[name]
        assert players[("tfidf", name)]["kind"] == "model"
    assert sorted(data["expected_wins"]["teams"]) == ["Careful", "Robo"]
    # the report's tables
    md = analysed["md"]
    rows = _md_rows(md, "Players")
    assert sorted((r[1], r[2]) for r in rows if r[1] == "tfidf") == [
        ("tfidf", "Careful"),
        ("tfidf", "Robo"),
    ]
    teams = {r[0]: r for r in _md_rows(md, "Teams")}
    assert teams["Robo"][1:4] == ["model", "tfidf", "0.5"]
    assert teams["Careful"][1:4] == ["model", "tfidf", "0.9"]
    assert teams["Robo"][5] == str(counts["Robo"]["buzzes"])
    assert teams["Careful"][5] == str(counts["Careful"]["buzzes"])
    # the parquet tables and the CSV export keep each team with its model and threshold
    folder = tmp_path / "tables"
    runner = CliRunner()
    done = runner.invoke(
        app, ["export", "--db", event_db, "--event", "night", "--format", "parquet",
              "--out", str(folder)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    buzzes = pd.read_parquet(folder / "buzzes.parquet")
    per_team = buzzes.groupby("team", observed=True).size().to_dict()
    assert {n: per_team.get(n, 0) for n in THRESHOLDS} == {
        n: counts[n]["buzzes"] for n in THRESHOLDS
    }
    heard_table = pd.read_parquet(folder / "heard.parquet")
    policy = heard_table.drop_duplicates("team").set_index("team")
    assert policy.loc["Careful", "threshold"] == 0.9 and policy.loc["Robo", "threshold"] == 0.5
    assert policy.loc["Careful", "model"] == policy.loc["Robo", "model"] == "tfidf"
    assert pd.isna(policy.loc["Red", "model"])
    csv_path = tmp_path / "buzzes.csv"
    done = runner.invoke(
        app, ["export", "--db", event_db, "--event", "night", "--format", "csv",
              "--out", str(csv_path)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    with csv_path.open() as handle:
        exported = list(csv.DictReader(handle))
    assert {(r["team"], r["model"], r["threshold"]) for r in exported if r["model"]} == {
        ("Robo", "tfidf", "0.5"),
        ("Careful", "tfidf", "0.9"),
    }
    # GRACE's format codes each model team apart (M1, M2), its threshold in the mapping
    done = runner.invoke(
        app, ["export", "--db", event_db, "--event", "night", "--format", "grace",
              "--out", str(tmp_path / "g.json")],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    mapping = json.loads((tmp_path / "g.teams.json").read_text())
    coded = {v[0]["team"]: (code, v[0]["model"], v[0]["threshold"]) for code, v in mapping.items()}
    assert {coded["Robo"][1:], coded["Careful"][1:]} == {("tfidf", 0.5), ("tfidf", 0.9)}
    assert coded["Robo"][0] != coded["Careful"][0]
    # the folder, and the CSV file alone, analysed: the same teams and players
    again = analyze(load(folder), n_resamples=20).to_dict()
    assert again["teams"] == data["teams"] and again["players"] == data["players"]
    from_csv = analyze(load(buzzes=csv_path), n_resamples=0).to_dict()
    assert {n: from_csv["teams"][n]["threshold"] for n in THRESHOLDS} == THRESHOLDS
    assert {(p["player"], p["team"]) for p in from_csv["players"]} == set(players)


def test_the_report_states_each_policy(analysed: dict) -> None:
    md, data = analysed["md"], analysed["json"]
    # the stored policy behind figure 6 and the models' expected wins: precompute's default
    assert data["buzz_policies"] == {"tfidf": [{"confidence": "logit", "threshold": 0.5}]}
    wins = {r[1]: r for r in _md_rows(md, "Expected wins")}
    assert wins["Robo"][2] == "tfidf ≥ 0.5" and wins["Careful"][2] == "tfidf ≥ 0.9"
    assert wins["tfidf"][0] == "model (its steps' policy)" and wins["tfidf"][2] == "logit ≥ 0.5"
    (policy,) = _md_rows(md, "Buzz policy against correctness")
    assert policy[:2] == ["tfidf", "logit ≥ 0.5"]
    # the terminal says each model team's threshold too
    terminal = analysed["terminal"]
    assert re.search(r"Robo\s+│ tfidf ≥ 0\.5", terminal), terminal
    assert re.search(r"Careful\s+│ tfidf ≥ 0\.9", terminal), terminal


def test_what_was_not_measured_is_left_out_and_said_once(analysed: dict) -> None:
    md, terminal = analysed["md"], analysed["terminal"]
    data = analysed["json"]
    assert data["models"]["tfidf"]["verbal"]["n"] == 0  # tfidf has no verbalized confidence
    assert "### Verbalized confidence" not in md
    assert "| verbal |" not in md and "| tfidf | verbal" not in md
    note = "tfidf gave no verbalized confidence in its steps: not measured, left out"
    assert md.count(note) == 1
    assert "│ verbal" not in terminal and terminal.count(note) == 1


def test_a_small_sample_is_flagged_with_counts_per_bin(analysed: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from grace_arena.analysis.report import reliability_figure

    md, data = analysed["md"], analysed["json"]
    logit = data["models"]["tfidf"]["logit"]
    assert logit["n"] < 100 and logit["n_questions"] < 30
    small = f"tfidf (logit: {logit['n']} steps from {logit['n_questions']} questions)"
    assert f"**Note:** Small sample: {small}" in md
    (board,) = _md_rows(md, "Leaderboard")
    assert board[1] == "tfidf (small sample)"  # beside its numbers too
    scope = md.split("## What this data can and cannot show", 1)[1].split("\n## ", 1)[0]
    assert f"{logit['n']} steps on {logit['n_questions']} questions" in scope
    assert f"Precise calibration for {small}" in scope.split("It cannot show:")[1]
    assert "small sample: " + small in analysed["terminal"].replace("\n", " ")
    # the reliability diagram writes each bin's count above its bar
    fig = reliability_figure("tfidf", "logit", logit, plt)
    labels = [t.get_text() for t in fig.axes[0].texts]
    plt.close(fig)
    assert labels == [f"n={b['count']}" for b in logit["reliability"] if b["count"]]
    assert sum(int(x[2:]) for x in labels) == logit["n"]
    assert (analysed["folder"] / "reliability_tfidf_logit.png").is_file()


def test_a_large_enough_sample_is_not_flagged() -> None:
    from grace_arena.analysis.report import report_context, small_sample_note

    steps = pd.DataFrame(
        [
            {"model": "m", "question_id": f"q{q}", "step": s, "word_index": 5 * s + 4,
             "correct": int(s >= 2 or q % 3 == 0), "confidence_logit": 0.2 + 0.2 * s,
             "confidence_verbal": None}
            for q in range(30)
            for s in range(4)
        ]
    )  # fmt: skip
    big = analyze(steps, n_resamples=0).to_dict()
    assert small_sample_note(big) is None
    assert not any("Small sample" in n for n in report_context(big, {})["notes"])
    few = analyze(steps[steps["question_id"].isin(["q1", "q2", "q3"])], n_resamples=0).to_dict()
    assert "m (logit: 12 steps from 3 questions)" in (small_sample_note(few) or "")


def test_prompts_lost_races_and_word_indices(event_db: str, analysed: dict, tmp_path: Path) -> None:
    data = analysed["json"]
    players = {(p["player"], p["team"]): p for p in data["players"]}
    heard = {n: t["questions_heard"] for n, t in data["teams"].items()}
    for team in ("Red", "Blue"):
        # Ann buzzed (a prompt, then wrong: −5 on one question of her team's), Lee only lost
        # races: he played every question his team heard and scored nothing
        assert players[("Ann", team)]["n_questions"] == heard[team]
        assert players[("Lee", team)]["n_questions"] == heard[team]
        assert players[("Lee", team)]["mean_score"] == 0.0
    assert "| Lee | Red | human |" in analysed["md"]
    folder = tmp_path / "tables"
    CliRunner().invoke(
        app, ["export", "--db", event_db, "--event", "night", "--format", "parquet",
              "--out", str(folder)],
    )  # fmt: skip
    buzzes = pd.read_parquet(folder / "buzzes.parquet")
    ann = buzzes[buzzes["player"] == "Ann"]
    assert len(ann) == 4  # each of Red's two matches and Blue's two: a neg at the 4th word
    assert ann["prompts"].tolist() == [1] * 4 and ann["answer"].tolist() == ["nothing"] * 4
    assert ann["word_index"].tolist() == [3] * 4  # 0-based: the fourth word
    roster = pd.read_parquet(folder / "roster.parquet")
    assert {("Lee", "Red"), ("Lee", "Blue")} <= set(
        zip(roster["player"].astype(str), roster["team"].astype(str), strict=True)
    )
    assert "Lee" not in set(buzzes["player"].astype(str))
    # the moderator's log counts words from 1: word_index 37 is word 38 on screen
    from moderator_tui.widgets import describe_event

    line = describe_event(
        {"type": "buzz_accepted", "team": "red", "player": "p", "word_index": 37}, []
    )
    assert line is not None and line.plain.endswith("@ word 38")


def test_the_terminal_labels_calscore_and_mce_and_keeps_names_whole(tmp_path: Path) -> None:
    steps = tmp_path / "steps.csv"
    rows = ["model,question_id,step,word_index,correct,confidence_logit,confidence_verbal"]
    for name in ("tfidf-full", "a-rather-long-model-name-v2"):
        for q in range(5):
            for s in range(3):
                rows.append(f"{name},q{q},{s},{4 * s + 3},{int(s == 2)},{0.3 + 0.2 * s},")
    steps.write_text("\n".join(rows) + "\n")
    target = tmp_path / "out.json"
    result = CliRunner().invoke(
        app, ["analyze", "--steps", str(steps), "--resamples", "20", "--json", str(target)],
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert max(len(line) for line in out.splitlines()) <= 80 and "…" not in out
    # a name that fits beside the numbers is never broken across lines: whole in each of the
    # four tables (the widest leaves ten columns at 80); a longer one folds, the numbers
    # whole beside it
    assert out.count("│ tfidf-full ") == 4, out
    assert "│ tfidf-fu " not in out
    assert out.count("│ a-rather-l") == 4
    grace = out.split("GRACE's CalScore and MCE", 1)[1].split("bootstrap intervals", 1)[0]
    assert "normalised" in grace and "ref. code" in grace
    m = json.loads(target.read_text())["models"]["tfidf-full"]["logit"]
    row = next(line for line in grace.splitlines() if "tfidf-full" in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[2:] == [
        f"{m['calscore']:.3f}",
        f"{m['calscore_ref']:.3f}",
        f"{m['mce_grace']:.3f}",
        f"{m['mce_grace_ref']:.3f}",
    ]


def test_csv_export_of_imported_pooled_buzzpoints_lists_every_one(
    db_url: str, tmp_path: Path
) -> None:
    from grace_arena.io.imports import import_grace
    from grace_arena.record.db import upgrade

    upgrade(db_url)
    engine = make_engine(db_url)
    text = "This (*) man crossed the Delaware. He was the first president. For 10 points, name him."
    data = [
        {"tossup_index": 1, "category": "American Hist", "question": text,
         "answer": "George Washington", "question_buzzpoints": "",
         "position": [{"3": "[H1, -]"}, {"3": "[M2, -]"}, {"9": "[H2, +]"}, {"12": "[H3, +]"}]},
        {"tossup_index": 2, "category": "Geo/CE", "question": "Name this river. It flows "
         "through Cairo.", "answer": "Nile", "question_buzzpoints": "",
         "position": [{"1": "[H1, +]"}]},
    ]  # fmt: skip
    source = tmp_path / "pooled.json"
    source.write_text(json.dumps(data))
    assert import_grace(engine, source, event="club").buzzes == 5
    engine.dispose()
    runner = CliRunner()
    out = tmp_path / "club.csv"
    done = runner.invoke(
        app, ["export", "--db", db_url, "--event", "club", "--format", "csv", "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    assert "not in" not in done.output  # no note that they were left out
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 5
    assert all(r["match"] == "" and r["match_title"] == "" and r["buzz_id"] == "" for r in rows)
    assert [(r["team"], r["word_index"], r["correct"]) for r in rows] == [
        ("H1", "2", "0"), ("M2", "2", "0"), ("H2", "8", "1"), ("H3", "11", "1"), ("H1", "1", "1"),
    ]  # fmt: skip
    # the same buzzpoints as the Parquet buzz table, column for column
    folder = tmp_path / "tables"
    done = runner.invoke(
        app, ["export", "--db", db_url, "--event", "club", "--format", "parquet",
              "--out", str(folder)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    table = pd.read_parquet(folder / "buzzes.parquet")
    buzzes, _ = read_buzzes(out)
    columns = ["question_id", "team", "team_kind", "word_index", "correct", "n_words", "n_clues"]
    mine = buzzes[columns].astype(str).reset_index(drop=True)
    theirs = table[columns].astype(str).reset_index(drop=True)
    assert mine.equals(theirs)


def test_a_model_buzzes_at_once_on_the_word_where_another_was_ruled_wrong() -> None:
    """Two model teams (of one model, say) at the same word: the first is ruled wrong and the
    second takes the floor there, the tossup going on rather than the engine refusing."""
    from engine_helpers import tossup

    from grace_arena.core.config import MatchConfig, ModelBuzz, TeamKind
    from grace_arena.core.match import Match

    at_five = {"t0": ModelBuzz(word_index=5, guess="Carver", confidence=0.95)}
    teams = tuple(
        TeamSpec(id=i, name=i.title(), kind=TeamKind.MODEL, model="tfidf", buzzes=at_five)
        for i in ("robo", "careful")
    )
    rules = ScoringRules(answer_time=None, buzz_window=0.0)
    match, _ = Match.create(MatchConfig(rules=rules, teams=teams, tossups=(tossup("t0"),)), now=0)
    match.handle(StartTossup(tossup_id="t0"), now=1.0)
    match.handle(Reveal(to=10), now=2.0)
    assert match.game.floor is not None and match.game.floor.team == "robo"
    events = match.handle(Rule(ruling=Ruling.INCORRECT), now=3.0)
    assert [e.type for e in events] == ["ruled", "buzz_accepted"]
    assert match.game.phase is Phase.BUZZED and match.game.floor is not None
    assert (match.game.floor.team, match.game.floor.word_index) == ("careful", 5)
    match.handle(Rule(ruling=Ruling.CORRECT), now=4.0)
    assert match.scores == {"robo": -5, "careful": 15}  # in power: before the (*) at word 10


@pytest.mark.parametrize("model", ["tfidf", "org/a-very-long-model-name-with-its-revision-v2.1"])
def test_the_reliability_diagram_s_title_fits_the_figure(model: str) -> None:
    """The title (model, ECE, sample size, the small-sample caveat) stays inside the figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from grace_arena.analysis.report import reliability_figure

    bins = [{"lower": i / 10, "upper": (i + 1) / 10, "count": 15 + i, "accuracy": i / 10,
             "mean_confidence": i / 10 + 0.05} for i in range(10)]  # fmt: skip
    metrics = {"reliability": bins, "n": 156, "n_questions": 26, "ece": 0.102}
    fig = reliability_figure(model, "verbal", metrics, plt)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        title = fig.axes[0].title
        box, frame = title.get_window_extent(renderer), fig.bbox
        text = title.get_text()
    finally:
        plt.close(fig)
    assert "156 steps, 26 questions; small sample" in text.replace("\n", " ")
    assert model in text.replace("\n", "")
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1, (box, frame)
    assert frame.y0 <= box.y0 and box.y1 <= frame.y1, (box, frame)


def test_a_tossups_only_event_says_in_one_line_that_no_bonus_was_played(
    event_db: str, analysed: dict, tmp_path: Path
) -> None:
    """The models' answers to the packet's bonus parts are in the record (precomputed), but
    the event played tossups only: one line says so, with no table of them; the whole record
    (no --event) still analyses them, under human column labels."""
    md, data = analysed["md"], analysed["json"]
    section = md.split("## Bonuses", 1)[1].split("\n## ", 1)[0]
    parts = data["bonuses"]["counts"]["model_parts"]
    assert parts > 0 and data["bonuses"]["not_played"] and data["bonuses"]["models"] == {}
    assert f"holds {parts:,} answers of 1 model(s)" in section
    assert "no bonus was played in the matches analysed" in section
    assert "|" not in section and "ece_10_bin" not in md and "selective_acc" not in md
    out = tmp_path / "whole"
    result = CliRunner().invoke(
        app, ["analyze", "--db", event_db, "--resamples", "20", "--report", str(out)],
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    whole = (out / "report.md").read_text().split("## Bonuses", 1)[1].split("\n## ", 1)[0]
    header = next(line for line in whole.splitlines() if line.startswith("| model"))
    assert "ECE (10 bins) \\[95% CI]" in header and "accuracy of the 10 % most confident" in header
    assert "ece\\_10\\_bin" not in whole and "selective\\_acc" not in whole
