"""A question's page offers only the answers its asker takes (an attached LangGraph agent's
``allowed_decisions``), "Answer instead" where it takes ``respond``; a forged form for any other
answer is refused and the question keeps waiting."""

from __future__ import annotations

from bot import PauseStatus
from bot.testing import call_tool
from tests.langgraph.kit import contents_of_tool_messages
from tests.web.conftest import WebWorld
from tests.web.graphs import ANSWER, GRAPH_TOOL, attach_refunds
from tests.web.office import ALICE, TENANT, RefundCardTool
from tests.web.pages import answer, csrf_of, has_forms, open_page, post


async def still_waits(world: WebWorld) -> bool:
    pending = await world.app.list_pending(tenant_id=TENANT)
    return [p.ask.tool for p in pending] == [GRAPH_TOOL]


def offered_actions(page: str) -> list[str]:
    kinds = ("approve", "reject", "edit", "respond", "reply")
    return [k for k in kinds if f'name="action" value="{k}"' in page]


async def test_edit_is_offered_only_where_the_asker_takes_it(web_world: WebWorld) -> None:
    await attach_refunds(web_world, ("approve", "edit", "reject"))

    status, page = await open_page(web_world.http, web_world.link(ALICE, GRAPH_TOOL))

    assert status == 200
    assert offered_actions(page) == ["approve", "reject", "edit", "reply"]
    assert "Refund?" in page  # what the middleware says about the call
    assert "Answer instead" not in page


async def test_a_forged_edit_or_response_is_refused_and_the_question_waits(
    web_world: WebWorld,
) -> None:
    refunds, _, path = await attach_refunds(web_world, ("approve", "reject"))
    status, page = await open_page(web_world.http, path)
    assert status == 200
    assert offered_actions(page) == ["approve", "reject", "reply"]
    csrf = csrf_of(page)

    edit = await post(
        web_world.http, path, "edit", csrf, **{"arg.order_id": "7", "arg.amount": "5"}
    )
    respond = await post(web_world.http, path, "respond", csrf, response=ANSWER)

    for refused in (edit, respond):
        shown = await refused.text()
        assert refused.status == 403
        assert "This request does not take that answer (it takes: approve, reject)" in shown
        assert has_forms(shown)  # it still waits: the page offers what it takes
    assert await still_waits(web_world)
    assert refunds.runs == []

    status, page = await answer(web_world.http, path, "approve")
    assert status == 303 and "Approved by you." in page
    assert refunds.runs == [{"order_id": "7", "amount": 40.0}]


async def test_answer_instead_gives_the_agent_a_response_in_place_of_the_tool(
    web_world: WebWorld,
) -> None:
    refunds, model, path = await attach_refunds(web_world, ("approve", "respond"))
    status, page = await open_page(web_world.http, path)
    assert status == 200
    assert offered_actions(page) == ["approve", "respond"]  # one free-text box: respond's
    assert "Answer instead" in page and "Reason for rejecting" not in page
    assert page.count("<textarea") + page.count('name="reply"') == 1

    forged = await post(web_world.http, path, "reject", csrf_of(page), reason="no")
    assert forged.status == 403
    assert "it takes: approve, answer instead" in await forged.text()
    # a free-text reply is not offered beside respond: a text is never read two ways
    status, shown = await answer(web_world.http, path, "reply", reply="approve")
    assert status == 403 and "it takes: approve, answer instead" in shown
    status, shown = await answer(web_world.http, path, "respond", response="   ")
    assert status == 422 and "Write your answer first." in shown
    assert await still_waits(web_world)

    status, shown = await answer(web_world.http, path, "respond", response=ANSWER)

    assert status == 303
    assert f"Answered instead of the tool by you: {ANSWER}" in shown
    assert not has_forms(shown)
    assert refunds.runs == []
    assert contents_of_tool_messages(model) == [ANSWER]
    assert await web_world.app.list_pending(tenant_id=TENANT) == []


async def test_a_native_question_takes_no_response_and_no_unknown_action(
    web_world: WebWorld,
) -> None:
    await web_world.ask(call_tool(RefundCardTool, {"order_id": "7", "amount": 40}), "done")
    path = web_world.link(ALICE, "refund-card-tool")
    _, page = await open_page(web_world.http, path)
    assert offered_actions(page) == ["approve", "reject", "edit", "reply"]

    respond = await post(web_world.http, path, "respond", csrf_of(page), response=ANSWER)
    unknown = await post(web_world.http, path, "delegate", csrf_of(page))

    assert respond.status == 403
    assert "it takes: approve, reject, edit" in await respond.text()
    assert unknown.status == 400
    assert "This form asks for something the page does not do" in await unknown.text()
    [pending] = await web_world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
    assert pending.pause_id is not None
    pause = await web_world.app.find_pause(pending.pause_id, tenant_id=TENANT)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert web_world.ledger.runs == []
