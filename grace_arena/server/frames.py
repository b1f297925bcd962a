"""Writing a broadcast frame straight to a socket, through an ASGI scope extension.

Going through the ASGI ``send`` costs a task switch and a few layers of checks per message,
which for a state sent to hundreds of clients at every word was most of the server's work.
uvicorn is run with :class:`FrameWritingProtocol` (its sans-I/O ``websockets`` implementation,
``--ws websockets-sansio``, plus one thing): each websocket scope gets the extension
:data:`WRITE_NOW`, a function that writes one text frame at once, when the connection is open and
keeps up, and says whether it did. Under any other server the extension is absent and every
message goes through ``send``.

That protocol class and the attributes read here are uvicorn's internals, not its API. They
are checked before they are used: the class when the server's options are built
(:func:`websocket_protocol`), a connection's attributes on the first connection
(:func:`uvicorn_mismatches`). If anything is not as expected, the server runs uvicorn's own
protocol, or offers no extension, and logs one warning: every message then goes through
``send``, slower but correct. ``tests/test_server_frames.py`` fails on a uvicorn that no longer
matches, so an upgrade that breaks this is caught before it is released.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from typing import Any

from websockets.frames import Frame, Opcode

try:
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
except ImportError:  # moved or gone in a later uvicorn: see websocket_protocol()
    WebSocketsSansIOProtocol = None

__all__ = [
    "DIRECT_WRITE_LIMIT",
    "WRITE_NOW",
    "FrameWritingProtocol",
    "abort_of",
    "text_frame",
    "uvicorn_mismatches",
    "websocket_protocol",
    "write_now_of",
]

log = logging.getLogger(__name__)

#: The name of the scope extension.
WRITE_NOW = "grace_arena.write_now"
#: A socket with more than this many bytes waiting to be sent is not written to at once: its
#: messages go through the ASGI ``send``, which waits for the socket to drain.
DIRECT_WRITE_LIMIT = 64 * 1024

_PRIVATE_CLASS = "uvicorn.protocols.websockets.websockets_sansio_impl.WebSocketsSansIOProtocol"
#: A connection's attributes that :meth:`FrameWritingProtocol.write_now` reads, and the type or
#: the methods each must have, as uvicorn sets them before it runs the application.
_FLAGS = ("handshake_complete", "close_sent")
_METHODS = {
    "transport": ("is_closing", "get_write_buffer_size", "write", "abort"),
    "conn": ("send_text", "data_to_send"),
}


def uvicorn_mismatches(protocol: Any = None) -> list[str]:
    """What of uvicorn's internals that frame writing relies on is missing or different: the
    protocol class, or with ``protocol`` (a connection's, before its application runs) also
    that connection's attributes. An empty list when everything is as expected."""
    base = WebSocketsSansIOProtocol
    if base is None:
        return [f"{_PRIVATE_CLASS} cannot be imported"]
    found = []
    if not issubclass(base, asyncio.Protocol):
        found.append(f"{_PRIVATE_CLASS} is not an asyncio.Protocol")
    if not inspect.iscoroutinefunction(getattr(base, "run_asgi", None)):
        found.append(f"{_PRIVATE_CLASS}.run_asgi is not a coroutine function")
    # write_now leaves a socket that does not keep up to send, which waits while writable is
    # clear: uvicorn clears it from 0.52.1 on (before, a socket's buffer grew without bound).
    if getattr(base, "pause_writing", None) is asyncio.BaseProtocol.pause_writing:
        found.append(f"{_PRIVATE_CLASS} does not pause writing")
    # Methods of uvicorn's by the names of this module's would be overridden unawares.
    found += [
        f"{_PRIVATE_CLASS} has its own {name}"
        for name in ("write_now", "abort")
        if hasattr(base, name)
    ]
    if protocol is None:
        return found
    missing = object()
    for name in _FLAGS:
        if not isinstance(getattr(protocol, name, missing), bool):
            found.append(f"a connection's {name} is not a bool")
    if getattr(protocol, "initial_response", missing) is not None:
        found.append("a connection's initial_response is not None before its application runs")
    if not isinstance(getattr(protocol, "writable", missing), asyncio.Event):
        found.append("a connection's writable is not an asyncio.Event")
    if not isinstance(getattr(protocol, "scope", missing), dict):
        found.append("a connection's scope is not a dict")
    for name, methods in _METHODS.items():
        value = getattr(protocol, name, missing)
        found += [
            f"a connection's {name} has no {method}()"
            for method in methods
            if not callable(getattr(value, method, None))
        ]
    if not isinstance(getattr(getattr(protocol, "conn", None), "extensions", None), list):
        found.append("a connection's conn.extensions is not a list")
    return found


def _warn(mismatches: list[str], fallback: str) -> None:
    log.warning(
        "uvicorn's websocket internals are not as grace_arena.server.frames expects (%s): %s; "
        "every message goes through the ASGI send",
        "; ".join(mismatches),
        fallback,
    )


@functools.cache
def websocket_protocol() -> type[asyncio.Protocol] | str:
    """The ``ws`` option for uvicorn: :class:`FrameWritingProtocol`, or if the uvicorn
    installed does not have what it relies on, uvicorn's own sans-I/O protocol by its public
    name (its default, ``auto``, if even the class is gone), with one warning."""
    if not (mismatches := uvicorn_mismatches()):
        return FrameWritingProtocol
    fallback = "websockets-sansio" if WebSocketsSansIOProtocol is not None else "auto"
    _warn(mismatches, f"serving websockets with uvicorn's ws={fallback!r}")
    return fallback


#: Whether the first connection's attributes were as expected (None: no connection yet).
_connections_match: bool | None = None


class FrameWritingProtocol(WebSocketsSansIOProtocol or asyncio.Protocol):  # type: ignore[misc]
    """uvicorn's sans-I/O ``websockets`` protocol, offering :meth:`write_now` in the scope."""

    async def run_asgi(self) -> None:
        global _connections_match
        if _connections_match is None:  # the first connection: are its attributes as expected?
            mismatches = uvicorn_mismatches(self)
            _connections_match = not mismatches
            if mismatches:
                _warn(mismatches, f"no {WRITE_NOW} extension is offered")
        if _connections_match:
            self.scope.setdefault("extensions", {})[WRITE_NOW] = {
                "write_text": self.write_now,
                "abort": self.abort,
            }
        await super().run_asgi()

    def write_now(self, data: bytes, frame: bytes | None = None) -> bool:
        """Write ``data`` (UTF-8 text) as one frame if the socket is open and keeps up.

        ``frame`` is that frame already built (:func:`text_frame`), the same bytes for every
        client of a broadcast; it is used when the connection has no extension that would
        change the frame (per-message compression is off by default here). Never raises:
        ``False`` if the frame was not written, whatever the reason, and the message goes
        through ``send``.
        """
        try:
            transport = self.transport
            # A lost connection's transport is closing: no need of the disconnected flag,
            # which uvicorn has only from 0.52.1 on.
            if (
                not self.handshake_complete
                or self.close_sent
                or self.initial_response is not None
                or not self.writable.is_set()  # uvicorn's own sends wait for the socket
                or transport is None
                or transport.is_closing()
                or transport.get_write_buffer_size() > DIRECT_WRITE_LIMIT
            ):
                return False
            if frame is not None and not self.conn.extensions:
                transport.write(frame)
                return True
            self.conn.send_text(data)  # as uvicorn's send does
            transport.write(b"".join(self.conn.data_to_send()))
        except Exception:  # going away, or an attribute uvicorn no longer has: send finds out
            return False
        return True

    def abort(self) -> None:
        """Drop the connection at once, without a closing handshake: for a client that no
        longer reads, whose socket would never take the close frame."""
        transport = getattr(self, "transport", None)
        if transport is not None and not transport.is_closing():
            transport.abort()


def text_frame(data: bytes) -> bytes:
    """One final, unmasked text frame (a server's) holding ``data``."""
    return Frame(Opcode.TEXT, data).serialize(mask=False)


def write_now_of(scope: dict[str, Any]) -> Any | None:
    """The scope's frame writer, or ``None`` when the server offers none."""
    return scope.get("extensions", {}).get(WRITE_NOW, {}).get("write_text")


def abort_of(scope: dict[str, Any]) -> Any | None:
    """The scope's way to drop the connection at once, or ``None``."""
    return scope.get("extensions", {}).get(WRITE_NOW, {}).get("abort")
