"""What each word costs the server per role: building and encoding one state (the views are
built once per role and word, then the same bytes go to every socket of that role).

    .venv/bin/python bench/bench_views.py

A match of two human teams and a model player, 60 words into a 136-word tossup of 6 clues, with
the model's 6 steps: the median over 2,000 builds of ``state_view(...).model_dump_json()`` for
each role, with the exhibition off (a display gets no curve while the words are read) and on
(a display gets the curve of the steps read so far; the moderator gets it either way).
"""

from __future__ import annotations

import statistics
import time

from grace_arena.core.commands import Reveal, StartTossup
from grace_arena.core.config import MatchConfig, ModelBuzz, TeamKind, TeamSpec, TossupSpec
from grace_arena.core.events import event_to_dict
from grace_arena.core.match import Match
from grace_arena.server.views import ModelStep, ModelTrajectory, RoomFacts, state_view

N_WORDS, READ, BUILDS = 136, 60, 2000
CLUE_ENDS = (23, 42, 71, 96, 113, 135)


def facts_and_match(exhibition: bool) -> tuple[RoomFacts, Match]:
    config = MatchConfig(
        teams=(
            TeamSpec(id="red", name="Red"),
            TeamSpec(id="blue", name="Blue"),
            TeamSpec(
                id="model", name="Robo", kind=TeamKind.MODEL, model="tfidf",
                buzzes={"t0": ModelBuzz(word_index=CLUE_ENDS[-2], guess="Moby-Dick")},
                confidence="logit", threshold=0.6,
            ),
        ),
        tossups=(TossupSpec(id="t0", n_words=N_WORDS, clue_ends=CLUE_ENDS, answer="Moby-Dick"),),
        exhibition=exhibition,
    )  # fmt: skip
    match, _ = Match.create(config, now=0.0)
    log = [event_to_dict(ev) for ev in match.handle(StartTossup(tossup_id="t0"), now=1.0)]
    for word in range(READ):
        log += [event_to_dict(ev) for ev in match.handle(Reveal(), now=2.0 + word)]
    steps = tuple(
        ModelStep(word=end, guess="Moby-Dick", confidence=k / 6, logit=k / 6, verbal=k / 7)
        for k, end in enumerate(CLUE_ENDS)
    )
    facts = RoomFacts(
        match_id=1, join_code="ABCDEF", words={"t0": [f"word{i}" for i in range(N_WORDS)]},
        wpm=240, running=True, trajectories={"model": {"t0": ModelTrajectory(steps)}},
        tossup_log=log,
    )  # fmt: skip
    return facts, match


def main() -> None:
    print(f"one state per role, {READ} words into a {N_WORDS}-word tossup (median of {BUILDS})")
    print(f"{'exhibition':>10} {'role':>10} {'µs':>7} {'bytes':>7}")
    for exhibition in (False, True):
        facts, match = facts_and_match(exhibition)
        for role in ("player", "display", "moderator"):
            times = []
            for _ in range(BUILDS):
                start = time.perf_counter()
                data = state_view(match, facts, role, now=100.0).model_dump_json()  # type: ignore[arg-type]
                times.append(time.perf_counter() - start)
            median = statistics.median(times) * 1e6
            print(f"{exhibition!s:>10} {role:>10} {median:>7.0f} {len(data):>7}")


if __name__ == "__main__":
    main()
