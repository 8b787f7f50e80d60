"""``@channel_role(..., separation_of_duties=True)``: nobody approves their own request."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from bot import (
    AssemblyError,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    DecidedBy,
    ExecutionStatus,
    PauseAnswerer,
    PauseAnswererError,
    PauseStatus,
    ReplyInput,
    ReplyInterpretation,
    SelfApprovalError,
    WorkflowStartText,
    channel,
    channel_role,
    reply_interpreter,
    tool,
)
from bot.testing import call_tool, mock_llm
from tests.apps import sample_agent, sample_application
from tests.conftest import MakeOffice
from tests.office import Inbox, Ledger


class PayoutInput(BaseModel):
    account: str
    amount: float


@reply_interpreter(
    name="payout-reply-interpreter", description="Yes or no", decided_by=DecidedBy.CODE
)
class PayoutReplyInterpreter:
    def interpret(self, input: ReplyInput) -> ReplyInterpretation[Any]:
        return ReplyInterpretation.understood({"approved": input.reply.strip() == "yes"})


@channel_role(
    name="payout-approval-channel",
    description="A second person approves payouts",
    approves=PayoutInput,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=PayoutReplyInterpreter,
    separation_of_duties=True,
)
class PayoutApprovalChannel(ChannelOf): ...


@channel(name="inbox-payout-approval-channel", description="Records", deps=[Inbox])
class InboxPayoutChannel(PayoutApprovalChannel):
    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox

    async def send(self, ask: ChannelAsk) -> Any:
        self.inbox.asks.append(ask)
        return ChannelOutcome.await_reply()


@tool(
    name="payout-tool",
    description="Pays out",
    input=PayoutInput,
    channel=PayoutApprovalChannel,
    deps=[Ledger],
)
class PayoutTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: PayoutInput) -> str:
        self.ledger.runs.append(("payout", input.model_dump()))
        return "paid"


PayoutAgent = sample_agent(
    "payout", tools=[PayoutTool], description="Pays", prompt="p", model="offline"
)
PAYOUTS = sample_application(
    "payouts",
    agent=PayoutAgent,
    channels=[InboxPayoutChannel],
    workflow_name="payout-workflow",
    version="1",
)
PayoutWorkflow = PAYOUTS.workflow
PayoutApplication = PAYOUTS.application


async def _asked(make_office: MakeOffice) -> tuple[Any, str]:
    mock_llm(PayoutAgent).then_return(call_tool(PayoutTool, {"account": "A", "amount": 5}), "ok")
    office = await make_office(PayoutApplication)
    await office.app.execute(
        PayoutWorkflow, WorkflowStartText(text="pay"), tenant_id="acme", owner_id="U-requester"
    )
    return office, office.inbox.asks[-1].pause_id


@pytest.mark.parametrize(
    "answer", [{"decision": {"approved": True}}, {"reply": "yes"}], ids=["decision", "reply"]
)
async def test_the_requester_cannot_answer_and_the_pause_keeps_waiting(
    make_office: MakeOffice, answer: dict[str, Any]
) -> None:
    office, pause_id = await _asked(make_office)
    with pytest.raises(SelfApprovalError) as refused:
        await office.app.resume(pause_id, tenant_id="acme", answered_by="U-requester", **answer)
    assert refused.value.code == "pause.self-approval"
    assert isinstance(refused.value, PauseAnswererError)
    assert "someone else must answer" in refused.value.message
    view = await office.app.find_pause(pause_id, tenant_id="acme")
    assert view is not None and view.status is PauseStatus.PENDING
    assert office.ledger.runs == []
    done = await office.app.resume(pause_id, tenant_id="acme", answered_by="U-manager", **answer)
    assert done.status is ExecutionStatus.COMPLETED
    assert [name for name, _ in office.ledger.runs] == ["payout"]


async def test_without_separation_of_duties_the_requester_may_answer(
    make_office: MakeOffice,
) -> None:
    """The default stays as the spec writes it: the channel decides who may answer."""
    from tests.office import RecordingRefundChannel  # noqa: F401 - the office's roles
    from tests.runtime.helpers import run, script_refund

    script_refund()
    office = await make_office()
    await run(office, owner_id="U-requester")
    pause_id = office.inbox.last("refund-card-tool").pause_id
    done = await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="U-requester"
    )
    assert done.status is ExecutionStatus.COMPLETED


async def test_a_thread_owner_role_cannot_separate_duties() -> None:
    @channel_role(
        name="own-approval-channel",
        description="The owner confirms",
        approves=PayoutInput,
        answered_by=PauseAnswerer.THREAD_OWNER,
        separation_of_duties=True,
    )
    class OwnApprovalChannel(ChannelOf): ...

    @tool(name="own-tool", description="d", input=PayoutInput, channel=OwnApprovalChannel)
    class OwnTool:
        def run(self, input: PayoutInput) -> str:
            return "x"

    own = sample_application(
        "own",
        agent=sample_agent("own", tools=[OwnTool], description="d", prompt="p", model="offline"),
        version="1",
    )

    from bot import App

    mock_llm(own.agent)
    with pytest.raises(AssemblyError) as error:
        await App.create(own.application, database_url="sqlite+aiosqlite:///:memory:")
    assert "[channel-role.separation-of-duties]" in error.value.message
