"""The requester's note is updated with the outcome before the question's references close, at
once and not through the outbox (no entry written and deleted per click); the outbox keeps it
only when Slack fails it, or when the note itself is still owed. A process that dies once the
references closed has updated the note already; one that dies before leaves them open and the
outcome is shown again, note and all."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from channels.slack.render import APPROVE_ACTION
from channels.slack.store import SlackMessageStore
from tests.slack.conftest import OWNER_CHANNEL, SlackWorld
from tests.slack.office import MANAGER
from tests.slack.test_notes import ask_refund_in_thread, headline, note_updates
from tests.slack.test_store_calls_per_click import click_counted, statements_on

CAUGHT_UP = timedelta(seconds=40)  # past the 30 s grace of an untold end, a sweep or two
APPROVED = f":white_check_mark: *Refunds a card* was approved by <@{MANAGER}>."


async def test_a_note_is_updated_at_once_without_an_outbox_entry(world: SlackWorld) -> None:
    pause_id = await ask_refund_in_thread(world)

    tally = await click_counted(world, pause_id)

    [note] = note_updates(world)
    assert headline(note) == APPROVED
    owed = [s for s in statements_on(tally, "cs_outbox") if "note_update" in s]
    assert owed == []
    assert [s.split()[0] for s in statements_on(tally, "cs_slack_notes")] == ["SELECT"]
    writes = [s.split()[0] for s in statements_on(tally, "cs_outbox")]
    assert writes == ["INSERT", "DELETE"], writes  # the run's end only, not the note's update


async def test_a_note_update_slack_fails_is_owed_and_said_once_it_is_back(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund_in_thread(world)
    await world.stub.fail_all("500", "chat.update", channels=(OWNER_CHANNEL,))

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.closed  # the question shows its outcome
    assert note_updates(world) == []  # Slack failed it (a failed call is not recorded)
    await world.stub.restore()
    await world.clock.advance(CAUGHT_UP)
    await world.settle()

    [note] = note_updates(world)  # owed, then said by the outbox's worker
    assert headline(note) == APPROVED
    await world.clock.advance(CAUGHT_UP)
    assert len(note_updates(world)) == 1


async def test_a_process_that_dies_as_the_references_close_has_updated_the_note(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund_in_thread(world)
    close = SlackMessageStore.close

    async def closed_then_died(self: SlackMessageStore, pause: str, at: datetime) -> bool:
        await close(self, pause, at)
        raise ConnectionResetError("the process died right after the commit")

    monkeypatch.setattr(SlackMessageStore, "close", closed_then_died)
    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()
    monkeypatch.undo()
    await world.clock.advance(CAUGHT_UP)  # the end untold: the sweep tells it again
    await world.settle()

    assert [headline(n) for n in note_updates(world)][-1] == APPROVED
