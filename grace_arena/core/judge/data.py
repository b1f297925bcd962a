"""The data files the judge reads: equivalent names, given names, places and clippings.

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

__all__ = ["RELATIONS", "EquivalenceGroup", "entries", "equivalence_groups", "read_file"]

RELATIONS = ("same", "alias", "distinct")


def read_file(name: str) -> str:
    return resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")


def entries(name: str) -> list[str]:
    """The entries of a one-per-line or space-separated list, comments dropped."""
    entries: list[str] = []
    for line in read_file(name).splitlines():
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
    for row in csv.DictReader(io.StringIO(read_file("equivalents.csv"))):
        forms = tuple(form.strip() for form in row["forms"].split("|") if form.strip())
        relation, reason = row["relation"].strip(), row["reason"].strip()
        if relation not in RELATIONS or len(forms) < 2 or not reason:
            raise ValueError(f"equivalents.csv: bad row {row!r}")
        groups.append(EquivalenceGroup(forms, relation, reason))
    return tuple(groups)
