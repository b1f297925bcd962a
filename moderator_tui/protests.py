"""Protests and corrections on the moderator's screen: ``P`` files a team's protest (a small
form: the team, the tossup or bonus part, the answer given, the reason) and ``C`` picks a
ruling of an earlier cycle and corrects it (correct, incorrect, or who buzzed). Each screen
returns the message to send (or None), and the live screen sends it; the server's state
then shows the protest, or the cycle corrected, to every screen."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Input, RadioButton, RadioSet, Static

from grace_arena.protocol import CorrectMsg, ProtestMsg, RulingInForceView, State


class ProtestScreen(ModalScreen[ProtestMsg | None]):
    """A team's protest: the match goes on; a TD resolves it after the game."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "file", "File the protest", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, state: State) -> None:
        super().__init__()
        self.state = state
        cycles = state.officiating.cycles if state.officiating else []
        self.last = cycles[-1].number if cycles else None

    def compose(self) -> ComposeResult:
        with Vertical(id="protest-box", classes="officiating-box"):
            yield Static(Text("Protest", style="bold"), classes="title")
            yield Static("Team protesting")
            with RadioSet(id="protest-team"):
                for i, team in enumerate(self.state.teams):
                    yield RadioButton(team.name, value=i == 0, name=team.id)
            yield Input(
                value=str(self.last or ""), id="protest-tossup",
                placeholder="tossup: its number in the match (1, 2, ...) or its id",
            )  # fmt: skip
            yield Input(id="protest-part", placeholder="bonus part (1, 2, 3): empty for the tossup")
            yield Input(id="protest-answer", placeholder="the answer the team gave")
            yield Input(id="protest-reason", placeholder="the team's reason")
            yield Static("", id="protest-error", classes="error")
            yield Static(
                Text.assemble(("ctrl+s", "bold reverse"), " file (or enter in the reason)   ",
                              ("esc", "bold reverse"),
                              " cancel   the match goes on; a TD resolves it"),
                classes="hint",
            )  # fmt: skip
        yield Footer()

    def on_mount(self) -> None:
        # the team first (arrows pick it, tab goes on): a form that opened with its fields
        # filled must not be filed by a stray Enter
        self.query_one("#protest-team", RadioSet).focus()

    def _value(self, widget_id: str) -> str:
        return self.query_one(f"#{widget_id}", Input).value.strip()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter goes to the next field; in the reason, the last, it files the protest."""
        if event.input.id == "protest-reason":
            self.action_file()
        else:
            self.focus_next()

    def action_file(self) -> None:
        error = self.query_one("#protest-error", Static)
        pressed = self.query_one("#protest-team", RadioSet).pressed_button
        tossup, part = self._value("protest-tossup"), self._value("protest-part")
        if pressed is None or not pressed.name:
            error.update("Pick the team protesting.")
            return
        if not tossup:
            error.update("Say which tossup: its number in the match, or its id.")
            return
        if part and not (part.isdigit() and int(part) >= 1):
            error.update(f"A bonus part is a number from 1 ({part!r} is not).")
            return
        if not self._value("protest-reason"):
            error.update("Say the team's reason: the TD decides on it.")
            self.query_one("#protest-reason", Input).focus()
            return
        self.dismiss(
            ProtestMsg(
                team=pressed.name, tossup=tossup, part=int(part) if part else None,
                answer=self._value("protest-answer"), reason=self._value("protest-reason"),
            )
        )  # fmt: skip

    def action_cancel(self) -> None:
        self.dismiss(None)


def ruling_row(r: RulingInForceView, teams: dict[str, str]) -> tuple[str, str, str, str]:
    """What a ruling in force is, in the table of ``C``: what was ruled, who, the ruling and
    its points."""
    if r.part is None:
        what = "tossup"
        who = f"{r.player_name or r.player} ({teams.get(r.team, r.team)})"
    else:
        what = f"part {r.part}" + (" (bounceback)" if r.bounceback else "")
        who = teams.get(r.team, r.team)
    ruling = r.ruling + (" (corrected)" if r.corrected else "")
    return what, who, ruling, f"{r.points:+d}"


class CorrectScreen(ModalScreen[CorrectMsg | None]):
    """Pick a ruling of any cycle played and correct it: ``c`` correct, ``i`` incorrect, ``w``
    who buzzed (a tossup's); then a reason, and enter."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "choose('correct')", "Correct"),
        Binding("i", "choose('incorrect')", "Incorrect"),
        Binding("w", "choose('player')", "Who buzzed"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, state: State) -> None:
        super().__init__()
        self.state = state
        self.teams = {t.id: t.name for t in state.teams}
        self.rulings: dict[str, RulingInForceView] = {}
        self.choice: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="correct-box", classes="officiating-box"):
            yield Static(Text("Correct an earlier cycle", style="bold"), classes="title")
            yield DataTable(id="correct-table", cursor_type="row", zebra_stripes=True)
            with Vertical(id="correct-form"):
                yield Static("", id="correct-what")
                yield Input(id="correct-player", placeholder="who buzzed: the player's name")
                yield Input(id="correct-reason", placeholder="why (kept in the record)")
            yield Static("", id="correct-error", classes="error")
            yield Static(
                Text.assemble(("c", "bold reverse"), " correct  ", ("i", "bold reverse"),
                              " incorrect  ", ("w", "bold reverse"), " who buzzed  ",
                              ("esc", "bold reverse"), " cancel"),
                classes="hint",
            )  # fmt: skip
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "tossup", "what", "who", "ruling", "points")
        cycles = self.state.officiating.cycles if self.state.officiating else []
        for c in cycles:
            for r in c.rulings:
                key = str(r.seq)
                self.rulings[key] = r
                table.add_row(str(r.seq), str(c.number), *ruling_row(r, self.teams), key=key)
        if table.row_count:
            table.move_cursor(row=table.row_count - 1)
        self.query_one("#correct-form").display = False
        table.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose":
            # the keys pick the correction while the table has the focus (the form types)
            return self.choice is None and bool(self.rulings)
        return True

    def _selected(self) -> RulingInForceView | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.rulings.get(key or "")

    def action_choose(self, choice: str) -> None:
        r = self._selected()
        error = self.query_one("#correct-error", Static)
        if r is None:
            return
        if choice == "player" and r.part is not None:
            error.update("A bonus part is the team's: only a tossup's buzz has a player.")
            return
        self.choice = choice
        what = ruling_row(r, self.teams)
        verb = "credit to another player" if choice == "player" else f"rule {choice}"
        self.query_one("#correct-what", Static).update(
            f"Ruling {r.seq}: {what[0]}, {what[1]}, {what[2]} → {verb}"
        )
        self.query_one("#correct-form").display = True
        player = self.query_one("#correct-player", Input)
        player.display = choice == "player"
        (player if choice == "player" else self.query_one("#correct-reason", Input)).focus()
        self.refresh_bindings()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "correct-player":
            self.query_one("#correct-reason", Input).focus()
            return
        r = self._selected()
        if r is None or self.choice is None:
            return
        reason = self.query_one("#correct-reason", Input).value.strip()
        if self.choice != "player":
            self.dismiss(CorrectMsg(seq=r.seq, ruling=self.choice, reason=reason))  # type: ignore[arg-type]
            return
        given = self.query_one("#correct-player", Input).value.strip()
        players = {pid: name for t in self.state.teams for pid, name in t.players.items()}
        found = [pid for pid, name in players.items()
                 if given.casefold() in (pid.casefold(), name.casefold())]  # fmt: skip
        if len(found) != 1:
            names = ", ".join(sorted(players.values())) or "nobody has joined"
            self.query_one("#correct-error", Static).update(
                f"No one player is {given!r}: the players are {names}."
            )
            self.query_one("#correct-player", Input).focus()
            return
        self.dismiss(CorrectMsg(seq=r.seq, player=found[0], reason=reason))

    def action_cancel(self) -> None:
        if self.choice is not None:  # back to the table
            self.choice = None
            self.query_one("#correct-form").display = False
            self.query_one(DataTable).focus()
            self.refresh_bindings()
            return
        self.dismiss(None)
