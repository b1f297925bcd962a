"""``grace-arena event standings`` (table and --json) and ``grace-arena event stats`` (the
terminal tables and the printable HTML report) on the hand-worked event of test_stats."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from test_stats import played_event
from typer.testing import CliRunner

from grace_arena.cli import app

runner = CliRunner()


class Tables(HTMLParser):
    """The text of every table cell, by the id of the section (h2) it is under."""

    def __init__(self) -> None:
        super().__init__()
        self.section, self.rows, self.cell = "", {}, None
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "h2":
            self.section = dict(attrs).get("id", "")
        elif tag == "tr":
            self.rows.setdefault(self.section, []).append([])
        elif tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.rows[self.section][-1].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def test_standings_show_w_l_ppg_ppb_and_points_per_20_tossups(db_url) -> None:
    played_event(db_url)[1].dispose()
    table = runner.invoke(app, ["event", "standings", "stats", "--db", db_url],
                          env={"COLUMNS": "100"})  # fmt: skip
    assert table.exit_code == 0, table.output
    for header in ("W-L", "PPG", "P/20TUH", "PPB"):
        assert header in table.output
    red = next(line for line in table.output.splitlines() if "Red" in line)
    # 2nd, 1-1, 95 points, 47.5 a game, 8 tossups heard, 237.5 per 20, 13.33 a bonus, 2 powers,
    # 1 ten, 1 neg (Ann's wrong answer after Bo's neg is none: NAQT negs the first team only)
    assert re.search(r"2\s.*Red\s.*1-1\s.*95\s.*47\.50\s.*8\s.*237\.50\s.*13\.33\s.*2/1/1", red)
    result = runner.invoke(app, ["event", "standings", "stats", "--json", "--db", db_url])
    assert result.exit_code == 0, result.output
    rows = {r["team"]: r for r in json.loads(result.output)["rows"]}
    assert (rows["red"]["won"], rows["red"]["lost"], rows["red"]["points_per_game"]) == (1, 1, 47.5)
    assert (rows["red"]["points_per_20_tuh"], rows["green"]["points_per_bonus"]) == (237.5, 20.0)
    assert (rows["blue"]["win_pct"], rows["blue"]["bounceback_conversion"]) == (0.0, 0.5)


def test_the_stats_report_is_one_printable_page(db_url, tmp_path) -> None:
    played_event(db_url)[1].dispose()
    out = tmp_path / "report" / "stats.html"
    result = runner.invoke(app, ["event", "stats", "stats", "--html", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "<script" not in page and "@media print" in page
    parser = Tables()
    parser.feed(page)
    rows = parser.rows
    standings = rows["standings"]
    head = standings[0]
    green = dict(zip(head, standings[1], strict=True))
    assert (green["Team"], green["W"], green["PPG"], green["P/20TUH"], green["PPB"]) == (
        "Green", "1", "105.00", "525.00", "20.00")  # fmt: skip
    assert [r[1] for r in standings[1:]] == ["Green", "Red", "Blue"]
    individuals = [
        dict(zip(rows["individuals"][0], r, strict=True)) for r in rows["individuals"][1:]
    ]
    assert [(p["Player"], p["Team"], p["TUH"], p["Pts"], p["P/20TUH"]) for p in individuals] == [
        ("Gil", "Green", "4", "35", "175.00"),
        ("Ann", "Red", "8", "25", "62.50"),
        ("Ada", "Red", "4", "10", "50.00"),
        ("Bo", "Blue", "4", "0", "0.00"),
    ]
    assert [r[2] for r in rows["games"][1:]] == ["Red 75 – Blue 20", "Red 20 – Green 105"]
    # team detail: each team's games (score and result) and players
    detail = rows["team-detail"]
    assert ["1", "1", "Blue", "75–20", "W"] in detail and [
        "2",
        "1",
        "Green",
        "20–105",
        "L",
    ] in detail
    assert [r[4:8] for r in rows["tossups"][1:]] == [
        ["2", "2", "100%", "1"], ["2", "2", "100%", "1"], ["2", "1", "50%", "1"],
        ["2", "2", "100%", "0"]]  # fmt: skip
    assert rows["bonuses"][1][2:] == ["2", "25.00", "100%", "50%", "100%"]
    # the terminal shows the standings and the individuals
    text = runner.invoke(app, ["event", "stats", "stats", "--db", db_url], env={"COLUMNS": "100"})
    assert text.exit_code == 0 and "individuals" in text.output and "Gil" in text.output


def test_the_report_names_model_players_rounds_of_tossups_and_labels_every_column(
    db_url, tmp_path
) -> None:
    from test_stats import model_event

    model_event(db_url)[1].dispose()
    out = tmp_path / "stats.html"
    result = runner.invoke(app, ["event", "stats", "models", "--html", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    parser = Tables()
    parser.feed(out.read_text())
    rows = parser.rows
    individuals = [
        dict(zip(rows["individuals"][0], r, strict=True)) for r in rows["individuals"][1:]
    ]
    robo = next(p for p in individuals if p["Team"] == "Robo")
    assert (robo["Player"], robo["GP"], robo["TUH"], robo["P/20TUH"]) == (
        "tfidf", "2.0", "4", "75.00")  # fmt: skip
    assert {(p["Player"], p["Team"]) for p in individuals} >= {
        ("tfidf", "Robo"), ("tfidf", "Careful")}  # fmt: skip
    assert all(rows["games"][0]) and {r[-1] for r in rows["games"][1:]} == {"final"}
    tossups = [dict(zip(rows["tossups"][0], r, strict=True)) for r in rows["tossups"][1:]]
    assert [(t["Round"], t["#"]) for t in tossups] == [
        ("1", "1"),
        ("1", "2"),
        ("2", "1"),
        ("2", "2"),
    ]


def test_a_match_under_way_adds_points_in_play_and_no_game_or_tossup(db_url, tmp_path) -> None:
    """Blue–Robo is under way, Blue 15 after its first tossup, its second being read: Blue
    and Robo each have one finished game, and those 15 points are in play."""
    from test_stats import model_event

    model_event(db_url, finish_last=False)[1].dispose()
    result = runner.invoke(app, ["event", "standings", "models", "--json", "--db", db_url])
    assert result.exit_code == 0, result.output
    rows = {r["team"]: r for r in json.loads(result.output)["rows"]}
    blue, robo = rows["blue"], rows["robo"]
    assert (blue["live"], blue["games"], blue["tossups_heard"]) == (1, 1, 2)
    assert (blue["points"], blue["live_points"], blue["points_per_game"]) == (15, 15, 0.0)
    # Robo: 15 and a win over Red (15–0) finished; PPG and P/20TUH of that game alone
    assert (robo["won"], robo["lost"], robo["games"], robo["points"]) == (1, 0, 1, 15)
    assert (robo["points_per_game"], robo["points_per_20_tuh"]) == (15.0, 150.0)
    out = tmp_path / "stats.html"
    result = runner.invoke(app, ["event", "stats", "models", "--html", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "Statistics after 3 game(s) (1 under way)" in page
    parser = Tables()
    parser.feed(page)
    standings = [dict(zip(parser.rows["standings"][0], r, strict=True))
                 for r in parser.rows["standings"][1:]]  # fmt: skip
    by = {r["Team"]: r for r in standings}
    assert (by["Blue"]["GP"], by["Blue"]["TUH"], by["Blue"]["Pts"]) == ("1", "2", "15")
    assert (by["Blue"]["PPG"], by["Blue"]["In play"], by["Robo"]["In play"]) == ("0.00", "15", "0")
    assert by["Red"]["In play"] == ""  # no match under way
    assert parser.rows["games"][-1][-1] == "under way"
    # the players and the tossups: of finished matches, as the standings
    players = [dict(zip(parser.rows["individuals"][0], r, strict=True))
               for r in parser.rows["individuals"][1:]]  # fmt: skip
    got = {(p["Player"], p["Team"]): (p["GP"], p["TUH"], p["Pts"]) for p in players}
    assert got["Bo", "Blue"] == ("1.0", "2", "0") and got["tfidf", "Robo"] == ("1.0", "2", "15")
    tossups = [dict(zip(parser.rows["tossups"][0], r, strict=True))
               for r in parser.rows["tossups"][1:]]  # fmt: skip
    assert [t["Heard"] for t in tossups] == ["2", "2", "1", "1"]


def test_the_answers_column_says_the_points_of_the_event_s_format() -> None:
    from grace_arena.core.formats import rules_for
    from grace_arena.io.stats_report import answer_columns, answer_counts

    # (powers, correct answers, negs) -> each format's column
    assert answer_columns(rules_for("grace"))[0] == "15/10/-5"
    assert answer_columns(rules_for("acf"))[0] == "10/-5"
    assert answer_columns(rules_for("pace"))[0] == "20/10"
    assert answer_counts(rules_for("grace"), 2, 3, 1) == "2/1/1"
    assert answer_counts(rules_for("acf"), 0, 3, 1) == "3/1"
    assert answer_counts(rules_for("pace"), 2, 3, 1) == "2/1"


def test_an_acf_event_s_standings_and_stats_have_no_powers(db_url, tmp_path) -> None:
    from event_helpers import make_event

    make_event(db_url, name="acf", defaults={"format": "acf", "answer_time": None})
    table = runner.invoke(app, ["event", "standings", "acf", "--db", db_url],
                          env={"COLUMNS": "120"})  # fmt: skip
    assert table.exit_code == 0, table.output
    assert "10/-5" in table.output and "15/10/-5" not in table.output
    stats = runner.invoke(app, ["event", "stats", "acf", "--db", db_url], env={"COLUMNS": "120"})
    assert stats.exit_code == 0, stats.output
    assert "10/-5" in stats.output and "15/10/-5" not in stats.output
    out = tmp_path / "acf.html"
    html = runner.invoke(app, ["event", "stats", "acf", "--html", str(out), "--db", db_url])
    assert html.exit_code == 0, html.output
    assert "Powers" not in out.read_text() and "Tens" in out.read_text()
