"""Writing a broadcast frame straight to a socket, through an ASGI scope extension.

Going through the ASGI ``send`` costs a task switch and a few layers of checks per message,
which for a state sent to hundreds of clients at every word was most of the server's work.
uvicorn is run with :class:`FrameWritingProtocol` (its sans-I/O ``websockets`` implementation,
``--ws websockets-sansio``, plus one thing): each websocket scope gets the extension
:data:`WRITE_NOW`, a function that writes one text frame at once, when the connection is open and
keeps up, and says whether it did. Under any other server the extension is absent and every
message goes through ``send``.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame, Opcode

__all__ = [
    "DIRECT_WRITE_LIMIT",
    "WRITE_NOW",
    "FrameWritingProtocol",
    "abort_of",
    "text_frame",
    "write_now_of",
]

#: The name of the scope extension.
WRITE_NOW = "grace_arena.write_now"
#: A socket with more than this many bytes waiting to be sent is not written to at once: its
#: messages go through the ASGI ``send``, which waits for the socket to drain.
DIRECT_WRITE_LIMIT = 64 * 1024


class FrameWritingProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O ``websockets`` protocol, offering :meth:`write_now` in the scope."""

    async def run_asgi(self) -> None:
        self.scope.setdefault("extensions", {})[WRITE_NOW] = {
            "write_text": self.write_now,
            "abort": self.abort,
        }
        await super().run_asgi()

    def write_now(self, data: bytes, frame: bytes | None = None) -> bool:
        """Write ``data`` (UTF-8 text) as one frame if the socket is open and keeps up.

        ``frame`` is that frame already built (:func:`text_frame`), the same bytes for every
        client of a broadcast; it is used when the connection has no extension that would
        change the frame (per-message compression is off by default here).
        """
        transport = self.transport
        if (
            self.disconnected
            or not self.handshake_complete
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
        try:
            self.conn.send_text(data)  # as uvicorn's send does
        except Exception:  # going away: the ASGI side finds out on its next send
            return False
        transport.write(b"".join(self.conn.data_to_send()))
        return True

    def abort(self) -> None:
        """Drop the connection at once, without a closing handshake: for a client that no
        longer reads, whose socket would never take the close frame."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()


def text_frame(data: bytes) -> bytes:
    """One final, unmasked text frame (a server's) holding ``data``."""
    return Frame(Opcode.TEXT, data).serialize(mask=False)


def write_now_of(scope: dict[str, Any]) -> Any | None:
    """The scope's frame writer, or ``None`` when the server offers none."""
    return scope.get("extensions", {}).get(WRITE_NOW, {}).get("write_text")


def abort_of(scope: dict[str, Any]) -> Any | None:
    """The scope's way to drop the connection at once, or ``None``."""
    return scope.get("extensions", {}).get(WRITE_NOW, {}).get("abort")
