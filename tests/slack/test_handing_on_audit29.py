"""Issue 29 audit, Slack paths the other tests leave out, as signed requests against the Web
API stub: an attached LangChain agent's question handed on with "Reassign…" is answered by the
person chosen and its tool runs once; two approvals given as thread replies count as a click
does (the requester's reply refused, the second distinct one runs the wire once)."""

from __future__ import annotations

from bot import PauseStatus
from channels.kit.texts import SELF_APPROVAL
from channels.slack.button_values import read_answer_value
from channels.slack.render import APPROVE_ACTION
from tests.four_eyes import WIRE
from tests.langgraph.kit import Refunds
from tests.slack.checks import all_text, assert_sent_valid
from tests.slack.conftest import SlackWorld
from tests.slack.office import ACCOUNTANT, MANAGER, STRANGER
from tests.slack.stub import TEAM
from tests.slack.test_attached_graph import attach_and_ask, one_refund
from tests.slack.test_four_eyes import AUDITOR, _asked, _told, four_eyes
from tests.slack.test_handing_on import choose_reassign, chosen
from tests.slack.test_messages import FIRST_POST

__all__ = ["four_eyes"]  # the fixture, shared


async def test_an_attached_agents_question_reassigned_is_answered_by_the_person_chosen(
    world: SlackWorld,
) -> None:
    refunds = Refunds()
    _, pause_id = await attach_and_ask(world, refunds, one_refund())
    view = await choose_reassign(world, MANAGER, pause_id)
    done = await world.submit(MANAGER, view, chosen(STRANGER))
    assert done.status == 200 and await done.text() == ""
    await world.settle()
    dm = [c for c in world.stub.of("chat.postMessage") if c.payload["channel"] == STRANGER]
    assert len(dm) == 1

    await world.click(STRANGER, APPROVE_ACTION, pause_id)  # not an approver: handed to them
    await world.click(STRANGER, APPROVE_ACTION, pause_id)  # a double click
    await world.settle()
    assert [r["amount"] for r in refunds.runs] == [40]
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is not PauseStatus.PENDING
    assert pause.responder == STRANGER
    assert [(h.by, h.to) for h in pause.handovers] == [(MANAGER, STRANGER)]
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_two_approvals_by_thread_reply_count_as_clicks_do(four_eyes: SlackWorld) -> None:
    world = four_eyes
    pause_id = read_answer_value(await _asked(world)).pause_id
    await world.message(MANAGER, "approve", thread_ts=FIRST_POST)
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert [a.by for a in pause.approvals] == [MANAGER]
    text = all_text(world.stub.of("chat.update")[-1].blocks())
    assert f"Approved by <@{MANAGER}> · 1 of 2 needed" in text

    await world.message(ACCOUNTANT, "approve", thread_ts=FIRST_POST)  # the requester
    await world.settle()
    assert world.ledger.runs == []
    assert _told(world)[-1] == (ACCOUNTANT, SELF_APPROVAL)

    await world.message(AUDITOR, "approve", thread_ts=FIRST_POST)
    await world.settle()
    assert world.ledger.runs == [("wire", WIRE)]
    await world.message(MANAGER, "approve", thread_ts=FIRST_POST)  # after it closed
    await world.settle()
    assert world.ledger.runs == [("wire", WIRE)]
    assert_sent_valid(world.stub.calls, {pause_id})
