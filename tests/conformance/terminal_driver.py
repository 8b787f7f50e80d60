"""The terminal channel worked as its desk works it: the question read from the channel's
output stream, the answer given through ``App.answer`` as the person at the prompt (the
thread's owner), what a refusal says read from its outcome."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

from bot import App, ExecutionResult, Settings, WorkflowStartText
from bot.core.answers import (
    Answered,
    AnswerOutcome,
)
from bot.testing import FakeClock, mock_llm
from channels.kit.said import said_of
from channels.terminal import TerminalOutput
from tests.conformance.behind import (
    GRAPH_TOOL,
    LARGE_REFUND_ARGUMENTS,
    REFUND_ARGUMENTS,
    REQUEST,
    Behind,
    NativeQuestion,
)
from tests.conformance.driver import (
    Answer,
    Asked,
    Capability,
    Kind,
    People,
    Scenario,
    Shown,
    Told,
    Waiting,
)
from tests.conformance.terminal_office import (
    YOU,
    PayOutTool,
    RefundApprovalChannel,
    RefundCardTool,
    TerminalOfficeAgent,
    TerminalOfficeApplication,
    TerminalOfficeWorkflow,
)
from tests.office import Ledger

TENANT = "desk"
HOUR = timedelta(hours=1)
REFUND = NativeQuestion(
    tool=RefundCardTool, arguments=REFUND_ARGUMENTS, ran_as="refund", owner=YOU, approver=YOU
)
QUESTIONS: Mapping[Scenario, NativeQuestion] = {
    Scenario.REFUND: REFUND,
    Scenario.LARGE_REFUND: dataclasses.replace(REFUND, arguments=LARGE_REFUND_ARGUMENTS),
    Scenario.OWNERS: REFUND,  # every question of the terminal is its owner's
    Scenario.TIMED: NativeQuestion(
        tool=PayOutTool,
        arguments={"payee": "Dana", "amount": 9},
        ran_as="payout",
        owner=YOU,
        approver=YOU,
    ),
}
_KINDS: Mapping[str, Kind] = {
    "approve": Kind.APPROVE,
    "reject": Kind.REJECT,
    "edit": Kind.EDIT,
    "answer instead": Kind.RESPOND,
}
"""The answers the terminal's ``Answers:`` line names."""
ONE_PERSON = "the terminal asks the person at its prompt, who owns the thread: there is nobody else"


class TerminalDriver:
    name: ClassVar[str] = "terminal"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.RESPOND,
            Capability.LIMITED_OFFERS,
            Capability.REMIND,
            Capability.EXPIRE,
            Capability.WITHDRAW,
        }
    )
    missing: ClassVar[Mapping[Capability, str]] = {
        Capability.APPROVERS: ONE_PERSON,
        Capability.SEPARATION_OF_DUTIES: ONE_PERSON,
        Capability.ESCALATE: f"nobody to escalate to ({ONE_PERSON})",
        Capability.WAITING_LIST: "the terminal lists nothing: it asks each question at its prompt",
    }
    people: ClassVar[People] = People(requester=YOU, stranger="someone-else")

    def __init__(self, app: App, behind: Behind, clock: FakeClock, stream: io.StringIO) -> None:
        self.app = app
        self.behind = behind
        self.clock = clock
        self.stream = stream
        self._from: dict[str, int] = {}  # pause id -> where its lines start in the stream

    def lines(self, start: int = 0) -> list[str]:
        return self.stream.getvalue()[start:].splitlines()

    async def ask(
        self,
        scenario: Scenario,
        *,
        allowed: Sequence[Kind] = (Kind.APPROVE, Kind.EDIT, Kind.REJECT),
        final: str = "all done",
    ) -> Asked:
        start = len(self.stream.getvalue())
        if scenario in (Scenario.GRAPH, Scenario.GRAPH_WITH_SECRET):
            secret = scenario is Scenario.GRAPH_WITH_SECRET
            result = await self.behind.attach_graph(
                RefundApprovalChannel, allowed, owner=YOU, secret=secret
            )
            tool = GRAPH_TOOL
        else:
            question = QUESTIONS[scenario]

            async def run(owner: str) -> ExecutionResult:
                start = WorkflowStartText(text=REQUEST)
                return await self.app.execute(
                    TerminalOfficeWorkflow, start, tenant_id=TENANT, owner_id=owner
                )

            result = await self.behind.ask_native(question, run, final=final)
            tool = question.tool_name
        pause_id = result.pending[0].pause_id
        assert pause_id is not None  # a THREAD_OWNER pause is listed with its id
        self._from[pause_id] = start
        if scenario is Scenario.TIMED:
            await self.clock.advance(timedelta(seconds=5))  # just after a sweep's tick
        return self.behind.keep(scenario, result, pause_id=pause_id, tool=tool, approver=YOU)

    async def shown(self, asked: Asked, *, to: str | None = None) -> Shown:
        """Every line the terminal wrote since the question: its title (``? ...``), its fields
        (``  Title: value``) and the answers it takes (``  Answers: ...``) from the question's
        block; nothing offered once a line says it closed (``- ...``, ``= ...``)."""
        lines = self.lines(self._from[asked.pause_id])
        first = next(i for i, line in enumerate(lines) if line.startswith("? "))
        block = [lines[first]]
        for line in lines[first + 1 :]:
            if not line.startswith("  "):
                break
            block.append(line)
        fields: dict[str, str] = {}
        offered: frozenset[Kind] = frozenset()
        for line in block[1:]:
            head, _, value = line.strip().partition(": ")
            if head == "Answers":
                offered = frozenset(_KINDS[k] for k in value.split(", ") if k in _KINDS)
            elif not head.startswith(("Asked", "Expires", "The agent says")) and value:
                fields[head] = value
        if any(line.startswith(("- ", "= ")) for line in lines[first:]):  # it closed
            offered = frozenset()
        title = lines[first].removeprefix("? ")
        return Shown(title=title, text="\n".join(lines), fields=fields, offered=offered)

    async def answer(self, asked: Asked, answer: Answer, *, by: str) -> Told:
        decision: dict[str, Any]
        match answer.kind:
            case Kind.APPROVE:
                decision = {"approved": True}
            case Kind.EDIT:
                decision = {"approved": True, "override_arguments": dict(answer.arguments or {})}
            case Kind.REJECT:
                decision = {"approved": False, "reason": answer.reason}
            case Kind.RESPOND:
                decision = {"approved": False, "response": answer.response}
        outcome = await self.app.answer(asked.pause_id, tenant_id=TENANT, by=by, decision=decision)
        return told_of(outcome, answer.kind.value)

    async def reply(self, asked: Asked, words: str, *, by: str) -> Told:
        outcome = await self.app.answer(asked.pause_id, tenant_id=TENANT, by=by, reply=words)
        return told_of(outcome)

    async def waiting_for(self, person: str) -> Waiting:
        raise NotImplementedError(self.missing[Capability.WAITING_LIST])

    async def withdraw(self, asked: Asked) -> None:
        await self.behind.withdraw(asked)

    async def cancel(self, asked: Asked) -> None:
        await self.app.cancel(asked.thread_id, tenant_id=TENANT)

    async def advance(self, asked: Asked, hours: int) -> list[str]:
        seen = len(self.stream.getvalue())
        for _ in range(hours):
            await self.clock.advance(HOUR)
        return self.lines(seen)

    def runs(self) -> list[dict[str, object]]:
        return self.behind.runs()

    def agent_read(self) -> list[str]:
        return self.behind.agent_read()

    async def audit(self, asked: Asked) -> str:
        return await self.behind.audit(asked)

    def everything_said(self) -> str:
        return self.stream.getvalue()


def told_of(outcome: AnswerOutcome, kind: str | None = None) -> Told:
    """What the person at the prompt learns of their answer: the kit's sentence for it
    (``channels.kit.said``), as the terminal desk prints it."""
    taken = isinstance(outcome, Answered)
    return Told(taken=taken, text=said_of(outcome, kind=kind))


@asynccontextmanager
async def terminal_driver(tmp_path: Path) -> AsyncIterator[TerminalDriver]:
    llm = mock_llm(TerminalOfficeAgent)
    ledger, clock, stream = Ledger(), FakeClock(), io.StringIO()
    terminal = TerminalOutput(stream)
    app = await App.create(
        TerminalOfficeApplication,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        clock=clock,
        settings=Settings(),
        services={Ledger: ledger, TerminalOutput: terminal},
    )
    terminal.read_assembly(app)  # as the desks do: the questions' titles and roles
    try:
        yield TerminalDriver(
            app, Behind(app=app, ledger=ledger, llm=llm, tenant=TENANT), clock, stream
        )
    finally:
        await app.close()
