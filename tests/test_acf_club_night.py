"""An ACF club night officiated as clubs officiate one, through the record: protests (one
upheld that changes a result, one denied), a correction two cycles back, a substitution at
halftime, a timeout, a tie sent to overtime and decided, a thrown-out tossup replaced. The
standings, the stats report, QBJ and SQBS agree with the hand computation below.

ACF rules: tossups 10, no powers, −5 for the first team's wrong interrupt (a wrong answer
after the end, or after the other team's neg, is 0), bonuses 3×10 without bouncebacks, 20
tossups of regulation (the sample packet's first 20; its other 6 are the extras), halftime
after 10, one timeout a team, overtime in sudden death without bonuses. Round 1 in two rooms.

Room 1, Red (Ann, Ada, Amy, Abe; Dee on the bench: ACF fields 4) vs Blue (Bo, Bea):
  1 lit-american-1  Ann 10; bonus 1 to Red ✓ ✓ ✗                    Red 30, Blue 0
  2 lit-british-1   Bo −5 (word 3), Ann 10; bonus 2 ✗ ✗ ✗           Red 40, Blue −5
  3 lit-european-1  thrown out (misread): replaced by the first extra, myth-1
  4 myth-1          Bo 10; bonus 3 to Blue ✓ ✓ ✓                     Red 40, Blue 35
    Blue calls its timeout.
  5 lit-world-1     Ada 10; bonus 4 to Red ✓ ✗ ✗                     Red 60, Blue 35
  6 lit-american-2  Bea 10; bonus 5 to Blue ✓ ✓ ✗                    Red 60, Blue 65
  7 hist-american-1 Bea wrong after the end (0), Red silent: dead
    Correction two cycles back (cycle 5's bonus part 2, ✗ → ✓): Red +10 Red 70, Blue 65
  8–21              dead (20 tossups heard; halftime after the 10th)
    At halftime (10 tossups heard) Red brings Dee in for Ada: tossups heard (TUH) by the
    lineups, Ann, Amy, Abe 20, Ada 10 (questions 1–10), Dee 10 (11–20); Bo, Bea 20.
    QBJ: Red's lineups from question 1 (initial) and 11 (halftime); SQBS: Ada's and Dee's
    games played 0.50, the others' 1.00.
  As played and corrected: Red 70 – Blue 65.
  Blue protests cycle 7 (Bea's "Sherman"), upheld: 0 → 10 (a buzz after the end scores a
  ten), no bonus read (the match is over; it counts as a bonus heard with 0 points, as
  YellowFruit and SQBS count a bonus per tossup answered): Blue 75. The result changes: Blue
  wins 75–70.
  Red protests cycle 6's bonus part 1 (Blue's ✓), denied: nothing changes.
Room 2, Green (Gil) vs Gold (Guy):
  1 lit-american-1  Gil 10; bonus 1 ✓ ✓ ✓                            Green 40, Gold 0
  2 lit-british-1   Guy 10; bonus 2 ✓ ✓ ✓                            Green 40, Gold 40
  3–20              dead: tied 40–40 after regulation, overtime proposed
  21 myth-1         overtime: Guy −5 (word 3), Gil 10, no bonus      Green 50, Gold 35
  Green wins 50–35 in overtime (21 tossups heard, 1 in overtime).

Standings, by win %, then points per bonus heard (PPB), then points per 20 tossups heard:
  Green 1–0, 50 points, PPB 30 (1 bonus, 30); Blue 1–0, 75, PPB 16.7 (3 bonuses, 50);
  Gold 0–1, 35, PPB 30 (1 bonus, 30); Red 0–1, 70, PPB 13.3 (3 bonuses: 20 + 0 + 20).
Points per game leave out overtime's tossups (YellowFruit's rule): Green 40, Gold 40.
"""

from __future__ import annotations

import json
from itertools import count

import jsonschema
from backends import on_both_backends
from event_helpers import make_event
from test_export import QBJ_SCHEMA
from test_sqbs import export as export_sqbs
from test_stats import plays_of

from grace_arena.core import protests
from grace_arena.core import schedule as pairing
from grace_arena.core.commands import (
    Buzz,
    CallTimeout,
    CorrectRuling,
    EndMatch,
    FileProtest,
    Join,
    ResolveProtest,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    Substitute,
    ThrowOut,
    TimeUp,
)
from grace_arena.core.config import TeamSpec
from grace_arena.core.events import Ruling
from grace_arena.core.formats import rules_for
from grace_arena.core.lineups import bench
from grace_arena.core.officiating import Stage, standing
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.phases import Phase
from grace_arena.core.specs import match_config
from grace_arena.core.stats import event_stats
from grace_arena.io.exports import export
from grace_arena.io.stats_report import html_stats
from grace_arena.record.db import make_engine
from grace_arena.record.schedule import (
    RoundPlan,
    TeamEntry,
    event_standings,
    load_plan,
    set_schedule,
)
from grace_arena.record.store import MatchStore

C, X = Ruling.CORRECT, Ruling.INCORRECT
TEAMS = [TeamEntry("red", "Red"), TeamEntry("blue", "Blue"), TeamEntry("green", "Green"),
         TeamEntry("gold", "Gold")]  # fmt: skip
PLAYERS = {
    "red": ["Ann", "Ada", "Amy", "Abe", "Dee"],
    "blue": ["Bo", "Bea"],
    "green": ["Gil"],
    "gold": ["Guy"],
}
#: Red's players' tossups heard (Ada's first half, Dee's second), by hand.
RED_HEARD = {"Ann": 20, "Ada": 10, "Amy": 20, "Abe": 20, "Dee": 10}
GAMES = [pairing.Game(1, "1", 0, ("red", "blue")), pairing.Game(1, "2", 0, ("green", "gold"))]


def team_of(player: str) -> str:
    return next(t for t, names in PLAYERS.items() if player in names)


class Moderator:
    """Drives one match of the record as its moderator would, on a clock the test keeps."""

    def __init__(self, rm) -> None:
        self.rm = rm
        self.clock = count(100, 10)  # ten seconds a step: every buzz window runs out

    def do(self, command):
        return self.rm.handle(command, now=float(next(self.clock)))

    @property
    def match(self):
        return self.rm.match

    def start(self) -> None:
        self.do(StartTossup())

    def buzz(self, name: str, word: int | None, ruling: Ruling) -> None:
        """``name`` buzzes at ``word`` (None: after the last word) and is ruled."""
        spec = self.match.current_tossup
        self.do(Reveal(to=spec.n_words if word is None else word))
        self.do(Buzz(team=team_of(name), player=name.lower()))
        self.do(Rule(ruling=ruling))

    def bonus(self, *parts: Ruling) -> None:
        for ruling in parts:
            self.do(RulePart(ruling=ruling))
        assert self.match.phase is Phase.ANSWERED

    def dead(self) -> None:
        """Nobody (else) answers: the reading ends and the buzz window runs out."""
        if self.match.phase is Phase.READING:
            self.do(Reveal(to=self.match.current_tossup.n_words))
        self.do(TimeUp())
        assert self.match.phase is Phase.DEAD


def room_1(mod: Moderator) -> None:
    mod.start()
    mod.buzz("Ann", 5, C)
    mod.bonus(C, C, X)
    mod.start()
    mod.buzz("Bo", 3, X)
    mod.buzz("Ann", 8, C)
    mod.bonus(X, X, X)
    mod.start()
    mod.do(Reveal(to=2))
    mod.do(ThrowOut(reason="misread"))
    mod.start()
    assert mod.match.game.tossup_id == "myth-1"  # the first extra replaces it
    mod.buzz("Bo", 6, C)
    mod.bonus(C, C, C)
    mod.do(CallTimeout(team="blue"))
    mod.start()
    mod.buzz("Ada", 4, C)
    mod.bonus(C, X, X)
    mod.start()
    mod.buzz("Bea", 4, C)
    mod.bonus(C, C, X)
    mod.start()
    mod.buzz("Bea", None, X)
    mod.dead()
    # cycle 5's bonus part 2 (Red's ✗), two cycles back: the moderator finds it was right
    fifth = protests.cycles(mod.match.state)[4]
    assert fifth.tossup_id == "lit-world-1"
    part = next(r for r in fifth.rulings if r.part == 1)
    mod.do(CorrectRuling(seq=part.seq, ruling=C, reason="Kafka was on the answer line"))
    assert mod.match.scores == {"red": 70, "blue": 65}
    while mod.match.game.heard < 20:
        if mod.match.game.heard == 10:
            assert standing(mod.match.config, mod.match.game).stage is Stage.HALFTIME
            # HALFTIME SUBSTITUTION: Red brings Dee (on the bench) in for Ada
            assert bench(mod.match.state, "red") == ["dee"]
            mod.do(Substitute(team="red", player_in="dee", player_out="ada"))
            assert mod.match.state.lineups["red"] == ("ann", "dee", "amy", "abe")
        mod.start()
        mod.dead()
    assert standing(mod.match.config, mod.match.game).stage is Stage.DECIDED
    mod.do(EndMatch())


def room_2(mod: Moderator) -> None:
    mod.start()
    mod.buzz("Gil", 5, C)
    mod.bonus(C, C, C)
    mod.start()
    mod.buzz("Guy", 5, C)
    mod.bonus(C, C, C)
    while mod.match.game.heard < 20:
        mod.start()
        mod.dead()
    where = standing(mod.match.config, mod.match.game)
    assert where.stage is Stage.TIED and "sudden death, no bonuses" in (where.text or "")
    mod.start()
    assert mod.match.game.tossup_id == "myth-1"
    mod.buzz("Guy", 3, X)
    mod.buzz("Gil", 8, C)
    assert mod.match.phase is Phase.ANSWERED  # no bonus in overtime
    assert standing(mod.match.config, mod.match.game).stage is Stage.DECIDED
    mod.do(EndMatch())


def the_td_resolves(rm) -> None:
    """After the games: Blue's protest of cycle 7 (weighed first), Red's of a bonus part."""
    state = rm.match.state
    blue = rm.handle(FileProtest(team="blue", tossup="hist-american-1", answer="Sherman",
                                 reason="Sherman is on the answer line"), now=900.0)[0]  # fmt: skip
    red = rm.handle(FileProtest(team="red", tossup="lit-american-2", part=1, answer="Moby-Dick",
                                reason="Blue said 'Moby'"), now=901.0)[0]  # fmt: skip
    state = rm.match.state
    weighed = protests.impact(state, blue.seq)
    assert weighed.if_upheld == {"red": 70, "blue": 75} and weighed.changes_result
    assert "it would change the result (Blue ahead, not Red ahead)" in weighed.describe(
        {"red": "Red", "blue": "Blue"}
    )
    assert not protests.impact(state, red.seq).changes_result
    rm.handle(ResolveProtest(protest=blue.seq, decision="upheld", by="Dana (TD)",
                             reason="Sherman is on the line"), now=902.0)  # fmt: skip
    rm.handle(ResolveProtest(protest=red.seq, decision="denied", by="Dana (TD)",
                             reason="'Moby' was prompted and completed"), now=903.0)  # fmt: skip
    assert rm.match.scores == {"red": 70, "blue": 75}


def club_night(db_url: str):
    """The event of the module docstring, played, protested and resolved in the record."""
    make_event(db_url, name="club", teams=TEAMS, rounds=1, rooms=("1", "2"), fmt="round_robin",
               tossups=26, players=[(t, p) for t, names in PLAYERS.items() for p in names],
               defaults={"format": "acf"})  # fmt: skip
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    ids = tuple(t.id for t in packet.tossups)
    plan = set_schedule(engine, "club", rooms=["1", "2"], games=GAMES,
                        rounds=[RoundPlan(1, packet.packet.id, ids)])  # fmt: skip
    store = MatchStore(engine)
    for game in plan.games:
        specs = [TeamSpec(id=t, name=plan.team(t).name) for t in game.teams]
        config = match_config(packet, specs, tossup_ids=ids, rules=rules_for("acf"))
        rm = store.create(config, now=0.0, event="club", game_id=game.id)
        for team in game.teams:
            for name in PLAYERS[team]:
                rm.handle(Join(team=team, player=name.lower(), name=name), now=1.0)
        mod = Moderator(rm)
        (room_1 if game.room_id == "1" else room_2)(mod)
        if game.room_id == "1":
            the_td_resolves(rm)
    return load_plan(engine, "club"), engine


@on_both_backends
def test_an_acf_club_night_agrees_everywhere_with_the_hand_computation(db_url, tmp_path):
    plan, engine = club_night(db_url)
    try:
        first, second = (next(g for g in plan.games if g.room_id == r) for r in ("1", "2"))
        store = MatchStore(engine)
        replayed = store.open(first.match_id).match  # the record's replay is the live match
        assert replayed.scores == {"red": 70, "blue": 75}
        assert store.open(second.match_id).match.scores == {"green": 50, "gold": 35}
        qbj_path = tmp_path / "night.qbj"
        export(engine, "qbj", qbj_path, [first.match_id, second.match_id])
        plays = plays_of(engine, plan)
        _, rows = event_standings(engine, "club")
    finally:
        engine.dispose()

    # the standings (the record's rows) and the stats (replayed) agree with the hand
    stats = event_stats(plan.team_infos(), plays)
    assert stats.standings == rows
    by = {s.team: s for s in rows}
    assert [(s.team, s.rank) for s in rows] == [("green", 1), ("blue", 2), ("gold", 3),
                                                ("red", 4)]  # fmt: skip
    assert [(by[t].won, by[t].lost, by[t].points) for t in ("green", "blue", "gold", "red")] == [
        (1, 0, 50), (1, 0, 75), (0, 1, 35), (0, 1, 70)]  # fmt: skip
    assert (by["red"].tossups_heard, by["blue"].tossups_heard) == (20, 20)  # not the thrown out
    assert (by["green"].tossups_heard, by["green"].overtime_tossups) == (21, 1)
    assert (by["green"].overtime_points, by["gold"].overtime_points) == (10, -5)
    assert (by["green"].points_per_game, by["gold"].points_per_game) == (40.0, 40.0)
    # bonuses: Red heard 3 (40 as corrected), Blue 3 (50: the protest's tossup earned one,
    # not read), Green 1 (30), Gold 1 (30)
    assert [(by[t].bonuses_heard, by[t].bonus_points) for t in ("red", "blue", "green", "gold")
            ] == [(3, 40), (3, 50), (1, 30), (1, 30)]  # fmt: skip
    assert (by["blue"].negs, by["gold"].negs, by["red"].negs) == (1, 1, 0)
    players = {p.name: p for p in stats.players}
    # Bea: her ten on cycle 6 and the one the upheld protest gave her
    assert (players["Bea"].tens, players["Bea"].points) == (2, 20)
    assert (players["Ann"].tens, players["Ada"].tens, players["Bo"].points) == (2, 1, 5)
    # tossups heard follow the lineups: Dee came in for Ada at halftime
    assert {n: (players[n].games, players[n].tossups_heard) for n in RED_HEARD} == {
        n: (1, heard) for n, heard in RED_HEARD.items()
    }
    assert (players["Bo"].tossups_heard, players["Bea"].tossups_heard) == (20, 20)
    assert players["Ada"].points_per_20_tuh == 20.0  # her ten in her 10 tossups

    # QBJ: 20 tossups read in room 1 (the thrown-out one and its replacement once), the
    # replacement named; room 2 one in overtime; the protests and the correction in notes
    schema = json.loads(QBJ_SCHEMA.read_text())
    night, overtime = (json.loads((qbj_path / f"match-{m}.qbj").read_text())
                       for m in (first.match_id, second.match_id))  # fmt: skip
    for qbj in (night, overtime):
        jsonschema.validate(qbj, schema)
    assert night["tossups_read"] == 20 and overtime["tossups_read"] == 21
    assert overtime["overtime_tossups_read"] == 1
    scores = {t["team"]["name"]: t for t in night["match_teams"]}
    assert (scores["Red"]["bonus_points"], scores["Blue"]["bonus_points"]) == (40, 50)
    replaced = [q for q in night["match_questions"] if q.get("replacement_tossup_question")]
    assert len(replaced) == 1 and replaced[0]["question_number"] == 3
    red, blue = (next(t for t in night["match_teams"] if t["team"]["name"] == name)
                 for name in ("Red", "Blue"))  # fmt: skip
    assert [(lu["first_question"], [p["name"] for p in lu["players"]], lu["reason"])
            for lu in red["lineups"]] == [
        (1, ["Ann", "Ada", "Amy", "Abe"], "initial"),
        (11, ["Ann", "Dee", "Amy", "Abe"], "halftime"),
    ]  # fmt: skip
    assert [(lu["first_question"], lu["reason"]) for lu in blue["lineups"]] == [(1, "initial")]
    assert {p["player"]["name"]: p["tossups_heard"] for p in red["match_players"]} == RED_HEARD
    assert {p["player"]["name"]: p["tossups_heard"] for p in blue["match_players"]} == {
        "Bo": 20, "Bea": 20,
    }  # fmt: skip
    notes = night["notes"].splitlines()
    assert any("Protest" in n and "by Blue on tossup 7 (hist-american-1)" in n
               and "Upheld by Dana (TD)" in n
        and "the score went from Red 70, Blue 65 to Red 70, Blue 75: it changed the result "
        "(Blue ahead, not Red ahead)" in n for n in notes)  # fmt: skip
    assert any("by Red on bonus part 1 of tossup 6 (lit-american-2)" in n and "Denied" in n
               for n in notes)  # fmt: skip
    assert any(n.startswith("Correction") and "tossup 5 (lit-world-1)" in n for n in notes)

    # the stats report lists them with the game
    page = html_stats(plan, stats, plays)
    assert 'id="protests"' in page and "Upheld by Dana (TD)" in page and "Denied by" in page
    # ... and each player's games played and tossups heard (the players' table: name, team,
    # GP, TUH): GP is the tossups heard over the 20 read, as YellowFruit counts it
    # (``PlayerStats.addMatchPlayer``: Ada and Dee, one half each, 0.5)
    for name, heard in RED_HEARD.items():
        gp = f"{heard / 20:.1f}"
        assert (
            f'<td class="l">{name}</td><td class="l">Red</td><td>{gp}</td><td>{heard}</td>' in page
        )
    gp = {p.name: p.games_played for p in stats.players if p.team == "red"}
    assert gp == {name: heard / 20 for name, heard in RED_HEARD.items()}

    # SQBS: each game's head (id, teams, scores, tossups heard, round) and overtime
    out = tmp_path / "club.sqbs"
    result = export_sqbs(db_url, out, event="club")
    assert result.exit_code == 0, result.output
    text = out.read_bytes().decode().split("\r\n")
    heads = [text[i : i + 7] for i in range(len(text) - 7)
             if text[i + 5 : i + 7] in (["20", "1"], ["21", "1"])]  # fmt: skip
    assert ["0", "1", "70", "75", "20", "1"] in [h[1:] for h in heads]
    assert ["2", "3", "50", "35", "21", "1"] in [h[1:] for h in heads]
    # its players: Red's roster (5 players + 1 lines, its name, its players), and in the game
    # each player's slot (alternating with the other team's, 7 lines each, after the game's
    # 17 lines): roster index, games played (tossups heard ÷ tossups read), ..., points
    red_at = text.index("Red")
    roster = text[red_at + 1 : red_at + 6]
    assert text[red_at - 1] == "6" and sorted(roster) == sorted(RED_HEARD)
    (head,) = [i for i in range(len(text) - 7) if text[i + 1 : i + 7] == ["0", "1", "70", "75",
                                                                          "20", "1"]]  # fmt: skip
    slots = [text[head + 17 + 14 * i : head + 17 + 14 * i + 7] for i in range(5)]
    assert {roster[int(s[0])]: (s[1], s[-1]) for s in slots} == {
        "Ann": ("1.00", "20"), "Ada": ("0.50", "10"), "Amy": ("1.00", "0"),
        "Abe": ("1.00", "0"), "Dee": ("0.50", "0"),
    }  # fmt: skip
    assert text[head + 17 + 14 * 5] == "-1"  # Red's sixth slot is empty
