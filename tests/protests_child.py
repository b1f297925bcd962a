"""Plays an ACF match with a correction two cycles back and two protests into a record, prints
its scores, then waits to be killed; run by test_officiating_record.py."""

from __future__ import annotations

import json
import sys
import time

from engine_helpers import config

from grace_arena.core import protests
from grace_arena.core.commands import (
    Buzz,
    CorrectRuling,
    EndMatch,
    FileProtest,
    Join,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    TimeUp,
)
from grace_arena.core.events import Ruling
from grace_arena.core.formats import rules_for
from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore

C, X = Ruling.CORRECT, Ruling.INCORRECT


def play(store: MatchStore) -> int:
    cfg = config(n_tossups=4, bonus_parts=(3, 3, 3, 3), rules=rules_for("acf"))
    rm = store.create(cfg, now=1000.0, join_code="PROT")
    now = iter(range(1001, 2000))
    for team, player in (("red", "red-1"), ("red", "red-2"), ("blue", "blue-1")):
        rm.handle(Join(team=team, player=player, name=player.title()), now=next(now))
    for team, parts in (("red", (C, X, C)), ("blue", (C, C, C))):
        rm.handle(StartTossup(), now=next(now))
        rm.handle(Buzz(team=team, player=f"{team}-1"), now=next(now))
        rm.handle(Rule(ruling=C), now=next(now))
        for ruling in parts:
            rm.handle(RulePart(ruling=ruling), now=next(now))
    rm.handle(StartTossup(), now=next(now))  # red negs, the tossup goes dead
    rm.handle(Buzz(team="red", player="red-1"), now=next(now))
    rm.handle(Rule(ruling=X), now=next(now))
    rm.handle(Reveal(to=10_000), now=next(now))
    rm.handle(TimeUp(), now=2500.0)
    # two cycles back: red-2 buzzed on the first tossup, not red-1; its second part was right
    first = protests.cycles(rm.match.state)[0].rulings
    rm.handle(CorrectRuling(seq=first[0].seq, player="red-2", reason="Bea buzzed"), now=2501.0)
    rm.handle(CorrectRuling(seq=first[2].seq, ruling=C, reason="part 2 was right"), now=2502.0)
    rm.handle(FileProtest(team="red", tossup="3", answer="Carver", reason="on the line"),
              now=2503.0)  # fmt: skip
    rm.handle(FileProtest(team="blue", tossup="2", part=1, answer="x", reason="unclear"),
              now=2504.0)  # fmt: skip
    rm.handle(EndMatch(), now=2505.0)
    return rm.id


if __name__ == "__main__":
    engine = make_engine(sys.argv[1])
    match_id = play(MatchStore(engine))
    print(json.dumps({"match": match_id}), flush=True)
    time.sleep(600)  # killed here
