"""The scoresheet page of a real server, printed by a real browser (headless Chromium): a
20-tossup ACF match played through the websockets (with a fifth Blue player on the bench who
comes in during a timeout), its sheet's final totals those of the match, the substitution
marked, and on A4 and Letter it fits the page's width (nothing runs off the side) and prints on
one page."""

from __future__ import annotations

import re
import urllib.error
import urllib.request

import pytest
from browser import SCREENSHOTS
from live import buzz_first_word, clients, moderator, player, two_teams
from playwright.sync_api import Page

from grace_arena.core.packet import SAMPLE_PACKET_PATH

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server(
        secret="sheet-tests",
        packets=[SAMPLE_PACKET_PATH],
        first_match=two_teams(format="acf", answer_time=None),
        # the moderator's script sends faster than a person: no rate limit in its way
        rate_per_second=1000.0,
        rate_burst=1000,
    ),
]

#: Long names, as clubs have them: the columns must wrap them, not widen the page.
RED = ["Maximiliana Featherstonehaugh-Cholmondel", "Ann", "Bartholomew", "Zed"]
BLUE = ["Bo", "AnastasiaPapadopoulouWolfeschlegelstein", "Cy", "Dee"]

#: The printable width of each paper at the sheet's 10 mm margins, in CSS pixels (96 per inch).
PAPER = {"A4": round((210 - 20) / 25.4 * 96), "Letter": round((8.5 * 25.4 - 20) / 25.4 * 96)}


def _pdf_pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?!s)", data))


def _fits_the_width(page: Page, width: int) -> bool:
    page.set_viewport_size({"width": width, "height": 1000})
    page.emulate_media(media="print")
    return page.evaluate(
        "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )


def test_a_played_match_s_sheet_prints_on_one_page_of_a4_and_letter(server, pages) -> None:
    room = server.room(None)
    code = room.join_code
    mod = moderator(server)
    reds = [player(server, "red", name) for name in RED]
    blues = [player(server, "blue", name) for name in BLUE]
    sub = player(server, "blue", "Eve")  # a fifth: on the bench (ACF fields 4)
    sub_id, out_id = sub.joined["player"], blues[1].joined["player"]
    with clients(mod, *reds, *blues, sub):
        for number in range(20):
            if number == 10:  # Blue's timeout: Eve in for the player who buzzes no more
                mod.send(type="timeout", team="blue")
                mod.state(lambda s: s["timeout"] is not None and s["timeout"]["team"] == "blue")
                mod.send(type="substitute", team="blue", player_in=sub_id, player_out=out_id)
                mod.state(
                    lambda s: sub_id in next(t for t in s["teams"] if t["id"] == "blue")["lineup"]
                )
            phone = (reds if number % 3 else blues)[number % 4]
            buzz_first_word(mod, phone)
            mod.send(type="rule", ruling="correct" if number % 5 else "incorrect")
            state = mod.state(lambda s: s["floor"] is None)
            if state["match"]["phase"] in ("reading", "awaiting"):
                mod.send(type="throw_out", reason="nobody else buzzed")
                mod.state(lambda s: s["match"]["phase"] == "thrown_out")
                continue
            for part in range(3):
                mod.send(type="rule", ruling="correct" if (number + part) % 2 else "incorrect")
                state = mod.state(
                    lambda s, part=part: s["match"]["phase"] != "bonus" or s["bonus"]["part"] > part
                )
            assert state["match"]["phase"] == "answered"
        mod.send(type="end_match")
        final = mod.state(lambda s: s["match"]["phase"] == "ended")
    scores = {t["id"]: t["score"] for t in final["teams"]}

    page = pages({"width": 1200, "height": 900})
    page.goto(f"{server.http_url}/scoresheet?match={room.rm.id}&code={code}")
    rows = page.locator("table.sheet tbody tr")
    assert rows.count() == 20  # ended: no blank rows
    foot = page.locator("table.sheet tfoot td.total").all_inner_texts()
    assert [t.replace("−", "-") for t in foot] == [str(scores["red"]), str(scores["blue"])]
    assert page.locator("table.sheet thead th", has_text=RED[0]).count() == 1
    assert page.locator("table.sheet thead th", has_text="Eve").count() == 1
    # the substitution on the row of the first tossup after the timeout; Eve on the bench before
    assert "Timeout after this tossup: Blue (1st)" in rows.nth(9).locator("td.notes").inner_text()
    row = rows.nth(10)
    assert f"Sub: Eve in for {BLUE[1]} (own timeout)" in row.locator("td.notes").inner_text()
    assert (
        row.locator("td.sub-in").count() == 1
        and row.locator("td.bench", has_text="out").count() == 1
    )
    assert rows.nth(0).locator("td.bench").count() == 1  # Eve's cell
    page.screenshot(path=str(SCREENSHOTS / "grace-arena-scoresheet.png"), full_page=True)
    for paper, width in PAPER.items():
        assert _fits_the_width(page, width), f"the sheet runs off the side of {paper}"
        printed = page.pdf(format=paper)
        assert _pdf_pages(printed) == 1, f"{paper}: {_pdf_pages(printed)} pages"
        (SCREENSHOTS / f"grace-arena-scoresheet-{paper}.pdf").write_bytes(printed)
        # and the server's own PDF, made without a browser
        url = f"{server.http_url}/scoresheet.pdf?match={room.rm.id}&code={code}&paper={paper}"
        with urllib.request.urlopen(url, timeout=60) as reply:
            assert reply.headers["Content-Type"] == "application/pdf"
            made = reply.read()
        assert _pdf_pages(made) == 1, f"{paper}: the server's PDF has {_pdf_pages(made)} pages"
        (SCREENSHOTS / f"grace-arena-scoresheet-server-{paper}.pdf").write_bytes(made)


def test_a_blank_sheet_before_the_match_and_a_wrong_code_refused(server, pages) -> None:
    room = server.room(None)
    with clients(player(server, "red", "Ann")):
        page = pages({"width": 1200, "height": 900})
        page.goto(f"{server.http_url}/scoresheet?match={room.rm.id}&code={room.join_code}")
        assert page.locator("table.sheet tbody tr").count() == 20 + 3  # regulation, overtime
        assert page.locator("table.sheet thead th", has_text="Ann").count() == 1
        for paper, width in PAPER.items():
            assert _fits_the_width(page, width), paper
            assert _pdf_pages(page.pdf(format=paper)) == 1, paper
    url = f"{server.http_url}/scoresheet?match={room.rm.id}&code=WRONG1"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url, timeout=30)
    assert refused.value.code == 404
