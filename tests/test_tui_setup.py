"""The set-up screen as a newcomer meets it: how to quit is on screen, letters type into the
form, an open match says whose it is, and the demo says which port it took."""

from __future__ import annotations

import socket
from datetime import UTC, date, datetime

import pytest
from test_tui import SIZE, shown, text_of, until
from textual.widgets import Input, OptionList

from grace_arena.demo import DEMO_PORT, _pick_port
from grace_arena.protocol import MatchCreatedReply
from moderator_tui import make_tui
from moderator_tui.setup import SetupScreen, open_match_text

pytestmark = pytest.mark.anyio


def footer_keys(app) -> dict[str, str]:
    """The keys the footer shows, with what they do."""
    from textual.widgets._footer import FooterKey

    return {k.key: k.description for k in app.screen.query(FooterKey)}


async def test_the_set_up_screen_shows_how_to_quit_and_q_types_into_a_name(server):
    record = "sqlite:////tmp/club/record.db"
    app = make_tui(server.http_url, token=server.events.tokens.server(), record=record)
    async with app.run_test(size=SIZE) as pilot:
        setup = await until(pilot, lambda: shown(app, SetupScreen), "set-up")
        await until(pilot, lambda: setup.packets, "the packets")
        keys = await until(pilot, lambda: footer_keys(app), "the footer's keys")
        assert keys.get("ctrl+q") == "Quit"
        name = setup.query_one("#team-name", Input)
        assert name.has_focus
        await pilot.press("q", "u", "i", "z", "space", "q")
        assert name.value == "quiz q" and app.is_running
        # whose the open match is: its teams, when it started, how far it got; in which record
        assert f"in the record {record}" in text_of(setup.query_one("#record"))
        listing = setup.query_one("#open-matches", OptionList)
        (option,) = [listing.get_option_at_index(i) for i in range(listing.option_count)]
        shown_text = str(option.prompt)
        match_id = server.room().rm.id
        assert shown_text.startswith(f"match {match_id} · join {server.room().join_code}")
        assert "\nRed vs Blue" in shown_text
        assert "started today" in shown_text and "0 tossups read" in shown_text
        await pilot.click("#quit")
        await pilot.pause()
    assert app.return_code == 0


def test_an_open_match_of_an_earlier_day_says_its_date():
    created = datetime(2026, 3, 4, 18, 30, tzinfo=UTC)
    reply = MatchCreatedReply(
        match_id=3,
        join_code="K7QXM2",
        join_url="http://x/?code=K7QXM2",
        moderator_token="t",
        title="Club night",
        teams=["Red", "Blue"],
        tossups_started=1,
        created_at=created,
    )
    local = created.astimezone()
    text = open_match_text(reply, today=date(2026, 11, 27)).plain
    assert text == (
        f"match 3 · join K7QXM2\nRed vs Blue\nClub night\n"
        f"started {local:%d %b %Y} {local:%H:%M}, 1 tossup read"
    )
    same_day = open_match_text(reply, today=local.date()).plain
    assert f"started today {local:%H:%M}" in same_day


def test_the_demo_says_which_port_it_took_when_8000_is_taken():
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            holder.bind(("127.0.0.1", DEMO_PORT))
            holder.listen()
        except OSError:
            pass  # another program holds it already: the same case
        port, notice = _pick_port("127.0.0.1", None)
    assert port != DEMO_PORT
    assert notice == f"port {DEMO_PORT} is in use; serving on {port}"
    assert _pick_port("127.0.0.1", 8123) == (8123, None)  # asked for: no notice


async def test_the_app_shows_a_notice_once_up():
    app = make_tui("http://127.0.0.1:9", autostart=False, notice="port 8000 is in use")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [n.message for n in app._notifications] == ["port 8000 is in use"]


def _two_packets_of_one_title(folder) -> list:
    """The sample packet, and a second one of the same title in another file."""
    from grace_arena.core.packet import SAMPLE_PACKET_PATH, dump_packet, load_packet

    packet = load_packet(SAMPLE_PACKET_PATH)
    meta = packet.packet.model_copy(update={"id": "club-night-b"})
    second = folder / "club-night-b.yaml"
    dump_packet(packet.model_copy(update={"packet": meta}), second)
    return [SAMPLE_PACKET_PATH, second]


@pytest.mark.server(packets=_two_packets_of_one_title)
async def test_the_set_up_screen_tells_two_packets_of_one_title_apart_and_shows_the_focus(server):
    from textual.color import Color
    from textual.widgets import Select

    app = make_tui(server.http_url, token=server.events.tokens.server())
    async with app.run_test(size=SIZE) as pilot:
        setup = await until(pilot, lambda: shown(app, SetupScreen), "set-up")
        await until(pilot, lambda: len(setup.packets) == 2, "the two packets")
        # the same title, each with its file's name beside it
        options = setup.query_one("#packet", Select)._options
        labels = sorted(str(label) for label, value in options if str(label))
        assert labels == [
            "GRACE Arena Sample Packet (26 tossups) · club-night-b.yaml",
            "GRACE Arena Sample Packet (26 tossups) · sample_packet.yaml",
        ], labels
        # keyboard focus: the focused field or button takes the accent colour, in bold; the
        # others keep the screen's own
        accent = Color.parse(app.get_css_variables()["accent"])

        def lit_up(color: Color) -> bool:
            return sum(abs(a - b) for a, b in zip(color.rgb, accent.rgb, strict=True)) <= 3

        seen = set()
        for _ in range(12):
            focused = app.focused
            assert focused is not None
            lit = focused.query_one("SelectCurrent") if isinstance(focused, Select) else focused
            await pilot.pause()
            assert lit_up(lit.styles.background), (focused, lit.styles.background)
            assert lit.styles.text_style.bold, focused
            seen.add(type(focused).__name__)
            others = [w for w in setup.query("Input, Button") if w is not focused]
            assert not any(lit_up(w.styles.background) for w in others)
            await pilot.press("tab")
        assert {"Input", "Select", "Button"} <= seen, seen
