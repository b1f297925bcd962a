"""A small OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` with a chat completion whose text comes from
:attr:`StubServer.answer` (default: the answer of the first known keyword found in the last
clue), adds per-token log-probabilities when the request asks for them, answers ``latency``
seconds after each request arrived, fails on demand (``fail_next``: a list of HTTP status codes
returned to the next requests, e.g. 429 or 500), and records every request body and the peak
number of requests in flight (``GET /v1/stats``). Standard library only; runs in a background
thread, or in its own process (``python -m grace_arena.model.stub_server --latency 0.05``: prints
the API base URL on its first line), which keeps it from competing with the client for the GIL.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["StubServer", "split_tokens"]

_TOKEN = re.compile(r"\s*[A-Za-z]+|\s*\d|\s*[^\sA-Za-z\d]|\s+")


def split_tokens(text: str) -> list[str]:
    """A crude tokenization whose pieces concatenate back to ``text``."""
    tokens = _TOKEN.findall(text)
    assert "".join(tokens) == text
    return tokens


class _Server(ThreadingHTTPServer):
    # The default backlog (5) drops the connections a client opens at once beyond it, and the
    # client's TCP stack retries them only a second later.
    request_queue_size = 128


class StubServer:
    """Start with ``with StubServer(...) as server:``; ``server.api_base`` is the ``/v1`` URL."""

    def __init__(
        self,
        *,
        answers: dict[str, str] | None = None,
        latency: float = 0.0,
        verbal_probability: str = "0.8",
        token_logprob: float = math.log(0.9),
        logprobs: bool = True,
    ) -> None:
        self.answers = answers or {}
        self.latency = latency
        self.verbal_probability = verbal_probability
        self.token_logprob = token_logprob
        self.logprobs = logprobs
        self.fail_next: list[int] = []
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self.answer: Callable[[dict[str, Any]], str] = self._default_answer
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- behaviour ---------------------------------------------------------------------------

    def _default_answer(self, body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        last = prompt.rsplit("Question:", 1)[-1]
        guess = next((a for k, a in self.answers.items() if k.lower() in last.lower()), "None")
        if "Probability:" in prompt:
            return f"The answer is: {guess}\nProbability: {self.verbal_probability}"
        return f" {guess}"

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        content = self.answer(body)
        choice: dict[str, Any] = {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": content},
        }
        if self.logprobs and body.get("logprobs"):
            choice["logprobs"] = {
                "content": [
                    {"token": t, "logprob": self.token_logprob, "bytes": None, "top_logprobs": []}
                    for t in split_tokens(content)
                ]
            }
        prompt_tokens = sum(len(m.get("content", "").split()) for m in body["messages"])
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(split_tokens(content)),
                "total_tokens": prompt_tokens + len(split_tokens(content)),
            },
        }

    # -- HTTP --------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without TCP_NODELAY, Nagle's algorithm
            # and the client's delayed ACK add about 40 ms to every response.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/stats"):
                    with server._lock:
                        stats = {
                            "requests": len(server.requests),
                            "max_in_flight": server.max_in_flight,
                        }
                    self._send(200, stats)
                elif self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "stub"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                received = time.perf_counter()
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                with server._lock:
                    server.requests.append(body)
                    status = server.fail_next.pop(0) if server.fail_next else 200
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if status != 200:
                        reply = {"error": {"message": f"stub error {status}", "type": "stub"}}
                    else:
                        reply = server._completion(body)
                    # The answer leaves `latency` seconds after the request arrived.
                    time.sleep(max(0.0, server.latency - (time.perf_counter() - received)))
                finally:
                    # Done before the answer is sent: a client may send its next request as
                    # soon as it has this one's answer, and must not be seen to overlap it.
                    with server._lock:
                        server.in_flight -= 1
                self._send(status, reply)

        return Handler

    def start(self) -> StubServer:
        self._httpd = _Server(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="OpenAI-compatible stub server on 127.0.0.1")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    args = parser.parse_args()
    server = StubServer(latency=args.latency).start()
    print(server.api_base, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
