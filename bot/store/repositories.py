"""The stores as Protocols: ``bot.store.sql`` (and ``bot.store.message_refs``) implements them on
a database, ``bot.store.memory`` in memory, and one contract suite (``tests/store``) runs on both.

Every status change is one atomic conditional update (``... WHERE status = 'PENDING'``): the
boolean it returns says whether this caller made the change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from bot.core.approvals import Approvals
from bot.core.delegations import (
    Delegation,
    DelegationChange,
    DelegationChangeKind,
    Handover,
    NewDelegation,
    TellingTaken,
)
from bot.core.enums import ExecutionStatus, PauseAnswerer, PauseStatus
from bot.core.failures import ExecutionFailure
from bot.core.grants import Grant, NewGrant
from bot.core.metrics import PendingByRole
from bot.core.routes import PauseRoute
from bot.store.closings import Closing, Replied
from bot.store.leases import LeaseClaim
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
    ToolRun,
    TreePauses,
)


class PausedExecutionRepository(Protocol):
    async def get_or_create(self, new: NewPause) -> PauseRecord:
        """The record with ``new.idempotency_key``, created PENDING if there is none; it keeps
        ``new.trace_context`` (the span that answers it links there) as given."""
        ...

    async def find(self, tenant_id: str, pause_id: str) -> PauseRecord | None: ...

    def remembered(self, tenant_id: str, pause_id: str) -> PauseRecord | None:
        """The waiting pause as this process's last write of it left it, once, where the store
        keeps that (PostgreSQL: ``bot.store.recent_pauses``), carrying its row's version; None
        otherwise (read it). Given as ``close_opening``'s ``known``, it is written only if the
        row is still that version: ``ChangedSinceRead`` if not, nothing written."""
        return None

    async def find_by_key(self, idempotency_key: str) -> PauseRecord | None: ...

    async def rest(
        self,
        root_execution_id: str,
        by_key: dict[str, str],
        at: datetime,
        *,
        release: LeaseClaim | None = None,
        results: Mapping[str, str] = NO_RESULTS,
    ) -> TreePauses:
        """A pass paused: its pauses' interrupt ids and the tree's status (PAUSED, or RUNNING
        when a pause waits to be continued), atomically; returns its RESOLVED and PENDING
        pauses, and gives the lease up in the same transaction when ``release`` is given and
        none of them waits to be continued. ``results``: what the pass's approved tools
        returned, by pause id, saved in the same write (as ``save_tool_result``)."""
        ...

    async def mark_sent(self, pause_id: str) -> PauseStatus | None:
        """Set ``is_sent`` unless the pause was closed meanwhile (its step tells the channel)."""
        ...

    async def close(
        self, pause_id: str, closing: Closing, *, at: datetime, tenant_id: str | None = None
    ) -> PauseRecord | None:
        """PENDING → what ``closing`` makes of it (``bot.store.closings.closed_as``) and its
        audit entry, atomically (``tenant_id``: only a pause of that tenant). The pause as it
        now is — ``is_sent`` as of its closing: tell its channel if set — or None if it did not
        wait (or an answer came after its deadline). A closing by a grant
        (``DecidedAtOnce.grant_id``) counts its use in the same transaction, and raises
        ``GrantUnavailable`` with nothing written when the grant has no use left."""
        ...

    async def set_route(
        self,
        pause_id: str,
        route: PauseRoute,
        *,
        closes_at: datetime | None,
        nudge_at: datetime | None,
    ) -> PauseRecord | None:
        """Keep where a policy routed a question not sent yet (``route``), with the times its
        timing gives it; the record as it now is, or None when it was closed or sent
        meanwhile."""
        ...

    async def record_approvals(
        self,
        pause_id: str,
        approvals: Approvals,
        *,
        tenant_id: str,
        at: datetime,
        closing: Replied | None = None,
    ) -> PauseRecord | None:
        """Write ``approvals`` as the pause's approvals (version ``approvals.version + 1``) only
        while it waits, before its deadline, with its approvals still at ``approvals.version``
        (the version read), atomically; with ``closing`` (enough approved) close it in the same
        change, with its audit entry. The pause as it now is, or None when it no longer waits
        or another approval came first (read it again)."""
        ...

    async def record_handover(
        self, pause_id: str, handover: Handover, *, tenant_id: str, version: int, at: datetime
    ) -> PauseRecord | None:
        """Add ``handover`` to the pause's handovers while it waits, before its deadline, with
        its approvals and handovers still at ``version`` (the version read), atomically; the
        pause as it now is, or None (it no longer waits, or something changed: read it again)."""
        ...

    async def receive_reply(
        self, tenant_id: str, pause_id: str, reply: str, by: str, at: datetime
    ) -> bool:
        """Keep a reply to read after the ack; False if the pause does not wait any more."""
        ...

    async def forget_reply(self, pause_id: str) -> None:
        """The kept reply was read and refused: nothing is left to read."""
        ...

    async def unread_replies(self, received_before: datetime) -> list[PauseRecord]:
        """PENDING pauses with a reply kept before ``received_before`` and never read."""
        ...

    async def due_nudges(self, now: datetime) -> list[PauseRecord]:
        """PENDING pauses that were sent and whose next reminder or escalation (or a claimed
        one to retry) is due at ``now`` (``nudge_at``), oldest first."""
        ...

    async def claim_nudge(
        self, pause_id: str, *, seen: datetime, until: datetime | None, at: datetime
    ) -> bool:
        """Move ``nudge_at`` from ``seen`` to ``until`` while the pause waits: True only for
        the caller that moved it (the sweep that sends the nudge; others see it moved). ``at``,
        when the claimed nudge fell due, is kept as ``nudge_claimed_at`` until the nudge is
        recorded (a sweep that finds the claim lapsed sends what fell due then). ``until``
        None: nothing more is due."""
        ...

    async def record_nudge(
        self,
        pause_id: str,
        *,
        claimed: datetime,
        reminders_sent: int,
        escalated_at: datetime | None,
        next_at: datetime | None,
    ) -> bool:
        """A claimed nudge was sent: its counts and the next one's time, if ``nudge_at`` is
        still the claim's ``claimed`` (False: the claim lapsed and was retried elsewhere)."""
        ...

    async def take(self, record: PauseRecord, *, ran_with: dict[str, Any] | None = None) -> bool:
        """RESOLVED → TAKEN: the step takes the decision (and its audit entry says what the
        approved call runs with)."""
        ...

    async def save_tool_result(self, pause_id: str, result: str) -> None: ...

    async def list_by_root(
        self, root_execution_id: str, statuses: Sequence[PauseStatus]
    ) -> list[PauseRecord]: ...

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
        """PENDING pauses of a tenant, newest first, filtered by who may answer."""
        ...

    async def list_pending_under(
        self, root_execution_id: str, key_prefix: str
    ) -> list[PauseRecord]:
        """PENDING pauses of the tree under a branch (their idempotency key's prefix)."""
        ...

    async def list_answered(
        self, tenant_id: str, responder: str, *, limit: int = 20
    ) -> list[PauseRecord]:
        """Pauses of a tenant ``responder`` answered (RESOLVED or TAKEN), latest answer first."""
        ...

    async def pending_by_role(self) -> list[PendingByRole]:
        """How many pauses wait per role, every tenant together, and the oldest one's ask
        time: one grouped read (``ix_cs_pauses_status_role_asked``), for ``/metrics``."""
        ...

    async def delete_resolved_before(self, cutoff: datetime, *, batch_size: int = 500) -> int:
        """Remove TAKEN and CANCELLED records resolved before ``cutoff``; returns how many."""
        ...


class ExecutionRecordRepository(Protocol):
    async def start_tree(self, new: NewExecution, lease: LeaseClaim) -> bool:
        """Record a new root execution and take its lease, atomically. An attached graph's
        execution (workflow ``langgraph:*``) on a thread where one lives (RUNNING or PAUSED)
        raises ``ThreadBusy`` with that one, and nothing is written."""
        ...

    async def open_tree(self, lease: LeaseClaim, *, moving: bool = False) -> OpenTree | None:
        """Take the tree's lease and read where it stands; None while another holds it."""
        ...

    async def close_opening(
        self,
        pause_id: str,
        closing: Replied,
        *,
        at: datetime,
        tenant_id: str,
        lease: LeaseClaim,
        known: PauseRecord | None = None,
    ) -> ClosedOpening:
        """An answer's ``close`` (``tenant_id``'s pause) and, when it closed the pause,
        ``open_tree(lease)``, atomically: the continuation that follows adopts the tree
        opened. A lease held elsewhere leaves the tree unopened and the answer recorded.
        ``known``: the pause as the caller read it just before, which a store may compute the
        audit entry from (the entry is the same either way: a store that does writes it only
        if the pause did not change meanwhile, else computes it from the row it closed). A
        ``known`` carrying its row's version (``remembered``) is written only as that version:
        ``ChangedSinceRead`` when the row has changed, with nothing written."""
        ...

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
        """Close the tree's PENDING pauses (CANCELLED), record its end, give the lease up;
        ``told``: nobody is to be told of the end (no channel listens), so it is not left in
        the outbox (``untold_roots``). ``results`` as ``rest``'s, in the same write."""
        ...

    async def get(self, execution_id: str) -> ExecutionRow | None: ...

    async def set_status(
        self,
        execution_id: str,
        status: ExecutionStatus,
        at: datetime,
        *,
        output: Any | None = None,
        error: ExecutionFailure | None = None,
    ) -> None: ...

    async def list_executions_by_thread(
        self, tenant_id: str, thread_id: str
    ) -> list[ExecutionRow]: ...

    async def list_executions_by_root(self, root_execution_id: str) -> list[ExecutionRow]: ...

    async def ensure_execution(self, new: NewExecution) -> None:
        """Create the record unless it exists (a child execution re-entered on a later pass)."""
        ...

    async def untold_roots(self, ended_before: datetime) -> list[ExecutionRow]:
        """Roots that ended before ``ended_before`` and whose end was never told (the process
        that ended them died first): the outbox the sweep empties."""
        ...

    async def mark_told(self, root_execution_id: str, at: datetime) -> bool:
        """Record that a root's end was told; False if it already was (or is unknown)."""
        ...

    async def unmark_told(self, root_execution_id: str, at: datetime) -> bool:
        """Give back a claim ``mark_told(root, at)`` made when the telling then failed (the
        channel could not be reached): the end is in the outbox again. False if the root's end
        is not marked told at ``at`` (another claim, or none)."""
        ...

    async def roots_needing_recovery(self, stale_before: datetime) -> list[ExecutionRow]:
        """Roots with pauses resolved before ``stale_before`` nobody took, or RUNNING since then."""
        ...

    async def roots_with_due_pauses(self, now: datetime) -> list[str]:
        """Roots with a PENDING pause past the deadline it waits under (``closes_at``)."""
        ...

    async def launch_started_at(
        self, launch_key: str, root_execution_id: str, now: datetime
    ) -> datetime:
        """When a launch first ran (for a quorum's deadline)."""
        ...

    async def find_pause_answers(self, tenant_id: str, root_execution_id: str) -> list[AuditRow]:
        """The tree's audit trail, in the order the pauses were asked."""
        ...


class ToolRuns(Protocol):
    """The runs of an attached graph's tools (``cs_tool_runs``): each started once, its result
    saved once, so a pass run again never runs a tool twice (``bot.runtime.attached_tools``)."""

    async def start(self, new: NewToolRun) -> ToolRun:
        """Record that the run starts, unless one with its key was recorded: the run as it
        then is (``first``: this call recorded it)."""
        ...

    async def finish(self, run_key: str, result: dict[str, Any], at: datetime) -> None:
        """Save the run's result (once: a result saved stays)."""
        ...

    async def forget(self, run_key: str) -> None:
        """The run stopped without running the tool to its end in a way that may be retried
        (it raised, or paused for a question): remove its start, unless a result was saved."""
        ...

    async def delete_of_trees_ended_before(self, cutoff: datetime) -> int:
        """Remove the runs of the trees that ended before ``cutoff``; returns how many."""
        ...


class Grants(Protocol):
    """Standing grants (``cs_grants``): added by an approver, listed, revoked; a use counted
    atomically across instances (``bot.core.grants`` says what a grant covers)."""

    async def add(self, new: NewGrant) -> Grant:
        """Store a new grant; the grant as stored (no uses yet)."""
        ...

    async def get(self, tenant_id: str, grant_id: str) -> Grant | None:
        """The tenant's grant with this id (active or not); None if there is none."""
        ...

    async def list_grants(
        self, tenant_id: str | None, *, now: datetime, include_inactive: bool = False
    ) -> list[Grant]:
        """The grants of ``tenant_id`` (None: every tenant's), oldest first; only the active
        ones at ``now`` unless ``include_inactive``."""
        ...

    async def candidates(self, tenant_id: str, role: str, tool: str, now: datetime) -> list[Grant]:
        """The grants active at ``now`` for this tenant, role and tool, oldest first: those
        that may cover a question (``Grant.covers`` says which do)."""
        ...

    async def use(self, grant_id: str, now: datetime) -> bool:
        """Count one use, only if the grant is still active at ``now`` (unrevoked, unexpired,
        a use left), atomically: of two racing for the last use, one gets it."""
        ...

    async def revoke(self, tenant_id: str, grant_id: str, *, by: str, at: datetime) -> bool:
        """Revoke the tenant's grant; False if there is none or it was revoked already."""
        ...


class Delegations(Protocol):
    """Standing delegations (``cs_delegations``): added, listed, ended; the active ones of a
    delegate read when they answer (``bot.core.delegations``)."""

    async def add(self, new: NewDelegation) -> Delegation:
        """Store a new delegation; the delegation as stored."""
        ...

    async def get(self, tenant_id: str, delegation_id: str) -> Delegation | None: ...

    async def list_delegations(
        self, tenant_id: str | None, *, now: datetime, include_ended: bool = False
    ) -> list[Delegation]:
        """The delegations of ``tenant_id`` (None: every tenant's), oldest first; only the
        active ones at ``now`` unless ``include_ended``."""
        ...

    async def active_for(self, tenant_id: str, delegate: str, now: datetime) -> list[Delegation]:
        """The delegations active at ``now`` whose delegate is ``delegate``, oldest first."""
        ...

    async def end(self, tenant_id: str, delegation_id: str, *, by: str, at: datetime) -> bool:
        """End the delegation at ``at``; False if there is none or it ended already."""
        ...

    async def untold(self, now: datetime, *, limit: int) -> list[DelegationChange]:
        """What delegates are still owed, oldest first, at most ``limit``: a start not told
        while the delegation is active, an early end not told once its start was told;
        none held by a taker now (``take_telling``)."""
        ...

    async def take_telling(
        self,
        tenant_id: str,
        delegation_id: str,
        kind: DelegationChangeKind,
        *,
        now: datetime,
        until: datetime,
    ) -> TellingTaken | None:
        """Take the telling of ``kind`` until ``until`` (one conditional write): ``first``,
        ``again`` once an earlier taker's hold lapsed without it being recorded told, or None
        when it was told, or is held by another taker now."""
        ...

    async def mark_told(
        self, tenant_id: str, delegation_id: str, kind: DelegationChangeKind, *, at: datetime
    ) -> bool:
        """Record ``kind`` told (after its channels owed it; one conditional write): True the
        first time, False when it was recorded told already."""
        ...


class PauseStore(PausedExecutionRepository, ExecutionRecordRepository, Protocol):
    """Both repositories: what the runtime is given (``bot.store.sql.SqlStore`` on a database,
    ``bot.store.memory.MemoryStore`` in memory)."""


class Leases(Protocol):
    """Tree leases taken alone, without a pass's first or last write (``bot.store.leases``)."""

    async def try_take(self, claim: LeaseClaim) -> bool:
        """Take the lease if it is free, expired or already the claim's owner's."""
        ...

    async def renew(self, claim: LeaseClaim) -> bool:
        """Push the expiry to ``claim.now + ttl``; False if the lease is not the owner's."""
        ...

    async def release(self, claim: LeaseClaim) -> None:
        """Give the lease up if it is still the claim's owner's."""
        ...

    async def live_roots(self, now: datetime) -> set[str]:
        """Roots whose lease has not expired at ``now``."""
        ...


class MessageRefs(Protocol):
    """Where each channel asked each pause (``cs_message_refs``): one reference per pause, written
    before the channel's ``send`` returns (a retried send finds it and posts nothing), found by
    the conversation and thread a reply comes in, closed once the message shows an outcome."""

    async def add(self, ref: MessageRefRecord) -> bool:
        """Store ``ref``; False when the pause already has one (that one is kept as it was)."""
        ...

    async def get(self, pause_id: str) -> MessageRefRecord | None: ...

    async def close(self, pause_id: str, at: datetime) -> bool:
        """Mark the message as showing its outcome; True only for the call that closed it
        (False if it already was, or is unknown)."""
        ...

    async def get_each(self, pause_ids: Sequence[str]) -> list[MessageRefRecord]:
        """The references of ``pause_ids`` that exist, by pause id, in one read (a question's
        message and its escalated copy, read together when its outcome is shown)."""
        ...

    async def close_each(
        self, pause_ids: Sequence[str], at: datetime, *, told: str | None = None
    ) -> list[str]:
        """Mark the messages of ``pause_ids`` as showing their outcome, in one write; the pause
        ids this call closed (not those closed already, nor unknown ones).

        ``told``: a root execution whose end the same write records told at ``at`` unless it
        was already (``ExecutionResumeEvent.end_told``, carried by a channel's last write)."""
        ...

    async def open_in_thread(self, conversation: str, thread: str) -> list[MessageRefRecord]:
        """The open references in ``thread`` of ``conversation``, oldest first."""
        ...

    async def in_thread(self, conversation: str, thread: str) -> list[MessageRefRecord]:
        """Every reference in ``thread`` of ``conversation``, open or closed, oldest first (the
        questions one message asks together: each shown as it stands)."""
        ...

    async def asked_with(self, pause_id: str, turn: str) -> list[MessageRefRecord]:
        """The reference of ``pause_id`` if any, and every reference of ``turn``, oldest first
        (one read: where a question of a turn was asked, else the messages its siblings were
        asked in, to join one)."""
        ...

    async def join(self, ref: MessageRefRecord, sharing: Sequence[str]) -> bool:
        """Store ``ref`` (a question asked in a message with others) as shared and mark the
        references ``sharing`` (the others of that message) shared, in one transaction; False
        when the pause already has one (that one is kept as it was, nothing marked)."""
        ...

    async def open_refs(
        self, *, after: str | None = None, limit: int = 100
    ) -> list[MessageRefRecord]:
        """Up to ``limit`` open references by pause id, from the first after ``after`` (a page
        of them: a channel catching up after a restart looks for messages it still owes an
        update, those whose pause closed)."""
        ...
