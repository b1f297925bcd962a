"""The moderator's app: owns the connection to the server; screens render what it holds.

All network I/O runs in workers and comes back as messages (``moderator_tui.messages``):
the HTTP calls (catalog, create a match, summary) and one websocket as the ``moderator``
role, which reconnects with backoff and re-syncs from the server's ``state`` snapshot. The
server holds the match: closing this app (or losing the network) ends nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ValidationError
from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.reactive import reactive

from grace_arena.protocol import (
    ErrorMsg,
    Hello,
    MatchCreatedReply,
    MatchSummary,
    Ping,
    Pong,
    State,
    Welcome,
    parse_server,
)
from moderator_tui import api
from moderator_tui.messages import (
    CatalogLoaded,
    EventReceived,
    HttpFailed,
    LinkChanged,
    MatchChosen,
    ServerError,
    StateReceived,
    SummaryLoaded,
)

SILENCE_LIMIT = 9.0  # seconds without any message (not even a ping) before reconnecting


@dataclass(frozen=True)
class ServerTarget:
    """Where the server is and what the moderator may do there.

    ``server_token`` lets the app create matches and list the open ones (with their
    moderator tokens); a ``moderator_token`` with a ``match_id`` is enough to run one match.
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
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True)
    ]

    #: The latest snapshot of the match (None before the first one).
    state: reactive[State | None] = reactive(None, always_update=True)
    #: The websocket is up (a ``welcome`` arrived on it).
    connected: reactive[bool] = reactive(False)
    link_detail: reactive[str] = reactive("not connected")

    def __init__(
        self,
        target: ServerTarget,
        *,
        defaults: SetupDefaults | None = None,
        autostart: bool = True,
        backoff: tuple[float, float] = (0.5, 10.0),
        cursor_blink: bool = True,
    ) -> None:
        super().__init__()
        self.cursor_blink = cursor_blink  # off in snapshot tests
        self.target = target
        self.defaults = defaults or SetupDefaults()
        self.autostart = autostart
        self.backoff = backoff
        self.join: MatchCreatedReply | None = None  # the match being moderated
        self.summary: MatchSummary | None = None
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

    # -- start-up ------------------------------------------------------------------------------

    def on_mount(self) -> None:
        from moderator_tui.setup import SetupScreen

        if not self.autostart:
            return
        t = self.target
        if t.match_id is not None and t.moderator_token:
            self.join = MatchCreatedReply(
                match_id=t.match_id, join_code="", join_url="", moderator_token=t.moderator_token
            )
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
    async def load_summary(self) -> None:
        join = self.join
        if join is None:
            return
        token = join.moderator_token or self.target.server_token or ""
        try:
            summary = await asyncio.to_thread(api.summary, self.target.url, token, join.match_id)
        except api.ApiError as exc:
            self.post_message(HttpFailed("summary", str(exc)))
            return
        self.post_message(SummaryLoaded(summary))

    # -- the websocket -------------------------------------------------------------------------

    def open_match(self, reply: MatchCreatedReply, *, created: bool) -> None:
        """Moderate ``reply``'s match: connect (and keep reconnecting) to it."""
        self.join = reply
        self.state = None
        self.run_link(reply.match_id, reply.moderator_token)

    @work(exclusive=True, group="link", exit_on_error=False)
    async def run_link(self, match_id: int, token: str) -> None:
        """The moderator's websocket, for as long as the app runs: reconnects with
        exponential backoff (with jitter) and re-syncs from the ``state`` snapshot that
        follows every ``welcome``. Commands sent while the link is down are not queued
        for later (a late "correct" could rule on someone else's buzz): they are refused."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import WebSocketException

        first, cap = self.backoff
        delay = first
        url = api.ws_url(self.target.url)
        while True:
            reason = "connection lost"
            # One moderator controls a match at a time: the first hello takes over only if
            # asked to (--take-over); a reconnection takes back the control this app had
            # (its old connection may linger on the server), or watches again if another
            # moderator took over meanwhile.
            hello = Hello(
                role="moderator",
                match_id=match_id,
                token=token,
                take_over=self.control == "own" or self.target.take_over,
                watch=self.control == "watching",
            ).model_dump_json()
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
                            handled = await self._handle(ws, raw)
                            if handled == "refused":
                                reason = "the server refused the moderator"
                                delay = cap  # the token will not get better by retrying fast
                                break
                            if handled == "welcome":
                                delay = first
                    finally:
                        writer.cancel()
                        self._socket_up = False
            except (OSError, WebSocketException, TimeoutError) as exc:
                reason = _why(exc)
            self._socket_up = False
            self._drain_outbox()
            wait = delay * random.uniform(0.75, 1.25)
            self.post_message(LinkChanged(False, f"{reason}; reconnecting in {wait:.1f} s"))
            await asyncio.sleep(wait)
            delay = min(delay * 2, cap)

    async def _handle(self, ws: Any, raw: str | bytes) -> str | None:
        """Handle one server message; ``"welcome"`` when the link is (again) up,
        ``"refused"`` when the server refused the ``hello``."""
        try:
            msg = parse_server(raw)
        except ValidationError:
            return None  # a newer server's message: ignore it rather than crash
        if isinstance(msg, Ping):
            await ws.send(Pong(sent=msg.sent, time=time.time()).model_dump_json())
        elif isinstance(msg, Welcome):
            self.control = "watching" if msg.watching else "own"
            self._socket_up = True
            self.post_message(LinkChanged(True, "connected"))
            return "welcome"
        elif isinstance(msg, State):
            for event in msg.events:  # the change's events, then the state they led to
                self.post_message(EventReceived(event))
            self.post_message(StateReceived(msg))
        elif isinstance(msg, ErrorMsg):
            if msg.code == "taken_over":
                self.control = "watching"
            self.post_message(ServerError(msg))
            if msg.in_reply_to == "hello":
                return "refused"
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

    # -- messages from the workers -------------------------------------------------------------

    @on(StateReceived)
    def _state(self, message: StateReceived) -> None:
        self.state_received = time.monotonic()
        state = message.state
        if self.join is not None and not self.join.join_code:
            # Connected with --match and a moderator token only: learn the join code.
            self.join = replace_join(self.join, state.match.join_code, self.target.url)
        self.state = self._with_whole_log(state)
        self._follow_phase(state)

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
        """Show the screen that fits the match: live while it runs, the summary at the end."""
        from moderator_tui.end import EndScreen
        from moderator_tui.live import LiveScreen
        from moderator_tui.setup import LobbyScreen, SetupScreen

        top = self.screen
        if state.match.phase == "ended":
            if not isinstance(top, EndScreen):
                self._switch(EndScreen())
                self.load_summary()
        elif isinstance(top, SetupScreen) or (
            not isinstance(top, LiveScreen | LobbyScreen) and self._is_base(top)
        ):
            started = state.match.tossups_played > 0 or state.match.phase != "idle"
            self._switch(LiveScreen() if started else LobbyScreen())

    def _is_base(self, screen: Any) -> bool:
        return len(self.screen_stack) <= 1

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
        about = f" ({err.in_reply_to})" if err.in_reply_to else ""
        self.notify(
            err.message, title=f"The server refused it{about}", severity="warning", markup=False
        )
        if err.in_reply_to == "hello" and err.code in ("unauthorized", "not_found"):
            self.link_detail = f"the server refused the moderator: {err.message}"
        elif err.code == "in_use":
            self.link_detail = (
                "another moderator controls this match: run grace-arena moderate with "
                "--take-over to take it"
            )
        elif err.code == "taken_over":
            self.link_detail = "watching: another moderator took over this match"

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
        self.open_match(message.reply, created=message.created)

    @on(SummaryLoaded)
    def _summary(self, message: SummaryLoaded) -> None:
        self.summary = message.summary
        self.screen.post_message(message)

    @on(HttpFailed)
    def _http_failed(self, message: HttpFailed) -> None:
        self.notify(message.detail, title=f"Could not {_WHAT[message.what]}", severity="error")
        if message.what == "find" and self._is_base(self.screen):
            from moderator_tui.setup import SetupScreen

            self.push_screen(SetupScreen())  # no such match: set one up instead
            return
        self.screen.post_message(HttpFailed(message.what, message.detail))

    @on(CatalogLoaded)
    def _catalog(self, message: CatalogLoaded) -> None:
        self.screen.post_message(CatalogLoaded(message.packets, message.models, message.matches))

    # -- actions shared by every screen --------------------------------------------------------

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

    async def on_unmount(self) -> None:
        with contextlib.suppress(Exception):
            self.workers.cancel_all()


_WHAT = {
    "catalog": "load the packets",
    "create": "create the match",
    "find": "find the match",
    "summary": "load the summary",
}


def _why(exc: BaseException) -> str:
    from websockets.exceptions import ConnectionClosed

    if isinstance(exc, ConnectionClosed):
        return "the connection closed"
    if isinstance(exc, ConnectionRefusedError):
        return "the server is not answering"
    if isinstance(exc, TimeoutError):
        return "the server did not answer in time"
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
) -> ModeratorApp:
    """Build the moderator's app for the server at ``server`` (``http://host:port``).

    ``token`` is the server token (set up new matches, list open ones); ``moderator_token``
    with ``match_id`` runs one match without it.
    """
    target = ServerTarget(
        url=server.rstrip("/"),
        server_token=token,
        match_id=match_id,
        moderator_token=moderator_token,
        record=record,
        hosts_server=hosts_server,
        take_over=take_over,
    )
    return ModeratorApp(
        target,
        defaults=defaults,
        autostart=autostart,
        backoff=backoff,
        cursor_blink=cursor_blink,
    )


__all__ = ["ModeratorApp", "ServerTarget", "SetupDefaults", "make_tui"]
