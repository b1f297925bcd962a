"""The data the judge reads: equivalent names, given names and places.

The files live in ``data/`` inside the package and are read with :mod:`importlib.resources`
the first time they are needed. Each is plain text a writer can review:

* ``equivalents.csv`` — ``forms`` (separated by ``|``), ``relation`` and ``reason``. ``same``:
  every form is accepted where the line gives any other. ``alias``: the later forms are
  accepted where the line gives the first, not the other way round (``Holland`` for the
  Netherlands, not the Netherlands for the province). ``distinct``: no looser rule of the judge
  (a dropped designation or middle name) takes one form for another (``Korea`` for ``Republic
  of Korea``).
* ``given_names.txt`` — a first word that marks an unformatted answer line as a person's name.
* ``places.txt`` — places that may qualify another after a comma (``Atlanta, Georgia``).
* ``clippings.txt`` — the clipped words of technical terms a player may give (``mass spec``),
  each with the words it stands for.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

RELATIONS = ("same", "alias", "distinct")


def _read(name: str) -> str:
    return resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")


def _words(name: str) -> list[str]:
    """The entries of a one-per-line or space-separated list, comments dropped."""
    entries: list[str] = []
    for line in _read(name).splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            entries.append(line)
    return entries


@dataclass(frozen=True)
class EquivalenceGroup:
    """One row of ``equivalents.csv``."""

    forms: tuple[str, ...]
    relation: str
    reason: str


@lru_cache(maxsize=1)
def equivalence_groups() -> tuple[EquivalenceGroup, ...]:
    groups: list[EquivalenceGroup] = []
    for row in csv.DictReader(io.StringIO(_read("equivalents.csv"))):
        forms = tuple(form.strip() for form in row["forms"].split("|") if form.strip())
        relation, reason = row["relation"].strip(), row["reason"].strip()
        if relation not in RELATIONS or len(forms) < 2 or not reason:
            raise ValueError(f"equivalents.csv: bad row {row!r}")
        groups.append(EquivalenceGroup(forms, relation, reason))
    return tuple(groups)


@lru_cache(maxsize=1)
def word_variants() -> dict[str, str]:
    """One-word ``same`` groups as a map from every member to the group's first member."""
    from grace_arena.core.judge.text import tokens

    variants: dict[str, str] = {}
    for group in equivalence_groups():
        words = [tokens(form, drop_articles=False) for form in group.forms]
        if group.relation != "same" or any(len(w) != 1 for w in words):
            continue
        for (word,) in words[1:]:
            variants[word] = words[0][0]
    return variants


@dataclass(frozen=True)
class PhraseGroup:
    """A group whose members are replaced inside longer forms, as canonical token texts."""

    members: tuple[tuple[str, ...], ...]
    relation: str  # "same" or "alias"
    reason: str


@lru_cache(maxsize=1)
def phrase_groups() -> tuple[PhraseGroup, ...]:
    """The ``same`` groups with a member of several words, and every ``alias`` group."""
    from grace_arena.core.judge.text import prepare

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
    from grace_arena.core.judge.text import prepare

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
    from grace_arena.core.judge.text import fold

    return frozenset(fold(name) for line in _words("given_names.txt") for name in line.split())


@lru_cache(maxsize=1)
def place_names() -> frozenset[str]:
    """The places in ``places.txt``, normalized (for answers, which are not made canonical)."""
    from grace_arena.core.judge.text import normalize

    return frozenset(normalize(place) for place in _words("places.txt"))


@lru_cache(maxsize=1)
def places() -> frozenset[str]:
    """Canonical texts of the places in ``places.txt``."""
    from grace_arena.core.judge.text import prepare

    return frozenset(prepare(place).text for place in _words("places.txt"))


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
    from grace_arena.core.judge.text import fold

    found: dict[str, frozenset[str]] = {}
    for line in _words("clippings.txt"):
        clip, sep, words = line.partition(":")
        if not sep or not clip.strip() or not words.split():
            raise ValueError(f"clippings.txt: expected 'clip: word word ...', got {line!r}")
        found[fold(clip.strip())] = frozenset(fold(word) for word in words.split())
    return found
