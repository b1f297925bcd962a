"""What one address may hold of the server's HTTP connections, and for how long.

A LAN event has no proxy in front of the server, so the server itself bounds what a stranger
on the network can hold (uvicorn bounds none of it: a request whose head never ends is held
for ever, and so is a connection that sends nothing):

* a request's head must arrive within :data:`HEAD_TIMEOUT` seconds of the connection opening
  (or of the previous response, on a kept-alive connection), however slowly it trickles in;
  its body within :data:`BODY_TIMEOUT` seconds of its head. Past that the connection is closed
  (a head that is late gets a 408 first). A head is at most 16 KiB (h11's limit, which uvicorn
  keeps: a larger one is a 400); an idle kept-alive connection is closed after 5 s (uvicorn's).
* one address holds at most :data:`MAX_PER_ADDRESS` HTTP connections at once; one more is
  answered 503 and closed at once, before anything is read. A club's phones may share one
  address behind its router (the websocket cap, ``Settings.max_connections_per_address``, is
  300 phones): a phone loading the pages opens at most six connections, which close 5 s after
  their last response, so 300 phones stay far below. Websockets are not counted here once
  upgraded: they have their own cap.
* ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are read only from the proxies named
  (``serve --trust-proxy ADDRESS``; none by default). uvicorn's default trusts them from
  127.0.0.1, so a tunnel or a proxy on the same host would hand every request the address the
  client claims, and with it as many guesses of join codes and sockets as it likes. Connections
  from a trusted proxy are not counted per address (it speaks for many clients).

:func:`uvicorn_options` gives the options for ``uvicorn.Config``; the connection counts and
what was refused are kept on the protocol class it makes (:class:`HttpGuard`).
"""

from __future__ import annotations

import ipaddress
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BODY_TIMEOUT",
    "HEAD_TIMEOUT",
    "MAX_HEAD_BYTES",
    "MAX_PER_ADDRESS",
    "HttpGuard",
    "HttpLimits",
    "uvicorn_options",
]

#: Seconds a request's head may take to arrive, from the moment the connection may send one.
HEAD_TIMEOUT = 10.0
#: Seconds a request's body may take to arrive, from its head.
BODY_TIMEOUT = 30.0
#: HTTP connections one address may hold open at once.
MAX_PER_ADDRESS = 2_000
#: The largest request head (h11's default, kept).
MAX_HEAD_BYTES = 16 * 1024

_log = logging.getLogger("grace_arena.server.http")

_TOO_MANY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 42\r\n\r\n"
    b"too many connections from your address\r\n\r\n"
)
_TOO_SLOW = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"


@dataclass(frozen=True)
class HttpLimits:
    """The limits of the module docstring, for one server."""

    head_timeout: float = HEAD_TIMEOUT
    body_timeout: float = BODY_TIMEOUT
    max_per_address: int = MAX_PER_ADDRESS
    #: Addresses of the proxies whose forwarded headers are honoured (none: no proxy).
    trusted_proxies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for proxy in self.trusted_proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise ValueError(
                    f"a trusted proxy is an IP address or network (10.0.0.5, 10.0.0.0/24), "
                    f"not {proxy!r}"
                ) from None
        for name in ("head_timeout", "body_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if self.max_per_address < 1:
            raise ValueError(f"max_per_address must be >= 1, got {self.max_per_address!r}")


class HttpGuard:
    """What the connections of one server hold: the base of the protocol class
    :func:`guarded_protocol` makes (each server has its own counts)."""

    limits: HttpLimits
    #: Open HTTP connections per address (trusted proxies not counted).
    open_from: Counter[str]
    #: Connections refused for their address's count, and closed for a late head or body.
    refused: int
    timed_out: int


def guarded_protocol(limits: HttpLimits) -> type:
    """uvicorn's h11 protocol with the limits of the module docstring, counting in a class of
    its own (one per server)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    proxies = [ipaddress.ip_network(p, strict=False) for p in limits.trusted_proxies]
    warned: set[str] = set()

    def trusted(address: str) -> bool:
        if not proxies:
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in proxies)

    class GuardedH11Protocol(H11Protocol, HttpGuard):
        _address: str | None = None
        _deadline: Any = None
        _waiting_for: str | None = None  # "head" or "body"
        #: Handed to the websocket protocol: no HTTP clock of ours runs on it any more.
        _upgraded: bool = False

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            cls = type(self)
            address = self.client[0] if self.client else None
            if address is not None and not trusted(address):
                if cls.open_from[address] >= limits.max_per_address:
                    cls.refused += 1
                    if address not in warned:
                        warned.add(address)
                        _log.warning(
                            "%s holds %d HTTP connections: more are refused",
                            address,
                            limits.max_per_address,
                        )
                    transport.write(_TOO_MANY)
                    transport.close()
                    return
                cls.open_from[address] += 1
                self._address = address
            self._wait_for("head")

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._follow()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # Idle now: uvicorn's keep-alive timer runs until the next request's first bytes
            # (a pipelined one is read at once, and followed).
            if self.conn.their_state is not h11.IDLE or self.timeout_keep_alive_task is None:
                self._follow()
            else:
                self._stop_waiting()

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._upgraded = True
            self._stop_waiting()
            self._uncount()
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            self._uncount()
            super().connection_lost(exc)

        def _follow(self) -> None:
            """Wait for what the request still lacks, from when it began to lack it."""
            if self._upgraded or self.transport.is_closing():
                self._stop_waiting()
                return
            state = self.conn.their_state
            if state is h11.IDLE:
                if self._waiting_for != "head":
                    self._wait_for("head")
            elif state is h11.SEND_BODY:
                if self._waiting_for != "body":
                    self._wait_for("body")
            else:  # the whole request is in (or the connection is done with): the app answers
                self._stop_waiting()

        def _wait_for(self, what: str) -> None:
            self._stop_waiting()
            seconds = limits.head_timeout if what == "head" else limits.body_timeout
            self._waiting_for = what
            self._deadline = self.loop.call_later(seconds, self._too_late)

        def _stop_waiting(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._waiting_for = None

        def _too_late(self) -> None:
            what, self._deadline, self._waiting_for = self._waiting_for, None, None
            if self.transport.is_closing():
                return
            type(self).timed_out += 1
            if what == "head":
                self.transport.write(_TOO_SLOW)
            self.transport.close()

        def _uncount(self) -> None:
            address, self._address = self._address, None
            if address is None:
                return
            cls = type(self)
            cls.open_from[address] -= 1
            if cls.open_from[address] <= 0:
                del cls.open_from[address]
            if cls.open_from[address] < limits.max_per_address:
                warned.discard(address)

    GuardedH11Protocol.limits = limits
    GuardedH11Protocol.open_from = Counter()
    GuardedH11Protocol.refused = 0
    GuardedH11Protocol.timed_out = 0
    return GuardedH11Protocol


def uvicorn_options(limits: HttpLimits | None = None) -> dict[str, Any]:
    """Options for ``uvicorn.Config`` that keep ``limits`` (default: the module's)."""
    limits = limits or HttpLimits()
    options: dict[str, Any] = {
        "http": guarded_protocol(limits),
        "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
        "timeout_keep_alive": 5,
    }
    if limits.trusted_proxies:
        options |= {"proxy_headers": True, "forwarded_allow_ips": list(limits.trusted_proxies)}
    else:
        options |= {"proxy_headers": False, "forwarded_allow_ips": ""}
    return options
