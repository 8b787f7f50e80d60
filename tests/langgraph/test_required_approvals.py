"""An attached LangChain agent (``HumanInTheLoopMiddleware``) under a role that needs two
approvals: the same answer path as a native tool — the first approval is counted and nothing
runs, an edit voids it, the second distinct approval runs the tool once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

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
    Refused,
    channel,
    channel_role,
)
from bot.testing.llm import ScriptedChatModel
from tests.apps import sample_agent, sample_application
from tests.langgraph.conftest import ASK, MEMORY
from tests.langgraph.kit import Outbox, RefundCall, Refunds, one_refund, refund_agent


@channel_role(
    name="four-eyes-refund-approval-channel",
    description="Two managers approve refunds",
    approves=RefundCall,
    answered_by=PauseAnswerer.CHANNEL,
    required_approvals=2,
)
class FourEyesRefundApproval(ChannelOf): ...


@channel(name="outbox-four-eyes-refund-channel", description="Keeps it", deps=[Outbox])
class OutboxFourEyesRefund(FourEyesRefundApproval):
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    async def send(self, ask: ChannelAsk) -> Any:
        self.outbox.asks.append(ask)
        return ChannelOutcome.await_reply()


FOUR_EYES = sample_application(
    "langgraph-four-eyes",
    agent=sample_agent(
        "idle-four-eyes",
        tools=[],
        description="Not used here",
        model=ScriptedChatModel(component="idle-four-eyes"),
    ),
    channels=[OutboxFourEyesRefund],
)


@pytest.fixture
async def four_eyes(outbox: Outbox) -> AsyncIterator[App]:
    async with await App.create(
        FOUR_EYES.application, database_url=MEMORY, services={Outbox: outbox}
    ) as app:
        yield app


async def test_an_attached_agents_call_waits_for_two_approvers(
    four_eyes: App, outbox: Outbox
) -> None:
    app, refunds = four_eyes, Refunds()
    agent = app.langgraph(
        "refund-agent", refund_agent(one_refund(), refunds), role=FourEyesRefundApproval
    )
    result = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    assert result.status is ExecutionStatus.PAUSED
    [pause_id] = outbox.pause_ids

    first = await app.answer(pause_id, tenant_id="acme", by="M1", decision={"approved": True})
    assert isinstance(first, ApprovalCounted) and first.still_needed == 1
    assert refunds.runs == []
    own = await app.answer(pause_id, tenant_id="acme", by="U1", decision={"approved": True})
    assert isinstance(own, Refused) and own.code == "pause.self-approval"

    edited = await app.answer(
        pause_id,
        tenant_id="acme",
        by="M2",
        decision={"approved": True, "override_arguments": {"amount": 20}},
    )
    assert isinstance(edited, ApprovalCounted) and edited.still_needed == 1
    assert refunds.runs == []

    done = await app.answer(pause_id, tenant_id="acme", by="M1", decision={"approved": True})
    assert isinstance(done, Answered) and done.result is not None
    assert done.result.status is ExecutionStatus.COMPLETED
    assert refunds.runs == [{"order_id": "7", "amount": 20.0}]
    late = await app.answer(pause_id, tenant_id="acme", by="M3", decision={"approved": True})
    assert isinstance(late, AlreadyClosed)
