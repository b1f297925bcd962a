"""Names, guesses and server messages are shown as text, never read as Rich markup."""

from __future__ import annotations

import pytest
from rich.console import Console
from test_tui_snapshots import ended_state, live_state, offline_app, summary

from grace_arena.protocol import ErrorMsg
from moderator_tui.end import model_buzzes, scores_table
from moderator_tui.messages import ServerError
from moderator_tui.setup import roster
from moderator_tui.widgets import describe_event

HOSTILE = "[/] [bold]Bob[/bold] [or The Whale]"


def render(renderable) -> str:
    console = Console(width=200, record=True)
    console.print(renderable)
    return console.export_text()


def hostile_state(state):
    teams = [
        t.model_copy(update={"name": f"{t.name} {HOSTILE}", "players": {"p-1": HOSTILE}})
        for t in state.teams
    ]
    return state.model_copy(update={"teams": teams})


def test_roster_and_end_tables_show_hostile_names_literally():
    state = hostile_state(ended_state())
    hostile_summary = summary().model_copy(
        update={"buzzes": [b.model_copy(update={"answer": HOSTILE}) for b in summary().buzzes]}
    )
    assert HOSTILE in render(roster(hostile_state(live_state())))
    assert HOSTILE in render(scores_table(state, hostile_summary))
    assert HOSTILE in render(model_buzzes(state, hostile_summary))


def test_log_lines_show_hostile_names_literally():
    state = hostile_state(live_state())
    line = describe_event(
        {
            "type": "buzz_accepted",
            "team": "red",
            "player": "p-1",
            "word_index": 3,
            "answer": HOSTILE,
        },
        state.teams,
    )
    assert line is not None and HOSTILE in line.plain


@pytest.mark.anyio
async def test_a_server_error_with_brackets_is_a_notification_not_a_crash():
    app = offline_app()
    async with app.run_test() as pilot:
        app.post_message(ServerError(ErrorMsg(code="not_found", message=f"no team {HOSTILE!r}")))
        await pilot.pause(0.3)  # the toast is rendered
        assert any(HOSTILE in n.message for n in app._notifications)
        assert app.is_running


def test_the_log_says_the_pace_once_for_a_run_of_pace_changes():
    from moderator_tui.widgets import EventLog

    state = live_state()
    paces = [{"type": "pace_changed", "wpm": w} for w in (200, 220, 240)]
    events = [*paces, {"type": "reading_paused"}, {"type": "pace_changed", "wpm": 220}]
    text = render(EventLog().render_state(state.model_copy(update={"last_events": events})))
    assert "pace_changed" not in text
    assert text.count("pace 240 words a minute") == 1 and "pace 200" not in text
    assert "pace 220 words a minute" in text.split("reading paused")[1]


def test_the_clock_given_back_reads_as_words_in_the_log():
    line = describe_event(
        {"type": "clock_resumed", "t": 112.4, "down_since": 100.0, "deadline": 119.0,
         "reason": "record"},
        [],
    )  # fmt: skip
    assert line is not None
    assert line.plain == "clock given back 12 s (the record was unavailable)"
