"""What the workers report back to the app (I/O results travel as messages)."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from grace_arena.protocol import ErrorMsg, MatchCreatedReply, MatchSummary, State


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
