"""The store's contract for several approvals of one question (``record_approvals``), on SQLite,
PostgreSQL and in memory alike: written only over the version read, closed with the approval
that makes the count, and kept in the audit entry however the question closed."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

from bot.core.approvals import ApprovalEntry, Approvals
from bot.core.enums import PauseStatus
from bot.store.closings import Replied, Withdrawn
from bot.store.records import PauseAnswer
from bot.store.repositories import PauseStore
from tests.store.test_contract import NOW, new_pause, store

__all__ = ["store"]  # the fixture, run on every backend


def approval(
    by: str, *, round: int = 0, amount: float = 3.5, edited: bool = False
) -> ApprovalEntry:
    return ApprovalEntry(by=by, at=NOW, round=round, arguments={"amount": amount}, edited=edited)


async def test_approvals_are_written_only_over_the_version_read(store: PauseStore) -> None:
    record = await store.get_or_create(new_pause("a1"))
    assert record.approvals == Approvals()
    first = record.approvals.approved(approval("ann"))
    written = await store.record_approvals(record.pause_id, first, tenant_id="acme", at=NOW)
    assert written is not None and written.status is PauseStatus.PENDING
    assert written.approvals.version == 1
    assert [e.by for e in written.approvals.entries] == ["ann"]
    # another approver who read version 0 lost: nothing written, read again
    stale = record.approvals.approved(approval("bob"))
    assert await store.record_approvals(record.pause_id, stale, tenant_id="acme", at=NOW) is None
    again = await store.find("acme", record.pause_id)
    assert again is not None and [e.by for e in again.approvals.entries] == ["ann"]
    # of another tenant: nothing
    second = again.approvals.approved(approval("bob"))
    assert await store.record_approvals(record.pause_id, second, tenant_id="x", at=NOW) is None


async def test_of_approvers_racing_over_one_version_exactly_one_writes(store: PauseStore) -> None:
    record = await store.get_or_create(new_pause("a2"))
    results = await asyncio.gather(
        *(
            store.record_approvals(
                record.pause_id,
                record.approvals.approved(approval(f"U{i}")),
                tenant_id="acme",
                at=NOW,
            )
            for i in range(8)
        )
    )
    assert len([r for r in results if r is not None]) == 1
    found = await store.find("acme", record.pause_id)
    assert found is not None and len(found.approvals.entries) == 1


async def test_the_approval_that_makes_the_count_closes_with_its_audit_entry(
    store: PauseStore,
) -> None:
    record = await store.get_or_create(new_pause("a3"))
    edited = record.approvals.approved(approval("ann")).edited(
        approval("bob", round=1, amount=2.0, edited=True), {"amount": 2.0}
    )
    once = await store.record_approvals(record.pause_id, edited, tenant_id="acme", at=NOW)
    assert once is not None and once.approvals.proposal == {"amount": 2.0}
    assert [e.by for e in once.approvals.counted] == ["bob"]
    both = once.approvals.approved(approval("ann", round=1, amount=2.0))
    answer = PauseAnswer(
        decision={"approved": True, "override_arguments": {"amount": 2.0}}, responder="ann"
    )
    closed = await store.record_approvals(
        record.pause_id,
        both,
        tenant_id="acme",
        at=NOW,
        closing=Replied(answer=answer, audit_decision={"approved": True}),
    )
    assert closed is not None and closed.status is PauseStatus.RESOLVED
    assert closed.answer == answer and closed.resolved_at == NOW
    [entry] = await store.find_pause_answers("acme", "root-1")
    assert [(a.by, a.round, a.arguments, a.edited) for a in entry.approvals] == [
        ("ann", 0, {"amount": 3.5}, False),
        ("bob", 1, {"amount": 2.0}, True),
        ("ann", 1, {"amount": 2.0}, False),
    ]
    # a closed question takes no approval
    late = closed.approvals.approved(approval("cid", round=1))
    assert await store.record_approvals(record.pause_id, late, tenant_id="acme", at=NOW) is None


async def test_a_question_closed_otherwise_keeps_its_approvals_in_the_audit(
    store: PauseStore,
) -> None:
    record = await store.get_or_create(new_pause("a4"))
    await store.record_approvals(
        record.pause_id, record.approvals.approved(approval("ann")), tenant_id="acme", at=NOW
    )
    assert await store.close(record.pause_id, Withdrawn(), at=NOW) is not None
    [entry] = await store.find_pause_answers("acme", "root-1")
    assert [a.by for a in entry.approvals] == ["ann"]


async def test_no_approval_after_the_deadline(store: PauseStore) -> None:
    record = await store.get_or_create(replace(new_pause("a5"), closes_at=NOW))
    counted = record.approvals.approved(approval("ann"))
    at = NOW + timedelta(seconds=1)
    assert await store.record_approvals(record.pause_id, counted, tenant_id="acme", at=at) is None
