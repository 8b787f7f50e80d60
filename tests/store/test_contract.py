"""The store's contract, run on SQLite, PostgreSQL and in memory alike."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.dtos import ToolCallApprovalAsk
from bot.core.enums import ExecutionStatus, PauseAnswerer, PauseResolution, PauseStatus
from bot.core.failures import ExecutionFailure
from bot.core.metrics import PendingByRole
from bot.store.closings import Cancelled, Closing, DecidedAtOnce, Replied, Withdrawn
from bot.store.database import Database
from bot.store.memory import MemoryStore
from bot.store.migrations import MIGRATIONS
from bot.store.records import NewExecution, NewPause, PauseAnswer
from bot.store.repositories import PauseStore
from bot.store.sql import SqlStore
from tests.databases import STORE_BACKENDS, database

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=STORE_BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[PauseStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    async with (
        database(request.param, tmp_path) as url,
        Database.open(url) as opened,
    ):  # as the App runs it
        assert await opened.migrate(NOW) == len(MIGRATIONS)
        assert await opened.migrate(NOW) == len(MIGRATIONS)  # idempotent
        yield SqlStore(opened)


def new_pause(
    key: str,
    *,
    tenant: str = "acme",
    root: str = "root-1",
    at: datetime = NOW,
    answered_by: PauseAnswerer = PauseAnswerer.CHANNEL,
    role: str = "refund-approval-channel",
    owner: str = "U1",
) -> NewPause:
    return NewPause(
        pause_id=f"{abs(hash(key)):032x}"[:32],
        tenant_id=tenant,
        idempotency_key=key,
        root_execution_id=root,
        execution_id=root,
        thread_id="thread-1",
        owner_id=owner,
        answered_by=answered_by,
        role=role,
        channel="slack-refund-approval-channel",
        agent="office-agent",
        ask=ToolCallApprovalAsk(tool="refund-card-tool", arguments={"amount": 3.5}, call_id="c1"),
        node_id="agent:1|tool:2",
        item_index=None,
        child_execution_id=None,
        tool_loop_iteration=1,
        asked_at=at,
    )


async def test_get_or_create_keeps_the_first_pause_id(store: PauseStore) -> None:
    first = await store.get_or_create(new_pause("k1"))
    again = await store.get_or_create(replace(new_pause("k1"), pause_id="f" * 32))
    assert again.pause_id == first.pause_id
    assert first.status is PauseStatus.PENDING and not first.is_sent
    assert first.asked_at == NOW


async def test_concurrent_creates_of_one_key_give_one_record(store: PauseStore) -> None:
    made = await asyncio.gather(
        *(store.get_or_create(replace(new_pause("race"), pause_id=f"{i:032x}")) for i in range(10))
    )
    assert len({m.pause_id for m in made}) == 1


async def test_resolve_is_atomic_and_writes_the_audit_once(store: PauseStore) -> None:
    record = await store.get_or_create(new_pause("k2"))
    answer = PauseAnswer(decision={"approved": True}, responder="m1")
    results = await asyncio.gather(
        *(
            store.close(
                record.pause_id,
                Replied(answer=answer, audit_decision={"approved": True}),
                at=NOW,
                tenant_id="acme",
            )
            for _ in range(10)
        )
    )
    [resolved] = [r for r in results if r is not None]
    assert resolved.status is PauseStatus.RESOLVED and resolved.answer == answer
    assert (
        await store.close(record.pause_id, Replied(answer=answer), at=NOW, tenant_id="other")
        is None
    )
    audit = await store.find_pause_answers("acme", "root-1")
    assert len(audit) == 1
    assert audit[0].pause_id is None  # a CHANNEL pause's id is not in the audit trail
    assert audit[0].responder == "m1"
    assert audit[0].decision == {"approved": True}
    assert await store.take(record)
    assert not await store.take(record)


async def test_cancel_returns_the_closed_record_once(store: PauseStore) -> None:
    record = await store.get_or_create(new_pause("k3"))
    assert await store.mark_sent(record.pause_id) is PauseStatus.PENDING
    closed = await asyncio.gather(
        *(store.close(record.pause_id, Withdrawn(), at=NOW, tenant_id="acme") for _ in range(5))
    )
    winners = [c for c in closed if c is not None]
    assert len(winners) == 1 and winners[0].is_sent
    assert winners[0].resolution is PauseResolution.WITHDRAWN
    assert await store.mark_sent(record.pause_id) is None


async def test_each_closing_makes_its_status_resolution_and_audit_entry(store: PauseStore) -> None:
    answer = PauseAnswer(decision={"approved": True}, responder=None)
    closings: list[tuple[str, Closing, PauseStatus, PauseResolution]] = [
        ("answered", Replied(answer=answer), PauseStatus.RESOLVED, PauseResolution.REPLIED),
        (
            "decided",
            DecidedAtOnce(answer=answer, audit_decision={"approved": True}, ran_with={"a": 1}),
            PauseStatus.TAKEN,
            PauseResolution.DECIDED,
        ),
        ("withdrawn", Withdrawn(), PauseStatus.CANCELLED, PauseResolution.WITHDRAWN),
        ("cancelled", Cancelled(), PauseStatus.CANCELLED, PauseResolution.CANCELLED),
    ]
    for i, (key, closing, status, resolution) in enumerate(closings):
        record = await store.get_or_create(new_pause(key, at=NOW + timedelta(seconds=i)))
        closed = await store.close(record.pause_id, closing, at=NOW + timedelta(minutes=1))
        assert closed is not None
        assert (closed.status, closed.resolution) == (status, resolution)
        assert closed.resolved_at == NOW + timedelta(minutes=1)
        assert closed.answer == (answer if key in ("answered", "decided") else None)
        assert await store.close(record.pause_id, Cancelled(), at=NOW) is None  # closed once
    audit = await store.find_pause_answers("acme", "root-1")
    assert [a.resolution for a in audit] == [c[3] for c in closings]
    assert audit[1].decision == {"approved": True} and audit[1].ran_with == {"a": 1}
    assert [a.ran_with for a in (audit[0], audit[2], audit[3])] == [None, None, None]


async def test_an_answer_after_the_deadline_closes_nothing(store: PauseStore) -> None:
    record = await store.get_or_create(replace(new_pause("quorum"), closes_at=NOW))
    answer = PauseAnswer(decision={"approved": True}, responder="m")
    assert await store.close(record.pause_id, Replied(answer=answer), at=NOW) is None
    still = await store.find("acme", record.pause_id)
    assert still is not None and still.status is PauseStatus.PENDING
    early = await store.get_or_create(
        replace(new_pause("early"), closes_at=NOW + timedelta(seconds=1))
    )
    assert await store.close(early.pause_id, Replied(answer=answer), at=NOW) is not None
    # a withdrawal is not an answer: the deadline does not hold it back
    withdrawn = await store.close(record.pause_id, Withdrawn(), at=NOW + timedelta(hours=1))
    assert withdrawn is not None and withdrawn.resolution is PauseResolution.WITHDRAWN


async def test_a_closing_of_another_tenant_closes_nothing(store: PauseStore) -> None:
    record = await store.get_or_create(new_pause("k4"))
    assert await store.close(record.pause_id, Withdrawn(), at=NOW, tenant_id="other") is None
    assert await store.close(record.pause_id, Withdrawn(), at=NOW, tenant_id="acme") is not None


async def test_list_pending_newest_first_and_filtered(store: PauseStore) -> None:
    for i in range(5):
        await store.get_or_create(new_pause(f"p{i}", at=NOW + timedelta(minutes=i)))
    await store.get_or_create(
        new_pause(
            "owned",
            answered_by=PauseAnswerer.THREAD_OWNER,
            owner="U7",
            role="expense-approval-channel",
            at=NOW + timedelta(hours=1),
        )
    )
    await store.get_or_create(new_pause("foreign", tenant="other"))
    rows = await store.list_pending(
        "acme", answered_by=PauseAnswerer.CHANNEL, roles=["refund-approval-channel"]
    )
    assert [r.idempotency_key for r in rows] == ["p4", "p3", "p2", "p1", "p0"]
    page = await store.list_pending("acme", limit=2, offset=1)
    assert [r.idempotency_key for r in page] == ["p4", "p3"]
    owned = await store.list_pending("acme", answered_by=PauseAnswerer.THREAD_OWNER, owner_id="U7")
    assert [r.idempotency_key for r in owned] == ["owned"]


async def test_list_answered_is_what_one_person_answered_latest_first(store: PauseStore) -> None:
    """A channel's "decided" list: the pauses the person answered, in this tenant only."""
    for key, who, minutes in (("a", "m1", 1), ("b", "m2", 2), ("c", "m1", 3), ("d", "m1", 0)):
        record = await store.get_or_create(new_pause(key))
        answer = PauseAnswer(decision={"approved": True}, responder=who)
        closing = Replied(answer=answer, audit_decision={"approved": True})
        await store.close(record.pause_id, closing, at=NOW + timedelta(minutes=minutes))
    await store.get_or_create(new_pause("waiting"))
    other = await store.get_or_create(new_pause("foreign", tenant="other"))
    answer = PauseAnswer(decision={"approved": True}, responder="m1")
    await store.close(other.pause_id, Replied(answer=answer, audit_decision={}), at=NOW)

    answered = await store.list_answered("acme", "m1")
    assert [r.idempotency_key for r in answered] == ["c", "a", "d"]
    assert [r.idempotency_key for r in await store.list_answered("acme", "m1", limit=1)] == ["c"]
    assert await store.list_answered("acme", "nobody") == []


async def test_pending_by_role_counts_every_tenant_and_the_oldest_ask(store: PauseStore) -> None:
    assert await store.pending_by_role() == []
    for i in range(3):
        await store.get_or_create(new_pause(f"p{i}", at=NOW + timedelta(minutes=i)))
    await store.get_or_create(new_pause("foreign", tenant="other", at=NOW - timedelta(hours=1)))
    await store.get_or_create(
        new_pause("expense", role="expense-approval-channel", at=NOW + timedelta(hours=1))
    )
    closed = await store.get_or_create(new_pause("closed", at=NOW - timedelta(days=1)))
    await store.close(closed.pause_id, Withdrawn(), at=NOW, tenant_id="acme")
    for sent in ("p0", "p1", "expense"):  # given to their channel; the others not yet
        await store.mark_sent(new_pause(sent).pause_id)

    assert await store.pending_by_role() == [
        PendingByRole(
            role="expense-approval-channel",
            count=1,
            oldest_asked_at=NOW + timedelta(hours=1),
            undelivered=0,
        ),
        PendingByRole(
            role="refund-approval-channel",
            count=4,
            oldest_asked_at=NOW - timedelta(hours=1),
            undelivered=2,
        ),
    ]


async def test_delete_resolved_before_keeps_pending_and_resolved(store: PauseStore) -> None:
    pending = await store.get_or_create(new_pause("a"))
    resolved = await store.get_or_create(new_pause("b"))
    taken = await store.get_or_create(new_pause("c"))
    cancelled = await store.get_or_create(new_pause("d"))
    answer = PauseAnswer(decision={"approved": True}, responder="m")
    await store.close(resolved.pause_id, Replied(answer=answer), at=NOW, tenant_id="acme")
    await store.close(taken.pause_id, Replied(answer=answer), at=NOW, tenant_id="acme")
    await store.take(taken)
    await store.close(cancelled.pause_id, Cancelled(), at=NOW, tenant_id="acme")
    assert await store.delete_resolved_before(NOW + timedelta(days=1), batch_size=1) == 2
    assert await store.find("acme", pending.pause_id) is not None
    assert await store.find("acme", resolved.pause_id) is not None
    assert await store.find("acme", taken.pause_id) is None
    assert len(await store.find_pause_answers("acme", "root-1")) == 3  # the audit trail stays


async def test_execution_records(store: PauseStore) -> None:
    await store.ensure_execution(
        NewExecution(
            execution_id="e1",
            root_execution_id="e1",
            parent_execution_id=None,
            thread_id="t1",
            tenant_id="acme",
            owner_id="U1",
            workflow="w",
            input={"text": "hi"},
            created_at=NOW,
        )
    )
    await store.set_status("e1", ExecutionStatus.COMPLETED, NOW, output={"text": "bye"})
    row = await store.get("e1")
    assert row is not None and row.status is ExecutionStatus.COMPLETED
    assert row.output == {"text": "bye"} and row.input == {"text": "hi"}
    assert [r.execution_id for r in await store.list_executions_by_thread("acme", "t1")] == ["e1"]
    assert await store.list_executions_by_thread("other", "t1") == []


def new_root(execution_id: str, *, at: datetime = NOW, parent: str | None = None) -> NewExecution:
    return NewExecution(
        execution_id=execution_id,
        root_execution_id=parent or execution_id,
        parent_execution_id=parent,
        thread_id="t1",
        tenant_id="acme",
        owner_id="U1",
        workflow="w",
        input={"text": "hi"},
        created_at=at,
    )


async def test_an_execution_keeps_why_it_failed(store: PauseStore) -> None:
    """The failure's code and message, recorded with a tree's end or a child's status, read
    back as they were; a run that did not fail has none."""
    root_failure = ExecutionFailure(code="pause.expired", message="nobody approved in time")
    child_failure = ExecutionFailure(code="step.failed", message="ValueError: card 4111 ✗")
    for new in (new_root("e1"), new_root("c1", parent="e1"), new_root("c2", parent="e1")):
        await store.ensure_execution(new)
    await store.set_status("c1", ExecutionStatus.FAILED, NOW, error=child_failure)
    await store.set_status("c2", ExecutionStatus.COMPLETED, NOW, output={"text": "ok"})
    await store.end_tree("e1", ExecutionStatus.FAILED, NOW, error=root_failure)

    rows = {r.execution_id: r for r in await store.list_executions_by_root("e1")}
    assert {key: row.error for key, row in rows.items()} == {
        "e1": root_failure,
        "c1": child_failure,
        "c2": None,
    }
    root = await store.get("e1")
    assert root is not None and root.status is ExecutionStatus.FAILED
    assert root.error == root_failure


async def test_a_reply_is_kept_unread_until_read_or_closed(store: PauseStore) -> None:
    record = await store.get_or_create(new_pause("r1"))
    assert not await store.receive_reply("other", record.pause_id, "yes", "U2", NOW)
    assert await store.receive_reply("acme", record.pause_id, "yes", "U2", NOW)
    [kept] = await store.unread_replies(NOW + timedelta(seconds=1))
    assert (kept.unread_reply, kept.unread_by) == ("yes", "U2")
    assert await store.unread_replies(NOW) == []  # kept at NOW: not before it
    await store.forget_reply(record.pause_id)
    assert await store.unread_replies(NOW + timedelta(seconds=1)) == []
    assert await store.receive_reply("acme", record.pause_id, "no", "U3", NOW)
    await store.close(record.pause_id, Withdrawn(), at=NOW)
    closed = await store.find("acme", record.pause_id)
    assert closed is not None and closed.unread_reply is None  # moot once closed
    assert not await store.receive_reply("acme", record.pause_id, "late", "U2", NOW)


async def test_taking_with_what_the_tool_ran_with_and_its_result(store: PauseStore) -> None:
    record = await store.get_or_create(
        new_pause("owned", answered_by=PauseAnswerer.THREAD_OWNER, owner="U7")
    )
    answer = PauseAnswer(decision={"approved": True}, responder="U7")
    resolved = await store.close(record.pause_id, Replied(answer=answer), at=NOW)
    assert resolved is not None
    assert await store.take(resolved, ran_with={"amount": 3.5})
    await store.save_tool_result(record.pause_id, "refunded")
    taken = await store.find("acme", record.pause_id)
    assert taken is not None and taken.status is PauseStatus.TAKEN
    assert taken.tool_result == "refunded"
    [entry] = await store.find_pause_answers("acme", "root-1")
    assert entry.pause_id == record.pause_id  # a THREAD_OWNER pause's id is in the trail
    assert entry.ran_with == {"amount": 3.5} and entry.responder == "U7"
    assert [r.pause_id for r in await store.list_by_root("root-1", [PauseStatus.TAKEN])] == [
        record.pause_id
    ]


async def test_a_passs_last_write_carries_its_tools_results(store: PauseStore) -> None:
    """``rest`` and ``end_tree`` save the results they are given in their own write: a tree
    ending with a question still waiting (closed the long way), and one with none waiting (on
    PostgreSQL one statement)."""
    answer = PauseAnswer(decision={"approved": True}, responder="m")
    ran: dict[str, str] = {}
    for key, root in (("t1", "root-1"), ("t2", "root-1"), ("t3", "root-1"), ("t4", "root-2")):
        await store.ensure_execution(new_root(root))
        record = await store.get_or_create(new_pause(key, root=root))
        resolved = await store.close(record.pause_id, Replied(answer=answer), at=NOW)
        assert resolved is not None and await store.take(resolved, ran_with=None)
        ran[key] = record.pause_id
    waiting = await store.get_or_create(new_pause("w1"))

    rested = await store.rest("root-1", {"w1": "i-1"}, NOW, results={ran["t1"]: "first"})
    assert [r.pause_id for r in rested.pauses] == [waiting.pause_id]
    closed = await store.end_tree(
        "root-1", ExecutionStatus.COMPLETED, NOW, results={ran["t2"]: "2nd", ran["t3"]: "3rd"}
    )
    assert [r.pause_id for r in closed] == [waiting.pause_id]
    assert (
        await store.end_tree("root-2", ExecutionStatus.FAILED, NOW, results={ran["t4"]: "4th"})
        == []
    )

    found = {k: await store.find("acme", pause_id) for k, pause_id in ran.items()}
    assert {k: r.tool_result for k, r in found.items() if r is not None} == {
        "t1": "first",
        "t2": "2nd",
        "t3": "3rd",
        "t4": "4th",
    }
    assert all(r is not None and r.status is PauseStatus.TAKEN for r in found.values())
    for root, status in (("root-1", ExecutionStatus.COMPLETED), ("root-2", ExecutionStatus.FAILED)):
        row = await store.get(root)
        assert row is not None and row.status is status


async def test_pending_under_a_branch_and_due_deadlines(store: PauseStore) -> None:
    inside = await store.get_or_create(replace(new_pause("b1/x"), closes_at=NOW))
    await store.get_or_create(new_pause("b2/x", at=NOW + timedelta(seconds=1)))
    await store.get_or_create(replace(new_pause("b1_y", root="root-2"), closes_at=NOW))
    under = await store.list_pending_under("root-1", "b1/")
    assert [r.pause_id for r in under] == [inside.pause_id]
    assert await store.roots_with_due_pauses(NOW - timedelta(seconds=1)) == []
    assert sorted(await store.roots_with_due_pauses(NOW)) == ["root-1", "root-2"]


async def test_recovery_finds_answers_nobody_took_and_stale_running_roots(
    store: PauseStore,
) -> None:
    await store.ensure_execution(new_root("answered"))
    await store.ensure_execution(new_root("child", parent="answered"))
    await store.ensure_execution(new_root("stale", at=NOW + timedelta(seconds=1)))
    await store.ensure_execution(new_root("fresh", at=NOW + timedelta(seconds=2)))
    await store.set_status("answered", ExecutionStatus.PAUSED, NOW)
    await store.set_status("fresh", ExecutionStatus.RUNNING, NOW + timedelta(minutes=5))
    record = await store.get_or_create(new_pause("a1", root="answered"))
    answer = PauseAnswer(decision={"approved": True}, responder="m")
    await store.close(record.pause_id, Replied(answer=answer), at=NOW)
    later = NOW + timedelta(minutes=1)
    assert [r.execution_id for r in await store.roots_needing_recovery(later)] == [
        "answered",
        "stale",
    ]
    assert await store.roots_needing_recovery(NOW) == []
    assert await store.launch_started_at("launch", "answered", NOW) == NOW
    assert await store.launch_started_at("launch", "answered", later) == NOW


async def test_a_roots_end_is_untold_until_marked_told_once(store: PauseStore) -> None:
    """The outbox of a run's end: an ended root is listed until it is told, and only one
    caller is told it marked it (two instances never tell one end twice)."""
    for execution_id in ("ended", "running", "child"):
        await store.ensure_execution(
            new_root(execution_id, parent="ended" if execution_id == "child" else None)
        )
    await store.set_status("ended", ExecutionStatus.COMPLETED, NOW)
    await store.set_status("child", ExecutionStatus.COMPLETED, NOW)
    later = NOW + timedelta(seconds=1)

    assert [r.execution_id for r in await store.untold_roots(later)] == ["ended"]
    assert await store.untold_roots(NOW) == []  # ended at NOW: not before it
    assert await store.mark_told("ended", later)
    assert not await store.mark_told("ended", later)
    assert not await store.mark_told("unknown", later)
    assert await store.untold_roots(later) == []


async def test_a_due_nudge_is_claimed_once_and_recorded_by_its_claim(store: PauseStore) -> None:
    due = NOW + timedelta(hours=1)
    record = await store.get_or_create(replace(new_pause("k-nudge"), nudge_at=due))
    assert record.nudge_at == due and record.reminders_sent == 0
    assert await store.due_nudges(due) == []  # never sent: nothing to remind of
    await store.mark_sent(record.pause_id)
    assert await store.due_nudges(due - timedelta(seconds=1)) == []
    [found] = await store.due_nudges(due)
    assert found.pause_id == record.pause_id

    claim = due + timedelta(minutes=2)
    claims = [store.claim_nudge(record.pause_id, seen=due, until=claim, at=due) for _ in range(3)]
    assert sorted(await asyncio.gather(*claims)) == [False, False, True]
    assert await store.due_nudges(due) == []  # claimed: due again only when the claim lapses
    [lapsed] = await store.due_nudges(claim)
    assert (lapsed.pause_id, lapsed.nudge_claimed_at) == (record.pause_id, due)

    later = NOW + timedelta(hours=3)
    recorded = await store.record_nudge(
        record.pause_id, claimed=claim, reminders_sent=1, escalated_at=due, next_at=later
    )
    stale = await store.record_nudge(
        record.pause_id, claimed=claim, reminders_sent=9, escalated_at=None, next_at=None
    )
    assert (recorded, stale) == (True, False)
    now = await store.find_by_key("k-nudge")
    assert now is not None
    assert (now.nudge_at, now.reminders_sent, now.escalated_at) == (later, 1, due)
    assert now.nudge_claimed_at is None  # recorded: no claim left


async def test_an_answered_pause_has_no_nudge_due(store: PauseStore) -> None:
    due = NOW + timedelta(hours=1)
    record = await store.get_or_create(replace(new_pause("k-answered"), nudge_at=due))
    await store.mark_sent(record.pause_id)
    await store.close(record.pause_id, Withdrawn(), at=NOW)
    assert await store.due_nudges(due) == []
    assert not await store.claim_nudge(record.pause_id, seen=due, until=None, at=due)


async def test_a_pause_keeps_the_trace_context_it_was_asked_in(store: PauseStore) -> None:
    carrier = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
    kept = await store.get_or_create(replace(new_pause("k-traced"), trace_context=carrier))
    untraced = await store.get_or_create(new_pause("k-untraced"))
    carrier["traceparent"] = "changed after asking"

    found = await store.find_by_key("k-traced")
    assert found is not None and kept.trace_context == found.trace_context
    assert found.trace_context == {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    }
    assert untraced.trace_context is None
    answered = await store.close(
        kept.pause_id,
        Replied(answer=PauseAnswer(decision={"approved": True}, responder="m1")),
        at=NOW,
    )
    assert answered is not None and answered.trace_context == found.trace_context
