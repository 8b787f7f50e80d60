"""LangChain agents with HumanInTheLoopMiddleware, attached to an App and answered through it."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import TypedDict

from bot import AgentFailedError, AlreadyClosed, Answered, App, ExecutionStatus, Refused
from bot.langgraph import request_approval
from bot.testing.llm import ScriptedChatModel
from tests.langgraph.conftest import ASK
from tests.langgraph.kit import (
    Outbox,
    RefundApproval,
    Refunds,
    contents_of_tool_messages,
    one_refund,
    refund_agent,
    tool_calls,
)


async def test_approve_runs_the_tool_once(app: App, outbox: Outbox) -> None:
    refunds = Refunds()
    agent = app.langgraph("refund-agent", refund_agent(one_refund(), refunds), role=RefundApproval)
    result = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    assert result.status is ExecutionStatus.PAUSED
    [pending] = result.pending
    assert pending.agent == "refund-agent"
    [ask] = outbox.asks
    assert (ask.value.tool, ask.value.arguments) == ("refund", {"order_id": "7", "amount": 40})
    assert ask.value.description == "Refund?"
    again = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    assert again.status is ExecutionStatus.PAUSED and not again.moved
    assert len(outbox.asks) == 1  # invoking again posts nothing

    done = await app.resume(
        ask.pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M1", record=True
    )
    assert done.status is ExecutionStatus.COMPLETED
    assert refunds.runs == [{"order_id": "7", "amount": 40}]
    assert done.output is not None and done.output["messages"][-1]["content"] == "Done."
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.decision is not None and entry.decision["approved"]
    assert entry.ran_with == {"order_id": "7", "amount": 40}


async def test_an_edit_runs_the_tool_with_the_edited_arguments(app: App, outbox: Outbox) -> None:
    refunds = Refunds()
    agent = app.langgraph("refund-agent", refund_agent(one_refund(), refunds), role=RefundApproval)
    await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    [pause_id] = outbox.pause_ids
    invalid = await app.answer(
        pause_id,
        tenant_id="acme",
        by="M1",
        decision={"approved": True, "override_arguments": {"amount": "lots"}},
    )
    assert isinstance(invalid, Refused) and invalid.error.code == "dto.invalid"
    unknown = await app.answer(
        pause_id,
        tenant_id="acme",
        by="M1",
        decision={"approved": True, "override_arguments": {"amont": 20}},
    )
    assert isinstance(unknown, Refused)
    assert refunds.runs == []
    edited = await app.answer(
        pause_id,
        tenant_id="acme",
        by="M1",
        decision={"approved": True, "override_arguments": {"amount": 20}},
    )
    assert isinstance(edited, Answered) and edited.result is not None
    assert edited.result.status is ExecutionStatus.COMPLETED
    assert refunds.runs == [{"order_id": "7", "amount": 20.0}]


async def test_a_rejection_gives_the_model_the_reason(app: App, outbox: Outbox) -> None:
    refunds, model = Refunds(), one_refund()
    agent = app.langgraph("refund-agent", refund_agent(model, refunds), role=RefundApproval)
    await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    outcome = await app.answer(
        outbox.pause_ids[0], tenant_id="acme", by="M1", reply="reject: amount too high"
    )
    assert isinstance(outcome, Answered) and outcome.result is not None
    assert outcome.result.status is ExecutionStatus.COMPLETED
    assert refunds.runs == []
    [said] = contents_of_tool_messages(model)
    assert "amount too high" in said
    late = await app.answer(outbox.pause_ids[0], tenant_id="acme", by="M2", reply="approve")
    assert isinstance(late, AlreadyClosed)


async def test_two_calls_of_one_turn_resume_once_after_both_in_order(
    app: App, outbox: Outbox
) -> None:
    refunds = Refunds()
    model = ScriptedChatModel(component="refund").then_return(
        tool_calls(
            ("refund", {"order_id": "7", "amount": 40}), ("refund", {"order_id": "8", "amount": 5})
        ),
        "Done.",
    )
    agent = app.langgraph("refund-agent", refund_agent(model, refunds), role=RefundApproval)
    result = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    assert len(result.pending) == 2
    first, second = outbox.asks
    assert (first.value.arguments["order_id"], second.value.arguments["order_id"]) == ("7", "8")
    # the second action answered first: nothing moves until both are answered
    waiting = await app.answer(second.pause_id, tenant_id="acme", by="M1", reply="reject: no")
    assert isinstance(waiting, Answered) and waiting.result is not None
    assert waiting.result.status is ExecutionStatus.PAUSED
    assert len(waiting.result.pending) == 1
    assert len(model.calls) == 1 and refunds.runs == []
    done = await app.resume(
        first.pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M1"
    )
    assert done.status is ExecutionStatus.COMPLETED
    assert refunds.runs == [{"order_id": "7", "amount": 40}]  # decisions matched in action order
    said = contents_of_tool_messages(model)
    assert any(s.startswith("refunded 40.00") for s in said)
    assert any("rejected" in s and s.endswith(": no") for s in said)


async def test_per_call_mode_resumes_each_call_as_it_is_answered(app: App, outbox: Outbox) -> None:
    refunds = Refunds()
    model = ScriptedChatModel(component="refund").then_return(
        tool_calls(
            ("refund", {"order_id": "7", "amount": 40}), ("refund", {"order_id": "8", "amount": 5})
        ),
        "Done.",
    )
    graph = refund_agent(model, refunds, mode="per_call", allowed=("approve", "reject"))
    agent = app.langgraph("refund-agent", graph, role=RefundApproval)
    result = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    assert len(result.pending) == 2
    by_order = {a.value.arguments["order_id"]: a for a in outbox.asks}
    assert by_order["7"].value.allowed_decisions == ("approve", "reject")
    edit = await app.answer(
        by_order["7"].pause_id,
        tenant_id="acme",
        by="M1",
        decision={"approved": True, "override_arguments": {"amount": 1}},
    )
    assert isinstance(edit, Refused) and "edit" in edit.error.message  # not allowed: it waits
    moved = await app.resume(
        by_order["7"].pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M1"
    )
    assert moved.status is ExecutionStatus.PAUSED
    assert refunds.runs == [{"order_id": "7", "amount": 40}]  # ran as soon as it was answered
    done = await app.resume(
        by_order["8"].pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M1"
    )
    assert done.status is ExecutionStatus.COMPLETED
    assert refunds.runs == [{"order_id": "7", "amount": 40}, {"order_id": "8", "amount": 5}]


async def test_a_disallowed_decision_is_refused_in_batched_mode(app: App, outbox: Outbox) -> None:
    refunds = Refunds()
    graph = refund_agent(one_refund(), refunds, allowed=("approve", "reject"))
    agent = app.langgraph("refund-agent", graph, role=RefundApproval)
    await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    [ask] = outbox.asks
    assert ask.value.allowed_decisions == ("approve", "reject")
    refused = await app.answer(
        ask.pause_id,
        tenant_id="acme",
        by="M1",
        decision={"approved": True, "override_arguments": {"amount": 1}},
    )
    assert isinstance(refused, Refused)
    [still] = await app.list_pending(tenant_id="acme")
    assert still.agent == "refund-agent"


class Refund(TypedDict, total=False):
    order_id: str
    amount: float
    outcome: str


def plain_graph(runs: list[str]) -> CompiledStateGraph[Refund, None, Refund, Refund]:
    async def decide(state: Refund) -> Refund:
        decision = request_approval(
            "refund",
            {"order_id": state["order_id"], "amount": state["amount"]},
            description="Refund this order?",
        )
        if not decision.approved:
            return {"outcome": f"rejected: {decision.reason}"}
        amount = (decision.override_arguments or {}).get("amount", state["amount"])
        runs.append(state["order_id"])
        return {"outcome": f"refunded {amount}"}

    builder = StateGraph(Refund)
    builder.add_node("decide", decide)
    builder.add_edge(START, "decide")
    builder.add_edge("decide", END)
    return builder.compile(checkpointer=InMemorySaver())


async def test_request_approval_in_a_plain_state_graph(app: App, outbox: Outbox) -> None:
    runs: list[str] = []
    agent = app.langgraph("plain-refund", plain_graph(runs), role=RefundApproval)
    state = {"order_id": "9", "amount": 12.5}
    result = await agent.ainvoke(state, thread_id="p1", tenant_id="acme", owner_id="U1")
    assert result.status is ExecutionStatus.PAUSED
    [ask] = outbox.asks
    assert ask.value.description == "Refund this order?"
    done = await app.resume(
        ask.pause_id,
        decision={"approved": True, "override_arguments": {"amount": 10}},
        tenant_id="acme",
        answered_by="M1",
    )
    assert done.status is ExecutionStatus.COMPLETED
    # the edit as the role's model took it (its amount a float)
    assert done.output == {"order_id": "9", "amount": 12.5, "outcome": "refunded 10.0"}
    assert runs == ["9"]


async def test_cancel_withdraws_the_questions(app: App, outbox: Outbox) -> None:
    agent = app.langgraph(
        "refund-agent", refund_agent(one_refund(), Refunds()), role=RefundApproval
    )
    await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    [cancelled] = await app.cancel("t1", tenant_id="acme")
    assert cancelled.status is ExecutionStatus.CANCELLED
    assert await app.list_pending(tenant_id="acme") == []
    late = await app.answer(outbox.pause_ids[0], tenant_id="acme", by="M1", reply="approve")
    assert isinstance(late, AlreadyClosed)


async def test_a_channel_deciding_at_once_what_the_middleware_does_not_take_fails_the_run(
    app: App, outbox: Outbox
) -> None:
    """A channel that decides at once with a rejection the middleware does not offer: the run
    fails saying so (``agent.failed``), and the middleware is never sent it."""
    outbox.decide = {"approved": False, "reason": "no"}
    refunds, model = Refunds(), one_refund()
    graph = refund_agent(model, refunds, allowed=("approve", "edit"))
    agent = app.langgraph("refund-agent", graph, role=RefundApproval)
    with pytest.raises(AgentFailedError) as failed:
        await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    assert "the question takes only approve, edit, not reject" in failed.value.message
    assert refunds.runs == [] and len(model.calls) == 1
