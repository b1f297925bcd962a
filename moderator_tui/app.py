"""The moderator's app: owns the connection to the server; screens render what it holds.

All network I/O runs in workers and comes back as messages (``moderator_tui.messages``):
the HTTP calls (catalog, create a match, summary, an event's rooms and standings) and one
websocket as the ``moderator`` role, which reconnects with backoff and re-syncs from the
server's ``state`` snapshot. The server holds the match: closing this app (or losing the
network) ends nothing.

An event's room is moderated by its join code, which stays the same all event: when the
room's match ends the server sends ``next_match`` and the link says ``hello`` again on the
same socket, into the room's next match; after a drop it says hello to the room's code and
lands in whatever the room plays now.

One moderator controls a match at a time: when another one does, the app asks whether to
take over, watch, or quit (``InUseScreen``); while it watches (by choice, or because another
moderator took over) every screen says so, the keys that act are off, and ``T`` takes control.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pydantic import ValidationError
from rich.console import RenderableType
from rich.text import Text
from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.reactive import reactive

from grace_arena.protocol import (
    Control,
    ErrorMsg,
    EventRoomInfo,
    Hello,
    MatchCreatedReply,
    MatchSummary,
    NextMatch,
    Ping,
    Pong,
    Servers,
    StandingsView,
    State,
    Welcome,
    parse_server,
)
from grace_arena.resources import command_prefix
from moderator_tui import api
from moderator_tui.messages import (
    CatalogLoaded,
    ControlChanged,
    ControlRefused,
    EventReceived,
    HttpFailed,
    JoinLoaded,
    LinkChanged,
    MatchChosen,
    RoomMovedOn,
    RoomsLoaded,
    ServerError,
    StandingsLoaded,
    StateReceived,
    SummaryLoaded,
    Welcomed,
)
from moderator_tui.screens import ConnectingScreen

SILENCE_LIMIT = 9.0  # seconds without any message (not even a ping) before reconnecting
#: A server that could not be reached this recently is not where the link goes next.
RECENT_FAILURE = 15.0
#: Events after which an event's standings change.
#: Said when the server refuses the moderator token: retrying cannot help.
WRONG_TOKEN = (
    "wrong moderator token: not retrying. Quit (q) and run grace-arena moderate again with "
    "the token on the 'moderator token:' line that grace-arena serve printed for this match "
    "or room."
)
#: Said when the server knows no match by the code or id given, the first time: retrying a
#: mistyped code cannot help.
NOT_FOUND = (
    "{why} on {server}: not retrying. Quit (q) and check the join code (or match id): "
    "grace-arena serve prints each room's code on its 'join code' line."
)
STANDINGS_EVENTS = frozenset({"ruled", "ruling_undone", "tossup_ended", "match_ended"})


@dataclass(frozen=True)
class ServerTarget:
    """Where the server is and what the moderator may do there.

    ``server_token`` lets the app create matches and list the open ones (with their
    moderator tokens); a ``moderator_token`` with a ``match_id`` is enough to run one match,
    and one with a ``room_code`` to run an event's room from match to match. ``event`` with
    the server token offers the event's rooms to pick from (``room_code`` then picks one by
    its code or name).
    """

    url: str  # http://host:port
    server_token: str | None = None
    match_id: int | None = None
    moderator_token: str | None = None
    #: Where the record is, when the app knows it (the demo does); else asked of the server.
    record: str | None = None
    #: The app runs the server in its own process (the demo): quitting stops the server.
    hosts_server: bool = False
    #: Take control of the match from a moderator already connected (who then watches).
    take_over: bool = False
    room_code: str | None = None
    event: str | None = None


@dataclass(frozen=True)
class SetupDefaults:
    """What the set-up screen starts from (the demo's command-line options)."""

    tossups: str = "all"
    wpm: int = 180
    model_team: bool = True  # start with the offline model player as a team


class ModeratorApp(App[None]):
    """``make_tui(...)`` builds one; ``autostart=False`` leaves it offline (snapshot tests)."""

    CSS_PATH = "moderator.tcss"
    TITLE = "GRACE Arena — moderator"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding(
            "T",
            "take_control",
            "Take control",
            key_display="T",
            tooltip="Control the match you watch (another moderator then watches)",
        ),
    ]

    #: The latest snapshot of the match (None before the first one).
    state: reactive[State | None] = reactive(None, always_update=True)
    #: The websocket is up (a ``welcome`` arrived on it).
    connected: reactive[bool] = reactive(False)
    link_detail: reactive[str] = reactive("not connected")
    #: The event's standings (a match of an event's schedule), refreshed after each ruling.
    standings: reactive[StandingsView | None] = reactive(None, always_update=True)
    #: This moderator only watches the match (another one controls it, or none does now).
    watching: reactive[bool] = reactive(False)
    #: While watching: another moderator controls the match (False: none does now).
    controlled: reactive[bool] = reactive(True)

    def __init__(
        self,
        target: ServerTarget,
        *,
        defaults: SetupDefaults | None = None,
        autostart: bool = True,
        backoff: tuple[float, float] = (0.5, 10.0),
        cursor_blink: bool = True,
        command: str | None = None,
        notice: str | None = None,
    ) -> None:
        super().__init__()
        #: Said once the screen is up (the demo: the port it had to take instead of 8000).
        self.notice = notice
        self.cursor_blink = cursor_blink  # off in snapshot tests
        self.target = target
        self.defaults = defaults or SetupDefaults()
        self.autostart = autostart
        self.backoff = backoff
        self.join: MatchCreatedReply | None = None  # the match being moderated
        self.summary: MatchSummary | None = None
        #: How the end screen writes ``grace-arena`` so that its commands run as printed.
        self.command = command or command_prefix()
        #: The event room being moderated (its join code), if any: hellos go to it.
        self.room_code: str | None = target.room_code if target.moderator_token else None
        #: A match other than the one shown began (the room moved on, or a reconnection
        #: found it further on): the next state picks the screen afresh.
        self._fresh_match = False
        self._standings_of: str | None = None  # the event whose standings were asked for
        self.state_received = 0.0  # local monotonic time of the latest state
        self._outbox: asyncio.Queue[str] = asyncio.Queue()
        # The current tossup's log as seen so far (see ``_with_whole_log``).
        self._log_tossup: str | None = None
        self._log: list[dict[str, Any]] = []
        self._log_seq = 0
        self._socket_up = False
        #: "first" until the server welcomes this app, then "own" (it controls the match) or
        #: "watching" (another moderator does).
        self.control = "first"
        #: Set when the moderator answers the question of ``InUseScreen``.
        self._decided = asyncio.Event()
        #: The server said (``control``) that another moderator controls the match.
        self._told_controlled = False
        #: Other server processes of the same record that may serve the match (``servers``),
        #: and when each server last could not be reached: the link turns to them when its
        #: own cannot be reached (one of them takes the match over).
        self.servers: list[str] = []
        self._failed_at: dict[str, float] = {}
        #: Why the last try to get in failed (None once the server welcomed this app): said
        #: on screen while retrying, and printed on quitting while not connected.
        self.last_error: str | None = None
        self._refusal = ""  # the server's words when it refused the hello

    # -- start-up ------------------------------------------------------------------------------

    def on_mount(self) -> None:
        from moderator_tui.setup import SetupScreen

        if self.notice:
            self.notify(self.notice, timeout=20)
        if not self.autostart:
            return
        t = self.target
        if t.room_code and t.moderator_token:
            self.push_screen(ConnectingScreen(f"room {t.room_code.strip().upper()}"))
            self.open_room(t.room_code, t.moderator_token)
        elif t.event and t.server_token:
            from moderator_tui.event import RoomPickerScreen

            self.push_screen(RoomPickerScreen(t.event))
            self.load_rooms(t.event)
        elif t.match_id is not None and t.moderator_token:
            self.join = MatchCreatedReply(
                match_id=t.match_id, join_code="", join_url="", moderator_token=t.moderator_token
            )
            self.push_screen(ConnectingScreen(f"match {t.match_id}"))
            self.open_match(self.join, created=False)
        elif t.match_id is not None and t.server_token:
            self.find_match(t.match_id)
        else:
            self.push_screen(SetupScreen())

    # -- HTTP workers --------------------------------------------------------------------------

    @work(exclusive=True, group="catalog", exit_on_error=False)
    async def load_catalog(self) -> None:
        base = self.target.url
        try:
            packets = await asyncio.to_thread(api.packets, base)
            models = await asyncio.to_thread(api.models, base)
            matches: list[MatchCreatedReply] = []
            if self.target.server_token:
                matches = await asyncio.to_thread(api.open_matches, base, self.target.server_token)
        except api.ApiError as exc:
            self.post_message(HttpFailed("catalog", str(exc)))
            return
        self.post_message(CatalogLoaded(packets, models, matches))

    @work(exclusive=True, group="create", exit_on_error=False)
    async def create_match(self, setup: Any) -> None:
        token = self.target.server_token
        if not token:
            self.post_message(HttpFailed("create", "creating a match needs the server token"))
            return
        try:
            reply = await asyncio.to_thread(api.create_match, self.target.url, token, setup)
        except api.ApiError as exc:
            self.post_message(HttpFailed("create", str(exc)))
            return
        self.post_message(MatchChosen(reply, created=True))

    @work(exclusive=True, group="catalog", exit_on_error=False)
    async def find_match(self, match_id: int) -> None:
        """``--match`` with the server token: look the match's moderator token up."""
        assert self.target.server_token
        try:
            listed = await asyncio.to_thread(
                api.open_matches, self.target.url, self.target.server_token
            )
        except api.ApiError as exc:
            self.post_message(HttpFailed("find", str(exc)))
            return
        for reply in listed:
            if reply.match_id == match_id:
                self.post_message(MatchChosen(reply, created=False))
                return
        self.post_message(HttpFailed("find", f"the server has no open match {match_id}"))

    @work(exclusive=True, group="summary", exit_on_error=False)
    async def load_summary(self, match_id: int, token: str) -> None:
        try:
            summary = await asyncio.to_thread(api.summary, self.target.url, token, match_id)
        except api.ApiError as exc:
            self.post_message(HttpFailed("summary", str(exc)))
            return
        self.post_message(SummaryLoaded(summary))

    @work(exclusive=True, group="rooms", exit_on_error=False)
    async def load_rooms(self, event: str) -> None:
        """The event's rooms, for the picker (the server token is needed)."""
        assert self.target.server_token
        try:
            rooms = await asyncio.to_thread(
                api.event_rooms, self.target.url, self.target.server_token, event
            )
        except api.ApiError as exc:
            self.post_message(HttpFailed("rooms", str(exc)))
            return
        self.post_message(RoomsLoaded(event, rooms))

    @work(exclusive=True, group="join", exit_on_error=False)
    async def load_join(self, code: str) -> None:
        """The join URL players use (the server's public address, not necessarily the one
        this screen reaches it by)."""
        try:
            info = await asyncio.to_thread(api.join_info, self.target.url, code)
        except api.ApiError:
            return  # the URL built from the server's address stays
        self.post_message(JoinLoaded(info))

    @work(exclusive=True, group="standings", exit_on_error=False)
    async def load_standings(self, event: str) -> None:
        try:
            standings = await asyncio.to_thread(api.standings, self.target.url, event)
        except api.ApiError as exc:
            self.post_message(HttpFailed("standings", str(exc)))
            return
        self.post_message(StandingsLoaded(standings))

    # -- the websocket -------------------------------------------------------------------------

    def open_match(self, reply: MatchCreatedReply, *, created: bool) -> None:
        """Moderate ``reply``'s match: connect (and keep reconnecting) to it."""
        self.join = reply
        self.state = None
        self.run_link(reply.match_id, reply.moderator_token)

    def open_room(self, code: str, token: str, join_url: str = "") -> None:
        """Moderate an event's room (its join code and moderator token): its current match,
        then each next one as the room moves on."""
        self.room_code = code.strip().upper()
        self.join = MatchCreatedReply(
            match_id=0,  # known from the welcome
            join_code=self.room_code,
            join_url=join_url or f"{self.target.url}/?code={self.room_code}",
            moderator_token=token,
        )
        self.state = None
        self.run_link(None, token)
        if not join_url:
            self.load_join(self.room_code)

    def _hello(self, match_id: int | None, token: str) -> Hello:
        """The moderator's hello: to the event room's code if there is one (it opens the
        room's current match), else to the match."""
        # One moderator controls a match at a time: the first hello takes over only if
        # asked to (--take-over); a reconnection takes back the control this app had
        # (its old connection may linger on the server), or watches again if another
        # moderator took over meanwhile.
        return Hello(
            role="moderator",
            join_code=self.room_code,
            match_id=None if self.room_code else match_id,
            token=token,
            take_over=self.control == "own" or self.target.take_over,
            watch=self.control == "watching",
        )

    @work(exclusive=True, group="link", exit_on_error=False)
    async def run_link(self, match_id: int | None, token: str) -> None:
        """The moderator's websocket, for as long as the app runs: reconnects with
        exponential backoff (with jitter) and re-syncs from the ``state`` snapshot that
        follows every ``welcome``. Commands sent while the link is down are not queued
        for later (a late "correct" could rule on someone else's buzz): they are refused.

        It follows the match from server process to server process: told ``elsewhere``
        with a URL, it says hello there at once; unable to reach its server twice running,
        it tries the other servers it was told of (``servers``)."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import WebSocketException

        first, cap = self.backoff
        delay = first
        failures = 0  # connections in a row that did not get in
        ever_in = False  # welcomed once: a try after that reconnects
        while True:
            reason = "connection lost"
            in_use = moved = welcomed = False
            url = api.ws_url(self.target.url, self.room_code)
            again = "reconnecting" if ever_in else "connecting"
            last = f" (last try: {self.last_error})" if self.last_error else ""
            self.post_message(LinkChanged(False, f"{again} to {self.target.url}…{last}"))
            hello = self._hello(match_id, token).model_dump_json()
            try:
                async with connect(url, open_timeout=10, close_timeout=2) as ws:
                    await ws.send(hello)
                    writer = asyncio.create_task(self._writer(ws))
                    try:
                        while True:
                            # The server pings every 2 s: silence means a dead link (a dropped
                            # network often closes nothing), so reconnect.
                            try:
                                # asyncio.timeout, not wait_for: on Python 3.11 wait_for
                                # swallows a cancellation that comes as a message arrives,
                                # and the app then waits for this worker forever on exit.
                                async with asyncio.timeout(SILENCE_LIMIT):
                                    raw = await ws.recv()
                            except TimeoutError:
                                reason = "no word from the server"
                                break
                            handled = await self._handle(ws, raw, token)
                            if handled == "in_use":
                                in_use = True
                                break
                            if handled == "moved":
                                moved = True
                                break
                            if handled == "wrong_token":
                                self.last_error = "wrong moderator token"
                                self.post_message(LinkChanged(False, WRONG_TOKEN))
                                return  # a wrong token does not get right by retrying
                            if handled == "not_found" and not ever_in:
                                # a code or id this server has never served: no retry finds it
                                self.last_error = self._refusal
                                self.post_message(LinkChanged(False, NOT_FOUND.format(
                                    why=self._refusal, server=self.target.url)))  # fmt: skip
                                return
                            if handled in ("refused", "not_found"):
                                reason = f"the server refused the moderator: {self._refusal}"
                                delay = cap  # a refusal does not change by retrying fast
                                break
                            if handled == "welcome":
                                delay, failures, welcomed = first, 0, True
                                ever_in = True
                    finally:
                        writer.cancel()
                        self._socket_up = False
            except (OSError, WebSocketException, TimeoutError) as exc:
                reason = _why(exc)
            self._socket_up = False
            self._drain_outbox()
            if not (moved or in_use):
                self.last_error = reason
            if moved:
                self.post_message(LinkChanged(False, f"moving to {self.target.url}"))
                delay = first
                continue
            if in_use:
                # Another moderator controls the match: ask whether to take over or watch
                # (or quit), then say hello again at once.
                self._decided.clear()
                self.post_message(LinkChanged(False, "another moderator controls this match"))
                self.post_message(ControlRefused())
                await self._decided.wait()
                delay = first
                continue
            if not welcomed:
                failures += 1
                if failures >= 2:
                    self._failed_at[self.target.url] = time.monotonic()
                    if self._try_another_server():
                        failures, delay = 0, first
            wait = delay * random.uniform(0.75, 1.25)
            self.post_message(LinkChanged(False, f"{reason}; reconnecting in {wait:.1f} s"))
            await asyncio.sleep(wait)
            delay = min(delay * 2, cap)

    def _move_to(self, url: str) -> bool:
        """Say hello to the server at ``url`` from now on (it serves the match now), unless
        it could not be reached a moment ago (the server that sent us there takes the match
        over once that one's lease lapses: keep asking it). True when the target changed."""
        url = url.rstrip("/")
        current = self.target.url.rstrip("/")
        failed = self._failed_at.get(url)
        if url == current or (failed is not None and time.monotonic() - failed < RECENT_FAILURE):
            return False
        self.servers = [u for u in self.servers if u != url]
        if current not in self.servers:
            self.servers.append(current)
        self.target = replace(self.target, url=url)
        if self.join is not None:
            self.join = replace_join(self.join, self.join.join_code, url)
        return True

    def _try_another_server(self) -> bool:
        """The server cannot be reached: turn to the next one known, not failed a moment ago."""
        now = time.monotonic()
        for url in self.servers:
            failed = self._failed_at.get(url)
            if failed is None or now - failed >= RECENT_FAILURE:
                return self._move_to(url)
        return False

    async def _handle(self, ws: Any, raw: str | bytes, token: str = "") -> str | None:
        """Handle one server message; ``"welcome"`` when the link is (again) up,
        ``"refused"`` when the server refused the ``hello``, ``"in_use"`` when it did because
        another moderator controls the match, ``"moved"`` when another server process serves
        the match now (the target moved there)."""
        try:
            msg = parse_server(raw)
        except ValidationError:
            return None  # a newer server's message: ignore it rather than crash
        if isinstance(msg, Ping):
            await ws.send(Pong(sent=msg.sent, time=time.time()).model_dump_json())
        elif isinstance(msg, Welcome):
            self.control = "watching" if msg.watching else "own"
            # a watcher learns who controls the match from the ``control`` that follows
            self._told_controlled = False
            self.post_message(ControlChanged(msg.watching, True))
            self._socket_up = True
            self.last_error = None
            self.post_message(Welcomed(msg.match_id))
            self.post_message(LinkChanged(True, "connected"))
            return "welcome"
        elif isinstance(msg, Servers):
            current = self.target.url.rstrip("/")
            self.servers = [u.rstrip("/") for u in msg.urls if u.rstrip("/") != current]
        elif isinstance(msg, NextMatch):
            # The room moved on: hello again on this socket, into its next match. Commands
            # wait for the welcome (a late "correct" must not reach the new match).
            self._socket_up = False
            self.room_code = msg.join_code
            self.post_message(RoomMovedOn(msg))
            hello = Hello(
                role="moderator",
                join_code=msg.join_code,
                token=token,
                watch=self.control == "watching",
            )
            await ws.send(hello.model_dump_json())
        elif isinstance(msg, State):
            for event in msg.events:  # the change's events, then the state they led to
                self.post_message(EventReceived(event))
            self.post_message(StateReceived(msg))
        elif isinstance(msg, Control):
            left = self._told_controlled and not msg.controlled
            self._told_controlled = msg.controlled
            self.post_message(ControlChanged(self.control == "watching", msg.controlled, left=left))
        elif isinstance(msg, ErrorMsg):
            if msg.code == "elsewhere" and msg.url and self._move_to(msg.url):
                return "moved"
            if msg.code == "stopping":
                self.post_message(LinkChanged(False, "the server is stopping; reconnecting"))
                return None
            if msg.code == "taken_over":
                self.control = "watching"
                self.post_message(ControlChanged(True, True, taken_over=True))
            self.post_message(ServerError(msg))
            if msg.in_reply_to == "hello":
                self._refusal = msg.message
                if msg.code == "unauthorized":
                    return "wrong_token"
                if msg.code == "not_found":
                    return "not_found"
                return "in_use" if msg.code == "in_use" else "refused"
        return None

    async def _writer(self, ws: Any) -> None:
        while True:
            text = await self._outbox.get()
            await ws.send(text)

    def _drain_outbox(self) -> None:
        dropped = 0
        while not self._outbox.empty():
            self._outbox.get_nowait()
            dropped += 1
        if dropped:
            self.notify(
                f"{dropped} command(s) were not sent: the connection dropped", severity="error"
            )

    def send_command(self, message: Any) -> bool:
        """Send a moderator command (a ``grace_arena.protocol`` model); False when offline."""
        if not self._socket_up:
            self.notify("Not connected to the server: nothing was sent.", severity="error")
            return False
        self._outbox.put_nowait(message.model_dump_json())
        return True

    def take_control(self) -> None:
        """Control the match this app watches: hello again with ``take_over`` on the link
        (or, while it is down, when it is back up). The other moderator then watches."""
        self.control = "own"
        if not self._socket_up or self.join is None:
            self.notify("Not connected: control is taken when the link is back.")
            return
        hello = self._hello(self.join.match_id or None, self.join.moderator_token)
        self._socket_up = False  # commands wait for the welcome
        self._outbox.put_nowait(hello.model_dump_json())

    # -- messages from the workers -------------------------------------------------------------

    @on(ControlChanged)
    def _control(self, message: ControlChanged) -> None:
        self.watching = message.watching
        self.controlled = message.controlled
        if message.taken_over:
            self.notify(
                "Another moderator took over this match: you are watching now. "
                "T takes control back.",
                title="Taken over",
                severity="warning",
            )
        elif message.watching and message.left:
            self.notify(
                "No moderator controls this match now: T takes control.",
                title="The moderator in control left",
            )

    @on(ControlRefused)
    def _refused(self, _: ControlRefused) -> None:
        from moderator_tui.dialogs import InUseScreen

        if isinstance(self.screen, InUseScreen):
            return
        if self.room_code:
            where = f"room {self.room_code}"
        else:
            where = f"match {self.join.match_id}" if self.join else "this match"

        def answer(choice: str | None) -> None:
            self.control = "own" if choice == "take_over" else "watching"
            self._decided.set()

        self.push_screen(InUseScreen(where), answer)

    @on(StateReceived)
    def _state(self, message: StateReceived) -> None:
        self.state_received = time.monotonic()
        state = message.state
        if self.join is not None and not self.join.join_code:
            # Connected with --match and a moderator token only: learn the join code.
            self.join = replace_join(self.join, state.match.join_code, self.target.url)
        if state.event is not None and (
            self._standings_of != state.event.name
            or any(ev.get("type") in STANDINGS_EVENTS for ev in state.events)
        ):
            self._standings_of = state.event.name
            self.load_standings(state.event.name)
        self.state = self._with_whole_log(state)
        self._follow_phase(state)

    @on(Welcomed)
    def _welcomed(self, message: Welcomed) -> None:
        join = self.join
        if join is None or join.match_id == message.match_id:
            return
        if join.match_id:  # another match than the one shown: forget the old one's things
            self._fresh_match = True
            self.summary = None
            self._log_tossup, self._log, self._log_seq = None, [], 0
        self.join = join.model_copy(update={"match_id": message.match_id})

    @on(RoomMovedOn)
    def _moved_on(self, message: RoomMovedOn) -> None:
        self.notify(message.next_match.message, title="The room moves on", markup=False)

    @on(JoinLoaded)
    def _join_loaded(self, message: JoinLoaded) -> None:
        info = message.info
        if self.join is not None and self.join.join_code == info.join_code and info.join_url:
            self.join = self.join.model_copy(update={"join_url": info.join_url})
            if self.state is not None:
                self.state = self.state  # the lobby shows the join URL again

    @on(StandingsLoaded)
    def _standings(self, message: StandingsLoaded) -> None:
        self.standings = message.standings

    @on(RoomsLoaded)
    def _rooms(self, message: RoomsLoaded) -> None:
        wanted = self.target.room_code
        if wanted:
            key = wanted.strip()
            room = next(
                (r for r in message.rooms if key.upper() == r.join_code or key == r.room), None
            )
            if room is None:
                have = ", ".join(f"{r.room} ({r.join_code})" for r in message.rooms)
                self.notify(
                    f"event {message.event} has no room {key}: {have}",
                    title="No such room",
                    severity="error",
                    markup=False,
                )
            else:
                self.choose_room(room)
                return
        self.screen.post_message(RoomsLoaded(message.event, message.rooms))

    def choose_room(self, room: EventRoomInfo) -> None:
        """Moderate the room picked (the room picker, or --event with --room)."""
        self.open_room(room.join_code, room.moderator_token, room.join_url)

    def show_standings(self) -> None:
        from moderator_tui.event import StandingsScreen

        state = self.state
        if state is None or state.event is None:
            self.notify("This match is not part of an event: there are no standings.")
            return
        if not isinstance(self.screen, StandingsScreen):
            self.push_screen(StandingsScreen())
        self.load_standings(state.event.name)

    def enter_current_match(self) -> None:
        """From the end screen: the lobby (or the tossups) of the match the room plays now."""
        state = self.state
        if state is None:
            return
        self._fresh_match = False
        self._switch(self._screen_for(state))

    def _with_whole_log(self, state: State) -> State:
        """``state`` with the whole log of its tossup: the server sends only its last events
        (a fast reading pushes a buzz out of that window), so the app keeps what it saw."""
        tossup = state.tossup.id if state.tossup is not None else None
        if tossup != self._log_tossup or any(
            ev.get("type") == "tossup_started" and ev.get("seq", 0) > self._log_seq
            for ev in state.last_events
        ):
            self._log_tossup, self._log, self._log_seq = tossup, [], 0
        fresh = [ev for ev in state.last_events if ev.get("seq", 0) > self._log_seq]
        if fresh and self._log and fresh[0].get("seq", 0) > self._log_seq + 1:
            # Events were missed (a reconnection): take what the server has from there on.
            known = {ev.get("seq") for ev in self._log}
            fresh = [ev for ev in state.last_events if ev.get("seq") not in known]
        self._log.extend(fresh)
        if self._log:
            self._log_seq = max(ev.get("seq", 0) for ev in self._log)
        if tossup is None:
            return state
        return state.model_copy(update={"last_events": list(self._log)})

    def _follow_phase(self, state: State) -> None:
        """Show the screen that fits the match: live while it runs, the summary at the end.
        The end screen of an event's match stays when the room moves on: the moderator goes
        on to the next match's lobby with a key (the end screen says so)."""
        from moderator_tui.end import EndScreen
        from moderator_tui.event import RoomPickerScreen
        from moderator_tui.live import LiveScreen
        from moderator_tui.setup import LobbyScreen, SetupScreen

        base = self._base_screen()
        if base is None:
            return  # the app is closing
        if state.match.phase == "ended":
            if not (isinstance(base, EndScreen) and base.final.match.id == state.match.id):
                self._fresh_match = False
                self._switch(EndScreen(state))
                token = self.join.moderator_token if self.join else ""
                self.load_summary(state.match.id, token or self.target.server_token or "")
        elif isinstance(base, EndScreen):
            return
        elif (
            isinstance(base, SetupScreen | RoomPickerScreen | ConnectingScreen)
            or (self._fresh_match and isinstance(base, LiveScreen | LobbyScreen))
            or (not isinstance(base, LiveScreen | LobbyScreen) and self._is_base(base))
        ):
            self._fresh_match = False
            self._switch(self._screen_for(state))

    def _screen_for(self, state: State) -> Any:
        from moderator_tui.live import LiveScreen
        from moderator_tui.setup import LobbyScreen

        started = state.match.tossups_played > 0 or state.match.phase != "idle"
        return LiveScreen() if started else LobbyScreen()

    def _base_screen(self) -> Any:
        """The screen under any dialogs (help, a confirmation, the standings)."""
        from textual.screen import ModalScreen

        for screen in reversed(self.screen_stack):
            if not isinstance(screen, ModalScreen):
                return screen
        return None

    def _is_base(self, screen: Any) -> bool:
        return len(self.screen_stack) <= 1 or screen is self.screen_stack[0]

    def _switch(self, screen: Any) -> None:
        from textual.screen import ModalScreen

        while isinstance(self.screen, ModalScreen):
            self.pop_screen()
        if len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    @on(EventReceived)
    def _event(self, message: EventReceived) -> None:
        ev = message.event
        if ev.get("type") == "ruled" and ev.get("by") == "timer":
            self.notify("Time ran out: the buzz was ruled incorrect (u undoes it).")

    @on(ServerError)
    def _server_error(self, message: ServerError) -> None:
        err = message.error
        if err.code in ("in_use", "taken_over"):
            return  # the question (InUseScreen), or the banner and a notification, say it
        about = f" ({err.in_reply_to})" if err.in_reply_to else ""
        self.notify(
            err.message, title=f"The server refused it{about}", severity="warning", markup=False
        )

    @on(LinkChanged)
    def _link(self, message: LinkChanged) -> None:
        self.connected = message.connected
        self.link_detail = message.detail

    @on(MatchChosen)
    def _chosen(self, message: MatchChosen) -> None:
        if message.created:
            self.notify(
                f"Match {message.reply.match_id} created: join code {message.reply.join_code}"
            )
            for warning in message.reply.warnings:  # a model team that will not buzz
                title = "This model will not play"
                self.notify(warning, title=title, severity="warning", timeout=30, markup=False)
        self.open_match(message.reply, created=message.created)

    @on(SummaryLoaded)
    def _summary(self, message: SummaryLoaded) -> None:
        if self.join is None or self.join.match_id == message.summary.match_id:
            self.summary = message.summary
        self._base_screen().post_message(SummaryLoaded(message.summary))

    @on(HttpFailed)
    def _http_failed(self, message: HttpFailed) -> None:
        self.notify(message.detail, title=f"Could not {_WHAT[message.what]}", severity="error")
        if message.what == "standings":
            return  # the standings screen shows the last ones it had
        if message.what == "find" and self._is_base(self.screen):
            from moderator_tui.setup import SetupScreen

            self.push_screen(SetupScreen())  # no such match: set one up instead
            return
        self.screen.post_message(HttpFailed(message.what, message.detail))

    @on(CatalogLoaded)
    def _catalog(self, message: CatalogLoaded) -> None:
        self.screen.post_message(CatalogLoaded(message.packets, message.models, message.matches))

    # -- actions shared by every screen --------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "take_control":
            return self.watching  # the footer shows T only while this moderator watches
        return True

    def action_take_control(self) -> None:
        if self.watching:
            self.take_control()

    def action_help(self) -> None:
        from moderator_tui.dialogs import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_leave(self) -> None:
        """Quit the moderator's screen; the match goes on on the server."""
        if not self.target.hosts_server:
            self.exit()
            return
        from moderator_tui.dialogs import ConfirmScreen

        def answer(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(
            ConfirmScreen(
                "Quit? This demo's server stops with it. The match stays in the record: run "
                "`grace-arena demo` again to resume it."
            ),
            answer,
        )

    def exit(
        self, result: None = None, return_code: int = 0, message: RenderableType | None = None
    ) -> None:
        """Quit; while not connected, the terminal is left with the reason, in one line."""
        if message is None and self.last_error and not self.connected:
            message = Text(f"Not connected to {self.target.url}: {self.last_error}")
        super().exit(result, return_code, message)

    async def on_unmount(self) -> None:
        with contextlib.suppress(Exception):
            self.workers.cancel_all()


_WHAT = {
    "catalog": "load the packets",
    "create": "create the match",
    "find": "find the match",
    "summary": "load the summary",
    "rooms": "load the event's rooms",
    "standings": "load the standings",
}


def _why(exc: BaseException) -> str:
    from websockets.exceptions import ConnectionClosed

    if isinstance(exc, ConnectionClosed):
        return "the connection closed"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is grace-arena serve running there, on that port?)"
    if isinstance(exc, TimeoutError):
        return "timed out: no answer from that address"
    if isinstance(exc, socket.gaierror):
        return "no such host"
    text = str(exc) or type(exc).__name__
    return text if len(text) < 60 else text[:57] + "…"


def replace_join(join: MatchCreatedReply, code: str, base: str) -> MatchCreatedReply:
    return join.model_copy(
        update={"join_code": code, "join_url": f"{base.rstrip('/')}/?code={code}"}
    )


def make_tui(
    server: str,
    *,
    token: str | None = None,
    match_id: int | None = None,
    moderator_token: str | None = None,
    record: str | None = None,
    hosts_server: bool = False,
    defaults: SetupDefaults | None = None,
    autostart: bool = True,
    backoff: tuple[float, float] = (0.5, 10.0),
    cursor_blink: bool = True,
    take_over: bool = False,
    room: str | None = None,
    event: str | None = None,
    command: str | None = None,
    notice: str | None = None,
) -> ModeratorApp:
    """Build the moderator's app for the server at ``server`` (``http://host:port``).

    ``token`` is the server token (set up new matches, list open ones, pick a room of
    ``event``); ``moderator_token`` with ``match_id`` runs one match without it, and with
    ``room`` (an event room's join code) runs that room from match to match. ``command``:
    how the end screen writes ``grace-arena`` (default: as it runs from here). ``notice``: a
    line shown once the screen is up.
    """
    target = ServerTarget(
        url=server.rstrip("/"),
        server_token=token,
        match_id=match_id,
        moderator_token=moderator_token,
        record=record,
        hosts_server=hosts_server,
        take_over=take_over,
        room_code=room,
        event=event,
    )
    return ModeratorApp(
        target,
        defaults=defaults,
        autostart=autostart,
        backoff=backoff,
        cursor_blink=cursor_blink,
        command=command,
        notice=notice,
    )


__all__ = ["ModeratorApp", "ServerTarget", "SetupDefaults", "make_tui"]
