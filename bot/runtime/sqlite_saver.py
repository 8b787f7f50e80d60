"""LangGraph's SQLite checkpointer, each call one hand-off to a thread of its own.

``AsyncSqliteSaver`` reaches the file through aiosqlite, which hands every step to its thread
and back: a checkpoint's write costs four hand-offs (the cursor, the statement, closing the
cursor, the commit), a read of a checkpoint and its writes seven. A pause cycle makes twelve
checkpointer calls, about fifty hand-offs. ``ThreadedSqliteSaver`` is langgraph's own
synchronous ``SqliteSaver`` — the same tables, statements and serialisation, so either reads
what the other wrote — whose async methods each run the synchronous one whole in one hand-off
to its thread. Measured under callgrind on the bare LangGraph loop of
``tests.benchmarks.cycle_instructions`` (50 cycles): 19.5 million instructions per cycle on
``AsyncSqliteSaver``, 18.0 on this one.

Durability is the same as ``AsyncSqliteSaver``'s: SQLite's default ``synchronous=FULL`` in WAL
mode (each commit waits for the disk), the same busy timeout and write-ahead-log bounds as the
store's connections. Calls run one at a time, in the order made, as on aiosqlite's one thread;
a call whose caller was cancelled still runs to its end (as on aiosqlite), its outcome dropped.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite import SqliteSaver

from bot.store.database import SQLITE_BUSY_TIMEOUT_MS, SQLITE_WAL_PRAGMAS
from bot.store.new_threads import NewThreads
from bot.store.transactions import settle

R = TypeVar("R")


class ThreadedSqliteSaver(SqliteSaver):
    """``SqliteSaver`` with async methods of one hand-off each (see the module's docstring)."""

    new_threads: NewThreads | None = None
    """Threads whose first read is answered without the file (``bot.store.new_threads``)."""

    def __init__(
        self, conn: sqlite3.Connection, thread: _OneThread, *, serde: SerializerProtocol | None
    ) -> None:
        super().__init__(conn, serde=serde)
        self._thread = thread

    @classmethod
    async def open(cls, path: Path, *, serde: SerializerProtocol | None) -> ThreadedSqliteSaver:
        """The checkpointer of the SQLite file ``path``, its tables set up."""
        thread = _OneThread(f"cs-checkpoints-{path.name}")
        try:
            conn = await thread.call(lambda: _connect(path))
        except BaseException:
            await thread.stop()
            raise
        saver = cls(conn, thread, serde=serde)
        try:
            await thread.call(saver.setup)
        except BaseException:
            await saver.close()  # the connection too, not left to the garbage collector
            raise
        return saver

    async def close(self) -> None:
        """Let the calls made finish, then close the connection and stop the thread."""
        if self._thread.stopped:
            return
        try:
            await self._thread.call(self.conn.close)
        finally:
            await self._thread.stop()

    async def fetch_one(self, statement: str) -> Sequence[object] | None:
        """The first row of ``statement`` (a read), on the checkpointer's own connection."""

        def first() -> Sequence[object] | None:
            with self.lock:
                row = self.conn.execute(statement).fetchone()
            return None if row is None else tuple(row)

        return await self._thread.call(first)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        if self.new_threads is not None and self.new_threads.known_empty(config):
            return None
        return await self._thread.call(lambda: self.get_tuple(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await self._thread.call(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._thread.call(lambda: self.put(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._thread.call(lambda: self.put_writes(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._thread.call(lambda: self.delete_thread(thread_id))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        return await self._thread.call(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )


def _connect(path: Path) -> sqlite3.Connection:
    """A connection to ``path`` made on the checkpointer's thread (and used only there, but
    ``SqliteSaver``'s synchronous methods may be called from another thread: its lock guards)."""
    conn = sqlite3.connect(
        str(path), check_same_thread=False, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000
    )
    for pragma in SQLITE_WAL_PRAGMAS:
        conn.execute(pragma)
    return conn


class _OneThread:
    """A daemon thread running the calls handed to it one at a time, in order; each outcome is
    handed straight to its caller's loop (no ``concurrent.futures`` future in between)."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()
        self.stopped = False

    def call(self, work: Callable[[], R]) -> asyncio.Future[R]:
        if self.stopped:
            raise RuntimeError("the checkpointer is closed")
        loop = asyncio.get_running_loop()
        done: asyncio.Future[R] = loop.create_future()
        self._jobs.put((work, loop, done))
        return done

    async def stop(self) -> None:
        """No more calls; the ones made run to their end first."""
        if self.stopped:
            return
        self.stopped = True
        self._jobs.put(None)
        await asyncio.get_running_loop().run_in_executor(None, self._thread.join)

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            work, loop, done = job
            try:
                result, error = work(), None
            except BaseException as failure:  # handed to the caller, whatever it is
                result, error = None, failure
            try:  # noqa: SIM105 - no context manager object per call
                loop.call_soon_threadsafe(settle, done, result, error)
            except RuntimeError:  # the caller's loop closed meanwhile
                pass


_Job = tuple[Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]
