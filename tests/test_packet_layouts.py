"""Bonuses in the packet format, and the packets clubs have: MODAQ's (YAPP's) and QB Reader's
JSON and ``.docx`` files, made here with python-docx in the layouts editors use."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import docx
import pytest
from docx.enum.text import WD_UNDERLINE
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core import packet_layouts as layouts
from grace_arena.core.packet import (
    SAMPLE_PACKET_PATH,
    PacketError,
    _check_imported,
    dump_packet,
    load_packet,
    parse_packet,
    validate_packet_file,
)
from grace_arena.core.packet_layouts import Paragraph, category_of, from_paragraphs

_TAGS = re.compile(r"</?[a-z]+>")

HEAD = "format: grace-arena-packet/1\npacket: {id: p, title: P}\n"
TOSSUP = (
    "tossups:\n  - id: t1\n    category: History\n"
    "    text: This is a tossup. For 10 points, name it.\n    answer: <b>it</b>\n"
)


# --- bonuses in our format ----------------------------------------------------------------------


def test_a_bonus_is_read_with_its_parts_values_and_difficulties() -> None:
    packet = parse_packet(
        HEAD + TOSSUP + "bonuses:\n  - id: b1\n    category: Science\n"
        "    leadin: For 10 points each, name these.\n    parts:\n"
        "      - {text: The largest planet., answer: <b>Jupiter</b>, difficulty: e}\n"
        "      - {text: The ringed one., answer: <b>Saturn</b>, value: 15}\n"
        "      - {text: The red one., answer: <b>Mars</b>, difficulty: Hard}\n"
    )
    (bonus,) = packet.bonuses
    assert bonus.leadin == "For 10 points each, name these."
    assert [(p.value, p.difficulty) for p in bonus.parts] == [(10, "e"), (15, None), (10, "h")]
    assert bonus.value == 35 and packet.bonus("b1") is bonus
    assert packet.counts() == "1 tossup, 1 bonus"


def test_every_problem_of_a_bonus_names_the_bonus_the_part_and_the_field() -> None:
    text = (
        HEAD + TOSSUP + "bonuses:\n"
        "  - id: b1\n    category: Sciense\n    parts:\n"
        "      - text: Name this.\n        answer: '<b>x'\n        value: 0\n"
        "      - text: '  '\n        answer: y\n        difficulty: x\n        valu: 5\n"
        "  - id: b1\n    category: Science\n    parts: []\n"
        "  - id: b3\n    category: Science\n"
    )
    with pytest.raises(PacketError) as raised:
        parse_packet(text, file="club.yaml")
    found = {(p.kind, p.tossup, p.position, p.part, p.field) for p in raised.value.problems}
    assert found == {
        ("bonus", "b1", 1, None, "category"),
        ("bonus", "b1", 1, 1, "answer"),
        ("bonus", "b1", 1, 1, "value"),
        ("bonus", "b1", 1, 2, "text"),
        ("bonus", "b1", 1, 2, "difficulty"),
        ("bonus", "b1", 1, 2, "valu"),
        ("bonus", "b1", 2, None, "id"),
        ("bonus", "b1", 2, None, "parts"),
        ("bonus", "b3", 3, None, "parts"),
    }
    lines = [str(p) for p in raised.value.problems]
    assert (
        "club.yaml:13: bonus 'b1' (#1): part 1: field 'answer': unbalanced tags: missing </b>"
        in lines
    )
    assert any("'Sciense' is not a GRACE category; did you mean 'Science'?" in s for s in lines)
    assert any("part 2: field 'valu': unknown key; did you mean 'value'?" in s for s in lines)
    assert any(
        "bonus 'b1' (#2): field 'id': duplicate id (also used by bonus #1)" in s for s in lines
    )
    assert any(
        "bonus 'b3' (#3): field 'parts': required: give the bonus's parts" in s for s in lines
    )


def test_a_packet_with_bonuses_round_trips_through_yaml_and_json(tmp_path: Path) -> None:
    packet = load_packet(SAMPLE_PACKET_PATH)
    assert len(packet.bonuses) >= 20
    for name in ("copy.yaml", "copy.json"):
        dump_packet(packet, tmp_path / name)
        assert load_packet(tmp_path / name) == packet


def test_a_tossup_only_packet_is_written_without_a_bonuses_key(tmp_path: Path) -> None:
    dump_packet(parse_packet(HEAD + TOSSUP), tmp_path / "p.yaml")
    assert "bonuses" not in (tmp_path / "p.yaml").read_text(encoding="utf-8")


# --- MODAQ's (YAPP's) and QB Reader's JSON --------------------------------------------------------


MODAQ = {
    "name": "Club Open Round 4",
    "tossups": [
        {
            "question": "This <i>novel</i> opens &quot;Call me Ishmael.&quot; For 10 points, (*) "
            "name this Melville book.",
            "answer": "<req>Moby-Dick</req> [or <b><u>The Whale</u></b>]",
            "metadata": "Literature - American, Ed Itor",
        },
        {"question": "This element is H. For 10 points, name it.", "answer": "<b>hydrogen</b>"},
    ],
    "bonuses": [
        {
            "leadin": "For 10 points each, name these planets.",
            "parts": ["The largest.", "The ringed one.", "The red one."],
            "answers": ["<b>Jupiter</b>", "<b>Saturn</b>", "<b>Mars</b>"],
            "values": [10, 10],
            "difficultyModifiers": ["e", "M", "h"],
            "metadata": "Science - Astronomy",
        }
    ],
}


def test_a_modaq_packet_is_read_with_its_tags_categories_values_and_difficulties(
    tmp_path: Path,
) -> None:
    path = tmp_path / "round-4.json"
    path.write_text(json.dumps(MODAQ), encoding="utf-8")
    packet = load_packet(path)
    assert packet.packet.title == "Club Open Round 4" and packet.id == "round-4"
    first, second = packet.tossups
    assert first.text.startswith('This novel opens "Call me Ishmael."') and "(*)" in first.text
    assert first.tokens().power_index is not None
    assert first.answer == "<b>Moby-Dick</b> [or <b><u>The Whale</u></b>]"
    # the editor's tag "<Literature - American, Ed Itor>": category, subcategory, author
    assert (first.category, first.subcategory) == ("Literature", "American")
    assert first.author == "Ed Itor"
    assert (second.category, second.subcategory) == ("Uncategorized", None)
    (bonus,) = packet.bonuses
    assert bonus.category == "Science"
    assert (bonus.subcategory, bonus.author) == ("Astronomy", None)  # "<Science - Astronomy>"
    assert [(p.value, p.difficulty) for p in bonus.parts] == [(10, "e"), (10, "m"), (10, "h")]
    (warning,) = packet.warnings
    assert str(warning) == (
        f"{path}: bonus 'bonus-1' (#1): part 3: warning: the part has no value; it is worth 10"
    )


def test_a_qb_reader_packet_is_read_with_its_categories(tmp_path: Path) -> None:
    data = {
        "tossups": [
            {
                "question_sanitized": "This river flows through Vienna. For 10 points, name it.",
                "answer_sanitized": "Danube",
                "answer": "<b><u>Danube</u></b> [or <b><u>Donau</u></b>]",
                "category": "Geography",
                "subcategory": "Geography",
            }
        ],
        "bonuses": [
            {
                "leadin": "Name these composers.",
                "parts": ["He wrote the Ninth.", "He wrote The Magic Flute.", "He wrote Carmen."],
                "answers": ["<b>Beethoven</b>", "<b>Mozart</b>", "<b>Bizet</b>"],
                "values": [10, 10, 10],
                "difficultyModifiers": ["e", "m", "h"],
                "category": "Fine Arts",
                "subcategory": "Classical Music",
            }
        ],
    }
    path = tmp_path / "qbr.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    packet = load_packet(path)
    assert packet.tossups[0].answer == "<b><u>Danube</u></b> [or <b><u>Donau</u></b>]"
    assert packet.tossups[0].category == "Geography"
    assert packet.bonuses[0].category == "Fine Arts"
    assert packet.bonuses[0].subcategory == "Fine Arts / Classical Music"
    assert packet.warnings == []


def test_a_foreign_packet_s_unusable_question_is_named_like_ours(tmp_path: Path) -> None:
    data = {
        "tossups": [{"question": "", "answer": "x"}],
        "bonuses": [{"leadin": "L.", "parts": ["One."], "answers": ["[unclosed"], "values": [10]}],
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    found = [str(p) for p in validate_packet_file(path)]
    assert found == [
        f"{path}: tossup 'tossup-1' (#1): field 'text': must contain at least one word",
        f"{path}: bonus 'bonus-1' (#1): part 1: field 'answer': unbalanced brackets: missing ']'",
    ]


@pytest.mark.parametrize(
    ("hints", "category"),
    [
        (("Literature - American, Smith",), "Literature"),
        (("American Literature",), "Literature"),
        (("Sci - Bio",), "Science"),
        (("CE",), "Current Events"),
        (("Trash",), "Pop Culture"),
        (("Fine Arts", "Other Fine Arts"), "Fine Arts"),
        (("Social Science - Economics",), "Social Science"),
        (("Ed Itor",), None),
        ((None, ""), None),
    ],
)
def test_categories_are_read_from_what_files_call_them(hints, category) -> None:
    assert category_of(*hints) == category


# --- .docx ----------------------------------------------------------------------------------


class Doc:
    """A .docx packet as an editor writes it (python-docx makes the file)."""

    def __init__(self) -> None:
        self.document = docx.Document()

    def para(self, *runs: str | tuple[str, str], style: str | None = None) -> Doc:
        """A paragraph of runs: plain text, or (text, "b" | "u" | "bu") for bold/underlined."""
        paragraph = self.document.add_paragraph(style=style)
        for run in runs:
            text, how = (run, "") if isinstance(run, str) else run
            made = paragraph.add_run(text)
            made.bold = "b" in how or None
            made.underline = WD_UNDERLINE.SINGLE if "u" in how else None
        return self

    def answer(self, before: str, required: str, after: str = "") -> Doc:
        return self.para(f"ANSWER: {before}", (required, "bu"), after)

    def save(self, path: Path) -> Path:
        self.document.save(str(path))
        return path


def _regular(doc: Doc) -> Doc:
    return (
        doc.para("Club Packet 3")
        .para("Edited by Jo Writer and Sam Checker")
        .para("Tossups")
        .para("1. This author's narrator says (*) you don't know about him. For 10 points, name "
              'this author of "Huck Finn" ("FINN").')
        .answer("Mark ", "Twain", " [or Samuel Clemens]")
        .para("<Literature - American, Jo Writer>")
        .para("2. This element has atomic number 1. For 10 points, name it.")
        .answer("", "hydrogen", " [accept H]")
        .para("Bonuses")
        .para("1. For 10 points each, name these planets.")
        .para("[10e] The largest planet.")
        .answer("", "Jupiter")
        .para("[10m] The ringed planet.")
        .answer("", "Saturn")
        .para("[10h] The planet with Olympus Mons.")
        .answer("", "Mars")
        .para("<Science - Astronomy>")
    )  # fmt: skip


def test_a_docx_packet_in_the_common_layout_is_read_whole(tmp_path: Path) -> None:
    packet = load_packet(_regular(Doc()).save(tmp_path / "club-3.docx"))
    assert packet.packet.title == "Club Packet 3"
    assert packet.packet.description == "Edited by Jo Writer and Sam Checker"
    assert packet.counts() == "2 tossups, 1 bonus" and packet.warnings == []
    twain, hydrogen = packet.tossups
    assert twain.answer == "Mark <b>Twain</b> [or Samuel Clemens]"
    assert twain.category == "Literature"
    # the editor's tag "<Literature - American, Jo Writer>": subcategory and author apart
    assert (twain.subcategory, twain.author) == ("American", "Jo Writer")
    assert '("FINN")' in twain.text and twain.tokens().power_index == 4
    assert "FINN" not in [w.text for w in twain.tokens().words]  # a pronunciation guide
    assert hydrogen.answer == "<b>hydrogen</b> [accept H]"
    (bonus,) = packet.bonuses
    assert bonus.leadin == "For 10 points each, name these planets."
    assert [(p.text, p.answer, p.value, p.difficulty) for p in bonus.parts] == [
        ("The largest planet.", "<b>Jupiter</b>", 10, "e"),
        ("The ringed planet.", "<b>Saturn</b>", 10, "m"),
        ("The planet with Olympus Mons.", "<b>Mars</b>", 10, "h"),
    ]
    assert bonus.category == "Science"


def test_odd_real_layouts_are_placed_and_what_is_assumed_is_said(tmp_path: Path) -> None:
    """No "Bonuses" heading, a part without a value, an answer line split over runs and
    continued on the next paragraph, Word's own numbering, a four-part bonus, tiebreakers, a
    stray paragraph between questions."""
    doc = (
        Doc()
        .para("Tossups")
        .para("This question is numbered by Word. For 10 points, name this city.",
              style="List Number")
        .para("ANSWER: ", ("Par", "b"), ("is", "bu"), " [or Lutetia]")
        .para("[accept Paree]")
        .para("Note to moderators: read slowly.")
        .para("2. This river flows through Cairo and ends in a delta. For 10 points, name it.")
        .answer("the ", "Nile")
        .para("3. For 10 points each, name these four gas giants or ice giants.")
        .para("[10] The largest.")
        .answer("", "Jupiter")
        .para("The one with the most famous rings.")
        .answer("", "Saturn")
        .para("[5] The one tipped on its side.")
        .answer("", "Uranus")
        .para("[5h] The farthest.")
        .answer("", "Neptune")
        .para("Tiebreakers")
        .para("1. This constant is about 3.14. For 10 points, name it.")
        .answer("", "pi")
    )  # fmt: skip
    path = doc.save(tmp_path / "odd.docx")
    packet = load_packet(path)
    assert [t.id for t in packet.tossups] == ["tossup-1", "tossup-2", "extra-tossup-1"]
    assert packet.tossups[0].answer == "<b>Paris</b> [or Lutetia] [accept Paree]"
    (bonus,) = packet.bonuses
    assert [(p.answer, p.value, p.difficulty) for p in bonus.parts] == [
        ("<b>Jupiter</b>", 10, None),
        ("<b>Saturn</b>", 10, None),
        ("<b>Uranus</b>", 5, None),
        ("<b>Neptune</b>", 5, "h"),
    ]
    assert [str(w) for w in packet.warnings] == [
        f"{path}: paragraph 5: warning: no ANSWER line follows this paragraph; left out: "
        "'Note to moderators: read slowly.'",
        f"{path}: paragraph 11: bonus 'bonus-1' (#1): part 2: warning: the part has no value "
        "marker ([10]); it is worth 10",
    ]
    result = CliRunner().invoke(app, ["packet", "validate", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"{path}: 3 tossups, 1 bonus, OK, 2 warnings"


def test_a_bonus_section_without_part_markers_still_makes_bonuses(tmp_path: Path) -> None:
    doc = (
        Doc()
        .para("1. This is the one tossup. For 10 points, name it.")
        .answer("", "it")
        .para("Bonuses")
        .para("1. For 10 points each, name these authors. He wrote Hamlet.")
        .answer("William ", "Shakespeare")
        .para("She wrote Emma.")
        .answer("Jane ", "Austen")
    )
    packet = load_packet(doc.save(tmp_path / "plain.docx"))
    (bonus,) = packet.bonuses
    assert bonus.leadin == "For 10 points each, name these authors."
    assert [p.text for p in bonus.parts] == ["He wrote Hamlet.", "She wrote Emma."]
    assert len(packet.warnings) == 2  # both parts' values assumed, each said


def test_an_unusable_docx_question_is_named_by_its_paragraph(tmp_path: Path) -> None:
    doc = (
        Doc()
        .para("1. A fine tossup. For 10 points, name it.")
        .answer("", "fine")
        .para("2. A tossup with a broken answer line. For 10 points, name it.")
        .para("ANSWER: ", ("broken", "b"), " [or unclosed")
    )
    path = doc.save(tmp_path / "broken.docx")
    problems = validate_packet_file(path)
    assert [str(p) for p in problems] == [
        f"{path}: paragraph 3: tossup 'tossup-2' (#2): field 'answer': "
        "unbalanced brackets: missing ']'"
    ]


def test_a_file_that_is_not_a_word_document_is_refused_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "fake.docx"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    (problem,) = validate_packet_file(path)
    assert problem.message.startswith("not a")
    assert "Word (.docx) document" in problem.message


def test_a_docx_with_no_questions_says_so(tmp_path: Path) -> None:
    path = Doc().para("Just a title").para("and some words").save(tmp_path / "empty.docx")
    problems = [str(p) for p in validate_packet_file(path)]
    assert f"{path}: field 'tossups': must list at least one tossup" in problems


def test_packet_import_writes_our_format_which_loads_to_the_same_packet(tmp_path: Path) -> None:
    source = _regular(Doc()).save(tmp_path / "club-3.docx")
    runner = CliRunner()
    result = runner.invoke(app, ["packet", "import", str(source)])
    assert result.exit_code == 0, result.output
    assert (
        result.output.strip() == f"{source}: 2 tossups, 1 bonus; wrote {tmp_path / 'club-3.yaml'}"
    )
    assert load_packet(tmp_path / "club-3.yaml") == load_packet(source)
    again = runner.invoke(app, ["packet", "import", str(source)])
    assert again.exit_code == 1 and "exists; give --force" in again.output


def test_show_prints_bonuses_and_validate_counts_them_in_a_real_process(tmp_path: Path) -> None:
    source = _regular(Doc()).save(tmp_path / "club-3.docx")
    run = [sys.executable, "-c", "from grace_arena.cli import app; app()", "packet"]
    shown = subprocess.run(
        [*run, "show", str(source), "--bonus", "bonus-1"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert "[10e] 1. The largest planet." in shown and "ANSWER: <b>Jupiter</b>" in shown
    checked = subprocess.run(
        [*run, "validate", str(SAMPLE_PACKET_PATH)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert checked.strip() == f"{SAMPLE_PACKET_PATH}: 26 tossups, 20 bonuses, OK"


def _strings(data: object) -> list[str]:
    if isinstance(data, dict):
        return [s for value in data.values() for s in _strings(value)]
    if isinstance(data, list):
        return [s for value in data for s in _strings(value)]
    return [data] if isinstance(data, str) else []


_LINES = st.sampled_from([
    "Tossups", "Bonuses", "Tiebreakers", "1. A tossup (*) here. For 10 points, name it.",
    "2) For 10 points each, name these.", "[10e] A part.", "[5] Another part.", "A plain line.",
    "ANSWER: <b>x</b>", "ANSWER: ", "[accept y]", "(prompt on z)", "<Science, Ed>", "<>", "[10]",
    "ANSWER: [unclosed", "", "   ", "3.", "For 10 points each:",
]) | st.text(max_size=30)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.tuples(_LINES, st.booleans()), max_size=25))
def test_property_any_document_gives_a_packet_or_problems_and_drops_nothing_unsaid(
    lines: list[tuple[str, bool]],
) -> None:
    paragraphs = [
        Paragraph(number, text, text, numbered) for number, (text, numbered) in enumerate(lines, 1)
    ]
    imported = from_paragraphs(paragraphs, "fuzz")
    packet, problems = _check_imported(imported, "fuzz.docx")
    assert (packet is None) == bool(problems)
    # every paragraph with words is in a question, the title, or a warning
    kept = " ".join(_strings(imported.data))
    warned = {w.paragraph for w in imported.warnings}
    for paragraph in paragraphs:
        text = paragraph.text
        if layouts._HEADING.match(text) or paragraph.number in warned:
            continue  # a heading is the layout's, not a question's
        for start in (layouts._NUMBER, layouts._PART, layouts._ANSWER):
            text = start.sub("", text, count=1)
        words = _TAGS.sub("", text).split()
        assert all(word.strip("<>[]():.,") in kept for word in words if word.strip("<>[]():.,")), (
            paragraph, imported.data, imported.warnings,
        )  # fmt: skip


def test_a_server_plays_a_docx_packet_as_it_is(tmp_path: Path) -> None:
    """``serve --packet club-3.docx``: the packet is taken as it is; its first tossup is read."""
    from live import LiveServer, clients, moderator, two_teams

    from grace_arena.server.app import Settings

    source = _regular(Doc()).save(tmp_path / "club-3.docx")
    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'record.db'}", packets=[source], secret="s",
        first_match=two_teams(packet_id="club-3"),
    )  # fmt: skip
    with LiveServer(settings) as server, clients(moderator(server)) as (mod,):
        mod.send(type="start_tossup")
        state = mod.state(lambda s: s["tossup"] is not None and s["tossup"]["position"] >= 0)
        assert state["tossup"]["answer"] == "Mark <b>Twain</b> [or Samuel Clemens]"
        assert state["tossup"]["words"][0] == "This"


def test_layouts_a_review_found_misread_are_placed_right(tmp_path: Path) -> None:
    """A Word-numbered question opening with "(" after an answer line; a bold "ANSWER:"
    label; questions with neither headings nor numbers; a lead-in without "For 10 points
    each" after a three-part bonus."""
    doc = (
        Doc()
        .para("Club Packet 9")
        .para("This author wrote Huck Finn. For 10 points, name him.")
        .para(("ANSWER:", "b"), " Mark ", ("Twain", "bu"))
        .para("(Note: read slowly.) This river flows through Cairo. For 10 points, name it.",
              style="List Number")
        .answer("the ", "Nile")
        .para("1. For 10 points each, name these planets.")
        .para("[10] The largest.")
        .answer("", "Jupiter")
        .para("[10] The ringed one.")
        .answer("", "Saturn")
        .para("[10] The red one.")
        .answer("", "Mars")
        .para("Answer these about authors.")
        .para("[10] He wrote Hamlet.")
        .answer("William ", "Shakespeare")
    )  # fmt: skip
    packet = load_packet(doc.save(tmp_path / "odd2.docx"))
    assert packet.packet.title == "Club Packet 9"
    assert [t.answer for t in packet.tossups] == ["Mark <b>Twain</b>", "the <b>Nile</b>"]
    assert packet.tossups[1].text.startswith("(Note: read slowly.) This river")
    assert [len(b.parts) for b in packet.bonuses] == [3, 1]
    assert packet.bonuses[1].leadin == "Answer these about authors."
    assert packet.warnings == []


def test_a_refused_docx_says_its_unplaced_paragraphs_with_its_problems(tmp_path: Path) -> None:
    doc = (
        Doc()
        .para("1. A tossup with a broken answer line. For 10 points, name it.")
        .para("ANSWER: ", ("broken", "b"), " [or unclosed")
        .para("A note for the moderator.")
    )
    path = doc.save(tmp_path / "both.docx")
    result = CliRunner().invoke(app, ["packet", "validate", str(path)])
    assert result.exit_code == 1
    assert "paragraph 3: warning: no ANSWER line follows this paragraph" in result.output
    assert result.output.splitlines()[-1] == f"{path}: 1 problem"


def test_questions_in_tables_content_controls_and_tracked_changes_are_read(tmp_path: Path) -> None:
    """An attack found them dropped without a word: a tossup in a table, one in a content
    control, an answer whose required part is a tracked insertion."""
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    doc = Doc().para("1. The first tossup is in the body. For 10 points, name it.")
    doc.answer("", "body")
    cell = doc.document.add_table(rows=1, cols=1).cell(0, 0)
    cell.paragraphs[0].add_run("2. The second tossup is in a table. For 10 points, name it.")
    cell.add_paragraph().add_run("ANSWER: table")
    body = doc.document.element.body
    w = nsdecls("w")
    body.append(
        parse_xml(
            f"<w:sdt {w}><w:sdtContent><w:p><w:r><w:t>3. The third is in a content control. "
            f"For 10 points, name it.</w:t></w:r></w:p><w:p><w:r><w:t>ANSWER: sdt</w:t></w:r></w:p>"
            f"</w:sdtContent></w:sdt>"
        )
    )
    body.append(
        parse_xml(
            f"<w:p {w}><w:r><w:t>4. The fourth has a tracked answer. For 10 points, name it.</w:t>"
            f"</w:r></w:p>"
        )
    )
    body.append(parse_xml(
        f'<w:p {w}><w:r><w:t xml:space="preserve">ANSWER: </w:t></w:r><w:ins w:id="1" '
        f'w:author="Ed" w:date="2026-11-01T00:00:00Z"><w:r><w:rPr><w:b/></w:rPr>'
        f'<w:t>inserted</w:t></w:r></w:ins><w:del w:id="2" w:author="Ed" '
        f'w:date="2026-11-01T00:00:00Z"><w:r><w:delText>deleted</w:delText></w:r></w:del></w:p>'
    ))  # fmt: skip
    packet = load_packet(doc.save(tmp_path / "hidden.docx"))
    assert [t.answer for t in packet.tossups] == ["<b>body</b>", "table", "sdt", "<b>inserted</b>"]
    assert packet.warnings == []


def test_a_docx_too_large_for_a_packet_is_refused_before_it_is_read(tmp_path: Path) -> None:
    import zipfile

    from grace_arena.core import packet_layouts

    path = _regular(Doc()).save(tmp_path / "big.docx")
    with zipfile.ZipFile(path) as archive:
        parts = {n: archive.read(n) for n in archive.namelist()}
    xml = parts["word/document.xml"]
    parts["word/document.xml"] = xml.replace(
        b"Club Packet 3", b"A" * (packet_layouts.MAX_DOCX_BYTES + 1)
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    (problem,) = validate_packet_file(path)
    assert problem.message == "too large for a packet: its text is 67 MB (at most 64 MB)"


def test_foreign_json_of_wrong_types_or_invisible_characters_or_too_deep(tmp_path: Path) -> None:
    data = {
        "tossups": [
            {"question": ["a", "b"], "answer": {"x": 1}},
            {"question": "Plain\x1b[31m text\u202e here. For 10 points, name it.",
             "answer": "it\x00"},
        ],
        "bonuses": [{"leadin": "L.", "parts": ["One.", ["x y"]], "answers": ["a", "b"],
                     "values": [True, 10.0]}],
    }  # fmt: skip
    path = tmp_path / "types.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    found = {(p.kind, p.position, p.part, p.field): p.message for p in validate_packet_file(path)}
    assert found[("tossup", 1, None, "text")] == "must be a string, not list (quote it in YAML)"
    assert found[("tossup", 1, None, "answer")].startswith("must be a string, not dict")
    assert found[("bonus", 1, 2, "text")].startswith("must be a string, not list")
    assert ("bonus", 1, 1, "value") in found
    assert ("tossup", 2, None, "text") not in found
    data["tossups"], data["bonuses"] = data["tossups"][1:], []
    path.write_text(json.dumps(data), encoding="utf-8")
    (tossup,) = load_packet(path).tossups
    assert tossup.text == "Plain[31m text here. For 10 points, name it." and tossup.answer == "it"
    deep = tmp_path / "deep.json"
    deep.write_text('{"tossups": [{"question": "q", "answer": "a", "metadata": '
                    + "[" * 100_000 + "]" * 100_000 + "}]}")  # fmt: skip
    assert [p.message for p in validate_packet_file(deep)] == ["nested too deeply to be a packet"]
