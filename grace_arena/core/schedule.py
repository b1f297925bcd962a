"""An event's schedule: who meets whom in each round, and in which room. Pure functions.

Two ways to pair teams:

* ``round_robin``: every team meets every other once (the circle method); with an odd number
  of teams one team has a bye each round. More rounds than a round robin has start a second
  cycle.
* ``grace``: what GRACE's competitions did. Human teams meet a model player in some rounds
  (``model_rounds``; by default the odd ones) and another human team in the others. In a
  model round every human team plays one of the model teams, the models taking turns so that
  a human team meets each model before it meets one again; a model player is a program, so it
  may play in several rooms in the same round. In a human round the human teams are paired
  by the circle method; the one left over plays a model (or has a bye when there is none).

Then ``assign_rooms`` puts each round's matches into the rooms: one match per room at a time,
a room playing its matches of a round one after the other when there are more matches than
rooms. A bye takes no room.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Format = Literal["round_robin", "grace"]
FORMATS: tuple[Format, ...] = ("round_robin", "grace")


@dataclass(frozen=True)
class Pairing:
    """One match of a round (two teams), or a bye (one team)."""

    round: int  # 1-based
    teams: tuple[str, ...]

    @property
    def bye(self) -> bool:
        return len(self.teams) == 1


@dataclass(frozen=True)
class Game:
    """A pairing placed in a room: ``slot`` orders a room's matches within a round (0 first).
    A bye has no room."""

    round: int
    room: str | None
    slot: int
    teams: tuple[str, ...]

    @property
    def bye(self) -> bool:
        return len(self.teams) == 1


class ScheduleError(ValueError):
    """The teams, rounds or rooms asked for cannot make a schedule."""


def _circle(teams: Sequence[str], cycle_round: int) -> list[tuple[str, ...]]:
    """Round ``cycle_round`` (0-based) of the circle method: the first team stays, the others
    rotate; with an odd count a ``None`` seat gives a bye. In every other cycle (a second
    round robin) the two sides swap, so home and away alternate."""
    seats: list[str | None] = list(teams)
    if len(seats) % 2:
        seats.append(None)
    n = len(seats)
    k = cycle_round % (n - 1)
    rest = seats[1:]
    rotated = [seats[0], *rest[-k:], *rest[:-k]] if k else seats
    swap = (cycle_round // (n - 1)) % 2 == 1
    out: list[tuple[str, ...]] = []
    for i in range(n // 2):
        a, b = rotated[i], rotated[n - 1 - i]
        if a is None or b is None:
            out.append(((a or b),))  # type: ignore[arg-type]
        else:
            out.append((b, a) if swap else (a, b))
    return out


def round_robin(teams: Sequence[str], rounds: int | None = None) -> list[Pairing]:
    """Every team meets every other once in ``len(teams) - 1`` rounds (``len(teams)`` when the
    count is odd: each team has one bye); ``rounds`` may cut that short or go on into a
    second cycle.

    >>> [p.teams for p in round_robin(["A", "B", "C", "D"], 1)]
    [('A', 'D'), ('B', 'C')]
    """
    _check_teams(teams, at_least=2)
    cycle = len(teams) - 1 if len(teams) % 2 == 0 else len(teams)
    rounds = cycle if rounds is None else rounds
    _check_rounds(rounds)
    return [Pairing(r + 1, teams_) for r in range(rounds) for teams_ in _order(_circle(teams, r))]


def grace(
    humans: Sequence[str],
    models: Sequence[str],
    rounds: int,
    *,
    model_rounds: Collection[int] | None = None,
) -> list[Pairing]:
    """GRACE's pairings: human teams against a model player in ``model_rounds`` (1-based;
    default the odd rounds), against each other in the other rounds.

    >>> [(p.round, p.teams) for p in grace(["H1", "H2"], ["M1", "M2"], 3)]
    [(1, ('H1', 'M1')), (1, ('H2', 'M2')), (2, ('H1', 'H2')), (3, ('H1', 'M2')), (3, ('H2', 'M1'))]
    """
    _check_teams(humans, at_least=1, what="human teams")
    if not models:
        raise ScheduleError("the grace format needs at least one model team")
    _check_teams([*humans, *models], at_least=2)
    _check_rounds(rounds)
    if model_rounds is None:
        model_rounds = range(1, rounds + 1, 2)
    bad = sorted(r for r in model_rounds if not 1 <= r <= rounds)
    if bad:
        raise ScheduleError(f"model rounds {bad} are outside rounds 1-{rounds}")
    if len(humans) < 2 and any(r not in model_rounds for r in range(1, rounds + 1)):
        raise ScheduleError("a round of human teams against each other needs two human teams")
    pairings: list[Pairing] = []
    met = 0  # model rounds so far: the models take turns
    human_round = 0  # human rounds so far: the circle turns on
    for r in range(1, rounds + 1):
        if r in model_rounds:
            for i, h in enumerate(humans):
                pairings.append(Pairing(r, (h, models[(i + met) % len(models)])))
            met += 1
            continue
        games = _order(_circle(humans, human_round))
        human_round += 1
        for teams in games:
            if len(teams) == 1:  # the odd human team out plays a model instead of a bye
                teams = (teams[0], models[(human_round + len(humans)) % len(models)])
            pairings.append(Pairing(r, teams))
    return pairings


def _order(games: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Matches first, the bye (if any) last."""
    return sorted(games, key=len, reverse=True)


def assign_rooms(pairings: Sequence[Pairing], rooms: Sequence[str]) -> list[Game]:
    """Place each round's matches in ``rooms``, in order: the i-th match of a round goes to
    room ``i mod len(rooms)``, in slot ``i div len(rooms)``. A bye has no room."""
    if not rooms:
        raise ScheduleError("an event needs at least one room")
    if len(set(rooms)) != len(rooms):
        raise ScheduleError(f"room names must differ: {list(rooms)}")
    games: list[Game] = []
    placed: dict[int, int] = {}
    for p in pairings:
        if p.bye:
            games.append(Game(p.round, None, 0, p.teams))
            continue
        i = placed.get(p.round, 0)
        placed[p.round] = i + 1
        games.append(Game(p.round, rooms[i % len(rooms)], i // len(rooms), p.teams))
    return games


_IN_A_ROW = {2: "two", 3: "three", 4: "four", 5: "five"}


def crowded_rounds(games: Sequence[Game], rooms: Sequence[str]) -> list[str]:
    """One line for each round with more matches than rooms: which rooms play several of its
    matches one after the other (``round 1 has 3 matches for 2 rooms: room 1 plays two in a
    row``). A room named by a number is called ``room N``."""
    out = []
    for number in sorted({g.round for g in games}):
        played = [g for g in games if g.round == number and not g.bye]
        if len(played) <= len(rooms):
            continue
        counts = {room: sum(g.room == room for g in played) for room in rooms}
        rows = []
        for room, count in counts.items():
            if count > 1:
                name = f"room {room}" if room.isdigit() else room
                rows.append(f"{name} plays {_IN_A_ROW.get(count, str(count))} in a row")
        places = f"{len(rooms)} room{'s' if len(rooms) != 1 else ''}"
        out.append(f"round {number} has {len(played)} matches for {places}: {', '.join(rows)}")
    return out


def schedule(
    humans: Sequence[str],
    models: Sequence[str],
    *,
    rounds: int | None,
    rooms: Sequence[str],
    format: Format = "round_robin",
    model_rounds: Collection[int] | None = None,
) -> list[Game]:
    """The whole schedule: pairings by ``format`` placed in ``rooms``."""
    if format == "round_robin":
        if model_rounds:
            raise ScheduleError("model rounds are an option of the grace format")
        pairings = round_robin([*humans, *models], rounds)
    elif format == "grace":
        if rounds is None:
            raise ScheduleError("the grace format needs a number of rounds")
        pairings = grace(humans, models, rounds, model_rounds=model_rounds)
    else:
        known = ", ".join(f.replace("_", "-") for f in FORMATS)
        raise ScheduleError(
            f"format must be one of {known} (how teams are paired; a game's rules, such as "
            f"acf, are the event's rules), not {format!r}"
        )
    return assign_rooms(pairings, rooms)


# --------------------------------------------------------------------------------------------
# Standard schedules: the teams, rooms and rounds a director is handed by the team count
#
# Made here, by the circle method, not copied from any other program's tables: up to
# STANDARD_ONE_POOL teams play one round robin; more play in pools of at most
# STANDARD_POOL_MAX teams (as few pools as that allows, their sizes one apart, dealt by the
# snake). Each pool has rooms of its own, one per game of a full round (an odd pool has a bye
# each round), and each round's games are put in the pool's rooms so that every team visits
# them evenly: none plays in a room more than ceil(games / rooms) times.

#: The most teams a standard schedule puts in one round robin, and the most in one pool.
STANDARD_ONE_POOL = 10
STANDARD_POOL_MAX = 8
#: The team counts standard schedules cover.
STANDARD_TEAMS = range(4, 25)


@dataclass(frozen=True)
class StandardSchedule:
    """A standard schedule: its pools (teams in seed order), the rooms (named 1, 2, ...; each
    pool has its own) and the games of every round (byes without a room)."""

    pools: list[list[str]]
    pool_rooms: list[list[str]]
    games: list[Game]

    @property
    def rooms(self) -> list[str]:
        return [r for rooms in self.pool_rooms for r in rooms]

    @property
    def rounds(self) -> int:
        return max(g.round for g in self.games)


def standard_pool_count(n: int) -> int:
    """How many pools a standard schedule of ``n`` teams has.

    >>> [standard_pool_count(n) for n in (4, 10, 11, 16, 17, 24)]
    [1, 1, 2, 2, 3, 3]
    """
    if n not in STANDARD_TEAMS:
        raise ScheduleError(
            f"standard schedules are for {STANDARD_TEAMS.start} to {STANDARD_TEAMS.stop - 1} "
            f"teams, not {n}"
        )
    return 1 if n <= STANDARD_ONE_POOL else -(-n // STANDARD_POOL_MAX)


def standard_schedule(teams: Sequence[str]) -> StandardSchedule:
    """The standard schedule of ``teams`` (in seed order): :func:`standard_pool_count` pools
    dealt by the snake, a round robin in each (all pools in the same rounds), each pool's games
    in its own rooms, placed round by round so that each team's games spread over the rooms.

    >>> s = standard_schedule(["a", "b", "c", "d", "e"])
    >>> s.rooms, s.rounds, [g.teams for g in s.games if g.round == 1]
    (['1', '2'], 5, [('b', 'e'), ('c', 'd'), ('a',)])
    """
    _check_teams(teams, at_least=2)
    count = standard_pool_count(len(teams))
    pools = pools_of(teams, count) if count > 1 else [list(teams)]
    pool_rooms: list[list[str]] = []
    games: list[Game] = []
    first = 1
    for pool in pools:
        rooms = [str(first + i) for i in range(len(pool) // 2)]
        first += len(rooms)
        pool_rooms.append(rooms)
        games += _spread_over_rooms(round_robin(pool), rooms)
    games.sort(key=lambda g: (g.round, g.bye, int(g.room or 0)))
    return StandardSchedule(pools, pool_rooms, games)


def _spread_over_rooms(pairings: Sequence[Pairing], rooms: Sequence[str]) -> list[Game]:
    """Each round's games into ``rooms`` (one game a room), so that each team's visits to the
    rooms stay even: none in a room more than ceil(games / rooms) times. A search, round by
    round, over the orders of the rooms (a pool has five rooms at most: 120 orders a round),
    the least visited rooms tried first; where no order keeps that bound (four teams in two
    rooms: three games cannot split 2-1 for all four) it allows one visit more."""
    from itertools import permutations

    numbers = sorted({p.round for p in pairings})
    played = [[p.teams for p in pairings if p.round == n and not p.bye] for n in numbers]
    for number, games in zip(numbers, played, strict=True):
        if len(games) > len(rooms):
            raise ScheduleError(f"round {number} has {len(games)} games for {len(rooms)} rooms")
    count: dict[str, int] = {}
    for games in played:
        for teams in games:
            for t in teams:
                count[t] = count.get(t, 0) + 1
    visits: dict[tuple[str, str], int] = {}
    chosen: list[tuple[str, ...]] = []

    def place(i: int, limit: dict[str, int]) -> bool:
        if i == len(played):
            return True

        def crowding(order: tuple[str, ...]) -> int:
            placed = zip(played[i], order, strict=True)
            return sum(visits.get((t, r), 0) for g, r in placed for t in g)

        for order in sorted(permutations(rooms, len(played[i])), key=crowding):
            pairs = [(t, r) for g, r in zip(played[i], order, strict=True) for t in g]
            if any(visits.get(k, 0) >= limit[k[0]] for k in pairs):
                continue
            for k in pairs:
                visits[k] = visits.get(k, 0) + 1
            chosen.append(order)
            if place(i + 1, limit):
                return True
            chosen.pop()
            for k in pairs:
                visits[k] -= 1
        return False

    for extra in (0, 1, len(numbers)):
        limit = {t: -(-c // len(rooms)) + extra for t, c in count.items()}
        if place(0, limit):
            break
    out = [Game(p.round, None, 0, p.teams) for p in pairings if p.bye]
    for number, games, order in zip(numbers, played, chosen, strict=True):
        out += [Game(number, room, 0, teams) for teams, room in zip(games, order, strict=True)]
    return out


# --------------------------------------------------------------------------------------------
# The card system (NAQT's, at its High School National Championship Tournament)
#
# Every team holds a numbered card; the schedule of the phase is a fixed list, made before
# the first game, of which two cards meet in each round. When a game ends the winner takes
# the card nearer #1 and the loser the other, so a team's opponents follow its record
# without anyone re-pairing by hand. The schedule is made here so that two cards meet only
# when their holders' records are sure to be within one win (and one loss) of each other,
# whatever the results before: each card's possible records are followed round by round
# (a game between equal records leaves both cards' records certain), and each round pairs
# the cards in order of record, the best first, so that equal records meet and a group's odd
# card meets the first of the next group.


@dataclass(frozen=True)
class CardRound:
    """One round of a card schedule: the pairs of cards that meet (the lower number first)
    and the cards whose holders have a bye."""

    games: tuple[tuple[int, int], ...]
    byes: tuple[int, ...] = ()


def card_schedule(cards: int, rounds: int) -> list[CardRound]:
    """The card schedule of ``cards`` cards (1..cards) for ``rounds`` rounds. An odd count
    gives one card a bye each round: the one whose holder has surely played the most games,
    the worst of those.

    >>> [r.games for r in card_schedule(4, 2)]
    [((1, 2), (3, 4)), ((1, 3), (2, 4))]
    """
    if cards < 2:
        raise ScheduleError(f"a card system needs at least 2 teams, got {cards}")
    _check_rounds(rounds)
    records: dict[int, set[tuple[int, int]]] = {c: {(0, 0)} for c in range(1, cards + 1)}

    def order(c: int) -> tuple[int, int, int]:
        wins = [w for w, _ in records[c]]
        losses = [lo for _, lo in records[c]]
        return (-(min(wins) + max(wins)), min(losses) + max(losses), c)

    def close(a: int, b: int) -> bool:
        return all(
            abs(wa - wb) <= 1 and abs(la - lb) <= 1
            for wa, la in records[a]
            for wb, lb in records[b]
        )

    out = []
    for _ in range(rounds):
        ranked = sorted(records, key=order)
        byes: list[int] = []
        if len(ranked) % 2:
            played = {c: min(w + lo for w, lo in records[c]) for c in ranked}
            most = max(played.values())
            byes.append(next(c for c in reversed(ranked) if played[c] == most))
            ranked.remove(byes[0])
        games: list[tuple[int, int]] = []
        while len(ranked) >= 2:
            a, b = ranked[0], ranked[1]
            if not close(a, b):
                byes.append(ranked.pop(0))  # no card near enough: its holder sits this out
                continue
            del ranked[:2]
            low, high = min(a, b), max(a, b)
            both = records[a] | records[b]
            records[low] = {(w + 1, lo) for w, lo in both}
            records[high] = {(w, lo + 1) for w, lo in both}
            games.append((low, high))
        byes += ranked
        out.append(CardRound(tuple(games), tuple(sorted(byes))))
    return out


def deal_cards(seeds: Sequence[str]) -> dict[int, str]:
    """The first cards of ``seeds`` (best first): the top half on the odd cards, the bottom
    half on the even ones, so that round 1 (cards 1 v 2, 3 v 4, ...) pairs the i-th seed with
    the (n/2 + i)-th and the best seeds meet late; an odd last seed holds the last card.

    >>> deal_cards(["a", "b", "c", "d"])
    {1: 'a', 2: 'c', 3: 'b', 4: 'd'}
    """
    _check_teams(seeds, at_least=2)
    half = len(seeds) // 2
    dealt = {2 * i + 1: seeds[i] for i in range(half)}
    dealt |= {2 * i + 2: seeds[half + i] for i in range(half)}
    if len(seeds) % 2:
        dealt[len(seeds)] = seeds[-1]
    return dict(sorted(dealt.items()))


def card_round(holders: Mapping[int, str], card_round_: CardRound, round: int) -> list[Pairing]:
    """The games (and byes) of a round of the card schedule, by who holds each card."""
    games = [Pairing(round, (holders[a], holders[b])) for a, b in card_round_.games]
    return games + [Pairing(round, (holders[c],)) for c in card_round_.byes]


def pass_cards(
    holders: Mapping[int, str], card_round_: CardRound, winners: Mapping[frozenset[str], str]
) -> dict[int, str]:
    """The cards after a round: in each game the winner (``winners`` by the pair of teams)
    takes the card nearer #1, the loser the other; a bye keeps its card.

    >>> pass_cards({1: "a", 2: "b"}, CardRound(((1, 2),)), {frozenset("ab"): "b"})
    {1: 'b', 2: 'a'}
    """
    after = dict(holders)
    for a, b in card_round_.games:
        pair = frozenset((holders[a], holders[b]))
        won = winners.get(pair)
        if won not in pair:
            raise ScheduleError(f"the game between {' and '.join(sorted(pair))} has no winner")
        after[a] = won
        after[b] = holders[b] if won == holders[a] else holders[a]
    return dict(sorted(after.items()))


def _check_teams(teams: Sequence[str], *, at_least: int, what: str = "teams") -> None:
    if len(teams) < at_least:
        raise ScheduleError(f"a schedule needs at least {at_least} {what}, got {len(teams)}")
    if len(set(teams)) != len(teams):
        raise ScheduleError(f"team ids must differ: {list(teams)}")


def _check_rounds(rounds: int) -> None:
    if rounds < 1:
        raise ScheduleError(f"rounds must be at least 1, got {rounds}")


# --------------------------------------------------------------------------------------------
# Phases: pools, brackets, seeding from standings, carryover
#
# A tournament runs in phases (YellowFruit's ``Phase.ts``, QBJ's ``Phase``): the prelims, in
# pools that each play a round robin; playoffs, whose pools are re-bracketed from the prelims'
# finish (the first teams of every pool together, the next ones together, ...), games between
# teams that meet again carried over from the prelims rather than played twice; finals (one
# game, or a double final in which the team with the advantage must be beaten twice); and
# tiebreaker games that settle who advances where teams share a rank at a cut.

PhaseKind = Literal["prelim", "playoff", "finals", "tiebreaker"]
PHASE_KINDS: tuple[PhaseKind, ...] = ("prelim", "playoff", "finals", "tiebreaker")

#: How wild cards (and teams from different pools at one place) are ordered: by their rank in
#: their pool, then points per bonus; or by their record (win %), then points per bonus.
#: YellowFruit's ``WildCardRankingMethod`` (``RankThenPPB``, ``RecordThanPPB``).
Seeding = Literal["rank_then_ppb", "record_then_ppb"]
SEEDINGS: tuple[Seeding, ...] = ("rank_then_ppb", "record_then_ppb")


def pools_of(teams: Sequence[str], count: int) -> list[list[str]]:
    """``teams`` (in seed order) dealt into ``count`` pools by the snake (1, 2, 2, 1, 1, 2,
    ...), so that every pool has the same strength.

    >>> pools_of(["1", "2", "3", "4", "5", "6"], 2)
    [['1', '4', '5'], ['2', '3', '6']]
    """
    _check_teams(teams, at_least=2 * count if count > 0 else 2)
    if count < 1:
        raise ScheduleError(f"pools must be at least 1, got {count}")
    pools: list[list[str]] = [[] for _ in range(count)]
    for i, team in enumerate(teams):
        lap, at = divmod(i, count)
        pools[at if lap % 2 == 0 else count - 1 - at].append(team)
    return pools


def pooled_round_robin(pools: Sequence[Sequence[str]]) -> list[Pairing]:
    """A round robin within each pool, the pools' rounds played at the same time (round 1 of
    every pool is the event's round 1); a pool with fewer rounds is done sooner.

    >>> [(p.round, p.teams) for p in pooled_round_robin([["a", "b"], ["c", "d"]])]
    [(1, ('a', 'b')), (1, ('c', 'd'))]
    """
    if not pools:
        raise ScheduleError("a phase needs at least one pool")
    _check_teams([t for pool in pools for t in pool], at_least=2)
    per_pool = [round_robin(pool) for pool in pools]
    rounds = max(p.round for games in per_pool for p in games)
    return [
        p
        for r in range(1, rounds + 1)
        for games in per_pool
        for p in games
        if p.round == r and not p.bye
    ] + [
        p
        for r in range(1, rounds + 1)
        for games in per_pool
        for p in games
        if p.round == r and p.bye
    ]


def crossover(
    groups: Sequence[Sequence[str]], *, met: Collection[frozenset[str]] = ()
) -> list[Pairing]:
    """The games of a pool whose teams come from ``groups`` (their earlier pools) and carry
    over the games they played among themselves: each team meets every team it has not met
    (``met``: pairs that already played; by default every pair within a group). Two groups of
    one size play ``size`` rounds, round ``k`` pairing the ``i``-th team of the first group
    with the ``(i + k)``-th of the second; otherwise the rounds of a round robin of all the
    teams, less the games carried over, rounds left empty dropped.

    >>> [(p.round, p.teams) for p in crossover([["A1", "A2"], ["B1", "B2"]])]
    [(1, ('A1', 'B1')), (1, ('A2', 'B2')), (2, ('A1', 'B2')), (2, ('A2', 'B1'))]
    """
    teams = [t for g in groups for t in g]
    _check_teams(teams, at_least=2)
    done = set(met) or {frozenset((a, b)) for g in groups for a in g for b in g if a != b}
    if len(groups) == 2 and len(groups[0]) == len(groups[1]) and not met:
        a, b = groups
        m = len(a)
        return [Pairing(k + 1, (a[i], b[(i + k) % m])) for k in range(m) for i in range(m)]
    out: list[Pairing] = []
    for pairing_ in round_robin(teams):
        if pairing_.bye or frozenset(pairing_.teams) in done:
            continue
        out.append(Pairing(pairing_.round, pairing_.teams))
    rounds = sorted({p.round for p in out})
    return [Pairing(rounds.index(p.round) + 1, p.teams) for p in out]


def bracket_order(size: int) -> list[int]:
    """Seeds (1-based) in the order a single-elimination bracket of ``size`` (a power of two)
    lists them, so that the top seeds meet as late as they can: 1 plays ``size``, and the
    winner plays the winner of ``size / 2`` against ``size / 2 + 1``.

    >>> bracket_order(8)
    [1, 8, 4, 5, 2, 7, 3, 6]
    """
    if size < 1 or size & (size - 1):
        raise ScheduleError(f"a bracket's size is a power of two, not {size}")
    order = [1]
    while len(order) < size:
        n = 2 * len(order)
        order = [x for seed in order for x in (seed, n + 1 - seed)]
    return order


def bracket(seeds: Sequence[str]) -> list[str | None]:
    """The first round's slots of a single-elimination bracket of ``seeds`` (best first): the
    bracket is the next power of two, and the places of the missing seeds are byes (None) for
    the top seeds.

    >>> bracket(["a", "b", "c"])
    ['a', None, 'b', 'c']
    """
    _check_teams(seeds, at_least=2)
    size = 1
    while size < len(seeds):
        size *= 2
    return [seeds[s - 1] if s <= len(seeds) else None for s in bracket_order(size)]


def elimination_round(slots: Sequence[str | None], round: int = 1) -> list[Pairing]:
    """One round of single elimination: slots paired in order (the first with the second,
    ...); a team whose slot-mate is None has a bye. The next round's slots are the winners
    (a team with a bye included) in the same order.

    >>> [p.teams for p in elimination_round(["a", None, "b", "c"])]
    [('b', 'c'), ('a',)]
    """
    if len(slots) < 2 or len(slots) % 2:
        raise ScheduleError(
            f"a round of single elimination pairs an even number of slots, not {len(slots)}"
        )
    games: list[tuple[str, ...]] = []
    for a, b in zip(slots[::2], slots[1::2], strict=True):
        present = tuple(t for t in (a, b) if t is not None)
        if present:
            games.append(present)
    return [Pairing(round, teams) for teams in _order(games)]


def final_decided(
    winners: Sequence[str], teams: tuple[str, str], *, advantaged: str | None = None
) -> str | None:
    """The champion once the final's games won so far (``winners``, in order) decide it, or
    None (another game is to be played). Without an advantage the final is one game; with
    one (a double final), the ``advantaged`` team wins with one win, the other needs two.

    >>> final_decided(["b"], ("a", "b"), advantaged="a") is None
    True
    >>> final_decided(["b", "b"], ("a", "b"), advantaged="a")
    'b'
    """
    if advantaged is not None and advantaged not in teams:
        raise ScheduleError(f"the advantaged team {advantaged!r} is not in the final {teams}")
    for w in winners:
        if w not in teams:
            raise ScheduleError(f"{w!r} won a game of a final between {teams[0]} and {teams[1]}")
    if advantaged is None:
        return winners[0] if winners else None
    other = teams[1] if advantaged == teams[0] else teams[0]
    if advantaged in winners:
        return advantaged
    return other if winners.count(other) >= 2 else None


@dataclass(frozen=True)
class Placed:
    """A team's finish in its pool, what seeding and wild cards compare: its rank in the pool
    (after tiebreakers, 1 = first), win %, and points per bonus (None: no bonus heard)."""

    team: str
    pool: str
    rank: int
    win_pct: float
    ppb: float | None


@dataclass(frozen=True)
class Tier:
    """A group of the next phase: the teams at places ``first..first + per_pool - 1`` of
    every pool, and ``wild_cards`` more, the best of those below by the seeding."""

    name: str
    per_pool: int
    wild_cards: int = 0


def seed_key(p: Placed, method: Seeding) -> tuple[float, ...]:
    """The order of teams from different pools (lowest first), by ``method``; the pool and
    the team settle the rest so the order is total."""
    ppb = -(p.ppb or 0.0)
    if method == "rank_then_ppb":
        return (p.rank, ppb)
    if method == "record_then_ppb":
        return (-p.win_pct, ppb)
    raise ScheduleError(f"seeding must be one of {', '.join(SEEDINGS)}, not {method!r}")


def advance(
    placed: Sequence[Placed], tiers: Sequence[Tier], *, method: Seeding = "rank_then_ppb"
) -> list[list[str]]:
    """The teams of each tier of the next phase, in seed order (by ``method`` across pools):
    tier by tier, each pool's next ``per_pool`` teams by rank, then ``wild_cards`` of the
    teams left (the best by ``method``). Teams sharing a rank at a cut must be separated by a
    tiebreaker first (:func:`ties_at_cuts`); the teams left after the last tier are out.

    >>> rows = [Placed(t, p, r, 1 - r / 4, 20 - r) for p in "AB" for r, t in
    ...         enumerate([f"{p}1", f"{p}2", f"{p}3"], start=1)]
    >>> advance(rows, [Tier("top", 1, wild_cards=1), Tier("rest", 1)])
    [['A1', 'B1', 'A2'], ['B2', 'A3']]
    """
    pools: dict[str, list[Placed]] = {}
    for p in sorted(placed, key=lambda p: (p.pool, p.rank, p.team)):
        pools.setdefault(p.pool, []).append(p)
    taken: set[str] = set()
    out: list[list[str]] = []
    for tier in tiers:
        if tier.per_pool < 0 or tier.wild_cards < 0:
            raise ScheduleError(f"tier {tier.name!r}: counts cannot be negative")
        chosen: list[Placed] = []
        for rows in pools.values():
            left = [p for p in rows if p.team not in taken]
            if len(left) < tier.per_pool:
                raise ScheduleError(
                    f"tier {tier.name!r} takes {tier.per_pool} a pool, but pool "
                    f"{rows[0].pool!r} has {len(left)} teams left"
                )
            chosen.extend(left[: tier.per_pool])
        taken |= {p.team for p in chosen}
        rest = sorted(
            (p for p in placed if p.team not in taken), key=lambda p: (*seed_key(p, method), p.team)
        )
        if len(rest) < tier.wild_cards:
            raise ScheduleError(
                f"tier {tier.name!r} wants {tier.wild_cards} wild cards, {len(rest)} teams are left"
            )
        chosen.extend(rest[: tier.wild_cards])
        taken |= {p.team for p in chosen}
        chosen.sort(key=lambda p: (*seed_key(p, method), p.pool, p.team))
        out.append([p.team for p in chosen])
    return out


def ties_at_cuts(placed: Sequence[Placed], tiers: Sequence[Tier]) -> list[list[str]]:
    """Teams of one pool that share a rank across a cut (one of them would go up a tier, the
    other not): each such group needs a tiebreaker before :func:`advance`."""
    cuts: list[int] = []
    at = 0
    for tier in tiers:
        at += tier.per_pool
        cuts.append(at)
    out = []
    pools: dict[str, list[Placed]] = {}
    for p in placed:
        pools.setdefault(p.pool, []).append(p)
    for rows in pools.values():
        rows.sort(key=lambda p: (p.rank, p.team))
        for cut in cuts:
            if 0 < cut < len(rows) and rows[cut - 1].rank == rows[cut].rank:
                out.append(sorted(p.team for p in rows if p.rank == rows[cut].rank))
    return out


def break_ties(placed: Sequence[Placed], tiebreaks: Sequence[tuple[str, str]]) -> list[Placed]:
    """``placed`` with teams that share a rank in their pool ordered by the tiebreaker games
    between them (``(winner, loser)`` pairs): within a tie, a team ranks by the tiebreakers
    it won among the tied teams; ranks are renumbered where the tie is broken.

    >>> rows = [Placed("a", "P", 1, 1.0, None), Placed("b", "P", 2, .5, None),
    ...         Placed("c", "P", 2, .5, None)]
    >>> [(p.team, p.rank) for p in break_ties(rows, [("c", "b")])]
    [('a', 1), ('c', 2), ('b', 3)]
    """
    out: list[Placed] = []
    pools: dict[str, list[Placed]] = {}
    for p in placed:
        pools.setdefault(p.pool, []).append(p)
    for rows in pools.values():
        by_rank: dict[int, list[Placed]] = {}
        for p in rows:
            by_rank.setdefault(p.rank, []).append(p)
        for rank in sorted(by_rank):
            tied = by_rank[rank]
            names = {p.team for p in tied}
            wins = {
                p.team: sum(1 for w, loser in tiebreaks if w == p.team and loser in names)
                for p in tied
            }
            tied.sort(key=lambda p: (-wins[p.team], p.team))
            value = rank
            for i, p in enumerate(tied):
                if i and wins[p.team] != wins[tied[i - 1].team]:
                    value = rank + i
                out.append(Placed(p.team, p.pool, value, p.win_pct, p.ppb))
    return out
