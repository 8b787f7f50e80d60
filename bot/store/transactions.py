"""Where the store's transactions run: one short synchronous body per transaction.

A store call is a plain function of a SQLAlchemy ``Connection``, run in one transaction
(``write``), as statements each atomic on their own (``apply``), or on one connection for reads
(``read``). How it reaches the database depends on the backend:

- **A SQLite file** runs the body on SQLite's own driver in a worker thread: one hand-off per
  call. Through aiosqlite every statement costs four hand-offs to its thread (cursor, execute,
  fetch, close) and every transaction two more (commit, the pool's rollback), which made a
  store call cost about 1 ms where the work itself takes 0.1 ms. A ``short`` call (a few rows
  by key) runs on the loop's own connection instead, no hand-off at all, whenever SQLite can
  serve it at once (``ThreadedSqliteTransactions``).
- **PostgreSQL and an in-memory SQLite database** run the body through the async engine's
  greenlet bridge, the whole call in one hop (check-out, body, commit, check-in: what
  ``AsyncEngine.begin`` and ``run_sync`` do in five): asyncpg needs no thread, and an in-memory
  database lives in its one async connection, which other parts of the application share. On
  PostgreSQL, ``apply`` and ``read`` run in autocommit, sparing the BEGIN and COMMIT round trips.

Either way a body sees the same synchronous connection API, so each query is written once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import queue
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

from sqlalchemy import URL, Connection, Engine, event
from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.util import greenlet_spawn

from bot.store import direct

R = TypeVar("R")

SQLITE_WORKERS = 4
"""Threads (and pooled connections) for a SQLite file: readers run side by side, a writer at a
time (SQLite's rule); a writer kept waiting by another process blocks its thread, never the loop."""


_AHEAD: ContextVar[bool] = ContextVar("countersign_store_calls_ahead", default=False)


@contextlib.contextmanager
def calls_ahead(ahead: bool = True) -> Iterator[None]:
    """Store calls made inside (and in tasks started inside) go ahead of the calls already
    queued for SQLite's worker threads: a request waiting for its answer (a Slack click's
    read and write before its 200) is not kept behind background work's queued calls.
    ``ahead=False``: back in turn (background work started from such a request)."""
    token = _AHEAD.set(ahead)
    try:
        yield
    finally:
        _AHEAD.reset(token)


class Transactions(Protocol):
    """``short=True`` on any call: ``body`` reads and writes a few rows found by their keys (a
    pause, its tree's pauses, a lease): where the database lets it at once, it may run on the
    caller's thread, sparing the hand-off to a worker (on a SQLite file:
    ``ThreadedSqliteTransactions``). Never for a scan or a batch: the event loop waits while
    it runs."""

    async def write(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        """Run ``body`` in one transaction, committed when it returns."""
        ...

    async def apply(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        """Run ``body``, whose statements are each atomic by themselves (a conditional update;
        an insert, then a read if it inserted nothing): no transaction around them where the
        driver would spend round trips on one."""
        ...

    async def read(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        """Run ``body`` on one connection, for reads of one statement each."""
        ...

    async def close(self) -> None: ...


class AsyncEngineTransactions:
    """Bodies run through the async engine's greenlet bridge (asyncpg, in-memory SQLite).

    ``one_connection``: the engine shares one connection (in-memory SQLite), so calls take
    turns — two transactions interleaved on one connection would roll each other back.

    On PostgreSQL, reads and single statements run in autocommit: asyncpg spends a round trip
    on BEGIN and another on COMMIT (or the pool's ROLLBACK), two of three for such a call. And
    the connection a call ends with is kept for the next (``_Kept``), pinged first when it was
    kept longer than ``idle_ping_after`` seconds, as the pool pings its idle ones.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        one_connection: bool = False,
        idle_ping_after: float | None = None,
    ) -> None:
        self._engine = engine
        self._turns = asyncio.Lock() if one_connection else None
        self._autocommit = engine.dialect.name == "postgresql"
        self._kept = _Kept(engine.sync_engine, idle_ping_after) if self._autocommit else None

    async def write(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        return await _finished(self._in_turn(self._write(body)))

    async def apply(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        if not self._autocommit:
            return await self.write(body)
        return await _finished(self._in_turn(self._read(body)))

    async def read(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        return await _finished(self._in_turn(self._read(body)))

    async def _at_once(self, body: direct.OneStatement[R]) -> R:
        """A one-statement body on the kept connection from the loop itself: no greenlet, no
        autocommit switch to set and reset (asyncpg runs a statement outside a transaction in
        autocommit already). About 40 of a call's 100 microseconds of client CPU on
        PostgreSQL. The usual way when no connection is kept fresh (the pool, or a ping, is
        needed) or the statement does not go to asyncpg itself."""
        assert self._kept is not None
        connection = self._kept.take_at_once()
        if connection is None:
            return await greenlet_spawn(self._kept.run, _in_autocommit_on, body)
        try:
            found = await direct.rows_at_once(connection, body)
        except self._engine.dialect.loaded_dbapi.Error as error:
            await greenlet_spawn(_raise_closing, connection, body, error)
            raise  # pragma: no cover - _raise_closing raises
        except BaseException:
            await greenlet_spawn(_close_quietly, connection)
            raise
        if found is None:
            return await greenlet_spawn(self._kept.run_on, connection, _in_autocommit_on, body)
        if not self._kept.keep_at_once(connection):
            await greenlet_spawn(_close_quietly, connection)
        return body.then(found)

    async def _write(self, body: Callable[[Connection], R]) -> R:
        if self._kept is not None:
            return await greenlet_spawn(self._kept.run, _in_transaction_on, body)
        return await greenlet_spawn(_in_new_transaction, self._engine.sync_engine, body)

    async def _read(self, body: Callable[[Connection], R]) -> R:
        if self._kept is not None:
            if isinstance(body, direct.OneStatement):
                return await self._at_once(body)
            return await greenlet_spawn(self._kept.run, _in_autocommit_on, body)
        return await greenlet_spawn(_on_new_connection, self._engine.sync_engine, body)

    async def _in_turn(self, work: Awaitable[R]) -> R:
        if self._turns is None:
            return await work
        async with self._turns:
            return await work

    async def close(self) -> None:
        """Give the kept connection back; the engine belongs to the App, which disposes of it."""
        if self._kept is not None:
            await greenlet_spawn(self._kept.close)


class _Kept:
    """The connection the last call ended with, kept for the next one (PostgreSQL).

    A pool's check-out and check-in, and the ``Connection`` around them, cost a store call
    90,000 instructions of its 180,000 with no statement (callgrind); one call at a time — the
    usual case — now pays neither. Each call takes the kept connection, or one from the pool
    when it is taken (calls at once) or gone; it keeps the one it ends with if none is kept,
    else gives it back. A connection whose call failed is given back (the pool sees to one that
    was lost), as is one still in a transaction; one kept longer than ``idle_ping_after``
    seconds is pinged first, as the pool pings its idle ones (a server restart may have closed
    it meanwhile), and given up if it does not answer. Everything here runs on the loop's
    thread between two awaits, so no two calls take the same connection.
    """

    def __init__(self, engine: Engine, idle_ping_after: float | None) -> None:
        self._engine = engine
        self._idle_ping_after = idle_ping_after
        self._kept: tuple[Connection, float] | None = None
        self._closed = False

    def run(
        self,
        run: Callable[[Connection, Callable[[Connection], R]], R],
        body: Callable[[Connection], R],
    ) -> R:
        return self.run_on(self._take(), run, body)

    def run_on(
        self,
        connection: Connection,
        run: Callable[[Connection, Callable[[Connection], R]], R],
        body: Callable[[Connection], R],
    ) -> R:
        try:
            result = run(connection, body)
        except BaseException:
            _close_quietly(connection)
            raise
        self._keep(connection)
        return result

    def take_at_once(self) -> Connection | None:
        """The kept connection if it needs no ping (taken: no other call gets it), else None
        (and it stays kept, for the usual way to ping)."""
        kept = self._kept
        if kept is None:
            return None
        connection, since = kept
        limit = self._idle_ping_after
        if limit is not None and time.monotonic() - since > limit:
            return None
        self._kept = None
        return connection

    def keep_at_once(self, connection: Connection) -> bool:
        """Keep ``connection`` for the next call unless one is kept already, the store is
        closing, or it is invalidated or in a transaction; False if not kept (the caller gives
        it back to the pool: on the greenlet bridge, closing may be I/O)."""
        if (
            self._closed
            or self._kept is not None
            or connection.invalidated
            or connection.in_transaction()
        ):
            return False
        self._kept = (connection, time.monotonic())
        return True

    def _take(self) -> Connection:
        fresh = self.take_at_once()
        if fresh is not None:
            return fresh
        kept, self._kept = self._kept, None  # kept too long: pinged first
        if kept is not None and _answers(kept[0]):
            return kept[0]
        return self._engine.connect()

    def _keep(self, connection: Connection) -> None:
        if not self.keep_at_once(connection):
            connection.close()

    def close(self) -> None:
        self._closed = True
        kept, self._kept = self._kept, None
        if kept is not None:
            _close_quietly(kept[0])


def _answers(connection: Connection) -> bool:
    """Ping a kept connection; one that does not answer is given up (invalidated)."""
    try:
        connection.dialect.do_ping(cast(Any, connection.connection.dbapi_connection))
    except Exception as error:
        with contextlib.suppress(Exception):
            connection.invalidate(error)
        _close_quietly(connection)
        return False
    return True


class ThreadedSqliteTransactions:
    """Bodies run on the sqlite3 driver in worker threads, each call one hand-off — or, for a
    ``short`` call, on the loop's own connection, with none.

    A short call runs on the event loop's thread, on a connection of its own that never waits
    for a lock (busy timeout 0): a write begins with ``BEGIN IMMEDIATE``, which takes SQLite's
    write lock before the body runs or fails at once when another connection holds it (a worker
    here, another process); a read fails only in SQLite's rare moments of a reader locked out
    (a write-ahead log being recovered or reset). Either way nothing was done and the call is
    handed to a worker, as any other, which waits for the lock as long as the busy timeout
    says: the loop itself never waits for a lock. Spared per call: the hand-off (a queue, a
    thread woken, the result back through the loop's self-pipe, the GIL passed twice). Measured
    under callgrind, a pause cycle (nine store calls, all short) fell from 28.7 to 27.9 million
    instructions, and its time (``cycle_cost --part timing``) by about a tenth: most of what a
    hand-off costs is the threads' waking, which instructions do not count. SQLite's own work
    is unchanged: a commit in WAL mode with ``synchronous=NORMAL`` writes the log without
    waiting for the disk; but the commit that fills the log past ``wal_autocheckpoint`` pages
    checkpoints it, on the loop: it copies the log into the database and waits for the disk,
    about 5 ms here, in about one commit in twenty of the pause cycle (over 200 cycles, 97 of
    1,600 commits took more than 0.5 ms). Checkpoints made in a thread of their own instead
    were tried: ``PASSIVE`` does not catch up with commits made while it runs (the log may
    grow), ``RESTART`` makes every writer wait for the longest reader of the old log, and
    neither made the cycle faster (sequential cycles timed, ten rounds each, interleaved).

    The short writes of requests waiting for their answer (``calls_ahead``: a Slack click's
    answer recorded before its ack) made in one turn of the loop are joined: committed
    together at its end, in one transaction, each body in a savepoint of its own (one that
    raises is undone alone and its caller told; the others are committed). A burst of 50
    clicks records its 50 answers in one turn: one commit instead of fifty (each about 0.2 ms
    on the loop, a fifth of the burst's time there). A caller learns of its write once it is
    committed, as before; a lone one waits one turn. Other short writes (a run's) still run
    at once: joined, each would wait for the end of a turn, which in a burst is long.

    Each worker keeps one connection for its life (no pool check-out, reset and check-in per
    call) and hands its result straight to the caller's loop (no ``concurrent.futures`` future
    chained to an asyncio one, no shield): measured under callgrind, a pause cycle's
    instructions fell from 35.5 to 31.9 million (``tests.benchmarks.cycle_cost``). A read ends
    its implicit transaction at once, so no worker holds a WAL snapshot between calls (it
    would keep checkpoints from moving past it). The threads are daemons: ``close`` drains
    and joins them; a process that never closes loses only calls nobody was told of.

    A call goes to the worker that became idle last (a stack, not a queue of workers): calls
    made one after another run on one connection, whose page cache is still good. SQLite
    drops a connection's cache whenever another connection has written since its last
    transaction; handed round the four workers in turn, every call found its cache dropped by
    the three writes before it and read its pages again (about 150 thousand instructions a
    pause cycle). Writes wait for SQLite's one write lock whichever connection they are on."""

    def __init__(self, engine: Engine, workers: int = SQLITE_WORKERS) -> None:
        self._engine = engine
        # under ``_lock``: the calls waiting (the oldest ahead, ``calls_ahead``, is taken
        # first, else the oldest in turn) and the idle workers, the last idle on top
        self._lock = threading.Lock()
        self._ahead: collections.deque[_Job[Any]] = collections.deque()
        self._in_turn: collections.deque[_Job[Any]] = collections.deque()
        self._idle: list[_Worker] = []
        self._stopping = False
        self._workers = [_Worker(f"cs-sqlite-{n}", self._serve) for n in range(workers)]
        self._started = False
        self._closed = False
        self._loops_own: Connection | None = None
        """The connection short calls run on, on the loop's thread (opened on first use)."""
        self._joined: list[_Job[Any]] = []
        """Short writes made in this turn of the loop, committed together at its end."""
        self._loops_thread: int | None = None
        """The thread whose calls it serves: the first that made one (an event loop runs on
        one thread; a call from another thread, another loop's, goes to a worker)."""

    @classmethod
    def open(
        cls,
        url: URL,
        *,
        busy_timeout_s: float,
        on_connect: Callable[[Any, Any], None],
        workers: int = SQLITE_WORKERS,
    ) -> ThreadedSqliteTransactions:
        """A synchronous engine on the SQLite file of ``url``, with the pragmas ``on_connect``
        sets, and ``workers`` threads (and connections)."""
        engine = create_sync_engine(
            url.set(drivername="sqlite+pysqlite"),
            pool_size=workers + 1,  # a connection for each worker and the loop's own
            max_overflow=0,
            connect_args={
                "check_same_thread": False,  # made by the pool, used by one worker thread
                "timeout": busy_timeout_s,
            },
        )
        event.listen(engine, "connect", on_connect)
        return cls(engine, workers)

    async def write(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        if short and self._on_loops_thread():
            if _AHEAD.get():
                return await self._joining(body)
            done = self._at_once(body, _locked_at_once)
            if done is not _BUSY:
                return cast(R, done)
        return await self._hand_off(body, _in_transaction)

    async def apply(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        return await self.write(body, short=short)

    async def read(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        if short:
            done = self._at_once(body, _on_connection)
            if done is not _BUSY:
                return cast(R, done)
        return await self._hand_off(body, _on_connection)

    def _at_once(
        self,
        body: Callable[[Connection], R],
        run: Callable[[Connection, Callable[[Connection], R]], R],
    ) -> R | object:
        """``body`` on the loop's own connection, or ``_BUSY`` when SQLite could not serve it
        without waiting, or the call comes from another thread than the loop's (nothing done:
        hand it to a worker)."""
        if not self._on_loops_thread():
            return _BUSY  # one connection, one thread: no two transactions interleaved
        connection = self._loops_connection()
        try:
            return run(connection, body)
        except BaseException as error:
            if (
                not isinstance(error, Exception)
                or connection.invalidated
                or _driver(connection).in_transaction
            ):  # a fresh one next time: never a broken one (a refused insert leaves it whole)
                self._give_up_loops_own()
            if isinstance(error, _LockHeld) or (run is _on_connection and _busy(error)):
                return _BUSY  # a write that never began, a read (no effect) rolled back
            raise

    def _on_loops_thread(self) -> bool:
        """Whether the caller is on the loop's thread (the first to make a short call), whose
        own connection short calls run on."""
        if self._closed:
            raise RuntimeError("the store's SQLite transactions are closed")
        thread = threading.get_ident()
        if self._loops_thread is None:
            self._loops_thread = thread
        return self._loops_thread == thread

    def _loops_connection(self) -> Connection:
        connection = self._loops_own
        if connection is None or connection.invalidated:
            connection = self._loops_own = self._engine.connect()
            _driver(connection).execute("PRAGMA busy_timeout=0")
        return connection

    def _joining(self, body: Callable[[Connection], R]) -> asyncio.Future[R]:
        """``body`` joins the short writes of requests made in this turn of the loop: they are
        committed together at its end (``_commit_joined``), one commit for all of them."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[R] = loop.create_future()
        if not self._joined:
            loop.call_soon(self._commit_joined)
        self._joined.append(_Job(body, _in_transaction, loop, done, _AHEAD.get()))
        return done

    def _commit_joined(self) -> None:
        """The short writes joined in the last turn, in one transaction on the loop's own
        connection, each body in a savepoint of its own: a body that raises is undone alone
        and its caller told, the others are committed. When SQLite's write lock is held
        elsewhere, each goes to a worker as any other call; when the transaction itself fails
        (its commit), every caller is told, and nothing was written."""
        jobs, self._joined = self._joined, []
        if len(jobs) <= 1:  # none: committed already (``close``); one: no savepoint needed
            for job in jobs:
                self._at_once_or_handed(job)
            return
        try:
            connection = self._loops_connection()
            if direct.ordinary(connection):  # watched: each in a transaction of its own
                for job in jobs:
                    self._at_once_or_handed(job)
                return
            _driver(connection).execute("BEGIN IMMEDIATE")
        except BaseException as error:
            if isinstance(error, sqlite3.OperationalError) and _busy(error):
                for job in jobs:  # the lock is held elsewhere: nothing began
                    self._queue(job)
                return
            self._failed(jobs, error)
            return
        try:
            outcomes = [_in_savepoint(connection, job.body) for job in jobs]
            direct.commit(connection)
        except BaseException as error:  # the transaction is lost: nothing was written
            self._failed(jobs, error)
            return
        for job, (result, failure) in zip(jobs, outcomes, strict=True):
            settle(job.done, result, failure)

    def _failed(self, jobs: list[_Job[Any]], error: BaseException) -> None:
        """Joined writes none of which was committed: each caller told ``error``; the loop's
        connection given up (a fresh one next time: never a broken one)."""
        self._give_up_loops_own()
        for job in jobs:
            settle(job.done, None, error)
        if not isinstance(error, Exception):  # KeyboardInterrupt, SystemExit: the loop's too
            raise error

    def _at_once_or_handed(self, job: _Job[Any]) -> None:
        """One short write as before joining: at once, or handed to a worker when the lock is
        held elsewhere."""
        try:
            done = self._at_once(job.body, _locked_at_once)
        except BaseException as error:
            settle(job.done, None, error)
            if not isinstance(error, Exception):
                raise
            return
        if done is _BUSY:
            self._queue(job)
        else:
            settle(job.done, done, None)

    def _give_up_loops_own(self) -> None:
        connection, self._loops_own = self._loops_own, None
        if connection is not None:
            _close_quietly(connection)

    async def _hand_off(
        self,
        body: Callable[[Connection], R],
        run: Callable[[Connection, Callable[[Connection], R]], R],
    ) -> R:
        """Queue ``body`` for a worker; it runs to its end even if the caller is cancelled
        (the caller sees the cancellation at once: ``_finished``'s rule)."""
        if self._closed:
            raise RuntimeError("the store's SQLite transactions are closed")
        loop = asyncio.get_running_loop()
        done: asyncio.Future[R] = loop.create_future()
        self._queue(_Job(body, run, loop, done, _AHEAD.get()))
        return await done

    def _queue(self, job: _Job[Any]) -> None:
        if not self._started:
            self._started = True
            for worker in self._workers:
                worker.thread.start()
        with self._lock:
            (self._ahead if job.ahead else self._in_turn).append(job)
            idle = self._idle.pop() if self._idle else None
        if idle is not None:  # else a busy worker takes the call when it is done
            idle.wake.put(True)

    def _serve(self, worker: _Worker) -> None:
        """One worker: its connection, opened on first use and again after a failure; the
        calls waiting, until there are none (then idle until woken) or it is told to stop.
        It is back among the idle before its caller has the outcome: the caller's next call
        finds it there, on top."""
        connection: Connection | None = None
        job, idle = self._claim(worker)
        while True:
            if job is None:
                if not idle:
                    break  # stopping, no call left
                worker.wake.get()
                job, idle = self._claim(worker)
                continue
            try:
                if connection is None:
                    connection = self._engine.connect()
                result, error = job.run(connection, job.body), None
            except BaseException as failure:  # handed to the caller, whatever it is
                result, error = None, failure
                if connection is not None:
                    _close_quietly(connection)  # a fresh one next time: never a broken one
                    connection = None
            following, idle = self._claim(worker)
            job.settle(result, error)
            job = following
        if connection is not None:
            connection.close()

    def _claim(self, worker: _Worker) -> tuple[_Job[Any] | None, bool]:
        """The oldest call ahead, else the oldest in turn; if none, ``worker`` joins the idle
        (True: wait to be woken) unless the workers are stopping (False: stop)."""
        with self._lock:
            if self._ahead:
                return self._ahead.popleft(), False
            if self._in_turn:
                return self._in_turn.popleft(), False
            if self._stopping:
                return None, False
            self._idle.append(worker)
            return None, True

    async def close(self) -> None:
        """Let the queued calls finish, stop the workers, dispose of the engine; repeatable."""
        if self._closed:
            return
        self._commit_joined()  # the short writes of this turn first: their callers wait
        self._closed = True
        self._give_up_loops_own()
        await asyncio.get_running_loop().run_in_executor(None, self._shut_down)

    def _shut_down(self) -> None:
        with self._lock:  # each worker stops once no call is left for it
            self._stopping = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.wake.put(False)
        if self._started:
            for worker in self._workers:
                worker.thread.join()
        self._engine.dispose()


class _Worker:
    """A worker thread and how it is woken when idle."""

    __slots__ = ("thread", "wake")

    def __init__(self, name: str, serve: Callable[[_Worker], None]) -> None:
        self.wake: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self.thread = threading.Thread(target=serve, args=(self,), name=name, daemon=True)


@dataclass(slots=True)
class _Job(Generic[R]):
    body: Callable[[Connection], R]
    run: Callable[[Connection, Callable[[Connection], R]], R]
    loop: asyncio.AbstractEventLoop
    done: asyncio.Future[R]
    ahead: bool = False

    def settle(self, result: R | None, error: BaseException | None) -> None:
        """From the worker: the outcome to the caller's loop (gone if the loop closed)."""
        try:  # noqa: SIM105 - no context manager object per call
            self.loop.call_soon_threadsafe(settle, self.done, result, error)
        except RuntimeError:  # the loop closed meanwhile
            pass


def settle(done: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    """On the caller's loop: a call's outcome, from the thread that ran it, to the caller's
    future (dropped when the caller was cancelled meanwhile)."""
    if done.done():  # the caller was cancelled: the work finished all the same
        return
    if error is not None:
        done.set_exception(error)
    else:
        done.set_result(result)


def _raise_closing(connection: Connection, body: direct.OneStatement[Any], error: Any) -> None:
    """A one-statement body's driver error, raised as SQLAlchemy raises it (a lost connection
    invalidated); the connection given back to the pool, as a failed call's is."""
    try:
        direct.raise_as_sqlalchemy(connection, body, error)
    finally:
        _close_quietly(connection)


def _close_quietly(connection: Connection) -> None:
    with contextlib.suppress(Exception):
        connection.close()


_RUNNING: set[asyncio.Task[None]] = set()
"""Store calls running to their end, each kept until it ends (a task nobody holds may go)."""


async def _finished(work: Coroutine[Any, Any, R]) -> R:
    """Run a store call to its end even if its caller is cancelled.

    A launch cancels its running branches; a cancellation that lands inside a transaction makes
    SQLAlchemy invalidate the connection mid-statement (an in-memory SQLite database is then
    gone). So the call runs in a task of its own, to its end; a cancelled caller sees its
    cancellation at once (as a timeout around a store call expects), the call's outcome is
    dropped. ``asyncio.shield`` does the same with one more turn of the loop per call (the
    task's end reaches the caller through a done callback, then the caller's wake-up); here
    the task hands its outcome to the caller's future itself.
    """
    loop = asyncio.get_running_loop()
    told: asyncio.Future[R] = loop.create_future()
    task = loop.create_task(_telling(work, told))
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
    return await told


async def _telling(work: Coroutine[Any, Any, R], told: asyncio.Future[R]) -> None:
    """Run ``work``; its result or error to ``told`` (unless its caller was cancelled)."""
    try:
        result = await work
    except asyncio.CancelledError:  # the task itself was cancelled (the loop shuts down)
        told.cancel()
        raise
    except BaseException as error:
        if not told.done():
            told.set_exception(error)
        if not isinstance(error, Exception):  # KeyboardInterrupt, SystemExit: the loop's too
            raise
    else:
        if not told.done():
            told.set_result(result)


def _in_new_transaction(engine: Engine, body: Callable[[Connection], R]) -> R:
    """A pooled connection, ``body`` in one transaction on it, committed, the connection given
    back: in one hop to the greenlet bridge (``AsyncEngine.begin`` and ``run_sync`` make one
    for the check-out, the BEGIN, the body, the COMMIT and the check-in each)."""
    with engine.begin() as connection:
        return body(connection)


def _on_new_connection(engine: Engine, body: Callable[[Connection], R]) -> R:
    """A pooled connection, ``body`` on it, the connection given back (its transaction, if
    any, rolled back by the pool): one hop to the greenlet bridge."""
    with engine.connect() as connection:
        return body(connection)


def _in_autocommit_on(connection: Connection, body: Callable[[Connection], R]) -> R:
    """``body`` on ``connection`` in autocommit (PostgreSQL), the connection left as it was.

    The driver's own switch (asyncpg's adapter then sends no BEGIN), set back when ``body``
    ends: not an engine with ``isolation_level="AUTOCOMMIT"``, whose connections each carry an
    event to set and reset it, which also makes every statement on them look watched
    (``direct.ordinary``). Measured under callgrind: an autocommit call with no statement cost
    258,000 instructions that way, 204,000 this way."""
    driver: Any = connection.connection.dbapi_connection
    driver.autocommit = True
    try:
        return body(connection)
    finally:
        driver.autocommit = False  # a write on it later begins its transaction again
        if connection.in_transaction():  # SQLAlchemy's own, begun by a statement it ran:
            connection.rollback()  # nothing on the server (the driver began none)


def _in_transaction_on(connection: Connection, body: Callable[[Connection], R]) -> R:
    """``body`` in one transaction on ``connection``, committed when it returns."""
    with connection.begin():
        return body(connection)


def _in_transaction(connection: Connection, body: Callable[[Connection], R]) -> R:
    """``body`` in one transaction: sqlite3 opens it before the first write (as it does under
    ``Connection.begin``, which emits no BEGIN on pysqlite), it is committed when ``body``
    returns and rolled back if it raises. Unless the engine is watched, without SQLAlchemy's
    transaction object: its begin, commit and reset cost more than SQLite's COMMIT itself."""
    if direct.ordinary(connection):
        with connection.begin():
            return body(connection)
    try:
        result = body(connection)
    except BaseException:
        direct.roll_back(connection)
        raise
    direct.commit(connection)
    return result


def _locked_at_once(connection: Connection, body: Callable[[Connection], R]) -> R:
    """``body`` in one transaction that holds SQLite's write lock from its start (``BEGIN
    IMMEDIATE``): on a connection that waits for no lock, a lock held elsewhere fails the BEGIN
    (``_LockHeld``), before ``body`` ran. A failure after it, whatever it is, is the call's:
    a body that ran in part is never run again elsewhere."""
    try:
        _driver(connection).execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        if _busy(error):
            raise _LockHeld from error
        raise
    return _in_transaction(connection, body)


def _in_savepoint(
    connection: Connection, body: Callable[[Connection], R]
) -> tuple[Any, BaseException | None]:
    """``body`` in a savepoint of the open transaction: undone alone if it raises (its error
    returned, for its caller); an error undoing it is the transaction's (raised)."""
    driver = _driver(connection)
    driver.execute("SAVEPOINT countersign_call")
    try:
        result = body(connection)
    except Exception as error:
        driver.execute("ROLLBACK TO countersign_call")
        driver.execute("RELEASE countersign_call")
        return None, error
    driver.execute("RELEASE countersign_call")
    return result, None


class _LockHeld(Exception):
    """``BEGIN IMMEDIATE`` found SQLite's write lock held by another connection."""


def _driver(connection: Connection) -> Any:
    return connection.connection.dbapi_connection


_BUSY = object()
"""What a short call returns when SQLite could not serve it at once."""


def _busy(error: BaseException) -> bool:
    """SQLite's "database is locked" (or its table-level kind), raw or wrapped by SQLAlchemy."""
    if not isinstance(error, (sqlite3.OperationalError, OperationalError)):
        return False
    cause = error.orig if isinstance(error, OperationalError) else error
    code = getattr(cause, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _on_connection(connection: Connection, body: Callable[[Connection], R]) -> R:
    """A read on the worker's connection; its implicit transaction ends with it."""
    try:
        return body(connection)
    finally:
        direct.roll_back(connection)
