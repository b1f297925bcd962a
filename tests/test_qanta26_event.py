"""A scripted QANTA 2026 event, on both backends: four hybrid teams of two humans and two AI
players of different weight classes (their outputs imported from the runner's CSVs), one
semi AI pressed by a teammate, one AI muted mid-match, a halftime mode change, and a draft of
the AIs by reverse standings between the two rounds. Its scores are worked by hand below
from the preset's rules; the record replays to the live matches, the statistics tables and the
analysis's reliance section count what was played, and the AIs' outputs exported load back to
the same files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from backends import on_both_backends
from typer.testing import CliRunner

from grace_arena.analysis.reliance import decisions
from grace_arena.cli import app
from grace_arena.core.commands import (
    AbstainPart,
    AnswerPart,
    Buzz,
    ConsultPart,
    EndMatch,
    Join,
    MuteAi,
    PressAi,
    Reveal,
    Rule,
    RulePart,
    SetAiModes,
    StartTossup,
)
from grace_arena.core.config import TeamSpec
from grace_arena.core.draft import draft, standings_order
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import AiBuzzed, AiMuted, Ruling
from grace_arena.core.formats import rules_for
from grace_arena.core.match import Match
from grace_arena.core.phases import Phase
from grace_arena.core.qanta_stats import qanta_tables, render
from grace_arena.core.specs import match_config
from grace_arena.model.hybrid import ai_player
from grace_arena.model.outputs import export_outputs, import_outputs, read_outputs, write_outputs

pytestmark = pytest.mark.usefixtures("private_cache")
runner = CliRunner()

WEIGHT = {
    "alpha": "lightweight", "bravo": "midweight", "charlie": "lightweight",
    "delta": "heavyweight", "echo": "midweight", "foxtrot": "heavyweight",
    "golf": "lightweight", "hotel": "midweight",
}  # fmt: skip
#: Where each AI buzzes on tossups T0..T5 of the sample packet: (runner token, right?);
#: absent: never (its guess there is wrong and it does not buzz).
BUZZ = {
    "alpha": {3: (10, True)},
    "bravo": {0: (3, True), 2: (8, True)},
    "charlie": {2: (3, True), 5: (3, True)},
    "delta": {1: (4, True)},
    "echo": {0: (3, True)},
    "foxtrot": {3: (4, True), 4: (3, True)},
    "golf": {1: (2, False), 5: (3, True)},
    "hotel": {2: (4, True)},
}
#: The only bonus parts an AI answers right: (bonus number, part number 1-based).
BONUS_RIGHT = {"charlie": {(1, 3)}, "echo": {(3, 1)}}


def _answer(line: str) -> str:
    return line.split("<b>")[1].split("</b>")[0] if "<b>" in line else line


def _write_csvs(folder: Path, packet, name: str) -> tuple[Path, Path]:
    buzz, bonus = folder / f"{name}.buzz.csv", folder / f"{name}.bonus.csv"
    with buzz.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["question_id", "token_position", "guess", "confidence", "buzz", "correct"])
        for i, t in enumerate(packet.tossups[:6]):
            w.writerow([t.id, 0, "nothing", 0.1, 0, 0])
            if i in BUZZ[name]:
                token, right = BUZZ[name][i]
                guess = _answer(t.answer) if right else "Ulysses"
                w.writerow([t.id, token, guess, 0.9, 1, int(right)])
    with bonus.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["question_id", "part_number", "guess", "confidence", "correct"])
        for i, b in enumerate(packet.bonuses[:4]):
            for n, part in enumerate(b.parts, start=1):
                right = (i, n) in BONUS_RIGHT.get(name, set())
                w.writerow([b.id, n, _answer(part.answer) if right else "nothing", 0.5,
                            int(right)])  # fmt: skip
    return buzz, bonus


class Game:
    """One recorded match, driven by commands at a clock the test keeps."""

    def __init__(self, store, config, event: str) -> None:
        self.t = 1000.0
        self.rm = store.create(config, now=self.t, event=event)
        self.store = store
        for team in config.teams:
            for n in (1, 2):
                self.do(Join(team=team.id, player=f"{team.id}{n}", name=f"{team.name} {n}"))

    def do(self, command):
        self.t += 1
        return self.rm.handle(command, now=self.t)

    @property
    def match(self) -> Match:
        return self.rm.match

    def start(self) -> None:
        self.do(StartTossup())

    def read_on(self) -> None:
        """Read until someone takes the floor (an autonomous AI) or the end."""
        while self.match.phase is Phase.READING:
            self.do(Reveal())

    def rule(self, ruling: Ruling) -> None:
        self.do(Rule(ruling=ruling))

    def part(self, team: str, choice: str, right: bool | None = None) -> None:
        """One bonus part: "own" or "consult" (then the human's answer, ruled ``right``), or
        "abstain" (scored at once)."""
        if choice == "abstain":
            self.do(AbstainPart(team=team, player=f"{team}1"))
            return
        if choice == "consult":
            self.do(ConsultPart(team=team, player=f"{team}1"))
        self.do(AnswerPart(team=team, player=f"{team}1", text="an answer"))
        self.do(RulePart(ruling=Ruling.CORRECT if right else Ruling.INCORRECT))


@on_both_backends
def test_a_qanta26_event_plays_to_the_end(store, db_url, sample, tmp_path):
    engine = store.engine
    for name, wc in WEIGHT.items():
        files = _write_csvs(tmp_path, sample, name)
        import_outputs(engine, sample, name, [(str(p), read_outputs(p)) for p in files],
                       weight_class=wc)  # fmt: skip
    ais = {n: ai_player(engine, n, sample, player_id=n, name=n.title()) for n in WEIGHT}
    assert {a.weight_class for a in ais.values()} == set(WEIGHT.values())
    tossups = [t.id for t in sample.tossups]
    rules = rules_for("qanta26", halftime_after=2)
    assert rules.format == "qanta26"

    def config(teams: dict[str, tuple[str, str]], tids: list[str], title: str):
        specs = [
            TeamSpec(id=t, name=t.upper(), ai_players=(ais[a], ais[b]))
            for t, (a, b) in teams.items()
        ]
        return match_config(sample, specs, rules=rules, tossup_ids=tids, title=title)

    # -- round 1 ------------------------------------------------------------------------
    m1 = Game(store, config({"a": ("alpha", "bravo"), "b": ("charlie", "delta")},
                            tossups[:4], "Round 1: A–B"), "qanta26-cup")  # fmt: skip
    m1.do(SetAiModes(team="a", modes={"bravo": "semi"}, player="a1"))
    # T0: nobody buzzes by itself; a1 presses bravo's key (semi) once its right guess is in
    m1.start()
    m1.do(Reveal(to=6))
    assert m1.match.phase is Phase.READING
    m1.do(PressAi(team="a", ai="bravo", player="a1"))
    m1.rule(Ruling.CORRECT)  # A +8 (midweight: 10 × 0.8)
    m1.part("a", "own", True)  # +10
    m1.part("a", "consult", True)  # +7 (10 − alpha 1 − bravo 2)
    m1.part("a", "abstain")  # +1: neither AI had it
    # T1: delta (heavyweight) buzzes by itself at token 4
    m1.start()
    m1.read_on()
    assert m1.match.game.floor.player == "delta"
    m1.rule(Ruling.CORRECT)  # B +4 (10 × 0.4)
    m1.part("b", "own", False)  # 0
    m1.part("b", "consult", True)  # +6 (10 − charlie 1 − delta 3)
    m1.part("b", "abstain")  # 0: charlie had it
    # halftime: A's one change, bravo semi -> autonomous
    assert m1.match.game.heard == 2
    m1.do(SetAiModes(team="a", modes={"bravo": "autonomous"}, player="a2"))
    with pytest.raises(IllegalCommand):
        m1.do(SetAiModes(team="a", modes={"bravo": "semi"}))
    # T2: B's captain mutes charlie as the reading starts (it would have buzzed at token 3)
    m1.start()
    m1.do(Reveal(to=1))
    m1.do(MuteAi(team="b", ai="charlie", player="b1"))
    m1.read_on()
    assert m1.match.game.floor.player == "bravo" and m1.match.game.position == 8
    m1.rule(Ruling.CORRECT)  # A +8
    for _ in range(2):
        m1.part("a", "own", True)  # +10, +10
    m1.part("a", "own", False)
    # T3: b1 interrupts wrong (−5), then alpha buzzes by itself at token 10
    m1.start()
    m1.do(Reveal(to=2))
    m1.do(Buzz(team="b", player="b1"))
    m1.rule(Ruling.INCORRECT)  # B −5
    m1.read_on()
    assert m1.match.game.floor.player == "alpha"
    m1.rule(Ruling.CORRECT)  # A +10 (lightweight)
    m1.part("a", "consult", False)  # 0
    m1.part("a", "abstain")  # +1
    m1.part("a", "own", True)  # +10
    m1.do(EndMatch())
    # A: 8 + 18 + 8 + 20 + 10 + 11 = 75; B: 4 + 6 − 5 = 5
    assert m1.match.scores == {"a": 75, "b": 5}

    m2 = Game(store, config({"c": ("echo", "foxtrot"), "d": ("golf", "hotel")},
                            tossups[:4], "Round 1: C–D"), "qanta26-cup")  # fmt: skip
    m2.start()
    m2.read_on()
    assert m2.match.game.floor.player == "echo"
    m2.rule(Ruling.CORRECT)  # C +8
    for _ in range(3):
        m2.part("c", "own", True)  # +30
    m2.start()
    m2.read_on()
    assert m2.match.game.floor.player == "golf"  # a wrong buzz at token 2
    m2.rule(Ruling.INCORRECT)  # D −5
    m2.do(Reveal())
    m2.do(Buzz(team="c", player="c1"))
    m2.rule(Ruling.CORRECT)  # C +10
    m2.part("c", "consult", True)  # +5 (10 − echo 2 − foxtrot 3)
    m2.part("c", "own", False)
    m2.part("c", "abstain")  # +1
    m2.start()
    m2.read_on()
    assert m2.match.game.floor.player == "hotel"
    m2.rule(Ruling.CORRECT)  # D +8
    m2.part("d", "consult", True)  # +7 (10 − golf 1 − hotel 2)
    m2.part("d", "consult", False)
    m2.part("d", "own", True)  # +10
    m2.start()
    m2.read_on()
    assert m2.match.game.floor.player == "foxtrot"
    m2.rule(Ruling.CORRECT)  # C +4
    m2.part("c", "abstain")  # 0: echo had it
    m2.part("c", "own", True)
    m2.part("c", "own", True)  # +20
    m2.do(EndMatch())
    # C: 8 + 30 + 10 + 6 + 4 + 20 = 78; D: −5 + 8 + 17 = 20
    assert m2.match.scores == {"c": 78, "d": 20}

    # -- the draft: reverse standings, snake; one AI of a weight class per team -------------
    standing = standings_order({"a": (1, 75), "b": (0, 5), "c": (1, 78), "d": (0, 20)})
    assert standing == ["c", "a", "d", "b"]
    picks = draft(standing, WEIGHT, rounds=2, preferences={"b": ["delta"]},
                  one_per_class=True)  # fmt: skip
    assert [(p.team, p.ai) for p in picks] == [
        ("b", "delta"),
        ("d", "alpha"),
        ("a", "bravo"),
        ("c", "charlie"),  # B, D, A, C
        ("c", "echo"),
        ("a", "foxtrot"),
        ("d", "hotel"),
        ("b", "golf"),  # then back up
    ]
    held = {t: tuple(p.ai for p in picks if p.team == t) for t in "abcd"}
    # the same draft from the command line, kept in the event's record
    pool = [f"--ai={n}={w}" for n, w in WEIGHT.items()]
    result = runner.invoke(app, ["event", "draft", "qanta26-cup", *pool, "--prefer", "b=delta",
                                 "--db", db_url])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "standings c, a, d, b" in result.output
    assert " 1. round 1  b            delta (heavyweight)" in result.output
    (row,) = store.find_events(["qanta26-cup"])
    assert [(p["team"], p["ai"]) for p in row.meta["ai_drafts"][0]["picks"]] == [
        (p.team, p.ai) for p in picks
    ]

    # -- round 2 ------------------------------------------------------------------------
    m3 = Game(store, config({"a": held["a"], "c": held["c"]}, tossups[4:6], "Round 2: A–C"),
              "qanta26-cup")  # fmt: skip
    m3.start()
    m3.read_on()
    assert m3.match.game.floor.player == "foxtrot"
    m3.rule(Ruling.CORRECT)  # A +4
    m3.part("a", "consult", True)  # +5 (10 − bravo 2 − foxtrot 3)
    m3.part("a", "own", True)  # +10
    m3.part("a", "abstain")  # +1
    m3.start()
    m3.read_on()
    assert m3.match.game.floor.player == "charlie"
    m3.rule(Ruling.CORRECT)  # C +10
    m3.part("c", "own", False)
    m3.part("c", "own", True)  # +10
    m3.part("c", "consult", True)  # +7 (10 − charlie 1 − echo 2)
    m3.do(EndMatch())
    assert m3.match.scores == {"a": 20, "c": 27}

    m4 = Game(store, config({"b": held["b"], "d": held["d"]}, tossups[4:6], "Round 2: B–D"),
              "qanta26-cup")  # fmt: skip
    m4.start()
    m4.do(Reveal(to=2))
    m4.do(Buzz(team="d", player="d1"))
    m4.rule(Ruling.CORRECT)  # D +10
    for _ in range(3):
        m4.part("d", "own", True)  # +30
    m4.start()
    m4.read_on()
    assert m4.match.game.floor.player == "golf"
    m4.rule(Ruling.CORRECT)  # B +10
    m4.part("b", "consult", True)  # +6 (10 − delta 3 − golf 1)
    m4.part("b", "consult", False)
    m4.part("b", "abstain")  # +1
    m4.do(EndMatch())
    assert m4.match.scores == {"b": 17, "d": 40}

    # -- the record: every match replays to the live one ------------------------------------
    games = (m1, m2, m3, m4)
    for g in games:
        assert store.open(g.rm.id).match.state == g.match.state
    stored = [(g.rm.id, store.events(g.rm.id)) for g in games]
    muted = [e for _, evs in stored for e in evs if isinstance(e, AiMuted)]
    assert [(e.team, e.player, e.by, e.tossups_heard) for e in muted] == [
        ("b", "charlie", "b1", 3)
    ]  # during the third

    # -- the statistics tables ----------------------------------------------------------
    tables = qanta_tables(stored)
    assert tables.settings["bonus_weight_deflation"] == {
        "lightweight": 1,
        "midweight": 2,
        "heavyweight": 3,
    }
    assert tables.settings["ai_tossup_score_factors"]["heavyweight"] == 0.4
    line = {(t.match_id, t.player): t for t in tables.tossups}
    m1_id = m1.rm.id
    assert (line[m1_id, "bravo"].points, line[m1_id, "bravo"].buzzes) == (16, 2)
    assert (line[m1_id, "bravo"].kind, line[m1_id, "bravo"].weight_class) == ("ai", "midweight")
    assert (line[m1_id, "b1"].kind, line[m1_id, "b1"].negs, line[m1_id, "b1"].points) == (
        "human",
        1,
        -5,
    )
    strategy = {b.team: b for b in tables.bonuses}
    # A: own 6 parts (5 right, 50), consult 3 (2 right, 7 + 5), abstain 3 (3 right, 3)
    a = strategy["a"]
    assert (a.parts, a.right, a.points) == (
        {"own": 6, "consult": 3, "abstain": 3},
        {"own": 5, "consult": 2, "abstain": 3},
        {"own": 50, "consult": 12, "abstain": 3},
    )
    assert a.per_part("consult") == pytest.approx(4.0) and a.accuracy("own") == pytest.approx(5 / 6)
    turns = {(t.mode, t.k): t for t in tables.ai_turns}
    # autonomous (K=1): delta, bravo, alpha, echo, golf (wrong), hotel, foxtrot, foxtrot,
    # charlie, golf; semi: bravo on a1's key
    assert (turns["autonomous", 1].turns, turns["autonomous", 1].correct) == (10, 9)
    assert turns["autonomous", 1].points == 4 + 8 + 10 + 8 - 5 + 8 + 4 + 4 + 10 + 10
    assert (turns["semi", None].turns, turns["semi", None].points) == (1, 8)
    pressed = [e for _, evs in stored for e in evs if isinstance(e, AiBuzzed) and e.mode == "semi"]
    assert [(e.player, e.pressed_by) for e in pressed] == [("bravo", "a1")]
    text = render(tables)
    assert "bonus_abstain_points: 1" in text and "autonomous_default_k: 1" in text
    result = runner.invoke(app, ["event", "qanta-stats", "qanta26-cup", "--db", db_url])
    assert result.exit_code == 0 and result.output == text

    # -- the reliance section: every delegation decision of the hybrid teams ----------------
    analysis_json = tmp_path / "a.json"
    result = runner.invoke(app, ["analyze", "--db", db_url, "--event", "qanta26-cup",
                                 "--resamples", "50", "--json", str(analysis_json),
                                 "--report", str(tmp_path / "report")])  # fmt: skip
    assert result.exit_code == 0, result.output
    report = (tmp_path / "report" / "report.md").read_text()
    assert "| tossup | muted | second | no buzz | 2 |" in report  # the report's table too
    reliance = json.loads(analysis_json.read_text())["reliance"]
    # 12 bonuses × 3 parts; 8 AIs × the 12 tossups played (4 + 4 + 2 + 2, 4 AIs a match);
    # questions: tossups T0-T5 and bonuses B0-B3 (each match reads the packet's bonuses from
    # the first); consulted: A 3, B 3, C 2, D 2; nobody wrote an answer before a reveal
    assert reliance["counts"] == {"decisions": 36 + 48, "bonus_parts": 36, "consulted": 10,
                                  "with_pre_answers": 0, "questions": 6 + 4}  # fmt: skip
    table = {(r["kind"], r["mode"], r["half"], r["outcome"]): r["n"]
             for r in reliance["delegation"]["table"]}  # fmt: skip
    b, t = "bonus_part", "tossup"
    assert table == {
        # (R1-R4: the four matches in order; ✓ right, ✗ wrong)
        # first half: R1's T0-T1 (A: own ✓, consult ✓, abstain ✓; B: own ✗, consult ✓,
        # abstain ✗ (charlie had it); C: own ✓✓✓; C: consult ✓, own ✗, abstain ✓) and all
        # of R2 (A: consult ✓, own ✓, abstain ✓; C: own ✗, own ✓, consult ✓; D: own ✓✓✓;
        # B: consult ✓, consult ✗, abstain ✓)
        (b, "own", "first", "right"): 1 + 3 + 1 + 1 + 3,
        (b, "own", "first", "wrong"): 1 + 1 + 1,
        (b, "consult", "first", "right"): 1 + 1 + 1 + 1 + 1 + 1,
        (b, "consult", "first", "wrong"): 1,
        (b, "abstain", "first", "abstained right"): 1 + 1 + 1 + 1,
        (b, "abstain", "first", "abstained wrong"): 1,
        # second half: R1's T2-T3 (A: own ✓✓✗; A: consult ✗, abstain ✓, own ✓; D: consult ✓,
        # consult ✗, own ✓; C: abstain ✗ (echo had it), own ✓✓)
        (b, "own", "second", "right"): 2 + 1 + 1 + 2,
        (b, "own", "second", "wrong"): 1,
        (b, "consult", "second", "right"): 1,
        (b, "consult", "second", "wrong"): 2,
        (b, "abstain", "second", "abstained right"): 1,
        (b, "abstain", "second", "abstained wrong"): 1,
        # tossups, first half: delta (R1 T1), echo (R2 T0), foxtrot (R3 T4), charlie (R3 T5),
        # golf (R4 T5) by themselves, right; golf wrong (R2 T1); bravo semi on a1's key (T0),
        # silent on T1; every other AI silent
        (t, "autonomous", "first", "right"): 5,
        (t, "autonomous", "first", "wrong"): 1,
        (t, "autonomous", "first", "no buzz"): 32 - 5 - 1 - 2,
        (t, "semi", "first", "right"): 1,
        (t, "semi", "first", "no buzz"): 1,
        # second half (R1 and R2 only): bravo (autonomous now) and alpha in R1, hotel and
        # foxtrot in R2, right; charlie muted during T2, for T2 and T3
        (t, "autonomous", "second", "right"): 4,
        (t, "autonomous", "second", "no buzz"): 16 - 4 - 2,
        (t, "muted", "second", "no buzz"): 2,
    }
    modes = reliance["delegation"]["modes"]
    assert {m: (r["k"], r["n"]) for m, r in modes["tossup/first"].items()} == {
        "autonomous": (30, 32), "semi": (2, 32)}  # fmt: skip
    assert {m: (r["k"], r["n"]) for m, r in modes["tossup/second"].items()} == {
        "autonomous": (14, 16), "muted": (2, 16)}  # fmt: skip
    assert {m: (r["k"], r["n"]) for m, r in modes["bonus_part/second"].items()} == {
        "abstain": (2, 12), "consult": (3, 12), "own": (7, 12)}  # fmt: skip
    # adoption needs answers written before the reveal: none here
    assert reliance["adoption"] == [] and reliance["adopted"]["n"] == 0
    rows = [r for g in games for r in decisions(store.events(g.rm.id))]
    consulted = [r for r in rows if r["consulted"]]
    # every team answered "an answer", none an AI's; one AI right where consulted: charlie on
    # B1's third part, in R3 (C)
    assert {r["final"] for r in consulted} == {"other"}
    assert [(r["team"], r["bonus_id"], r["part"]) for r in consulted
            if r["model_correct"]] == [("c", sample.bonuses[1].id, 2)]  # fmt: skip
    assert sum(r["model_correct"] is False for r in consulted) == 9
    assert {r["model"] for r in consulted if r["team"] == "a"} == {"alpha+bravo", "bravo+foxtrot"}

    # -- exports load back: the AIs' outputs, exported as the runner's CSVs ---------------
    for name in WEIGHT:
        out = tmp_path / "out" / name
        out.mkdir(parents=True)
        tossup_file, bonus_file = export_outputs(engine, sample, name, "runner")
        write_outputs(tossup_file, out / "buzz.csv")
        write_outputs(bonus_file, out / "bonus.csv")
        again = read_outputs(out / "buzz.csv"), read_outputs(out / "bonus.csv")
        import_outputs(
            engine,
            sample,
            f"{name}-again",
            [("buzz", again[0]), ("bonus", again[1])],
            weight_class=WEIGHT[name],
        )
        copy = ai_player(engine, f"{name}-again", sample, player_id=name, name=name.title())
        assert copy.model_copy(update={"model": name}) == ais[name]
        # and written again, byte for byte
        for written, outputs in zip(
            ("buzz.csv", "bonus.csv"),
            export_outputs(engine, sample, f"{name}-again", "runner"),
            strict=True,
        ):
            write_outputs(outputs, out / f"again-{written}")
            assert (out / f"again-{written}").read_bytes() == (out / written).read_bytes()
