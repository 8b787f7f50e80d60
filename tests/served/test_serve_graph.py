"""``serve_graph`` in code: a plain ``StateGraph`` that asks with ``request_approval`` served
the same way as an agent (here on the web: its pages, the App), and what it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from bot import ExecutionStatus, SetupError, serve_graph
from bot.langgraph import request_approval

MEMORY = "sqlite+aiosqlite:///:memory:"


class Invoice(TypedDict, total=False):
    customer: str
    sent: str


def plain_graph() -> Any:
    def review(state: Invoice) -> Invoice:
        decision = request_approval(
            "send_invoice", {"customer": state["customer"], "total": 120}, description="Send?"
        )
        return {"sent": "yes" if decision.approved else f"no: {decision.reason}"}

    builder = StateGraph(Invoice)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile()  # no checkpointer: it gets the App's


async def test_a_plain_graph_asking_with_request_approval_is_served() -> None:
    async with serve_graph(
        plain_graph(), name="invoices", web_base_url="http://127.0.0.1:9", database_url=MEMORY
    ) as served:
        assert served.app is not None and served.agent is not None
        paused = await served.agent.ainvoke(
            {"customer": "ACME"}, thread_id="t1", tenant_id="desk", owner_id="you"
        )
        assert paused.status is ExecutionStatus.PAUSED
        [asked] = await served.app.list_pending(tenant_id="desk", include_channel_pause_ids=True)
        assert (asked.ask.tool, asked.ask.arguments) == (
            "send_invoice",
            {"customer": "ACME", "total": 120},
        )
        assert asked.channel == "invoices-approval-channel"
        assert asked.pause_id is not None
        done = await served.app.resume(
            asked.pause_id,
            decision={"approved": False, "reason": "wrong total"},
            tenant_id="desk",
            answered_by="you",
        )

    assert done.status is ExecutionStatus.COMPLETED
    assert done.output == {"customer": "ACME", "sent": "no: wrong total"}


async def test_its_web_pages_ask_the_graph() -> None:
    async with serve_graph(
        plain_graph(), name="invoices", web_base_url="http://127.0.0.1:9", database_url=MEMORY
    ) as served:
        from aiohttp.test_utils import TestClient, TestServer

        async with TestClient(TestServer(served.web_app())) as http:
            response = await http.get("/")
            status, page = response.status, await response.text()
    assert status == 401 and "Open the inbox link" in page  # nobody signed in yet


async def test_a_graph_that_asks_nothing_is_refused_saying_what_is_supported() -> None:
    class State(TypedDict):
        text: str

    def echo(state: State) -> State:
        return state

    builder = StateGraph(State)
    builder.add_node("echo", echo)
    builder.add_edge(START, "echo")
    builder.add_edge("echo", END)

    with pytest.raises(SetupError) as refused:
        async with serve_graph(builder.compile(), web_base_url="http://127.0.0.1:9"):
            pass

    assert refused.value.message.startswith("serve_graph: agent has nothing to approve")
    assert "request_approval" in refused.value.message


async def test_serve_graph_s_policy_decides_its_questions_before_they_are_asked() -> None:
    from bot import allow_tenants

    desk_only = allow_tenants(["desk"], name="desk-invoice-policy")
    async with serve_graph(
        plain_graph(),
        name="invoices",
        web_base_url="http://127.0.0.1:9",
        database_url=MEMORY,
        policy=desk_only,
    ) as served:
        assert served.agent is not None
        done = await served.agent.ainvoke(
            {"customer": "ACME"}, thread_id="t1", tenant_id="desk", owner_id="you", record=True
        )
        asked = await served.agent.ainvoke(
            {"customer": "ACME"}, thread_id="t2", tenant_id="other", owner_id="you"
        )

    assert done.status is ExecutionStatus.COMPLETED
    assert done.output == {"customer": "ACME", "sent": "yes"}
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.policy == "desk-invoice-policy"
    assert entry.decision is not None and entry.decision["reason"] == "tenant desk"
    assert asked.status is ExecutionStatus.PAUSED  # another tenant: a person is asked
