"""Issue 29's "Done when", shown end to end through the App (the one answer path every channel
uses) and printed with the audit entries each part produced:

1. a wire over a threshold needs two finance approvers (a policy routes it to four eyes);
2. a manager on leave hands their questions on (a standing delegation, then a reassignment);
3. a batch of five refunds is approved in one call, each one listed first with what it does;
   one of them was answered elsewhere meanwhile and is skipped, not an error for the rest.

Run: ``.venv/bin/python -m tests.demonstrations.four_eyes_done_when`` (an SQLite file in a
temporary directory, no network). ``tests/runtime/test_done_when_demonstration.py`` runs it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel

from bot import (
    AlreadyClosed,
    Answered,
    App,
    ApprovalCounted,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ExecutionStatus,
    PauseAnswerer,
    PauseAuditEntry,
    PauseView,
    WorkflowStartText,
    channel,
    channel_role,
    tool,
)
from bot.testing import call_tool, mock_llm
from tests.apps import sample_agent, sample_application
from tests.conftest import NO_SETTINGS
from tests.office import Inbox, Ledger
from tests.routed_four_eyes import BIG_WIRE, RoutedWireApprovalChannel, RoutedWireTool

TENANT = "acme"
REQUESTER, ANN, BOB = "U0REQUEST", "U0ANN", "U0BOB"  # Ann and Bob: finance
MANAGER, DEPUTY, COLLEAGUE = "U0MANAGER", "U0DEPUTY", "U0COLLEAGUE"
FINANCE = {ANN, BOB}
MANAGERS = {MANAGER, COLLEAGUE}
REFUNDS = [
    {"order_id": f"A-100{i}", "amount": amount} for i, amount in enumerate((12, 30, 45, 80, 99), 1)
]


class RefundInput(BaseModel):
    order_id: str
    amount: float


@channel_role(
    name="done-when-refund-approval-channel",
    description="A manager approves refunds",
    approves=RefundInput,
    answered_by=PauseAnswerer.CHANNEL,
)
class RefundApprovalChannel(ChannelOf): ...


@channel(name="done-when-refund-inbox-channel", description="Records", deps=[Inbox])
class InboxRefundChannel(RefundApprovalChannel):
    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox

    async def send(self, ask: ChannelAsk) -> Any:
        self.inbox.asks.append(ask)
        return ChannelOutcome.await_reply()


@channel(name="done-when-wire-inbox-channel", description="Records", deps=[Inbox])
class InboxWireChannel(RoutedWireApprovalChannel):
    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox

    async def send(self, ask: ChannelAsk) -> Any:
        self.inbox.asks.append(ask)
        return ChannelOutcome.await_reply()


@tool(
    name="done-when-refund-tool",
    description="Refunds an order",
    input=RefundInput,
    channel=RefundApprovalChannel,
    deps=[Ledger],
)
class RefundTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: RefundInput) -> str:
        self.ledger.runs.append(("refund", input.model_dump()))
        return "refunded"


DoneWhenAgent = sample_agent(
    "done-when", tools=[RoutedWireTool, RefundTool], description="Wires and refunds"
)
DONE_WHEN = sample_application(
    "done-when", agent=DoneWhenAgent, channels=[InboxWireChannel, InboxRefundChannel]
)


def channel_rule(people: set[str]) -> Callable[[PauseView, str], Awaitable[str | None]]:
    """The channel's rule of who may answer (what Slack's approvers or the web's names say)."""

    async def rule(pause: PauseView, person: str) -> str | None:
        return None if person in people else f"{person} is not an approver of this role"

    return rule


class Demonstration:
    def __init__(self, app: App, inbox: Inbox, ledger: Ledger, model: Any, out: TextIO) -> None:
        self.app, self.inbox, self.ledger, self.model, self.out = app, inbox, ledger, model, out

    def say(self, line: str = "") -> None:
        print(line, file=self.out)

    async def ask(self, tool_cls: type, arguments: dict[str, Any]) -> tuple[str, str]:
        """An execution whose agent calls ``tool_cls``: (its execution id, its pause id)."""
        self.model.then_return(call_tool(tool_cls, arguments))
        result = await self.app.execute(
            DONE_WHEN.workflow,
            WorkflowStartText(text="please"),
            tenant_id=TENANT,
            owner_id=REQUESTER,
        )
        assert result.status is ExecutionStatus.PAUSED
        return result.execution_id, self.inbox.asks[-1].pause_id

    async def answer(self, pause_id: str, by: str, people: set[str]) -> Any:
        async def may_answer(pause: PauseView) -> str | None:
            return await channel_rule(people)(pause, by)

        return await self.app.answer(
            pause_id,
            tenant_id=TENANT,
            by=by,
            decision={"approved": True},
            may_answer=may_answer,
            may_answer_as=channel_rule(people),
        )

    async def audit(self, execution_id: str) -> list[PauseAuditEntry]:
        result = await self.app.get_result(execution_id, tenant_id=TENANT, record=True)
        assert result.record is not None
        for entry in result.record.pauses:
            self.say("    audit: " + json.dumps(_entry(entry), sort_keys=True))
        return list(result.record.pauses)

    async def wire(self) -> None:
        self.say("1. A wire of 25,000 (the policy routes 10,000 or more to two approvers)")
        execution_id, pause_id = await self.ask(RoutedWireTool, BIG_WIRE)
        pause = await self.app.find_pause(pause_id, tenant_id=TENANT)
        assert pause is not None
        assert pause.route is not None
        self.say(
            f"    asked: needs {pause.required_approvals} approvals "
            f"(routed: required_approvals={pause.route.required_approvals})"
        )
        own = await self.answer(pause_id, REQUESTER, FINANCE | {REQUESTER})
        self.say(f"    the requester approves: {type(own).__name__} ({own.code})")
        first = await self.answer(pause_id, ANN, FINANCE)
        assert isinstance(first, ApprovalCounted)
        self.say(
            f"    {ANN} approves: counted, {first.still_needed} more needed; "
            f"ran so far: {self.ledger.runs}"
        )
        self.model.then_return("wired")
        second = await self.answer(pause_id, BOB, FINANCE)
        assert isinstance(second, Answered)
        self.say(f"    {BOB} approves: the wire runs once: {self.ledger.runs}")
        await self.audit(execution_id)

    async def leave(self) -> None:
        self.say()
        self.say(f"2. {MANAGER} goes on leave: {DEPUTY} answers their refunds for a week")
        delegation = await self.app.delegate(
            tenant_id=TENANT, delegator=MANAGER, delegate=DEPUTY, ends_in=timedelta(days=7)
        )
        self.say(f"    delegation {delegation.delegation_id} until {delegation.ends_at}")
        execution_id, pause_id = await self.ask(RefundTool, {"order_id": "A-2001", "amount": 250})
        self.model.then_return("refunded")
        by_deputy = await self.answer(pause_id, DEPUTY, MANAGERS)  # not an approver himself
        assert isinstance(by_deputy, Answered)
        self.say(f"    {DEPUTY} approves under the delegation: ran {self.ledger.runs[-1]}")
        await self.audit(execution_id)
        execution_id, pause_id = await self.ask(RefundTool, {"order_id": "A-2002", "amount": 60})

        async def colleague_may(pause: PauseView) -> str | None:
            return await channel_rule(MANAGERS)(pause, COLLEAGUE)

        await self.app.reassign(
            pause_id, tenant_id=TENANT, by=COLLEAGUE, to="U0BOBBY", may_answer=colleague_may
        )
        self.say(f'    {COLLEAGUE} hands another refund to U0BOBBY ("this is Bobby\'s call")')
        self.model.then_return("refunded")
        by_bobby = await self.answer(pause_id, "U0BOBBY", MANAGERS)
        assert isinstance(by_bobby, Answered)
        await self.audit(execution_id)

    async def batch(self) -> None:
        self.say()
        self.say("3. Five refunds wait; each is listed, then approved in one call")
        asked = [await self.ask(RefundTool, refund) for refund in REFUNDS]
        for _, pause_id in asked:
            pause = await self.app.find_pause(pause_id, tenant_id=TENANT)
            assert pause is not None
            self.say(f"    waiting: {pause.ask.tool} {pause.ask.arguments}")
        self.model.then_return("refunded")
        elsewhere = await self.answer(asked[2][1], COLLEAGUE, MANAGERS)  # meanwhile, elsewhere
        assert isinstance(elsewhere, Answered)
        self.say(f"    meanwhile {COLLEAGUE} approves {REFUNDS[2]['order_id']} on its own message")
        for _ in range(4):
            self.model.then_return("refunded")
        before = len(self.ledger.runs)

        async def manager_may(pause: PauseView) -> str | None:
            return await channel_rule(MANAGERS)(pause, MANAGER)

        outcomes = await self.app.answer_all(
            [pause_id for _, pause_id in asked],
            tenant_id=TENANT,
            by=MANAGER,
            decision={"approved": True},
            may_answer=manager_may,
            may_answer_as=channel_rule(MANAGERS),
        )
        for refund, outcome in zip(REFUNDS, outcomes, strict=True):
            said = (
                "skipped: answered elsewhere"
                if isinstance(outcome, AlreadyClosed)
                else type(outcome).__name__
            )
            self.say(f"    {refund['order_id']}: {said}")
        again = await self.app.answer_all(
            [pause_id for _, pause_id in asked],
            tenant_id=TENANT,
            by=MANAGER,
            decision={"approved": True},
            may_answer=manager_may,
            may_answer_as=channel_rule(MANAGERS),
        )
        assert all(isinstance(o, AlreadyClosed) for o in again)
        self.say(
            "    the same click again answers nothing; tools run by the batch: "
            f"{len(self.ledger.runs) - before} (and 1 elsewhere)"
        )
        for execution_id, _ in asked:
            await self.audit(execution_id)


def _entry(entry: PauseAuditEntry) -> dict[str, Any]:
    return {
        "role": entry.role,
        "ran_with": entry.ran_with,
        "resolution": entry.resolution.value,
        "responder": entry.responder,
        "approved": None if entry.decision is None else entry.decision.get("approved"),
        "approvals": [
            {"by": a.by, "arguments": a.arguments, "counted": a.counted} for a in entry.approvals
        ],
        "handovers": [{"by": h.by, "to": h.to, "kind": h.kind} for h in entry.handovers],
    }


async def main(out: TextIO = sys.stdout) -> None:
    inbox, ledger = Inbox(), Ledger()
    model = mock_llm(DoneWhenAgent)
    with tempfile.TemporaryDirectory() as directory:
        async with await App.create(
            DONE_WHEN.application,
            database_url=f"sqlite+aiosqlite:///{Path(directory) / 'done-when.db'}",
            settings=NO_SETTINGS,
            services={Inbox: inbox, Ledger: ledger},
        ) as app:
            shown = Demonstration(app, inbox, ledger, model, out)
            await shown.wire()
            await shown.leave()
            await shown.batch()


if __name__ == "__main__":
    asyncio.run(main())
