"""After a restart while Slack's Web API fails, Bolt cannot learn the bot's ids (``auth.test``):
a click is still authorized with the token the bot has and its answer recorded, never answered
200 "please reinstall" and dropped; an event is answered 503 so Slack delivers it again
(issue 24, finding 5)."""

from __future__ import annotations

from bot import PauseStatus
from channels.slack.bolt_authorization import SLACK_UNREACHABLE
from channels.slack.render import APPROVE_ACTION
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER, OWNER
from tests.slack.stub import BOT_USER, TEAM
from tests.slack.test_clicks import ask_refund


async def test_the_first_click_while_slack_fails_is_recorded(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    await world.stub.fail_all("500")  # auth.test fails too: the bot has never learnt its ids

    response = await world.click(MANAGER, APPROVE_ACTION, pause_id)

    assert response.status == 200
    assert "reinstall" not in await response.text()
    assert "auth.test" in world.stub.failed
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is not PauseStatus.PENDING  # recorded
    await world.stub.restore()
    await world.settle()
    assert [name for name, _ in world.ledger.runs] == ["refund"]


async def test_an_event_while_slack_fails_is_delivered_again(world: SlackWorld) -> None:
    await world.stub.fail_all("refused")
    mention = {
        "type": "app_mention",
        "user": OWNER,
        "text": f"<@{BOT_USER}> refund order 7",
        "channel": "C0GENERAL",
        "ts": "1700000100.000001",
    }
    response = await world.event(mention, event_id="Ev0OUTAGE")
    assert response.status == 503
    assert await response.text() == SLACK_UNREACHABLE
    await world.stub.restore()
    world.llm.then_return("nothing to do")
    response = await world.event(mention, event_id="Ev0OUTAGE", retry=1)  # Slack's retry
    assert response.status == 200


async def test_a_note_slack_drops_the_connection_of_fails_nothing(world: SlackWorld) -> None:
    """The question was posted; the requester's note meets a connection Slack drops: the
    execution waits for its answer as usual (finding 6), and a click still runs the tool."""
    from tests.slack.conftest import OWNER_CHANNEL
    from tests.slack.test_notes import ask_refund_in_thread

    await world.stub.fail_all("reset", "chat.postMessage", channels=(OWNER_CHANNEL,))
    pause_id = await ask_refund_in_thread(world)  # asserts the execution PAUSED

    assert world.stub.failed.count("chat.postMessage") >= 1  # the note's post, dropped
    await world.stub.restore()
    assert (await world.click(MANAGER, APPROVE_ACTION, pause_id)).status == 200
    await world.settle()
    assert [name for name, _ in world.ledger.runs] == ["refund"]
