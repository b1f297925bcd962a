"""PACE: 20 tossup–bonus cycles, powers 20, no negs, no bonuses in overtime."""

from grace_arena.core.formats import OFFICIATING, Format

FORMAT = Format(
    name="pace",
    label="PACE: powers 20, no negs",
    order=2,
    rules={
        "correct_points": 10, "power_points": 20, "neg_points": 0, "bonuses": True,
        "bouncebacks": False, "regulation_tossups": 20, "overtime_bonuses": False,
        **OFFICIATING,
    },
)  # fmt: skip
