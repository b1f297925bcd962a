"""Before the match: the set-up form, then the lobby (join URL, QR code, who joined)."""

from __future__ import annotations

from datetime import UTC, date
from typing import Any, ClassVar

from pydantic import ValidationError
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Footer,
    Input,
    Label,
    OptionList,
    RadioButton,
    RadioSet,
    Select,
    Static,
)
from textual.widgets.option_list import Option

from grace_arena.core.formats import registry
from grace_arena.core.specs import parse_tossups, team_id
from grace_arena.protocol import MatchCreatedReply, MatchSetup, State, TeamSetup
from moderator_tui.messages import CatalogLoaded, HttpFailed
from moderator_tui.screens import MatchScreen, showing
from moderator_tui.widgets import ControlBanner, QRCode, StatusLine, join_text

HUMAN = "human"
#: The formats of the set-up's Format list (one file each in ``grace_arena.core.formats``).
FORMAT_CHOICES = [(f.label, f.name) for f in registry().values()]
OFFLINE_MODEL = "tfidf"


def open_match_text(reply: MatchCreatedReply, today: date | None = None) -> Text:
    """An open match as the set-up screen lists it: whose it is (its teams, title), when it
    was started and how far it got, so that one left by an earlier run is recognised."""
    text = Text()
    text.append(f"match {reply.match_id}", style="bold")
    text.append(f" · join {reply.join_code}")
    if reply.teams:
        text.append("\n" + " vs ".join(reply.teams))
    if reply.title:
        text.append(f"\n{reply.title}", style="dim")
    when = []
    if reply.created_at is not None:
        created = reply.created_at
        if created.tzinfo is None:
            created = created.replace(tzinfo=UTC)
        local = created.astimezone()
        day = "today" if local.date() == (today or date.today()) else f"{local:%d %b %Y}"
        when.append(f"started {day} {local:%H:%M}")
    n = reply.tossups_started
    when.append(f"{n} tossup{'s' if n != 1 else ''} read")
    text.append("\n" + ", ".join(when), style="dim")
    return text


def packet_label(packet: dict[str, Any]) -> str:
    """A packet as the Packet list shows it: its title, how many tossups, and the file it came
    from (two packets of the same title are told apart by it)."""
    label = f"{packet.get('title') or packet['id']} ({len(packet['tossups'])} tossups)"
    return label + (f" · {packet['file']}" if packet.get("file") else "")


class SetupScreen(Screen):
    """Packet and tossups, teams (human or model), scoring, reading mode and pace."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "create", "Create the match", priority=True),
        Binding("ctrl+r", "resume_open", "Resume an open match", priority=True),
        Binding("f1", "app.help", "Help"),
        # Shown in the footer (the app's own ctrl+q is hidden): letters type into the form
        # here, so quitting is ctrl+q, or the Quit button.
        Binding("ctrl+q", "app.quit", "Quit", priority=True),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.packets: list[dict[str, Any]] = []
        self.models: list[str] = []
        self.teams: list[TeamSetup] = []
        self.creating = False

    def compose(self) -> ComposeResult:
        d = self.app.defaults  # type: ignore[attr-defined]
        yield Static(" GRACE Arena — set up a match ", id="title")
        with Horizontal(id="setup-body"):
            with VerticalScroll(id="setup-form"):
                with Horizontal(classes="row"):
                    yield Label("Title", classes="label")
                    yield Input(placeholder="the packet's title", id="title-input", compact=True)
                with Horizontal(classes="row"):
                    yield Label("Packet", classes="label")
                    yield Select[str](
                        [], prompt="loading…", id="packet", allow_blank=True, compact=True
                    )
                with Horizontal(classes="row"):
                    yield Label("Tossups", classes="label")
                    yield Input(
                        d.tossups, id="tossups", placeholder="all, 1-8 or 1,3,5", compact=True
                    )
                    yield Static("", id="tossup-count", classes="hint")
                yield Static("Teams", classes="section")
                yield DataTable(id="teams", cursor_type="row", zebra_stripes=True)
                yield Static(
                    "Add a team: its name, human or a model player, and for a model the "
                    "confidence at which it buzzes (0-1).",
                    classes="hint",
                )
                with Horizontal(classes="row"):
                    yield Input(placeholder="team name", id="team-name", compact=True)
                    yield Select[str](
                        [("human team", HUMAN)],
                        value=HUMAN,
                        id="team-kind",
                        allow_blank=False,
                        compact=True,
                    )
                    yield Input(
                        "0.5",
                        id="threshold",
                        placeholder="threshold",
                        restrict=r"[0-9.]*",
                        compact=True,
                    )
                with Horizontal(classes="row buttons"):
                    yield Button("Add team", id="add-team", variant="primary", compact=True)
                    yield Button("Remove selected", id="remove-team", compact=True)
                yield Static("Scoring", classes="section")
                with Horizontal(classes="row"):
                    yield Label("Format", classes="label")
                    yield Select[str](
                        FORMAT_CHOICES, value="grace", id="format", allow_blank=False,
                        compact=True,
                    )  # fmt: skip
                    yield Checkbox("bouncebacks", False, id="bouncebacks", compact=True)
                with Horizontal(classes="row"):
                    yield Label("correct", classes="small-label")
                    yield Input(
                        "10", id="correct", restrict=r"-?[0-9]*", classes="number", compact=True
                    )
                    yield Label("power", classes="small-label")
                    yield Input(
                        "15", id="power", restrict=r"-?[0-9]*", classes="number", compact=True
                    )
                    yield Label("neg", classes="small-label")
                    yield Input(
                        "-5", id="neg", restrict=r"-?[0-9]*", classes="number", compact=True
                    )
                with Horizontal(classes="row"):
                    yield Checkbox(
                        "negs only before the end", True, id="negs-before-end", compact=True
                    )
                    yield Checkbox("rebuzz after a neg", True, id="rebuzz", compact=True)
                yield Static("Reading", classes="section")
                with RadioSet(id="mode"):
                    yield RadioButton(
                        "read aloud (I read; players listen)", value=True, id="read_aloud"
                    )
                    yield RadioButton("screen (players read the text)", id="screen")
                with Horizontal(classes="row"):
                    yield Label("pace (wpm)", classes="label")
                    yield Input(
                        str(d.wpm), id="wpm", restrict=r"[0-9]*", classes="number", compact=True
                    )
                    yield Label("answer time (s)", classes="label")
                    yield Input(
                        "", id="answer-time", restrict=r"[0-9.]*", classes="number", compact=True
                    )
                    yield Static("blank: no timer", classes="hint")
                with Horizontal(classes="row buttons"):
                    yield Button(
                        "Create the match (ctrl+s)", id="create", variant="success", compact=True
                    )
                    yield Button("Quit (ctrl+q)", id="quit", compact=True)
            with Vertical(id="setup-side"):
                yield Static("Open matches on this server", classes="section")
                record = self.app.target.record  # type: ignore[attr-defined]
                if record:
                    yield Static(f"in the record {record}", id="record", classes="hint")
                yield OptionList(id="open-matches")
                yield Static("ctrl+r resumes one (enter on it, if several).", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        if not showing(self):
            return
        table = self.query_one("#teams", DataTable)
        table.add_columns("team", "kind", "threshold")
        self.teams = [TeamSetup(id="red", name="Red"), TeamSetup(id="blue", name="Blue")]
        if self.app.defaults.model_team:  # type: ignore[attr-defined]
            self.teams.append(
                TeamSetup(
                    id="model",
                    name="Model (tfidf)",
                    kind="model",
                    model=OFFLINE_MODEL,
                    threshold=0.5,
                )
            )
        self._show_teams()
        self.query_one("#open-matches", OptionList).add_option(Option("loading…", disabled=True))
        self.query_one("#team-name", Input).focus()
        for field in self.query(Input):
            field.cursor_blink = self.app.cursor_blink  # type: ignore[attr-defined]
        if self.app.autostart:  # type: ignore[attr-defined]
            self.app.load_catalog()  # type: ignore[attr-defined]

    # -- catalog -------------------------------------------------------------------------------

    @on(CatalogLoaded)
    def show_catalog(self, message: CatalogLoaded) -> None:
        if not showing(self):
            return
        self.packets = message.packets
        self.models = message.models
        select = self.query_one("#packet", Select)
        select.set_options([(packet_label(p), p["id"]) for p in self.packets])
        if self.packets:
            select.value = self.packets[0]["id"]
            title = self.query_one("#title-input", Input)
            if not title.value:
                title.value = self.packets[0]["title"]
        kinds = [("human team", HUMAN), ("model: tfidf (offline)", f"model:{OFFLINE_MODEL}")]
        kinds += [(f"model: {m}", f"model:{m}") for m in self.models if m != OFFLINE_MODEL]
        self.query_one("#team-kind", Select).set_options(kinds)
        self.query_one("#team-kind", Select).value = HUMAN
        listing = self.query_one("#open-matches", OptionList)
        listing.clear_options()
        if not message.matches:
            listing.add_option(Option("none", disabled=True))
        for reply in message.matches:
            listing.add_option(Option(open_match_text(reply), id=str(reply.match_id)))
        self._matches = {str(m.match_id): m for m in message.matches}
        self._count()

    @on(HttpFailed)
    def http_failed(self, message: HttpFailed) -> None:
        if message.what == "create":
            self.creating = False
            self.query_one("#create", Button).disabled = False

    @on(OptionList.OptionSelected, "#open-matches")
    def resume(self, event: OptionList.OptionSelected) -> None:
        reply = getattr(self, "_matches", {}).get(event.option.id or "")
        if reply is not None:
            self.app.open_match(reply, created=False)  # type: ignore[attr-defined]

    def action_resume_open(self) -> None:
        """One open match: resume it. Several: choose one from the list (enter)."""
        matches = list(getattr(self, "_matches", {}).values())
        if not matches:
            self.notify("There is no open match on this server.", severity="warning")
        elif len(matches) == 1:
            self.app.open_match(matches[0], created=False)  # type: ignore[attr-defined]
        else:
            self.query_one("#open-matches", OptionList).focus()
            self.notify("Choose the match with the arrows, then enter.")

    @on(Select.Changed, "#format")
    def format_chosen(self, event: Select.Changed) -> None:
        """A format fills in its points (which may then be changed: a custom format)."""
        from grace_arena.core.formats import rules_for
        from grace_arena.core.rules import rule_set

        rules = rule_set(rules_for(str(event.value)))
        tossups = rules.tossups
        self.query_one("#correct", Input).value = str(tossups.correct_points)
        power = tossups.power_points
        self.query_one("#power", Input).value = "" if power is None else str(power)
        self.query_one("#neg", Input).value = str(tossups.neg_points)
        bouncebacks = self.query_one("#bouncebacks", Checkbox)
        bouncebacks.disabled = not rules.bonuses.played
        if not rules.bonuses.played:
            bouncebacks.value = False

    @on(Input.Changed, "#tossups")
    @on(Select.Changed, "#packet")
    def _count(self) -> None:
        label = self.query_one("#tossup-count", Static)
        packet = self._packet()
        if packet is None:
            label.update("")
            return
        try:
            n = len(parse_tossups(self.query_one("#tossups", Input).value, len(packet["tossups"])))
        except ValueError as exc:
            label.update(Text(str(exc), style="red"))
            return
        label.update(f"{n} of {len(packet['tossups'])}")

    def _packet(self) -> dict[str, Any] | None:
        value = self.query_one("#packet", Select).value
        return next((p for p in self.packets if p["id"] == value), None)

    # -- teams ---------------------------------------------------------------------------------

    def _show_teams(self) -> None:
        table = self.query_one("#teams", DataTable)
        table.clear()
        for team in self.teams:
            kind = "human" if team.kind == "human" else f"model: {team.model}"
            threshold = "" if team.threshold is None else f"{team.threshold:.2f}"
            table.add_row(Text(team.name), Text(kind), threshold, key=team.id)

    @on(Button.Pressed, "#add-team")
    @on(Input.Submitted, "#team-name")
    def add_team(self) -> None:
        name = self.query_one("#team-name", Input).value.strip()
        kind = str(self.query_one("#team-kind", Select).value)
        if kind != HUMAN and not name:
            name = f"Model ({kind.removeprefix('model:')})"
        if not name:
            self.notify("Type the team's name first.", severity="warning")
            return
        tid = team_id(name, {t.id for t in self.teams})
        try:
            if kind == HUMAN:
                team = TeamSetup(id=tid, name=name)
            else:
                threshold = float(self.query_one("#threshold", Input).value or 0.5)
                team = TeamSetup(
                    id=tid,
                    name=name,
                    kind="model",
                    model=kind.removeprefix("model:"),
                    threshold=threshold,
                )
        except (ValueError, ValidationError) as exc:
            self.notify(_first_error(exc), title="Not a valid team", severity="error", markup=False)
            return
        # (names compared as kept: "José" typed with a combining accent is the same name)
        if any(t.name.casefold() == team.name.casefold() for t in self.teams):
            message = f"There is already a team called {team.name}."
            self.notify(message, severity="warning", markup=False)
            return
        self.teams.append(team)
        self._show_teams()
        self.query_one("#team-name", Input).value = ""

    @on(Button.Pressed, "#quit")
    def quit_button(self) -> None:
        self.app.exit()

    @on(Button.Pressed, "#remove-team")
    def remove_team(self) -> None:
        table = self.query_one("#teams", DataTable)
        if not self.teams:
            return
        row = min(table.cursor_row, len(self.teams) - 1)
        removed = self.teams.pop(row)
        self._show_teams()
        self.notify(f"Removed {removed.name}.", markup=False)

    # -- create --------------------------------------------------------------------------------

    def build_setup(self) -> MatchSetup:
        """The form as a ``MatchSetup``; raises ``ValueError`` saying what to fix."""
        packet = self._packet()
        if packet is None:
            raise ValueError("choose a packet")
        if not self.teams:
            raise ValueError("add at least one team")
        indices = parse_tossups(self.query_one("#tossups", Input).value, len(packet["tossups"]))
        ids = [packet["tossups"][i]["id"] for i in indices]

        def number(widget: str, *, blank: Any = ...) -> Any:
            text = self.query_one(f"#{widget}", Input).value.strip()
            if not text and blank is not ...:
                return blank
            try:
                return float(text) if "." in text else int(text)
            except ValueError:
                raise ValueError(f"{widget.replace('-', ' ')}: {text!r} is not a number") from None

        mode = self.query_one("#mode", RadioSet).pressed_button
        try:
            return MatchSetup(
                packet_id=packet["id"],
                title=self.query_one("#title-input", Input).value.strip() or None,
                tossup_ids=ids,
                teams=self.teams,
                reading_mode="screen" if mode is not None and mode.id == "screen" else "read_aloud",
                wpm=number("wpm"),
                correct_points=number("correct"),
                power_points=number("power", blank=None),
                neg_points=number("neg"),
                negs_only_before_end=self.query_one("#negs-before-end", Checkbox).value,
                rebuzz=self.query_one("#rebuzz", Checkbox).value,
                answer_time=number("answer-time", blank=None),
                format=str(self.query_one("#format", Select).value),
                **({"bouncebacks": True} if self.query_one("#bouncebacks", Checkbox).value else {}),
            )
        except ValidationError as exc:
            raise ValueError(_first_error(exc)) from None

    @on(Button.Pressed, "#create")
    def action_create(self) -> None:
        if self.creating:
            return
        try:
            setup = self.build_setup()
        except ValueError as exc:
            self.notify(
                str(exc), title="Cannot create the match yet", severity="error", markup=False
            )
            return
        self.creating = True
        self.query_one("#create", Button).disabled = True
        models = [t for t in setup.teams if t.kind == "model"]
        wait = " (precomputing the model player's guesses first)" if models else ""
        self.notify(f"Creating the match{wait}…")
        self.app.create_match(setup)  # type: ignore[attr-defined]


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ()))
        message = str(err.get("msg"))
        return message if message.startswith(where) else f"{where}: {message}"  # names its field
    return str(exc)


class LobbyScreen(MatchScreen):
    """The join URL, code and QR code, and who has joined which team (live)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "go_live", "Start: go to the tossups"),
        Binding("enter", "go_live", "Start", show=False),
        Binding("r", "standings", "Standings", tooltip="The standings of the match's event"),
        Binding("question_mark", "app.help", "Help"),
        Binding("q", "app.leave", "Quit"),
    ]

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        yield ControlBanner(id="control")
        with Horizontal(id="lobby-body"):
            with Vertical(id="lobby-join"):
                yield Static("", id="join-text")
                yield QRCode(id="qr")
            with Vertical(id="lobby-teams"):
                yield Static("Who has joined", classes="section")
                yield Static("", id="roster")
                yield Static(
                    Text.assemble(
                        "When everyone is in, press ",
                        ("s", "bold reverse"),
                        " to go to the tossups.",
                    ),
                    id="lobby-hint",
                )
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "state", self.show_state)
        self.follow_link()

    def show_state(self, state: State | None) -> None:
        if not self.showing:
            return  # replaced by another screen meanwhile
        join = self.app.join  # type: ignore[attr-defined]
        self.query_one(StatusLine).state = state
        if join is not None and join.join_url:
            self.query_one("#join-text", Static).update(join_text(join.join_url, join.join_code))
            self.query_one(QRCode).show(join.join_url)
        if state is not None:
            self.query_one("#roster", Static).update(roster(state))
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "standings":
            state = self.app.state  # type: ignore[attr-defined]
            return state is not None and state.event is not None
        return True

    def action_standings(self) -> None:
        self.app.show_standings()  # type: ignore[attr-defined]

    def action_go_live(self) -> None:
        from moderator_tui.live import LiveScreen

        self.app.switch_screen(LiveScreen())


def roster(state: State) -> Table:
    table = Table(box=None, show_header=True, padding=(0, 2, 0, 1))
    table.add_column("team", style="bold")
    table.add_column("players")
    for team in state.teams:
        if team.kind == "model":
            who = Text("model player", style="cyan")
        elif team.players:
            who = Text(", ".join(team.players.values()))
        else:
            who = Text("nobody yet", style="dim")
        table.add_row(Text(team.name), who)
    return table
