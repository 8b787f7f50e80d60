"""An application of attached graphs and roles alone: no placeholder workflow, agent or model."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from bot import (
    App,
    AssemblyError,
    AwaitReply,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    DecidedBy,
    EmailDetector,
    ExecutionStatus,
    PauseAnswerer,
    PiiPolicy,
    Refused,
    application,
    channel,
    channel_role,
    replace_with_token,
    reply_interpreter,
)
from bot.testing import ScriptedChatModel
from interpreters import KeywordReplyInterpreter
from tests.langgraph.conftest import ASK, MEMORY
from tests.langgraph.kit import (
    Outbox,
    OutboxRefundApproval,
    RefundApproval,
    Refunds,
    WireArgs,
    Wires,
    one_refund,
    refund_agent,
    tool_calls,
)


@application(name="graphs-only", channels=[OutboxRefundApproval])
class GraphsOnly: ...


@application(name="nothing-at-all")
class NothingAtAll: ...


async def test_an_application_of_roles_alone_serves_an_attached_graph() -> None:
    outbox, refunds = Outbox(), Refunds()
    async with await App.create(GraphsOnly, database_url=MEMORY, services={Outbox: outbox}) as app:
        agent = app.langgraph(
            "refund-agent", refund_agent(one_refund(), refunds), role=RefundApproval
        )
        paused = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
        assert paused.status is ExecutionStatus.PAUSED
        [ask] = outbox.asks

        done = await app.resume(
            ask.pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M1"
        )

    assert done.status is ExecutionStatus.COMPLETED
    assert refunds.runs == [{"order_id": "7", "amount": 40}]


async def test_an_application_with_neither_workflows_nor_channels_is_refused() -> None:
    with pytest.raises(AssemblyError) as refused:
        await App.create(NothingAtAll, database_url=MEMORY)

    [violation] = refused.value.violations
    assert violation.rule == "application.no-workflows"
    assert "channels=[...]" in violation.message


# --------------------------------------------------------------------------------------------
# A role per tool: one graph whose tools are approved by different roles.


@reply_interpreter(
    name="wire-call-reply-interpreter", description="keywords", decided_by=DecidedBy.CODE
)
class WireReplies(KeywordReplyInterpreter): ...


@channel_role(
    name="wire-call-approval-channel",
    description="Treasury approves wires",
    approves=WireArgs,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=WireReplies,
)
class WireApproval(ChannelOf): ...


@channel(name="outbox-wire-call-approval-channel", description="Keeps it", deps=[Outbox])
class OutboxWireApproval(WireApproval):
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        self.outbox.asks.append(ask)
        return ChannelOutcome.await_reply()


@application(name="two-roles", channels=[OutboxRefundApproval, OutboxWireApproval])
class TwoRoles: ...


async def test_each_tool_of_a_graph_is_asked_under_the_role_named_for_it() -> None:
    outbox, refunds, wires = Outbox(), Refunds(), Wires()
    model = ScriptedChatModel(component="both").then_return(
        tool_calls(
            ("refund", {"order_id": "7", "amount": 40}), ("wire", {"iban": "DE1", "amount": 5})
        ),
        "Done.",
    )
    config: InterruptOnConfig = {"allowed_decisions": ["approve", "edit", "reject"]}
    graph = create_agent(
        model,
        tools=[refunds.tool(), wires.tool()],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"refund": config, "wire": config})],
        checkpointer=InMemorySaver(),
    )
    async with await App.create(TwoRoles, database_url=MEMORY, services={Outbox: outbox}) as app:
        agent = app.langgraph(
            "office-agent", graph, role=RefundApproval, roles={"wire": WireApproval}
        )
        paused = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
        asked = {p.ask.tool: p for p in paused.pending}
        assert asked["refund"].channel == "refund-approval-channel"
        assert asked["refund"].answered_by is PauseAnswerer.CHANNEL
        assert asked["wire"].channel == "wire-call-approval-channel"
        assert asked["wire"].answered_by is PauseAnswerer.THREAD_OWNER
        wire = asked["wire"].pause_id
        assert wire is not None  # a THREAD_OWNER pause is listed with its id
        too_much = await app.answer(
            wire,
            tenant_id="acme",
            by="U1",
            decision={"approved": True, "override_arguments": {"amount": 20_000}},
        )
        assert isinstance(too_much, Refused)  # the wire role's own model checks the edit
        refund = next(a.pause_id for a in outbox.asks if a.value.tool == "refund")
        await app.resume(wire, decision={"approved": True}, tenant_id="acme", owner_id="U1")
        done = await app.resume(
            refund, decision={"approved": True}, tenant_id="acme", answered_by="M1"
        )

    assert done.status is ExecutionStatus.COMPLETED
    assert wires.runs == [{"iban": "DE1", "amount": 5.0}]
    assert refunds.runs == [{"order_id": "7", "amount": 40}]


async def test_a_role_named_for_a_tool_that_the_application_lacks_is_refused() -> None:
    async with await App.create(
        GraphsOnly, database_url=MEMORY, services={Outbox: Outbox()}
    ) as app:
        with pytest.raises(AssemblyError) as refused:
            app.langgraph(
                "refund-agent",
                refund_agent(one_refund(), Refunds()),
                role=RefundApproval,
                roles={"wire": WireApproval},
            )

    [violation] = refused.value.violations
    assert violation.rule == "langgraph.role"
    assert violation.message.startswith("roles['wire']=WireApproval must be a @channel_role")


# --------------------------------------------------------------------------------------------
# The question's context: what was asked, and the model's words before its call, masked.


@application(
    name="masked-context",
    channels=[OutboxRefundApproval],
    pii_policies=[PiiPolicy(detector=EmailDetector(), action=replace_with_token())],
)
class MaskedContext: ...


async def test_the_question_carries_the_request_and_the_models_reason_masked() -> None:
    outbox = Outbox()
    said = AIMessage(
        content="Refunding 7 as mail@example.com asked.",
        tool_calls=[{"name": "refund", "args": {"order_id": "7", "amount": 40}, "id": "c9"}],
    )
    model = ScriptedChatModel(component="refund").then_return(said, "Done.")
    ask = {"messages": [{"role": "user", "content": "refund order 7, write to mail@example.com"}]}
    async with await App.create(
        MaskedContext, database_url=MEMORY, services={Outbox: outbox}
    ) as app:
        agent = app.langgraph("refund-agent", refund_agent(model, Refunds()), role=RefundApproval)
        paused = await agent.ainvoke(ask, thread_id="t1", tenant_id="acme", owner_id="U1")

    [question] = outbox.asks
    assert question.value.request == "refund order 7, write to ••••••"
    assert question.value.stated_reason == "Refunding 7 as •••••• asked."
    [pending] = paused.pending
    assert pending.ask.request == question.value.request  # kept masked: every reader alike


async def test_the_middlewares_description_is_masked_like_the_arguments() -> None:
    """HumanInTheLoopMiddleware's default description repeats the call's arguments ("Args:
    {...}"): a ``Sensitive`` one must not reach a channel, a list or the store through it."""
    from io import StringIO

    from channels.terminal import TerminalOutput
    from tests.cli.terminal_cards import CARD_NUMBER, CARDS, CardApprovalChannel, card_graph

    async with await App.create(
        CARDS.application,
        database_url=MEMORY,
        services={TerminalOutput: TerminalOutput(StringIO())},
    ) as app:
        agent = app.langgraph("card-agent", card_graph(), role=CardApprovalChannel)
        paused = await agent.ainvoke(
            {"messages": [{"role": "user", "content": "charge"}]},
            thread_id="cards-1",
            tenant_id="desk",
            owner_id="you",
        )
        [listed] = await app.list_pending(tenant_id="desk", owner_id="you")

    [pending] = paused.pending
    assert pending.ask.description is not None
    assert "charge_card" in pending.ask.description  # still the middleware's words
    assert CARD_NUMBER not in pending.ask.description
    assert listed.ask.description == pending.ask.description
