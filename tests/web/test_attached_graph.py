"""LangChain agents (``create_agent`` with ``HumanInTheLoopMiddleware``) attached to the web
office and answered on its pages: a question is shown, and an edit checked, by its role's
model; a tool named like another's keeps its own role; a turn's first answer is told at once."""

from __future__ import annotations

import pytest

from bot import App, ExecutionPauseEvent, ExecutionResumeEvent, ExecutionStatus
from bot.langgraph import LangGraphAgent
from bot.testing import ScriptedChatModel
from tests.langgraph.kit import Refunds, Wires, one_refund, one_wire, refund_agent, tool_calls
from tests.langgraph.kit import wire_agent as wire_graph
from tests.web.conftest import WebWorld
from tests.web.graphs import ASK
from tests.web.office import (
    ALICE,
    OWNER,
    TENANT,
    RefundApprovalChannel,
    WireApprovalChannel,
)
from tests.web.own_links import link_for
from tests.web.pages import answer, has_forms, open_page

REQUESTER = "olga"


def wire_agent(app: App, wires: Wires, *, name: str = "wire") -> LangGraphAgent:
    """A wire agent attached under the web office's wire role (separation of duties)."""
    graph = wire_graph(one_wire(name=name), wires, name=name)
    return app.langgraph("wire-agent", graph, role=WireApprovalChannel)


async def test_a_wire_is_shown_and_its_edit_checked_by_the_roles_model(web_world: WebWorld) -> None:
    wires = Wires()
    agent = wire_agent(web_world.app, wires)
    paused = await agent.ainvoke(ASK, thread_id="w1", tenant_id=TENANT, owner_id=REQUESTER)
    path = web_world.link(ALICE, "wire")

    status, page = await open_page(web_world.http, path)
    assert status == 200
    assert "Account (IBAN)" in page  # the role's title, on the question and on its form

    short = {"arg.iban": "DE1", "arg.amount": "500"}
    status, shown = await answer(web_world.http, path, "edit", **short)
    assert status == 422 and has_forms(shown)
    too_much = {"arg.iban": "DE0099999", "arg.amount": "50000"}  # the tool's own rule refuses it
    status, shown = await answer(web_world.http, path, "edit", **too_much)
    assert status == 422 and "the tool wire does not take the edited amount" in shown
    assert len(await web_world.app.list_pending(tenant_id=TENANT)) == 1
    assert wires.runs == []

    edited = {"arg.iban": "DE0099999", "arg.amount": "400"}
    status, shown = await answer(web_world.http, path, "edit", **edited)
    assert status == 303
    assert wires.runs == [{"iban": "DE0099999", "amount": 400.0}]
    done = await web_world.app.get_result(paused.execution_id, tenant_id=TENANT, record=True)
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.ran_with == {"iban": "DE0099999", "amount": 400.0}


@pytest.mark.parametrize("name", ["refund", "refund-card-tool"])
async def test_a_tool_named_like_another_graphs_or_ours_keeps_its_own_role(
    web_world: WebWorld, name: str
) -> None:
    """Alice approves refunds and wires; the wire role separates duties. Another graph's
    refund tool, or our own, has the wire tool's name: her own wire is still refused to her."""
    wires = Wires()
    agent = wire_agent(web_world.app, wires, name=name)
    web_world.app.langgraph(
        "refund-agent", refund_agent(one_refund(), Refunds()), role=RefundApprovalChannel
    )
    await agent.ainvoke(ASK, thread_id="w1", tenant_id=TENANT, owner_id=ALICE)
    # the wire's approvers, without Alice: the wire role never takes its requester's answer
    assert sorted(n.approver for n in web_world.notices) == [OWNER]

    status, page = await answer(web_world.http, await link_for(web_world, ALICE), "approve")
    assert status == 403 and "you cannot approve it" in page
    [waiting] = await web_world.app.list_pending(tenant_id=TENANT)
    assert waiting.channel == "wire-approval-channel" and wires.runs == []

    status, _ = await answer(web_world.client(), web_world.link(OWNER, name), "approve")
    assert status == 303
    assert wires.runs == [{"iban": "DE0012345", "amount": 500.0}]


async def test_one_call_of_a_turn_answered_tells_the_rest_at_once(web_world: WebWorld) -> None:
    """Two refunds in one model turn (one batched interrupt): the first answered on the web is
    told at once — its move carries it, and the run rests on the second — as for our own
    agents' calls."""
    rests: list[ExecutionPauseEvent] = []
    moves: list[ExecutionResumeEvent] = []
    web_world.app.on_execution_pause(rests.append)
    web_world.app.on_execution_resume(moves.append)
    refunds = Refunds()
    model = ScriptedChatModel(component="refund").then_return(
        tool_calls(
            ("refund", {"order_id": "7", "amount": 40}), ("refund", {"order_id": "8", "amount": 5})
        ),
        "Done.",
    )
    agent = web_world.app.langgraph(
        "refund-agent", refund_agent(model, refunds), role=RefundApprovalChannel
    )
    await agent.ainvoke(ASK, thread_id="w1", tenant_id=TENANT, owner_id=REQUESTER)
    assert len(rests) == 1

    status, page = await answer(web_world.http, web_world.link(ALICE, "refund", index=0), "approve")

    assert status == 303 and "Approved by you." in page
    [move] = moves
    assert [p.ask.arguments["order_id"] for p in move.answered] == ["7"]
    assert move.result is not None and move.result.status is ExecutionStatus.PAUSED
    assert [[p.ask.arguments["order_id"] for p in r.pending] for r in rests] == [["7", "8"], ["8"]]
    assert refunds.runs == []

    status, _ = await answer(web_world.http, web_world.link(ALICE, "refund", index=1), "approve")
    assert status == 303
    assert [[p.ask.arguments["order_id"] for p in m.answered] for m in moves] == [["7"], ["8"]]
    assert refunds.by_order == [{"order_id": "7", "amount": 40.0}, {"order_id": "8", "amount": 5.0}]
