"""What the API shows of the records: ``PauseView``, ``PendingPause``, ``ExecutionResult``,
``ExecutionRecord`` (the audit trail), built from the store's rows and the assembly."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.approvals import shown_approvals
from bot.core.dtos import RejectReason, ToolCallApprovalDecision
from bot.core.enums import ExecutionStatus, PauseAnswerer, PauseStatus
from bot.core.errors import UnknownThreadError
from bot.core.failures import ExecutionFailure
from bot.core.grants import grant_of_responder
from bot.core.policy import policy_of_responder
from bot.core.results import (
    ChildExecutionRecord,
    ExecutionRecord,
    ExecutionResult,
    PauseAuditEntry,
    PauseView,
    PendingPause,
)
from bot.core.sensitive import mask_arguments
from bot.runtime.approval_counts import needs_several
from bot.runtime.assembly import ToolBinding
from bot.runtime.engine import PassReport
from bot.runtime.expiry import expiry_of
from bot.runtime.frame import RunFrame
from bot.runtime.services import Runtime
from bot.store.ledger import SqlLedger
from bot.store.records import AuditRow, ExecutionRow, PauseRecord


class Views:
    """Views of one App's records (the tools' input models and descriptions from its assembly)."""

    def __init__(self, runtime: Runtime, ledger: SqlLedger) -> None:
        self._runtime = runtime
        self._ledger = ledger

    def pause(self, record: PauseRecord) -> PauseView:
        """The pause as its channel's server side sees it (arguments unmasked)."""
        answer = record.answer
        binding = self._binding(record)  # looked up once: three fields come from it
        return PauseView(
            pause_id=record.pause_id,
            status=record.status,
            resolution=record.resolution,
            answered_by=record.answered_by,
            role=record.role,
            channel=record.channel,
            agent=record.agent,
            ask=record.ask,
            tool_input=None if binding is None else binding.spec.input,
            tool_description="" if binding is None else binding.spec.description,
            owner_id=record.owner_id,
            thread_id=record.thread_id,
            execution_id=record.execution_id,
            tenant_id=record.tenant_id,
            responder=answer.responder if answer else None,
            decision=_decision(answer.decision) if answer else None,
            asked_at=record.asked_at.isoformat(),
            reply=answer.reply if answer else None,
            expires_at=_expires_at(binding, record),
            escalated=record.escalated_at is not None,
            reminded=record.reminders_sent,
            reject_reason=self._reject_reason(record.role),
            tool_result=record.tool_result,
            route=record.route,
            required_approvals=needs_several(self._runtime, record),
            approvals=record.approvals.shown(),
            proposal=record.approvals.proposal,
            handovers=record.handovers,
            turn=record.turn,
            ask_position=record.ask_position,
        )

    def pending(self, record: PauseRecord, *, reveal: bool = False) -> PendingPause:
        """A waiting pause as users may see it: sensitive arguments masked, and a CHANNEL
        pause's id left out unless ``reveal`` (for the channel's own server side)."""
        binding = self._binding(record)
        tool_input = None if binding is None else binding.spec.input
        ask = record.ask.model_copy(
            update={"arguments": mask_arguments(tool_input, record.ask.arguments)}
        )
        owners = record.answered_by is PauseAnswerer.THREAD_OWNER
        shown = record.pause_id if owners or reveal else None
        return PendingPause(
            pause_id=shown,
            answered_by=record.answered_by,
            agent=record.agent,
            role=record.role,
            ask=ask,
            execution_id=record.execution_id,
            thread_id=record.thread_id,
            asked_at=record.asked_at.isoformat(),
            item_index=record.item_index,
            child_execution_id=record.child_execution_id,
            owner_id=record.owner_id,
            expires_at=_expires_at(binding, record),
            escalated=record.escalated_at is not None,
            reminded=record.reminders_sent,
            delivered=record.is_sent,
            route=record.route,
            handovers=record.handovers,
            required_approvals=needs_several(self._runtime, record),
            approvals=record.approvals.shown(),
            proposal=None
            if record.approvals.proposal is None
            else mask_arguments(tool_input, record.approvals.proposal),
        )

    def _reject_reason(self, role: str) -> RejectReason:
        """The rule of the role the question was asked under (optional if it is gone)."""
        spec = self._runtime.assembly.roles_by_name.get(role)
        return "optional" if spec is None else spec.reject_reason

    def known_result(self, frame: RunFrame, report: PassReport) -> ExecutionResult | None:
        """The result as the passes left it, when they know all of it (no read back)."""
        if not report.ran or report.status is None or report.waiting is None:
            return None
        if report.status is ExecutionStatus.PAUSED and not report.waiting:
            return None  # resting with nothing pending is odd: read what the store says
        failure = report.error if report.status is ExecutionStatus.FAILED else None
        return ExecutionResult(
            thread_id=frame.thread_id,
            execution_id=frame.root_execution_id,
            status=report.status,
            output=report.output,
            pending=[self.pending(r) for r in report.waiting],
            tenant_id=frame.tenant_id,
            error=None if failure is None else ExecutionFailure.of(failure),
        )

    async def answers_told(
        self, root_execution_id: str, report: PassReport, *, every: bool
    ) -> tuple[PauseView, ...]:
        """The answers a move tells: those its passes took (``report.taken``) — or, with
        ``every``, every answer a person gave the tree that a pass took or will take, read from
        the store, for a move after a pass that may have taken answers it never told (a crash,
        a cut-off pass: a channel shows each outcome once)."""
        if not every:
            return tuple(self.pause(r) for r in report.taken)
        records = await self._runtime.store.list_by_root(
            root_execution_id, [PauseStatus.RESOLVED, PauseStatus.TAKEN]
        )
        answered = (r for r in records if r.answer is not None and r.answer.responder is not None)
        return tuple(self.pause(r) for r in answered)

    async def result(self, root_execution_id: str, *, record: bool) -> ExecutionResult:
        """Where the tree stands, read from the store."""
        store = self._runtime.store
        row = await store.get(root_execution_id)
        if row is None:
            raise UnknownThreadError(f"no execution {root_execution_id}")
        pending = (
            []  # an ended tree closed whatever waited
            if row.status.ended
            else [
                self.pending(r)
                for r in await store.list_by_root(root_execution_id, [PauseStatus.PENDING])
            ]
        )
        status = row.status
        if status is ExecutionStatus.PAUSED and not pending:
            status = ExecutionStatus.RUNNING
        return ExecutionResult(
            thread_id=row.thread_id,
            execution_id=row.execution_id,
            status=status,
            output=row.output,
            pending=pending,
            record=await self.record(row) if record else None,
            tenant_id=row.tenant_id,
            error=_failure_of(row),
        )

    async def record(self, row: ExecutionRow) -> ExecutionRecord:
        """The root's record lists the whole tree's pauses; each child's record its own."""
        store = self._runtime.store
        entries = [
            _audit_entry(e) for e in await store.find_pause_answers(row.tenant_id, row.execution_id)
        ]
        rows = await store.list_executions_by_root(row.execution_id)
        return ExecutionRecord(
            execution_id=row.execution_id,
            thread_id=row.thread_id,
            tenant_id=row.tenant_id,
            workflow=row.workflow,
            status=row.status,
            spend=await self._ledger.execution_spend(row.tenant_id, row.execution_id),
            pauses=entries,
            children=_children_of(row.execution_id, rows, entries),
            error=_failure_of(row),
        )

    def _binding(self, record: PauseRecord) -> ToolBinding | None:
        """The binding the question was asked under (its tool within its asker: an attached
        graph's tools are shown by its role's model)."""
        return self._runtime.assembly.binding_of(
            record.ask.tool, agent=record.agent, role=record.role
        )


def _expires_at(binding: ToolBinding | None, record: PauseRecord) -> str | None:
    expires_at = expiry_of(binding, record)  # a route's timing first
    return None if expires_at is None else expires_at.isoformat()


def _decision(stored: object) -> ToolCallApprovalDecision | None:
    """A recorded decision as the model it was validated as (it was, before it was stored)."""
    if stored is None:
        return None
    return ToolCallApprovalDecision.model_validate(stored)


def _failure_of(row: ExecutionRow) -> ExecutionFailure | None:
    """Why the execution failed, if it did (a row records its failure with its end)."""
    return row.error if row.status is ExecutionStatus.FAILED else None


def _audit_entry(e: AuditRow) -> PauseAuditEntry:
    grant = grant_of_responder(e.responder)
    return PauseAuditEntry(
        pause_id=e.pause_id,
        execution_id=e.execution_id,
        step=e.step,
        role=e.role,
        answered_by=e.answered_by,
        responder=e.responder,
        resolution=e.resolution,
        asked_at=e.asked_at.isoformat(),
        resolved_at=e.resolved_at.isoformat(),
        decision=e.decision,
        ran_with=e.ran_with,
        policy=policy_of_responder(e.responder),
        grant_id=None if grant is None else grant[0],
        granted_by=None if grant is None else grant[1],
        approvals=shown_approvals(e.approvals),
        handovers=e.handovers,
    )


def _children_of(
    parent: str, rows: Sequence[ExecutionRow], entries: Sequence[PauseAuditEntry]
) -> list[ChildExecutionRecord]:
    return [
        ChildExecutionRecord(
            execution_id=child.execution_id,
            workflow=child.workflow,
            status=child.status,
            pauses=[e for e in entries if e.execution_id == child.execution_id],
            children=_children_of(child.execution_id, rows, entries),
            error=_failure_of(child),
        )
        for child in rows
        if child.parent_execution_id == parent
    ]
