"""A batch in Slack enforces on each item what a single click does, as signed requests against
the Web API stub: the requester never approves their own request (the item is refused, the
others go on), a question needing two approvals counts the batch's approval as one ("1 of 2",
shown on its message) until a second approver's batch, and a standing delegate's batch answers
the delegator's questions."""

from __future__ import annotations

from datetime import timedelta

from bot import ExecutionStatus, PauseStatus
from bot.testing import call_tool
from channels.kit.texts import PROPOSAL_CHANGED, SELF_APPROVAL, approval_counted, batch_refused
from channels.slack.batch_seal import BatchSealer
from channels.slack.button_values import read_answer_value
from channels.slack.render import APPROVE_ALL_ACTION
from channels.slack.render_turn import TURN_APPROVE_ALL
from tests.four_eyes import WireTool
from tests.slack.batch_picks import ask_each, ask_refunds, batch_button
from tests.slack.checks import all_text, assert_sent_valid
from tests.slack.conftest import SlackWorld
from tests.slack.office import (
    ACCOUNTANT,
    APPROVALS,
    FINANCE,
    MANAGER,
    STRANGER,
    RefundCardTool,
    WireMoneyTool,
)
from tests.slack.stub import TEAM
from tests.slack.test_batches import told
from tests.slack.test_four_eyes import AUDITOR, four_eyes  # noqa: F401 - the fixture
from tests.slack.test_lists import pending_of
from tests.slack.test_turn_messages import approve_all, approve_ids, latest


async def _statuses(world: SlackWorld, ids: list[str]) -> list[PauseStatus]:
    found = [await world.app.find_pause(i, tenant_id=TEAM) for i in ids]
    return [p.status for p in found if p is not None]


async def test_the_requesters_own_wire_is_refused_inside_their_batch(world: SlackWorld) -> None:
    world.stub.groups[FINANCE] = [ACCOUNTANT]
    ids = await ask_each(
        world,
        [
            call_tool(RefundCardTool, {"order_id": "1", "amount": 5.0}),
            call_tool(WireMoneyTool, {"iban": "DE00", "amount": 5.0}),
            call_tool(RefundCardTool, {"order_id": "2", "amount": 6.0}),
        ],
        owner=MANAGER,  # the manager asks
        final="done",
    )
    wire = [
        i
        for i in ids
        if (p := await world.app.find_pause(i, tenant_id=TEAM)) and p.ask.tool == "wire-money-tool"
    ]
    # a batch holding their own wire, sealed for them as a Slack list would be
    value = BatchSealer(world.app.derived_keys).seal(ids, user=MANAGER, tenant_id=TEAM)

    await world.click(MANAGER, APPROVE_ALL_ACTION, value, ephemeral=True)
    await world.settle()

    assert sorted(n for n, _ in world.ledger.runs) == ["refund", "refund"]
    assert await _statuses(world, wire) == [PauseStatus.PENDING]
    said = [t for t in told(world) if "Approved." in t][-1]
    assert said.count("Approved.") == 2 and said.count(batch_refused(SELF_APPROVAL)) == 1
    assert len(world.stub.of("chat.update")) == 2  # the refused wire's message untouched
    assert_sent_valid(world.stub.calls, set(ids))


async def test_a_two_approval_question_counts_a_batch_as_one_approval(
    four_eyes: SlackWorld,  # noqa: F811 - the fixture
) -> None:
    world = four_eyes
    ids = await ask_each(
        world,
        [
            call_tool(WireTool, {"account": "DE-1", "amount": 25000.0}),
            call_tool(WireTool, {"account": "DE-2", "amount": 26000.0}),
        ],
        owner=ACCOUNTANT,
        final="wired",
    )

    blocks = (await pending_of(world, MANAGER))["blocks"]
    await world.click(
        MANAGER, APPROVE_ALL_ACTION, str(batch_button(blocks, "batch")["value"]), ephemeral=True
    )
    await world.settle()
    assert world.ledger.runs == []
    assert set(await _statuses(world, ids)) == {PauseStatus.PENDING}
    said = [t for t in told(world) if "counted" in t][-1]
    assert said.count(approval_counted(1)) == 2
    updates = world.stub.of("chat.update")
    assert len(updates) == 2
    assert all(f"Approved by <@{MANAGER}> · 1 of 2 needed" in all_text(u.blocks()) for u in updates)

    blocks = (await pending_of(world, AUDITOR))["blocks"]
    await world.click(
        AUDITOR, APPROVE_ALL_ACTION, str(batch_button(blocks, "batch")["value"]), ephemeral=True
    )
    await world.settle()
    assert sorted(args["account"] for _, args in world.ledger.runs) == ["DE-1", "DE-2"]
    assert_sent_valid(world.stub.calls, set(ids))


async def test_a_standing_delegates_batch_answers_the_delegators_questions(
    world: SlackWorld,
) -> None:
    ids = await ask_refunds(world, 2)
    await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=timedelta(hours=1)
    )
    blocks = (await pending_of(world, STRANGER))["blocks"]
    await world.click(
        STRANGER, APPROVE_ALL_ACTION, str(batch_button(blocks, "batch")["value"]), ephemeral=True
    )
    await world.settle()
    assert sorted(args["order_id"] for _, args in world.ledger.runs) == ["0", "1"]
    for pause_id in ids:
        pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
        assert pause is not None and pause.responder == STRANGER
    assert_sent_valid(world.stub.calls, set(ids))


async def test_a_batch_approves_the_proposal_its_list_showed_never_one_edited_since(
    four_eyes: SlackWorld,  # noqa: F811 - the fixture
) -> None:
    """What the approver was shown is what is checked, in a batch too: the list is shown, another
    approver edits one wire, then "Approve all" from the list as it was shown refuses that wire
    (nothing counted) and counts the other."""
    world = four_eyes
    edited, other = await ask_each(
        world,
        [
            call_tool(WireTool, {"account": "DE-1", "amount": 25000.0}),
            call_tool(WireTool, {"account": "DE-2", "amount": 26000.0}),
        ],
        owner=ACCOUNTANT,
        final="wired",
    )
    blocks = (await pending_of(world, MANAGER))["blocks"]  # the list as MANAGER sees it
    changed = await world.app.answer(
        edited,
        tenant_id=TEAM,
        by=AUDITOR,
        decision={"approved": True, "override_arguments": {"account": "DE-1", "amount": 9.0}},
    )
    assert changed.pause is not None and changed.pause.shown_round == 1

    value = str(batch_button(blocks, "batch")["value"])  # Approve all, from the old list
    await world.click(MANAGER, APPROVE_ALL_ACTION, value, ephemeral=True)
    await world.settle()

    first = await world.app.find_pause(edited, tenant_id=TEAM)
    second = await world.app.find_pause(other, tenant_id=TEAM)
    assert first is not None and [a.by for a in first.approvals] == [AUDITOR]
    assert second is not None and [a.by for a in second.approvals] == [MANAGER]
    said = [t for t in told(world) if "counted" in t][-1]
    assert said.count(batch_refused(PROPOSAL_CHANGED)) == 1
    assert world.ledger.runs == []


async def test_a_turn_message_s_approve_all_approves_what_it_showed_never_an_edit_since(
    four_eyes: SlackWorld,  # noqa: F811 - the fixture
) -> None:
    """The same on one agent turn's message: its "Approve all" as shown before another
    approver's edit refuses the edited wire and counts the other."""
    world = four_eyes
    world.llm.then_return(
        [
            call_tool(WireTool, {"account": "DE-1", "amount": 25000.0}),
            call_tool(WireTool, {"account": "DE-2", "amount": 26000.0}),
        ],
        "wired",
    )
    result = await world.execute("wire both", owner=ACCOUNTANT)
    assert result.status is ExecutionStatus.PAUSED
    [post] = [m for m in world.stub.posted if m["channel"] == APPROVALS]
    ts = str(post["ts"])
    blocks = latest(world, ts)
    edited, other = [read_answer_value(v).pause_id for v in approve_ids(blocks)]
    button = approve_all(blocks)
    assert button is not None
    edit = {"approved": True, "override_arguments": {"account": "DE-1", "amount": 9.0}}
    await world.app.answer(edited, tenant_id=TEAM, by=AUDITOR, decision=edit)
    await world.settle()

    await world.click(MANAGER, TURN_APPROVE_ALL, str(button["value"]), message_ts=ts)
    await world.settle()

    first = await world.app.find_pause(edited, tenant_id=TEAM)
    second = await world.app.find_pause(other, tenant_id=TEAM)
    assert first is not None and [a.by for a in first.approvals] == [AUDITOR]
    assert second is not None and [a.by for a in second.approvals] == [MANAGER]
    assert world.ledger.runs == []
