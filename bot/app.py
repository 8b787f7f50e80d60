"""``App``: the public entry point — execute, resume, cancel, list_pending, events."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, Self

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.components.specs import AgentSpec, WorkflowSpec, spec_of
from bot.core.clock import Clock, SystemClock, TimerHandle
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import ExecutionStatus, PauseAnswerer, PauseResolution, PauseStatus
from bot.core.errors import (
    AppClosedError,
    CountersignError,
    DtoValidationError,
    NotPausedError,
    SettingsError,
    UnknownThreadError,
)
from bot.core.results import (
    ChildExecutionRecord,
    ExecutionPauseEvent,
    ExecutionRecord,
    ExecutionResult,
    ExecutionResumeEvent,
    PauseAuditEntry,
    PauseView,
    PendingPause,
    ReceivedReply,
    RecordedAnswer,
)
from bot.core.sensitive import mask_arguments
from bot.models import ModelProvider, resolve_chat_model
from bot.runtime.agent_graph import AgentLoop, build_agent_graph
from bot.runtime.answers import ResumeRequest, receive_reply, record_answer
from bot.runtime.assembly import Assembly, assemble
from bot.runtime.checkpoints import OpenCheckpointer, open_checkpointer
from bot.runtime.container import Container
from bot.runtime.engine import Engine, PassReport
from bot.runtime.frame import RunFrame
from bot.runtime.interpreting import ReplyModels
from bot.runtime.launch import GraphLookup
from bot.runtime.model_overrides import override_for
from bot.runtime.services import Runtime, log
from bot.runtime.tree_guard import TreeGuard
from bot.runtime.workflow_graph import build_workflow_graph
from bot.security.checkpoint_serde import encrypted_checkpoint_serde
from bot.security.codec import EncryptingCodec
from bot.security.key_source import key_source
from bot.settings import Settings, load_settings
from bot.store.database import Database, DatabaseUrl, DatabaseUrlError
from bot.store.leases import SqlLeases
from bot.store.ledger import SqlLedger
from bot.store.records import AuditRow, ExecutionRow, NewExecution, PauseRecord
from bot.store.sql import SqlStore

SWEEP_INTERVAL = timedelta(seconds=3)
"""The recovery and deadline sweeps' interval: with the lease's 8 s, a tree whose instance died
is continued within about 11 s (``python -m tests.benchmarks.recovery_time``)."""
UNREAD_GRACE = timedelta(seconds=60)
"""A reply kept unread this long was left by a process that died before reading it (reading
with a model takes seconds, not a minute): the sweep reads it."""
RETENTION_INTERVAL = timedelta(seconds=30)
"""The retention sweep runs with the tick that comes this long after its last run. (One timer:
a test clock that jumps days runs one tick, not one per interval of each of two timers.)"""

PauseHandler = Callable[[ExecutionPauseEvent], Awaitable[None] | None]
ResumeHandler = Callable[[ExecutionResumeEvent], Awaitable[None] | None]


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class App:
    """A running application. Create it with ``await App.create(Application, ...)``."""

    def __init__(
        self,
        *,
        runtime: Runtime,
        engine: Engine,
        providers: Sequence[ModelProvider],
        reply_models: ReplyModels,
        checkpointer: OpenCheckpointer,
        database: Database,
    ) -> None:
        self._runtime = runtime
        self._engine = engine
        self._providers = list(providers)
        self._reply_models = reply_models
        self._checkpointer = checkpointer
        self._database = database
        self._pause_handlers: list[PauseHandler] = []
        self._resume_handlers: list[ResumeHandler] = []
        self._sweep_timer: TimerHandle | None = None
        self._retained_at: datetime | None = None  # the retention sweep's last run
        self._state = _State.OPEN

    # ---------------------------------------------------------------- lifecycle

    @classmethod
    async def create(
        cls,
        application: type,
        *,
        database_url: str | None = None,
        clock: Clock | None = None,
        settings: Settings | None = None,
        services: Mapping[type, object] | None = None,
    ) -> App:
        """Assemble (every rule checked at once), open the database, start the sweeps."""
        settings = settings or load_settings()
        spec = spec_of(application)
        providers: list[ModelProvider] = [
            *getattr(spec, "providers", ()),
            *settings.model_providers(),
        ]
        assembly = assemble(application, providers)
        clock = clock or SystemClock()
        try:
            url = DatabaseUrl.checked(database_url or settings.database_url)
        except DatabaseUrlError as error:
            raise SettingsError(f"DATABASE_URL: {error}") from None
        keys = key_source(url, settings.countersign_encryption_keys)  # refuses a start at once
        database = Database.open(url)
        checkpointer: OpenCheckpointer | None = None
        try:
            await database.migrate(clock.now())
            # after the database opened: a failed start leaves no key
            ring = await keys.load(holds_rows=database.holds_rows)
            checkpointer = await open_checkpointer(url, serde=encrypted_checkpoint_serde(ring))
        except BaseException:
            if checkpointer is not None:
                await checkpointer.close()
            await database.close()
            raise
        runtime = Runtime(
            store=SqlStore(database, EncryptingCodec(ring)),
            clock=clock,
            container=Container(services),
            assembly=assembly,
        )

        def chat_model_for(component: type, model: Any) -> BaseChatModel:
            return _chat_model_for(component, model, providers)

        graphs = _build_graphs(runtime, assembly, checkpointer, chat_model_for)
        app = cls(
            runtime=runtime,
            engine=Engine(
                runtime,
                graphs,
                TreeGuard(SqlLeases(database), clock, owner=f"instance-{uuid.uuid4().hex}"),
            ),
            providers=providers,
            reply_models=ReplyModels.of_app(providers, chat_model_for, SqlLedger(database)),
            checkpointer=checkpointer,
            database=database,
        )
        app._sweep_timer = clock.call_every(SWEEP_INTERVAL, app._sweep_tick)
        return app

    async def close(self) -> None:
        """Stop the sweeps and release the database; repeatable."""
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
        if self._sweep_timer is not None:
            self._sweep_timer.cancel()
        await self._checkpointer.close()
        await self._database.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _check_open(self) -> None:
        if self._state is _State.CLOSED:
            raise AppClosedError("this App was closed; create a new one")

    @property
    def assembly(self) -> Assembly:
        return self._runtime.assembly

    @property
    def clock(self) -> Clock:
        return self._runtime.clock

    @property
    def database(self) -> Database:
        """The App's database, for channel state that must live beside it (Slack's)."""
        return self._database

    @property
    def sql_engine(self) -> AsyncEngine:
        """The App's database engine (``database.engine``)."""
        return self._database.engine

    def provide(self, cls: type, instance: object) -> None:
        """Provide the instance of a service named in components' ``deps`` (e.g. a Slack client)."""
        self._runtime.container.provide(cls, instance)

    # ---------------------------------------------------------------- events

    def on_execution_pause(self, handler: PauseHandler) -> PauseHandler:
        """Called each time an execution rests with pauses waiting; usable as a decorator."""
        self._pause_handlers.append(handler)
        return handler

    def on_execution_resume(self, handler: ResumeHandler) -> ResumeHandler:
        self._resume_handlers.append(handler)
        return handler

    # ---------------------------------------------------------------- the API

    async def execute(
        self,
        workflow: type,
        input: BaseModel | Mapping[str, Any],
        *,
        tenant_id: str,
        owner_id: str,
        thread_id: str | None = None,
        record: bool = False,
    ) -> ExecutionResult:
        """Run ``workflow`` until it finishes or rests with pauses waiting."""
        self._check_open()
        spec, start_input = self._workflow_input(workflow, input)
        if not tenant_id or not owner_id:
            raise DtoValidationError("tenant_id and owner_id must be non-empty")
        execution_id = uuid.uuid4().hex
        frame = RunFrame(
            tenant_id=tenant_id,
            owner_id=owner_id,
            execution_id=execution_id,
            root_execution_id=execution_id,
            thread_id=thread_id or uuid.uuid4().hex,
            workflow=spec.name,
        )
        payload = start_input.model_dump(mode="json")
        report = await self._engine.first_pass(
            frame,
            NewExecution(
                execution_id=execution_id,
                root_execution_id=execution_id,
                parent_execution_id=None,
                thread_id=frame.thread_id,
                tenant_id=tenant_id,
                owner_id=owner_id,
                workflow=spec.name,
                input=payload,
                created_at=self._runtime.clock.now(),
            ),
            {"input": payload},
        )
        return await self._finish_call(execution_id, report, record=record, frame=frame)

    async def resume(
        self,
        pause_id: str,
        *,
        tenant_id: str,
        decision: ToolCallApprovalDecision | Mapping[str, Any] | None = None,
        reply: str | None = None,
        owner_id: str | None = None,
        answered_by: str | None = None,
        record: bool = False,
    ) -> ExecutionResult:
        """Answer a pause by its id (a decision or a free-text reply) and move its tree on."""
        recorded = await self.record_answer(
            pause_id,
            tenant_id=tenant_id,
            decision=decision,
            reply=reply,
            owner_id=owner_id,
            answered_by=answered_by,
        )
        return await self.continue_answer(recorded, record=record)

    async def record_answer(
        self,
        pause_id: str,
        *,
        tenant_id: str,
        decision: ToolCallApprovalDecision | Mapping[str, Any] | None = None,
        reply: str | None = None,
        owner_id: str | None = None,
        answered_by: str | None = None,
    ) -> RecordedAnswer:
        """Phase 1 of ``resume``: check who answers and the answer, and record it (the pause
        goes PENDING → RESOLVED atomically; every refusal of ``resume`` is raised here, the pause
        untouched). Short: a webhook calls it before it acknowledges, so an acknowledged answer
        is never lost; then ``continue_answer``."""
        self._check_open()
        request = ResumeRequest(
            pause_id=pause_id,
            tenant_id=tenant_id,
            decision=dict(decision) if isinstance(decision, Mapping) else decision,
            reply=reply,
            owner_id=owner_id,
            answered_by=answered_by,
        )
        pause = await record_answer(self._runtime, request, self._reply_models)
        return RecordedAnswer(
            pause=self._view(pause),
            root_execution_id=pause.root_execution_id,
            answered_by=owner_id or answered_by or "",
        )

    async def receive_reply(
        self,
        pause_id: str,
        *,
        tenant_id: str,
        reply: str,
        owner_id: str | None = None,
        answered_by: str | None = None,
    ) -> ReceivedReply:
        """Keep a free-text reply to read later: who answers and that the pause waits are
        checked (refusals raised as by ``resume``), the reply is stored, not read. A webhook
        whose reply interpreter is a model calls it before it acknowledges, then ``read_reply``;
        a reply never read is read by the recovery sweep."""
        self._check_open()
        request = ResumeRequest(
            pause_id=pause_id,
            tenant_id=tenant_id,
            decision=None,
            reply=reply,
            owner_id=owner_id,
            answered_by=answered_by,
        )
        await receive_reply(self._runtime, request)
        return ReceivedReply(
            pause_id=pause_id,
            tenant_id=tenant_id,
            reply=reply,
            owner_id=owner_id,
            answered_by=answered_by,
        )

    async def read_reply(self, received: ReceivedReply) -> RecordedAnswer:
        """Read a kept reply with the role's interpreter and record the answer (phase 1); a
        reply that cannot be read raises as ``resume`` would, and is forgotten (the pause keeps
        waiting for a clearer answer)."""
        self._check_open()
        try:
            return await self.record_answer(
                received.pause_id,
                tenant_id=received.tenant_id,
                reply=received.reply,
                owner_id=received.owner_id,
                answered_by=received.answered_by,
            )
        except NotPausedError:
            raise
        except CountersignError:
            await self._runtime.store.forget_reply(received.pause_id)
            raise

    async def read_unread(self) -> int:
        """Read the replies kept more than ``UNREAD_GRACE`` ago and never read (their process
        died), and move their trees on (runs with the sweep); how many were read."""
        if self._state is _State.CLOSED:
            return 0
        store = self._runtime.store
        read = 0
        for record in await store.unread_replies(self._runtime.clock.now() - UNREAD_GRACE):
            assert record.unread_reply is not None and record.unread_by is not None
            owners = record.answered_by is PauseAnswerer.THREAD_OWNER
            received = ReceivedReply(
                pause_id=record.pause_id,
                tenant_id=record.tenant_id,
                reply=record.unread_reply,
                owner_id=record.unread_by if owners else None,
                answered_by=None if owners else record.unread_by,
            )
            try:
                recorded = await self.read_reply(received)
            except CountersignError as error:
                log.warning(
                    "recovery: a kept reply was not taken: %s (execution_id=%s tenant_id=%s)",
                    error.code,
                    record.execution_id,
                    record.tenant_id,
                )
                continue
            await self.continue_answer(recorded)
            read += 1
        return read

    async def continue_answer(
        self, recorded: RecordedAnswer, *, record: bool = False
    ) -> ExecutionResult:
        """Phase 2 of ``resume``: move the answered pause's tree on (with every other answer
        recorded meanwhile) and return where it stands."""
        self._check_open()
        pause = recorded.pause
        report = await self._engine.continue_tree(recorded.root_execution_id)
        await self._emit_resume(
            ExecutionResumeEvent(
                tenant_id=pause.tenant_id,
                thread_id=pause.thread_id,
                execution_id=pause.execution_id,
                answered_by=recorded.answered_by,
                resolution=PauseResolution.REPLIED,  # an answer by resume is always a reply
            )
        )
        frame = RunFrame(
            tenant_id=pause.tenant_id,
            owner_id=pause.owner_id,
            execution_id=recorded.root_execution_id,
            root_execution_id=recorded.root_execution_id,
            thread_id=pause.thread_id,
            workflow="",
        )
        return await self._finish_call(
            recorded.root_execution_id, report, record=record, frame=frame
        )

    async def cancel(self, thread_id: str, *, tenant_id: str) -> list[ExecutionResult]:
        """Cancel a conversation: every unfinished execution of the thread; pauses withdrawn."""
        self._check_open()
        rows = await self._runtime.store.list_executions_by_thread(tenant_id, thread_id)
        roots = [row for row in rows if row.parent_execution_id is None]
        if not roots:
            raise UnknownThreadError(f"no execution of thread {thread_id} is known for this tenant")
        results = []
        for root in roots:
            await self._engine.cancel_tree(root)
            results.append(await self._result(root.execution_id, record=False))
        return results

    async def list_pending(
        self,
        *,
        tenant_id: str,
        answered_by: PauseAnswerer | None = None,
        owner_id: str | None = None,
        roles: Sequence[str] | None = None,
        limit: int = 100,
        offset: int = 0,
        include_channel_pause_ids: bool = False,
    ) -> list[PendingPause]:
        """Waiting pauses of a tenant, newest first, filtered by who may answer them.

        A CHANNEL pause's id is left out unless ``include_channel_pause_ids`` — meant only for
        the channel's own server side (the Slack bot's /pending), never for what users see.
        """
        self._check_open()
        records = await self._runtime.store.list_pending(
            tenant_id,
            answered_by=answered_by,
            owner_id=owner_id,
            roles=roles,
            limit=limit,
            offset=offset,
        )
        return [self._pending(r, reveal=include_channel_pause_ids) for r in records]

    async def find_pause(self, pause_id: str, *, tenant_id: str) -> PauseView | None:
        """A pause as its channel's server side sees it (unmasked arguments); None if unknown.

        For channel implementations (a Slack click handler deciding who may click and how to
        update the message), not for showing to users.
        """
        self._check_open()
        record = await self._runtime.store.find(tenant_id, pause_id)
        return None if record is None else self._view(record)

    async def get_result(
        self, execution_id: str, *, tenant_id: str, record: bool = False
    ) -> ExecutionResult:
        self._check_open()
        row = await self._runtime.store.get(execution_id)
        if row is None or row.tenant_id != tenant_id:
            raise UnknownThreadError(f"no execution {execution_id} is known for this tenant")
        return await self._result(row.root_execution_id, record=record)

    async def recover(self) -> int:
        """Continue the trees whose holder died (runs with the sweep); how many were continued.

        Each continued tree is told like any resume (``on_execution_resume``, ``recovered``),
        so a channel brings its messages up to date after a crash too."""
        if self._state is _State.CLOSED:
            return 0
        recovered = await self._engine.recover()
        await self._tell_moved(recovered, PauseResolution.REPLIED)
        return len(recovered)

    async def close_due(self) -> int:
        """Close the questions whose quorum deadline passed (runs with the sweep); how many
        trees were moved."""
        if self._state is _State.CLOSED:
            return 0
        moved = await self._engine.close_due()
        await self._tell_moved(moved, PauseResolution.WITHDRAWN)
        return len(moved)

    async def sweep(self) -> int:
        """The retention sweep: remove resolved pause records older than the window."""
        if self._state is _State.CLOSED:
            return 0
        retention = self._runtime.assembly.application.pause_record_retention
        cutoff = self._runtime.clock.now() - retention
        removed = await self._runtime.store.delete_resolved_before(cutoff)
        if removed:
            log.info("retention sweep removed %d resolved pause records", removed)
        return removed

    # ---------------------------------------------------------------- internals

    async def _tell_moved(self, roots: Sequence[ExecutionRow], resolution: PauseResolution) -> None:
        """A tree moved by a sweep, not by a caller: its resume event, so channels catch up."""
        for root in roots:
            await self._emit_resume(
                ExecutionResumeEvent(
                    tenant_id=root.tenant_id,
                    thread_id=root.thread_id,
                    execution_id=root.execution_id,
                    answered_by="",
                    resolution=resolution,
                    by_sweep=True,
                )
            )

    async def _sweep_tick(self) -> None:
        await _sweep("unread replies", self.read_unread)
        await _sweep("recovery", self.recover)
        await _sweep("deadline", self.close_due)
        now = self._runtime.clock.now()
        if self._retained_at is None or now - self._retained_at >= RETENTION_INTERVAL:
            self._retained_at = now
            await _sweep("retention", self.sweep)

    def _workflow_input(
        self, workflow: type, input: BaseModel | Mapping[str, Any]
    ) -> tuple[WorkflowSpec, BaseModel]:
        spec = self._runtime.assembly.workflows.get(workflow)
        if spec is None:
            raise DtoValidationError(
                f"{getattr(workflow, '__name__', workflow)!s} is not a workflow of this application"
            )
        flow = self._runtime.assembly.flows[workflow]
        start = self._runtime.assembly.starts[flow.start]
        try:
            if isinstance(input, BaseModel):
                value = start.input.model_validate(input.model_dump())
            else:
                value = start.input.model_validate(dict(input))
        except ValidationError as error:
            raise DtoValidationError(
                f"the input is not a valid {start.input.__name__}: {error.errors()}"
            ) from None
        return spec, value

    async def _finish_call(
        self,
        root_execution_id: str,
        report: PassReport,
        *,
        record: bool,
        frame: RunFrame | None = None,
    ) -> ExecutionResult:
        known = None if record or frame is None else _known_result(frame, report, self._pending)
        result = known or await self._result(root_execution_id, record=record)
        if not report.ran:
            result = dataclasses.replace(result, moved=False)
        if report.ran and result.status is ExecutionStatus.PAUSED:
            await self._emit_pause(
                ExecutionPauseEvent(
                    tenant_id=result.tenant_id,
                    thread_id=result.thread_id,
                    execution_id=result.execution_id,
                    pending=result.pending,
                )
            )
        if report.error is not None:
            raise report.error
        return result

    async def _result(self, root_execution_id: str, *, record: bool) -> ExecutionResult:
        store = self._runtime.store
        row = await store.get(root_execution_id)
        if row is None:
            raise UnknownThreadError(f"no execution {root_execution_id}")
        pending = (
            []  # an ended tree closed whatever waited
            if row.status.ended
            else [
                self._pending(r)
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
            record=await self._record(row) if record else None,
            tenant_id=row.tenant_id,
        )

    async def _record(self, row: ExecutionRow) -> ExecutionRecord:
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
            spend=await self._reply_models.ledger.execution_spend(row.tenant_id, row.execution_id),
            pauses=entries,
            children=_children_of(row.execution_id, rows, entries),
        )

    def _view(self, record: PauseRecord) -> PauseView:
        return PauseView(
            pause_id=record.pause_id,
            status=record.status,
            resolution=record.resolution,
            answered_by=record.answered_by,
            role=record.role,
            channel=record.channel,
            agent=record.agent,
            ask=record.ask,
            tool_input=self._tool_input(record.ask.tool),
            tool_description=self._tool_description(record.ask.tool),
            owner_id=record.owner_id,
            thread_id=record.thread_id,
            execution_id=record.execution_id,
            tenant_id=record.tenant_id,
            responder=record.answer.responder if record.answer else None,
            decision=record.answer.decision if record.answer else None,
            asked_at=record.asked_at.isoformat(),
        )

    def _tool_input(self, tool: str) -> type[BaseModel] | None:
        binding = self._runtime.assembly.tool_named(tool)
        return None if binding is None else binding.spec.input

    def _tool_description(self, tool: str) -> str:
        binding = self._runtime.assembly.tool_named(tool)
        return "" if binding is None else binding.spec.description

    def _pending(self, record: PauseRecord, *, reveal: bool = False) -> PendingPause:
        tool_input = self._tool_input(record.ask.tool)
        ask = record.ask.model_copy(
            update={"arguments": mask_arguments(tool_input, record.ask.arguments)}
        )
        owners = record.answered_by is PauseAnswerer.THREAD_OWNER
        shown = record.pause_id if owners or reveal else None
        return PendingPause(
            pause_id=shown,
            answered_by=record.answered_by,
            agent=record.agent,
            channel=record.role,
            ask=ask,
            execution_id=record.execution_id,
            thread_id=record.thread_id,
            asked_at=record.asked_at.isoformat(),
            item_index=record.item_index,
            child_execution_id=record.child_execution_id,
            owner_id=record.owner_id,
        )

    async def _emit_pause(self, event: ExecutionPauseEvent) -> None:
        for handler in self._pause_handlers:
            outcome = handler(event)
            if inspect.isawaitable(outcome):
                await outcome

    async def _emit_resume(self, event: ExecutionResumeEvent) -> None:
        for handler in self._resume_handlers:
            outcome = handler(event)
            if inspect.isawaitable(outcome):
                await outcome


async def _sweep(name: str, sweep: Callable[[], Awaitable[int]]) -> None:
    try:
        await sweep()
    except Exception as error:  # a sweep that fails is retried at the next tick
        log.warning("%s sweep failed: %s: %s", name, type(error).__name__, error)


def _known_result(
    frame: RunFrame, report: PassReport, pending_of: Callable[[PauseRecord], PendingPause]
) -> ExecutionResult | None:
    """The result as the passes left it, when they know all of it (no read back)."""
    if not report.ran or report.status is None or report.waiting is None:
        return None
    if report.status is ExecutionStatus.PAUSED and not report.waiting:
        return None  # resting with nothing pending is odd: read what the store says
    return ExecutionResult(
        thread_id=frame.thread_id,
        execution_id=frame.root_execution_id,
        status=report.status,
        output=report.output,
        pending=[pending_of(r) for r in report.waiting],
        tenant_id=frame.tenant_id,
    )


def _audit_entry(e: AuditRow) -> PauseAuditEntry:
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
        )
        for child in rows
        if child.parent_execution_id == parent
    ]


def _chat_model_for(
    component: type, model: Any, providers: Sequence[ModelProvider]
) -> BaseChatModel:
    override = override_for(component)
    if override is not None:
        return override  # type: ignore[no-any-return]
    return resolve_chat_model(model, providers)


def _build_graphs(
    runtime: Runtime,
    assembly: Assembly,
    checkpointer: OpenCheckpointer,
    chat_model_for: Callable[[type, Any], BaseChatModel],
) -> dict[str, Any]:
    """Root graphs by workflow name; agents and children are found through one lookup."""
    lookup = GraphLookup()
    for agent_cls, agent_spec in assembly.agents.items():
        bindings = {assembly.tools[t].spec.name: assembly.tools[t] for t in agent_spec.tools}
        loop = AgentLoop(runtime, agent_spec, chat_model_for(agent_cls, agent_spec.model), bindings)
        lookup.loops[agent_cls] = loop
        lookup.agents[agent_cls] = build_agent_graph(loop)
    roots = {}
    for workflow_cls, workflow_spec in assembly.workflows.items():
        flow = assembly.flows[workflow_cls]
        assert flow.finish is not None
        finish = assembly.finishes[flow.finish]
        agents = _agents(assembly)
        lookup.children[workflow_cls] = build_workflow_graph(
            runtime, workflow_spec, flow, agents, lookup, finish, None
        )
        roots[workflow_spec.name] = build_workflow_graph(
            runtime, workflow_spec, flow, agents, lookup, finish, checkpointer.saver
        )
    return roots


def _agents(assembly: Assembly) -> dict[type, AgentSpec]:
    return dict(assembly.agents)
