"""Tokens: the server token and players' tokens (HMACs of what they grant: nothing secret is
stored in the record), and the hashes moderator tokens are kept as. The rooms layer
(``rooms.py``) holds the process's :class:`Tokens` and decides what each token opens."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

__all__ = ["Tokens", "same_secret", "token_in", "token_sha256"]


class Tokens:
    """The server token and players' tokens are HMACs of what they grant, so nothing secret
    is stored in the record. Moderator tokens are random per room (``Rooms.moderator_token``)
    and the record keeps only their SHA-256."""

    def __init__(self, secret: str, scope: str = "") -> None:
        self._key = secret.encode()
        #: What the server token grants: a server of an event's (``"event:NAME"``), a survey
        #: server's (``"survey"``), or matches of their own (``""``): processes sharing a
        #: record and a secret but serving other things do not take each other's tokens.
        self.scope = scope

    def _sign(self, text: str) -> str:
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()[:32]

    def server(self) -> str:
        return self._sign(f"server:{self.scope}" if self.scope else "server")

    def td(self) -> str:
        """The TD's token: the protests of the matches this server serves are theirs to
        resolve (``grace_arena.server.routes.protests``)."""
        return self._sign(f"td:{self.scope}" if self.scope else "td")

    def display(self, event_id: int, room_id: str | None = None) -> str:
        """The grant of a projector: a room's display token (``room_id``), or the event's
        (every room of it, and the event's own view). A room's display receives what the room
        reads as it is read only with one of them (or the server token) while another room has
        it yet to read (``grace_arena.server.spoilers``)."""
        return self._sign(f"display:{event_id}:{room_id}" if room_id else f"display:{event_id}")

    def display_granted(self, given: str | None, event_id: int, room_id: str) -> bool:
        """Whether ``given`` is the grant of the room's display: its own display token, the
        event's, or the server token."""
        return any(
            self.check(given, expected)
            for expected in (self.display(event_id, room_id), self.display(event_id), self.server())
        )

    def player(self, scope: int | str, player_id: str) -> str:
        """A player's token, valid in ``scope``: a match (its id), or every match of an event
        (``"event:<id>"``: the player of an event's rooms comes back in every round)."""
        return f"{player_id}.{self._sign(f'player:{scope}:{player_id}')}"

    def player_id(self, scope: int | str, token: str) -> str | None:
        player_id, _, _ = token.rpartition(".")
        if player_id and same_secret(self.player(scope, player_id), token):
            return player_id
        return None

    def check(self, given: str | None, expected: str) -> bool:
        return given is not None and same_secret(given, expected)


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_in(given: str | None, hashes: Iterable[str]) -> bool:
    """Whether ``given`` is a token whose SHA-256 is one of ``hashes``."""
    if not given:
        return False
    digest = token_sha256(given)
    return any(same_secret(digest, h) for h in hashes)


def same_secret(a: str, b: str) -> bool:
    """Constant-time comparison of two tokens; any text may be given (``compare_digest``
    refuses non-ASCII ``str``), so compare their UTF-8 bytes."""
    return hmac.compare_digest(
        a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
    )
