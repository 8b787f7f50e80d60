"""The office example run with distinctive values, and readers of what a database holds raw."""

from __future__ import annotations

import re
import sqlite3
import struct
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import asyncpg

from bot import App, ExecutionResult, ExecutionStatus, Settings, WorkflowStartText
from bot.security import generate_key
from bot.store.database import DatabaseUrl, checkpoint_path
from bot.testing import FakeClock, call_tool, mock_llm
from tests.office import (
    BookExpenseTool,
    Inbox,
    Ledger,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    RefundCardTool,
)

ORDER = "ORD-7Q9X-PLAINTEXT"
AMOUNT = 4242.17
EMAIL = "jane.plaintext@example.com"
REASON = "reason-plaintext-zebra"
PURPOSE = "purpose-plaintext-okapi"
TENANT = "tenant-visible-3141"  # looked up, so stored in clear: proves the scan reads the data

PLAINTEXTS: dict[str, bytes] = {
    "order id": ORDER.encode(),
    "amount (text)": b"4242.17",
    "amount (float64, msgpack)": struct.pack(">d", AMOUNT),
    "e-mail": EMAIL.encode(),
    "e-mail (local part)": b"jane.plaintext",
    "reason": REASON.encode(),
    "expense purpose": PURPOSE.encode(),
}

KEY_A = generate_key("key-a").entry()
KEY_B = generate_key("key-b").entry()


def script_office() -> None:
    """Refund and expense at once, then a final answer that repeats the sensitive values."""
    mock_llm(OfficeAgent).then_return(
        [
            call_tool(RefundCardTool, {"order_id": ORDER, "amount": AMOUNT, "email": EMAIL}),
            call_tool(BookExpenseTool, {"purpose": PURPOSE, "amount": 17.5}),
        ],
        f"refunded {AMOUNT} for {ORDER} ({EMAIL}); the expense was refused: {REASON}",
    )


async def open_office(url: str, keys: str | None, inbox: Inbox, ledger: Ledger) -> App:
    return await App.create(
        OfficeApplication,
        database_url=url,
        clock=FakeClock(),
        settings=Settings(countersign_encryption_keys=keys),
        services={Inbox: inbox, Ledger: ledger},
    )


async def start_office(app: App) -> ExecutionResult:
    """Run the office workflow until both questions wait."""
    paused = await app.execute(
        OfficeWorkflow,
        WorkflowStartText(text=f"refund {ORDER}: {AMOUNT} to {EMAIL}"),
        tenant_id=TENANT,
        owner_id="U1",
    )
    assert paused.status is ExecutionStatus.PAUSED
    return paused


async def approve_refund(app: App, inbox: Inbox) -> ExecutionResult:
    refund_id = inbox.last("refund-card-tool").pause_id
    return await app.resume(
        refund_id, decision={"approved": True}, tenant_id=TENANT, answered_by="M1"
    )


async def reject_expense(app: App, execution_id: str) -> ExecutionResult:
    [expense] = [p for p in await app.list_pending(tenant_id=TENANT) if p.pause_id]
    assert expense.ask.arguments["purpose"] == PURPOSE  # read back through the codec
    done = await app.resume(
        expense.pause_id or "",
        decision={"approved": False, "reason": REASON},
        tenant_id=TENANT,
        owner_id="U1",
        record=True,
    )
    assert done.execution_id == execution_id
    return done


def check_finished(done: ExecutionResult, ledger: Ledger) -> None:
    assert done.status is ExecutionStatus.COMPLETED
    assert done.output is not None and ORDER in done.output["text"]
    assert done.record is not None
    reasons = [(e.decision or {}).get("reason") for e in done.record.pauses]
    assert REASON in reasons  # the audit entry's decision reads back
    assert ledger.runs == [("refund", {"order_id": ORDER, "amount": AMOUNT, "email": EMAIL})]


# ------------------------------------------------------------------------------ raw contents


def sqlite_files(url: str) -> list[Path]:
    """The database, its checkpoint file, and their WAL / shared-memory files that exist."""
    database = DatabaseUrl.parse(url).sqlite_path
    assert database is not None
    files = []
    for main in (database, checkpoint_path(database)):
        files += [main.with_name(main.name + suffix) for suffix in ("", "-wal", "-shm")]
    return [f for f in files if f.is_file()]


def found_in(blobs: list[bytes]) -> list[str]:
    """The names of the plaintexts any of ``blobs`` contains."""
    return sorted(name for name, needle in PLAINTEXTS.items() if any(needle in b for b in blobs))


def _as_bytes(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode()


async def raw_values(url: str) -> list[bytes]:
    """What an attacker with the database reads: the SQLite files' bytes, or every value of
    every column of every PostgreSQL table."""
    if DatabaseUrl.parse(url).is_sqlite:
        return [f.read_bytes() for f in sqlite_files(url)]
    return [value for _, value in await stored_values(url)]


# ------------------------------------------------------------------------------ key ids

_PAYLOAD = re.compile(rb"v1\.([A-Za-z0-9_-]{1,32})\.[A-Za-z0-9_-]+")
_CHECKPOINT_TYPE = re.compile(rb"^[a-z]+\+v1\.([A-Za-z0-9_-]{1,32})$")
_PLAIN_TYPE = re.compile(rb"^(msgpack|json|bytes|bytearray|null|pickle)$")


async def stored_values(url: str) -> list[tuple[str, bytes]]:
    """(table, value) of every non-null column value of both stores, read with plain SQL."""
    if DatabaseUrl.parse(url).is_sqlite:
        database = DatabaseUrl.parse(url).sqlite_path
        assert database is not None
        return [
            row for path in (database, checkpoint_path(database)) for row in _sqlite_values(path)
        ]
    connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    try:
        names = await connection.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        values: list[tuple[str, bytes]] = []
        for (name,) in names:
            for row in await connection.fetch(f'SELECT * FROM "{name}"'):
                values += [(name, _as_bytes(v)) for v in row.values() if v is not None]
        return values
    finally:
        await connection.close()


def _sqlite_values(path: Path) -> list[tuple[str, bytes]]:
    with closing(sqlite3.connect(path)) as connection:
        names = [
            n for (n,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        return [
            (name, _as_bytes(value))
            for name in names
            for row in connection.execute(f'SELECT * FROM "{name}"')
            for value in row
            if value is not None
        ]


def key_ids(values: list[tuple[str, bytes]]) -> Counter[str]:
    """How many stored values name each key id (payload texts and checkpoint type tags)."""
    counts: Counter[str] = Counter()
    for _, value in values:
        for match in _iter_key_ids(value):
            counts[match] += 1
    return counts


def plain_checkpoint_types(values: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """Checkpoint type tags that name no cipher (a value stored in clear)."""
    return [(t, v) for t, v in values if _PLAIN_TYPE.fullmatch(v)]


def _iter_key_ids(value: bytes) -> Iterator[str]:
    checkpoint = _CHECKPOINT_TYPE.fullmatch(value)
    if checkpoint:
        yield checkpoint.group(1).decode()
        return
    payload = _PAYLOAD.fullmatch(value)
    if payload:
        yield payload.group(1).decode()
