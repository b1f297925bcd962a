"""An event's screens: the room picker (``grace-arena moderate --event NAME``) and the
standings, reachable with ``r`` from the lobby, the tossups and the end of a match."""

from __future__ import annotations

from typing import Any, ClassVar

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from grace_arena.protocol import EventRoomInfo, StandingsView
from moderator_tui.messages import HttpFailed, RoomsLoaded
from moderator_tui.screens import showing
from moderator_tui.widgets import phase_label, room_label


def room_option(room: EventRoomInfo) -> Option:
    """One room of the picker: what it plays now, and whether it can be moderated here."""
    label = Text()
    label.append(f"{room_label(room.room)}", style="bold")
    label.append(f"  join {room.join_code}  ")
    if room.round is None:
        label.append("every match played", style="dim")
        return Option(label, id=room.join_code, disabled=True)
    label.append(f"round {room.round}: ")
    label.append(" vs ".join(room.teams) or "—")
    if not room.served_here:
        label.append("  (served by another server process)", style="yellow")
    return Option(label, id=room.join_code, disabled=not room.moderator_token)


class RoomPickerScreen(Screen):
    """The rooms of an event: enter on one moderates it, from match to match."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f5", "reload", "Reload"),
        Binding("question_mark", "app.help", "Help", key_display="?"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, event: str) -> None:
        super().__init__()
        self.event = event
        self.rooms: dict[str, EventRoomInfo] = {}

    def compose(self) -> ComposeResult:
        yield Static(f" GRACE Arena — {self.event}: pick your room ", id="title")
        with Vertical(id="picker-body"):
            yield Static(
                "Each room has its own moderator. Pick yours (arrows, then enter): this screen "
                "then follows the room from round to round.",
                classes="hint",
            )
            yield OptionList(Option("loading the rooms…", disabled=True), id="rooms")
        yield Footer()

    def on_mount(self) -> None:
        if showing(self):
            self.query_one("#rooms", OptionList).focus()

    @on(RoomsLoaded)
    def show_rooms(self, message: RoomsLoaded) -> None:
        if not showing(self):
            return
        self.rooms = {r.join_code: r for r in message.rooms}
        listing = self.query_one("#rooms", OptionList)
        listing.clear_options()
        if not message.rooms:
            listing.add_option(Option("this event has no rooms yet", disabled=True))
        for room in message.rooms:
            listing.add_option(room_option(room))
        playing = [i for i, r in enumerate(message.rooms) if r.round is not None]
        if playing:
            listing.highlighted = playing[0]
        listing.focus()

    @on(HttpFailed)
    def failed(self, message: HttpFailed) -> None:
        if message.what == "rooms":
            listing = self.query_one("#rooms", OptionList)
            listing.clear_options()
            listing.add_option(Option(Text(message.detail, style="red"), disabled=True))

    @on(OptionList.OptionSelected, "#rooms")
    def pick(self, event: OptionList.OptionSelected) -> None:
        room = self.rooms.get(event.option.id or "")
        if room is not None:
            self.app.choose_room(room)  # type: ignore[attr-defined]

    def action_reload(self) -> None:
        self.app.load_rooms(self.event)  # type: ignore[attr-defined]


def standings_table(view: StandingsView, *, highlight: set[str] | None = None) -> Table:
    """Won/lost, points, points per game, tossups heard, points per 20 of them, PPB (once
    bonuses are played) and buzzes per team, best first."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), expand=False)
    bonuses = any(row.bonuses_heard for row in view.rows)  # PPB once bonuses are played
    for header, justify in (
        ("#", "right"),
        ("team", "left"),
        ("W-L", "center"),
        ("pts", "right"),
        ("PPG", "right"),
        ("TUH", "right"),
        ("P/20TUH", "right"),
        *((("PPB", "right"),) if bonuses else ()),
        ("15/10/-5", "right"),
        ("live", "right"),
    ):
        table.add_column(header, justify=justify, no_wrap=header != "team")  # type: ignore[arg-type]
    for row in view.rows:
        record = f"{row.won}-{row.lost}" + (f"-{row.tied}" if row.tied else "")
        name = Text(row.name, style="bold" if highlight and row.team in highlight else "")
        if row.kind == "model":
            name.append(" · model", style="cyan")

        def two(value: float | None, digits: int = 1) -> str:
            return "—" if value is None else f"{value:.{digits}f}"

        table.add_row(
            str(row.rank),
            name,
            record,
            Text(str(row.points), style="bold"),
            two(row.points_per_game),
            str(row.tossups_heard),
            two(row.points_per_20_tuh),
            *((two(row.points_per_bonus, 2),) if bonuses else ()),
            f"{row.powers}/{row.correct - row.powers}/{row.negs}",
            str(row.live) if row.live else "",
        )
    return table


def rooms_table(view: StandingsView) -> Table:
    """What each room plays now (live scores for the rooms this server serves)."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), expand=False)
    for header in ("room", "join", "round", "match", "now"):
        table.add_column(header, no_wrap=header != "match")
    for r in view.rooms:
        if r.round is None:
            table.add_row(room_label(r.room), r.join_code, "—", "every match played", "")
            continue
        if r.scores and len(r.teams) == 2:
            a, b = r.teams
            match = f"{a} {r.scores.get(a, 0)} – {r.scores.get(b, 0)} {b}"
        elif r.scores:
            match = " · ".join(f"{name} {r.scores.get(name, 0)}" for name in r.teams)
        else:
            match = " vs ".join(r.teams)
        table.add_row(
            room_label(r.room),
            r.join_code,
            f"{r.round} of {view.rounds}",
            Text(match),
            phase_label(r.phase or "", r.tossups_played),
        )
    return table


def standings_body(view: StandingsView | None, playing: set[str] | None = None) -> RenderableType:
    if view is None:
        return Text("loading the standings…", style="dim")
    title = Text()
    title.append(f" {view.title} ", style="bold reverse")
    title.append(f"  standings after every ruling so far · {view.rounds} rounds")
    parts: list[RenderableType] = [title, standings_table(view, highlight=playing)]
    if view.rooms:
        parts += [Text("Rooms", style="bold"), rooms_table(view)]
    parts.append(
        Text(
            "W-L: matches won and lost (-tied); PPG: points per game; TUH: tossups heard; "
            "P/20TUH: points per 20 tossups heard; PPB: points per bonus; 15/10/-5: powers, "
            "other correct buzzes, negs; live: matches under way. Ranked by win %, then PPB, "
            "then P/20TUH.",
            style="dim",
        )
    )
    return Group(*parts)


class StandingsScreen(ModalScreen[None]):
    """The event's standings, refreshed after each ruling (``app.standings``)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,r,q", "close", "Close", key_display="esc"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="standings-box"), VerticalScroll():
            yield Static("", id="standings")
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "standings", self.show)

    def show(self, _: Any = None) -> None:
        if not showing(self):
            return
        view: StandingsView | None = self.app.standings  # type: ignore[attr-defined]
        state = self.app.state  # type: ignore[attr-defined]
        playing = {t.id for t in state.teams} if state is not None else None
        self.query_one("#standings", Static).update(standings_body(view, playing))

    def action_close(self) -> None:
        self.dismiss(None)
