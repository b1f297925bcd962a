"""``grace-arena export --format sqbs``: the hand-worked event of test_stats as an SQBS
tournament file, read back line by line in the layout SQBS fixes (grace_arena.io.sqbs), and
SQBS's limit on tossup point values refused in one line."""

from __future__ import annotations

from backends import on_both_backends
from test_stats import played_event
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.formats import rules_for
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet

runner = CliRunner()


def export(db_url: str, out, event: str = "stats"):
    return runner.invoke(app, ["export", "--format", "sqbs", "--event", event, "--out", str(out),
                               "--db", db_url])  # fmt: skip


@on_both_backends
def test_an_event_with_bonuses_is_an_sqbs_file(db_url, tmp_path) -> None:
    played_event(db_url)[1].dispose()
    out = tmp_path / "stats.sqbs"
    result = export(db_url, out)
    assert result.exit_code == 0, result.output
    raw = out.read_bytes()
    assert raw.endswith(b"\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    lines = raw.decode().split("\r\n")[:-1]
    at = 0

    def take(n: int = 1) -> list[str]:
        nonlocal at
        at += n
        return lines[at - n : at]

    # teams: count, then per team players + 1, name, players
    assert take() == ["3"]
    assert take(4) == ["3", "Red", "Ada", "Ann"]  # (the event's players in its order)
    assert take(3) == ["2", "Blue", "Bo"]
    assert take(3) == ["2", "Green", "Gil"]
    assert take() == ["2"]  # games
    games = []
    for _ in range(2):
        head = take(7)  # id, teams, scores, tossups heard, round
        bonus = take(4)
        overtime = take(3)
        forfeit_lightning = take(3)
        slots = [take(7) for _ in range(16)]
        games.append((head, bonus, overtime, forfeit_lightning, slots))
    (head, bonus, overtime, rest, slots) = games[0]
    assert head[1:] == ["0", "1", "75", "20", "4", "1"]  # Red 75 Blue 20, 4 TUH, round 1
    # bouncebacks: 10000 × parts bounced to the team + bonuses heard; 10000 × bounceback points
    # + bonus points (Red: 2 parts, 2 bonuses, 10 and 40; Blue: 2 parts, 1 bonus, 10 and 10)
    assert bonus == ["20002", "100040", "20001", "100010"]
    assert overtime == ["0", "0", "0"] and rest == ["0", "0", "0"]
    # player slots alternate Red, Blue: player, games played, 15s, 10s, -5s, (4th), points
    # Ann: a power, and a wrong answer after Bo's neg, worth 0 (NAQT negs the first team only)
    assert slots[0] == ["1", "1.00", "1", "0", "0", "0", "15"]
    assert slots[1] == ["0", "1.00", "0", "1", "2", "0", "0"]  # Bo
    assert slots[2] == ["0", "1.00", "0", "1", "0", "0", "10"]  # Ada
    assert all(s == ["-1", "0", "0", "0", "0", "0", "0"] for s in slots[3:])
    (head, bonus, _, _, slots) = games[1]
    assert head[1:] == ["0", "2", "20", "105", "4", "2"]
    assert bonus == ["30001", "100000", "30003", "100060"]
    assert slots[0][0] == "1" and slots[1] == ["0", "1.00", "1", "2", "0", "0", "35"]  # Gil
    # a team's players' tossup points and its bonus and bounceback points add up to its score
    for head, bonus, _, _, slots in games:
        for side in (0, 1):
            tossups = sum(int(s[6]) for s in slots[side::2])
            bounceback, bonus_points = divmod(int(bonus[2 * side + 1]), 10000)
            assert tossups + bounceback + bonus_points == int(head[3 + side])
    options = take(17)
    assert options[:5] == ["1", "3", "3", "0", "1"]  # bonuses, bouncebacks, powers/negs, TUH
    assert options[-2:] == ["0", "1"]  # no divisions; sort by record
    assert take() == ["Stats"] and take(5) == ["", "", "", "", "1"]
    assert take(7)[0] == "_rounds.html" and take() == [""]
    assert take(5) == ["0", "3", "-1", "-1", "-1"]  # no divisions
    assert take(4) == ["15", "10", "-5", "0"]  # the tossup point values
    packet = load_packet(SAMPLE_PACKET_PATH).packet.id
    assert take(3) == ["2", packet, packet]
    assert take(4) == ["3", "0", "0", "0"] and at == len(lines)


def test_more_than_four_tossup_values_are_refused_in_one_line(db_url, tmp_path) -> None:
    naqt = rules_for("naqt", bouncebacks=True)
    other = rules_for("naqt", power_points=20, neg_points=-10, bouncebacks=True)
    played_event(db_url, rules={1: naqt, 2: other})[1].dispose()
    result = export(db_url, tmp_path / "x.sqbs")
    assert result.exit_code == 1
    error = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert error == [
        "error: SQBS supports at most 4 tossup point values; this event's matches use 5 "
        "(20, 15, 10, -5, -10)"
    ]
    assert not (tmp_path / "x.sqbs").exists()
