"""An attached graph's questions are shown, and their edits checked, by the role's model: the
role's model must fit the tools the graph asks about; a graph's tools are bound within it; and
a question keeps the role it was asked under."""

from __future__ import annotations

import pytest
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from bot import (
    Answered,
    App,
    AssemblyError,
    AwaitReply,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ExecutionStatus,
    PauseAnswerer,
    Refused,
    StepFailedError,
    channel,
    channel_role,
)
from bot.langgraph import request_approval
from bot.testing import mock_llm
from bot.testing.llm import ScriptedChatModel
from tests.apps import sample_agent, sample_application
from tests.langgraph.conftest import ASK, MEMORY
from tests.langgraph.kit import (
    Outbox,
    OutboxRefundApproval,
    RefundApproval,
    RefundCall,
    Refunds,
    Wires,
    approval_agent,
    one_refund,
    one_wire,
    refund_agent,
    wire_agent,
)
from tests.langgraph.test_attached_agents import plain_graph
from tests.office import OfficeAgent, OfficeApplication, RefundApprovalChannel


def lookup_tool() -> BaseTool:
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return f"order {order_id}: 40.00"

    return lookup


async def test_a_role_whose_model_does_not_fit_the_tool_is_refused_at_attach(app: App) -> None:
    with pytest.raises(AssemblyError) as refused:
        app.langgraph("wire-agent", wire_agent(one_wire(), Wires()), role=RefundApproval)
    assert refused.value.rules == ["langgraph.role-fit"]
    said = str(refused.value)
    assert "the role refund-approval-channel approves RefundCall" in said
    assert "the tool wire (its arguments: iban, amount)" in said
    assert "no field for the argument(s) iban" in said
    assert "order_id, email are not arguments of the tool" in said


async def test_the_fit_is_checked_for_the_tools_the_graph_asks_about(app: App) -> None:
    """``create_agent``'s middleware asks about the refunds only: the lookup tool, which the
    role's model does not fit, is not asked about. A plain graph's tool node has no such
    middleware: every tool is checked, unless ``asked_tools`` names the ones asked about."""
    graph = approval_agent(one_refund(), [Refunds().tool(), lookup_tool()], asks_about="refund")
    app.langgraph("refund-agent", graph, role=RefundApproval)

    plain = StateGraph(MessagesState)
    plain.add_node("tools", ToolNode([Refunds().tool(), lookup_tool()]))
    plain.add_edge(START, "tools")
    compiled = plain.compile(checkpointer=InMemorySaver())
    with pytest.raises(AssemblyError) as refused:
        app.langgraph("plain-agent", compiled, role=RefundApproval)
    assert refused.value.rules == ["langgraph.role-fit"]
    assert "the tool lookup" in str(refused.value)
    app.langgraph("plain-agent", compiled, role=RefundApproval, asked_tools=["refund"])


async def test_a_tool_name_a_question_could_not_tell_apart_is_refused_at_attach(
    app: App,
) -> None:
    @tool("refund")
    def other_refund(order_id: int, amount: float, email: str) -> str:
        """Another refund, with other arguments."""
        return "refunded"

    graph = refund_agent(one_refund(), Refunds())
    with pytest.raises(AssemblyError) as two_tools:
        app.langgraph("refund-agent", graph, role=RefundApproval, tools=[other_refund])
    assert two_tools.value.rules == ["langgraph.tool-ambiguous"]

    app.langgraph("idle-agent", graph, role=RefundApproval)  # our agent's name, not its tools


async def test_a_graph_named_like_our_agent_may_not_ask_about_its_tools() -> None:
    """Our office agent ``office-agent`` has the tool ``refund-card-tool``: a graph of that
    name asking about a tool of that name could not be told apart from it."""

    @tool("refund-card-tool")
    def refund_card(order_id: str, amount: float, email: str) -> str:
        """Refund a card."""
        return "refunded"

    graph = approval_agent(one_refund(), [refund_card], asks_about="refund-card-tool")
    mock_llm(OfficeAgent)  # serves the office agent's model (it is never called here)
    async with await App.create(OfficeApplication, database_url=MEMORY) as app:
        with pytest.raises(AssemblyError) as named_like_ours:
            app.langgraph("office-agent", graph, role=RefundApprovalChannel)
        assert named_like_ours.value.rules == ["langgraph.name"]
        assert "a tool named refund-card-tool too" in str(named_like_ours.value)
        app.langgraph("card-agent", graph, role=RefundApprovalChannel)


async def test_a_request_approval_edit_is_checked_by_the_roles_model(
    app: App, outbox: Outbox
) -> None:
    runs: list[str] = []
    agent = app.langgraph("plain-refund", plain_graph(runs), role=RefundApproval)
    await agent.ainvoke(
        {"order_id": "9", "amount": 12.5}, thread_id="p1", tenant_id="acme", owner_id="U1"
    )
    [ask] = outbox.asks
    for override in ({"amount": "lots"}, {"amont": 10}):
        refused = await app.answer(
            ask.pause_id,
            tenant_id="acme",
            by="M1",
            decision={"approved": True, "override_arguments": override},
        )
        assert isinstance(refused, Refused) and refused.error.code == "dto.invalid"
    assert runs == []
    [still] = await app.list_pending(tenant_id="acme")
    assert still.ask.tool == "refund"


@channel_role(
    name="separated-refund-approval-channel",
    description="Someone other than the requester approves refunds",
    approves=RefundCall,
    answered_by=PauseAnswerer.CHANNEL,
    separation_of_duties=True,
)
class SeparatedRefundApproval(ChannelOf): ...


@channel(
    name="outbox-separated-refund-approval-channel",
    description="Keeps the question",
    deps=[Outbox],
)
class OutboxSeparatedRefunds(SeparatedRefundApproval):
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        self.outbox.asks.append(ask)
        return ChannelOutcome.await_reply()


TWO_ROLES = sample_application(
    "two-roles",
    agent=sample_agent(
        "two-roles-idle", tools=[], description="Not used", model=ScriptedChatModel()
    ),
    channels=[OutboxRefundApproval, OutboxSeparatedRefunds],
)


async def test_a_waiting_question_keeps_the_role_it_was_asked_under(outbox: Outbox) -> None:
    """Attached again under another role (one that does not separate duties), the graph's
    waiting question is still answered under the role it was asked under."""
    async with await App.create(
        TWO_ROLES.application, database_url=MEMORY, services={Outbox: outbox}
    ) as app:
        refunds = Refunds()
        graph = refund_agent(one_refund(), refunds)
        agent = app.langgraph("refund-agent", graph, role=SeparatedRefundApproval)
        await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
        app.langgraph("refund-agent", graph, role=RefundApproval)  # attached again
        [ask] = outbox.asks
        assert ask.role == "separated-refund-approval-channel"

        own = await app.answer(ask.pause_id, tenant_id="acme", by="U1", decision={"approved": True})
        assert isinstance(own, Refused) and own.error.code == "pause.self-approval"
        other = await app.answer(
            ask.pause_id, tenant_id="acme", by="M1", decision={"approved": True}
        )
        assert isinstance(other, Answered) and other.result is not None
        assert other.result.status is ExecutionStatus.COMPLETED
        assert refunds.runs == [{"order_id": "7", "amount": 40}]


async def test_a_graph_named_like_our_agent_may_not_request_approval_of_its_tools() -> None:
    """The same, asked at run time by ``request_approval`` (no tool node to check at attach):
    the run fails saying why, and nothing is asked."""

    async def decide(state: MessagesState) -> MessagesState:
        request_approval("refund-card-tool", {"order_id": "7", "amount": 40, "email": "a@b.c"})
        return state

    plain = StateGraph(MessagesState)
    plain.add_node("decide", decide)
    plain.add_edge(START, "decide")
    graph = plain.compile(checkpointer=InMemorySaver())
    mock_llm(OfficeAgent)
    async with await App.create(OfficeApplication, database_url=MEMORY) as app:
        agent = app.langgraph("office-agent", graph, role=RefundApprovalChannel)
        with pytest.raises(StepFailedError) as failed:
            await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
        assert "a tool of our agent of the same name" in failed.value.message
        assert await app.list_pending(tenant_id="acme") == []
