"""The judge on GRACE's own answer lines, where GRACE's public packets are beside the project.

Every form a line accepts is accepted by it, and no line takes another line's main answer (the
packets' lines are of one tournament: their answers are all different).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from grace_arena.core.judge import Directive, judge, parse_answer_line

ROOT = Path(__file__).resolve().parents[1]
PACKETS = [
    path
    for folder in (ROOT.parent / "shared" / "data", Path("/work/shared/data"))
    for path in sorted(folder.glob("grace_packet*_buzzpoints.json"))
]
pytestmark = pytest.mark.skipif(not PACKETS, reason="GRACE's packets are not beside the project")


@pytest.fixture(scope="module")
def lines() -> list[str]:
    seen: dict[str, None] = {}
    for path in PACKETS:
        for tossup in json.loads(path.read_text(encoding="utf-8")):
            seen.setdefault(tossup["answer"], None)
    return list(seen)


def test_every_form_of_a_grace_line_is_accepted_by_it(lines: list[str]) -> None:
    assert len(lines) >= 40
    refused = [
        (form, line)
        for line in lines
        for form in parse_answer_line(line).accept
        if judge(form, line).directive is not Directive.ACCEPT
    ]
    assert not refused, refused[:5]


def test_no_grace_line_takes_another_lines_main_answer(lines: list[str]) -> None:
    taken = [
        (parse_answer_line(a).main, b)
        for a, b in itertools.permutations(lines, 2)
        if judge(parse_answer_line(a).main, b).directive is not Directive.REJECT
    ]
    assert not taken, taken[:5]
