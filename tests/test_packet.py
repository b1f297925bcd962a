"""Packet files: loading, every kind of mistake, round-trips, the schema file and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.packet import (
    CATEGORIES,
    SAMPLE_PACKET_PATH,
    Packet,
    PacketError,
    Problem,
    Tossup,
    dump_packet,
    load_packet,
    packet_json_schema,
    parse_packet,
    validate_packet_file,
)

FIXTURES = Path(__file__).parent / "fixtures" / "packets"
GOOD = FIXTURES / "good.yaml"
SCHEMA_PATH = Path(__file__).resolve().parents[1] / "questions" / "packet.schema.json"

HEADER = """\
format: grace-arena-packet/1
packet:
  id: inline
  title: Inline test packet
tossups:
"""
OK_TOSSUP = """\
  - id: ok-1
    category: Science
    text: This element has atomic number 1. For 10 points, name this element.
    answer: <b>hydrogen</b>
"""


def write(tmp_path: Path, body: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def only_problem(path: Path) -> Problem:
    problems = validate_packet_file(path)
    assert len(problems) == 1, problems
    return problems[0]


# --- a good packet ---------------------------------------------------------------------------


def test_good_packet_loads() -> None:
    packet = load_packet(GOOD)
    assert packet.format == "grace-arena-packet/1"
    assert packet.packet.id == "fixture-good"
    assert str(packet.packet.date) == "2026-11-22"
    assert [t.id for t in packet.tossups] == ["lit-american-01", "phil-01", "hist-us-01"]
    assert packet.path == GOOD
    assert validate_packet_file(GOOD) == []

    moby = packet.tossup("lit-american-01")
    assert moby.category == "Literature"
    assert moby.subcategory == "American Literature"
    assert moby.clues is None
    assert "\n" not in moby.text  # folded YAML, whitespace normalised
    tokens = moby.tokens()
    assert len(tokens.clue_ends) == 4
    assert tokens.clue_texts()[-1].startswith("For 10 points")
    assert tokens.power_index is not None
    assert tokens.words[tokens.power_index].text == 'Whale"'


def test_tossup_written_as_clues_gets_full_text() -> None:
    phil = load_packet(GOOD).tossup("phil-01")
    assert phil.clues is not None and len(phil.clues) == 3
    assert phil.text == " ".join(phil.clues)
    assert phil.tokens().clue_texts()[0].startswith("This thinker described")  # guide removed
    assert len(phil.tokens().clue_ends) == 3
    assert phil.tokens() is phil.tokens()  # cached


def test_unknown_tossup_id_raises_key_error() -> None:
    with pytest.raises(KeyError, match="nope"):
        load_packet(GOOD).tossup("nope")


def test_json_packet_equals_yaml_packet() -> None:
    assert load_packet(FIXTURES / "good.json") == load_packet(GOOD)


def test_tossup_model_built_in_code() -> None:
    tossup = Tossup(id="t1", category="History", clues=["A b.", "For 10 points, c."], answer="x")
    assert tossup.text == "A b. For 10 points, c."
    with pytest.raises(ValidationError, match="either text or clues"):
        Tossup(id="t1", category="History", text="Other.", clues=["A b."], answer="x")
    with pytest.raises(ValidationError):
        Tossup(id="t1", category="Sports", text="A b.", answer="x")


def test_categories_are_the_grace_twelve_and_one_for_imports() -> None:
    """GRACE's twelve, then what an imported question gets when its file names none."""
    assert len(CATEGORIES) == 13 and CATEGORIES[-1] == "Uncategorized"
    assert {"Literature", "Fine Arts", "Other Academic", "Pop Culture"} <= set(CATEGORIES)


# --- every kind of bad packet --------------------------------------------------------------


@pytest.mark.parametrize(
    ("tossup_yaml", "field", "message"),
    [
        pytest.param(
            "  - id: t2\n    category: Science\n    text: A b. For 10 points, c.\n",
            "answer", "required", id="missing-field",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    text: A b.\n    answer: x\n    anwser: y\n",
            "anwser", "did you mean 'answer'", id="unknown-key",
        ),
        pytest.param(
            "  - id: t2\n    category: Sports\n    text: A b.\n    answer: x\n",
            "category", "'Sports' is not a GRACE category", id="bad-category",
        ),
        pytest.param(
            "  - id: t2\n    category: literature\n    text: A b.\n    answer: x\n",
            "category", "did you mean 'Literature'", id="category-case",
        ),
        pytest.param(
            "  - id: ok-1\n    category: Science\n    text: A b.\n    answer: x\n",
            "id", "duplicate id (also used by tossup #1)", id="duplicate-id",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    text: A b.\n    clues: [A b.]\n    answer: x\n",
            "text", "either text or clues, not both", id="text-and-clues",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    answer: x\n",
            "text", "give the tossup text (or its clues)", id="neither-text-nor-clues",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    text: A (*) b (*) c.\n    answer: x\n",
            "text", "2 power marks", id="two-power-marks",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    clues: [A (*) b., C (*) d.]\n    answer: x\n",
            "clues", "2 power marks", id="two-power-marks-in-clues",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    text: '  '\n    answer: x\n",
            "text", "at least one word", id="empty-text",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    text: '(*) — (\"UH\")'\n    answer: x\n",
            "text", "at least one word", id="text-of-markers-only",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    clues: [A b., '', C d.]\n    answer: x\n",
            "clues", "clue #2 must contain at least one word", id="empty-clue",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    clues: []\n    answer: x\n",
            "clues", "at least one clue", id="no-clues",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    text: A b.\n    answer: ''\n",
            "answer", "must not be empty", id="empty-answer",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    text: A b.\n    answer: x [or y\n",
            "answer", "unbalanced brackets: missing ']'", id="unbalanced-brackets",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    text: A b.\n    answer: x (or y]\n",
            "answer", "unbalanced brackets: unexpected ']'", id="crossed-brackets",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    text: A b.\n    answer: <b>x</u>\n",
            "answer", "unbalanced tags", id="unbalanced-tags",
        ),
        pytest.param(
            "  - id: t 2\n    category: Science\n    text: A b.\n    answer: x\n",
            "id", "only letters, digits", id="bad-id",
        ),
        pytest.param(
            "  - id: t2\n    category: Science\n    text: A b.\n    answer: yes\n",
            "answer", "must be a string, not bool (quote it in YAML)", id="yaml-boolean",
        ),
    ],
)  # fmt: skip
def test_bad_tossup_is_named_with_field(
    tmp_path: Path, tossup_yaml: str, field: str, message: str
) -> None:
    path = write(tmp_path, HEADER + OK_TOSSUP + tossup_yaml)
    problem = only_problem(path)
    assert problem.file == str(path)
    assert problem.position == 2
    expected_id = "ok-1" if "duplicate" in message else tossup_yaml.split("id: ")[1].split("\n")[0]
    assert problem.tossup == expected_id
    assert problem.field == field
    assert message in problem.message
    assert problem.line is not None and problem.line >= 10  # points into the second tossup
    with pytest.raises(PacketError) as raised:
        load_packet(path)
    assert raised.value.problems == [problem]


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (HEADER.replace("grace-arena-packet/1", "grace-arena-packet/2") + OK_TOSSUP,
         "format", "must be exactly 'grace-arena-packet/1'"),
        (HEADER.replace("format: grace-arena-packet/1\n", "") + OK_TOSSUP,
         "format", "required"),
        (HEADER.replace("  title: Inline test packet\n", "") + OK_TOSSUP,
         "packet.title", "required"),
        (HEADER.replace("  title: Inline test packet\n", "  title: ''\n") + OK_TOSSUP,
         "packet.title", "must not be empty"),
        (HEADER.replace("  id: inline\n", "  id: inline\n  editor: me\n") + OK_TOSSUP,
         "packet.editor", "unknown key"),
        (HEADER + "  []\n", "tossups", "at least one tossup"),
        (HEADER.replace("tossups:\n", "tossups: {}\n"), "tossups", "must be a list"),
        (HEADER + OK_TOSSUP + "extra: 1\n", "extra", "unknown key"),
    ],
)  # fmt: skip
def test_bad_packet_level_field(tmp_path: Path, body: str, field: str, message: str) -> None:
    problem = only_problem(write(tmp_path, body))
    assert problem.tossup is None and problem.position is None
    assert problem.field == field
    assert message in problem.message


def test_yaml_syntax_error_names_line_and_column() -> None:
    problem = only_problem(FIXTURES / "bad_syntax.yaml")
    assert problem.field is None and problem.tossup is None
    assert "YAML syntax error at line 11, column 1" in problem.message
    assert "quoted scalar at line 8, column 11" in problem.message
    assert problem.line == 11


def test_yaml_duplicate_key_is_an_error(tmp_path: Path) -> None:
    body = HEADER + OK_TOSSUP + "    answer: again\n"
    problem = only_problem(write(tmp_path, body))
    assert "duplicate key 'answer'" in problem.message
    assert problem.line == 10


@pytest.mark.parametrize("body", ["", "   \n\n", "# only a comment\n", "---\n"])
def test_empty_file(tmp_path: Path, body: str) -> None:
    assert "empty" in only_problem(write(tmp_path, body)).message


def test_yaml_list_as_key_is_an_error(tmp_path: Path) -> None:
    problem = only_problem(write(tmp_path, "tossups:\n  - {id: t1, [1]: 3}\n"))
    assert "YAML error at line 2, column 14: found a list or mapping used as a key" in str(problem)


def test_top_level_not_a_mapping(tmp_path: Path) -> None:
    assert "must be a mapping" in only_problem(write(tmp_path, "- a\n- b\n")).message


def test_missing_file_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"
    assert validate_packet_file(path) == [Problem(str(path), None, None, "file not found")]
    with pytest.raises(PacketError, match="file not found"):
        load_packet(path)


def test_unsupported_extension_and_directory(tmp_path: Path) -> None:
    assert "unsupported file type" in only_problem(write(tmp_path, "x", "p.txt")).message
    assert only_problem(tmp_path).message == "not a file"


def test_json_syntax_error(tmp_path: Path) -> None:
    problem = only_problem(write(tmp_path, '{"format": \n', "p.json"))
    assert problem.message.startswith("JSON syntax error at line 2")


def test_every_problem_reported_at_once() -> None:
    path = FIXTURES / "bad_many.yaml"
    problems = validate_packet_file(path)
    found = {(p.position, p.tossup, p.field) for p in problems}
    assert found == {
        (None, None, "packet.id"),
        (None, None, "packet.editor"),
        (2, "typo-key-02", "answer"),
        (2, "typo-key-02", "anwser"),
        (3, "bad-category-03", "category"),
        (4, "ok-01", "id"),
        (5, "both-05", "text"),
        (6, "two-powers-06", "text"),
        (7, "missing-answer-07", "answer"),
        (8, "empty-clue-08", "clues"),
        (9, "unbalanced-09", "answer"),
    }
    assert all(p.file == str(path) and p.line is not None for p in problems)
    with pytest.raises(PacketError) as raised:
        load_packet(path)
    assert raised.value.problems == problems
    assert str(raised.value).count("\n") == len(problems) - 1


def test_problem_str() -> None:
    problem = Problem("questions/x.yaml", "lit-01", "answer", "must not be empty", 3)
    assert (
        str(problem) == "questions/x.yaml: tossup 'lit-01' (#3): field 'answer': must not be empty"
    )
    with_line = Problem("x.yaml", None, "packet.id", "bad", line=4)
    assert str(with_line) == "x.yaml:4: field 'packet.id': bad"
    assert str(Problem("x.yaml", None, None, "file is empty")) == "x.yaml: file is empty"


# --- writing -------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json"])
def test_dump_load_round_trip(tmp_path: Path, suffix: str) -> None:
    packet = load_packet(GOOD)
    target = tmp_path / f"copy{suffix}"
    dump_packet(packet, target)
    again = load_packet(target)
    assert again == packet
    assert again.model_dump() == packet.model_dump()
    assert again.path == target
    dump_packet(again, tmp_path / f"twice{suffix}")
    assert (tmp_path / f"twice{suffix}").read_text() == target.read_text()


def test_dump_writes_the_same_format(tmp_path: Path) -> None:
    target = tmp_path / "copy.yaml"
    dump_packet(load_packet(GOOD), target)
    data = yaml.safe_load(target.read_text(encoding="utf-8"))
    assert list(data) == ["format", "packet", "tossups"]
    phil = data["tossups"][1]
    assert "clues" in phil and "text" not in phil  # written as it was given
    assert "subcategory" not in phil  # unset keys are left out
    assert "path" not in data


def test_parse_packet_from_text() -> None:
    packet = parse_packet(HEADER + OK_TOSSUP)
    assert packet.path is None and packet.tossups[0].id == "ok-1"
    with pytest.raises(PacketError, match="<string>"):
        parse_packet(HEADER)


@pytest.mark.skipif(not SAMPLE_PACKET_PATH.exists(), reason="questions/sample_packet.yaml absent")
def test_sample_packet_round_trips(tmp_path: Path) -> None:
    packet = load_packet(SAMPLE_PACKET_PATH)
    dump_packet(packet, tmp_path / "sample.yaml")
    assert load_packet(tmp_path / "sample.yaml") == packet


# --- schema ----------------------------------------------------------------------------------


def test_committed_schema_matches_models() -> None:
    generated = json.dumps(packet_json_schema(), indent=2, ensure_ascii=False) + "\n"
    assert SCHEMA_PATH.read_text(encoding="utf-8") == generated, (
        "questions/packet.schema.json is stale; regenerate it with "
        "`grace-arena packet schema -o questions/packet.schema.json`"
    )


def test_schema_accepts_good_and_rejects_bad() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    good = json.loads((FIXTURES / "good.json").read_text(encoding="utf-8"))
    assert list(validator.iter_errors(good)) == []
    bad = yaml.safe_load((FIXTURES / "bad_many.yaml").read_text(encoding="utf-8"))
    bad = json.loads(json.dumps(bad, default=str))
    messages = " ".join(e.message for e in validator.iter_errors(bad))
    assert "'anwser' was unexpected" in messages
    assert "'Sports' is not one of" in messages


# --- the sample packet ---------------------------------------------------------------------


@pytest.mark.skipif(
    not SAMPLE_PACKET_PATH.exists(),
    reason="questions/sample_packet.yaml is not written yet",
)
def test_sample_packet_is_valid_and_pyramidal() -> None:
    assert validate_packet_file(SAMPLE_PACKET_PATH) == []
    packet = load_packet(SAMPLE_PACKET_PATH)
    assert len(packet.tossups) >= 24
    for tossup in packet.tossups:
        clues = tossup.tokens().clue_texts()
        assert len(clues) >= 5, (tossup.id, clues)
        assert "For 10 points" in clues[-1], (tossup.id, clues[-1])
        assert all("For 10 points" not in clue for clue in clues[:-1]), tossup.id


def test_packet_model_rejects_duplicate_ids_in_code() -> None:
    tossup = load_packet(GOOD).tossups[0]
    with pytest.raises(ValidationError, match="duplicate tossup ids"):
        Packet(
            format="grace-arena-packet/1",
            packet={"id": "x", "title": "X"},
            tossups=[tossup, tossup],
        )


# --- command line --------------------------------------------------------------------------

runner = CliRunner()


def test_cli_validate_ok() -> None:
    result = runner.invoke(app, ["packet", "validate", str(GOOD), str(FIXTURES / "good.json")])
    assert result.exit_code == 0, result.output
    assert f"{GOOD}: 3 tossups, 0 bonuses, OK" in result.output
    assert "good.json: 3 tossups, 0 bonuses, OK" in result.output


def test_cli_validate_reports_every_problem_and_fails() -> None:
    bad = FIXTURES / "bad_many.yaml"
    result = runner.invoke(app, ["packet", "validate", str(GOOD), str(bad)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert f"{GOOD}: 3 tossups, 0 bonuses, OK" in lines
    assert f"{bad}: 11 problems" in lines
    assert sum(line.startswith(f"{bad}:") for line in lines) == 12
    assert any("tossup 'typo-key-02' (#2): field 'anwser'" in line for line in lines)


def test_cli_validate_folder_skips_schema_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD.read_text())
    (tmp_path / "packet.schema.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("not a packet")
    result = runner.invoke(app, ["packet", "validate", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines() == [
        f"{tmp_path / 'a.yaml'}: 3 tossups, 0 bonuses, OK"
    ]


def test_cli_validate_missing_file() -> None:
    result = runner.invoke(app, ["packet", "validate", "no/such/file.yaml"])
    assert result.exit_code == 1
    assert "no/such/file.yaml: file not found" in result.output


def test_cli_show_prints_clues_and_word_indices() -> None:
    result = runner.invoke(app, ["packet", "show", str(GOOD), "--tossup", "phil-01", "--words"])
    assert result.exit_code == 0, result.output
    assert "#2 phil-01" in result.output
    assert "clue 0 (words 0-14)" in result.output
    assert "clue 2 (words 25-35)" in result.output
    assert "25:For 26:10 27:points," in result.output
    assert "ANSWER: Friedrich <b>Nietzsche</b>" in result.output
    assert "moby" not in result.output.lower()


def test_cli_show_whole_packet_marks_power() -> None:
    result = runner.invoke(app, ["packet", "show", str(GOOD)])
    assert result.exit_code == 0, result.output
    assert "Test Fixture Packet (fixture-good): 3 tossups" in result.output
    tokens = load_packet(GOOD).tossup("lit-american-01").tokens()
    assert f"power before word {tokens.power_index}" in result.output
    assert result.output.count("ANSWER:") == 3
    words = runner.invoke(app, ["packet", "show", str(GOOD), "-t", "lit-american-01", "-w"])
    assert f'(*) {tokens.power_index}:Whale"' in words.output


def test_cli_show_unknown_tossup_and_bad_file() -> None:
    result = runner.invoke(app, ["packet", "show", str(GOOD), "--tossup", "nope"])
    assert result.exit_code == 1
    assert "no tossup 'nope'" in result.output
    result = runner.invoke(app, ["packet", "show", str(FIXTURES / "empty.yaml")])
    assert result.exit_code == 1
    assert "file is empty" in result.output


def test_cli_schema_prints_the_committed_schema() -> None:
    result = runner.invoke(app, ["packet", "schema"])
    assert result.exit_code == 0
    assert result.output == SCHEMA_PATH.read_text(encoding="utf-8")


@pytest.mark.slow
def test_cli_validate_in_a_real_process() -> None:
    command = [sys.executable, "-c", "from grace_arena.cli import app; app()", "packet", "validate"]
    ok = subprocess.run(
        [*command, str(GOOD)], capture_output=True, text=True, timeout=120, check=False
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == f"{GOOD}: 3 tossups, 0 bonuses, OK"
    bad = subprocess.run(
        [*command, str(FIXTURES / "bad_syntax.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 1
    assert "YAML syntax error at line 11, column 1" in bad.stdout
    assert bad.stdout.count("\n") == 2


def test_core_imports_no_framework() -> None:
    code = (
        "import sys, grace_arena.core.packet, grace_arena.core.tokenize\n"
        "bad = {'sqlmodel', 'sqlalchemy', 'fastapi', 'textual', 'litellm', 'typer'}\n"
        "print(sorted(bad & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]"


# --- never crashes -------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=8) | st.integers(), children, max_size=4)
    ),
    max_leaves=20,
)
_tossup_like = st.fixed_dictionaries(
    {},
    optional={
        "id": st.sampled_from(["t1", "t1", "bad id", ""]) | _scalars,
        "category": st.sampled_from(CATEGORIES) | _scalars,
        "text": st.sampled_from(["A b. For 10 points, c.", "(*) (*)", ""]) | _values,
        "clues": st.lists(st.sampled_from(["A b.", "", "(*)"]), max_size=3) | _values,
        "answer": st.sampled_from(["x", "[", "<b>x"]) | _values,
        "anwser": _values,
    },
)
_part_like = st.fixed_dictionaries(
    {},
    optional={
        "text": st.sampled_from(["Name it.", ""]) | _values,
        "answer": st.sampled_from(["x", "<b>x", "[x]"]) | _values,
        "value": st.sampled_from([10, 0, -5, 1000]) | _scalars,
        "difficulty": st.sampled_from(["e", "hard", "x"]) | _scalars,
    },
)
_bonus_like = st.fixed_dictionaries(
    {},
    optional={
        "id": st.sampled_from(["b1", "b1", "bad id"]) | _scalars,
        "category": st.sampled_from(CATEGORIES) | _scalars,
        "leadin": st.sampled_from(["For 10 points each:", ""]) | _values,
        "parts": st.lists(_part_like, max_size=4) | _values,
    },
)
_packet_like = st.fixed_dictionaries(
    {},
    optional={
        "format": st.just("grace-arena-packet/1") | _scalars,
        "packet": st.fixed_dictionaries({"id": _scalars, "title": _scalars}) | _values,
        "tossups": st.lists(_tossup_like, max_size=4) | _values,
        "bonuses": st.lists(_bonus_like, max_size=3) | _values,
        "other": _values,
    },
)
# MODAQ's (YAPP's) and QB Reader's packets, as odd as they come
_foreign_like = st.fixed_dictionaries(
    {
        "tossups": st.lists(
            st.fixed_dictionaries(
                {"question": st.sampled_from(["A b (*) c.", "", "<i>x</i>"]) | _values},
                optional={"answer": st.sampled_from(["<req>x</req>", "<b>x", ""]) | _values,
                          "metadata": _scalars, "category": _scalars},
            ),
            max_size=3,
        )
    },
    optional={
        "bonuses": st.lists(
            st.fixed_dictionaries(
                {},
                optional={"leadin": _values, "parts": _values, "answers": _values,
                          "values": _values, "difficultyModifiers": _values},
            ) | _scalars,
            max_size=3,
        ) | _values,
        "name": _scalars,
    },
)  # fmt: skip


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_packet_like | _foreign_like | _values, as_json=st.booleans())
def test_property_validation_never_raises(tmp_path: Path, data: object, as_json: bool) -> None:
    path = tmp_path / ("fuzz.json" if as_json else "fuzz.yaml")
    path.write_text(json.dumps(data) if as_json else yaml.safe_dump(data), encoding="utf-8")
    problems = validate_packet_file(path)
    assert all(isinstance(p, Problem) and p.file == str(path) and p.message for p in problems)
    if not problems:
        assert load_packet(path).tossups


@settings(max_examples=200)
@given(st.text(max_size=300) | st.text(alphabet="ab1:-?[]{}&*!#|>'\"\n\t ", max_size=80))
def test_property_any_text_gives_problems_not_exceptions(text: str) -> None:
    try:
        parse_packet(text)
    except PacketError as exc:
        assert exc.problems
