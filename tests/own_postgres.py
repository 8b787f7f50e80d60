"""A PostgreSQL cluster of a test's own, on a port of its own, to restart and freeze at will.

The shared server (``tests.databases``) is never stopped; a test that needs a database to go
away makes one with ``initdb`` in a temporary folder and drives it with ``pg_ctl`` (a fast stop
and a start) and signals (SIGSTOP/SIGCONT of the postmaster and its backends: a frozen server).
Skipped with the reason when PostgreSQL's binaries are missing, unless
``COUNTERSIGN_REQUIRE_POSTGRES=1`` (then a failure). As root (a container), the cluster runs as
the ``postgres`` user, as ``initdb`` refuses root.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest

from tests.databases import REQUIRED
from tests.ports import free_port

BIN_DIRS = [Path(f"/usr/lib/postgresql/{v}/bin") for v in (17, 16, 15, 14)]


def _bin_dir() -> Path | None:
    for folder in BIN_DIRS:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    return None


@dataclass
class OwnPostgres:
    """A cluster in ``data``, listening on 127.0.0.1:``port``."""

    bin_dir: Path
    data: Path
    port: int
    user: str | None  # the OS user it runs as, when we are root

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        log = self.data.parent / "postgres.log"
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(log),
            "-o",
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''",
            "-w",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        """A fast stop and a start: every connection is closed, as in an operator's restart."""
        self.stop("fast")
        self.start()

    def _pids(self) -> list[int]:
        """The postmaster and every process it started (the backends)."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(
            ["pgrep", "-P", str(postmaster)], capture_output=True, text=True, check=False
        ).stdout.split()
        return [postmaster, *(int(pid) for pid in children)]

    def freeze(self) -> list[int]:
        """SIGSTOP the postmaster and its backends: connections stay open, nothing answers."""
        pids = self._pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        return pids

    def thaw(self, pids: list[int]) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


@contextlib.asynccontextmanager
async def own_postgres() -> AsyncIterator[OwnPostgres]:
    """A new cluster in a temporary folder, started; stopped (immediately) and removed
    afterwards."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        reason = f"PostgreSQL's initdb is not installed (looked in {BIN_DIRS[0].parent})"
        if REQUIRED:
            pytest.fail(f"{reason} (COUNTERSIGN_REQUIRE_POSTGRES=1)")
        pytest.skip(reason)
    user = "postgres" if os.geteuid() == 0 else None
    # not under ``folder``: pytest's folders are private to root, where postgres cannot go
    home = Path(tempfile.mkdtemp(prefix="cs-own-pg-"))
    data = home / "data"
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(home, entry.pw_uid, entry.pw_gid)
    cluster = OwnPostgres(bin_dir=bin_dir, data=data, port=free_port(), user=user)
    cluster._run("initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync")
    cluster.start()
    try:
        await _until_it_answers(cluster)
        yield cluster
    finally:
        with contextlib.suppress(Exception):
            cluster.stop("immediate")
        shutil.rmtree(home, ignore_errors=True)


async def _until_it_answers(cluster: OwnPostgres) -> None:
    for _ in range(100):
        try:
            connection = await asyncpg.connect(
                host="127.0.0.1", port=cluster.port, user="postgres", timeout=2
            )
        except (OSError, asyncpg.PostgresError):
            await asyncio.sleep(0.1)
            continue
        await connection.close()
        return
    raise AssertionError("the test's own PostgreSQL never answered")
