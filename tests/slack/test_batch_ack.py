"""Slack's "Approve all" acknowledges before any tool runs, as a single Approve click does:
every item's approval is recorded before the 200, the runs move after it. Observed by order,
not time: the tools wait for a gate the test opens only once the click was answered — a
listener that ran them before its ack would never ack (Bolt answers 404 after 3 s)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot import PauseStatus, tool
from bot.testing import call_tool
from channels.slack.render import APPROVE_ALL_ACTION
from tests.apps import sample_agent, sample_application
from tests.office import Done, Gate, Ledger
from tests.slack.batch_picks import ask_each, batch_button, ticked
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import MANAGER, RefundApprovalChannel, RefundCardInput, SlackRefundChannel
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_batches import approve_all_of, told
from tests.slack.test_lists import pending_of

RELEASE = Gate()
"""Holds every held refund until the test opens it."""


@tool(
    name="held-refund-card-tool",
    description="Refunds a card once released",
    input=RefundCardInput,
    output=Done,
    channel=RefundApprovalChannel,
    deps=[Ledger],
)
class HeldRefundCardTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def run(self, input: RefundCardInput) -> Done:
        await RELEASE.wait()
        self.ledger.runs.append(("refund", input.model_dump()))
        return Done(status=f"refunded {input.amount}")


HeldAgent = sample_agent("slack-held", tools=[HeldRefundCardTool], description="Refunds cards")
HELD = sample_application("slack-held", agent=HeldAgent, channels=[SlackRefundChannel])


@pytest.fixture
async def held(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    RELEASE.arm()
    async with open_world(
        stub,
        f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        application=(HELD.application, HeldAgent, HELD.workflow),
    ) as world:
        yield world
    RELEASE.disarm()


async def _ask(world: SlackWorld, count: int) -> list[str]:
    return await ask_each(
        world,
        [
            call_tool(HeldRefundCardTool, {"order_id": str(i), "amount": 1.0 + i})
            for i in range(count)
        ],
    )


async def _statuses(world: SlackWorld, ids: list[str]) -> list[PauseStatus]:
    found = [await world.app.find_pause(i, tenant_id=TEAM) for i in ids]
    return [p.status for p in found if p is not None]


async def test_approve_all_is_recorded_and_acknowledged_before_any_tool_runs(
    held: SlackWorld,
) -> None:
    world = held
    ids = await _ask(world, 3)
    value = str(approve_all_of(await pending_of(world, MANAGER))["value"])

    response = await world.click(MANAGER, APPROVE_ALL_ACTION, value, ephemeral=True)

    assert response.status == 200  # acknowledged while every tool still waits for the gate
    assert world.ledger.runs == []
    assert PauseStatus.PENDING not in await _statuses(world, ids)  # each recorded before it
    RELEASE.open()
    await world.settle()
    assert sorted(args["order_id"] for _, args in world.ledger.runs) == ["0", "1", "2"]
    assert told(world)[-2].count("Approved.") == 3

    retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    again = await world.click(MANAGER, APPROVE_ALL_ACTION, value, ephemeral=True, headers=retry)
    assert again.status == 200
    await world.settle()
    assert len(world.ledger.runs) == 3  # each tool once
    assert told(world)[-2].count("Already answered elsewhere, skipped") == 3
    updates: list[Any] = world.stub.of("chat.update")
    assert len(updates) == 3  # each question's message, once


async def test_approve_selected_is_acknowledged_before_any_tool_runs(held: SlackWorld) -> None:
    world = held
    ids = await _ask(world, 3)
    blocks = (await pending_of(world, MANAGER))["blocks"]
    action = batch_button(blocks, "batch-selected")["action_id"]
    picks = ticked(blocks, ids[:2])

    response = await world.click(MANAGER, action, "selected", ephemeral=True, state=picks)

    assert response.status == 200
    assert world.ledger.runs == []
    assert [s is PauseStatus.PENDING for s in await _statuses(world, ids)] == [
        False,
        False,
        True,
    ]
    RELEASE.open()
    await world.settle()
    assert len(world.ledger.runs) == 2
