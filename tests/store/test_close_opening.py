"""An answer's write with its tree's opening (``PauseStore.close_opening``) given the pause as
read before (``known``) does what it does without: on PostgreSQL the first is one statement
whose audit entry was computed from ``known`` (``bot.store.one_statement.close_opening``), the
second the transaction computing it from the row it closed. Each case runs both ways on two
fresh stores and compares everything: what the call returns, every column of the audit
entries, the executions, the lease. SQLite file, PostgreSQL and the in-memory store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import BigInteger, Connection, literal_column, select

from bot.core.approvals import ApprovalEntry
from bot.core.delegations import Handover
from bot.core.enums import ExecutionStatus, PauseAnswerer, PauseStatus
from bot.store.closings import Replied
from bot.store.database import Database
from bot.store.leases import LeaseClaim, SqlLeases
from bot.store.memory import MemoryStore
from bot.store.recent_pauses import ChangedSinceRead
from bot.store.records import ClosedOpening, ExecutionRow, NewExecution, PauseAnswer, PauseRecord
from bot.store.repositories import Leases, PauseStore
from bot.store.sql import SqlStore
from bot.store.tables import pause_answers, pauses
from bot.store.transactions import Transactions
from tests.databases import STORE_BACKENDS, database
from tests.store.test_contract import new_pause

R = TypeVar("R")

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(seconds=5)
TTL = timedelta(seconds=60)
ROOT = "root-1"


class Calls:
    """The store's calls of its transactions, by kind (``write``, ``apply``, ``read``)."""

    def __init__(self, inner: Transactions) -> None:
        self.inner = inner
        self.made: list[str] = []

    async def write(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        self.made.append("write")
        return await self.inner.write(body, short=short)

    async def apply(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        self.made.append("apply")
        return await self.inner.apply(body, short=short)

    async def read(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        return await self.inner.read(body, short=short)

    async def close(self) -> None:
        await self.inner.close()


@dataclass
class Store:
    """A fresh store, its leases, and (on a database) its calls and its audit table read raw."""

    store: PauseStore
    leases: Leases
    calls: Calls | None = None
    takeovers: list[str] = field(default_factory=list)

    def claim(self, owner: str, at: datetime = LATER) -> LeaseClaim:
        return LeaseClaim(ROOT, owner, at, TTL, on_takeover=lambda: self.takeovers.append(owner))

    async def entries(self) -> list[Any]:
        """Every column of every audit entry (in memory: the entries as the store gives them)."""
        if self.calls is None:
            return await self.store.find_pause_answers("acme", ROOT)
        statement = select(pause_answers).order_by(pause_answers.c.id)
        return await self.calls.inner.read(
            lambda c: [dict(row._mapping) for row in c.execute(statement).all()]
        )


@asynccontextmanager
async def fresh(kind: str, where: Path) -> AsyncIterator[Store]:
    if kind == "memory":
        memory = MemoryStore()
        yield Store(memory, memory.leases)
        return
    await asyncio.to_thread(where.mkdir)
    async with database(kind, where) as url, Database.open(url) as opened:
        await opened.migrate(NOW)
        calls = Calls(opened.transactions)
        opened.transactions = calls
        yield Store(SqlStore(opened), SqlLeases(opened), calls)


Setup = Callable[[Store], Awaitable[tuple[PauseRecord, Replied]]]
"""A case: the store brought to where an answer comes, the pause as its reader read it, and the
answer."""


@dataclass(frozen=True)
class Seen:
    """Everything a way of writing left, to compare."""

    closed: ClosedOpening
    entries: list[Any]
    executions: list[ExecutionRow]
    takeovers: list[str]
    lease_free: bool
    calls: list[str] | None


async def written(kind: str, where: Path, setup: Setup, *, at_once: bool) -> Seen:
    async with fresh(kind, where) as s:
        known, closing = await setup(s)
        if s.calls is not None:
            s.calls.made.clear()
        closed = await s.store.close_opening(
            known.pause_id,
            closing,
            at=LATER,
            tenant_id="acme",
            lease=s.claim("b"),
            known=known if at_once else None,
        )
        calls = None if s.calls is None else list(s.calls.made)
        return Seen(
            closed=closed,
            entries=await s.entries(),
            executions=await s.store.list_executions_by_root(ROOT),
            takeovers=s.takeovers,
            lease_free=await s.leases.try_take(s.claim("c")),
            calls=calls,
        )


async def both_ways(kind: str, tmp_path: Path, setup: Setup) -> Seen:
    """The case written with ``known`` and without: the same in every respect; returns the
    first (with the calls it made)."""
    at_once = await written(kind, tmp_path / "at-once", setup, at_once=True)
    long_way = await written(kind, tmp_path / "long-way", setup, at_once=False)
    assert at_once.closed == long_way.closed
    assert at_once.entries == long_way.entries
    assert at_once.executions == long_way.executions
    assert at_once.takeovers == long_way.takeovers
    assert at_once.lease_free == long_way.lease_free
    return at_once


def one_statement(kind: str, seen: Seen) -> None:
    """On PostgreSQL the write was one statement (a call in autocommit), nothing else."""
    if kind == "postgres":
        assert seen.calls == ["apply"]


def root() -> NewExecution:
    return NewExecution(
        execution_id=ROOT,
        root_execution_id=ROOT,
        parent_execution_id=None,
        thread_id="thread-1",
        tenant_id="acme",
        owner_id="U1",
        workflow="w",
        input={"text": "hi"},
        created_at=NOW,
    )


async def resting(s: Store, **asked: Any) -> PauseRecord:
    """A tree resting on two pauses (their interrupts known), its lease given up; the first
    pause, as a reader reads it."""
    await s.store.start_tree(root(), s.claim("a", at=NOW))
    first = await s.store.get_or_create(new_pause("k1", **asked))
    await s.store.get_or_create(new_pause("k2", at=NOW + timedelta(seconds=1)))
    await s.store.rest(ROOT, {"k1": "i-1", "k2": "i-2"}, NOW, release=s.claim("a", at=NOW))
    found = await s.store.find("acme", first.pause_id)
    assert found is not None
    return found


APPROVED = Replied(
    answer=PauseAnswer(decision={"approved": True}, responder="m"),
    audit_decision={"approved": True},
)
REPLIED = Replied(
    answer=PauseAnswer(
        decision={"approved": False, "reason": "too much"}, responder="U1", reply="no: too much"
    ),
    audit_decision={"approved": False, "reason": "***"},
)
REJECTED = Replied(
    answer=PauseAnswer(decision={"approved": False, "reason": "no"}, responder="cid"),
    audit_decision={"approved": False, "reason": "no"},
)


def approval(by: str) -> ApprovalEntry:
    return ApprovalEntry(by=by, at=NOW, round=0, arguments={"amount": 3.5})


async def approved_and_handed_on(s: Store, record: PauseRecord) -> PauseRecord:
    """``record`` (of a role that needs two approvals) approved once, then handed on."""
    once = record.approvals.approved(approval("ann"))
    assert await s.store.record_approvals(record.pause_id, once, tenant_id="acme", at=NOW)
    handover = Handover(by="ann", to="cid", at=NOW.isoformat())
    handed = await s.store.record_handover(
        record.pause_id, handover, tenant_id="acme", version=1, at=NOW
    )
    assert handed is not None and handed.approvals.version == 2
    return handed


# ---------------------------------------------------------------- the audit entry


async def plain_approval(s: Store) -> tuple[PauseRecord, Replied]:
    return await resting(s), APPROVED


async def reply_to_the_thread_owner(s: Store) -> tuple[PauseRecord, Replied]:
    return await resting(s, answered_by=PauseAnswerer.THREAD_OWNER), REPLIED


async def four_eyes(s: Store) -> tuple[PauseRecord, Replied]:
    return await approved_and_handed_on(s, await resting(s)), REJECTED


@pytest.mark.parametrize("setup", [plain_approval, reply_to_the_thread_owner, four_eyes])
@pytest.mark.parametrize("kind", STORE_BACKENDS)
async def test_the_audit_entry_written_at_once_is_the_one_the_transaction_writes(
    kind: str, tmp_path: Path, setup: Setup
) -> None:
    seen = await both_ways(kind, tmp_path, setup)
    one_statement(kind, seen)
    [entry] = seen.entries
    if setup is four_eyes and kind != "memory":
        assert entry["approvals"] is not None and entry["handovers"] is not None
    if setup is reply_to_the_thread_owner and kind != "memory":
        assert entry["pause_id"] is not None  # a thread owner's pause is shown


# ---------------------------------------------------------------- the guard


async def approved_after_the_read(s: Store) -> tuple[PauseRecord, Replied]:
    known = await resting(s)
    once = known.approvals.approved(approval("ann"))  # a second approver, meanwhile
    assert await s.store.record_approvals(known.pause_id, once, tenant_id="acme", at=NOW)
    return known, REJECTED


async def handed_on_after_the_read(s: Store) -> tuple[PauseRecord, Replied]:
    known = await resting(s)
    handover = Handover(by="ann", to="cid", at=NOW.isoformat())  # reassigned, meanwhile
    assert await s.store.record_handover(
        known.pause_id, handover, tenant_id="acme", version=0, at=NOW
    )
    return known, REJECTED


async def answered_after_the_read(s: Store) -> tuple[PauseRecord, Replied]:
    known = await resting(s)
    assert await s.store.close(known.pause_id, APPROVED, at=NOW, tenant_id="acme")
    return known, REJECTED


@pytest.mark.parametrize("setup", [approved_after_the_read, handed_on_after_the_read])
@pytest.mark.parametrize("kind", STORE_BACKENDS)
async def test_a_pause_changed_since_it_was_read_is_closed_the_long_way(
    kind: str, tmp_path: Path, setup: Setup
) -> None:
    seen = await both_ways(kind, tmp_path, setup)  # the entry from the row: what changed in it
    [entry] = seen.entries  # written once
    if kind != "memory":
        changed = entry["approvals"] if setup is approved_after_the_read else entry["handovers"]
        assert changed is not None
    if kind == "postgres":
        assert seen.calls == ["apply", "write"]  # the statement wrote nothing: the transaction
    assert seen.closed.record is not None and seen.closed.tree is not None


@pytest.mark.parametrize("kind", STORE_BACKENDS)
async def test_a_pause_answered_since_it_was_read_is_not_answered_again(
    kind: str, tmp_path: Path
) -> None:
    seen = await both_ways(kind, tmp_path, answered_after_the_read)
    assert seen.closed == ClosedOpening(record=None, tree=None)
    assert len(seen.entries) == 1  # the first answer's
    assert seen.lease_free  # not taken
    one_statement(kind, seen)


async def past_its_deadline(s: Store) -> tuple[PauseRecord, Replied]:
    """A pause that waits under a deadline (a quorum's), which passed before the answer."""
    await s.store.start_tree(root(), s.claim("a", at=NOW))
    pause = await s.store.get_or_create(replace(new_pause("k1"), closes_at=LATER))
    await s.store.rest(ROOT, {"k1": "i-1"}, NOW, release=s.claim("a", at=NOW))
    return pause, APPROVED


@pytest.mark.parametrize("kind", STORE_BACKENDS)
async def test_an_answer_after_the_deadline_closes_nothing(kind: str, tmp_path: Path) -> None:
    seen = await both_ways(kind, tmp_path, past_its_deadline)
    assert seen.closed == ClosedOpening(record=None, tree=None)
    assert seen.entries == [] and seen.lease_free
    if kind == "postgres":
        assert seen.calls == ["apply", "write"]  # still PENDING: the long way says so


# ---------------------------------------------------------------- every way the tree opens


async def lease_held_elsewhere(s: Store) -> tuple[PauseRecord, Replied]:
    known = await resting(s)
    assert await s.leases.try_take(s.claim("holder"))
    return known, APPROVED


async def lease_expired(s: Store) -> tuple[PauseRecord, Replied]:
    known = await resting(s)
    assert await s.leases.try_take(s.claim("dead", at=LATER - TTL - timedelta(seconds=1)))
    return known, APPROVED


async def lease_already_ours(s: Store) -> tuple[PauseRecord, Replied]:
    known = await resting(s)
    assert await s.leases.try_take(s.claim("b", at=NOW))
    return known, APPROVED


async def tree_ended(s: Store) -> tuple[PauseRecord, Replied]:
    known = await resting(s)
    await s.store.set_status(ROOT, ExecutionStatus.COMPLETED, NOW)  # its pauses left waiting
    return known, APPROVED


async def tree_ended_under_an_expired_lease(s: Store) -> tuple[PauseRecord, Replied]:
    known, answer = await lease_expired(s)
    await s.store.set_status(ROOT, ExecutionStatus.CANCELLED, NOW)
    return known, answer


async def tree_unknown(s: Store) -> tuple[PauseRecord, Replied]:
    return await s.store.get_or_create(new_pause("k1")), APPROVED  # no execution recorded


async def tree_running_already(s: Store) -> tuple[PauseRecord, Replied]:
    known = await resting(s)
    await s.store.set_status(ROOT, ExecutionStatus.RUNNING, NOW)  # a pass cut off midway
    return known, APPROVED


async def nothing_to_continue(s: Store) -> tuple[PauseRecord, Replied]:
    """The answered pause's interrupt is not known yet: no pass continues the tree."""
    await s.store.start_tree(root(), s.claim("a", at=NOW))
    pause = await s.store.get_or_create(new_pause("k1"))
    await s.store.rest(ROOT, {}, NOW, release=s.claim("a", at=NOW))
    return pause, APPROVED


OPENINGS = [
    plain_approval,
    lease_held_elsewhere,
    lease_expired,
    lease_already_ours,
    tree_ended,
    tree_ended_under_an_expired_lease,
    tree_unknown,
    tree_running_already,
    nothing_to_continue,
]


@pytest.mark.parametrize("setup", OPENINGS)
@pytest.mark.parametrize("kind", STORE_BACKENDS)
async def test_every_way_the_tree_opens_is_the_same_at_once(
    kind: str, tmp_path: Path, setup: Setup
) -> None:
    seen = await both_ways(kind, tmp_path, setup)
    assert seen.closed.record is not None
    assert len(seen.entries) == 1
    tree = seen.closed.tree
    if setup in (tree_ended, tree_ended_under_an_expired_lease, tree_unknown):
        assert tree is not None and tree.released and seen.lease_free
        if kind == "postgres":  # the long way opens it (nothing written twice: one entry)
            assert seen.calls == ["apply", "write"]
        return
    one_statement(kind, seen)
    if setup is lease_held_elsewhere:
        assert tree is None and not seen.lease_free
        return
    assert tree is not None and not tree.released and not seen.lease_free
    assert seen.takeovers == (["b"] if setup is lease_expired else [])


@pytest.mark.parametrize("kind", STORE_BACKENDS)
async def test_of_two_answers_at_once_one_is_recorded_once(kind: str, tmp_path: Path) -> None:
    async with fresh(kind, tmp_path / "store") as s:
        known = await resting(s)
        both = await asyncio.gather(
            *(
                s.store.close_opening(
                    known.pause_id,
                    answer,
                    at=LATER,
                    tenant_id="acme",
                    lease=s.claim(owner),
                    known=known,
                )
                for owner, answer in (("b", APPROVED), ("c", REJECTED))
            )
        )
        assert len([c for c in both if c.record is not None]) == 1
        assert len(await s.entries()) == 1


# ---------------------------------------------------------------- a pause remembered, not read


async def remembered(s: Store) -> PauseRecord:
    """``resting``'s first pause as the rest left it in the store's memory (PostgreSQL)."""
    await resting(s)
    first = await s.store.find_by_key("k1")
    assert first is not None
    kept = s.store.remembered("acme", first.pause_id)
    assert kept is not None and kept.row_version is not None
    return kept


async def remembered_as_rested(s: Store) -> tuple[PauseRecord, Replied]:
    return await remembered(s), APPROVED


async def row_version(s: Store, pause_id: str) -> int:
    assert s.calls is not None
    version = literal_column("xmin::text::bigint", BigInteger)
    statement = select(version).where(pauses.c.pause_id == pause_id)
    return int(await s.calls.inner.read(lambda c: c.execute(statement).scalar_one()))


@pytest.mark.parametrize("kind", STORE_BACKENDS)
async def test_a_rest_leaves_its_waiting_pauses_remembered_once_on_postgresql(
    kind: str, tmp_path: Path
) -> None:
    async with fresh(kind, tmp_path / "store") as s:
        found = await resting(s)
        if kind != "postgres":  # nothing kept: every answer reads
            assert s.store.remembered("acme", found.pause_id) is None
            return
        assert s.store.remembered("other", found.pause_id) is None  # another tenant's: none
        kept = s.store.remembered("acme", found.pause_id)
        assert kept == found  # the row as a read gives it
        assert kept is not None and kept.row_version == await row_version(s, found.pause_id)
        assert s.store.remembered("acme", found.pause_id) is None  # taken: a second one reads


@pytest.mark.parametrize("kind", ["postgres"])
async def test_an_answer_to_a_remembered_pause_writes_what_the_transaction_writes(
    kind: str, tmp_path: Path
) -> None:
    seen = await both_ways(kind, tmp_path, remembered_as_rested)
    assert seen.closed.record is not None and seen.closed.tree is not None
    assert len(seen.entries) == 1
    one_statement(kind, seen)


async def marked_sent(s: Store, known: PauseRecord) -> None:
    assert await s.store.mark_sent(known.pause_id) is PauseStatus.PENDING


async def reply_kept(s: Store, known: PauseRecord) -> None:
    assert await s.store.receive_reply("acme", known.pause_id, "yes", "U1", NOW)


async def handed_on(s: Store, known: PauseRecord) -> None:
    handover = Handover(by="ann", to="cid", at=NOW.isoformat())
    assert await s.store.record_handover(
        known.pause_id, handover, tenant_id="acme", version=0, at=NOW
    )


async def approved_once(s: Store, known: PauseRecord) -> None:
    once = known.approvals.approved(approval("ann"))
    assert await s.store.record_approvals(known.pause_id, once, tenant_id="acme", at=NOW)


@pytest.mark.parametrize("change", [marked_sent, reply_kept, handed_on, approved_once])
@pytest.mark.parametrize("kind", ["postgres"])
async def test_a_remembered_pause_whose_row_changed_is_not_written(
    kind: str, tmp_path: Path, change: Callable[[Store, PauseRecord], Awaitable[None]]
) -> None:
    """Whatever changed in the row — its question marked sent or a reply kept too, which the
    approvals' version does not see — the answer checked against the remembered record writes
    nothing: its caller checks it again against the row read."""
    async with fresh(kind, tmp_path / "store") as s:
        known = await remembered(s)
        await change(s, known)
        assert s.calls is not None
        s.calls.made.clear()
        with pytest.raises(ChangedSinceRead):
            await s.store.close_opening(
                known.pause_id,
                APPROVED,
                at=LATER,
                tenant_id="acme",
                lease=s.claim("b"),
                known=known,
            )
        assert s.calls.made == ["apply"]  # the one statement, which wrote nothing
        assert await s.entries() == []
        now = await s.store.find("acme", known.pause_id)
        assert now is not None and now.status is PauseStatus.PENDING
        assert await s.leases.try_take(s.claim("c"))  # the tree not opened


@pytest.mark.parametrize("kind", ["postgres"])
async def test_a_remembered_pause_answered_elsewhere_is_not_answered_again(
    kind: str, tmp_path: Path
) -> None:
    async with fresh(kind, tmp_path / "store") as s:
        known = await remembered(s)
        assert await s.store.close(known.pause_id, REJECTED, at=NOW, tenant_id="acme")
        closed = await s.store.close_opening(
            known.pause_id, APPROVED, at=LATER, tenant_id="acme", lease=s.claim("b"), known=known
        )
        assert closed == ClosedOpening(record=None, tree=None)
        assert len(await s.entries()) == 1  # the first answer's
