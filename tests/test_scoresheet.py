"""The printable scoresheet: its numbers are the match's, cycle by cycle, for a match played
through the engine and kept in the record (both backends), with powers, negs, bouncebacks, an
undone ruling, a thrown-out tossup and a thrown-out bonus; a match not started gives a blank
sheet; the export format writes it."""

from __future__ import annotations

import contextlib
import html
import random
import re
import zlib
from pathlib import Path

import pytest
from backends import on_both_backends
from engine_helpers import config
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.commands import (
    Buzz,
    CallTimeout,
    Join,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    ThrowOut,
    ThrowOutBonus,
    UndoRuling,
)
from grace_arena.core.commands import Substitute as Sub
from grace_arena.core.events import Ruling
from grace_arena.core.formats import rules_for
from grace_arena.core.phases import Phase
from grace_arena.io import scoresheet as sheets
from grace_arena.io.scoresheet import blank_rows, render_html, render_pdf, rows_of, scoresheet

C, X = Ruling.CORRECT, Ruling.INCORRECT
PLAYERS = {"red": ["Ann", "Ada", "Al"], "blue": ["Bo", "Bea"]}


def play_match(store, *, seed: int, fmt: str = "naqt", n_tossups: int = 20, **rules):
    """A match of ``n_tossups`` cycles played by a seeded script, stored in the record as it
    is played. Returns the recorded match and each team's score after every cycle, as the
    engine counted it (what the sheet's running totals must be)."""
    rng = random.Random(seed)
    cfg = config(
        n_tossups=n_tossups, bonus_parts=(3,) * (n_tossups + 4), rules=rules_for(fmt, **rules)
    )
    rm = store.create(cfg, now=1000.0)
    for team, names in PLAYERS.items():
        for i, name in enumerate(names):
            rm.handle(Join(team=team, player=f"{team}-{i}", name=name), now=1000.0)
    after: list[dict[str, int]] = []
    now = 1001.0
    for number in range(n_tossups):
        now += 10
        rm.handle(StartTossup(), now=now)
        order = rng.sample(list(PLAYERS), 2)
        word = rng.choice([3, 8, 15])  # before the power mark (10), after it
        rm.handle(Reveal(to=word), now=now)
        for team in order:
            if rm.match.phase not in (Phase.READING, Phase.AWAITING):
                break
            player = f"{team}-{rng.randrange(len(PLAYERS[team]))}"
            rm.handle(Buzz(team=team, player=player), now=now)
            ruling = rng.choice([C, C, X])
            rm.handle(Rule(ruling=ruling), now=now)
            if number == 4 and ruling is C:  # a ruling taken back and made the other way
                rm.handle(UndoRuling(), now=now)
                rm.handle(Rule(ruling=X), now=now)
        while rm.match.phase is Phase.BONUS:
            if number == 6 and rng.random() < 0.5:
                rm.handle(ThrowOutBonus(reason="misread"), now=now)
                continue
            rm.handle(RulePart(ruling=rng.choice([C, X])), now=now)
        if rm.match.phase in (Phase.READING, Phase.AWAITING):
            rm.handle(Reveal(), now=now)  # read to the end: dead
            rm.handle(ThrowOut(reason="nobody answered"), now=now)
        if number == 9:
            rm.handle(ThrowOut(reason="a misread clue"), now=now)
        after.append(dict(rm.match.scores))
    return rm, after


@on_both_backends
def test_the_sheet_s_numbers_are_the_match_s_cycle_by_cycle(store) -> None:
    for seed, fmt, extra in ((1, "naqt", {"bouncebacks": True}), (2, "acf", {})):
        rm, after = play_match(store, seed=seed, fmt=fmt, **extra)
        sheet = scoresheet(rm.id, store.events(rm.id))
        assert len(sheet.cycles) == 20
        assert [c.totals for c in sheet.cycles] == after
        assert sheet.scores == rm.match.scores
        # the numbers in each row add up: tossup and bonus points make the running total
        running = {"red": 0, "blue": 0}
        for row in rows_of(sheet):
            for team in running:
                running[team] += row[f"{team}:tossup"] + row[f"{team}:bonus"]
                assert row[f"{team}:total"] == running[team]
        thrown = [c for c in sheet.cycles if c.thrown_out]
        assert sheet.cycles[9] in thrown
        assert all(c.tossup_total("red") == c.bonus_total("red") == 0 for c in thrown)
        assert any("thrown out (a misread clue)" in n for n in sheet.cycles[9].notes)
        # the page shows each cycle's running totals and the final score
        page = render_html(sheet)
        totals = re.findall(r'<td class="total">([^<]*)</td>', page)
        shown = [t.replace("−", "-") for t in totals[: 2 * len(sheet.cycles)]]
        assert shown == [str(c.totals[t]) for c in sheet.cycles for t in ("red", "blue")]


def test_powers_negs_undos_and_bonus_parts_are_marked_where_they_happened(store) -> None:
    cfg = config(n_tossups=3, bonus_parts=(3, 3, 3), rules=rules_for("naqt", bouncebacks=True))
    rm = store.create(cfg, now=0.0)
    rm.handle(Join(team="red", player="r1", name="Ann"), now=0.0)
    rm.handle(Join(team="blue", player="b1", name="Bo"), now=0.0)
    rm.handle(StartTossup(), now=1.0)
    rm.handle(Reveal(to=3), now=1.0)
    rm.handle(Buzz(team="blue", player="b1"), now=1.0)
    rm.handle(Rule(ruling=X), now=1.0)  # a neg
    rm.handle(Buzz(team="red", player="r1"), now=1.0)
    rm.handle(Rule(ruling=C), now=1.0)  # a power (before word 10)
    rm.handle(RulePart(ruling=C), now=2.0)
    rm.handle(RulePart(ruling=X), now=2.0)  # missed: bounces back to blue
    rm.handle(RulePart(ruling=C), now=2.0)  # blue gets the bounceback
    rm.handle(RulePart(ruling=C), now=2.0)
    rm.handle(UndoRuling(), now=2.0)  # part 3 taken back, then missed
    rm.handle(RulePart(ruling=X), now=2.0)
    rm.handle(RulePart(ruling=X), now=2.0)  # and blue misses its bounceback
    sheet = scoresheet(rm.id, store.events(rm.id))
    (cycle,) = sheet.cycles
    assert cycle.tossup_points == {"blue": {"Bo": -5}, "red": {"Ann": 15}}
    assert cycle.powers == {("red", "Ann")}
    assert cycle.bonus_parts == {"red": {0: 10, 2: 0, 1: 0}, "blue": {1: 10, 2: 0}}
    assert cycle.notes == ["bonus part 3 ruling undone"]
    assert cycle.totals == rm.match.scores == {"red": 25, "blue": 5}
    page = render_html(sheet)
    assert '<td class="power">15</td>' in page and '<td class="neg">−5</td>' in page
    assert "bonus part 3 ruling undone" in page


def test_an_event_of_a_kind_the_sheet_does_not_score_is_noted_on_its_cycle(store) -> None:
    """Protests, corrections, substitutions: recorded as events of their own, each is noted
    on the row of the tossup it names, in words of its own when NOTES has them."""
    from pydantic import BaseModel

    class AppealLodged(BaseModel):  # a kind of event the sheet has no words of its own for
        type: str = "appeal_lodged"
        seq: int = 0
        tossup_id: str
        team: str
        reason: str

    rm, _ = play_match(store, seed=3, n_tossups=3)
    events = [*store.events(rm.id), AppealLodged(tossup_id="t1", team="red", reason="pronounced")]
    sheet = scoresheet(rm.id, events)
    assert sheet.cycles[1].notes[-1] == "appeal lodged (team red, reason pronounced)"
    sheets.NOTES["appeal_lodged"] = lambda ev, name: f"appeal by {ev.team}: {ev.reason}"
    try:
        sheet = scoresheet(rm.id, events)
    finally:
        del sheets.NOTES["appeal_lodged"]
    assert sheet.cycles[1].notes[-1] == "appeal by red: pronounced"
    assert "appeal by red: pronounced" in render_html(sheet)
    # a protest, a correction and a resolution: in words, not the record's fields
    from grace_arena.core.events import ProtestFiled, ProtestResolved, RulingCorrected

    filed = ProtestFiled(seq=90, t=0, team="red", tossup_id="t1", part=1, ruling_seq=9,
                         answer="Ann", reason="pronounced")  # fmt: skip
    fixed = RulingCorrected(seq=91, t=0, amends=9, buzz_id=1, tossup_id="t1", team="red",
                            player="r1", ruling="correct", points=10, by="td",
                            reason="upheld")  # fmt: skip
    resolved = ProtestResolved(seq=92, t=0, protest_seq=90, decision="upheld", by="Dana")
    sheet = scoresheet(rm.id, [*store.events(rm.id), filed, fixed, resolved])
    notes = sheet.cycles[1].notes
    assert "Protest by red on bonus part 2 (answer “Ann”; reason: pronounced)" in notes
    assert any(n.startswith("Corrected by the TD: ") and n.endswith("correct, +10: upheld")
               for n in notes)  # fmt: skip
    assert "Protest upheld by Dana" in sheet.cycles[-1].notes


def test_a_match_not_started_gives_a_blank_sheet_with_its_teams_and_players(store) -> None:
    rm = store.create(config(n_tossups=24, bonus_parts=(3,) * 24, rules=rules_for("acf")), now=0)
    rm.handle(Join(team="red", player="r1", name="Ann"), now=0.0)
    sheet = scoresheet(rm.id, store.events(rm.id))
    assert not sheet.started and sheet.cycles == []
    assert [t.players for t in sheet.teams] == [["Ann"], []]
    assert blank_rows(sheet) == 20 + sheets.OVERTIME_ROWS  # ACF's regulation, then overtime
    page = render_html(sheet)
    assert page.count("<tr") == 2 + 23 + 1  # header rows, blank rows, the foot
    assert ">Ann</th>" in page and ">Red</th>" in page and "blank" in page


def test_the_export_writes_a_sheet_per_match(store, db_url, tmp_path: Path) -> None:
    rm, after = play_match(store, seed=4, n_tossups=5)
    other = store.create(config(), now=0.0)
    out = tmp_path / "sheets"
    result = CliRunner().invoke(
        app, ["export", "--db", db_url, "--format", "scoresheet", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(
        f"scoresheet-match-{m.id}{suffix}" for m in (rm, other) for suffix in (".html", ".pdf")
    )
    assert (out / f"scoresheet-match-{rm.id}.pdf").read_bytes().startswith(b"%PDF")
    one = tmp_path / "one.pdf"
    result = CliRunner().invoke(
        app, ["export", "--db", db_url, "--format", "scoresheet", "--out", str(one),
              "--match", str(rm.id)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert one.read_bytes().startswith(b"%PDF")
    page = (out / f"scoresheet-match-{rm.id}.html").read_text(encoding="utf-8")
    final = after[-1]
    totals = [t.replace("−", "-") for t in re.findall(r'<td class="total">([^<]*)</td>', page)]
    assert totals[8:10] == [str(final["red"]), str(final["blue"])]


def _pdf_text(data: bytes) -> str:
    """The text a PDF written with the PDF's own font draws (its content streams, inflated)."""
    streams = re.findall(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S)
    texts = []
    for stream in streams:
        with contextlib.suppress(zlib.error):
            texts.append(zlib.decompress(stream).decode("latin-1"))
    return "\n".join(texts)


def _pdf_words(data: bytes) -> str:
    """The strings a PDF written with the PDF's own font draws, in order, one space between
    (a cell's text wrapped onto lines comes back whole)."""
    drawn = re.findall(r"\(((?:\\.|[^\\)])*)\) Tj", _pdf_text(data))
    return " ".join(re.sub(r"\\(.)", r"\1", s) for s in drawn)


def test_the_pdf_holds_the_sheet_s_numbers_on_one_page_of_a4_and_letter(store) -> None:
    rm, after = play_match(store, seed=5, fmt="acf")
    sheet = scoresheet(rm.id, store.events(rm.id))
    for paper in sheets.PAPERS:
        data = render_pdf(sheet, paper=paper, font=False)
        assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page(?!s)", data)) == 1
        drawn = re.findall(r"\((-?\d+)\) Tj", _pdf_text(data))
        final = after[-1]
        # the foot's final scores are the last numbers drawn in the table
        assert drawn[-2:] == [str(final["red"]), str(final["blue"])], (paper, drawn[-6:])
    # with a Unicode font (this machine's, when it has one) a name in any script is written
    if sheets._unicode_font() is not None:
        assert render_pdf(sheet, paper="A4").startswith(b"%PDF")


def test_a_name_the_pdf_s_own_font_cannot_write_is_refused_not_written_wrong(store) -> None:
    rm = store.create(config(n_tossups=2), now=0.0)
    rm.handle(Join(team="red", player="r1", name="Ἀριστοτέλης"), now=0.0)
    sheet = scoresheet(rm.id, store.events(rm.id))
    with pytest.raises(ValueError, match=r"Ἀριστοτέλης.*Latin-1 only"):
        render_pdf(sheet, font=False)
    with pytest.raises(ValueError, match="paper must be one of A4, Letter"):
        render_pdf(sheet, paper="A3")
    if sheets._unicode_font() is not None:  # with a Unicode font, the name is written
        assert render_pdf(sheet).startswith(b"%PDF")


def test_a_sheet_whose_totals_are_not_the_record_s_says_so(store, monkeypatch) -> None:
    """An event that changes scores the sheet cannot read never leaves it printing other
    numbers as if they agreed: it says the record's."""
    rm, _ = play_match(store, seed=6, n_tossups=3)
    assert scoresheet(rm.id, store.events(rm.id)).record_scores is None  # they agree
    monkeypatch.setattr(sheets, "_replayed_scores", lambda events: {"red": 999, "blue": -5})
    sheet = scoresheet(rm.id, store.events(rm.id))
    assert sheet.record_scores == {"red": 999, "blue": -5}
    said = "The record's score is Red 999, Blue −5, not this sheet's"
    assert html.escape(said) in render_html(sheet)
    assert render_pdf(sheet, font=False).startswith(b"%PDF")


def benched_match(store):
    """An ACF match of 4 tossups (halftime after 2): Red fields Ann, Ada, Amy, Abe and Dee
    waits on the bench; Blue is Bo. Ann answers the first tossup, Bo the second."""
    cfg = config(
        n_tossups=6, bonus_parts=(3,) * 6,
        rules=rules_for("acf", regulation_tossups=4, halftime_after=2),
    )  # fmt: skip
    rm = store.create(cfg, now=0.0)
    for i, name in enumerate(["Ann", "Ada", "Amy", "Abe", "Dee"]):
        rm.handle(Join(team="red", player=f"r{i}", name=name), now=0.0)
    rm.handle(Join(team="blue", player="b0", name="Bo"), now=0.0)
    for team, player in (("red", "r0"), ("blue", "b0")):
        rm.handle(StartTossup(), now=1.0)
        rm.handle(Buzz(team=team, player=player), now=1.0)
        rm.handle(Rule(ruling=C), now=1.0)
        while rm.match.phase is Phase.BONUS:
            rm.handle(RulePart(ruling=X), now=1.0)
    return rm


@on_both_backends
def test_substitutions_and_the_bench_are_marked_on_the_sheet(store) -> None:
    rm = store.create(config(n_tossups=6, rules=rules_for("acf")), now=0.0)
    for i, name in enumerate(["Ann", "Ada", "Amy", "Abe", "Dee"]):
        rm.handle(Join(team="red", player=f"r{i}", name=name), now=0.0)
    blank = scoresheet(rm.id, store.events(rm.id))  # not started: Dee heads as benched
    assert blank.bench == {"red": ("Dee",), "blue": ()}
    assert ">Ann</th>" in render_html(blank) and ">Dee (bench)</th>" in render_html(blank)
    assert "Dee (bench)" in _pdf_words(render_pdf(blank, font=False))

    rm = benched_match(store)
    # at halftime Blue calls a timeout and Red brings Dee in for Ada: printed now, the
    # second row notes the timeout (not its end on the server's clock), the next row the sub
    rm.handle(CallTimeout(team="blue"), now=2.0)
    rm.handle(Sub(team="red", player_in="r4", player_out="r1"), now=2.0)
    sheet = scoresheet(rm.id, store.events(rm.id))
    assert sheet.pending_subs == ["Sub: Dee in for Ada (halftime)"]
    page = render_html(sheet)
    assert '<td class="n">3</td>' in page  # the first blank row ...
    row_3 = page[page.index('<td class="n">3</td>') :].split("</tr>")[0]
    assert "Sub: Dee in for Ada (halftime)" in row_3  # ... notes the substitution
    assert "Sub: Dee in for Ada (halftime)" in _pdf_words(render_pdf(sheet, font=False))

    # the second half: Dee answers the third tossup, the fourth goes dead
    rm.handle(StartTossup(), now=3.0)
    rm.handle(Buzz(team="red", player="r4"), now=3.0)
    rm.handle(Rule(ruling=C), now=3.0)
    while rm.match.phase is Phase.BONUS:
        rm.handle(RulePart(ruling=X), now=3.0)
    rm.handle(StartTossup(), now=4.0)
    rm.handle(Reveal(), now=4.0)
    rm.handle(ThrowOut(reason="nobody answered"), now=4.0)  # (a dead tossup, struck out)
    sheet = scoresheet(rm.id, store.events(rm.id))
    first, second, third, fourth = sheet.cycles[:4]
    assert [c.lineups["red"] for c in (first, second, third, fourth)] == [
        ("Ann", "Ada", "Amy", "Abe")] * 2 + [("Ann", "Dee", "Amy", "Abe")] * 2  # fmt: skip
    assert first.notes == [] and sheet.pending_subs == []
    assert second.notes == ["Timeout after this tossup: Blue (1st)"]
    assert third.notes == ["Sub: Dee in for Ada (halftime)"]
    assert (third.came_in, third.went_out) == ({("red", "Dee")}, {("red", "Ada")})
    assert fourth.came_in == fourth.went_out == set()
    assert third.totals == rm.match.scores == {"red": 20, "blue": 10}

    # the page: Red's columns Ann, Ada, Amy, Abe, Dee; a · on the bench, in and out
    page = render_html(sheet)
    rows = re.findall(r'<tr[^>]*><td class="n">\d+</td>(.*?)</tr>', page)
    red = [re.findall(r"<td[^>]*>([^<]*)</td>", row)[:5] for row in rows[:4]]
    assert red == [
        ["10", "", "", "", "·"],
        ["", "", "", "", "·"],
        ["", "out", "", "", "10"],  # Dee's ten in the row she came in (marked sub-in)
        ["", "·", "", "", ""],
    ]
    assert (
        '<td class="sub-in">10</td>' in page
        and '<td class="bench" title="substituted out">out</td>' in page
    )
    assert (
        "Sub: Dee in for Ada (halftime)" in rows[2] and "not in the lineup (on the bench)" in page
    )
    # the PDF (the PDF's own font, its text read back) marks them alike
    data = render_pdf(sheet, font=False)
    text = _pdf_text(data)
    assert "(in 10) Tj" in text and "(out) Tj" in text and text.count("(\xb7) Tj") == 3
    assert "Sub: Dee in for Ada (halftime)" in _pdf_words(data)
    # a format without a lineup size (every player plays) marks nothing
    plain = store.create(config(n_tossups=2, rules=rules_for("grace")), now=0.0)
    for i, name in enumerate(["Ann", "Ada", "Amy", "Abe", "Dee"]):
        plain.handle(Join(team="red", player=f"r{i}", name=name), now=0.0)
    plain.handle(StartTossup(), now=1.0)
    plain_sheet = scoresheet(plain.id, store.events(plain.id))
    assert plain_sheet.lineups is None and plain_sheet.cycles[0].lineups is None
    assert 'class="bench"' not in render_html(plain_sheet)


@on_both_backends
def test_corrections_and_upheld_protests_count_in_the_sheet_s_numbers(store) -> None:
    """The ACF match of ``protests_child``: the first cycle corrected two cycles on (Red-2
    buzzed, not Red-1; part 2 was right), then Red's protest of its neg on the third tossup
    upheld and Blue's denied. By hand (ACF: 10 a tossup, −5 a neg, 10 a part):

    ====  =========================  ================  =========
    cycle  Red                        Blue              after
    ====  =========================  ================  =========
    1     Red-2 10, bonus 10+10+10   —                 40 – 0
    2     —                          Blue-1 10, 30     40 – 40
    3     Red-1 10 (its −5 upheld)   —                 50 – 40
    ====  =========================  ================  =========
    """
    from protests_child import play

    from grace_arena.core import protests
    from grace_arena.core.commands import ResolveProtest

    match_id = play(store)
    rm = store.open(match_id)
    red, blue = protests.protests(rm.match.state)
    rm.handle(ResolveProtest(protest=red.seq, decision="upheld", by="Dana",
                             reason="on the line"), now=3000.0)  # fmt: skip
    rm.handle(ResolveProtest(protest=blue.seq, decision="denied", by="Dana"), now=3001.0)
    sheet = scoresheet(match_id, store.events(match_id))
    assert [c.totals for c in sheet.cycles] == [
        {"red": 40, "blue": 0}, {"red": 40, "blue": 40}, {"red": 50, "blue": 40},
    ]  # fmt: skip
    assert sheet.scores == rm.match.scores == {"red": 50, "blue": 40}
    assert sheet.record_scores is None  # the sheet and the record agree: no banner
    first, _, third = sheet.cycles
    # the player columns: the tossup credited to whom the correction says, at its points
    assert first.tossup_points == {"red": {"Red-2": 10}}
    assert first.bonus_parts == {"red": {0: 10, 1: 10, 2: 10}}
    assert third.tossup_points == {"red": {"Red-1": 10}}
    # the notes stay, saying what each correction was and why
    assert "Corrected by the moderator: Red-2 (red) correct, +10: Bea buzzed" in first.notes
    assert any(n.startswith("Corrected by the moderator: bonus part 2 (red) correct, +10")
               for n in first.notes)  # fmt: skip
    assert any(n.startswith("Protest by red on the tossup") for n in third.notes)
    assert any(n.startswith("Corrected by the TD: Red-1 (red) correct, +10: protest ")
               for n in third.notes)  # fmt: skip
    assert "Protest upheld by Dana: on the line" in third.notes
    # the page and the PDF print those numbers, under a legend that says so
    page = render_html(sheet)
    assert 'class="mismatch"' not in page and sheets.CORRECTIONS_LEGEND in page
    totals = [t.replace("−", "-") for t in re.findall(r'<td class="total">([^<]*)</td>', page)]
    assert totals[:6] == ["40", "0", "40", "40", "50", "40"]
    red_cells = re.findall(r'<td class="n">1</td>(.*?)</tr>', page)[0]
    assert re.findall(r"<td[^>]*>([^<]*)</td>", red_cells)[:2] == ["", "10"]  # Red-1, Red-2
    data = render_pdf(sheet, font=False)
    drawn = re.findall(r"\((-?\d+)\) Tj", _pdf_text(data))
    assert drawn[-2:] == ["50", "40"]
    # (a protest's answer in quotes the PDF's own font has: printed, not refused)
    assert 'Protest by red on the tossup (answer "Carver"; reason: on the line)' in _pdf_words(data)
