"""The store in memory: ``PauseStore``, ``Leases`` and ``MessageRefs`` without a database, for
tests.

Like LangGraph's ``InMemorySaver``: the same contract as ``bot.store.sql`` (``tests/store`` runs
one suite on both), nothing kept after the process. Each call runs to its end without awaiting,
so on one event loop every call is atomic, as each SQL call is one statement or transaction.
Values are copied through JSON on the way in, as the database stores them.

    store = MemoryStore()
    leases = store.leases  # the same lease table the store's tree passes take
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.core.approvals import Approvals
from bot.core.delegations import Handover
from bot.core.dtos import ToolCallApprovalAsk
from bot.core.enums import ExecutionStatus, PauseAnswerer, PauseStatus
from bot.core.failures import ExecutionFailure
from bot.core.metrics import PendingByRole
from bot.core.routes import PauseRoute
from bot.store.closings import Cancelled, Closing, GrantUnavailable, Replied, closed_as
from bot.store.leases import LeaseClaim
from bot.store.memory_grants import MemoryGrants
from bot.store.records import (
    NO_RESULTS,
    AuditRow,
    ClosedOpening,
    ExecutionRow,
    MessageRefRecord,
    NewExecution,
    NewPause,
    NewToolRun,
    OpenTree,
    PauseRecord,
    ThreadBusy,
    ToolRun,
    TreePauses,
    interrupts_to_resume,
)
from bot.store.repositories import Leases, MessageRefs, PauseStore, ToolRuns
from bot.store.tables import ATTACHED_PREFIX


def _copied(value: Any) -> Any:
    """``value`` as the database gives it back: a fresh copy, through JSON."""
    return None if value is None else json.loads(json.dumps(value, default=str))


@dataclass(slots=True)
class _Lease:
    owner: str
    expires_at: datetime


class MemoryLeases(Leases):
    """``Leases`` in memory; ``MemoryStore.leases`` shares its table with the store."""

    def __init__(self) -> None:
        self._table: dict[str, _Lease] = {}

    def take(self, claim: LeaseClaim) -> bool:
        held = self._table.get(claim.root)
        if held is not None and held.expires_at >= claim.now and held.owner != claim.owner:
            return False
        self._table[claim.root] = _Lease(owner=claim.owner, expires_at=claim.now + claim.ttl)
        if held is not None and held.owner != claim.owner:
            claim.took_over()
        return True

    def give_up(self, claim: LeaseClaim) -> None:
        held = self._table.get(claim.root)
        if held is not None and held.owner == claim.owner:
            del self._table[claim.root]

    async def try_take(self, claim: LeaseClaim) -> bool:
        return self.take(claim)

    async def renew(self, claim: LeaseClaim) -> bool:
        held = self._table.get(claim.root)
        if held is None or held.owner != claim.owner:
            return False
        held.expires_at = claim.now + claim.ttl
        return True

    async def release(self, claim: LeaseClaim) -> None:
        self.give_up(claim)

    async def live_roots(self, now: datetime) -> set[str]:
        return {root for root, held in self._table.items() if held.expires_at >= now}


@dataclass(slots=True)
class _Entry:
    """An audit entry and what it is found and ordered by."""

    tenant_id: str
    root_execution_id: str
    idempotency_key: str
    order: tuple[datetime, int, int]
    row: AuditRow


class MemoryStore(PauseStore):
    """``PauseStore`` in memory (see the module); it subclasses the Protocol, so the type checker
    holds it to every method."""

    def __init__(self, grants: MemoryGrants | None = None) -> None:
        self.leases = MemoryLeases()
        self.tool_runs = MemoryToolRuns(self)
        self.grants = grants or MemoryGrants()
        """The grants a decision by a grant uses as it closes the pause (``DecidedAtOnce``)."""
        self._pauses: dict[str, PauseRecord] = {}
        self._by_key: dict[str, str] = {}
        self._unread_at: dict[str, datetime] = {}
        self._executions: dict[str, ExecutionRow] = {}
        self._told: dict[str, datetime] = {}
        self._audit: list[_Entry] = []
        self._launches: dict[str, datetime] = {}
        self._seq = 0

    # ---------------------------------------------------------------- pause records

    async def get_or_create(self, new: NewPause) -> PauseRecord:
        known = self._by_key.get(new.idempotency_key)
        if known is not None:
            return self._pauses[known]
        self._seq += 1
        record = PauseRecord(
            seq=self._seq,
            pause_id=new.pause_id,
            tenant_id=new.tenant_id,
            idempotency_key=new.idempotency_key,
            root_execution_id=new.root_execution_id,
            execution_id=new.execution_id,
            thread_id=new.thread_id,
            owner_id=new.owner_id,
            interrupt_id=None,
            status=PauseStatus.PENDING,
            is_sent=False,
            resolution=None,
            answered_by=new.answered_by,
            role=new.role,
            channel=new.channel,
            agent=new.agent,
            ask=ToolCallApprovalAsk.model_validate(_copied(new.ask.model_dump(mode="json"))),
            node_id=new.node_id,
            item_index=new.item_index,
            child_execution_id=new.child_execution_id,
            tool_loop_iteration=new.tool_loop_iteration,
            answer=None,
            tool_result=None,
            asked_at=new.asked_at,
            resolved_at=None,
            ask_position=new.ask_position,
            closes_at=new.closes_at,
            nudge_at=new.nudge_at,
            trace_context=None if new.trace_context is None else dict(new.trace_context),
        )
        self._pauses[record.pause_id] = record
        self._by_key[record.idempotency_key] = record.pause_id
        return record

    async def find(self, tenant_id: str, pause_id: str) -> PauseRecord | None:
        record = self._pauses.get(pause_id)
        return record if record is not None and record.tenant_id == tenant_id else None

    async def find_by_key(self, idempotency_key: str) -> PauseRecord | None:
        known = self._by_key.get(idempotency_key)
        return None if known is None else self._pauses[known]

    async def mark_sent(self, pause_id: str) -> PauseStatus | None:
        record = self._pauses.get(pause_id)
        if record is None or record.status not in (PauseStatus.PENDING, PauseStatus.RESOLVED):
            return None
        return self._put(dataclasses.replace(record, is_sent=True)).status

    async def close(
        self, pause_id: str, closing: Closing, *, at: datetime, tenant_id: str | None = None
    ) -> PauseRecord | None:
        record = self._pauses.get(pause_id)
        terms = closed_as(closing)
        if record is None or record.status is not PauseStatus.PENDING:
            return None
        if tenant_id is not None and record.tenant_id != tenant_id:
            return None
        if terms.before_deadline and record.closes_at is not None and record.closes_at <= at:
            return None
        if terms.grant_id is not None and not await self.grants.use(terms.grant_id, at):
            raise GrantUnavailable(terms.grant_id)  # nothing written
        answer = record.answer
        if terms.answer is not None:
            answer = dataclasses.replace(terms.answer, decision=_copied(terms.answer.decision))
        closed = self._put(
            dataclasses.replace(
                record,
                status=terms.status,
                resolution=terms.resolution,
                answer=answer,
                resolved_at=at,
                unread_reply=None,
                unread_by=None,
            )
        )
        self._unread_at.pop(pause_id, None)
        self._write_audit(closed, terms.audit_decision, terms.ran_with)
        return closed

    async def set_route(
        self,
        pause_id: str,
        route: PauseRoute,
        *,
        closes_at: datetime | None,
        nudge_at: datetime | None,
    ) -> PauseRecord | None:
        record = self._pauses.get(pause_id)
        if record is None or record.status is not PauseStatus.PENDING or record.is_sent:
            return None
        routed = dataclasses.replace(record, route=route, closes_at=closes_at, nudge_at=nudge_at)
        return self._put(routed)

    async def record_approvals(
        self,
        pause_id: str,
        approvals: Approvals,
        *,
        tenant_id: str,
        at: datetime,
        closing: Replied | None = None,
    ) -> PauseRecord | None:
        record = await self.find(tenant_id, pause_id)
        if record is None or record.status is not PauseStatus.PENDING:
            return None
        if record.approvals.version != approvals.version:
            return None
        if record.closes_at is not None and record.closes_at <= at:
            return None
        written = dataclasses.replace(approvals, version=approvals.version + 1)
        self._put(dataclasses.replace(record, approvals=_copied_approvals(written)))
        if closing is None:
            return self._pauses[pause_id]
        return await self.close(pause_id, closing, at=at, tenant_id=tenant_id)

    async def record_handover(
        self, pause_id: str, handover: Handover, *, tenant_id: str, version: int, at: datetime
    ) -> PauseRecord | None:
        record = await self.find(tenant_id, pause_id)
        if record is None or record.status is not PauseStatus.PENDING:
            return None
        if record.approvals.version != version:
            return None
        if record.closes_at is not None and record.closes_at <= at:
            return None
        approvals = dataclasses.replace(record.approvals, version=version + 1)
        return self._put(
            dataclasses.replace(
                record, approvals=approvals, handovers=(*record.handovers, handover)
            )
        )

    async def receive_reply(
        self, tenant_id: str, pause_id: str, reply: str, by: str, at: datetime
    ) -> bool:
        record = await self.find(tenant_id, pause_id)
        if record is None or record.status is not PauseStatus.PENDING:
            return False
        self._put(dataclasses.replace(record, unread_reply=reply, unread_by=by))
        self._unread_at[pause_id] = at
        return True

    async def forget_reply(self, pause_id: str) -> None:
        record = self._pauses.get(pause_id)
        if record is not None:
            self._put(dataclasses.replace(record, unread_reply=None, unread_by=None))
        self._unread_at.pop(pause_id, None)

    async def unread_replies(self, received_before: datetime) -> list[PauseRecord]:
        return self._asked(
            r
            for r in self._pauses.values()
            if r.status is PauseStatus.PENDING
            and (at := self._unread_at.get(r.pause_id)) is not None
            and at < received_before
        )

    async def due_nudges(self, now: datetime) -> list[PauseRecord]:
        return self._asked(
            r
            for r in self._pauses.values()
            if r.status is PauseStatus.PENDING
            and r.is_sent
            and r.nudge_at is not None
            and r.nudge_at <= now
        )

    async def claim_nudge(
        self, pause_id: str, *, seen: datetime, until: datetime | None, at: datetime
    ) -> bool:
        record = self._pauses.get(pause_id)
        if record is None or record.status is not PauseStatus.PENDING or record.nudge_at != seen:
            return False
        claimed_at = None if until is None else at
        self._put(dataclasses.replace(record, nudge_at=until, nudge_claimed_at=claimed_at))
        return True

    async def record_nudge(
        self,
        pause_id: str,
        *,
        claimed: datetime,
        reminders_sent: int,
        escalated_at: datetime | None,
        next_at: datetime | None,
    ) -> bool:
        record = self._pauses.get(pause_id)
        if record is None or record.nudge_at != claimed:
            return False
        self._put(
            dataclasses.replace(
                record,
                nudge_at=next_at,
                reminders_sent=reminders_sent,
                escalated_at=escalated_at,
                nudge_claimed_at=None,
            )
        )
        return True

    async def take(self, record: PauseRecord, *, ran_with: dict[str, Any] | None = None) -> bool:
        current = self._pauses.get(record.pause_id)
        if current is None or current.status is not PauseStatus.RESOLVED:
            return False
        self._put(dataclasses.replace(current, status=PauseStatus.TAKEN))
        if ran_with is not None:
            for entry in self._audit:
                if entry.idempotency_key == current.idempotency_key:
                    entry.row = dataclasses.replace(entry.row, ran_with=_copied(ran_with))
        return True

    async def save_tool_result(self, pause_id: str, result: str) -> None:
        self._save_results({pause_id: result})

    def _save_results(self, results: Mapping[str, str]) -> None:
        for pause_id, result in results.items():
            record = self._pauses.get(pause_id)
            if record is not None:
                self._put(dataclasses.replace(record, tool_result=result))

    async def list_by_root(
        self, root_execution_id: str, statuses: Sequence[PauseStatus]
    ) -> list[PauseRecord]:
        return self._asked(
            r
            for r in self._pauses.values()
            if r.root_execution_id == root_execution_id and r.status in statuses
        )

    async def list_pending(
        self,
        tenant_id: str,
        *,
        answered_by: PauseAnswerer | None = None,
        owner_id: str | None = None,
        roles: Sequence[str] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[PauseRecord]:
        found = [
            r
            for r in self._pauses.values()
            if r.tenant_id == tenant_id
            and r.status is PauseStatus.PENDING
            and (answered_by is None or r.answered_by is answered_by)
            and (owner_id is None or r.owner_id == owner_id)
            and (roles is None or r.role in roles)
        ]
        return sorted(found, key=_ask_order, reverse=True)[offset : offset + limit]

    async def list_answered(
        self, tenant_id: str, responder: str, *, limit: int = 20
    ) -> list[PauseRecord]:
        answered = (PauseStatus.RESOLVED, PauseStatus.TAKEN)
        found = [
            r
            for r in self._pauses.values()
            if r.tenant_id == tenant_id
            and r.status in answered
            and r.answer is not None
            and r.answer.responder == responder
        ]
        found.sort(key=lambda r: r.resolved_at or r.asked_at, reverse=True)
        return found[:limit]

    async def list_pending_under(
        self, root_execution_id: str, key_prefix: str
    ) -> list[PauseRecord]:
        return self._asked(
            r
            for r in self._pauses.values()
            if r.root_execution_id == root_execution_id
            and r.status is PauseStatus.PENDING
            and r.idempotency_key.startswith(key_prefix)
        )

    async def pending_by_role(self) -> list[PendingByRole]:
        waiting: dict[str, list[datetime]] = {}
        unsent: dict[str, int] = {}
        for record in self._pauses.values():
            if record.status is PauseStatus.PENDING:
                waiting.setdefault(record.role, []).append(record.asked_at)
                unsent[record.role] = unsent.get(record.role, 0) + (not record.is_sent)
        return [
            PendingByRole(
                role=role, count=len(asked), oldest_asked_at=min(asked), undelivered=unsent[role]
            )
            for role, asked in sorted(waiting.items())
        ]

    async def delete_resolved_before(self, cutoff: datetime, *, batch_size: int = 500) -> int:
        closed = (PauseStatus.TAKEN, PauseStatus.CANCELLED)
        gone = [
            r
            for r in self._pauses.values()
            if r.status in closed and r.resolved_at is not None and r.resolved_at < cutoff
        ]
        for record in gone:
            del self._pauses[record.pause_id]
            del self._by_key[record.idempotency_key]
            self._unread_at.pop(record.pause_id, None)
        return len(gone)

    # ---------------------------------------------------------------- a tree's passes

    async def start_tree(self, new: NewExecution, lease: LeaseClaim) -> bool:
        live = self._live_attached(new)
        if live is not None and live != new.execution_id:
            raise ThreadBusy(live)
        if not self.leases.take(lease):
            return False
        await self.ensure_execution(new)
        return True

    def _live_attached(self, new: NewExecution) -> str | None:
        """The live execution of the attached graph ``new`` starts on its thread, if any."""
        if not new.workflow.startswith(ATTACHED_PREFIX):
            return None
        for row in self._executions.values():
            same_thread = (row.tenant_id, row.thread_id) == (new.tenant_id, new.thread_id)
            if same_thread and row.workflow == new.workflow and not row.status.ended:
                return row.execution_id
        return None

    async def open_tree(self, lease: LeaseClaim, *, moving: bool = False) -> OpenTree | None:
        if not self.leases.take(lease):
            return None
        execution = self._executions.get(lease.root)
        if execution is None or execution.status.ended:
            self.leases.give_up(lease)
            return OpenTree(execution=execution, pauses=(), released=True)
        waiting = self._waiting_in(lease.root)
        if moving or _to_continue(waiting):
            self._set(lease.root, ExecutionStatus.RUNNING, lease.now)
        return OpenTree(execution=execution, pauses=waiting, released=False)

    async def close_opening(
        self,
        pause_id: str,
        closing: Replied,
        *,
        at: datetime,
        tenant_id: str,
        lease: LeaseClaim,
        known: PauseRecord | None = None,  # nothing to spare in memory: the entry from the row
    ) -> ClosedOpening:
        record = await self.close(pause_id, closing, at=at, tenant_id=tenant_id)
        if record is None:  # nothing awaited between the two: one step, as a transaction
            return ClosedOpening(record=None, tree=None)
        return ClosedOpening(record=record, tree=await self.open_tree(lease))

    async def rest(
        self,
        root_execution_id: str,
        by_key: dict[str, str],
        at: datetime,
        *,
        release: LeaseClaim | None = None,
        results: Mapping[str, str] = NO_RESULTS,
    ) -> TreePauses:
        self._save_results(results)
        for key, interrupt_id in by_key.items():
            known = self._by_key.get(key)
            if known is not None:
                self._put(dataclasses.replace(self._pauses[known], interrupt_id=interrupt_id))
        waiting = self._waiting_in(root_execution_id)
        settled = not _to_continue(waiting)
        status = ExecutionStatus.PAUSED if settled else ExecutionStatus.RUNNING
        self._set(root_execution_id, status, at)
        if release is not None and settled:
            self.leases.give_up(release)
        return TreePauses(pauses=waiting, released=release is not None and settled)

    async def end_tree(
        self,
        root_execution_id: str,
        status: ExecutionStatus,
        at: datetime,
        *,
        output: Any | None = None,
        error: ExecutionFailure | None = None,
        release: LeaseClaim | None = None,
        told: bool = False,
        results: Mapping[str, str] = NO_RESULTS,
    ) -> list[PauseRecord]:
        self._save_results(results)
        terms = closed_as(Cancelled())
        in_tree = self._asked(
            r for r in self._pauses.values() if r.root_execution_id == root_execution_id
        )
        closed: list[PauseRecord] = []
        for record in in_tree:
            if record.status is PauseStatus.PENDING:
                changed = dataclasses.replace(
                    record, status=terms.status, resolution=terms.resolution, resolved_at=at
                )
                closed.append(self._put(changed))
                self._write_audit(changed, None, None)
            elif record.status is PauseStatus.RESOLVED:
                self._put(dataclasses.replace(record, status=PauseStatus.CANCELLED))
        self._set(root_execution_id, status, at, output=output, error=error)
        if told:
            self._told[root_execution_id] = at
        if release is not None:
            self.leases.give_up(release)
        return closed

    # ---------------------------------------------------------------- execution records

    async def get(self, execution_id: str) -> ExecutionRow | None:
        return self._executions.get(execution_id)

    async def set_status(
        self,
        execution_id: str,
        status: ExecutionStatus,
        at: datetime,
        *,
        output: Any | None = None,
        error: ExecutionFailure | None = None,
    ) -> None:
        self._set(execution_id, status, at, output=output, error=error)

    async def list_executions_by_thread(self, tenant_id: str, thread_id: str) -> list[ExecutionRow]:
        return _by_creation(
            e
            for e in self._executions.values()
            if e.tenant_id == tenant_id and e.thread_id == thread_id
        )

    async def list_executions_by_root(self, root_execution_id: str) -> list[ExecutionRow]:
        return _by_creation(
            e for e in self._executions.values() if e.root_execution_id == root_execution_id
        )

    async def ensure_execution(self, new: NewExecution) -> None:
        if new.execution_id in self._executions:
            return
        self._executions[new.execution_id] = ExecutionRow(
            execution_id=new.execution_id,
            root_execution_id=new.root_execution_id,
            parent_execution_id=new.parent_execution_id,
            thread_id=new.thread_id,
            tenant_id=new.tenant_id,
            owner_id=new.owner_id,
            workflow=new.workflow,
            status=ExecutionStatus.RUNNING,
            input=_copied(new.input),
            output=None,
            error=None,
            created_at=new.created_at,
            updated_at=new.created_at,
        )

    async def untold_roots(self, ended_before: datetime) -> list[ExecutionRow]:
        return sorted(
            (
                e
                for e in self._executions.values()
                if e.parent_execution_id is None
                and e.status.ended
                and e.updated_at < ended_before
                and e.execution_id not in self._told
            ),
            key=lambda e: e.created_at,
        )

    async def mark_told(self, root_execution_id: str, at: datetime) -> bool:
        if root_execution_id not in self._executions or root_execution_id in self._told:
            return False
        self._told[root_execution_id] = at
        return True

    async def unmark_told(self, root_execution_id: str, at: datetime) -> bool:
        if self._told.get(root_execution_id) != at:
            return False
        del self._told[root_execution_id]
        return True

    async def roots_needing_recovery(self, stale_before: datetime) -> list[ExecutionRow]:
        asked_too = {  # a pause of the same interrupt still waits: it is not resumed yet
            (r.root_execution_id, r.interrupt_id)
            for r in self._pauses.values()
            if r.status is PauseStatus.PENDING and r.interrupt_id is not None
        }
        with_resolved = {
            r.root_execution_id
            for r in self._pauses.values()
            if r.status is PauseStatus.RESOLVED
            and r.resolved_at is not None
            and r.resolved_at < stale_before
            and (r.root_execution_id, r.interrupt_id) not in asked_too
        }
        moving = (ExecutionStatus.PAUSED, ExecutionStatus.RUNNING)
        return _by_creation(
            e
            for e in self._executions.values()
            if e.parent_execution_id is None
            and (
                (e.execution_id in with_resolved and e.status in moving)
                or (e.status is ExecutionStatus.RUNNING and e.updated_at < stale_before)
            )
        )

    async def roots_with_due_pauses(self, now: datetime) -> list[str]:
        due = [
            r.root_execution_id
            for r in self._asked(self._pauses.values())
            if r.status is PauseStatus.PENDING and r.closes_at is not None and r.closes_at <= now
        ]
        return list(dict.fromkeys(due))

    async def launch_started_at(
        self, launch_key: str, root_execution_id: str, now: datetime
    ) -> datetime:
        return self._launches.setdefault(launch_key, now)

    async def find_pause_answers(self, tenant_id: str, root_execution_id: str) -> list[AuditRow]:
        found = [
            e
            for e in self._audit
            if e.tenant_id == tenant_id and e.root_execution_id == root_execution_id
        ]
        return [e.row for e in sorted(found, key=lambda e: e.order)]

    # ---------------------------------------------------------------- internals

    def _put(self, record: PauseRecord) -> PauseRecord:
        self._pauses[record.pause_id] = record
        return record

    def _asked(self, records: Iterable[PauseRecord]) -> list[PauseRecord]:
        return sorted(records, key=_ask_order)

    def _waiting_in(self, root: str) -> tuple[PauseRecord, ...]:
        waiting = (PauseStatus.RESOLVED, PauseStatus.PENDING)
        return tuple(
            self._asked(
                r
                for r in self._pauses.values()
                if r.root_execution_id == root and r.status in waiting
            )
        )

    def _set(
        self,
        execution_id: str,
        status: ExecutionStatus,
        at: datetime,
        *,
        output: Any | None = None,
        error: ExecutionFailure | None = None,
    ) -> None:
        row = self._executions.get(execution_id)
        if row is None:
            return
        row = dataclasses.replace(row, status=status, updated_at=at)
        if output is not None:
            row = dataclasses.replace(row, output=_copied(output))
        if error is not None:
            row = dataclasses.replace(row, error=error)
        self._executions[execution_id] = row

    def _write_audit(
        self,
        record: PauseRecord,
        audit_decision: dict[str, Any] | None,
        ran_with: dict[str, Any] | None,
    ) -> None:
        assert record.resolution is not None and record.resolved_at is not None
        shown_id = record.pause_id if record.answered_by is PauseAnswerer.THREAD_OWNER else None
        row = AuditRow(
            pause_id=shown_id,
            execution_id=record.execution_id,
            step=record.step,
            role=record.role,
            answered_by=record.answered_by,
            responder=None if record.answer is None else record.answer.responder,
            resolution=record.resolution,
            asked_at=record.asked_at,
            resolved_at=record.resolved_at,
            decision=_copied(audit_decision),
            ran_with=_copied(ran_with),
            approvals=record.approvals.entries,
            handovers=record.handovers,
        )
        self._audit.append(
            _Entry(
                tenant_id=record.tenant_id,
                root_execution_id=record.root_execution_id,
                idempotency_key=record.idempotency_key,
                order=_ask_order(record),
                row=row,
            )
        )


@dataclass(slots=True)
class _ToolRun:
    root_execution_id: str
    result: dict[str, Any] | None = None


class MemoryToolRuns(ToolRuns):
    """``ToolRuns`` in memory; ``MemoryStore.tool_runs`` reads the store's executions (whose
    trees ended)."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._runs: dict[str, _ToolRun] = {}

    async def start(self, new: NewToolRun) -> ToolRun:
        known = self._runs.get(new.run_key)
        if known is None:
            self._runs[new.run_key] = _ToolRun(root_execution_id=new.root_execution_id)
            return ToolRun(run_key=new.run_key, first=True, result=None)
        return ToolRun(run_key=new.run_key, first=False, result=_copied(known.result))

    async def finish(self, run_key: str, result: dict[str, Any], at: datetime) -> None:
        known = self._runs.get(run_key)
        if known is not None and known.result is None:
            known.result = _copied(result)

    async def forget(self, run_key: str) -> None:
        known = self._runs.get(run_key)
        if known is not None and known.result is None:
            del self._runs[run_key]

    async def delete_of_trees_ended_before(self, cutoff: datetime) -> int:
        ended = set()
        for key, run in self._runs.items():
            tree = await self._store.get(run.root_execution_id)
            if tree is not None and tree.status.ended and tree.updated_at < cutoff:
                ended.add(key)
        for key in ended:
            del self._runs[key]
        return len(ended)


class MemoryMessageRefs(MessageRefs):
    """``MessageRefs`` in memory; ``store``: the executions a close records an end told in
    (``close_each(..., told=...)``)."""

    def __init__(self, store: MemoryStore | None = None) -> None:
        self._refs: dict[str, MessageRefRecord] = {}
        self._store = store

    async def add(self, ref: MessageRefRecord) -> bool:
        if ref.pause_id in self._refs:
            return False
        self._refs[ref.pause_id] = dataclasses.replace(ref, reference=_copied(ref.reference))
        return True

    async def get(self, pause_id: str) -> MessageRefRecord | None:
        return self._refs.get(pause_id)

    async def close(self, pause_id: str, at: datetime) -> bool:
        ref = self._refs.get(pause_id)
        if ref is None or ref.closed:
            return False
        self._refs[pause_id] = dataclasses.replace(ref, closed_at=at)
        return True

    async def get_each(self, pause_ids: Sequence[str]) -> list[MessageRefRecord]:
        return [self._refs[p] for p in sorted(set(pause_ids)) if p in self._refs]

    async def close_each(
        self, pause_ids: Sequence[str], at: datetime, *, told: str | None = None
    ) -> list[str]:
        if told is not None and self._store is None:
            raise ValueError("an end told needs the store its executions are in")
        closed = [p for p in sorted(set(pause_ids)) if await self.close(p, at)]
        if told is not None and self._store is not None:
            await self._store.mark_told(told, at)
        return closed

    async def open_in_thread(self, conversation: str, thread: str) -> list[MessageRefRecord]:
        found = (
            ref
            for ref in self._refs.values()
            if ref.conversation == conversation and ref.thread == thread and not ref.closed
        )
        return sorted(found, key=lambda ref: (ref.created_at, ref.pause_id))

    async def in_thread(self, conversation: str, thread: str) -> list[MessageRefRecord]:
        found = (
            ref
            for ref in self._refs.values()
            if ref.conversation == conversation and ref.thread == thread
        )
        return sorted(found, key=lambda ref: (ref.created_at, ref.pause_id))

    async def asked_with(self, pause_id: str, turn: str) -> list[MessageRefRecord]:
        found = (r for r in self._refs.values() if r.pause_id == pause_id or r.turn == turn)
        return sorted(found, key=lambda ref: (ref.created_at, ref.pause_id))

    async def join(self, ref: MessageRefRecord, sharing: Sequence[str]) -> bool:
        if not await self.add(dataclasses.replace(ref, shared=True)):
            return False
        for pause_id in sharing:
            other = self._refs.get(pause_id)
            if other is not None and not other.shared:
                self._refs[pause_id] = dataclasses.replace(other, shared=True)
        return True

    async def open_refs(
        self, *, after: str | None = None, limit: int = 100
    ) -> list[MessageRefRecord]:
        found = sorted(
            (
                r
                for r in self._refs.values()
                if not r.closed and (after is None or r.pause_id > after)
            ),
            key=lambda ref: ref.pause_id,
        )
        return found[:limit]


def _ask_order(record: PauseRecord) -> tuple[datetime, int, int]:
    """The order pauses were asked in (``bot.store.statements.ASK_ORDER``)."""
    return (record.asked_at, record.ask_position or 0, record.seq)


def _to_continue(waiting: Sequence[PauseRecord]) -> bool:
    return bool(interrupts_to_resume(waiting))


def _by_creation(rows: Iterable[ExecutionRow]) -> list[ExecutionRow]:
    return sorted(rows, key=lambda row: row.created_at)


def _copied_approvals(approvals: Approvals) -> Approvals:
    """``approvals`` sharing no mutable value with the caller's (as a database would keep it)."""
    return dataclasses.replace(
        approvals,
        proposal=_copied(approvals.proposal),
        entries=tuple(
            dataclasses.replace(e, arguments=_copied(e.arguments)) for e in approvals.entries
        ),
    )
