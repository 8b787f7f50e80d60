"""Each item of a turn's message offers what a question alone offers (issue 29), as signed
requests against the Web API stub: "Reassign…" for a CHANNEL question and, where the kit's grant
offer says so, "Approve and allow similar…", each with the item's own value. A reassign from an
item lets the person chosen answer it; a grant from an item approves it, is recorded and decides
the next matching ask; the turn's message shows each item as it stands.

And which message asks a turn is the store's, not a process's: a sibling asked by another
instance (here: the next start, on the same SQLite file or PostgreSQL database) joins the
turn's message instead of posting its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot import ExecutionStatus, PauseResolution, PauseStatus, Settings
from bot.core.errors import ChannelUnavailableError
from bot.testing import call_tool
from channels.slack.render import APPROVE_ACTION
from channels.slack.render_approvals import REASSIGN_ACTION, REASSIGN_MODAL
from channels.slack.render_grants import GRANT_ACTION, GRANT_MODAL
from channels.slack.render_turn import MAX_TURN_ITEMS, TURN_APPROVE_ALL
from channels.slack.store import MessageRef
from channels.slack.turn_messages import Asking, _where
from tests.databases import BACKENDS, TEST_ENCRYPTION_KEYS, database
from tests.slack.checks import all_text, assert_sent_valid, nodes
from tests.slack.conftest import SlackWorld, interactive_body, open_world
from tests.slack.office import (
    APPROVALS,
    MANAGER,
    OWNER,
    STRANGER,
    GrantedRefundCardTool,
)
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_grant_buttons import ask, grant_values
from tests.slack.test_handing_on import chosen
from tests.slack.test_turn_messages import (
    RECOVERED,
    approve_all,
    approve_ids,
    ask_turn,
    latest,
    ran,
    refunds,
)


def controls(blocks: list[dict[str, Any]], index: int) -> dict[str, dict[str, Any]]:
    """Item ``index``'s buttons and menus, by action id."""
    return {
        str(n["action_id"]): dict(n)
        for n in nodes(blocks)
        if str(n.get("action_id", "")).endswith(f":{index}")
    }


async def ask_granted_turn(world: SlackWorld, count: int = 3) -> tuple[str, list[str]]:
    """The model asks ``count`` refunds of a role that offers grants at once, for the owner."""
    world.llm.then_return(
        [
            call_tool(GrantedRefundCardTool, {"order_id": str(i), "amount": 10.0 + i})
            for i in range(count)
        ]
    )
    result = await world.execute("refund these", owner=OWNER)
    assert result.status is ExecutionStatus.PAUSED
    [post] = [m for m in world.stub.posted if m["channel"] == APPROVALS]
    ts = str(post["ts"])
    return ts, approve_ids(latest(world, ts))


async def choose_reassign(
    world: SlackWorld, user: str, value: str, *, index: int, ts: str
) -> dict[str, Any]:
    """``user`` picks "Reassign…" in item ``index``'s menu; the modal that opened."""
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "acme"},
        "user": {"id": user, "team_id": TEAM},
        "api_app_id": "A0APP",
        "token": "legacy",
        "container": {"type": "message", "message_ts": ts, "channel_id": APPROVALS},
        "channel": {"id": APPROVALS, "name": "approvals"},
        "message": {"ts": ts, "type": "message"},
        "trigger_id": "trigger-reassign",
        "response_url": world.stub.response_url(),
        "actions": [
            {
                "type": "overflow",
                "action_id": f"{REASSIGN_ACTION}:{index}",
                "block_id": "b1",
                "selected_option": {
                    "text": {"type": "plain_text", "text": "Reassign…"},
                    "value": value,
                },
                "action_ts": "1700000002.000000",
            }
        ],
    }
    before = len(world.stub.of("views.open"))
    response = await world.post(interactive_body(payload))
    assert response.status == 200
    await world.settle()
    opened = world.stub.of("views.open")
    assert len(opened) == before + 1
    return opened[-1].view()


async def test_every_item_of_a_turn_offers_allow_similar_and_reassign_with_its_own_value(
    world: SlackWorld,
) -> None:
    ts, ids = await ask_granted_turn(world)

    blocks = latest(world, ts)
    assert len(ids) == 3
    for index, pause_id in enumerate(ids, start=1):
        item = controls(blocks, index)
        assert item[f"{APPROVE_ACTION}:{index}"]["value"] == pause_id
        grant = item[f"{GRANT_ACTION}:{index}"]
        assert grant["text"]["text"] == "Approve and allow similar…" and grant["value"] == pause_id
        [option] = item[f"{REASSIGN_ACTION}:{index}"]["options"]
        assert option["value"] == pause_id
    assert_sent_valid(world.stub.calls, set(ids))


async def test_a_grant_from_a_turn_item_approves_it_is_recorded_and_decides_the_next_ask(
    world: SlackWorld,
) -> None:
    ts, ids = await ask_granted_turn(world)
    value = controls(latest(world, ts), 2)[f"{GRANT_ACTION}:2"]["value"]

    response = await world.click(MANAGER, f"{GRANT_ACTION}:2", value, message_ts=ts)
    assert response.status == 200
    await world.settle()
    view = world.stub.of("views.open")[-1].view()
    assert view["callback_id"] == GRANT_MODAL
    submitted = await world.submit(MANAGER, view, grant_values("requester", "8", "200"))
    assert submitted.status == 200 and await submitted.text() == ""
    await world.settle()

    assert ran(world) == ["1"]  # the item granted from, once
    [grant] = await world.app.list_grants(tenant_id=world.tenant)
    assert (grant.granted_by, grant.scope.owner_id) == (MANAGER, OWNER)
    pause = await world.app.find_pause(ids[1], tenant_id=TEAM)
    assert pause is not None and pause.status is not PauseStatus.PENDING
    blocks = latest(world, ts)  # the message shows the item approved, the others waiting
    assert approve_ids(blocks) == [ids[0], ids[2]]
    assert f"Approved* by <@{MANAGER}>" in all_text(blocks)
    assert "2 of 3 requests still wait" in all_text(blocks)
    assert controls(blocks, 2) == {}  # no buttons, no menu on the settled item

    result = await ask(world, 150)  # the next matching ask: decided at once by the grant
    assert result.status is ExecutionStatus.COMPLETED and result.record is not None
    [entry] = result.record.pauses
    assert entry.resolution is PauseResolution.DECIDED and entry.grant_id == grant.grant_id
    assert sorted(args["amount"] for _, args in world.ledger.runs) == [11.0, 150.0]
    assert_sent_valid(world.stub.calls, set(ids))


async def test_a_reassign_from_a_turn_item_lets_the_person_chosen_answer_it(
    world: SlackWorld,
) -> None:
    ts, ids = await ask_turn(world)
    [option] = controls(latest(world, ts), 1)[f"{REASSIGN_ACTION}:1"]["options"]

    view = await choose_reassign(world, MANAGER, str(option["value"]), index=1, ts=ts)
    assert view["callback_id"] == REASSIGN_MODAL
    done = await world.submit(MANAGER, view, chosen(STRANGER))
    assert done.status == 200 and await done.text() == ""
    await world.settle()

    dm = [c for c in world.stub.of("chat.postMessage") if c.payload["channel"] == STRANGER]
    assert len(dm) == 1 and f"<@{MANAGER}> handed you a question" in dm[0].payload["text"]
    blocks = latest(world, ts)  # the turn's message says it, every item still waits
    assert f"Handed to <@{STRANGER}> by <@{MANAGER}>" in all_text(blocks)
    assert approve_ids(blocks) == ids

    await world.click(STRANGER, f"{APPROVE_ACTION}:2", ids[1], message_ts=ts)  # not theirs
    await world.settle()
    assert ran(world) == []
    await world.click(STRANGER, f"{APPROVE_ACTION}:1", ids[0], message_ts=ts)
    await world.settle()

    assert ran(world) == ["0"]
    pause = await world.app.find_pause(ids[0], tenant_id=TEAM)
    assert pause is not None and pause.responder == STRANGER
    assert [(h.by, h.to) for h in pause.handovers] == [(MANAGER, STRANGER)]
    blocks = latest(world, ts)
    assert f"Approved* by <@{STRANGER}>" in all_text(blocks)
    assert approve_ids(blocks) == ids[1:]
    assert_sent_valid(world.stub.calls, set(ids))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_sibling_asked_by_the_next_instance_joins_its_turn_s_message(
    backend: str, stub: SlackStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first instance posts the turn's first question and dies before asking its siblings;
    the next instance on the same database asks them: they join that message."""
    settings = Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS)  # shared by both
    async with database(backend, tmp_path) as url:
        async with open_world(stub, url, settings=settings) as first:

            async def died(*args: object, **kwargs: object) -> None:
                raise ChannelUnavailableError("the process died before asking it")

            monkeypatch.setattr(first.bot.gateway, "_join", died)
            first.llm.then_return(refunds(3))
            with pytest.raises(ChannelUnavailableError):
                await first.execute("refund these")
            [post] = [m for m in stub.posted if m["channel"] == APPROVALS]
            ts = str(post["ts"])
            assert len(approve_ids(latest(first, ts))) == 1

        async with open_world(stub, url, settings=settings) as second:
            await second.clock.advance(RECOVERED)
            await second.settle()

            assert [m["ts"] for m in stub.posted if m["channel"] == APPROVALS] == [ts]
            ids = approve_ids(latest(second, ts))
            assert len(ids) == 3
            for pause_id in ids:  # each reference points at the one message, shared
                ref = await second.bot.messages.get(pause_id)
                assert ref is not None and (ref.ts, ref.shared) == (ts, True)
            button = approve_all(latest(second, ts))
            assert button is not None
            await second.click(MANAGER, TURN_APPROVE_ALL, str(button["value"]), message_ts=ts)
            await second.settle()
            await second.clock.advance(RECOVERED)  # a pass a busy SQLite file cut short
            await second.settle()
            assert ran(second) == ["0", "1", "2"]  # each once


@pytest.mark.parametrize("backend", BACKENDS)
async def test_siblings_asked_by_a_second_instance_alongside_join_and_either_shows_the_turn(
    backend: str, stub: SlackStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two instances serve one database at once: the first posts the turn's first question and
    fails to ask its siblings; the second asks them into that message; an item answered on the
    first then shows the whole turn (its reference read back says the message is shared)."""
    settings = Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS)
    async with (
        database(backend, tmp_path) as url,
        open_world(stub, url, settings=settings) as first,
    ):

        async def failed(*args: object, **kwargs: object) -> None:
            raise ChannelUnavailableError("this instance could not ask it")

        with monkeypatch.context() as patched:
            patched.setattr(first.bot.gateway, "_join", failed)
            first.llm.then_return(refunds(3))
            with pytest.raises(ChannelUnavailableError):
                await first.execute("refund these")
        [post] = [m for m in stub.posted if m["channel"] == APPROVALS]
        ts = str(post["ts"])

        async with open_world(stub, url, settings=settings) as second:
            await second.clock.advance(RECOVERED)
            await second.settle()
            assert [m["ts"] for m in stub.posted if m["channel"] == APPROVALS] == [ts]
            ids = approve_ids(latest(second, ts))
            assert len(ids) == 3

            await first.click(MANAGER, f"{APPROVE_ACTION}:2", ids[1], message_ts=ts)
            await first.settle()

            blocks = latest(first, ts)  # the turn, not the one question alone
            assert approve_ids(blocks) == [ids[0], ids[2]]
            assert "2 of 3 requests still wait" in all_text(blocks)
            assert [m["ts"] for m in stub.posted if m["channel"] == APPROVALS] == [ts]


def test_a_sibling_joins_the_turn_s_message_with_room_whatever_the_order_of_its_references() -> (
    None
):
    """References asked at one instant come back in no particular order: a full message read
    last is not joined, the one with room is."""

    def asked(seed: int, ts: str) -> MessageRef:
        return MessageRef(
            pause_id=f"{seed:032x}",
            tenant_id=TEAM,
            channel_id=APPROVALS,
            ts=ts,
            thread_ts=None,
            role="refund-approvers",
            implementation="slack-refunds",
            turn="f" * 64,
        )

    full = [asked(n, "1.1") for n in range(MAX_TURN_ITEMS)]
    with_room = asked(99, "2.1")

    where = _where(None, [full[0], with_room, *full[1:]])

    assert where.message is not None and where.message.ts == "2.1"
    assert where.sharing == (with_room.pause_id,)
    assert _where(None, full) == Asking()  # every message full: post a next one
    assert _where(with_room, full) == Asking(own=with_room)  # asked already: that one
