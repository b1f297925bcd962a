"""A content-addressed cache of model responses, so that re-running makes no new calls.

The key is the SHA-256 of the canonical JSON of ``{model, messages, params}``, where ``params``
are the generation parameters that change the answer (temperature, max_tokens, logprobs, ...).
Where the server lives (``api_base``) and credentials are not part of the key. The value is the
normalised response (text, token log-probabilities, usage, cost) as JSON, in one SQLite file:
``$GRACE_ARENA_CACHE_DIR/responses.sqlite``, by default in the user's cache folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

__all__ = ["CACHE_ENV_VAR", "ResponseCache", "cache_key", "default_cache_dir"]

CACHE_ENV_VAR = "GRACE_ARENA_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$GRACE_ARENA_CACHE_DIR``, or ``grace-arena`` in the user's cache folder."""
    if env := os.environ.get(CACHE_ENV_VAR):
        return Path(env)
    return Path(user_cache_dir("grace-arena", appauthor=False))


_SETUP_TIMEOUT_S = 30.0


def _set_up(db: sqlite3.Connection) -> None:
    """WAL mode and the table. Processes that open a new cache file at once (the workers of
    a pool) can find it locked here without SQLite's busy timeout applying, so this retries."""
    deadline = time.monotonic() + _SETUP_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            # A cache may lose its last entries on power loss (they are fetched again), so it
            # need not wait for the disk on every put, which would stall the event loop.
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS response (key TEXT PRIMARY KEY, model TEXT, body TEXT)"
            )
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def cache_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the request's content."""
    blob = json.dumps(
        {"model": model, "messages": messages, "params": params},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """``get``/``put`` of JSON responses by key; safe to share between threads."""

    def __init__(self, path: str | Path | None = None) -> None:
        path = Path(path) if path is not None else default_cache_dir() / "responses.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        _set_up(self._db)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT body FROM response WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, body: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO response (key, model, body) VALUES (?, ?, ?)",
                (key, model, json.dumps(body, ensure_ascii=False)),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM response").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
