"""What one pause cycle costs: Countersign's own statements, and its time beside bare LangGraph.

    python -m tests.benchmarks.cycle_cost [--database sqlite|postgres] [--part counts|clicks|timing]
        [--cycles 200] [--concurrency 50] [--rounds 3] [--level N ...] [--show]

``counts``: per cycle (execute to the pause, answer, continue to the end: ``App.execute`` then
``App.resume``), the transactions and statements Countersign makes on its own tables, counted by
SQLAlchemy event listeners on every engine (reads, writes, and what each is), beside the
checkpointer's calls (counted on the saver: it is LangGraph's, the same on both sides).
``clicks``: the same per Approve click through Slack (a signed request to the bot, the Web API
stubbed; counted from the click to the message updated), before and after the ack.
``timing``: cycles/s and CPU ms per cycle of ours and of the same loop in bare LangGraph
(``tests.benchmarks.resume_throughput``: model → tool with ``interrupt()`` → model, same saver,
same offline model), rounds interleaved (ours, bare, ours, bare...), sequential and at
``--concurrency``; the factor is bare cycles/s over ours, per round and over all rounds.
On PostgreSQL ``timing`` also prints the CPU of the server's processes per cycle (``/proc``),
beside the client's: both sides' work, the database's included.
``--show``: every distinct statement with its count per cycle (or click).
Every statement is counted, including the hot ones ``bot.store.direct`` runs on the driver's
cursor (writes, and reads and writes that return rows): the listeners make them go through
SQLAlchemy while counting (``direct`` says how many would not, unwatched).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import re
import sqlite3
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event

from bot import App, Settings, WorkflowStartText
from bot.store import direct
from bot.store.database import checkpoint_path
from bot.testing import FakeClock
from tests.benchmarks.resume_throughput import (
    BenchApplication,
    Inbox,
    PayWorkflow,
    bare_cycle,
    postgres_saver,
    sqlite_saver,
)
from tests.benchmarks.round_trips import RoundTrips
from tests.databases import TEST_ENCRYPTION_KEYS, postgres_database

SAVER_CALLS = ("aget_tuple", "aput", "aput_writes", "alist", "adelete_thread")


# ---------------------------------------------------------------- counting


def _kind(statement: str) -> str:
    verb = statement.lstrip().split(None, 1)[0].upper() if statement.strip() else "?"
    if verb == "WITH":  # a data-modifying CTE writes
        return "write" if _WRITES_IN_WITH.search(statement) else "read"
    return "read" if verb in ("SELECT", "PRAGMA") else "write"


_WRITES_IN_WITH = re.compile(r"\b(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)


def _digest(statement: str) -> str:
    """A statement in one line, its values and long column lists elided."""
    one = " ".join(statement.split())
    one = re.sub(r"\(([^()]{60,})\)", "(…)", one)
    one = re.sub(r"SELECT .{60,}? FROM", "SELECT … FROM", one)
    one = re.sub(r"RETURNING .*$", "RETURNING …", one)
    one = re.sub(r" SET .{40,}? WHERE", " SET … WHERE", one)
    return one[:150]


@dataclass
class Tally:
    """Statements and transactions on Countersign's tables, and the checkpointer's calls."""

    transactions: int = 0
    reads: int = 0
    writes: int = 0
    statements: Counter[str] = field(default_factory=Counter)
    saver: Counter[str] = field(default_factory=Counter)
    transactions_seen: Counter[tuple[str, ...]] = field(default_factory=Counter)
    """Each transaction as the statements it ran (a read call, or a write call)."""
    direct: int = 0
    """Statements given to ``bot.store.direct`` (on the driver's cursor when unwatched)."""

    @property
    def read_calls(self) -> int:
        return sum(n for t, n in self.transactions_seen.items() if _read_only(t))

    @property
    def write_calls(self) -> int:
        return sum(n for t, n in self.transactions_seen.items() if not _read_only(t))

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            transactions=self.transactions + other.transactions,
            reads=self.reads + other.reads,
            writes=self.writes + other.writes,
            statements=self.statements + other.statements,
            saver=self.saver + other.saver,
            transactions_seen=self.transactions_seen + other.transactions_seen,
            direct=self.direct + other.direct,
        )

    @property
    def total(self) -> int:
        return self.reads + self.writes

    def line(self, per: int) -> str:
        saver = ", ".join(f"{name} {n / per:g}" for name, n in sorted(self.saver.items()))
        return (
            f"{self.transactions / per:5.1f} transactions ({self.read_calls / per:g} read calls, "
            f"{self.write_calls / per:g} write calls), {self.total / per:5.1f} statements "
            f"({self.reads / per:g} reads, {self.writes / per:g} writes; "
            f"{self.direct / per:g} direct); "
            f"checkpointer: {saver or 'none'}"
        )

    def shown(self, per: int) -> list[str]:
        lines = []
        for statements, n in self.transactions_seen.most_common():
            kind = "read call" if _read_only(statements) else "write call"
            lines.append(f"    {n / per:4g}× {kind} of {len(statements)}:")
            lines.extend(f"          {s}" for s in statements)
        return lines


_KINDS: dict[str, str] = {}
"""Each digest's kind, read from its whole statement (a digest may elide a CTE's UPDATE)."""


def _read_only(statements: tuple[str, ...]) -> bool:
    return all((_KINDS.get(s) or _kind(s)) == "read" for s in statements)


class Counting:
    """Listens to every SQLAlchemy engine in the process (Countersign's own tables: the
    checkpointer runs on its own driver) and to one saver's calls; ``into`` says where they
    go (None: nowhere)."""

    def __init__(self) -> None:
        self.into: Tally | None = None
        self._open: dict[int, tuple[Tally, list[str]]] = {}

    @contextlib.contextmanager
    def listening(self, saver: Any) -> Iterator[None]:
        def begin(connection: Any) -> None:
            if self.into is not None:
                self.into.transactions += 1
                self._open[id(connection)] = (self.into, [])

        def end(connection: Any) -> None:
            tally, statements = self._open.pop(id(connection), (None, []))
            if tally is not None and statements:
                tally.transactions_seen[tuple(statements)] += 1

        def before(
            conn: Any, _cursor: Any, statement: str, _params: Any, _context: Any, _many: bool
        ) -> None:
            tally = self.into
            if tally is None:
                return
            kind, digest = _kind(statement), _digest(statement)
            if kind == "read":
                tally.reads += 1
            else:
                tally.writes += 1
            _KINDS[digest] = kind
            tally.statements[digest] += 1
            if id(conn) in self._open:
                self._open[id(conn)][1].append(digest)

        listeners: list[tuple[str, Callable[..., None]]] = [
            ("begin", begin),
            ("commit", end),
            ("rollback", end),
            ("before_cursor_execute", before),
        ]
        for name, listener in listeners:
            event.listen(Engine, name, listener)
        direct_execute, direct_rows = direct.execute, direct.rows

        def counted_direct(*args: Any, **kwargs: Any) -> int:
            if self.into is not None:
                self.into.direct += 1
            return direct_execute(*args, **kwargs)

        def counted_rows(*args: Any, **kwargs: Any) -> Any:  # ``first``, ``one_or_none`` too
            if self.into is not None:
                self.into.direct += 1
            return direct_rows(*args, **kwargs)

        direct.execute = counted_direct
        direct.rows = counted_rows
        originals = {name: getattr(saver, name) for name in SAVER_CALLS if hasattr(saver, name)}
        for name, original in originals.items():
            setattr(saver, name, self._counted(name, original))
        try:
            yield
        finally:
            direct.execute, direct.rows = direct_execute, direct_rows
            for name, listener in listeners:
                event.remove(Engine, name, listener)
            for name in originals:
                delattr(saver, name)

    def _counted(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        if name == "alist":

            async def listed(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
                if self.into is not None:
                    self.into.saver[name] += 1
                async for item in original(*args, **kwargs):
                    yield item

            return listed

        async def called(*args: Any, **kwargs: Any) -> Any:
            if self.into is not None:
                self.into.saver[name] += 1
            return await original(*args, **kwargs)

        return called

    @contextlib.contextmanager
    def phase(self, tally: Tally) -> Iterator[None]:
        self.into = tally
        try:
            yield
        finally:
            self.into = None


# ---------------------------------------------------------------- counts per cycle


@contextlib.asynccontextmanager
async def database_url(database: str, name: str) -> AsyncIterator[str]:
    if database == "postgres":
        async with postgres_database() as url:
            yield url
        return
    with tempfile.TemporaryDirectory() as folder:
        yield f"sqlite+aiosqlite:///{Path(folder) / f'{name}.db'}"


@contextlib.asynccontextmanager
async def bench_app(url: str, inbox: Inbox) -> AsyncIterator[App]:
    async with await App.create(
        BenchApplication,
        database_url=url,
        clock=FakeClock(),
        settings=Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS),
        services={Inbox: inbox},
    ) as app:
        yield app


async def counts(database: str, cycles: int, show: bool) -> None:
    inbox = Inbox()
    counting = Counting()
    trips = {"execute": RoundTrips.none(), "resume": RoundTrips.none()}
    async with contextlib.AsyncExitStack() as stack:
        url = await stack.enter_async_context(database_url(database, "counts"))
        if database == "postgres":  # every connection through a proxy counting round trips
            proxy = await stack.enter_async_context(RoundTrips.between(url))
            url = proxy.proxied(url)
            trips = {"execute": proxy, "resume": proxy}
        app = await stack.enter_async_context(bench_app(url, inbox))
        execute, resume = Tally(), Tally()
        pages = WalPages.of(url)
        with counting.listening(app.checkpointer):
            for i in range(-5, cycles):  # five to warm up, uncounted
                invoice = f"n{i}"
                counted = i >= 0
                pages.emptied()
                with _counted(counting, execute, trips["execute"], "execute", counted):
                    await app.execute(
                        PayWorkflow, WorkflowStartText(text=invoice), tenant_id="t", owner_id="o"
                    )
                pause_id = inbox.pending.pop(invoice)
                with _counted(counting, resume, trips["resume"], "resume", counted):
                    done = await app.resume(
                        pause_id, decision={"approved": True}, tenant_id="t", answered_by="m"
                    )
                assert done.output == {"text": "paid"}, done
                if counted:
                    pages.count()
    both = execute + resume
    print(f"per cycle on {database} ({cycles} cycles, App.execute then App.resume):")
    for name, tally in (("execute", execute), ("resume", resume), ("cycle", both)):
        print(f"  {name:<8} {tally.line(cycles)}")
        if database == "postgres":
            print(f"           {_trips_line(trips['execute'], name, cycles)}")
        if show:
            print("\n".join(tally.shown(cycles)))
    if pages.files:
        print(f"  {pages.line(cycles)}")
    if database == "postgres":
        bare = await bare_round_trips(cycles)
        print(f"  bare     round trips {bare / cycles:g} (checkpointer) per cycle")


@dataclass
class WalPages:
    """The pages a cycle writes to each SQLite file's write-ahead log: every page a commit
    changed, table and index alike, is written there whole (issue 32: the store's share of a
    cycle on SQLite is mostly these writes). Each log is emptied before a cycle
    (``wal_checkpoint(TRUNCATE)``, between cycles: nothing else is open then) and its frames
    read after; a cycle writes far fewer than the 256 pages that would checkpoint it midway."""

    files: dict[str, Path]
    written: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, url: str) -> WalPages:
        if not url.startswith("sqlite"):
            return cls({})
        store = Path(url.split("///", 1)[1])
        return cls({"store": store, "checkpointer": checkpoint_path(store)})

    def _checkpoint(self, path: Path, mode: str) -> int:
        with contextlib.closing(sqlite3.connect(path)) as connection:
            busy, frames, _ = connection.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        if busy:
            raise RuntimeError(f"{path.name}: its log could not be checkpointed between cycles")
        return int(frames)

    def emptied(self) -> None:
        for path in self.files.values():
            self._checkpoint(path, "TRUNCATE")

    def count(self) -> None:
        for who, path in self.files.items():
            self.written[who] += self._checkpoint(path, "PASSIVE")

    def line(self, per: int) -> str:
        return "WAL pages written per cycle: " + ", ".join(
            f"{who} {self.written[who] / per:g}" for who in self.files
        )


@contextlib.contextmanager
def _counted(
    counting: Counting, tally: Tally, trips: RoundTrips, phase: str, counted: bool
) -> Iterator[None]:
    if not counted:
        yield
        return
    with counting.phase(tally), trips.counting(phase):
        yield


def _trips_line(trips: RoundTrips, phase: str, per: int) -> str:
    """The round trips of ``phase`` ("cycle": both), by connection's owner."""
    phases = ("execute", "resume") if phase == "cycle" else (phase,)
    store = sum(trips.count[(p, "store")] for p in phases)
    saver = sum(trips.count[(p, "checkpointer")] for p in phases)
    other = sum(n for (p, who), n in trips.count.items() if p in phases) - store - saver
    line = (
        f"round trips {(store + saver + other) / per:g}: store {store / per:g}, "
        f"checkpointer {saver / per:g}"
    )
    return line + (f", unknown {other / per:g}" if other else "")


async def bare_round_trips(cycles: int) -> int:
    """Round trips of bare LangGraph's same loop on AsyncPostgresSaver, for ``cycles`` cycles
    after five to warm up."""
    async with (
        database_url("postgres", "bare") as url,
        RoundTrips.between(url) as proxy,
        postgres_saver(proxy.proxied(url)) as saver,
    ):
        cycle = bare_cycle(saver)
        for i in range(-5, cycles):
            with proxy.counting("cycle") if i >= 0 else contextlib.nullcontext():
                await cycle(i)
        return sum(proxy.count.values())


# ---------------------------------------------------------------- counts per click


async def clicks(database: str, count: int, show: bool) -> None:
    from aiohttp.test_utils import TestClient, TestServer

    from bot.testing import call_tool, mock_llm
    from channels.slack import SlackBot, SlackSettings
    from channels.slack.render import APPROVE_ACTION
    from tests.office import Ledger
    from tests.slack.conftest import SECRET, interactive_body, signed_headers
    from tests.slack.office import (
        APPROVALS,
        MANAGER,
        RefundCardTool,
        SlackOfficeAgent,
        SlackOfficeApplication,
        SlackOfficeWorkflow,
    )
    from tests.slack.stub import TEAM, SlackStub

    warm = 3
    llm = mock_llm(SlackOfficeAgent)
    for index in range(count + warm):
        llm.then_return(call_tool(RefundCardTool, {"order_id": str(index), "amount": 1.0}))
        llm.then_return("done")
    stub = SlackStub()
    await stub.start()
    counting = Counting()
    acked, after = Tally(), Tally()
    try:
        async with database_url(database, "clicks") as url:
            app = await App.create(
                SlackOfficeApplication,
                database_url=url,
                clock=FakeClock(),
                settings=Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS),
                services={Ledger: Ledger()},
            )
            bot = SlackBot(
                app, SlackSettings(bot_token="xoxb-b", signing_secret=SECRET, api_url=stub.api_url)
            )
            await bot.start()
            http = TestClient(TestServer(bot.web_app()))
            await http.start_server()
            try:
                with counting.listening(app.checkpointer):
                    for index in range(-warm, count):
                        await app.execute(
                            SlackOfficeWorkflow,
                            WorkflowStartText(text=f"refund {index}"),
                            tenant_id=TEAM,
                            owner_id="U0OWNER",
                        )
                        await bot.wait_idle()
                        [pending] = await app.list_pending(
                            tenant_id=TEAM, include_channel_pause_ids=True
                        )
                        assert pending.pause_id is not None
                        body = interactive_body(
                            {
                                "type": "block_actions",
                                "team": {"id": TEAM},
                                "user": {"id": MANAGER, "team_id": TEAM},
                                "container": {
                                    "type": "message",
                                    "message_ts": "1700000000.000001",
                                    "channel_id": APPROVALS,
                                    "is_ephemeral": False,
                                },
                                "channel": {"id": APPROVALS},
                                "trigger_id": "trigger",
                                "actions": [
                                    {
                                        "type": "button",
                                        "action_id": APPROVE_ACTION,
                                        "value": pending.pause_id,
                                    }
                                ],
                            }
                        )
                        headers = {
                            "Content-Type": "application/x-www-form-urlencoded",
                            **signed_headers(body),
                        }
                        counted = index >= 0
                        updates = len(stub.of("chat.update"))
                        with counting.phase(acked) if counted else contextlib.nullcontext():
                            response = await http.post("/slack/events", data=body, headers=headers)
                            assert response.status == 200, response.status
                        with counting.phase(after) if counted else contextlib.nullcontext():
                            await bot.wait_idle()
                        assert len(stub.of("chat.update")) == updates + 1
            finally:
                await http.close()
                await bot.close()
                await app.close()
    finally:
        await stub.close()
    print(f"per Approve click on {database} ({count} clicks through Slack):")
    for name, tally in (("to the ack", acked), ("after it", after)):
        print(f"  {name:<10} {tally.line(count)}")
        if show:
            print("\n".join(tally.shown(count)))
    print(f"  {'click':<10} {(acked + after).line(count)}")


# ---------------------------------------------------------------- timing, interleaved


@dataclass
class Round:
    cycles: int
    seconds: float
    cpu_seconds: float
    server_cpu_seconds: float = 0.0
    """PostgreSQL's processes' CPU over the round (every backend and background process of
    this machine's server: the other side's round does not overlap it)."""

    @property
    def per_second(self) -> float:
        return self.cycles / self.seconds

    @property
    def cpu_ms(self) -> float:
        return self.cpu_seconds / self.cycles * 1000

    @property
    def server_cpu_ms(self) -> float:
        return self.server_cpu_seconds / self.cycles * 1000


_TICKS = os.sysconf("SC_CLK_TCK")


def postgres_cpu_seconds() -> float:
    """User and system CPU of this machine's PostgreSQL processes so far (``/proc``; the ones
    gone meanwhile are not counted: the benchmark's connections stay open over a round)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(") ", 1)
            if fields[0].endswith("(postgres"):
                values = fields[1].split()
                total += int(values[11]) + int(values[12])  # utime, stime
    return total / _TICKS


async def pay_cycle(app: App, inbox: Inbox, invoice: str) -> None:
    """One full pause cycle of the benchmarks: execute to the pause, approve, continue to the
    end."""
    await app.execute(PayWorkflow, WorkflowStartText(text=invoice), tenant_id="t", owner_id="o")
    done = await app.resume(
        inbox.pending.pop(invoice), decision={"approved": True}, tenant_id="t", answered_by="m"
    )
    assert done.output == {"text": "paid"}, done


async def timed(cycle: Callable[[int], Awaitable[None]], cycles: int, level: int) -> Round:
    gate = asyncio.Semaphore(level)

    async def one(i: int) -> None:
        async with gate:
            await cycle(i)

    began, cpu, server = time.perf_counter(), time.process_time(), postgres_cpu_seconds()
    await asyncio.gather(*(one(i) for i in range(cycles)))
    return Round(
        cycles,
        time.perf_counter() - began,
        time.process_time() - cpu,
        postgres_cpu_seconds() - server,
    )


async def timing(database: str, cycles: int, level: int, rounds: int) -> list[tuple[Round, Round]]:
    inbox = Inbox()
    async with contextlib.AsyncExitStack() as stack:
        ours_url = await stack.enter_async_context(database_url(database, "ours"))
        app = await stack.enter_async_context(bench_app(ours_url, inbox))
        if database == "postgres":
            bare_url = await stack.enter_async_context(database_url(database, "bare"))
            saver = await stack.enter_async_context(postgres_saver(bare_url))
        else:
            folder = Path(await stack.enter_async_context(_folder()))
            saver = await stack.enter_async_context(sqlite_saver(folder))
        run_id = uuid.uuid4().hex[:6]

        async def ours(i: int) -> None:
            invoice = f"{run_id}-{i}"
            await pay_cycle(app, inbox, invoice)

        cycle_of_bare = bare_cycle(saver)
        numbers = itertools.count()

        async def next_of_ours(_: int) -> None:
            await ours(next(numbers))

        for _ in range(2):  # warm up both
            await timed(next_of_ours, 10, 1)
            await timed(cycle_of_bare, 10, 1)
        results = []
        for _ in range(rounds):
            mine = await timed(next_of_ours, cycles, level)
            theirs = await timed(cycle_of_bare, cycles, level)
            results.append((mine, theirs))
        return results


@contextlib.asynccontextmanager
async def _folder() -> AsyncIterator[str]:
    with tempfile.TemporaryDirectory() as folder:
        yield folder


def report_timing(database: str, level: int, results: list[tuple[Round, Round]]) -> None:
    def server(round_: Round) -> str:
        return f" + server {round_.server_cpu_ms:5.1f} ms" if database == "postgres" else ""

    print(f"{database}, {'sequential' if level == 1 else f'{level} concurrent'}:")
    for n, (mine, theirs) in enumerate(results, 1):
        print(
            f"  round {n}: ours {mine.per_second:6.1f}/s cpu {mine.cpu_ms:5.1f} ms{server(mine)} | "
            f"bare {theirs.per_second:6.1f}/s cpu {theirs.cpu_ms:5.1f} ms{server(theirs)} | "
            f"factor {theirs.per_second / mine.per_second:.2f}x"
        )
    ours_s = sum(m.seconds for m, _ in results)
    bare_s = sum(t.seconds for _, t in results)
    ours_n = sum(m.cycles for m, _ in results)
    bare_n = sum(t.cycles for _, t in results)
    ours_cpu = sum(m.cpu_seconds for m, _ in results) / sum(m.cycles for m, _ in results)
    bare_cpu = sum(t.cpu_seconds for _, t in results) / sum(t.cycles for _, t in results)
    print(
        f"  all: factor {ours_s / bare_s:.2f}x (ours {ours_n / ours_s:.1f}/s, "
        f"bare {bare_n / bare_s:.1f}/s), CPU ms per cycle "
        f"{ours_cpu * 1000:.1f} / {bare_cpu * 1000:.1f}"
    )
    if database == "postgres":
        ours_server = sum(m.server_cpu_seconds for m, _ in results) / ours_n
        bare_server = sum(t.server_cpu_seconds for _, t in results) / bare_n
        print(
            f"  PostgreSQL's processes: CPU ms per cycle {ours_server * 1000:.1f} / "
            f"{bare_server * 1000:.1f}; with the client's "
            f"{(ours_cpu + ours_server) / (bare_cpu + bare_server):.2f}x"
        )


async def main(arguments: argparse.Namespace) -> None:
    parts = arguments.part or ["counts", "clicks", "timing"]
    if "counts" in parts:
        await counts(arguments.database, arguments.count, arguments.show)
    if "clicks" in parts:
        await clicks(arguments.database, arguments.count, arguments.show)
    if "timing" in parts:
        for level in arguments.level or (1, arguments.concurrency):
            results = await timing(arguments.database, arguments.cycles, level, arguments.rounds)
            report_timing(arguments.database, level, results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--part", action="append", choices=["counts", "clicks", "timing"])
    parser.add_argument("--count", type=int, default=20, help="cycles or clicks counted")
    parser.add_argument("--cycles", type=int, default=200, help="cycles per timed round")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--level", type=int, action="append", help="concurrency levels timed")
    parser.add_argument("--show", action="store_true")
    asyncio.run(main(parser.parse_args()))
