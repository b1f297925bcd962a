"""The moderator's AI players screen (QANTA 2026's hybrid teams): every AI of the match with
its team, weight class, mode and K; ``a`` autonomous or ``s`` semi for the coming half (before
the match, or once at halftime), ``m`` mutes it for the rest of the match (irrevocable), ``b``
hands a teammate's buzz with the floor to it (a semi AI)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from grace_arena.protocol import AiModesMsg, BuzzSourceMsg, MuteAiMsg, State

__all__ = ["AiPlayersScreen"]


class AiPlayersScreen(ModalScreen[AiModesMsg | MuteAiMsg | BuzzSourceMsg | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "mode('autonomous')", "Autonomous"),
        Binding("s", "mode('semi')", "Semi"),
        Binding("m", "mute", "Mute"),
        Binding("b", "buzz_source", "Answers for the buzz"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, state: State) -> None:
        super().__init__()
        self.ais = {a.id: (t.id, a) for t in state.teams for a in t.ais}
        self.teams = {t.id: t.name for t in state.teams}

    def compose(self) -> ComposeResult:
        with Vertical(id="ai-box", classes="officiating-box"):
            yield Static(Text("AI players", style="bold"), classes="title")
            yield DataTable(id="ai-table", cursor_type="row", zebra_stripes=True)
            yield Static(
                Text.assemble(("a", "bold reverse"), " autonomous  ", ("s", "bold reverse"),
                              " semi (a teammate's key)  ", ("m", "bold reverse"),
                              " mute for the match  ", ("b", "bold reverse"),
                              " it answers for the buzz  ", ("esc", "bold reverse"), " cancel"),
                classes="hint",
            )  # fmt: skip
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("team", "AI", "model", "weight class", "mode", "K")
        for ai_id, (team, a) in self.ais.items():
            table.add_row(self.teams.get(team, team), a.name, a.model, a.weight_class, a.mode,
                          str(a.k), key=ai_id)  # fmt: skip
        table.focus()

    def _selected(self) -> tuple[str, str] | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value or ""
        team, _ = self.ais[key]
        return team, key

    def action_mode(self, mode: str) -> None:
        chosen = self._selected()
        if chosen is not None:
            team, ai = chosen
            self.dismiss(AiModesMsg(team=team, modes={ai: mode}))  # type: ignore[dict-item]

    def action_mute(self) -> None:
        chosen = self._selected()
        if chosen is not None:
            team, ai = chosen
            self.dismiss(MuteAiMsg(team=team, ai=ai))

    def action_buzz_source(self) -> None:
        """The human's buzz with the floor goes to this semi AI of the same team."""
        chosen = self._selected()
        if chosen is not None:
            self.dismiss(BuzzSourceMsg(ai=chosen[1]))

    def action_cancel(self) -> None:
        self.dismiss(None)
