"""``python -m bot …`` as a person runs it: a subprocess, in a folder of its own, with only the
environment a person would have (PATH, HOME) and the settings the test gives."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import io
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from tests.slack.stub import SlackStub

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_SECONDS = 60


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


def python_m_bot_in_process(*args: str, cwd: Path, env: dict[str, str]) -> Ran:
    """``python -m bot *args`` as :func:`python_m_bot` runs it, but called in this process: the
    function the process runs (``bot.cli.main.main``), with ``env`` as the whole environment,
    ``cwd`` as the folder and first on ``sys.path`` (as ``python -m`` puts it); stdout and
    stderr captured. Modules imported from ``cwd`` are forgotten afterwards. Only for a command
    that stops at once (a refused setting): one that serves would never return.

    A process's imports cost seconds of CPU; the variants of one rule are checked this way,
    and one or two of them as a process, to prove the process says the same."""
    from bot.cli.main import main

    saved_environ, saved_cwd, saved_path = dict(os.environ), os.getcwd(), list(sys.path)
    out, err = io.StringIO(), io.StringIO()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.path.insert(0, str(cwd))
    importlib.invalidate_caches()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        os.environ.clear()
        os.environ.update(saved_environ)
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        folder = f"{cwd}{os.sep}"
        for name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", None) or "").startswith(folder):
                del sys.modules[name]
    return Ran(code=code, out=out.getvalue(), err=err.getvalue())


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
