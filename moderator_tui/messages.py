"""What the workers report back to the app (I/O results travel as messages)."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from grace_arena.protocol import (
    ErrorMsg,
    EventRoomInfo,
    JoinInfo,
    MatchCreatedReply,
    MatchSummary,
    NextMatch,
    StandingsView,
    State,
)


class StateReceived(Message):
    """A fresh snapshot of the match from the server."""

    def __init__(self, state: State) -> None:
        super().__init__()
        self.state = state


class EventReceived(Message):
    """One event of the record (for notifications; screens render from the state)."""

    def __init__(self, event: dict[str, Any]) -> None:
        super().__init__()
        self.event = event


class ServerError(Message):
    """The server refused something the moderator sent (``error`` reply)."""

    def __init__(self, error: ErrorMsg) -> None:
        super().__init__()
        self.error = error


class LinkChanged(Message):
    """The websocket connected, dropped, or is waiting to reconnect."""

    def __init__(self, connected: bool, detail: str) -> None:
        super().__init__()
        self.connected = connected
        self.detail = detail


class CatalogLoaded(Message, bubble=False):  # the app hands it on to the screen
    """What the server offers for a new match: packets, precomputed models, open matches."""

    def __init__(
        self,
        packets: list[dict[str, Any]],
        models: list[str],
        matches: list[MatchCreatedReply],
    ) -> None:
        super().__init__()
        self.packets = packets
        self.models = models
        self.matches = matches


class MatchChosen(Message):
    """A match was created (or an open one chosen): connect to it."""

    def __init__(self, reply: MatchCreatedReply, created: bool) -> None:
        super().__init__()
        self.reply = reply
        self.created = created


class SummaryLoaded(Message, bubble=False):  # the app hands it on to the screen
    def __init__(self, summary: MatchSummary) -> None:
        super().__init__()
        self.summary = summary


class HttpFailed(Message, bubble=False):  # the app hands it on to the screen
    """An HTTP call to the server failed; ``what`` says which."""

    def __init__(self, what: str, detail: str) -> None:
        super().__init__()
        self.what = what
        self.detail = detail


class Welcomed(Message):
    """The server took the moderator's ``hello``: into ``match_id`` (a new match when an
    event's room moved on)."""

    def __init__(self, match_id: int) -> None:
        super().__init__()
        self.match_id = match_id


class RoomMovedOn(Message):
    """The event's room moved on to its next match (``next_match``): the link says hello
    there."""

    def __init__(self, next_match: NextMatch) -> None:
        super().__init__()
        self.next_match = next_match


class JoinLoaded(Message):
    """What the join code opens, with the join URL players use."""

    def __init__(self, info: JoinInfo) -> None:
        super().__init__()
        self.info = info


class RoomsLoaded(Message, bubble=False):  # the app hands it on to the screen
    """An event's rooms, to pick the one to moderate."""

    def __init__(self, event: str, rooms: list[EventRoomInfo]) -> None:
        super().__init__()
        self.event = event
        self.rooms = rooms


class StandingsLoaded(Message):
    """An event's standings, fetched after a ruling."""

    def __init__(self, standings: StandingsView) -> None:
        super().__init__()
        self.standings = standings


class ControlChanged(Message):
    """Whether this moderator controls the match or watches it (``watching``), and, when it
    watches, whether another moderator controls the match (``controlled``) or none does."""

    def __init__(
        self, watching: bool, controlled: bool, *, taken_over: bool = False, left: bool = False
    ) -> None:
        super().__init__()
        self.watching = watching
        self.controlled = controlled
        self.taken_over = taken_over  # another moderator just took over from this one
        self.left = left  # the moderator in control just left


class ControlRefused(Message):
    """Another moderator controls the match (``in_use``): the link waits for the moderator
    to take over, watch, or quit."""
