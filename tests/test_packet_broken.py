"""A question the reader cannot place whole refuses the packet, naming the file, the paragraph
and the question's number; ``--skip-broken-questions`` plays it without that question, and the
count every command and screen gives is the match's.

The .docx files are made here with python-docx, in the layouts editors use (``Doc``)."""

from __future__ import annotations

import json
from pathlib import Path

import docx
import pytest
from docx.enum.text import WD_BREAK
from test_packet_layouts import Doc
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.packet import PacketError, load_packet, validate_packet_file


def _packet(path: Path, *, missing_answer: int | None = None, tossups: int = 20) -> Path:
    """A club packet of ``tossups`` tossups and 3 bonuses; tossup ``missing_answer`` lost its
    ANSWER line (the editor deleted it with the page it was on)."""
    doc = Doc().para("Club Night Packet 1").para("Tossups")
    for i in range(1, tossups + 1):
        doc.para(f"{i}. This is tossup {i} about a thing (*) with clues. For 10 points, name it.")
        if i != missing_answer:
            doc.answer("the ", f"thing{i}")
    doc.para("Bonuses")
    for i in range(1, 4):
        doc.para(f"{i}. For 10 points each, name these things {i}.")
        for part, level in enumerate("emh", start=1):
            doc.para(f"[10{level}] Part {part} of bonus {i}.").answer("", f"b{i}p{part}")
    return doc.save(path)


def _validate(*args: str):
    return CliRunner().invoke(app, ["packet", "validate", *args])


def test_a_tossup_without_its_answer_line_refuses_the_packet_naming_its_paragraph(
    tmp_path: Path,
) -> None:
    path = _packet(tmp_path / "club.docx", missing_answer=5)
    result = _validate(str(path))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    # paragraph 11: title, heading, then two paragraphs for each of tossups 1-4
    assert lines[0] == (
        f"{path}: paragraph 11: tossup 'tossup-5' (#5): field 'answer': no ANSWER line "
        "follows this tossup: 'This is tossup 5 about a thing (*) …'"
    )
    assert "--skip-broken-questions plays the packet without them" in lines[1]
    assert lines[-1] == f"{path}: 1 problem"
    with pytest.raises(PacketError):
        load_packet(path)


def test_skipping_plays_the_packet_without_it_and_keeps_every_other_number(
    tmp_path: Path,
) -> None:
    path = _packet(tmp_path / "club.docx", missing_answer=5)
    packet = load_packet(path, skip_broken=True)
    assert len(packet.tossups) == 19 and len(packet.bonuses) == 3
    assert [t.id for t in packet.tossups[3:6]] == ["tossup-4", "tossup-6", "tossup-7"]
    assert packet.tossup("tossup-6").answer == "the <b>thing6</b>"
    (skipped,) = packet.skipped
    assert (skipped.kind, skipped.position, skipped.paragraph) == ("tossup", 5, 11)
    assert packet.skipped_counts() == "1 tossup skipped"
    result = _validate("--skip-broken-questions", str(path))
    assert result.exit_code == 0, result.output
    assert "(#5)" in result.output and "; skipped" in result.output
    assert result.output.splitlines()[-1] == (
        f"{path}: 19 tossups, 3 bonuses, OK (1 tossup skipped)"
    )
    # a whole packet has nothing to skip
    whole = load_packet(_packet(tmp_path / "whole.docx"), skip_broken=True)
    assert len(whole.tossups) == 20 and whole.skipped == [] and whole.skipped_counts() is None


def test_a_bonus_with_a_part_missing_its_answer_line_is_named_by_its_part(tmp_path: Path) -> None:
    doc = (
        Doc()
        .para("1. A tossup. For 10 points, name it.")
        .answer("", "it")
        .para("Bonuses")
        .para("1. For 10 points each, name these planets.")
        .para("[10] The largest.")
        .answer("", "Jupiter")
        .para("[10] The ringed one.")
        .para("[10] The red one.")
        .answer("", "Mars")
        .para("2. For 10 points each, name these elements.")
        .para("[10] Atomic number 1.")
        .answer("", "hydrogen")
        .para("[10] Atomic number 2.")
        .answer("", "helium")
        .para("[10] Atomic number 3.")
    )
    path = doc.save(tmp_path / "parts.docx")
    found = [str(p) for p in validate_packet_file(path)]
    assert found == [
        f"{path}: paragraph 7: bonus 'bonus-1' (#1): part 2: field 'answer': no ANSWER line "
        "follows this part: 'The ringed one.'",
        f"{path}: paragraph 15: bonus 'bonus-2' (#2): part 3: field 'answer': no ANSWER line "
        "follows this part: 'Atomic number 3.'",
    ]
    packet = load_packet(path, skip_broken=True)
    assert packet.bonuses == [] and len(packet.tossups) == 1
    assert packet.skipped_counts() == "2 bonuses skipped"


def test_an_answer_line_with_no_question_is_an_error_not_a_guess(tmp_path: Path) -> None:
    doc = (
        Doc()
        .para("1. A first tossup. For 10 points, name it.")
        .answer("", "first")
        .answer("", "second")  # the second tossup's text is lost
        .para("3. A third tossup. For 10 points, name it.")
        .answer("", "third")
        .para("Bonuses")
        .para("1. For 10 points each, name these.")
        .para("[10] One.")
        .answer("", "one")
        .answer("", "two")  # a part's text is lost
    )
    path = doc.save(tmp_path / "orphans.docx")
    found = [str(p) for p in validate_packet_file(path)]
    assert found == [
        f"{path}: paragraph 3: tossup 'tossup-2' (#2): field 'text': an ANSWER line with no "
        "question before it: 'ANSWER: second'",
        f"{path}: paragraph 10: bonus 'bonus-1' (#1): part 2: field 'text': an ANSWER line "
        "with no part before it: 'ANSWER: two'",
    ]
    packet = load_packet(path, skip_broken=True)
    assert [t.id for t in packet.tossups] == ["tossup-1", "tossup-3"]
    assert packet.tossup("tossup-3").answer == "<b>third</b>"


def test_a_tossup_split_by_a_page_break_is_read_whole(tmp_path: Path) -> None:
    """Across two paragraphs (the break in a paragraph of its own) and inside one paragraph
    (a break in a run: its words are not glued together)."""
    document = docx.Document()
    document.add_paragraph("1. This tossup's first half runs to the end of a")
    document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    document.add_paragraph("page. For 10 points, name this split thing.")
    document.add_paragraph("ANSWER: split")
    second = document.add_paragraph("2. This one breaks in the middle of a")
    second.add_run().add_break(WD_BREAK.PAGE)
    second.add_run("paragraph. For 10 points, name it.")
    document.add_paragraph("ANSWER: middle")
    document.save(str(tmp_path / "breaks.docx"))
    packet = load_packet(tmp_path / "breaks.docx")
    first, middle = packet.tossups
    assert first.text == (
        "This tossup's first half runs to the end of a page. For 10 points, name this split thing."
    )
    assert "a paragraph. For 10 points" in middle.text
    assert packet.warnings == []


def test_a_stray_note_is_still_a_warning_and_a_short_bonus_is_said(tmp_path: Path) -> None:
    doc = Doc().para("1. A tossup. For 10 points, name it.").answer("", "it")
    doc.para("Read the next one slowly.")  # a note: no number, nothing a question says
    doc.para("Bonuses")
    for i in range(1, 5):
        doc.para(f"{i}. For 10 points each, name these {i}.")
        for part in range(1, 4 if i != 3 else 3):
            doc.para(f"[10] Part {part}.").answer("", f"b{i}p{part}")
    path = doc.save(tmp_path / "short.docx")
    packet = load_packet(path)
    assert [str(w) for w in packet.warnings] == [
        f"{path}: paragraph 3: warning: no ANSWER line follows this paragraph; left out: "
        "'Read the next one slowly.'",
        f"{path}: paragraph 19: bonus 'bonus-3' (#3): warning: the bonus has 2 parts; the "
        "packet's other bonuses have 3",
    ]


def test_a_modaq_packet_with_an_empty_answer_or_a_part_without_one_is_refused(
    tmp_path: Path,
) -> None:
    data = {
        "tossups": [
            {"question": "A fine one. For 10 points, name it.", "answer": "<b>fine</b>"},
            {"question": "An answerless one. For 10 points, name it.", "answer": ""},
        ],
        "bonuses": [
            {"leadin": "For 10 points each:", "parts": ["One.", "Two.", "Three."],
             "answers": ["<b>one</b>", "<b>two</b>"], "values": [10, 10, 10]},
        ],
    }  # fmt: skip
    path = tmp_path / "modaq.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = _validate(str(path))
    assert result.exit_code == 1
    assert result.output.splitlines()[:2] == [
        f"{path}: tossup 'tossup-2' (#2): field 'answer': must not be empty",
        f"{path}: bonus 'bonus-1' (#1): part 3: field 'answer': no answer for this part "
        "(2 answers for 3 parts)",
    ]
    packet = load_packet(path, skip_broken=True)
    assert [t.id for t in packet.tossups] == ["tossup-1"] and packet.bonuses == []
    assert packet.skipped_counts() == "1 tossup skipped, 1 bonus skipped"


def test_a_packet_with_a_problem_of_its_own_is_refused_even_when_skipping(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "format: grace-arena-packet/1\npacket: {id: 'bad id', title: P}\ntossups:\n"
        "  - {id: t1, category: History, text: A tossup., answer: ''}\n",
        encoding="utf-8",
    )
    with pytest.raises(PacketError) as raised:
        load_packet(path, skip_broken=True)
    assert {p.field for p in raised.value.problems} == {"packet.id", "answer"}
    # and one whose every question is broken has nothing left to play
    only = _packet(tmp_path / "one.docx", missing_answer=1, tossups=1)
    with pytest.raises(PacketError):
        load_packet(only, skip_broken=True)


def test_serve_and_event_schedule_refuse_it_unless_told_to_skip(tmp_path: Path) -> None:
    path = _packet(tmp_path / "club.docx", missing_answer=5)
    db = str(tmp_path / "record.db")
    runner = CliRunner()
    refused = runner.invoke(app, ["serve", "--db", db, "--packet", str(path), "--port", "1"])
    assert refused.exit_code == 1
    assert "paragraph 11: tossup 'tossup-5' (#5)" in refused.output
    assert "give --skip-broken-questions to play it without them" in refused.output
    made = runner.invoke(app, ["event", "create", "club", "--db", db, "--team", "A", "--team", "B"])
    assert made.exit_code == 0, made.output
    schedule = ["event", "schedule", "club", "--db", db, "--packet", str(path)]
    assert runner.invoke(app, schedule).exit_code == 1
    skipped = runner.invoke(app, [*schedule, "--skip-broken-questions"])
    assert skipped.exit_code == 0, skipped.output
    assert "19 tossups, 3 bonuses (1 tossup skipped): its rounds read 19 tossups" in (
        skipped.output
    )


def test_a_server_told_to_skip_plays_the_match_it_says(tmp_path: Path) -> None:
    """Every screen counts from the match's state: the moderator's, the display's and the
    phones' all get 19 tossups, and the record holds the 19."""
    from live import LiveServer, clients, moderator, two_teams

    from grace_arena.server.app import Settings, create_app

    path = _packet(tmp_path / "club.docx", missing_answer=5)
    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'record.db'}", packets=[path], secret="s",
        first_match=two_teams(packet_id="club"),
    )  # fmt: skip
    with pytest.raises(PacketError):
        create_app(settings)
    settings.skip_broken_questions = True
    with LiveServer(settings) as server, clients(moderator(server)) as (mod,):
        state = next(m for m in reversed(mod.received) if m["type"] == "state")
        assert state["match"]["tossups_total"] == 19
        assert "tossup-5" not in state["match"]["tossup_ids"]
