"""The web channel over HTTP: links, the question page, every way of answering, the inbox,
and every way a request is refused (forged, tampered, expired links; CSRF; a second answer)."""

from __future__ import annotations

import html
from datetime import timedelta

import pytest

from bot import ExecutionStatus, PauseStatus
from bot.core.field_errors import NOT_FINITE
from bot.core.sensitive import MASK
from bot.runtime.decisions import REASON_REQUIRED
from bot.testing import call_tool
from channels.web.server import CONTENT_SECURITY_POLICY
from tests.web.conftest import WebWorld
from tests.web.graphs import attach_refunds
from tests.web.office import (
    ALICE,
    BOB,
    OWNER,
    SECRET_EMAIL,
    STRANGER,
    TENANT,
    BookExpenseTool,
    RefundCardTool,
    WireMoneyTool,
)
from tests.web.own_links import link_for
from tests.web.pages import answer, csrf_of, field_error, has_forms, open_page, post

REFUND = "refund-card-tool"


async def ask_refund(world: WebWorld, amount: float = 40, final: str = "done") -> str:
    """Ask for one refund; the pause id (kept server-side, for the assertions)."""
    result = await world.ask(call_tool(RefundCardTool, {"order_id": "7", "amount": amount}), final)
    assert result.status is ExecutionStatus.PAUSED
    [pending] = await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
    assert pending.pause_id is not None
    return pending.pause_id


async def status_of(world: WebWorld, pause_id: str) -> PauseStatus:
    pause = await world.app.find_pause(pause_id, tenant_id=TENANT)
    assert pause is not None
    return pause.status


async def test_send_gives_each_approver_a_link_that_hides_the_pause(web_world: WebWorld) -> None:
    pause_id = await ask_refund(web_world)

    assert [n.approver for n in web_world.notices] == [ALICE, BOB]
    urls = [n.url for n in web_world.notices]
    assert all(u.startswith(f"{web_world.base_url}/q/") for u in urls)
    assert len(set(urls)) == 2
    assert all(pause_id not in u for u in urls)
    assert all(n.tool_description == "Refunds a card" for n in web_world.notices)
    assert all(pause_id not in repr(n) and n.url not in repr(n) for n in web_world.notices)


async def test_the_question_page_shows_the_request_masked_with_its_forms(
    web_world: WebWorld,
) -> None:
    pause_id = await ask_refund(web_world)

    response = await web_world.http.get(web_world.link(ALICE, REFUND))
    page = await response.text()

    assert response.status == 200
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["Cache-Control"] == "no-store"
    assert "Refunds a card" in page
    assert "A manager approves card refunds" in page
    assert "Order ID" in page and ">7<" in page
    assert html.escape(MASK) in page or MASK in page
    assert SECRET_EMAIL not in page
    assert pause_id not in page
    assert "<script" not in page and "style=" not in page
    for action in ("approve", "reject", "edit", "reply"):
        assert f'name="action" value="{action}"' in page
    assert 'type="password"' in page  # the sensitive field starts empty


async def test_approve(web_world: WebWorld) -> None:
    pause_id = await ask_refund(web_world)

    status, page = await answer(web_world.http, web_world.link(ALICE, REFUND), "approve")

    assert status == 303
    assert "Approved by you." in page
    assert not has_forms(page)
    assert await status_of(web_world, pause_id) is not PauseStatus.PENDING
    assert web_world.ledger.runs == [
        ("refund", {"order_id": "7", "amount": 40.0, "email": SECRET_EMAIL})
    ]


async def test_reject_with_a_reason_and_not_without(web_world: WebWorld) -> None:
    """The refund role takes a rejection only with its reason (``reject_reason="required"``):
    the page requires it, and the runtime refuses a post without it."""
    pause_id = await ask_refund(web_world)
    path = web_world.link(BOB, REFUND)
    _, page = await open_page(web_world.http, path)
    assert 'name="reason" maxlength="3000" required' in page

    status, page = await answer(web_world.http, path, "reject", reason="   ")
    assert status == 422
    assert html.escape(REASON_REQUIRED) in page
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING

    status, page = await answer(web_world.http, path, "reject", reason="too much")
    assert status == 303
    assert "Rejected by you: too much" in page
    assert not has_forms(page)
    assert web_world.ledger.runs == []


async def test_reject_without_a_reason_where_the_role_makes_it_optional(
    web_world: WebWorld,
) -> None:
    await web_world.ask(call_tool(BookExpenseTool, {"purpose": "lunch", "amount": 30}), "ok")
    path = web_world.link(OWNER, "book-expense-tool")
    _, page = await open_page(web_world.http, path)
    assert "Reason (optional)" in page
    assert 'name="reason" maxlength="3000" value' in page  # not required

    status, page = await answer(web_world.http, path, "reject", reason="")

    assert status == 303
    assert "Rejected by you." in page
    assert web_world.ledger.runs == []


async def test_edit_and_approve_shows_field_errors_in_place_then_runs_what_was_approved(
    web_world: WebWorld,
) -> None:
    pause_id = await ask_refund(web_world)
    path = web_world.link(ALICE, REFUND)

    status, page = await answer(
        web_world.http, path, "edit", **{"arg.order_id": "7", "arg.amount": "-5"}
    )
    assert status == 422
    assert 'id="f-amount-error"' in page
    assert "greater than 0" in page
    assert 'value="-5"' in page  # what was typed stays
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING

    status, page = await answer(
        web_world.http, path, "edit", **{"arg.order_id": "7", "arg.amount": "20", "arg.email": ""}
    )
    assert status == 303
    assert "Approved with changes by you." in page
    assert web_world.ledger.runs == [
        ("refund", {"order_id": "7", "amount": 20.0, "email": SECRET_EMAIL})
    ]


@pytest.mark.parametrize("typed", ["inf", "-inf", "nan", "1e400", "Infinity", " -1e999 "])
async def test_an_edit_to_a_number_that_is_no_number_is_that_fields_error(
    web_world: WebWorld, typed: str
) -> None:
    """Before, the page said "Approved with changes" and the run failed on ``None``."""
    pause_id = await ask_refund(web_world)
    path = web_world.link(ALICE, REFUND)

    status, page = await answer(
        web_world.http, path, "edit", **{"arg.order_id": "7", "arg.amount": typed}
    )

    assert status == 422
    assert field_error(page, "amount") == NOT_FINITE
    assert "Approved" not in page
    assert all(words not in page for words in ("pydantic", "Input should"))
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING
    assert web_world.ledger.runs == []


async def test_an_emptied_field_is_its_error_not_the_old_value(web_world: WebWorld) -> None:
    """Before, clearing Amount approved the original amount and said "Approved with
    changes"."""
    pause_id = await ask_refund(web_world, amount=120)
    path = web_world.link(ALICE, REFUND)

    for emptied in ("", "   "):
        status, page = await answer(
            web_world.http, path, "edit", **{"arg.order_id": "7", "arg.amount": emptied}
        )
        assert status == 422
        assert field_error(page, "amount") == "Enter a value."
    status, page = await answer(
        web_world.http, path, "edit", **{"arg.order_id": "", "arg.amount": "120"}
    )
    assert status == 422
    assert field_error(page, "order_id") == "Enter a value."
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING
    assert web_world.ledger.runs == []


async def test_a_field_the_form_does_not_have_is_refused_not_dropped(
    web_world: WebWorld,
) -> None:
    pause_id = await ask_refund(web_world)
    path = web_world.link(ALICE, REFUND)

    status, page = await answer(
        web_world.http,
        path,
        "edit",
        **{"arg.order_id": "7", "arg.amount": "20", "arg.discount": "90"},
    )

    assert status == 422
    assert "This form sends discount, which this request does not take" in page
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING
    assert web_world.ledger.runs == []


async def test_a_number_typed_as_the_page_shows_money_is_read_back(web_world: WebWorld) -> None:
    await ask_refund(web_world)
    path = web_world.link(ALICE, REFUND)

    status, page = await answer(
        web_world.http, path, "edit", **{"arg.order_id": "7", "arg.amount": "1,234.50"}
    )

    assert status == 303, page
    assert [ran["amount"] for _, ran in web_world.ledger.runs] == [1234.5]


async def test_an_attached_agents_edit_and_reject_are_checked_the_same_way(
    web_world: WebWorld,
) -> None:
    refunds, model, path = await attach_refunds(web_world, ("approve", "edit", "reject"))

    status, page = await answer(
        web_world.http, path, "edit", **{"arg.order_id": "7", "arg.amount": "1e400"}
    )
    assert status == 422
    assert field_error(page, "amount") == NOT_FINITE
    status, page = await answer(
        web_world.http, path, "edit", **{"arg.order_id": "7", "arg.amount": ""}
    )
    assert status == 422
    assert field_error(page, "amount") == "Enter a value."
    status, page = await answer(web_world.http, path, "reject", reason="")
    assert status == 422
    assert html.escape(REASON_REQUIRED) in page
    assert refunds.runs == [] and len(model.calls) == 1

    status, _ = await answer(
        web_world.http, path, "edit", **{"arg.order_id": "7", "arg.amount": "1,234.50"}
    )
    assert status == 303
    assert refunds.runs == [{"order_id": "7", "amount": 1234.5}]


async def test_free_text_not_understood_waits_then_understood_answers(web_world: WebWorld) -> None:
    pause_id = await ask_refund(web_world)
    path = web_world.link(ALICE, REFUND)

    status, page = await answer(web_world.http, path, "reply", reply="approve if under 10")
    assert status == 422
    assert "Not understood" in page
    assert has_forms(page)
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING

    status, page = await answer(web_world.http, path, "reply", reply="reject: not this month")
    assert status == 303
    assert "Rejected by you: not this month" in page
    assert web_world.ledger.runs == []


async def test_forged_tampered_and_malformed_links_are_404_and_answer_nothing(
    web_world: WebWorld,
) -> None:
    pause_id = await ask_refund(web_world)
    path = web_world.link(ALICE, REFUND)
    token = path.removeprefix("/q/")
    key_id, sealed, mac = token.split(".")
    flipped = sealed[:10] + ("A" if sealed[10] != "A" else "B") + sealed[11:]
    wrong = [
        f"/q/{key_id}.{flipped}.{mac}",  # tampered
        f"/q/{key_id}.{sealed}.{mac[:-2]}AA",  # a forged signature
        f"/q/nokey.{sealed}.{mac}",  # a key the ring does not hold
        f"/q/{pause_id}",  # the bare pause id
        "/q/garbage",
    ]
    for bad in wrong:
        got = await web_world.http.get(bad)
        assert got.status == 404, bad
        assert pause_id not in await got.text()
    # a form posted to a bad link, with a valid CSRF token of a good page
    _, page = await open_page(web_world.http, path)
    for bad in wrong:
        posted = await post(web_world.http, bad, "approve", csrf_of(page))
        assert posted.status in (403, 404), bad
    # a question link is not an inbox link (the kind is signed in)
    assert (await web_world.http.get(f"/i/{token}", allow_redirects=False)).status == 404
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING


async def test_an_expired_link_is_410_and_answers_nothing(web_world: WebWorld) -> None:
    pause_id = await ask_refund(web_world)
    path = web_world.link(ALICE, REFUND)
    _, page = await open_page(web_world.http, path)

    await web_world.clock.advance(timedelta(days=7, seconds=1))

    got = await web_world.http.get(path)
    assert got.status == 410
    assert "expired" in await got.text()
    assert (await post(web_world.http, path, "approve", csrf_of(page))).status == 410
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING


async def test_a_form_without_its_csrf_token_or_from_another_origin_is_refused(
    web_world: WebWorld,
) -> None:
    pause_id = await ask_refund(web_world)
    path = web_world.link(ALICE, REFUND)
    _, page = await open_page(web_world.http, path)
    csrf = csrf_of(page)

    assert (await post(web_world.http, path, "approve", "")).status == 403
    assert (await post(web_world.http, path, "approve", csrf + "0")).status == 403
    other_origin = await web_world.http.post(
        path,
        data={"csrf": csrf, "action": "approve"},
        headers={"Origin": "https://evil.example"},
        allow_redirects=False,
    )
    assert other_origin.status == 403
    # another browser (no CSRF cookie) with the token of this one's page
    async with web_world.client() as other:
        assert (await post(other, path, "approve", csrf)).status == 403
    # the token of another page (a form for another path)
    async with web_world.client() as other:
        _, bob_page = await open_page(other, web_world.link(BOB, REFUND))
        assert (await post(other, path, "approve", csrf_of(bob_page))).status == 403
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING
    assert web_world.ledger.runs == []


async def test_a_second_answer_is_not_taken_and_the_page_says_who_answered(
    web_world: WebWorld,
) -> None:
    await ask_refund(web_world)
    bob_path = web_world.link(BOB, REFUND)
    async with web_world.client() as bob:
        _, bob_page = await open_page(bob, bob_path)  # opened before Alice answers

        await answer(web_world.http, web_world.link(ALICE, REFUND), "approve")

        late = await post(bob, bob_path, "reject", csrf_of(bob_page), reason="no")
        late_page = await late.text()
        assert late.status == 409
        assert f"Your answer was not taken. Approved by {ALICE}." in late_page
        assert not has_forms(late_page)
        status, shown = await open_page(bob, bob_path)
        assert status == 200
        assert f"Approved by {ALICE}." in shown and not has_forms(shown)
    assert len(web_world.ledger.runs) == 1


async def test_a_withdrawn_question_says_so_without_forms(web_world: WebWorld) -> None:
    pause_id = await ask_refund(web_world)
    [pending] = await web_world.app.list_pending(tenant_id=TENANT)

    await web_world.app.cancel(pending.thread_id, tenant_id=TENANT)

    status, page = await open_page(web_world.http, web_world.link(ALICE, REFUND))
    assert status == 200
    assert "Cancelled." in page and 'class="notice cancelled"' in page
    assert not has_forms(page)
    assert await status_of(web_world, pause_id) is PauseStatus.CANCELLED


async def test_only_the_channels_approvers_may_answer(web_world: WebWorld) -> None:
    pause_id = await ask_refund(web_world)
    # a link signed for someone who is not an approver (the app could make one)
    path = web_world.server.outbox.question_url(pause_id, approver=STRANGER, tenant_id=TENANT)
    path = path.removeprefix(web_world.base_url)

    status, page = await open_page(web_world.http, path)
    assert status == 403
    assert "You are not one of the approvers" in page
    assert not has_forms(page)
    # the form of another page, posted to this link: refused by the rule
    _, alice_page = await open_page(web_world.http, web_world.link(ALICE, REFUND))
    refused = await post(web_world.http, path, "approve", csrf_of(alice_page))
    assert refused.status == 403  # the CSRF token is bound to the other path
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING


async def test_separation_of_duties_refuses_the_requester(web_world: WebWorld) -> None:
    await web_world.ask(call_tool(WireMoneyTool, {"iban": "DE02", "amount": 900}), "wired")
    assert [n.approver for n in web_world.notices] == [ALICE]  # never the requester

    status, page = await answer(web_world.http, await link_for(web_world, OWNER), "approve")
    assert status == 403
    assert "you cannot approve it" in page
    assert 'value="reply"' not in page  # the wire role reads no replies: no free-text form
    assert web_world.ledger.runs == []

    status, page = await answer(web_world.http, web_world.link(ALICE, "wire-money-tool"), "approve")
    assert status == 303
    assert web_world.ledger.runs == [("wire", {"iban": "DE02", "amount": 900.0})]


async def test_a_thread_owner_question_goes_to_its_owner(web_world: WebWorld) -> None:
    await web_world.ask(call_tool(BookExpenseTool, {"purpose": "lunch", "amount": 30}), "ok")

    assert [n.approver for n in web_world.notices] == [OWNER]
    status, page = await answer(
        web_world.http, web_world.link(OWNER, "book-expense-tool"), "reply", reply="lgtm"
    )
    assert status == 303
    assert "Approved by you." in page
    assert web_world.ledger.runs == [("expense", {"purpose": "lunch", "amount": 30.0})]


async def test_the_inbox_lists_what_waits_for_the_signed_in_approver(web_world: WebWorld) -> None:
    await web_world.ask(
        [
            call_tool(RefundCardTool, {"order_id": "7", "amount": 40}),
            call_tool(BookExpenseTool, {"purpose": "lunch", "amount": 30}),
        ],
        "done",
    )
    pause_ids = [
        p.pause_id
        for p in await web_world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
    ]

    assert (await web_world.http.get("/inbox")).status == 401
    inbox_url = web_world.server.inbox_url(ALICE, tenant_id=TENANT)
    signed_in = await web_world.http.get(
        inbox_url.removeprefix(web_world.base_url), allow_redirects=False
    )
    assert signed_in.status == 303 and signed_in.headers["Location"] == "/inbox"

    response = await web_world.http.get("/inbox")
    page = await response.text()
    assert response.status == 200
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "Refunds a card" in page
    assert "Books an expense" not in page  # Olga's, not Alice's
    assert all(p is not None and p not in page for p in pause_ids)
    assert SECRET_EMAIL not in page
    [link] = [part.split('"')[0] for part in page.split('href="')[1:] if "/q/" in part]
    status, question = await open_page(web_world.http, link.removeprefix(web_world.base_url))
    assert status == 200 and "Refunds a card" in question

    async with web_world.client() as olga:
        olga_inbox = web_world.server.inbox_url(OWNER, tenant_id=TENANT)
        status, olga_page = await open_page(olga, olga_inbox.removeprefix(web_world.base_url))
        assert status == 200
        assert "Books an expense" in olga_page and "Refunds a card" not in olga_page


async def test_a_question_link_signs_its_approver_in(web_world: WebWorld) -> None:
    await ask_refund(web_world)
    await open_page(web_world.http, web_world.link(BOB, REFUND))

    status, page = await open_page(web_world.http, "/inbox")

    assert status == 200
    assert f"Waiting for {BOB}" in page


async def test_the_stylesheet_is_served(web_world: WebWorld) -> None:
    response = await web_world.http.get("/static/countersign.css")
    assert response.status == 200
    assert response.content_type == "text/css"


async def test_the_desk_serves_metrics_and_readiness(web_world: WebWorld) -> None:
    await ask_refund(web_world)
    await web_world.clock.advance(timedelta(seconds=45))
    await answer(web_world.http, web_world.link(ALICE, REFUND), "approve")

    async with web_world.http.get("/metrics") as response:
        assert response.status == 200
        text = await response.text()
    async with web_world.http.get("/readyz") as ready:
        assert (ready.status, await ready.json()) == (200, {"status": "ready"})

    assert 'countersign_answers_total{code="",outcome="answered"} 1.0' in text
    assert "countersign_time_to_answer_seconds_sum{" in text
    assert "} 45.0" in text
