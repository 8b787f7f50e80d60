"""``/pending`` and the App Home for a delegate, as signed requests against the Web API stub: a
question reassigned to them, and those an active standing delegation of theirs covers, are
listed with their buttons (and answered from the list); never their own request; a delegation's
end takes its questions off the list."""

from __future__ import annotations

from datetime import timedelta

from channels.slack.render import APPROVE_ACTION, slack_date
from channels.slack.render_pending import EMPTY_LIST
from tests.slack.checks import all_text, assert_sent_valid
from tests.slack.conftest import SlackWorld
from tests.slack.office import ACCOUNTANT, MANAGER, ONCALL, OWNER, STRANGER
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund
from tests.slack.test_lists import approve_values, home_opened, pending_of


async def test_a_question_reassigned_to_a_person_is_on_their_list_to_answer(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund(world)
    assert (await pending_of(world, STRANGER))["text"] == EMPTY_LIST
    await world.app.reassign(pause_id, tenant_id=TEAM, by=MANAGER, to=STRANGER)

    sent = await pending_of(world, STRANGER)
    assert approve_values(sent["blocks"]) == [pause_id]
    assert approve_values((await pending_of(world, MANAGER))["blocks"]) == [pause_id]
    await home_opened(world, STRANGER)
    published = world.stub.of("views.publish")[-1]
    assert published.payload["user_id"] == STRANGER
    assert approve_values(published.view()["blocks"]) == [pause_id]

    await world.click(STRANGER, f"{APPROVE_ACTION}:0", pause_id, ephemeral=True)
    await world.settle()
    assert [name for name, _ in world.ledger.runs] == ["refund"]
    assert (await pending_of(world, STRANGER))["text"] == EMPTY_LIST
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_standing_delegation_lists_the_delegators_questions_until_its_end(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund(world)
    await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=timedelta(hours=1)
    )
    await world.app.delegate(  # the requester: never handed their own request
        tenant_id=TEAM, delegator=ACCOUNTANT, delegate=OWNER, ends_in=timedelta(hours=1)
    )
    assert approve_values((await pending_of(world, STRANGER))["blocks"]) == [pause_id]
    assert (await pending_of(world, OWNER))["text"] == EMPTY_LIST

    await world.clock.advance(timedelta(hours=2))  # ended: off the list
    assert (await pending_of(world, STRANGER))["text"] == EMPTY_LIST
    assert approve_values((await pending_of(world, MANAGER))["blocks"]) == [pause_id]

    await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=timedelta(hours=1)
    )
    assert approve_values((await pending_of(world, STRANGER))["blocks"]) == [pause_id]
    await world.click(STRANGER, f"{APPROVE_ACTION}:0", pause_id, ephemeral=True)
    await world.settle()
    assert [name for name, _ in world.ledger.runs] == ["refund"]
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_listed_delegated_question_says_why_it_is_there(world: SlackWorld) -> None:
    """/pending and the App Home: "Handed to you by <@X>" for a reassigned question, "You
    answer for <@Y> until <date>" under a standing delegation; the approver's own line says
    neither."""
    pause_id = await ask_refund(world)
    await world.app.reassign(pause_id, tenant_id=TEAM, by=MANAGER, to=STRANGER)
    delegation = await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=ONCALL, ends_in=timedelta(hours=1)
    )

    handed = all_text((await pending_of(world, STRANGER))["blocks"])
    assert f"Handed to you by <@{MANAGER}>" in handed
    await home_opened(world, STRANGER)
    assert f"Handed to you by <@{MANAGER}>" in all_text(
        world.stub.of("views.publish")[-1].view()["blocks"]
    )
    standing = all_text((await pending_of(world, ONCALL))["blocks"])
    assert f"You answer for <@{MANAGER}> until {slack_date(delegation.ends_at)}" in standing
    own = all_text((await pending_of(world, MANAGER))["blocks"])
    assert "Handed to you" not in own and "You answer for" not in own
    assert_sent_valid(world.stub.calls, {pause_id})
