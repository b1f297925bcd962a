"""Applies random commands to a recorded match forever; run by test_kill_and_replay.py.

After each command whose events are committed it prints one JSON line: the last seq, a digest
of the match state and the ids of the buzzes in those events. The parent kills it with
SIGKILL at a random moment and checks the record against what was printed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import sys

from engine_helpers import config
from pydantic import BaseModel

from grace_arena.core.commands import (
    AnswerPart,
    Buzz,
    CallTimeout,
    EndMatch,
    Join,
    Pause,
    ReadPart,
    Resume,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    ThrowOut,
    ThrowOutBonus,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.config import ModelBuzz
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import BuzzTiming, Ruling
from grace_arena.core.formats import rules_for
from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore


def canonical(value):
    """A process-independent form of the state (set order depends on the hash seed)."""
    if dataclasses.is_dataclass(value):
        return {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, (set, frozenset)):
        return sorted(canonical(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def digest(state) -> str:
    return hashlib.sha256(json.dumps(canonical(state), sort_keys=True).encode()).hexdigest()


def main(url: str, seed: int) -> None:
    """Seeds from 10 play tossup–bonus cycles (NAQT with bouncebacks, parts on screen); from
    20 read aloud, 20 tossups of regulation and 20 extras, with timeouts, conferral clocks,
    pauses and throw-outs (replaced by the extras)."""
    rng = random.Random(seed)
    store = MatchStore(make_engine(url))
    buzzes = {f"t{i}": ModelBuzz(word_index=rng.randrange(20), guess="Carver") for i in range(40)}
    bonuses, officiating = seed >= 10, seed >= 20
    cfg = config(
        n_tossups=40, model_buzzes=buzzes,
        **({"rules": rules_for("naqt", bouncebacks=True), "bonus_parts": (3,) * 40,
            "reading_mode": "read_aloud" if officiating else "screen"} if bonuses else {}),
    )  # fmt: skip
    rm = store.create(cfg, now=0.0)
    now = 0.0
    for team in ("red", "blue"):
        rm.handle(Join(team=team, player=f"{team}-1", name=team), now=now)
    while True:
        now += rng.random()
        choices = [
            StartTossup(),
            Reveal(to=rm.match.game.position + rng.randrange(1, 6)),
            Buzz(
                team=rng.choice(["red", "blue"]),
                player="x",
                timing=BuzzTiming(received_mono=now, received_wall=now),
            ),
            Rule(ruling=rng.choice(list(Ruling))),
            TimeUp(),
        ]
        if bonuses:
            team = rng.choice(["red", "blue"])
            choices += [
                AnswerPart(team=team, player=f"{team}-1", text=rng.choice(["x", "part 1"])),
                RulePart(ruling=rng.choice(list(Ruling))),
                RulePart(ruling=rng.choice(list(Ruling))),
                UndoRuling(),
                ThrowOutBonus(),
            ]
        if officiating:
            choices += [
                CallTimeout(team=rng.choice(["red", "blue"])),
                ReadPart(),
                Pause(),
                Resume(),
                ThrowOut(),
            ]
        command = rng.choice(choices)
        if isinstance(command, Buzz):
            command = command.model_copy(update={"player": f"{command.team}-1"})
        if isinstance(command, TimeUp):
            now += 11
        try:
            events = rm.handle(command, now=now)
        except IllegalCommand as exc:
            if "every tossup" in str(exc):
                rm.handle(EndMatch(), now=now)
                return
            continue
        ids = [e.buzz_id for e in events if e.type in ("buzz_accepted", "buzz_refused")]
        line = {"match": rm.id, "seq": rm.seq, "digest": digest(rm.match.state), "buzzes": ids}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
