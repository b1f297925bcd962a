"""Substitutions on the moderator's screen: ``S`` (between cycles, in a format with lineups)
lists every player of the human teams, in the lineup or on the bench; the moderator picks the
player coming in (``i``, a player of the bench) and the one going out (``o``, of the same
team's lineup), or with ``f`` brings the player in to a free place. The screen returns the
message to send (or None); the server refuses a substitution outside halftime, before
overtime or a timeout, and says so."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from grace_arena.protocol import State, SubstituteMsg


class SubstituteScreen(ModalScreen[SubstituteMsg | None]):
    """Pick who comes in and who goes out."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("i", "pick_in", "Comes in"),
        Binding("o", "pick_out", "Goes out"),
        Binding("f", "free_place", "To a free place"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, state: State) -> None:
        super().__init__()
        self.state = state
        #: row key -> (team id, player id, in the lineup)
        self.rows: dict[str, tuple[str, str, bool]] = {}
        self.coming_in: tuple[str, str] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="substitute-box", classes="officiating-box"):
            yield Static(Text("Substitution", style="bold"), classes="title")
            yield DataTable(id="substitute-table", cursor_type="row", zebra_stripes=True)
            yield Static("Pick the player coming in (a player of the bench): i", id="sub-what")
            yield Static("", id="sub-error", classes="error")
            yield Static(
                Text.assemble(("i", "bold reverse"), " comes in  ", ("o", "bold reverse"),
                              " goes out  ", ("f", "bold reverse"), " to a free place  ",
                              ("esc", "bold reverse"), " cancel"),
                classes="hint",
            )  # fmt: skip
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("team", "player", "")
        for team in self.state.teams:
            if team.kind != "human" or team.lineup is None:
                continue
            playing = set(team.lineup)
            for pid in [*team.lineup, *(p for p in team.players if p not in playing)]:
                key = f"{team.id}:{pid}"
                self.rows[key] = (team.id, pid, pid in playing)
                where = "playing" if pid in playing else "bench"
                table.add_row(team.name, team.players.get(pid, pid), where, key=key)
        table.focus()

    def _selected(self) -> tuple[str, str, bool] | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.rows.get(key or "")

    def _player_name(self, team: str, player: str) -> str:
        found = next((t for t in self.state.teams if t.id == team), None)
        return found.players.get(player, player) if found else player

    def action_pick_in(self) -> None:
        error = self.query_one("#sub-error", Static)
        picked = self._selected()
        if picked is None:
            return
        team, player, playing = picked
        if playing:
            name = self._player_name(team, player)
            error.update(f"{name} plays already: pick a player of the bench.")
            return
        error.update("")
        self.coming_in = (team, player)
        name = self._player_name(team, player)
        self.query_one("#sub-what", Static).update(
            f"{name} comes in: pick who goes out (o), or f for a free place"
        )

    def action_pick_out(self) -> None:
        error = self.query_one("#sub-error", Static)
        picked = self._selected()
        if picked is None:
            return
        if self.coming_in is None:
            error.update("First pick the player coming in (i).")
            return
        team, player, playing = picked
        if team != self.coming_in[0] or not playing:
            error.update("Pick a player of the same team's lineup.")
            return
        self.dismiss(SubstituteMsg(team=team, player_in=self.coming_in[1], player_out=player))

    def action_free_place(self) -> None:
        if self.coming_in is None:
            self.query_one("#sub-error", Static).update("First pick the player coming in (i).")
            return
        team, player = self.coming_in
        self.dismiss(SubstituteMsg(team=team, player_in=player))

    def action_cancel(self) -> None:
        self.dismiss(None)
