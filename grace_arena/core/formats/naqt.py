"""NAQT: 20 tossup–bonus cycles, powers 15, -5 for the first team's wrong interrupt only,
bouncebacks as the tournament chooses, no bonuses in overtime; timed halves (``half_time``:
9 minutes in NAQT's rules for schools, 10 for colleges) as the tournament chooses
(``grace_arena.core.officiating``)."""

from grace_arena.core.formats import CLOCKS, OFFICIATING, Format

FORMAT = Format(
    name="naqt",
    label="NAQT: powers 15, -5",
    order=3,
    rules={
        "correct_points": 10, "power_points": 15, "neg_points": -5, "neg_first_team_only": True,
        "bonuses": True, "bouncebacks": False, "regulation_tossups": 20, "overtime_bonuses": False,
        **OFFICIATING, "overtime_tossups": 3,
    },
    options=CLOCKS | {"bouncebacks", "half_time"},
)  # fmt: skip
