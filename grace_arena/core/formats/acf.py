"""ACF: 20 tossup–bonus cycles, no powers, -5 for the first team's wrong interrupt only,
no bonuses in overtime."""

from grace_arena.core.formats import OFFICIATING, Format

FORMAT = Format(
    name="acf",
    label="ACF: 20 cycles, no powers, -5",
    order=1,
    rules={
        "correct_points": 10, "power_points": None, "neg_points": -5, "neg_first_team_only": True,
        "bonuses": True, "bouncebacks": False, "regulation_tossups": 20, "overtime_bonuses": False,
        **OFFICIATING,
    },
)  # fmt: skip
