"""The mistakes people make at the command line get one line that says what to type instead,
never a traceback, and leave nothing behind."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.model.names import model_name_problem
from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def one_error_line(result) -> str:
    """The output of a refused command: one line starting with ``error:``, no traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, result.output
    assert "Traceback" not in result.output
    return errors[0]


# -- --db: a path or a URL -------------------------------------------------------------------


def test_a_plain_path_is_a_sqlite_file_relative_to_where_you_are(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made = run("event", "create", "club", "--team", "Red", "--team", "Blue", "--db", "club.db")
    assert made.exit_code == 0, made.output
    assert f"record: sqlite:///{tmp_path / 'club.db'}" in made.output
    assert (tmp_path / "club.db").is_file()
    # every later command finds it by the same plain path, and under a sub-folder by its own
    shown = run("event", "show", "club", "--db", "club.db")
    assert shown.exit_code == 0, shown.output
    assert "Red" in shown.output
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert run("db", "events", "--db", "../club.db").exit_code == 0
    assert run("db", "events", "--db", str(tmp_path / "club.db")).exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        ["db", "upgrade"],
        ["db", "matches"],
        ["event", "create", "club", "--team", "Red", "--team", "Blue"],
        ["event", "show", "club"],
        ["export", "--format", "csv", "--out", "out.csv"],
        ["analyze"],
        ["serve", "--host", "127.0.0.1", "--port", "0", "--no-match"],
        ["precompute", "--packet", str(SAMPLE_PACKET_PATH)],
        ["model", "show", "tfidf", "--packet", str(SAMPLE_PACKET_PATH)],
    ],
)
@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("postgres://me:pw@host/db", "no database of the kind 'postgres'"),
        ("sqlite:/club.db", "not a URL"),
        ("mysql+nodriver://host/db", "no database of the kind 'mysql+nodriver'"),
        ("post gresql://me:pw@host/db", "not a URL"),
        ("postgresql://me:pw@host:port/db", "not a URL"),
        ("postgresql+psycopg://me:pw@pw@host/db", 'an "@" in the password is written %40'),
    ],
)
def test_a_db_that_is_no_url_says_what_a_url_looks_like(args, given, said, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_error_line(run(*args, "--db", given))
    assert said in line
    assert "sqlite:///club.db" in line and "postgresql+psycopg://" in line
    assert ":pw@" not in line and "pw@host" not in line  # a password is not printed back
    assert list(tmp_path.iterdir()) == []


def test_a_db_that_is_a_folder_is_refused(tmp_path):
    line = one_error_line(run("db", "upgrade", "--db", str(tmp_path)))
    assert "is a folder" in line and str(tmp_path / "club.db") in line


@pytest.mark.parametrize(
    "args",
    [["event", "show", "club"], ["db", "upgrade"], ["analyze"], ["event", "create", "club",
     "--team", "Red", "--team", "Blue"]],
)  # fmt: skip
def test_a_db_that_is_no_database_is_one_line_and_left_as_it_was(args, tmp_path):
    notes = tmp_path / "notes.db"
    notes.write_text("Club night: bring the buzzers.\n" * 200)
    line = one_error_line(run(*args, "--db", str(notes)))
    assert line == "error: the record could not be read: file is not a database"
    assert notes.read_text() == "Club night: bring the buzzers.\n" * 200


def test_the_default_record_from_the_environment_may_be_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRACE_ARENA_DB", "env.db")
    result = run("db", "upgrade")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "env.db").is_file()
    monkeypatch.setenv("GRACE_ARENA_DB", "nosuch://x")
    assert "$GRACE_ARENA_DB 'nosuch://x'" in one_error_line(run("db", "matches"))


# -- a mistyped record file ------------------------------------------------------------------


def test_serve_of_an_event_in_a_mistyped_file_names_the_right_one_and_makes_none(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert (
        run(
            "event", "create", "club-night", "--team", "Red", "--team", "Blue", "--db", "club.db"
        ).exit_code
        == 0
    )
    result = run("serve", "--event", "club-night", "--db", "sqlite:///clubb.db", "--port", "0")
    assert result.exit_code == 1
    line = one_error_line(result)
    assert line.startswith("error: no record at clubb.db (did you mean club.db?)")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("clubb")]


def test_serve_of_an_event_not_in_the_record_or_not_scheduled_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert (
        run(
            "event", "create", "club-night", "--team", "Red", "--team", "Blue", "--db", "club.db"
        ).exit_code
        == 0
    )
    typo = one_error_line(run("serve", "--event", "club-nite", "--db", "club.db", "--port", "0"))
    assert "no event 'club-nite'" in typo and "did you mean club-night?" in typo
    early = one_error_line(run("serve", "--event", "club-night", "--db", "club.db", "--port", "0"))
    assert "has no schedule yet" in early and "event schedule club-night" in early


# -- models checked when the event is made -----------------------------------------------------


def test_a_mistyped_model_team_is_refused_with_the_closest_name(tmp_path):
    url = f"sqlite:///{tmp_path / 'club.db'}"
    result = run(
        "event",
        "create",
        "club",
        "--team",
        "Red",
        "--team",
        "Blue",
        "--model-team",
        "tfdif@0.5",
        "--db",
        url,
    )
    assert result.exit_code == 2
    line = one_error_line(result)
    assert line.startswith(
        "error: --model-team 'tfdif@0.5': no model 'tfdif' (did you mean tfidf?)"
    )
    assert not (tmp_path / "club.db").exists()  # checked before the record is made


def test_serve_and_precompute_check_their_model_too(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    served = run("serve", "--host", "127.0.0.1", "--port", "0", "--model", "tfdif", "--db", url)
    assert "did you mean tfidf?" in one_error_line(served)
    asked = run(
        "precompute", "--packet", str(SAMPLE_PACKET_PATH), "--model", "opnai/gpt-4o", "--db", url
    )
    assert "litellm has no provider 'opnai' (did you mean openai/gpt-4o" in one_error_line(asked)


def test_models_a_match_can_use():
    # ours, litellm's known names and PROVIDER/MODEL names of a provider litellm knows
    for name in ("tfidf", "local-smollm2", "gpt-4o-mini", "openai/gpt-4o-mini", "hosted_vllm/m"):
        assert model_name_problem(name) is None, name
    # a model precomputed under a name of its own counts (it is in the record)
    assert model_name_problem("tfidf-cal", ["tfidf-cal"]) is None
    assert "did you mean tfidf-cal" in model_name_problem("tfidf-cla", ["tfidf-cal"])
    assert "no model 'Robo'" in model_name_problem("Robo")


def test_a_model_precomputed_under_its_own_name_may_play_in_an_event(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    stored = run("precompute", "--packet", str(SAMPLE_PACKET_PATH), "--name", "mine", "--db", url)
    assert stored.exit_code == 0, stored.output
    made = run(
        "event",
        "create",
        "club",
        "--team",
        "Red",
        "--team",
        "Blue",
        "--model-team",
        "mine@0.7",
        "--db",
        url,
    )
    assert made.exit_code == 0, made.output
    assert "model mine, threshold 0.7" in made.output


def test_schedule_refuses_an_event_whose_model_is_no_model(tmp_path):
    """An event registered before models were checked is caught before its schedule."""
    from grace_arena.record.db import upgrade
    from grace_arena.record.schedule import TeamEntry, create_event

    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    teams = [TeamEntry("red", "Red"), TeamEntry("robo", "Robo", "model", "tfdif", 0.5, None)]
    create_event(make_engine(url), "club", title=None, teams=teams, players=[], defaults={})
    result = run("event", "schedule", "club", "--packet", str(SAMPLE_PACKET_PATH), "--db", url)
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "team 'Robo' of event 'club'" in line and "did you mean tfidf?" in line
    assert MatchStore(make_engine(url)).matches() == []


# -- players of a team -----------------------------------------------------------------------


def test_two_model_teams_of_one_model_without_names_are_told_to_name_one(tmp_path):
    db = str(tmp_path / "club.db")
    line = one_error_line(
        run("event", "create", "club", "--team", "Red", "--model-team", "tfidf@0.5",
            "--model-team", "tfidf@0.9", "--db", db)
    )  # fmt: skip
    assert line == (
        "error: --model-team 'tfidf@0.9': a team is already named 'tfidf'; name this one: "
        "'tfidf@0.9=NAME'"
    )
    assert not (tmp_path / "club.db").exists()
    made = run("event", "create", "club", "--team", "Red", "--model-team", "tfidf@0.5",
               "--model-team", "tfidf@0.9=Careful", "--db", db)  # fmt: skip
    assert made.exit_code == 0, made.output


def test_a_player_of_a_mistyped_team_names_the_teams_and_the_closest(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    result = run(
        "event", "create", "club", "--team", "Red", "--team", "Blue",
        "--model-team", "tfidf=Robo", "--player", "Rde:Ann", "--db", url,
    )  # fmt: skip
    assert result.exit_code == 2
    line = one_error_line(result)
    assert line == (
        "error: --player 'Rde:Ann': no team 'Rde' (teams: Red, Blue, Robo); did you mean 'Red'?"
    )
    assert not (tmp_path / "r.db").exists()
    alone = one_error_line(run("event", "create", "c", "--team", "Red", "--db", url))
    assert alone == "error: an event needs at least two teams, got 1"
    assert not (tmp_path / "r.db").exists()
    no_name = one_error_line(run("event", "create", "c", "--team", "Red", "--player", "Ann"))
    assert "expected TEAM:NAME, e.g. 'Red:Ann'" in no_name
    # a team's name in another case and spacing is that team
    ok = run(
        "event", "create", "c", "--team", "Red Fox", "--team", "Blue", "--player", "red  fox:Ann",
        "--db", url,
    )  # fmt: skip
    assert ok.exit_code == 0, ok.output


# -- help at 80 columns ----------------------------------------------------------------------


def _every_command() -> list[list[str]]:
    import typer.main

    found: list[list[str]] = []

    def walk(command, path: list[str]) -> None:
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


@pytest.mark.parametrize("args", _every_command(), ids=lambda a: " ".join(a) or "grace-arena")
def test_every_help_reads_whole_at_80_columns(args):
    result = CliRunner(env={"COLUMNS": "80"}).invoke(app, [*args, "--help"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "<bool>" not in out  # a flag takes no value
    assert "…" not in out and "╭" not in out  # nothing cut, no panels
    assert max(len(line) for line in out.splitlines()) <= 80, out
    # a command's listed summary is its first sentence whole, not cut with "..."
    commands = out.partition("\nCommands:\n")[2]
    assert "..." not in commands
    # no word broken across lines (a long list of columns is a list of words)
    words = {w.strip(".,;:()[]'") for w in " ".join(out.split()).split(" ")}
    assert "confidence_verb" not in words and "al" not in words


def test_help_of_a_flag_and_of_a_long_list_of_columns():
    serve = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["serve", "--help"]).output
    assert "--match / --no-match" in serve
    analyze = " ".join(
        CliRunner(env={"COLUMNS": "80"}).invoke(app, ["analyze", "--help"]).output.split()
    )
    assert "model, question_id, step, word_index, correct, confidence_logit," in analyze


# -- precompute in a script, CI or a log -------------------------------------------------------


def test_precompute_without_a_terminal_prints_plain_lines_and_a_summary_on_one_line(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    result = CliRunner(env={"COLUMNS": "60"}).invoke(
        app, ["precompute", "--packet", str(SAMPLE_PACKET_PATH), "--db", url]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert not any(c in result.output for c in "━╸…\r\x1b")  # no bar, no escape codes
    (summary,) = [line for line in lines if line.startswith("tfidf on grace-arena-sample-1:")]
    assert summary.endswith("cost $0.0000")  # the whole summary, unbroken
    (last,) = [line for line in lines if line.startswith("tfidf: ")]
    assert last.startswith("tfidf: 46/46 questions · steps 156/156 · bonus parts 60/60")


def test_precompute_progress_lines_come_periodically(tmp_path):
    import io

    from rich.console import Console

    from grace_arena.cli.model import run_precompute_command
    from grace_arena.core.packet import load_packet
    from grace_arena.record.db import open_engine

    out = io.StringIO()
    console = Console(file=out, width=40)  # not a terminal, and narrow
    assert not console.is_terminal
    engine = open_engine(f"sqlite:///{tmp_path / 'r.db'}")
    packet = load_packet(SAMPLE_PACKET_PATH)
    run_precompute_command(console, engine, packet, "tfidf", progress_every=0.0)
    engine.dispose()
    lines = out.getvalue().splitlines()
    progress = [line for line in lines if line.startswith("tfidf: ")]
    assert len(progress) > 10  # one per step here, as often as asked
    done = [int(line.split()[1].split("/")[0]) for line in progress]
    assert done == sorted(done) and done[-1] == 46
    # every line is a whole line: the narrow console wraps none of them
    assert all(line.startswith(("tfidf: ", "tfidf on ")) for line in lines), lines


# -- names typed after the record holds the right ones ---------------------------------------


@pytest.fixture
def club(tmp_path, monkeypatch) -> str:
    """A record with the offline model's steps and an event, in the current folder."""
    monkeypatch.chdir(tmp_path)
    assert run("precompute", "--packet", str(SAMPLE_PACKET_PATH), "--db", "club.db").exit_code == 0
    made = run(
        "event", "create", "club-night", "--team", "Red", "--team", "Blue", "--db", "club.db"
    )
    assert made.exit_code == 0, made.output
    return "club.db"


@pytest.mark.parametrize(
    "args",
    [
        ["model", "show", "tfdif", "--packet", str(SAMPLE_PACKET_PATH)],
        ["model", "threshold", "tfdif", "--packet", str(SAMPLE_PACKET_PATH)],
        ["model", "calibrate", "tfdif"],
    ],
)
def test_a_mistyped_model_of_the_record_names_the_one_there(club, args):
    line = one_error_line(run(*args, "--db", club))
    assert (
        line == "error: no model 'tfdif' in the record (did you mean tfidf?); models there: tfidf"
    )


def test_leaderboard_checks_its_models_before_asking_any(club):
    result = run(
        "leaderboard", "--packet", str(SAMPLE_PACKET_PATH), "--model", "tfidf",
        "--model", "local-smolm2", "--db", club,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "did you mean local-smollm2?" in one_error_line(result)
    assert "calls" not in result.output  # refused before any model was run


def test_a_mistyped_event_names_the_closest(club):
    line = one_error_line(run("event", "show", "club-nite", "--db", club))
    assert (
        "no event 'club-nite' in the record (events: club-night); did you mean club-night?" in line
    )


def test_export_of_a_mistyped_event_names_the_closest_as_the_event_commands_do(club):
    result = run("export", "--format", "csv", "--out", "o.csv", "--event", "club-nigth",
                 "--db", club)  # fmt: skip
    assert result.exit_code == 1
    assert "no event 'club-nigth' in the record (events: club-night); did you mean club-night?" in (
        one_error_line(result)
    )


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("tfidf@1.5=Robo", "threshold 1.5 is out of range: it must be between 0 and 1"),
        ("tfidf@-0.5=Robo", "threshold -0.5 is out of range: it must be between 0 and 1"),
        ("tfidf@nan", "threshold nan is out of range: it must be between 0 and 1"),
        ("tfidf@0.5.1=Robo", "threshold '0.5.1' is not a number between 0 and 1"),
        ("tfidf@high/logit", "threshold 'high' is not a number between 0 and 1"),
        ("@0.5", "expected MODEL[@THRESHOLD][/CONFIDENCE][=NAME]"),
    ],
)
def test_a_model_team_that_does_not_parse_is_refused_in_one_line(tmp_path, spec, problem):
    url = f"sqlite:///{tmp_path / 'club.db'}"
    result = run("event", "create", "c", "--team", "Red", "--model-team", spec, "--db", url)
    assert result.exit_code == 2  # as a model name no match could play, on the same option
    assert one_error_line(result) == f"error: --model-team {spec!r}: {problem}"
    assert "Usage:" not in result.output
    assert not (tmp_path / "club.db").exists()


def test_demo_on_a_port_in_use_says_so_in_one_line(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run(
            "demo", "--host", "127.0.0.1", "--port", str(port), "--db", str(tmp_path / "d.db")
        )
    assert result.exit_code == 1
    line = one_error_line(result)
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in line


@pytest.mark.parametrize("name", ["a b.db", "é ü.db", "q?x=1.db", "p%20c.db", "h#1.db", "x:y.db"])
def test_a_path_with_any_characters_names_that_very_file(name, tmp_path, monkeypatch):
    from sqlalchemy.engine import URL, make_url

    from grace_arena.cli.options import database_url

    monkeypatch.chdir(tmp_path)
    escaped = URL.create("sqlite", database="/q?x").render_as_string(hide_password=False)
    if "?" in name and make_url(escaped).database != "/q?x":
        # an older SQLAlchemy cannot put a "?" in a URL's file name: said in one line
        result = run("db", "upgrade", "--db", name)
        assert result.exit_code == 2  # (as every --db that names no record)
        assert f"{name!r}" in one_error_line(result) and not list(tmp_path.iterdir())
        return
    url = database_url(name)
    assert make_url(url).database == str(tmp_path / name)
    result = run("db", "upgrade", "--db", name)
    assert result.exit_code == 0, result.output
    assert (tmp_path / name).is_file()
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".db"] == [name]
    if not any(c in name for c in "?#%"):
        assert f"record: sqlite:///{tmp_path / name}" in result.output  # printed as typed


def test_a_model_team_may_be_a_litellm_provider_model_name(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    spec = "openai/gpt-4o-mini@0.8/verbal=GPT"
    made = run("event", "create", "c", "--team", "Red", "--model-team", spec, "--db", url)
    assert made.exit_code == 0, made.output
    assert "gpt: GPT — model openai/gpt-4o-mini, threshold 0.8" in made.output
    scheduled = run("event", "schedule", "c", "--packet", str(SAMPLE_PACKET_PATH), "--db", url)
    assert scheduled.exit_code == 0, scheduled.output
    assert "GPT needs its guesses on grace-arena-sample-1" in " ".join(scheduled.output.split())


def test_serve_of_an_event_whose_model_has_no_guesses_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = "openai/gpt-4o-mini@0.8=GPT"
    assert (
        run("event", "create", "g", "--team", "Red", "--model-team", spec, "--db", "g.db").exit_code
        == 0
    )
    packet = str(SAMPLE_PACKET_PATH)
    assert run("event", "schedule", "g", "--packet", packet, "--db", "g.db").exit_code == 0
    result = run("serve", "--event", "g", "--db", "g.db", "--host", "127.0.0.1", "--port", "0")
    assert result.exit_code == 1
    line = one_error_line(result)
    assert "GPT (model openai/gpt-4o-mini) has no guesses on packet 'grace-arena-sample-1'" in line
    assert "precompute --packet PACKET --model openai/gpt-4o-mini --db" in line


@pytest.mark.parametrize(
    "args",
    [
        ["serve", "--host", "127.0.0.1", "--port", "0", "--packet", "Round 4.docx"],
        ["demo", "--host", "127.0.0.1", "--packet", "Round 4.docx"],
        ["demo", "--scripted", "--packet", "Round 4.docx"],
    ],
)
def test_a_packet_that_is_not_there_is_one_line_and_makes_no_record(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(*args, "--db", "r.db")
    assert result.exit_code == 1
    assert one_error_line(result) == "error: Round 4.docx: file not found"
    assert not (tmp_path / "r.db").exists()


def test_schedule_says_when_a_room_plays_matches_of_a_round_one_after_the_other(tmp_path):
    url = f"sqlite:///{tmp_path / 'club.db'}"
    teams = [a for t in ("Red", "Blue", "Green", "Gold") for a in ("--team", t)]
    models = ["--model-team", "tfidf@0.5=Robo", "--model-team", "tfidf@0.9=Careful"]
    assert run("event", "create", "club", *teams, *models, "--db", url).exit_code == 0
    packet = str(SAMPLE_PACKET_PATH)
    made = run("event", "schedule", "club", "--packet", packet, "--rooms", "2", "--rounds", "2",
               "--format", "grace", "--db", url)  # fmt: skip
    assert made.exit_code == 0, made.output
    notes = [line for line in made.output.splitlines() if line.startswith("note: round")]
    # round 1: each human team meets a model (4 matches); round 2: the humans meet (2)
    assert notes == ["note: round 1 has 4 matches for 2 rooms: room 1 plays two in a row, "
                     "room 2 plays two in a row"]  # fmt: skip
    # rooms enough: nothing to say
    again = run("event", "schedule", "club", "--packet", packet, "--rooms", "4", "--rounds", "2",
                "--format", "grace", "--db", url)  # fmt: skip
    assert again.exit_code == 0, again.output
    assert "in a row" not in again.output
