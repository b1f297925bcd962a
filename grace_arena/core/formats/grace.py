"""GRACE's game: tossups only, +10, +15 power, -5 for every wrong interrupt (PRODUCT.md)."""

from grace_arena.core.formats import Format

FORMAT = Format(
    name="grace",
    label="GRACE: tossups only",
    order=0,
    rules={"correct_points": 10, "power_points": 15, "neg_points": -5, "bonuses": False},
)
