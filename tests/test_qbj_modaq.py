"""Our QBJ match files as MODAQ's own code reads them ("Import from QBJ": the match file and
its packet, ``src/qbj/QBJ.ts``, ``fromQBJ``; the packet through
``src/components/PacketLoaderController.ts``, ``loadPacket``; the score through
``src/state/GameState.ts``, ``scores``). The files below were opened with that code, unpatched,
outside the project; each check here is one of its reading rules."""

from __future__ import annotations

import json

from backends import on_both_backends

from grace_arena.core.commands import (
    AnswerPart,
    Buzz,
    EndMatch,
    Join,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
)
from grace_arena.core.config import TeamSpec
from grace_arena.core.events import Ruling
from grace_arena.core.formats import rules_for
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.core.specs import match_config
from grace_arena.io.exports import export

C, X = Ruling.CORRECT, Ruling.INCORRECT


def _played(store, rules, n_tossups: int = 3):
    """Red and Blue on the sample packet's first tossups, the packet in the record as a
    room's server keeps it: Ann takes tossup 1 and its bonus (right, wrong, wrong; with
    bouncebacks Bo takes the second part on the bounce, not the third), the rest go
    dead."""
    sample = load_packet(SAMPLE_PACKET_PATH)
    store.save_packet(sample, source=SAMPLE_PACKET_PATH)
    teams = [TeamSpec(id="red", name="Red"), TeamSpec(id="blue", name="Blue")]
    tossups = [t.id for t in sample.tossups[:n_tossups]]
    rm = store.create(match_config(sample, teams, rules=rules, tossup_ids=tossups), now=0.0)
    clock = iter(range(10, 10_000, 10))

    def do(command):
        return rm.handle(command, now=float(next(clock)))

    do(Join(team="red", player="ann", name="Ann"))
    do(Join(team="blue", player="bo", name="Bo"))
    do(StartTossup())
    do(Reveal(to=12))
    do(Buzz(team="red", player="ann"))
    do(Rule(ruling=C))
    for ruling in (C, X, X):
        do(RulePart(ruling=ruling))
        if ruling is X and rules.bouncebacks:  # Blue takes the second part on the bounce
            do(AnswerPart(team="blue", player="bo", text="x"))
            do(RulePart(ruling=C if rm.match.scores["blue"] == 0 else X))
    do(EndMatch())
    return sample, rm


@on_both_backends
def test_a_match_read_from_its_packet_s_first_tossup_has_that_packet_beside_it(store, tmp_path):
    """MODAQ's "Import from QBJ" rebuilds a match only with its packet, which it reads as
    JSON (``PacketLoaderController.loadPacket``: ``tossups`` of ``question`` and ``answer``,
    ``bonuses`` whose ``parts``, ``answers`` and ``values`` are as many); ``fromQBJ`` reads
    cycle i against the packet's tossup i. The export writes the packet the file's
    ``packets`` names beside every match file, not only beside one read from a later
    tossup: a director has nothing else MODAQ opens (our packets are YAML)."""
    sample, rm = _played(store, rules_for("acf"))
    out = tmp_path / "qbj"
    written = export(store.engine, "qbj", out, [rm.id])
    match = json.loads((out / f"match-{rm.id}.qbj").read_text())
    assert match["packets"] == sample.packet.id
    packet_path = out / f"{sample.packet.id}.json"
    assert packet_path in written
    packet = json.loads(packet_path.read_text())
    assert [t["question"] for t in packet["tossups"]] == [t.text for t in sample.tossups[:3]]
    assert all(t["answer"] for t in packet["tossups"])
    assert len(packet["bonuses"]) == len(sample.bonuses)
    for bonus in packet["bonuses"]:
        assert bonus["leadin"]
        assert len(bonus["parts"]) == len(bonus["answers"]) == len(bonus["values"])
    # cycle i is tossup i of that packet
    numbers = [q["tossup_question"]["question_number"] for q in match["match_questions"]]
    assert numbers == list(range(1, len(numbers) + 1))


@on_both_backends
def test_matches_of_one_packet_share_the_packet_with_the_most_tossups(store, tmp_path):
    """Two matches reading the same packet from its first tossup, one of 2 tossups and one
    of 4: one packet file, holding the 4 (each match's cycle i is its tossup i)."""
    sample, short = _played(store, rules_for("acf"), n_tossups=2)
    _, long = _played(store, rules_for("acf"), n_tossups=4)
    out = tmp_path / "qbj"
    export(store.engine, "qbj", out, [short.id, long.id])
    packets = sorted(p.name for p in out.glob("*.json"))
    assert packets == [f"{sample.packet.id}.json"]
    packet = json.loads((out / packets[0]).read_text())
    assert [t["question"] for t in packet["tossups"]] == [t.text for t in sample.tossups[:4]]


@on_both_backends
def test_a_bounceback_is_written_so_that_modaq_loads_the_rest_of_the_match(store, tmp_path):
    """MODAQ's QBJ import cannot carry a bounceback: ``fromQBJ`` (``src/qbj/QBJ.ts``) gives
    each part of a cycle's bonus to the team that answered the tossup
    (``cycle.setBonusPartAnswer(j, correctTeamName, part.controlled_points)``), skips a part
    whose ``controlled_points`` is 0 before it looks at ``bounceback_points``, and refuses the
    whole file ("QBJ files with bouncebacks are currently unsupported") for a part with
    both. So a bounceback part is written with ``controlled_points`` 0 and its points in
    ``bounceback_points`` (and the team's ``bonus_bounceback_points``, which YellowFruit
    adds): MODAQ loads the match and rebuilds all of it but the bounceback points."""
    _, rm = _played(store, rules_for("naqt", bouncebacks=True))
    out = tmp_path / "qbj"
    export(store.engine, "qbj", out, [rm.id])
    match = json.loads((out / f"match-{rm.id}.qbj").read_text())
    parts = [p for q in match["match_questions"] if "bonus" in q for p in q["bonus"]["parts"]]
    assert parts[0]["controlled_points"] > 0 and parts[1]["bounceback_points"] > 0
    assert all(not (p["controlled_points"] and p["bounceback_points"]) for p in parts)
    teams = {t["team"]["name"]: t for t in match["match_teams"]}
    assert teams["Blue"]["bonus_bounceback_points"] == parts[1]["bounceback_points"]
    assert teams["Red"]["bonus_points"] == parts[0]["controlled_points"]


@on_both_backends
def test_a_match_with_bouncebacks_has_a_game_of_modaq_s_own_beside_it(store, tmp_path):
    """What MODAQ's QBJ import cannot rebuild, its own games hold: "Import game"
    (``src/components/dialogs/ImportGameDialog.tsx``, ``onLoad``) reads ``players``
    (``name``, ``teamName``, ``isStarter``), ``packet``, ``gameFormat`` (a version its
    ``GameFormats.getUpgradedFormatVersion`` takes as it is) and ``cycles``; its score
    (``GameState.getScoreChangeFromCycle``) counts a cycle's ``correctBuzz`` and first wrong
    buzz by the packet's tossup ``tossupIndex`` at ``marker.position``, and each bonus part
    for the team the part names (``bonusAnswer.parts[].teamName``): a bounceback is the
    other team's part. A match without bouncebacks has none (its QBJ file is enough)."""
    sample, rm = _played(store, rules_for("naqt", bouncebacks=True))
    _, plain = _played(store, rules_for("naqt"))
    out = tmp_path / "qbj"
    written = export(store.engine, "qbj", out, [rm.id, plain.id])
    path = out / f"match-{rm.id}.modaq.json"
    assert path in written and not (out / f"match-{plain.id}.modaq.json").exists()
    game = json.loads(path.read_text())
    assert game["gameFormat"]["version"] == "2024-03-20"
    assert game["gameFormat"]["bonusesBounceBack"] is True
    assert (game["gameFormat"]["negValue"], game["gameFormat"]["powers"]) == (
        -5,
        [{"marker": "(*)", "points": 15}],
    )
    assert {(p["name"], p["teamName"], p["isStarter"]) for p in game["players"]} == {
        ("Ann", "Red", True),
        ("Bo", "Blue", True),
    }
    assert [t["question"] for t in game["packet"]["tossups"]] == [
        t.text for t in sample.tossups[:3]
    ]
    assert game["packet"]["bonuses"][0]["parts"][0].keys() == {"question", "answer", "value"}
    first = game["cycles"][0]
    correct = first["correctBuzz"]
    assert correct["tossupIndex"] == 0 and correct["marker"]["player"]["name"] == "Ann"
    assert correct["marker"]["points"] == 15  # before the power mark
    assert first["bonusAnswer"]["receivingTeamName"] == "Red"
    assert first["bonusAnswer"]["parts"] == [
        {"teamName": "Red", "points": 10},
        {"teamName": "Blue", "points": 10},  # the bounceback
        {"teamName": "", "points": 0},
    ]
    assert len(game["cycles"]) == 1  # the tossups read


def test_two_matches_over_one_range_of_a_packet_with_other_tossups_name_other_packets():
    """MODAQ reads a match against the packet file its QBJ names (``QBJ.fromQBJ``): a round
    that read tossups 7, 8 and 10 and one that read 7, 9 and 10 cannot share one file named
    after the range 7-10; a plain run of tossups keeps the range's name (``sample-7-9``)."""
    from types import SimpleNamespace

    from grace_arena.io.exports import qbj_packet_name

    stored = {("sample", f"t{i}"): SimpleNamespace(position=i - 1) for i in range(1, 13)}

    def match(*numbers: int):
        tossups = [SimpleNamespace(id=f"t{i}") for i in numbers]
        return SimpleNamespace(packet_id="sample", config=SimpleNamespace(tossups=tossups))

    assert qbj_packet_name(match(1, 2, 3), stored) == "sample"
    assert qbj_packet_name(match(7, 8, 9), stored) == "sample-7-9"
    one, other = qbj_packet_name(match(7, 8, 10), stored), qbj_packet_name(match(7, 9, 10), stored)
    assert one.startswith("sample-7-10-") and other.startswith("sample-7-10-") and one != other
