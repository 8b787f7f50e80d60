"""``python -m bot …`` as a person runs it: a subprocess, in a folder of its own, with only the
environment a person would have (PATH, HOME) and the settings the test gives."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from tests.slack.stub import SlackStub

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_SECONDS = 60


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def person_env(**settings: str) -> dict[str, str]:
    """PATH and HOME, then ``settings`` (nothing else leaks in from the test's environment)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    env.update(settings)
    return env


@dataclass(frozen=True, slots=True)
class Ran:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def python_m_bot(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str = "") -> Ran:
    """Run ``python -m bot *args`` in ``cwd``; its exit code, stdout and stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "bot", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=person_env() if env is None else env,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    return Ran(code=done.returncode, out=done.stdout, err=done.stderr)


class StubThread:
    """A ``SlackStub`` served by an event loop on a thread of its own, so a test may block (on
    ``subprocess.run``, on ``main()``) while the stub answers the bot's ``auth.test``."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.stub: SlackStub | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> SlackStub:
        self._thread.start()
        stub = SlackStub()
        asyncio.run_coroutine_threadsafe(stub.start(), self.loop).result(10)
        self.stub = stub
        return stub

    def __exit__(self, *_: object) -> None:
        assert self.stub is not None
        asyncio.run_coroutine_threadsafe(self.stub.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()
