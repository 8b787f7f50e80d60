"""``App``: the public API — create/close, execute, answer/resume, cancel, list_pending,
get_result, events. How it is put together is ``bot.wiring``; what it shows of the records,
``bot.runtime.views``; answering a pause, ``bot.runtime.answers``."""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from datetime import timedelta
from types import TracebackType
from typing import Any, Final, Self

from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.components.specs import ChannelRoleSpec, WorkflowSpec, spec_of
from bot.core import field_errors
from bot.core.answers import Answered, AnswerOutcome, ApprovalCounted
from bot.core.clock import Clock, TimerHandle, wait_with_timeout
from bot.core.delegations import Delegation, DelegationChange
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import ExecutionStatus, PauseAnswerer, PauseResolution
from bot.core.errors import (
    AppClosedError,
    CountersignError,
    DtoValidationError,
    UnknownThreadError,
)
from bot.core.grants import ArgumentConstraint, Grant, GrantScope
from bot.core.metrics import Metrics, Readiness
from bot.core.results import (
    EndTold,
    ExecutionPauseEvent,
    ExecutionResult,
    ExecutionResumeEvent,
    PauseView,
    PendingPause,
    ReceivedReply,
)
from bot.core.tracing import link_to, span
from bot.langgraph import LangGraphAgent
from bot.runtime import handovers
from bot.runtime.answers import (
    AnswerCheck,
    AnswerRequest,
    answer,
    answered_or_raise,
    named_answerer,
)
from bot.runtime.assembly import Assembly
from bot.runtime.attached_graphs import attach_graph
from bot.runtime.engine import PassReport
from bot.runtime.frame import RunFrame
from bot.runtime.grant_checks import MayGrant, give_grant, revoke_grant
from bot.runtime.handovers import PersonCheck
from bot.runtime.services import log
from bot.runtime.sweeps import Sweeps
from bot.security.derived import DerivedKeys
from bot.security.key_check import READY_NAME as KEYS_READY_NAME
from bot.settings import Settings
from bot.store.batch_lines import BatchLines
from bot.store.database import Database, database_failure
from bot.store.installations import SqlInstallations, SqlOAuthStates
from bot.store.outbox import SqlOutbox
from bot.store.records import NewExecution, ThreadBusy
from bot.store.repositories import MessageRefs
from bot.wiring import Wiring, wire

READY_TIMEOUT: Final = timedelta(seconds=2)
"""How long ``/readyz`` waits for the database before it says the instance is not ready."""

PauseHandler = Callable[[ExecutionPauseEvent], Awaitable[None] | None]
ResumeHandler = Callable[[ExecutionResumeEvent], Awaitable[None] | None]
DelegationHandler = Callable[[DelegationChange], Awaitable[None] | None]


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class App:
    """A running application. Create it with ``await App.create(Application, ...)``."""

    def __init__(self, wiring: Wiring, resources: AsyncExitStack) -> None:
        self._runtime = wiring.runtime
        self._engine = wiring.engine
        self._reply_models = wiring.reply_models
        self._views = wiring.views
        self._database = wiring.database
        self._message_refs = wiring.message_refs
        self._derived_keys = wiring.derived_keys
        self._checkpointer = wiring.checkpointer
        self._key_check = wiring.key_check
        self._installations = wiring.installations
        self._oauth_states = wiring.oauth_states
        self._outbox = wiring.outbox
        self._batch_lines = wiring.batch_lines
        self._resources = resources
        self._pause_handlers: list[PauseHandler] = []
        self._resume_handlers: list[ResumeHandler] = []
        self._delegation_handlers: list[DelegationHandler] = []
        self._sweeps = Sweeps(
            wiring.runtime,
            wiring.engine,
            wiring.views,
            emit_resume=self._emit_resume,
            read_kept=self.read_kept,
            tell_delegations=self._tell_untold_delegations,
        )
        self._sweep_timers: list[TimerHandle] = []
        self._sweep_interval = wiring.sweep_interval
        self._engine.ends_are_told = lambda: bool(self._resume_handlers)
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
        """Assemble (every rule checked at once), open the database, start the sweeps. A start
        that fails releases whatever it had opened."""
        async with AsyncExitStack() as stack:
            wiring = await wire(
                application,
                stack,
                database_url=database_url,
                clock=clock,
                settings=settings,
                services=services,
            )
            app = cls(wiring, stack.pop_all())
        app._sweep_timers = app._sweeps.start(wiring.sweep_interval)
        return app

    async def close(self) -> None:
        """Stop the sweeps and release the database; repeatable."""
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
        for timer in self._sweep_timers:
            timer.cancel()
        await self._resources.aclose()

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
    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        """The App's own LangGraph checkpointer: in its database, encrypted at rest like every
        record of the App. Compile a graph you attach (``App.langgraph``) with it when the graph
        has no durable checkpointer of its own; the graph's threads are the ``thread_id``s you
        invoke it with (the App's own graphs use execution ids, never yours)."""
        return self._checkpointer

    @property
    def message_refs(self) -> MessageRefs:
        """Where the channels' approval messages are (one per pause, in the App's store)."""
        return self._message_refs

    @property
    def installations(self) -> SqlInstallations:
        """A chat app's installations by OAuth (their tokens sealed by the App's key ring)."""
        return self._installations

    @property
    def oauth_states(self) -> SqlOAuthStates:
        """The OAuth states of installs under way (one use each)."""
        return self._oauth_states

    @property
    def sweep_interval(self) -> timedelta:
        """How often each sweep runs (``COUNTERSIGN_SWEEP_INTERVAL_SECONDS``, default 3 s); a
        channel's own retries (Slack's outbox) run on it too."""
        return self._sweep_interval

    @property
    def outbox(self) -> SqlOutbox:
        """What the channels owe people (notes, lines, updates, ends), until delivered: in the
        App's database, payloads sealed by its key ring."""
        return self._outbox

    @property
    def batch_lines(self) -> BatchLines:
        """What each person's last batch did, one line per question (Slack's App Home shows
        it): in the App's database, so it survives a restart; sealed by its key ring."""
        return self._batch_lines

    @property
    def derived_keys(self) -> DerivedKeys:
        """Keys derived from the App's encryption key ring, one per purpose, for what a channel
        signs (the web channel's links); they rotate with the ring."""
        return self._derived_keys

    @property
    def metrics(self) -> Metrics:
        """The App's metrics, on a registry of its own (``/metrics`` serves
        ``metrics.exposition()``); channels count their calls on it."""
        return self._runtime.metrics

    async def readiness(self) -> Readiness:
        """Whether this instance can take work (``/readyz``): open, its database answers a
        ``SELECT 1`` within ``READY_TIMEOUT``, and its encryption keys open what the database
        holds (``bot.security.key_check``: read again every 30 s on the App's clock)."""
        if self._state is _State.CLOSED:
            return Readiness(problems=(("app", "closed"),))
        problem = await self._within_ready_timeout(self._database.problem())
        if problem is not None:
            return Readiness(problems=(("database", problem),))
        try:
            keys = await self._within_ready_timeout(self._key_check.kept())
        except Exception as error:  # the database failed under the check: its problem
            reason = database_failure(error) or type(error).__name__
            return Readiness(problems=(("database", reason),))
        return Readiness(problems=() if keys is None else ((KEYS_READY_NAME, keys),))

    async def _within_ready_timeout(self, check: Awaitable[str | None]) -> str | None:
        try:
            return await wait_with_timeout(self.clock, check, READY_TIMEOUT)
        except TimeoutError:
            return f"no answer within {READY_TIMEOUT.total_seconds():g} s"

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
        """Called each time an answer moved a tree (``answered``: the answers that move gave
        it, ``result``: where the tree then stands): a channel updates its messages from it."""
        self._resume_handlers.append(handler)
        return handler

    def on_delegation(self, handler: DelegationHandler) -> DelegationHandler:
        """Called when a standing delegation starts or is ended early through this App
        (``DelegationChange``): a channel tells the delegate. A handler that raises is logged;
        the delegation stands (or ended) all the same, and the change is told again a minute
        later (every handler: each must take a change twice as once). Told at least once: a
        process that dies while telling leaves it to the sweep, which tells it with
        ``again`` set."""
        self._delegation_handlers.append(handler)
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
        payload = start_input.model_dump(mode="json")
        frame = self._new_root(spec.name, tenant_id, owner_id, thread_id or uuid.uuid4().hex)
        with span("execute", workflow=spec.name, execution_id=frame.execution_id):
            return await self._first_pass(frame, payload, {"input": payload}, record=record)

    def langgraph(
        self,
        name: str,
        graph: Pregel[Any, Any, Any, Any],
        *,
        role: type,
        tools: Sequence[BaseTool] = (),
        asked_tools: Sequence[str] | None = None,
        roles: Mapping[str, type] | None = None,
    ) -> LangGraphAgent:
        """Attach a compiled LangGraph graph of your own (``create_agent(...)`` or a
        ``StateGraph`` compiled with a checkpointer): its human-in-the-loop interrupts become
        pauses sent to ``role``'s channel (``bot.langgraph``), shown to the approver (and an
        edit checked) by the role's model, and the tool's own schema checks an edit too.

        The role's model must fit every tool the graph asks about (the tool's argument names
        are the model's fields, of compatible types), else ``AssemblyError``
        (``[langgraph.role-fit]``): the tools ``HumanInTheLoopMiddleware``'s ``interrupt_on``
        names, else every tool of the graph's tool nodes, or those named in ``asked_tools``.
        ``tools``: tools the graph asks about beside those (a ``request_approval`` of their
        name). ``roles``: the role asked about a tool apart from ``role`` (``{"wire":
        WireApproval}``: its model must fit that tool; it is asked about it too). Attach again
        after a restart, before answers come: until then its trees wait."""
        self._check_open()
        trees = attach_graph(self._runtime, name, graph, role, tools, asked_tools, roles)
        self._engine.attach(trees.workflow, trees)
        return LangGraphAgent(name, functools.partial(self._invoke_attached, trees.workflow))

    async def _invoke_attached(
        self,
        workflow: str,
        input: Any,
        *,
        thread_id: str,
        tenant_id: str,
        owner_id: str,
        record: bool,
    ) -> ExecutionResult:
        self._check_open()
        if not tenant_id or not owner_id or not thread_id:
            raise DtoValidationError("thread_id, tenant_id and owner_id must be non-empty")
        frame = self._new_root(workflow, tenant_id, owner_id, thread_id)
        payload = {"input": to_jsonable_python(input, fallback=repr)}
        try:
            return await self._first_pass(frame, payload, input, record=record)
        except ThreadBusy as busy:  # one live execution per thread (the store refuses another,
            # atomically across instances): invoking again runs and posts nothing
            result = await self._views.result(busy.execution_id, record=record)
            return dataclasses.replace(result, moved=False)

    def _new_root(self, workflow: str, tenant_id: str, owner_id: str, thread_id: str) -> RunFrame:
        execution_id = uuid.uuid4().hex
        return RunFrame(
            tenant_id=tenant_id,
            owner_id=owner_id,
            execution_id=execution_id,
            root_execution_id=execution_id,
            thread_id=thread_id,
            workflow=workflow,
        )

    async def _first_pass(
        self, frame: RunFrame, payload: dict[str, Any], graph_input: Any, *, record: bool
    ) -> ExecutionResult:
        """Record a new root execution, run it until it ends or rests, tell what it did."""
        execution_id, tenant_id = frame.execution_id, frame.tenant_id
        report = await self._engine.first_pass(
            frame,
            NewExecution(
                execution_id=execution_id,
                root_execution_id=execution_id,
                parent_execution_id=None,
                thread_id=frame.thread_id,
                tenant_id=tenant_id,
                owner_id=frame.owner_id,
                workflow=frame.workflow,
                input=payload,
                created_at=self._runtime.clock.now(),
            ),
            graph_input,
        )
        result = await self._result_of(execution_id, report, record=record, frame=frame)
        if report.taken:  # answers given while the first pass ran: their channels are told
            await self._emit_resume(
                ExecutionResumeEvent(
                    tenant_id=tenant_id,
                    thread_id=frame.thread_id,
                    execution_id=execution_id,
                    answered_by="",
                    resolution=PauseResolution.REPLIED,
                    answered=tuple(self._views.pause(r) for r in report.taken),
                )  # no result: the caller of execute says how the run went
            )
        if result.status.ended:  # its caller tells the end (it has the result in hand)
            await self._mark_told(execution_id)
        return await self._finish(result, report)

    async def answer(
        self,
        pause_id: str,
        *,
        tenant_id: str,
        by: str,
        decision: ToolCallApprovalDecision | Mapping[str, Any] | None = None,
        reply: str | None = None,
        may_answer: AnswerCheck | None = None,
        continue_run: bool = True,
        keep_model_replies: bool = False,
        may_answer_as: PersonCheck | None = None,
        shown_round: int | None = None,
        open_tree: bool = True,
    ) -> AnswerOutcome:
        """Answer a pause as ``by`` (its thread's owner or its channel's answerer: the pause
        says which), with a decision or a free-text reply; what became of it, as a closed union
        carrying the pause as it now is (``bot.core.answers``): refusals are outcomes, not
        exceptions. The pause is read once. The one answer path: every channel answers here,
        and ``resume`` is this path under the spec's name.

        ``may_answer``: the channel's own rule of who may answer (asked after the role's); a
        person it refuses may answer still when the question was reassigned to them
        (``reassign``), or under a standing delegation (``delegate``) of someone
        ``may_answer_as`` (the same rule, for any person) takes — never their own request.
        ``continue_run=False``: record only (phase 1; ``Answered.result`` is ``None``) and move
        the run on later with ``continue_answer`` — a webhook records before it acknowledges.
        ``keep_model_replies``: a reply the role reads with a model is kept unread
        (``ReplyKept``) to read after the acknowledgement with ``read_kept``.
        ``shown_round``: which proposal the person was shown (``PauseView.shown_round``), for a
        question that needs several approvals: one replaced since is ``ProposalChangedError``.
        ``open_tree``: an answer that resolves its question also opens its run for the
        continuation that follows in this process, in the same write (its lease, the run
        RUNNING: one write less), when no pass holds the run here; ``False`` keeps the write to
        the answer alone — a webhook acknowledging a burst of requests keeps the writes on its
        acknowledgements' path short, and the continuation opens the run after them."""
        request = AnswerRequest(
            pause_id=pause_id,
            tenant_id=tenant_id,
            by=by,
            decision=_given(decision),
            reply=reply,
            shown_round=shown_round,
        )
        with span("answer"):
            return await self._answer(
                request,
                may_answer=may_answer,
                may_answer_as=may_answer_as,
                continue_run=continue_run,
                keep_model_replies=keep_model_replies,
                open_tree=open_tree,
            )

    async def answer_all(
        self,
        pause_ids: Sequence[str],
        *,
        tenant_id: str,
        by: str,
        decision: ToolCallApprovalDecision | Mapping[str, Any],
        may_answer: AnswerCheck | None = None,
        may_answer_as: PersonCheck | None = None,
        continue_run: bool = True,
        shown_rounds: Mapping[str, int] | None = None,
        open_tree: bool = True,
    ) -> list[AnswerOutcome]:
        """Answer several questions at once with one decision ("Approve all", or a rejection
        with one reason each records): each goes the one answer path and settles its own pause
        (its own record, audit entry and outcome), in the order given; one answered elsewhere
        meanwhile is ``AlreadyClosed`` and skipped, never an error for the rest; an id given
        twice, or a retried call, answers each once. Then each run moves once, with all of its
        answers; every ``Answered`` carries where its run stands.

        ``continue_run=False``: record only (phase 1, as ``answer``'s) and move the runs on
        later with ``continue_answers`` (or ``continue_answer`` for one ``Answered`` per run: it
        moves with every answer recorded) — a webhook records before it acknowledges, and the
        runs (tools, models, channel calls) take longer than its caller waits.

        ``shown_rounds``: which proposal each question was shown with, by pause id
        (``PauseView.shown_round``), as ``answer``'s ``shown_round``: an approval of a question
        whose proposal an edit replaced since the batch was shown is ``ProposalChangedError``
        for that item, never counted for the new proposal. ``open_tree``: as ``answer``'s."""
        outcomes: list[AnswerOutcome] = []
        for pause_id in dict.fromkeys(pause_ids):  # each once, in the order given
            request = AnswerRequest(
                pause_id=pause_id,
                tenant_id=tenant_id,
                by=by,
                decision=_given(decision),
                reply=None,
                shown_round=None if shown_rounds is None else shown_rounds.get(pause_id),
            )
            with span("answer"):
                outcomes.append(
                    await self._answer(
                        request,
                        continue_run=False,
                        may_answer=may_answer,
                        may_answer_as=may_answer_as,
                        open_tree=open_tree,
                    )
                )
        if not continue_run:
            return outcomes
        return await self.continue_answers(outcomes)

    async def continue_answers(self, outcomes: Sequence[AnswerOutcome]) -> list[AnswerOutcome]:
        """Phase 2 of ``answer_all(..., continue_run=False)``: move each answered run on once,
        with all of its answers; one that fails leaves the others to go on. The outcomes, each
        ``Answered`` carrying where its run stands."""
        moved: dict[str, ExecutionResult | None] = {}
        for outcome in outcomes:
            if isinstance(outcome, Answered) and outcome.root_execution_id not in moved:
                try:
                    moved[outcome.root_execution_id] = await self.continue_answer(outcome)
                except CountersignError:  # that run failed after its answers: the others go on
                    moved[outcome.root_execution_id] = None
        return [
            dataclasses.replace(o, result=moved[o.root_execution_id])
            if isinstance(o, Answered)
            else o
            for o in outcomes
        ]

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
        """The spec's name for ``answer``: who answers is named by the spec's credentials
        (``owner_id`` for a THREAD_OWNER pause, ``answered_by`` for a CHANNEL pause; the other
        one, both or neither is ``PauseAnswererError``), the tree is moved on at once, and any
        outcome but ``Answered`` is raised as its error."""
        by, answering_as = named_answerer(owner_id, answered_by)
        request = AnswerRequest(
            pause_id=pause_id,
            tenant_id=tenant_id,
            by=by,
            decision=_given(decision),
            reply=reply,
            answering_as=answering_as,
        )
        with span("resume"):  # a refusal raised marks it failed, with the error's type
            answered = answered_or_raise(
                await self._answer(request, continue_run=True, record=record)
            )
        if isinstance(answered, ApprovalCounted):  # one of several approvals: nothing moved
            result = await self._views.result(answered.root_execution_id, record=record)
            return dataclasses.replace(result, moved=False)
        assert answered.result is not None  # continued
        return answered.result

    async def _answer(
        self,
        request: AnswerRequest,
        *,
        continue_run: bool,
        may_answer: AnswerCheck | None = None,
        may_answer_as: PersonCheck | None = None,
        keep_model_replies: bool = False,
        record: bool = False,
        open_tree: bool = True,
    ) -> AnswerOutcome:
        """The answer path under ``answer`` and ``resume`` (``bot.runtime.answers.answer``),
        the tree moved on when the answer was recorded and ``continue_run``."""
        self._check_open()
        outcome = await answer(
            self._runtime,
            self._reply_models,
            request,
            view=self._views.pause,
            may_answer=may_answer,
            may_answer_as=may_answer_as,
            keep_model_replies=keep_model_replies,
            opening=self._engine.guard,
            open_tree=open_tree,
        )
        if isinstance(outcome, Answered) and continue_run:
            result = await self.continue_answer(outcome, record=record)
            return dataclasses.replace(outcome, result=result)
        return outcome

    async def read_kept(
        self, received: ReceivedReply, *, continue_run: bool = True
    ) -> AnswerOutcome:
        """Read a reply kept by ``answer(..., keep_model_replies=True)`` and record what it
        says; a reply that says no answer is forgotten (``NotUnderstood``: the pause waits)."""
        by = received.owner_id if received.owner_id is not None else received.answered_by
        outcome = await self.answer(
            received.pause_id,
            tenant_id=received.tenant_id,
            by=by or "",
            reply=received.reply,
            continue_run=continue_run,
        )
        if not isinstance(outcome, Answered):
            await self._runtime.store.forget_reply(received.pause_id)
        return outcome

    async def continue_answer(self, recorded: Answered, *, record: bool = False) -> ExecutionResult:
        """Phase 2 of an answer: move the answered pause's tree on (with every other answer
        recorded meanwhile) and return where it stands — after ``answer(...,
        continue_run=False)``; if the process stops first, the recovery sweep does it."""
        self._check_open()
        pause = recorded.pause
        with span("continue", execution_id=recorded.root_execution_id):
            report = await self._engine.continue_tree(recorded.root_execution_id)
            for taken in report.taken:  # every question this move took: where it was asked
                link_to(taken.trace_context, why="asked")
        frame = RunFrame(
            tenant_id=pause.tenant_id,
            owner_id=pause.owner_id,
            execution_id=recorded.root_execution_id,
            root_execution_id=recorded.root_execution_id,
            thread_id=pause.thread_id,
            workflow="",
        )
        result = await self._result_of(
            recorded.root_execution_id, report, record=record, frame=frame
        )
        await self._emit_resume(
            ExecutionResumeEvent(
                tenant_id=pause.tenant_id,
                thread_id=pause.thread_id,
                execution_id=pause.execution_id,
                answered_by=recorded.answered_by,
                resolution=PauseResolution.REPLIED,  # an answer by resume is always a reply
                answered=await self._views.answers_told(
                    recorded.root_execution_id, report, every=report.cut_off
                ),
                result=result if report.ran else None,
                error=report.error,
            )
        )
        return await self._finish(result, report)

    async def cancel(
        self, thread_id: str, *, tenant_id: str, by: str | None = None
    ) -> list[ExecutionResult]:
        """Cancel a conversation: every unfinished execution of the thread; pauses withdrawn
        (``by``: who stopped it, told to their channels with each withdrawal)."""
        self._check_open()
        rows = await self._runtime.store.list_executions_by_thread(tenant_id, thread_id)
        roots = [row for row in rows if row.parent_execution_id is None]
        if not roots:
            raise UnknownThreadError(f"no execution of thread {thread_id} is known for this tenant")
        results = []
        for root in roots:
            await self._engine.cancel_tree(root, by=by)
            await self._mark_told(root.execution_id)
            results.append(await self._views.result(root.execution_id, record=False))
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
        return [self._views.pending(r, reveal=include_channel_pause_ids) for r in records]

    # ---------------------------------------------------------------- standing grants

    async def grant(
        self,
        *,
        tenant_id: str,
        role: type | str,
        tool: str,
        by: str,
        scope: GrantScope,
        expires_in: timedelta,
        constraint: ArgumentConstraint | None = None,
        max_uses: int | None = None,
        may_grant: MayGrant | None = None,
    ) -> Grant:
        """Give a standing grant: the next questions of ``role`` about ``tool`` in ``tenant_id``
        that ``scope`` and ``constraint`` cover are approved at once, until ``expires_in`` has
        passed, at most ``max_uses`` times. ``by`` is the approver who grants (``may_grant``:
        the channel's rule of who is an approver of the role). ``GrantRefusedError`` says why
        a grant is refused (the role offers no grants, or not this scope; ``by`` could not
        approve what it covers; a bound that is no number); nothing is stored then."""
        self._check_open()
        role_name = role if isinstance(role, str) else _role_name(role)
        return await give_grant(
            self._runtime,
            tenant_id=tenant_id,
            role=role_name,
            tool=tool,
            by=by,
            scope=scope,
            expires_in=expires_in,
            constraint=constraint,
            max_uses=max_uses,
            may_grant=may_grant,
        )

    async def list_grants(
        self, *, tenant_id: str | None, include_inactive: bool = False
    ) -> list[Grant]:
        """The grants of ``tenant_id`` (None: every tenant's), oldest first; the active ones
        unless ``include_inactive`` (expired, revoked and used-up ones too)."""
        self._check_open()
        return await self._runtime.grants.list_grants(
            tenant_id, now=self.clock.now(), include_inactive=include_inactive
        )

    async def revoke_grant(self, grant_id: str, *, tenant_id: str, by: str) -> Grant:
        """Revoke a grant: from the next question on, on every instance, it covers nothing.
        ``UnknownGrantError`` (``grant.unknown``) for an id the tenant has not."""
        self._check_open()
        return await revoke_grant(self._runtime, grant_id, tenant_id=tenant_id, by=by)

    # ---------------------------------------------------------------- handing questions on

    async def reassign(
        self,
        pause_id: str,
        *,
        tenant_id: str,
        by: str,
        to: str,
        may_answer: AnswerCheck | None = None,
    ) -> PauseView:
        """Hand a waiting CHANNEL question to ``to``: they may answer it from now on (the
        channel's rule notwithstanding), and whoever could answer still may. ``by`` must be able
        to answer it (``may_answer``: the channel's rule; or it was reassigned to them).
        Refused: the requester (``SelfApprovalError``), a closed question (``NotPausedError``).
        The handover is kept (``PauseView.handovers``, then the audit entry); telling ``to`` is
        the channel's."""
        self._check_open()
        return await handovers.reassign(
            self._runtime,
            pause_id,
            tenant_id=tenant_id,
            by=by,
            to=to,
            may_answer=may_answer,
            view=self._views.pause,
        )

    async def may_answer_as_delegate(
        self, pause: PauseView, person: str, *, may_answer_as: PersonCheck | None = None
    ) -> bool:
        """Whether ``person``, whom the channel's rule refuses, may answer ``pause`` all the
        same: it was reassigned to them, or a standing delegation of theirs is from someone
        ``may_answer_as`` takes (never their own request). For a channel's pages and modals;
        ``answer`` applies the same rule itself."""
        self._check_open()
        return await handovers.may_answer_as_delegate(self._runtime, pause, person, may_answer_as)

    async def delegate(
        self,
        *,
        tenant_id: str,
        delegator: str,
        delegate: str,
        ends_in: timedelta,
        by: str | None = None,
    ) -> Delegation:
        """A standing delegation: until ``ends_in`` has passed (on the App's clock),
        ``delegate`` may answer the questions, waiting and new, that ``delegator`` may answer
        (as the channel's rule says: ``App.answer(..., may_answer_as=)``) — never their own
        request, nor the delegator's."""
        self._check_open()
        delegation = await handovers.delegate(
            self._runtime,
            tenant_id=tenant_id,
            delegator=delegator,
            delegate=delegate,
            ends_in=ends_in,
            by=by,
        )
        await self._tell_delegation(DelegationChange(kind="started", delegation=delegation))
        return delegation

    async def list_delegations(
        self, *, tenant_id: str | None, include_ended: bool = False
    ) -> list[Delegation]:
        """The delegations of ``tenant_id`` (None: every tenant's), oldest first; the active
        ones unless ``include_ended``."""
        self._check_open()
        return await self._runtime.delegations.list_delegations(
            tenant_id, now=self.clock.now(), include_ended=include_ended
        )

    async def end_delegation(self, delegation_id: str, *, tenant_id: str, by: str) -> bool:
        """End a delegation now (on every instance, from the next answer on); False if the
        tenant has no such delegation or it ended already."""
        self._check_open()
        ended = await self._runtime.delegations.end(
            tenant_id, delegation_id, by=by, at=self.clock.now()
        )
        found = await self._runtime.delegations.get(tenant_id, delegation_id) if ended else None
        if found is not None:
            await self._tell_delegation(DelegationChange(kind="ended", delegation=found))
        return ended

    async def list_answered(
        self, *, tenant_id: str, responder: str, limit: int = 20
    ) -> list[PauseView]:
        """The pauses ``responder`` answered, latest answer first (a channel's "decided" list:
        what they answered, what ran). For channel implementations, like ``find_pause``."""
        self._check_open()
        records = await self._runtime.store.list_answered(tenant_id, responder, limit=limit)
        return [self._views.pause(r) for r in records]

    async def find_pause(self, pause_id: str, *, tenant_id: str) -> PauseView | None:
        """A pause as its channel's server side sees it (unmasked arguments); None if unknown.

        For channel implementations, not for showing to users.
        """
        self._check_open()
        record = await self._runtime.store.find(tenant_id, pause_id)
        return None if record is None else self._views.pause(record)

    async def get_result(
        self, execution_id: str, *, tenant_id: str, record: bool = False
    ) -> ExecutionResult:
        self._check_open()
        row = await self._runtime.store.get(execution_id)
        if row is None or row.tenant_id != tenant_id:
            raise UnknownThreadError(f"no execution {execution_id} is known for this tenant")
        return await self._views.result(row.root_execution_id, record=record)

    async def recover(self) -> int:
        """Continue the trees whose holder died (runs with the sweep); how many were continued.

        Each continued tree is told like any resume (``on_execution_resume``, ``by_sweep``,
        with its answers), so a channel brings its messages up to date after a crash."""
        return 0 if self._state is _State.CLOSED else await self._sweeps.recover()

    async def close_due(self) -> int:
        """Close the questions whose quorum deadline passed (runs with the sweep); how many
        trees were moved."""
        return 0 if self._state is _State.CLOSED else await self._sweeps.close_due()

    async def sweep(self) -> int:
        """The retention sweep: remove resolved pause records older than the window."""
        return 0 if self._state is _State.CLOSED else await self._sweeps.retention()

    # ---------------------------------------------------------------- internals

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
                f"the input is not a valid {start.input.__name__}: {field_errors.described(error)}",
                field_errors=field_errors.by_field(error),
            ) from None
        return spec, value

    async def _result_of(
        self, root_execution_id: str, report: PassReport, *, record: bool, frame: RunFrame
    ) -> ExecutionResult:
        """Where the tree stands after ``report``'s passes: as they left it when they know all
        of it, else read; ``moved`` False when the passes of this call did nothing."""
        known = None if record else self._views.known_result(frame, report)
        result = known or await self._views.result(root_execution_id, record=record)
        return result if report.ran else dataclasses.replace(result, moved=False)

    async def _finish(self, result: ExecutionResult, report: PassReport) -> ExecutionResult:
        """Tell a rest (``on_execution_pause``) and raise the failure that ended the run."""
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

    async def _emit_pause(self, event: ExecutionPauseEvent) -> None:
        for handler in self._pause_handlers:
            outcome = handler(event)
            if inspect.isawaitable(outcome):
                await outcome

    async def _tell_delegation(self, change: DelegationChange) -> None:
        """Tell ``change`` once (``handovers.tell``), if a channel listens here; else it stays
        owed for a process whose channels do (their sweep)."""
        if self._delegation_handlers:
            await handovers.tell(self._runtime, change, self._emit_delegation)

    async def _tell_untold_delegations(self) -> int:
        """The sweep: what delegates are owed (added or ended by the command line)."""
        if not self._delegation_handlers:
            return 0
        return await handovers.tell_untold(self._runtime, self._emit_delegation)

    async def _emit_delegation(self, change: DelegationChange) -> bool:
        """Tell the handlers; whether every one returned (else it is told again later)."""
        told = True
        for handler in self._delegation_handlers:
            try:
                outcome = handler(change)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as error:  # telling must not undo the delegation
                told = False
                log.warning(
                    "a delegation handler failed: %s (delegation_id=%s tenant_id=%s)",
                    type(error).__name__,
                    change.delegation.delegation_id,
                    change.delegation.tenant_id,
                )
        return told

    async def _mark_told(self, root_execution_id: str) -> None:
        """A run's end was told. (With nobody listening, its end was recorded told already.)"""
        if self._resume_handlers:
            await self._runtime.store.mark_told(root_execution_id, self.clock.now())

    async def _emit_resume(self, event: ExecutionResumeEvent) -> bool:
        """Tell the resume handlers; when the move ended the run and every handler returned,
        record that its end was told (else the sweep tells it again: ``Sweeps.tell_untold``).
        The last handler is given that record to carry in its own last write when every one
        before it returned (``ExecutionResumeEvent.end_told``): carried, it costs no write here.
        A handler that raises is logged and never fails the answer that moved the tree.
        Whether every handler returned."""
        result = event.result
        ends = result is not None and result.status.ended
        told, mark = True, None
        for index, handler in enumerate(self._resume_handlers):
            given = event
            if told and ends and index == len(self._resume_handlers) - 1:
                assert result is not None
                mark = EndTold(result.execution_id)
                given = dataclasses.replace(event, end_told=mark)
            try:
                outcome = handler(given)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as error:  # a channel's failure must not undo a recorded answer
                told = False
                log.warning(
                    "a resume handler failed: %s: %s (execution_id=%s tenant_id=%s)",
                    type(error).__name__,
                    error,
                    event.execution_id,
                    event.tenant_id,
                )
        if told and ends and not (mark is not None and mark.is_carried):
            assert result is not None
            await self._mark_told(result.execution_id)
        return told


def _given(
    decision: ToolCallApprovalDecision | Mapping[str, Any] | None,
) -> ToolCallApprovalDecision | dict[str, Any] | None:
    """A decision as the answer path takes it (a mapping copied: checked, never kept)."""
    return dict(decision) if isinstance(decision, Mapping) else decision


def _role_name(role: type) -> str:
    """The name of a ``@channel_role`` class (its class name for anything else: refused)."""
    spec = spec_of(role)
    return spec.name if isinstance(spec, ChannelRoleSpec) else getattr(role, "__name__", "?")
