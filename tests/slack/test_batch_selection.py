"""``/pending``'s selection as signed requests against the Web API stub: a checkbox per
question (its value the pause id sealed for the person), "Approve selected" answering what is
ticked, "Reject selected…" asking one reason in a modal that each item records (and the model
reads); an item answered elsewhere meanwhile is skipped, each message updated once, a retry
answers nothing twice; another person's, forged or tampered picks answer nothing."""

from __future__ import annotations

import base64
import json
from typing import Any

from slack_sdk.models.views import View

from bot import PauseStatus, ToolCallApprovalDecision
from channels.kit.texts import (
    BATCH_NONE_SELECTED,
    BATCH_NOT_YOURS,
    BATCH_REASON_REQUIRED,
    batch_skipped,
)
from channels.slack.batch_seal import BatchSealer
from channels.slack.render import APPROVE_ACTION, BATCH_REJECT_MODAL, PICK_ACTION
from tests.slack.batch_picks import ask_refunds, batch_button, checkboxes, ticked
from tests.slack.checks import all_text, assert_sent_valid
from tests.slack.conftest import SlackWorld, interactive_body
from tests.slack.office import MANAGER, STRANGER
from tests.slack.stub import TEAM
from tests.slack.test_batches import told
from tests.slack.test_lists import pending_of
from tests.slack.test_modals import reason

RETRY = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}


async def _statuses(world: SlackWorld, ids: list[str]) -> list[PauseStatus]:
    found = [await world.app.find_pause(i, tenant_id=TEAM) for i in ids]
    return [p.status for p in found if p is not None]


async def test_each_question_has_a_sealed_checkbox(world: SlackWorld) -> None:
    ids = await ask_refunds(world, 3)
    sent = await pending_of(world, MANAGER)
    boxes = checkboxes(sent["blocks"])
    assert sorted(boxes) == sorted(ids)
    for pause_id, box in boxes.items():
        [option] = box["options"]
        assert pause_id not in str(option["value"])  # sealed
    assert [
        batch_button(sent["blocks"], kind)["text"]["text"]
        for kind in ("batch", "batch-selected", "batch-reject")
    ] == ["Approve all 3", "Approve selected", "Reject selected…"]
    assert_sent_valid(world.stub.calls, set(ids))


async def test_approve_selected_answers_what_is_ticked_and_skips_one_answered_meanwhile(
    world: SlackWorld,
) -> None:
    ids = await ask_refunds(world, 4)
    blocks = (await pending_of(world, MANAGER))["blocks"]
    state = ticked(blocks, [ids[0], ids[1], ids[3]])
    await world.click(MANAGER, APPROVE_ACTION, ids[1])  # on its own message, meanwhile
    await world.settle()

    response = await world.click(
        MANAGER,
        batch_button(blocks, "batch-selected")["action_id"],
        "selected",
        ephemeral=True,
        state=state,
    )
    assert response.status == 200
    await world.settle()

    assert sorted(args["order_id"] for _, args in world.ledger.runs) == ["0", "1", "3"]
    pending = [s is PauseStatus.PENDING for s in await _statuses(world, ids)]
    assert pending == [False, False, True, False]
    assert len(world.stub.of("chat.update")) == 3  # each answered question's message, once
    [said] = [t for t in told(world) if "Approved." in t]
    assert said.count("Approved.") == 2
    assert said.count(batch_skipped("Approved by you.")) == 1
    assert "Refunds a card" in said

    again = await world.click(  # Slack retries the same interaction
        MANAGER,
        batch_button(blocks, "batch-selected")["action_id"],
        "selected",
        ephemeral=True,
        state=state,
        headers=RETRY,
    )
    assert again.status == 200
    await world.settle()
    assert len(world.ledger.runs) == 3  # each tool once
    assert len(world.stub.of("chat.update")) == 3
    assert told(world)[-2].count("Already answered elsewhere, skipped") == 3
    assert_sent_valid(world.stub.calls, set(ids))


async def test_picks_not_theirs_answer_nothing(world: SlackWorld) -> None:
    ids = await ask_refunds(world, 3)
    blocks = (await pending_of(world, MANAGER))["blocks"]
    action = batch_button(blocks, "batch-selected")["action_id"]
    state = ticked(blocks, ids[:2])
    tampered = json.loads(json.dumps(state))
    chosen = [a for b in tampered.values() for a in b.values() if a["selected_options"]]
    first = chosen[0]["selected_options"][0]
    first["value"] = first["value"][:-4] + "AAAA"
    bare = {"type": "checkboxes", "selected_options": [{"value": ids[2]}]}  # a bare pause id
    forged = {"b": {f"{PICK_ACTION}:0": bare}}

    for user, picks, said in (
        (STRANGER, state, BATCH_NOT_YOURS),  # another person's picks
        (MANAGER, tampered, BATCH_NOT_YOURS),
        (MANAGER, forged, BATCH_NOT_YOURS),
        (MANAGER, ticked(blocks, []), BATCH_NONE_SELECTED),
    ):
        await world.click(user, action, "selected", ephemeral=True, state=picks)
        await world.settle()
        assert told(world)[-1] == said
    reject = batch_button(blocks, "batch-reject")["action_id"]
    for user, picks in ((STRANGER, state), (MANAGER, tampered)):  # no modal either
        await world.click(user, reject, "selected", ephemeral=True, state=picks)
        await world.settle()
        assert told(world)[-1] == BATCH_NOT_YOURS
    assert world.stub.of("views.open") == []
    assert world.ledger.runs == []
    assert world.stub.of("chat.update") == []
    assert set(await _statuses(world, ids)) == {PauseStatus.PENDING}


async def _open_batch_reject(world: SlackWorld, state: dict[str, Any], blocks: Any) -> Any:
    action = batch_button(blocks, "batch-reject")["action_id"]
    response = await world.click(MANAGER, action, "selected", ephemeral=True, state=state)
    assert response.status == 200
    await world.settle()
    opened = world.stub.of("views.open")[-1]
    view = opened.view()
    assert View(**view) is not None  # slack_sdk reads it back
    assert view["callback_id"] == BATCH_REJECT_MODAL
    return view


async def test_reject_selected_asks_one_reason_each_item_records_and_the_model_reads(
    world: SlackWorld,
) -> None:
    ids = await ask_refunds(world, 3)
    blocks = (await pending_of(world, MANAGER))["blocks"]
    view = await _open_batch_reject(world, ticked(blocks, ids[:2]), blocks)
    assert all(pause_id not in json.dumps(view) for pause_id in ids)
    assert "2 questions" in all_text(view)

    blank = await world.submit(MANAGER, view, reason("  "))  # required: the modal stays
    assert json.loads(await blank.text())["errors"]["reason"] == BATCH_REASON_REQUIRED
    assert set(await _statuses(world, ids)) == {PauseStatus.PENDING}

    response = await world.submit(MANAGER, view, reason("out of stock"))
    assert response.status == 200 and await response.text() == ""
    await world.settle()

    for pause_id in ids[:2]:
        pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
        assert pause is not None and pause.decision == ToolCallApprovalDecision(
            approved=False, reason="out of stock"
        )
    assert await _statuses(world, ids[2:]) == [PauseStatus.PENDING]
    assert world.ledger.runs == []
    updates = world.stub.of("chat.update")
    assert len(updates) == 2 and all("out of stock" in all_text(u.blocks()) for u in updates)
    [said] = [t for t in told(world) if "Rejected." in t]
    assert said.count("Rejected.") == 2

    again = await world.submit(MANAGER, view, reason("out of stock"))  # submitted twice
    assert again.status == 200
    await world.settle()
    assert len(world.stub.of("chat.update")) == 2

    await world.click(MANAGER, APPROVE_ACTION, ids[2])  # the turn's last question: it goes on
    await world.settle()
    assert [args["order_id"] for _, args in world.ledger.runs] == ["2"]
    read = [" ".join(str(m.content) for m in call.messages) for call in world.llm.calls]
    assert (
        sum("out of stock" in r for r in read) == 2
    )  # each rejected call's result tells its model
    assert_sent_valid(world.stub.calls, set(ids))


async def test_a_tampered_or_borrowed_batch_reject_modal_answers_nothing(
    world: SlackWorld,
) -> None:
    ids = await ask_refunds(world, 2)
    blocks = (await pending_of(world, MANAGER))["blocks"]
    view = await _open_batch_reject(world, ticked(blocks, ids), blocks)
    body, mac = view["private_metadata"].rsplit(".", 1)
    document = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    document["p"] = json.dumps(ids)  # the ids in clear, the same signature
    changed = base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")

    for user, submitted in (
        (MANAGER, dict(view, private_metadata=f"{changed}.{mac}")),
        (STRANGER, view),
    ):
        response = await world.submit(user, submitted, reason("no"))
        assert json.loads(await response.text())["response_action"] == "errors"
    await world.settle()
    assert set(await _statuses(world, ids)) == {PauseStatus.PENDING}
    assert world.stub.of("chat.update") == []


async def test_ticking_a_checkbox_answers_nothing(world: SlackWorld) -> None:
    ids = await ask_refunds(world, 2)
    blocks = (await pending_of(world, MANAGER))["blocks"]
    box = checkboxes(blocks)[ids[0]]
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "acme"},
        "user": {"id": MANAGER, "team_id": TEAM},
        "api_app_id": "A0APP",
        "token": "legacy",
        "container": {"type": "message", "message_ts": "1.2", "is_ephemeral": True},
        "trigger_id": "trigger-tick",
        "response_url": world.stub.response_url(),
        "actions": [  # as Slack sends a tick: the element's selection, no value
            {
                "type": "checkboxes",
                "action_id": box["action_id"],
                "block_id": "slack-0",
                "selected_options": list(box["options"]),
                "action_ts": "1700000002.000000",
            }
        ],
    }
    response = await world.post(interactive_body(payload))
    assert response.status == 200
    await world.settle()
    assert set(await _statuses(world, ids)) == {PauseStatus.PENDING}
    assert world.stub.of("chat.update") == [] and world.ledger.runs == []


async def test_picks_sealed_for_a_conversation_are_answered_by_each_questions_rule(
    world: SlackWorld,
) -> None:
    """A message a conversation sees seals its checkboxes for anyone of the tenant: who may
    answer is checked per question, as for its own buttons."""
    ids = await ask_refunds(world, 2)
    blocks = (await pending_of(world, MANAGER))["blocks"]
    action = batch_button(blocks, "batch-selected")["action_id"]
    sealer = BatchSealer(world.app.derived_keys)
    state = {
        f"b{i}": {
            f"{PICK_ACTION}:{i}": {
                "type": "checkboxes",
                "selected_options": [{"value": sealer.seal([p], user=None, tenant_id=TEAM)}],
            }
        }
        for i, p in enumerate(ids)
    }

    await world.click(STRANGER, action, "selected", state=state)  # in the conversation
    await world.settle()
    [refused] = [c.payload["text"] for c in world.stub.of("chat.postEphemeral")]
    assert refused.count("Refused:") == 2 and "not one of the approvers" in refused
    assert set(await _statuses(world, ids)) == {PauseStatus.PENDING}

    await world.click(MANAGER, action, "selected", state=state)
    await world.settle()
    assert sorted(args["order_id"] for _, args in world.ledger.runs) == ["0", "1"]
    assert len(world.stub.of("chat.update")) == 2
