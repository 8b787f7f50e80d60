"""The SQLAlchemy implementation of the pause and execution record repositories.

Short transactions, one statement each where possible; a status change and its audit entry are
written in the same transaction so an answer is never recorded without its audit entry.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeGuard, TypeVar, cast

from sqlalchemy import Connection, Row, and_, case, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from bot.core.approvals import Approvals, entries_of, entry_json
from bot.core.delegations import Handover
from bot.core.dtos import ToolCallApprovalAsk
from bot.core.enums import ExecutionStatus, PauseAnswerer, PauseResolution, PauseStatus
from bot.core.errors import ExecutionFailedError
from bot.core.failures import ExecutionFailure
from bot.core.metrics import PendingByRole
from bot.core.results import StepRecord
from bot.core.routes import PauseRoute
from bot.store import direct, one_statement
from bot.store.closings import Cancelled, Closing, GrantUnavailable, Replied, closed_as
from bot.store.codec import JsonCodec, PayloadCodec
from bot.store.database import Database
from bot.store.grants import use_grant
from bot.store.leases import LeaseClaim, lease_values
from bot.store.recent_pauses import ChangedSinceRead, RecentPauses
from bot.store.records import (
    NO_RESULTS,
    AuditRow,
    ClosedOpening,
    ExecutionRow,
    NewExecution,
    NewPause,
    OpenTree,
    PauseAnswer,
    PauseRecord,
    ThreadBusy,
    TreePauses,
    changed,
    interrupts_to_resume,
)
from bot.store.statements import (
    ASK_ORDER,
    CLOSE_PENDING_PAUSE,
    CLOSE_TREE_PAUSES,
    EXECUTION,
    INSERT_AUDIT_ENTRY,
    INSERT_EXECUTION_UNLESS_PRESENT,
    INSERT_PAUSE_UNLESS_PRESENT,
    KEEP_UNREAD_REPLY,
    MARK_SENT,
    MARK_TOLD,
    PAUSE_BY_ID,
    PAUSE_BY_KEY,
    RECORD_APPROVALS,
    SET_INTERRUPT_ID,
    SET_RAN_WITH,
    TAKE_PAUSE,
    UPDATE_EXECUTION,
    UPDATE_PAUSE,
    UPDATE_PAUSED_EXECUTION,
    WAITING_IN_TREE,
)
from bot.store.tables import (
    LIVE_ATTACHED,
    PENDING,
    UNTOLD_END,
    executions,
    launches,
    pause_answers,
    pauses,
)
from bot.store.transactions import Transactions

R = TypeVar("R")


class SqlStore:
    """``PauseStore`` on a database (``App.create`` gives it to the runtime as one)."""

    def __init__(self, database: Database, codec: PayloadCodec | None = None) -> None:
        """Its queries run on ``database.transactions``; payloads are written with ``codec``."""
        self._tx: Transactions = database.transactions
        self._codec: PayloadCodec = codec or JsonCodec()
        # PostgreSQL runs some writes of several statements as one (``one_statement``): a
        # round trip instead of k + 2; SQLite has no data-modifying CTEs
        self._one_statement = database.engine.dialect.name == "postgresql"
        # the waiting pauses a rest of this process left, for the answer that follows
        self._recent = RecentPauses()

    # ---------------------------------------------------------------- pause records

    async def get_or_create(self, new: NewPause) -> PauseRecord:
        values = {
            "pause_id": new.pause_id,
            "tenant_id": new.tenant_id,
            "idempotency_key": new.idempotency_key,
            "root_execution_id": new.root_execution_id,
            "execution_id": new.execution_id,
            "thread_id": new.thread_id,
            "owner_id": new.owner_id,
            "status": PauseStatus.PENDING.value,
            "is_sent": False,
            "answered_by": new.answered_by.value,
            "role": new.role,
            "channel": new.channel,
            "agent": new.agent,
            "tool": new.ask.tool,
            "call_id": new.ask.call_id,
            "node_id": new.node_id,
            "item_index": new.item_index,
            "child_execution_id": new.child_execution_id,
            "tool_loop_iteration": new.tool_loop_iteration,
            "ask": self._codec.encode(new.ask.model_dump(mode="json")),
            "asked_at": new.asked_at,
            "ask_position": new.ask_position,
            "closes_at": new.closes_at,
            "nudge_at": new.nudge_at,
            "reminders_sent": 0,
            "trace_context": _carrier_text(new.trace_context),
        }
        by_key = {"b_key": new.idempotency_key}

        def body(connection: Connection) -> direct.Mapped:
            created = direct.first(connection, INSERT_PAUSE_UNLESS_PRESENT, values)
            # created by an earlier pass (or another one meanwhile): same key, same pause
            return created or connection.execute(PAUSE_BY_KEY, by_key).one()

        return self._pause(await self._tx.apply(body, short=True))  # each statement stands alone

    async def find(self, tenant_id: str, pause_id: str) -> PauseRecord | None:
        return await self._one(PAUSE_BY_ID, {"b_pause_id": pause_id, "b_tenant": tenant_id})

    def remembered(self, tenant_id: str, pause_id: str) -> PauseRecord | None:
        return self._recent.take(tenant_id, pause_id)

    async def find_by_key(self, idempotency_key: str) -> PauseRecord | None:
        return await self._one(PAUSE_BY_KEY, {"b_key": idempotency_key})

    async def mark_sent(self, pause_id: str) -> PauseStatus | None:
        """Set ``is_sent`` unless the pause was closed meanwhile; its status then, or None."""

        def status(rows: Sequence[direct.Mapped]) -> PauseStatus | None:
            return None if not rows else PauseStatus(rows[0]._mapping["status"])

        marked = direct.OneStatement(MARK_SENT, {"b_pause_id": pause_id, "is_sent": True}, status)
        return await self._tx.apply(marked, short=True)

    async def close(
        self, pause_id: str, closing: Closing, *, at: datetime, tenant_id: str | None = None
    ) -> PauseRecord | None:
        """PENDING → what ``closing`` makes of it (``closed_as``), and its audit entry, in one
        transaction; ``tenant_id``: only a pause of that tenant.

        Returns the record as the change left it (its ``is_sent`` as of the change, so exactly
        one closer knows it must tell the channel), or None if the pause did not wait (or an
        answer came after its deadline).
        """
        terms = closed_as(closing)
        statement = CLOSE_PENDING_PAUSE[(tenant_id is not None, terms.before_deadline)]
        values: dict[str, Any] = {"b_pause_id": pause_id, **self._closing_values(closing, at)}
        if tenant_id is not None:
            values["b_tenant"] = tenant_id
        if terms.before_deadline:
            values["b_now"] = at
        return await self._tx.write(self._closing_body(statement, values, closing, at), short=True)

    async def record_approvals(
        self,
        pause_id: str,
        approvals: Approvals,
        *,
        tenant_id: str,
        at: datetime,
        closing: Replied | None = None,
    ) -> PauseRecord | None:
        values: dict[str, Any] = {
            "b_pause_id": pause_id,
            "b_tenant": tenant_id,
            "b_version": approvals.version,
            "b_now": at,
            "approvals": self._codec.encode(approvals.to_json()),
            "approvals_version": approvals.version + 1,
        }
        if closing is None:

            def body(connection: Connection) -> PauseRecord | None:
                row = connection.execute(RECORD_APPROVALS, values).one_or_none()
                return None if row is None else self._pause(row)

            return await self._tx.write(body, short=True)
        values.update(self._closing_values(closing, at))
        return await self._tx.write(
            self._closing_body(RECORD_APPROVALS, values, closing, at), short=True
        )

    async def record_handover(
        self, pause_id: str, handover: Handover, *, tenant_id: str, version: int, at: datetime
    ) -> PauseRecord | None:
        record = await self.find(tenant_id, pause_id)
        if record is None or record.approvals.version != version:
            return None
        handovers = [h.to_json() for h in (*record.handovers, handover)]
        values: dict[str, Any] = {
            "b_pause_id": pause_id,
            "b_tenant": tenant_id,
            "b_version": version,
            "b_now": at,
            "handovers": self._codec.encode(handovers),
            "approvals_version": version + 1,
        }

        def body(connection: Connection) -> PauseRecord | None:
            row = connection.execute(RECORD_APPROVALS, values).one_or_none()
            return None if row is None else self._pause(row)

        return await self._tx.write(body, short=True)

    def _closing_values(self, closing: Closing, at: datetime) -> dict[str, Any]:
        """What ``closing`` writes on the pause row."""
        terms = closed_as(closing)
        values: dict[str, Any] = {
            "status": terms.status.value,
            "resolution": terms.resolution.value,
            **_NOTHING_UNREAD,  # a reply kept to read is moot once the pause closed
            "resolved_at": at,
        }
        answer = terms.answer
        if answer is not None:
            values["answer"] = self._codec.encode(
                {"decision": answer.decision, "responder": answer.responder, "reply": answer.reply}
            )
            values["responder"] = answer.responder
        return values

    def _closing_body(
        self, statement: Any, values: dict[str, Any], closing: Closing, at: datetime
    ) -> Callable[[Connection], PauseRecord | None]:
        """The transaction that closes a pause by ``statement`` and writes its audit entry
        (and counts the use of the grant that decided it, in the same transaction)."""
        terms = closed_as(closing)
        decision = terms.audit_decision
        sealed_decision = None if decision is None else self._codec.encode(decision)
        sealed_ran_with = None if terms.ran_with is None else self._codec.encode(terms.ran_with)

        def body(connection: Connection) -> PauseRecord | None:
            row = direct.one_or_none(connection, statement, values)
            if row is None:
                return None
            if terms.grant_id is not None and not use_grant(connection, terms.grant_id, at):
                raise GrantUnavailable(terms.grant_id)  # rolls the closing back: all or nothing
            record = self._pause(row)
            entry = self._audit_entry(record, terms.answer, sealed_decision)
            direct.execute(connection, INSERT_AUDIT_ENTRY, {**entry, "ran_with": sealed_ran_with})
            return record

        return body

    async def set_route(
        self,
        pause_id: str,
        route: PauseRoute,
        *,
        closes_at: datetime | None,
        nudge_at: datetime | None,
    ) -> PauseRecord | None:
        """Keep where a policy routed a question not sent yet, with the times its timing
        gives it; the record as it now is, or None when it was closed or sent meanwhile."""
        statement = (
            update(pauses)
            .where(
                and_(
                    pauses.c.pause_id == pause_id,
                    pauses.c.status == PauseStatus.PENDING.value,
                    pauses.c.is_sent.is_(False),
                )
            )
            .values(route=route.encode(), closes_at=closes_at, nudge_at=nudge_at)
            .returning(pauses)
        )

        def body(connection: Connection) -> PauseRecord | None:
            row = connection.execute(statement).one_or_none()
            return None if row is None else self._pause(row)

        return await self._tx.apply(body, short=True)

    async def receive_reply(
        self, tenant_id: str, pause_id: str, reply: str, by: str, at: datetime
    ) -> bool:
        """Keep a reply to read after the ack (the latest one wins); False if the pause does not
        wait any more."""
        values = {
            "b_pause_id": pause_id,
            "b_tenant": tenant_id,
            "unread_reply": self._codec.encode(reply),
            "unread_by": by,
            "unread_at": at,
        }
        return await self._tx.apply(
            lambda connection: connection.execute(KEEP_UNREAD_REPLY, values).rowcount == 1,
            short=True,
        )

    async def forget_reply(self, pause_id: str) -> None:
        """The kept reply was read (and refused): nothing is left to read."""
        values = {
            "b_pause_id": pause_id,
            "unread_reply": None,
            "unread_by": None,
            "unread_at": None,
        }
        await self._tx.apply(
            lambda connection: connection.execute(UPDATE_PAUSE, values), short=True
        )

    async def unread_replies(self, received_before: datetime) -> list[PauseRecord]:
        """PENDING pauses with a reply kept before ``received_before`` and never read."""
        return await self._many(
            and_(
                pauses.c.status == PauseStatus.PENDING.value,
                pauses.c.unread_at < received_before,
            ),
            newest_first=False,
        )

    async def due_nudges(self, now: datetime) -> list[PauseRecord]:
        return await self._many(
            and_(
                pauses.c.status == PauseStatus.PENDING.value,
                pauses.c.is_sent.is_(True),
                pauses.c.nudge_at <= now,
            ),
            newest_first=False,
        )

    async def claim_nudge(
        self, pause_id: str, *, seen: datetime, until: datetime | None, at: datetime
    ) -> bool:
        statement = (
            update(pauses)
            .where(
                pauses.c.pause_id == pause_id,
                pauses.c.status == PauseStatus.PENDING.value,
                pauses.c.nudge_at == seen,
            )
            .values(nudge_at=until, nudge_claimed_at=None if until is None else at)
        )
        return await self._tx.apply(
            lambda connection: connection.execute(statement).rowcount == 1, short=True
        )

    async def record_nudge(
        self,
        pause_id: str,
        *,
        claimed: datetime,
        reminders_sent: int,
        escalated_at: datetime | None,
        next_at: datetime | None,
    ) -> bool:
        statement = (
            update(pauses)
            .where(pauses.c.pause_id == pause_id, pauses.c.nudge_at == claimed)
            .values(
                nudge_at=next_at,
                reminders_sent=reminders_sent,
                escalated_at=escalated_at,
                nudge_claimed_at=None,
            )
        )
        return await self._tx.apply(
            lambda connection: connection.execute(statement).rowcount == 1, short=True
        )

    async def take(self, record: PauseRecord, *, ran_with: dict[str, Any] | None = None) -> bool:
        """RESOLVED → TAKEN (False if another run took it); with ``ran_with`` (masked: what the
        approved tool is about to run with) its audit entry says so, in the same transaction."""
        taken = {"b_pause_id": record.pause_id, "status": PauseStatus.TAKEN.value}
        if ran_with is None:
            return await self._tx.apply(
                lambda connection: direct.execute(connection, TAKE_PAUSE, taken) == 1, short=True
            )
        sealed = {"b_key": record.idempotency_key, "ran_with": self._codec.encode(ran_with)}
        if self._one_statement:
            both = {**taken, **sealed}
            taking = direct.OneStatement(
                one_statement.TAKE_NOTING_RAN_WITH,
                both,
                lambda rows: bool(rows[0]._mapping["taken"]),
            )
            return await self._tx.apply(taking, short=True)

        def body(connection: Connection) -> bool:
            if direct.execute(connection, TAKE_PAUSE, taken) != 1:
                return False
            direct.execute(connection, SET_RAN_WITH, sealed)
            return True

        return await self._tx.write(body, short=True)

    async def save_tool_result(self, pause_id: str, result: str) -> None:
        sealed = self._sealed_results({pause_id: result})
        await self._tx.apply(lambda connection: _save_results(connection, sealed), short=True)

    def _sealed_results(self, results: Mapping[str, str]) -> dict[str, str]:
        return {pause_id: self._codec.encode(r) for pause_id, r in results.items()}

    async def list_by_root(
        self, root_execution_id: str, statuses: Sequence[PauseStatus]
    ) -> list[PauseRecord]:
        return await self._many(
            and_(
                pauses.c.root_execution_id == root_execution_id,
                pauses.c.status.in_([s.value for s in statuses]),
            ),
            newest_first=False,
        )

    async def list_pending_under(
        self, root_execution_id: str, key_prefix: str
    ) -> list[PauseRecord]:
        """PENDING pauses of the tree whose idempotency key starts with ``key_prefix``."""
        return await self._many(
            and_(
                pauses.c.root_execution_id == root_execution_id,
                pauses.c.status == PauseStatus.PENDING.value,
                pauses.c.idempotency_key.startswith(key_prefix, autoescape=True),
            ),
            newest_first=False,
        )

    async def pending_by_role(self) -> list[PendingByRole]:
        statement = (
            select(
                pauses.c.role,
                func.count(),
                func.min(pauses.c.asked_at),
                func.sum(case((pauses.c.is_sent.is_(False), 1), else_=0)),
            )
            .where(PENDING)  # the literal: read on the partial index
            .group_by(pauses.c.role)
            .order_by(pauses.c.role)
        )
        rows = await self._tx.read(lambda connection: connection.execute(statement).all())
        return [
            PendingByRole(
                role=r[0], count=int(r[1]), oldest_asked_at=r[2], undelivered=int(r[3] or 0)
            )
            for r in rows
        ]

    async def untold_roots(self, ended_before: datetime) -> list[ExecutionRow]:
        return await self._executions(and_(UNTOLD_END, executions.c.updated_at < ended_before))

    async def mark_told(self, root_execution_id: str, at: datetime) -> bool:
        told = {"b_execution_id": root_execution_id, "b_at": at}

        def body(connection: Connection) -> bool:
            return connection.execute(MARK_TOLD, told).rowcount == 1

        return await self._tx.write(body, short=True)

    async def unmark_told(self, root_execution_id: str, at: datetime) -> bool:
        statement = (
            update(executions)
            .where(executions.c.execution_id == root_execution_id, executions.c.told_at == at)
            .values(told_at=None)
        )

        def body(connection: Connection) -> bool:
            return connection.execute(statement).rowcount == 1

        return await self._tx.write(body, short=True)

    async def roots_needing_recovery(self, stale_before: datetime) -> list[ExecutionRow]:
        """Root executions with pauses resolved before ``stale_before`` that nobody took, or
        RUNNING since then. (An answer just recorded is being continued by the instance that
        recorded it: recovery leaves it that long.)"""
        sibling = pauses.alias("sibling")
        asked_too = (  # a pause of the same interrupt still waits: its interrupt is not resumed
            select(sibling.c.id)
            .where(
                and_(
                    sibling.c.root_execution_id == pauses.c.root_execution_id,
                    sibling.c.interrupt_id == pauses.c.interrupt_id,
                    sibling.c.status == PauseStatus.PENDING.value,
                )
            )
            .exists()
        )
        with_resolved = (
            select(pauses.c.root_execution_id)
            .where(
                and_(
                    pauses.c.status == PauseStatus.RESOLVED.value,
                    pauses.c.resolved_at < stale_before,
                    ~asked_too,
                )
            )
            .distinct()
        )
        statement = (
            select(executions)
            .where(
                and_(
                    executions.c.parent_execution_id.is_(None),
                    or_(
                        and_(
                            executions.c.execution_id.in_(with_resolved),
                            executions.c.status.in_(
                                [ExecutionStatus.PAUSED.value, ExecutionStatus.RUNNING.value]
                            ),
                        ),
                        and_(
                            executions.c.status == ExecutionStatus.RUNNING.value,
                            executions.c.updated_at < stale_before,
                        ),
                    ),
                )
            )
            .order_by(executions.c.created_at)
        )
        rows = await self._tx.read(lambda connection: connection.execute(statement).all())
        return [self._execution(row) for row in rows]

    async def roots_with_due_pauses(self, now: datetime) -> list[str]:
        """Root executions with a pause still PENDING past the deadline it waits under."""
        statement = (
            select(pauses.c.root_execution_id)
            .where(and_(pauses.c.status == PauseStatus.PENDING.value, pauses.c.closes_at <= now))
            .distinct()
        )
        rows = await self._tx.read(lambda connection: connection.execute(statement).all())
        return [row[0] for row in rows]

    async def launch_started_at(
        self, launch_key: str, root_execution_id: str, now: datetime
    ) -> datetime:
        """When a launch first ran (recorded on its first pass; later passes read it)."""

        def body(connection: Connection) -> Any:
            started = connection.execute(
                select(launches.c.started_at).where(launches.c.launch_key == launch_key)
            ).scalar_one_or_none()
            if started is not None:
                return started
            connection.execute(
                insert(launches).values(
                    launch_key=launch_key, root_execution_id=root_execution_id, started_at=now
                )
            )
            return now

        started = await self._write_inserting(body)
        assert isinstance(started, datetime)
        return started

    async def ensure_execution(self, new: NewExecution) -> None:
        """Create the execution record unless it exists (a child re-entered on a later pass)."""
        values = self._new_execution(new)
        await self._tx.apply(
            lambda connection: connection.execute(INSERT_EXECUTION_UNLESS_PRESENT, values),
            short=True,
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
        condition = and_(
            pauses.c.tenant_id == tenant_id, pauses.c.status == PauseStatus.PENDING.value
        )
        if answered_by is not None:
            condition = and_(condition, pauses.c.answered_by == answered_by.value)
        if owner_id is not None:
            condition = and_(condition, pauses.c.owner_id == owner_id)
        if roles is not None:
            condition = and_(condition, pauses.c.role.in_(list(roles)))
        return await self._many(condition, newest_first=True, limit=limit, offset=offset)

    async def list_answered(
        self, tenant_id: str, responder: str, *, limit: int = 20
    ) -> list[PauseRecord]:
        answered = [PauseStatus.RESOLVED.value, PauseStatus.TAKEN.value]
        statement = (
            select(pauses)
            .where(
                pauses.c.tenant_id == tenant_id,
                pauses.c.responder == responder,
                pauses.c.status.in_(answered),
            )
            .order_by(pauses.c.resolved_at.desc(), pauses.c.id.desc())
            .limit(limit)
        )
        rows = await self._tx.read(lambda connection: connection.execute(statement).all())
        return [self._pause(row) for row in rows]

    async def delete_resolved_before(self, cutoff: datetime, *, batch_size: int = 500) -> int:
        closed = [PauseStatus.TAKEN.value, PauseStatus.CANCELLED.value]

        def batch(connection: Connection) -> int:
            ids = (
                connection.execute(
                    select(pauses.c.id)
                    .where(and_(pauses.c.status.in_(closed), pauses.c.resolved_at < cutoff))
                    .limit(batch_size)
                )
                .scalars()
                .all()
            )
            if ids:
                connection.execute(delete(pauses).where(pauses.c.id.in_(ids)))
            return len(ids)

        removed = 0
        while removed_now := await self._tx.write(batch):
            removed += removed_now
        return removed

    # ---------------------------------------------------------------- a tree's passes
    # Each takes or gives up the tree's lease in the same transaction as the pass's first or
    # last write, so a pass costs no round trip of its own for the lease.

    async def start_tree(self, new: NewExecution, lease: LeaseClaim) -> bool:
        """Take a new root execution's lease and record the execution (once, however often
        it is called); False, and nothing written, if the lease is held."""
        values = self._new_execution(new)

        def body(connection: Connection) -> bool:
            if not lease.take(connection):
                return False
            direct.execute(connection, INSERT_EXECUTION_UNLESS_PRESENT, values)  # a repeated call
            return True

        def start() -> Awaitable[bool]:
            if self._one_statement:
                return self._tx.apply(_one_statement_start(lease, values), short=True)
            return self._tx.write(body, short=True)

        try:
            return await start()
        except IntegrityError:  # the one live execution of an attached graph's thread (v10)
            live = await self._tx.read(
                lambda connection: _live_attached(connection, new), short=True
            )
            if live is None or live == new.execution_id:  # it ended meanwhile: start this one
                return await start()
            raise ThreadBusy(live) from None

    async def open_tree(self, lease: LeaseClaim, *, moving: bool = False) -> OpenTree | None:
        """Take the tree's lease and read where the tree stands; None if the lease is held.

        A tree that is unknown or has ended gives the lease back in the same transaction
        (``released``); otherwise its RESOLVED and PENDING pauses come with it, and if some wait
        to be continued (or ``moving``: the caller runs a pass anyway) the tree is marked
        RUNNING (``execution`` is the row as it was).
        """
        return await self._tx.write(
            lambda connection: self._open(connection, lease, moving), short=True
        )

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
        """``close`` and, when it closed the pause, ``open_tree`` in the same transaction: an
        answer's one write also opens the tree its continuation runs in (issue 32: one write
        less per click). A lease held elsewhere leaves the answer recorded and the tree
        unopened (``tree`` None), as ``close`` alone would.

        On PostgreSQL, given ``known`` (the pause as the caller read it just before), the
        write is one statement, one round trip where the transaction costs seven
        (``one_statement.close_opening``): its audit entry is computed from ``known`` and
        written only if the pause is still that row as far as the entry is concerned (its
        approvals' version: approvals and handovers change only with it). Otherwise — the
        pause changed meanwhile, its deadline passed — it goes the long way, in which the
        entry is computed from the row as closed; so does opening a tree that has ended
        (rare: a tree ends with its pauses closed)."""
        terms = closed_as(closing)
        statement = CLOSE_PENDING_PAUSE[(True, terms.before_deadline)]
        values: dict[str, Any] = {
            "b_pause_id": pause_id,
            "b_tenant": tenant_id,
            **self._closing_values(closing, at),
        }
        if terms.before_deadline:
            values["b_now"] = at
        exact = known is not None and known.row_version is not None
        if self._one_statement and _answers_as_read(known, pause_id, tenant_id, lease):
            at_once = await self._tx.apply(
                self._closing_opening_at_once(values, closing, known, at, lease)
            )
            if isinstance(at_once, ClosedOpening):
                return at_once
            if at_once is not None:  # closed and audited: its tree opened the long way
                tree = await self._tx.write(lambda c: self._open(c, lease, moving=False))
                return ClosedOpening(record=at_once, tree=tree)
            # it still waits but was not closed (changed since read, or past its deadline)
        if exact:  # the caller checked the answer against a row that has changed: nothing
            raise ChangedSinceRead(pause_id)  # written; it checks again against the row read
        closing_body = self._closing_body(statement, values, closing, at)

        def body(connection: Connection) -> ClosedOpening:
            record = closing_body(connection)
            if record is None:
                return ClosedOpening(record=None, tree=None)
            return ClosedOpening(record=record, tree=self._open(connection, lease, moving=False))

        return await self._tx.write(body, short=True)

    def _closing_opening_at_once(
        self,
        values: dict[str, Any],
        closing: Replied,
        known: PauseRecord,
        at: datetime,
        lease: LeaseClaim,
    ) -> Callable[[Connection], ClosedOpening | PauseRecord | None]:
        """``close_opening``'s one statement, the audit entry computed from ``known`` as the
        closing leaves it (the columns the entry reads that the closing sets: its resolution
        and time). The body returns what was done: everything (``ClosedOpening``), the pause
        closed with its tree still to open (its record), or nothing while it waits (None)."""
        terms = closed_as(closing)
        decision = terms.audit_decision
        sealed_decision = None if decision is None else self._codec.encode(decision)
        as_closed = changed(known, resolution=terms.resolution, resolved_at=at)
        entry = self._audit_entry(as_closed, terms.answer, sealed_decision)
        entry["ran_with"] = None if terms.ran_with is None else self._codec.encode(terms.ran_with)
        sets = tuple(name for name in values if not name.startswith("b_"))
        exact = known.row_version is not None
        statement = one_statement.close_opening(
            sets, tuple(entry), before_deadline=terms.before_deadline, exact=exact
        )
        parameters = {
            **values,
            **{f"a_{name}": value for name, value in entry.items()},
            "b_seq": known.seq,
            "b_version": known.approvals.version,
            "b_root": lease.root,
            "updated_at": lease.now,
            **lease_values(lease),
        }
        if exact:
            parameters["b_row_version"] = known.row_version

        return direct.OneStatement(
            statement, parameters, lambda found: self._opened_at_once(found, known.seq, lease)
        )

    def _opened_at_once(
        self, rows: Sequence[direct.Mapped], seq: int, lease: LeaseClaim
    ) -> ClosedOpening | PauseRecord | None:
        """What ``close_opening``'s one statement did, as ``_open`` would say it; the pause
        closed but its tree left to open the long way (its record) where the statement cannot
        say that: a tree unknown or ended (the long way takes its lease and gives it back),
        or an execution that changed as the statement ran (a pause waits to be continued, but
        the tree was not moved on)."""
        outcome = rows[0]._mapping
        if not outcome["closed_it"]:
            return None if outcome["waited"] else ClosedOpening(record=None, tree=None)
        waiting = tuple(self._pause(row) for row in rows if row._mapping["id"] is not None)
        record = next(p for p in waiting if p.seq == seq)  # the closed row is in its tree
        if not outcome["live"]:
            return record
        if not outcome["taken"]:
            return ClosedOpening(record=record, tree=None)
        holder = outcome["holder"]
        if holder is not None and holder != lease.owner:
            lease.took_over()
        if outcome["goes_on"] and not outcome["moved"]:
            return record  # the lease is ours: the long way takes it again, reads the tree
        execution = self._execution(
            direct.DirectRow({c.name: outcome[f"e_{c.name}"] for c in executions.columns})
        )
        if outcome["moved"] and execution.status is ExecutionStatus.PAUSED:
            # as ``_open`` gives it: the row its update returned, with the status it had
            execution = dataclasses.replace(execution, updated_at=lease.now.astimezone(UTC))
        return ClosedOpening(
            record=record, tree=OpenTree(execution=execution, pauses=waiting, released=False)
        )

    def _open(self, connection: Connection, lease: LeaseClaim, moving: bool) -> OpenTree | None:
        """``open_tree``'s transaction, shared with ``close_opening``."""
        root = lease.root
        if not lease.take(connection):
            return None
        waiting = self._waiting_in(connection, root)
        runs = moving or _to_continue(waiting)  # a pass runs: if it dies, recovery finds it
        if runs:  # the usual case, a PAUSED tree moved on: its update returns the row
            row = direct.first(connection, UPDATE_PAUSED_EXECUTION, _running(root, lease.now))
            if row is not None:  # the row as it was: PAUSED
                paused = dataclasses.replace(self._execution(row), status=ExecutionStatus.PAUSED)
                return OpenTree(execution=paused, pauses=waiting, released=False)
        row = direct.first(connection, EXECUTION, {"b_execution_id": root})
        execution = None if row is None else self._execution(row)
        if execution is None or execution.status.ended:
            lease.release(connection)
            return OpenTree(execution=execution, pauses=(), released=True)
        if runs:  # RUNNING already (a pass cut off midway): its time moves on
            direct.execute(connection, UPDATE_EXECUTION, _running(root, lease.now))
        return OpenTree(execution=execution, pauses=waiting, released=False)

    async def rest(
        self,
        root_execution_id: str,
        by_key: dict[str, str],
        at: datetime,
        *,
        release: LeaseClaim | None = None,
        results: Mapping[str, str] = NO_RESULTS,
    ) -> TreePauses:
        """A pass paused: its pauses' interrupt ids, and the tree PAUSED — or RUNNING when a
        pause waits to be continued (RESOLVED, with an interrupt id), as the drain then runs
        another pass. Returns the tree's RESOLVED and PENDING pauses. With ``release``, the lease
        is given up in the same transaction when none waits: the drain is over. ``results``:
        the pass's tool results, saved in the same write.
        """
        sealed = self._sealed_results(results)
        if self._one_statement:
            statement = one_statement.rest(release=release is not None, results=bool(sealed))
            parameters: dict[str, Any] = {
                "keys": list(by_key),
                "interrupt_ids": list(by_key.values()),
                "b_root": root_execution_id,
                "updated_at": at,
                **_result_arrays(sealed),
            }
            if release is not None:
                parameters.update(lease_values(release))

            def resting(rows: Sequence[direct.Mapped]) -> TreePauses:
                goes_on = bool(rows) and bool(rows[0]._mapping["goes_on"])
                waiting = tuple(self._pause(row) for row in rows)
                self._recent.keep(waiting)
                return TreePauses(pauses=waiting, released=release is not None and not goes_on)

            one = direct.OneStatement(statement, parameters, resting)
            return await self._tx.apply(one, short=True)

        def body(connection: Connection) -> TreePauses:
            _save_results(connection, sealed)
            if by_key:
                direct.execute(
                    connection,
                    SET_INTERRUPT_ID,
                    [{"b_key": key, "interrupt_id": i} for key, i in by_key.items()],
                )
            waiting = self._waiting_in(connection, root_execution_id)
            settled = not _to_continue(waiting)
            # RUNNING when the drain goes on with another pass (recovery's mark if it dies)
            status = ExecutionStatus.PAUSED if settled else ExecutionStatus.RUNNING
            direct.execute(
                connection,
                UPDATE_EXECUTION,
                {"b_execution_id": root_execution_id, "status": status.value, "updated_at": at},
            )
            if release is not None and settled:
                release.release(connection)
            return TreePauses(pauses=waiting, released=release is not None and settled)

        return await self._tx.write(body, short=True)

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
        """The tree ended: every PENDING pause closed CANCELLED with its audit entry, the root's
        status, the pass's tool ``results``, and with ``release`` the lease given up, in one
        transaction. Returns the closed pauses, each ``is_sent`` as of its closing (tell the
        channel of those sent)."""
        values = self._status_values(status, at, output=output, error=error)
        if told:
            values["told_at"] = at
        sealed = self._sealed_results(results)
        if self._one_statement:
            if await self._tx.apply(
                _one_statement_end(root_execution_id, values, release, sealed), short=True
            ):
                return []  # nothing waited: nothing to close with an audit entry
            sealed = {}  # saved by the statement whichever way it went
        terms = closed_as(Cancelled())

        def body(connection: Connection) -> list[PauseRecord]:
            _save_results(connection, sealed)
            rows = direct.rows(
                connection,
                CLOSE_TREE_PAUSES,
                {"b_root": root_execution_id, "b_resolution": terms.resolution.value, "b_at": at},
            )
            was_pending = (r for r in rows if r._mapping["resolution"] == terms.resolution.value)
            closed = sorted((self._pause(row) for row in was_pending), key=_ask_order)
            if closed:
                connection.execute(
                    INSERT_AUDIT_ENTRY, [self._audit_entry(r, None, None) for r in closed]
                )
            direct.execute(
                connection, UPDATE_EXECUTION, {"b_execution_id": root_execution_id, **values}
            )
            if release is not None:
                release.release(connection)
            return closed

        return await self._tx.write(body, short=True)

    # ---------------------------------------------------------------- execution records

    async def get(self, execution_id: str) -> ExecutionRow | None:
        key = {"b_execution_id": execution_id}
        row = await self._tx.read(
            lambda connection: direct.first(connection, EXECUTION, key), short=True
        )
        return None if row is None else self._execution(row)

    async def set_status(
        self,
        execution_id: str,
        status: ExecutionStatus,
        at: datetime,
        *,
        output: Any | None = None,
        error: ExecutionFailure | None = None,
    ) -> None:
        values = {
            "b_execution_id": execution_id,
            **self._status_values(status, at, output=output, error=error),
        }
        await self._tx.apply(
            lambda connection: connection.execute(UPDATE_EXECUTION, values), short=True
        )

    async def list_executions_by_thread(self, tenant_id: str, thread_id: str) -> list[ExecutionRow]:
        return await self._executions(
            and_(executions.c.tenant_id == tenant_id, executions.c.thread_id == thread_id)
        )

    async def list_executions_by_root(self, root_execution_id: str) -> list[ExecutionRow]:
        return await self._executions(executions.c.root_execution_id == root_execution_id)

    async def find_pause_answers(self, tenant_id: str, root_execution_id: str) -> list[AuditRow]:
        statement = (
            select(pause_answers)
            .where(
                and_(
                    pause_answers.c.tenant_id == tenant_id,
                    pause_answers.c.root_execution_id == root_execution_id,
                )
            )
            .order_by(
                pause_answers.c.asked_at, pause_answers.c.ask_position, pause_answers.c.pause_seq
            )
        )
        rows = await self._tx.read(lambda connection: connection.execute(statement).all())
        return [self._audit(row) for row in rows]

    # ---------------------------------------------------------------- internals

    def _waiting_in(self, connection: Connection, root: str) -> tuple[PauseRecord, ...]:
        rows = direct.rows(connection, WAITING_IN_TREE, {"b_root": root})
        return tuple(self._pause(row) for row in rows)

    async def _write_inserting(self, body: Callable[[Connection], R]) -> R:
        """Run a body that inserts a row unless it finds it. Two callers may both not find it;
        the second insert then fails on the unique key, and the body, run again, finds the row.

        (Not ``INSERT ... ON CONFLICT DO NOTHING``: SQLAlchemy compiles the dialects' forms of
        it anew on every call, about 1 ms for the pause table.)
        """
        try:
            return await self._tx.write(body, short=True)
        except IntegrityError:
            return await self._tx.write(body, short=True)

    def _status_values(
        self,
        status: ExecutionStatus,
        at: datetime,
        *,
        output: Any | None,
        error: ExecutionFailure | None,
    ) -> dict[str, Any]:
        values: dict[str, Any] = {"status": status.value, "updated_at": at}
        if output is not None:
            values["output"] = self._codec.encode(output)
        if error is not None:
            values["error"] = self._codec.encode(error.message)  # may quote customer data
            values["error_code"] = error.code
        return values

    def _new_execution(self, new: NewExecution) -> dict[str, Any]:
        return {
            "execution_id": new.execution_id,
            "root_execution_id": new.root_execution_id,
            "parent_execution_id": new.parent_execution_id,
            "thread_id": new.thread_id,
            "tenant_id": new.tenant_id,
            "owner_id": new.owner_id,
            "workflow": new.workflow,
            "status": ExecutionStatus.RUNNING.value,
            "input": self._codec.encode(new.input),
            "created_at": new.created_at,
            "updated_at": new.created_at,
        }

    def _audit_entry(
        self, record: PauseRecord, answer: PauseAnswer | None, sealed_decision: str | None
    ) -> dict[str, Any]:
        """The values of the audit entry of a pause that was just closed."""
        shown_id = record.pause_id if record.answered_by is PauseAnswerer.THREAD_OWNER else None
        step = record.step
        return {
            "tenant_id": record.tenant_id,
            "root_execution_id": record.root_execution_id,
            "execution_id": record.execution_id,
            "idempotency_key": record.idempotency_key,
            "pause_id": shown_id,
            "step": self._codec.encode(
                {
                    "agent": step.agent,
                    "node": step.node,
                    "tool": step.tool,
                    "tool_call_id": step.tool_call_id,
                    "item_index": step.item_index,
                    "tool_loop_iteration": step.tool_loop_iteration,
                }
            ),
            "role": record.role,
            "answered_by": record.answered_by.value,
            "responder": None if answer is None else answer.responder,
            "resolution": record.resolution.value if record.resolution else "",
            "asked_at": record.asked_at,
            "resolved_at": record.resolved_at,
            "decision": sealed_decision,
            "pause_seq": record.seq,
            "ask_position": record.ask_position,
            "ran_with": None,
            "approvals": self._sealed_audit_approvals(record.approvals),
            "handovers": None
            if not record.handovers
            else self._codec.encode([h.to_json() for h in record.handovers]),
        }

    def _sealed_audit_approvals(self, approvals: Approvals) -> str | None:
        """The approvals of a closed pause for its audit entry (masked; no proposal kept)."""
        if not approvals.entries:
            return None
        return self._codec.encode([entry_json(e) for e in approvals.entries])

    async def _one(self, statement: Any, parameters: dict[str, str]) -> PauseRecord | None:
        return await self._tx.read(direct.OneStatement(statement, parameters, self._first_pause))

    async def _many(
        self, where: Any, *, newest_first: bool, limit: int | None = None, offset: int = 0
    ) -> list[PauseRecord]:
        order = [c.desc() for c in ASK_ORDER] if newest_first else list(ASK_ORDER)
        statement = select(pauses).where(where).order_by(*order)
        if limit is not None:
            statement = statement.limit(limit).offset(offset)
        rows = await self._tx.read(lambda connection: connection.execute(statement).all())
        return [self._pause(row) for row in rows]

    async def _executions(self, where: Any) -> list[ExecutionRow]:
        statement = select(executions).where(where).order_by(executions.c.created_at)
        rows = await self._tx.read(lambda connection: connection.execute(statement).all())
        return [self._execution(row) for row in rows]

    def _first_pause(self, rows: Sequence[direct.Mapped]) -> PauseRecord | None:
        return self._pause(rows[0]) if rows else None

    def _pause(self, row: direct.Mapped) -> PauseRecord:
        m = row._mapping
        answer = None
        if m["answer"] is not None:
            raw = self._codec.decode(m["answer"])
            answer = PauseAnswer(
                decision=raw.get("decision"), responder=raw.get("responder"), reply=raw.get("reply")
            )
        return PauseRecord(
            seq=m["id"],
            pause_id=m["pause_id"],
            tenant_id=m["tenant_id"],
            idempotency_key=m["idempotency_key"],
            root_execution_id=m["root_execution_id"],
            execution_id=m["execution_id"],
            thread_id=m["thread_id"],
            owner_id=m["owner_id"],
            interrupt_id=m["interrupt_id"],
            status=_member(PauseStatus, m["status"]),
            is_sent=bool(m["is_sent"]),
            resolution=_member(PauseResolution, m["resolution"]) if m["resolution"] else None,
            answered_by=_member(PauseAnswerer, m["answered_by"]),
            role=m["role"],
            channel=m["channel"],
            agent=m["agent"],
            ask=ToolCallApprovalAsk.model_validate(self._codec.decode(m["ask"])),
            node_id=m["node_id"],
            item_index=m["item_index"],
            child_execution_id=m["child_execution_id"],
            tool_loop_iteration=m["tool_loop_iteration"],
            answer=answer,
            tool_result=None if m["tool_result"] is None else self._codec.decode(m["tool_result"]),
            asked_at=m["asked_at"],
            resolved_at=m["resolved_at"],
            ask_position=m["ask_position"],
            closes_at=m["closes_at"],
            unread_reply=None
            if m["unread_reply"] is None
            else self._codec.decode(m["unread_reply"]),
            unread_by=m["unread_by"],
            nudge_at=m["nudge_at"],
            reminders_sent=m["reminders_sent"] or 0,
            escalated_at=m["escalated_at"],
            nudge_claimed_at=m["nudge_claimed_at"],
            trace_context=_carrier(m["trace_context"]),
            route=PauseRoute.decode(m.get("route")),
            approvals=Approvals(version=m["approvals_version"] or 0)
            if m["approvals"] is None
            else Approvals.from_json(
                self._codec.decode(m["approvals"]), version=m["approvals_version"] or 0
            ),
            handovers=self._handovers(m["handovers"]),
            row_version=m.get("row_version"),
        )

    def _handovers(self, sealed: str | None) -> tuple[Handover, ...]:
        if sealed is None:
            return ()
        return tuple(Handover.from_json(h) for h in self._codec.decode(sealed))

    def _execution(self, row: direct.Mapped) -> ExecutionRow:
        m = row._mapping
        return ExecutionRow(
            execution_id=m["execution_id"],
            root_execution_id=m["root_execution_id"],
            parent_execution_id=m["parent_execution_id"],
            thread_id=m["thread_id"],
            tenant_id=m["tenant_id"],
            owner_id=m["owner_id"],
            workflow=m["workflow"],
            status=_member(ExecutionStatus, m["status"]),
            input=self._codec.decode(m["input"]),
            output=None if m["output"] is None else self._codec.decode(m["output"]),
            error=_failure(
                m["error_code"], None if m["error"] is None else self._codec.decode(m["error"])
            ),
            created_at=m["created_at"],
            updated_at=m["updated_at"],
        )

    def _audit(self, row: Row[Any]) -> AuditRow:
        m = row._mapping
        step = self._codec.decode(m["step"])
        return AuditRow(
            pause_id=m["pause_id"],
            execution_id=m["execution_id"],
            step=StepRecord(**step),
            role=m["role"],
            answered_by=PauseAnswerer(m["answered_by"]),
            responder=m["responder"],
            resolution=PauseResolution(m["resolution"]),
            asked_at=m["asked_at"],
            resolved_at=m["resolved_at"],
            decision=None if m["decision"] is None else self._codec.decode(m["decision"]),
            ran_with=None if m["ran_with"] is None else self._codec.decode(m["ran_with"]),
            approvals=()
            if m["approvals"] is None
            else entries_of(self._codec.decode(m["approvals"])),
            handovers=self._handovers(m["handovers"]),
        )


_NOTHING_UNREAD: dict[str, Any] = {"unread_reply": None, "unread_by": None, "unread_at": None}


def _ask_order(record: PauseRecord) -> tuple[datetime, int, int]:
    """``ASK_ORDER`` for records in hand."""
    return (record.asked_at, record.ask_position or 0, record.seq)


def _to_continue(waiting: Sequence[PauseRecord]) -> bool:
    """Whether some pause waits to be continued by a pass (the drain's rule: it goes on while
    one does)."""
    return bool(interrupts_to_resume(waiting))


def _answers_as_read(
    known: PauseRecord | None, pause_id: str, tenant_id: str, lease: LeaseClaim
) -> TypeGuard[PauseRecord]:
    """Whether ``known`` is the waiting pause an answer closes, in the tree ``lease`` opens:
    then ``close_opening`` may compute its audit entry from it."""
    return (
        known is not None
        and known.status is PauseStatus.PENDING
        and known.pause_id == pause_id
        and known.tenant_id == tenant_id
        and known.root_execution_id == lease.root
    )


def _running(execution_id: str, at: datetime) -> dict[str, Any]:
    return {
        "b_execution_id": execution_id,
        "status": ExecutionStatus.RUNNING.value,
        "updated_at": at,
    }


def _carrier_text(carrier: Mapping[str, str] | None) -> str | None:
    """A question's trace context as stored: its W3C headers as compact JSON."""
    if not carrier:
        return None
    return json.dumps(dict(carrier), sort_keys=True, separators=(",", ":"))


E = TypeVar("E", bound=StrEnum)


def _member(kind: type[E], value: str) -> E:
    """The member of ``kind`` stored as ``value``, looked up in the enum's own map: a row
    read converts three or four, and ``Kind(value)`` (``EnumType.__call__`` and
    ``Enum.__new__``, in Python) cost 6,000 instructions each. An unknown value goes the
    ordinary way, which raises as it always did."""
    member = kind._value2member_map_.get(value)
    return cast(E, member) if member is not None else kind(value)


def _carrier(text: str | None) -> dict[str, str] | None:
    """The stored trace context; one that does not read as headers is as if none were kept
    (it only links spans: never worth failing an answer for)."""
    if text is None:
        return None
    try:
        read = json.loads(text)
    except ValueError:
        return None
    if not isinstance(read, dict):
        return None
    return {str(k): str(v) for k, v in read.items()}


def _one_statement_start(lease: LeaseClaim, values: dict[str, Any]) -> Callable[[Connection], bool]:
    """``start_tree``'s body as one statement (PostgreSQL): the lease taken, then the
    execution recorded only if it was (``one_statement.start_tree``)."""
    statement = one_statement.start_tree(tuple(values))
    parameters = {**lease_values(lease), **values}

    def started(rows: Sequence[direct.Mapped]) -> bool:
        row = rows[0]._mapping
        if not row["taken"]:
            return False
        holder = row["holder"]
        if holder is not None and holder != lease.owner:
            lease.took_over()
        return True

    return direct.OneStatement(statement, parameters, started)


def _one_statement_end(
    root_execution_id: str,
    values: dict[str, Any],
    release: LeaseClaim | None,
    sealed: Mapping[str, str],
) -> Callable[[Connection], bool]:
    """``end_tree``'s body as one statement (PostgreSQL) when no pause of the tree is PENDING;
    True if it ended the tree, False (nothing written but the ``sealed`` results) if one was."""
    statement = one_statement.end_tree_if_nothing_waits(
        tuple(values), release=release is not None, results=bool(sealed)
    )
    parameters: dict[str, Any] = {
        "b_root": root_execution_id,
        **values,
        **_result_arrays(sealed),
    }
    if release is not None:
        parameters.update(lease_values(release))

    return direct.OneStatement(statement, parameters, lambda rows: not rows[0]._mapping["waits"])


def _result_arrays(sealed: Mapping[str, str]) -> dict[str, list[str]]:
    """``one_statement``'s parameters for the results a last write carries (none: none)."""
    if not sealed:
        return {}
    return {"result_ids": list(sealed), "result_values": list(sealed.values())}


def _save_results(connection: Connection, sealed: Mapping[str, str]) -> None:
    """Each pause's tool result (sealed) written, as ``save_tool_result`` does."""
    if sealed:
        direct.execute(
            connection,
            UPDATE_PAUSE,
            [{"b_pause_id": pause_id, "tool_result": r} for pause_id, r in sealed.items()],
        )


def _live_attached(connection: Connection, new: NewExecution) -> str | None:
    """The live execution of the attached graph ``new`` starts on its thread, if any."""
    statement = select(executions.c.execution_id).where(
        and_(
            executions.c.tenant_id == new.tenant_id,
            executions.c.thread_id == new.thread_id,
            executions.c.workflow == new.workflow,
            LIVE_ATTACHED,
        )
    )
    found: str | None = connection.execute(statement).scalar_one_or_none()
    return found


def _failure(code: str | None, message: Any | None) -> ExecutionFailure | None:
    """An execution's failure as stored: its code beside its message (opened already)."""
    if message is None:
        return None
    if code is None:  # failed before v11: the code led the message, "[code] message"
        return _legacy_failure(str(message))
    return ExecutionFailure(code=code, message=str(message))


def _legacy_failure(text: str) -> ExecutionFailure:
    """A failure recorded before v11, as ``str(error)`` ("[pause.expired] nobody ...")."""
    code, bracketed, message = text.removeprefix("[").partition("] ")
    if text.startswith("[") and bracketed and code and " " not in code:
        return ExecutionFailure(code=code, message=message)
    return ExecutionFailure(code=ExecutionFailedError.code, message=text)
