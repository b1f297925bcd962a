"""The tables the judge derives from its data files (:mod:`grace_arena.core.judge.data`), as
canonical texts: phrases that may stand for one another, pairs kept apart, given names, places
and clippings.

The one-word variants (``colour`` for ``color``) are part of making a word canonical, and so
are in :mod:`grace_arena.core.judge.text`; the tables here are built with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from grace_arena.core.judge.data import (
    RELATIONS,
    EquivalenceGroup,
    entries,
    equivalence_groups,
    read_file,
)
from grace_arena.core.judge.text import fold, normalize, prepare, word_variants

__all__ = [
    "RELATIONS",
    "EquivalenceGroup",
    "PhraseGroup",
    "clippings",
    "distinct_pairs",
    "entries",
    "equivalence_groups",
    "given_names",
    "phrase_groups",
    "phrase_index",
    "place_names",
    "places",
    "read_file",
    "word_variants",
]


@dataclass(frozen=True)
class PhraseGroup:
    """A group whose members are replaced inside longer forms, as canonical token texts."""

    members: tuple[tuple[str, ...], ...]
    relation: str  # "same" or "alias"
    reason: str


@lru_cache(maxsize=1)
def phrase_groups() -> tuple[PhraseGroup, ...]:
    """The ``same`` groups with a member of several words, and every ``alias`` group."""
    word_variants()  # the members' words are canonical, so variants must be known first
    groups: list[PhraseGroup] = []
    for group in equivalence_groups():
        members = tuple(tuple(t.text for t in prepare(form).tokens) for form in group.forms)
        if group.relation == "distinct":
            continue
        if group.relation == "same" and all(len(m) == 1 for m in members):
            continue  # one-word variants are made canonical word by word (word_variants)
        groups.append(PhraseGroup(members, group.relation, group.reason))
    return tuple(groups)


@lru_cache(maxsize=1)
def distinct_pairs() -> dict[tuple[str, str], str]:
    """``(looser form, fuller form)`` -> reason, both ways, as canonical texts."""
    pairs: dict[tuple[str, str], str] = {}
    for group in equivalence_groups():
        if group.relation != "distinct":
            continue
        texts = [prepare(form).text for form in group.forms]
        for a in texts:
            for b in texts:
                if a != b:
                    pairs[(a, b)] = group.reason
    return pairs


@lru_cache(maxsize=1)
def given_names() -> frozenset[str]:
    return frozenset(fold(name) for line in entries("given_names.txt") for name in line.split())


@lru_cache(maxsize=1)
def place_names() -> frozenset[str]:
    """The places in ``places.txt``, normalized (for answers, which are not made canonical)."""
    return frozenset(normalize(place) for place in entries("places.txt"))


@lru_cache(maxsize=1)
def places() -> frozenset[str]:
    """Canonical texts of the places in ``places.txt``."""
    return frozenset(prepare(place).text for place in entries("places.txt"))


@lru_cache(maxsize=1)
def phrase_index() -> dict[str, list[tuple[tuple[str, ...], PhraseGroup]]]:
    """The members that may be replaced, by their first word: every member of a ``same``
    group, the first member of an ``alias`` group."""
    index: dict[str, list[tuple[tuple[str, ...], PhraseGroup]]] = {}
    for group in phrase_groups():
        sources = group.members if group.relation == "same" else group.members[:1]
        for member in sources:
            if member:
                index.setdefault(member[0], []).append((member, group))
    return index


@lru_cache(maxsize=1)
def clippings() -> dict[str, frozenset[str]]:
    """Each clipped word in ``clippings.txt`` with the words it stands for, folded."""
    found: dict[str, frozenset[str]] = {}
    for line in entries("clippings.txt"):
        clip, sep, words = line.partition(":")
        if not sep or not clip.strip() or not words.split():
            raise ValueError(f"clippings.txt: expected 'clip: word word ...', got {line!r}")
        found[fold(clip.strip())] = frozenset(fold(word) for word in words.split())
    return found
