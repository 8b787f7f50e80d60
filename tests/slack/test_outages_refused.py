"""Every way of answering from Slack while the database refuses at once (a PostgreSQL restart:
connection refused, a pooled connection the server closed): Slack is answered 200, never Bolt's
500; nothing is recorded, the question keeps waiting with its buttons, and the person is told
plainly to try again (``NOT_RECORDED``): ephemerally for a click or a thread reply, as the
modal's error for a submission (the modal stays open to be sent again). Once the database is
back, the same answer is taken (issue 24, "no click is acknowledged and dropped").

Each path: Approve, /pending's Approve all, Approve selected and Reject selected…, a turn
message's Approve all, the Reject and Edit & approve modals, Reassign, "Approve and allow
similar…" and a thread reply. What needs the database to start (the question, the list, the
modal) is opened before the outage.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import ClientResponse
from asyncpg.exceptions import CannotConnectNowError

from bot import PauseStatus
from channels.kit.grants import SCOPE_FIELD
from channels.slack.late_answers import NOT_RECORDED
from channels.slack.render import APPROVE_ACTION, APPROVE_ALL_ACTION, EDIT_ACTION, REJECT_ACTION
from channels.slack.render_approvals import REASSIGN_BLOCK
from channels.slack.render_modal import REASON_BLOCK
from channels.slack.render_turn import TURN_APPROVE_ALL
from tests.database_refusals import RefusingDatabase as RefusingStatements
from tests.slack.batch_picks import ask_refunds, batch_button, ticked
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER, STRANGER
from tests.slack.stub import TEAM
from tests.slack.test_batches import approve_all_of
from tests.slack.test_clicks import ask_refund
from tests.slack.test_grant_buttons import ask, grant_button_of, grant_values, open_grant_modal
from tests.slack.test_handing_on import choose_reassign, chosen
from tests.slack.test_lists import pending_of
from tests.slack.test_messages import FIRST_POST
from tests.slack.test_modals import edits, open_modal, reason
from tests.slack.test_turn_messages import approve_all, ask_turn, latest

Answer = Callable[[], Awaitable[ClientResponse]]


@dataclass
class Asked:
    """What a path asked (and opened) while the database answered; how it answers, and where
    it is told (``None``: ephemerally; else the modal's block holding the error)."""

    pause_ids: list[str]
    answer: Answer
    told_at: str | None = None


async def _click(world: SlackWorld) -> Asked:
    pause_id = await ask_refund(world)
    return Asked([pause_id], lambda: world.click(MANAGER, APPROVE_ACTION, pause_id))


async def _approve_all(world: SlackWorld) -> Asked:
    ids = await ask_refunds(world, 2)
    value = str(approve_all_of(await pending_of(world, MANAGER))["value"])
    return Asked(ids, lambda: world.click(MANAGER, APPROVE_ALL_ACTION, value, ephemeral=True))


async def _approve_selected(world: SlackWorld) -> Asked:
    ids = await ask_refunds(world, 2)
    blocks = (await pending_of(world, MANAGER))["blocks"]
    action = str(batch_button(blocks, "batch-selected")["action_id"])
    state = ticked(blocks, ids)
    return Asked(
        ids,
        lambda: world.click(MANAGER, action, "selected", ephemeral=True, state=state),
    )


async def _reject_selected(world: SlackWorld) -> Asked:
    ids = await ask_refunds(world, 2)
    blocks = (await pending_of(world, MANAGER))["blocks"]
    action = str(batch_button(blocks, "batch-reject")["action_id"])
    await world.click(MANAGER, action, "selected", ephemeral=True, state=ticked(blocks, ids))
    await world.settle()
    view = world.stub.of("views.open")[-1].view()
    return Asked(ids, lambda: world.submit(MANAGER, view, reason("out of stock")), REASON_BLOCK)


async def _turn_approve_all(world: SlackWorld) -> Asked:
    ts, ids = await ask_turn(world, 2)
    button = approve_all(latest(world, ts))
    assert button is not None
    value = str(button["value"])
    return Asked(ids, lambda: world.click(MANAGER, TURN_APPROVE_ALL, value, message_ts=ts))


async def _reject_modal(world: SlackWorld) -> Asked:
    pause_id = await ask_refund(world)
    view = await open_modal(world, REJECT_ACTION, pause_id)
    return Asked([pause_id], lambda: world.submit(MANAGER, view, reason("too much")), REASON_BLOCK)


async def _edit_modal(world: SlackWorld) -> Asked:
    pause_id = await ask_refund(world)
    view = await open_modal(world, EDIT_ACTION, pause_id)
    values = edits("7", "15")
    return Asked([pause_id], lambda: world.submit(MANAGER, view, values), next(iter(values)))


async def _reassign(world: SlackWorld) -> Asked:
    pause_id = await ask_refund(world)
    view = await choose_reassign(world, MANAGER, pause_id)
    return Asked([pause_id], lambda: world.submit(MANAGER, view, chosen(STRANGER)), REASSIGN_BLOCK)


async def _grant(world: SlackWorld) -> Asked:
    await ask(world, 120)
    pause_id, _ = grant_button_of(world)
    view = await open_grant_modal(world, pause_id)
    values = grant_values("requester", "8", "200")
    return Asked([pause_id], lambda: world.submit(MANAGER, view, values), SCOPE_FIELD)


async def _reply(world: SlackWorld) -> Asked:
    pause_id = await ask_refund(world)
    return Asked([pause_id], lambda: world.message(MANAGER, "approve", thread_ts=FIRST_POST))


PATHS: dict[str, Callable[[SlackWorld], Awaitable[Asked]]] = {
    "click": _click,
    "approve all": _approve_all,
    "approve selected": _approve_selected,
    "reject selected": _reject_selected,
    "turn approve all": _turn_approve_all,
    "reject modal": _reject_modal,
    "edit modal": _edit_modal,
    "reassign": _reassign,
    "grant": _grant,
    "reply": _reply,
}


class RefusingDatabase(RefusingStatements):
    """The App's database refusing every statement at once while ``down``. The event-dedup
    claim of a thread reply is left to succeed: the reply meets the database failing between
    its claim and its recording (a claim refused is answered 503 already, Slack retries)."""

    def __init__(self, world: SlackWorld, monkeypatch: pytest.MonkeyPatch) -> None:
        super().__init__(world.app, monkeypatch)
        seen = world.bot.seen_events
        for name, claimed in (("first_time", True), ("handled", None)):
            real = getattr(seen, name)

            async def claim(*args: Any, _real: Any = real, _claimed: Any = claimed) -> Any:
                return _claimed if self.down else await _real(*args)

            monkeypatch.setattr(seen, name, claim)


@pytest.fixture
def refusing(world: SlackWorld, monkeypatch: pytest.MonkeyPatch) -> RefusingDatabase:
    return RefusingDatabase(world, monkeypatch)


def told(world: SlackWorld) -> list[str]:
    """What the person was told, ephemerally."""
    return [
        str(c.payload.get("text", ""))
        for c in world.stub.calls
        if c.method in ("response_url", "chat.postEphemeral")
    ]


async def _statuses(world: SlackWorld, ids: list[str]) -> list[PauseStatus]:
    found = [await world.app.find_pause(i, tenant_id=TEAM) for i in ids]
    return [p.status for p in found if p is not None]


@pytest.mark.parametrize("path", list(PATHS))
async def test_an_answer_the_database_refuses_is_answered_200_and_told_to_try_again(
    world: SlackWorld, refusing: RefusingDatabase, path: str
) -> None:
    asked = await PATHS[path](world)
    told_before, updates_before = len(told(world)), len(world.stub.of("chat.update"))
    refusing.down = True

    response = await asked.answer()
    assert response.status == 200  # never Bolt's 500
    body = await response.text()
    await world.settle()
    refusing.down = False
    if asked.told_at is None:
        assert told(world)[told_before:] == [NOT_RECORDED]
    else:  # the modal stays open saying so, to be sent again as it is
        assert json.loads(body) == {
            "response_action": "errors",
            "errors": {asked.told_at: NOT_RECORDED},
        }
    assert set(await _statuses(world, asked.pause_ids)) == {PauseStatus.PENDING}
    assert world.ledger.runs == []
    assert len(world.stub.of("chat.update")) == updates_before  # the buttons stay

    again = await asked.answer()  # the database back: the same answer is taken
    assert again.status == 200
    await world.settle()
    pauses = [await world.app.find_pause(i, tenant_id=TEAM) for i in asked.pause_ids]
    assert all(
        p is not None and (p.status is not PauseStatus.PENDING or p.handovers) for p in pauses
    )


@pytest.mark.parametrize(("refused_from", "status"), [(1, 503), (2, 200)])
async def test_an_event_the_database_refuses_raw_is_never_a_500(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch, refused_from: int, status: int
) -> None:
    """A connection refused while PostgreSQL starts or stops is raised by the driver as is
    (not wrapped by SQLAlchemy): refused at the event's claim, Slack is answered 503 and
    delivers it again; refused when the reply, recorded, is marked handled, still 200."""
    pause_id = await ask_refund(world)
    dedup = world.bot.seen_events._db
    real = dedup.apply
    calls = 0

    async def apply(body: Any, *, short: bool = False) -> Any:
        nonlocal calls
        calls += 1
        if calls >= refused_from:
            raise CannotConnectNowError("the database system is shutting down")
        return await real(body, short=short)

    monkeypatch.setattr(dedup, "apply", apply)
    response = await world.message(MANAGER, "approve", thread_ts=FIRST_POST)
    assert response.status == status
    await world.settle()
    found = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert found is not None
    assert (found.status is PauseStatus.PENDING) is (status == 503)
