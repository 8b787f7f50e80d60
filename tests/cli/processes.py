"""``python -m bot …`` as a person runs it: a subprocess, in a folder of its own, with only the
environment a person would have (PATH, HOME) and the settings the test gives."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

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
