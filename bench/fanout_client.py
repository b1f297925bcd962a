"""Players for the reveal fan-out benchmark (``bench_server.py``), run as a client process.

    python bench/fanout_client.py PORT JOIN_CODE N FIRST [--raw]

Opens ``N`` player websockets (players ``FIRST`` … ``FIRST+N-1``; with ``--raw``, bare
connections to the raw broadcast server), prints ``ready``, reads until a line arrives on
stdin, then prints one JSON object whose ``samples`` hold, for every state that carried
tossup text, ``[server_time, arrival, read, size]``: the ``server_time`` in it, two latenesses
and its length in bytes:

- ``arrival``: when its bytes reached this client's socket (the kernel's receive timestamp,
  ``SO_TIMESTAMPNS``) minus the ``server_time`` in it: the delivery's lateness, whatever this
  process was doing at the time (``null`` if the kernel gave no time). A TCP read reports the
  arrival of the newest data it takes (and the kernel merges data that waits to be read), so
  a message read late together with the next one gets the next one's arrival: an upper bound;
- ``read``: when this process got to read it minus ``server_time``: the above plus the wait of
  a client that shares two cores with the server and the other clients.

and ``closed``: for every connection that ended before the end of the run, ``[code, reason]``
of the close frame the server sent (``[1006, ""]`` for none: how the server drops a client
too far behind).

It speaks websockets through the library's sans-I/O protocol over plain sockets and one
selector, so that reading 100+ connections costs little CPU next to the server's.
"""

from __future__ import annotations

import json
import re
import selectors
import socket
import struct
import sys
import time

from websockets.client import ClientProtocol
from websockets.frames import Opcode
from websockets.protocol import State
from websockets.uri import parse_uri

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux; also the control message type
SERVER_TIME = re.compile(r'"server_time":([0-9.eE+-]+)')
ANCILLARY = socket.CMSG_SPACE(16)  # struct timespec on 64-bit Linux


class Player:
    def __init__(self, port: int, path: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.proto = ClientProtocol(parse_uri(f"ws://127.0.0.1:{port}{path}"), max_size=None)
        self.proto.send_request(self.proto.connect())
        self.flush()
        while self.proto.state is not State.OPEN:  # the handshake's response
            self.receive()
            if self.proto.handshake_exc is not None:
                raise self.proto.handshake_exc

    def flush(self) -> None:
        for data in self.proto.data_to_send():
            if data:
                self.sock.sendall(data)

    def send(self, message: dict) -> None:
        self.proto.send_text(json.dumps(message).encode())
        self.flush()

    def receive(self) -> tuple[list[str], float | None]:
        """Texts in what the socket has now, with the kernel's arrival time of the data."""
        data, ancillary, _, _ = self.sock.recvmsg(65536, ANCILLARY)
        if not data:
            raise ConnectionError("server closed the connection")
        arrived = None
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", value[:16])
                arrived = sec + nsec / 1e9
        self.proto.receive_data(data)
        texts = [
            ev.data.decode()
            for ev in self.proto.events_received()
            if getattr(ev, "opcode", None) is Opcode.TEXT
        ]
        self.flush()  # pongs to websocket pings
        return texts, arrived

    def wait_for(self, kind: str) -> None:
        while True:
            texts, _ = self.receive()
            if any(json.loads(t)["type"] == kind for t in texts):
                return


def main() -> None:
    port, code, n, first = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    raw = "--raw" in sys.argv
    players = []
    for i in range(first, first + n):
        p = Player(port, "/" if raw else "/ws")
        if not raw:
            p.send({"type": "hello", "role": "player", "join_code": code})
            p.wait_for("welcome")
            p.send({"type": "join", "team": "red" if i % 2 else "blue", "name": f"P{i}"})
            p.wait_for("joined")
        p.sock.setblocking(False)
        players.append(p)
    samples: list[tuple[float, float | None, float, int]] = []
    closed: list[list] = []
    selector = selectors.DefaultSelector()
    for p in players:
        selector.register(p.sock, selectors.EVENT_READ, p)
    selector.register(sys.stdin, selectors.EVENT_READ, None)
    print("ready", flush=True)
    while True:
        for key, _ in selector.select():
            if key.data is None:
                sys.stdin.readline()
                print(json.dumps({"samples": samples, "closed": closed}), flush=True)
                return
            try:
                texts, arrived = key.data.receive()
            except (ConnectionError, OSError):  # closed by the server: said in the output
                selector.unregister(key.fileobj)
                close = key.data.proto.close_rcvd
                closed.append([1006, ""] if close is None else [int(close.code), close.reason])
                continue
            now = time.time()
            for text in texts:
                if text.startswith('{"type":"ping"'):
                    sent = json.loads(text)["sent"]
                    key.data.send({"type": "pong", "sent": sent, "time": now})
                elif text.startswith('{"type":"state"') and '"tossup":null' not in text:
                    server_time = float(SERVER_TIME.search(text).group(1))  # type: ignore[union-attr]
                    late = None if arrived is None else arrived - server_time
                    samples.append((server_time, late, now - server_time, len(text)))


if __name__ == "__main__":
    main()
