"""QANTA 2026: hybrid teams of humans and AI players, as the organisers' tournament runner
plays them (its preset ``config/rule-presets/qanta26.json``).

Tossups are the runner's defaults (``shared/types.ts`` lines 555-584): 10 points, no powers,
-5 for a wrong interrupt by the first team to answer (``tossup_penalty_value`` 5,
``tossup_penalty_value_second_team`` 0), and every tossup of the packet. A bonus part is worth
its value (the runner's ``bonus_part_points``, 10), and no part bounces back. The AI players'
rules are the preset's, every one (:class:`~grace_arena.core.config.QantaRules`): tossup
factors by weight class 1.0 / 0.8 / 0.4 (weighted; static deflation 5), autonomous after
K = 1, consult deflation by weight class 1 / 2 / 3 per AI on the team (weighted; static 5;
consult factor 0.5), a right abstention 1. Halftime after 10 tossups is when each team may
change its AIs' modes once (the runner leaves halves to the room; a shorter packet may set
``halftime_after``). What these settings score: :mod:`grace_arena.core.rules.qanta`.
"""

from grace_arena.core.config import QantaRules
from grace_arena.core.formats import CLOCKS, Format

FORMAT = Format(
    name="qanta26",
    label="QANTA 2026: hybrid teams (humans and AI players)",
    order=20,
    rules={
        "correct_points": 10,
        "power_points": None,
        "neg_points": -5,
        "neg_first_team_only": True,
        "bonuses": True,
        "bouncebacks": False,
        "halftime_after": 10,
        "qanta": QantaRules(),
    },
    options=CLOCKS | {"halftime_after"},
)  # fmt: skip
