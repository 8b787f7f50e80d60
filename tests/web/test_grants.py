"""Standing grants on the web (issue 28), over HTTP: a question whose role offers grants has an
"Approve and allow similar" section; posting it (with the page's CSRF token) approves the call
and records the grant; the next matching ask is decided at once (the tool runs once, the audit
names the grant), a non-matching one is asked; the inbox lists the grant (no pause id) and its
Revoke form (the inbox's CSRF) revokes it — the next ask is asked. The same revocation from the
CLI is `tests/cli/test_grants_command.py`'s."""

from __future__ import annotations

from datetime import timedelta

from bot import ExecutionResult, ExecutionStatus, PauseResolution, WorkflowStartText
from bot.testing import call_tool
from channels.kit.grants import BOUND_FIELD, HOURS_FIELD, SCOPE_FIELD
from channels.web.grants import GRANT_ID_FIELD, GRANTS_PATH
from tests.web.conftest import WebWorld
from tests.web.office import (
    ALICE,
    BOB,
    OWNER,
    TENANT,
    GrantedPayOutTool,
    RefundCardTool,
    WebOfficeWorkflow,
)
from tests.web.pages import csrf_of, forged_csrf, open_page, post

TOOL = "granted-pay-out-tool"


async def ask(
    world: WebWorld, amount: float, *, owner: str = OWNER, record: bool = False
) -> ExecutionResult:
    world.llm.then_return(call_tool(GrantedPayOutTool, {"payee": "ann", "amount": amount}), "ok")
    return await world.app.execute(
        WebOfficeWorkflow,
        WorkflowStartText(text=f"pay {amount}"),
        tenant_id=TENANT,
        owner_id=owner,
        record=record,
    )


async def grant_on_the_page(world: WebWorld, *, bound: str = "200") -> tuple[int, str]:
    result = await ask(world, 120)
    assert result.status is ExecutionStatus.PAUSED
    path = world.link(BOB, TOOL)
    status, page = await open_page(world.http, path)
    assert status == 200
    assert "Approve and allow similar requests" in page
    assert f"for requests of {OWNER}" in page and "for this thread" in page
    assert 'value="120.00"' in page  # the call's own amount by default
    response = await post(
        world.http,
        path,
        "grant",
        csrf_of(page),
        **{SCOPE_FIELD: "requester", HOURS_FIELD: "8", BOUND_FIELD: bound},
    )
    return response.status, await response.text()


async def test_approve_and_allow_similar_on_the_page_then_the_next_matching_ask_is_decided(
    web_world: WebWorld,
) -> None:
    status, page = await grant_on_the_page(web_world)
    assert status == 200, page
    assert "Approved, and similar requests are allowed: " in page
    assert "<form" not in page  # it no longer waits
    assert [args["amount"] for _, args in web_world.ledger.runs] == [120.0]
    [grant] = await web_world.app.list_grants(tenant_id=TENANT)
    assert (grant.granted_by, grant.scope.owner_id, dict(grant.constraint.at_most)) == (
        BOB,
        OWNER,
        {"amount": 200.0},
    )
    assert grant.expires_at - grant.created_at == timedelta(hours=8)

    asked = len(web_world.notices)
    result = await ask(web_world, 150, record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert [args["amount"] for _, args in web_world.ledger.runs] == [120.0, 150.0]  # once
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.resolution is PauseResolution.DECIDED
    assert (entry.grant_id, entry.granted_by) == (grant.grant_id, BOB)
    assert len(web_world.notices) == asked  # nobody was asked

    # not for an amount over the bound, another requester, nor another tool
    web_world.llm.then_return(call_tool(GrantedPayOutTool, {"payee": "ann", "amount": 250}))
    over = await web_world.app.execute(
        WebOfficeWorkflow, WorkflowStartText(text="x"), tenant_id=TENANT, owner_id=OWNER
    )
    web_world.llm.then_return(call_tool(GrantedPayOutTool, {"payee": "ann", "amount": 50}))
    other = await web_world.app.execute(
        WebOfficeWorkflow, WorkflowStartText(text="x"), tenant_id=TENANT, owner_id="someone"
    )
    web_world.llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 50}))
    tool = await web_world.app.execute(
        WebOfficeWorkflow, WorkflowStartText(text="x"), tenant_id=TENANT, owner_id=OWNER
    )
    assert [r.status for r in (over, other, tool)] == [ExecutionStatus.PAUSED] * 3
    assert len(web_world.ledger.runs) == 2


async def test_a_bad_bound_is_said_and_the_question_still_waits(web_world: WebWorld) -> None:
    status, page = await grant_on_the_page(web_world, bound="lots")
    assert status == 422
    assert "Write a number of at least 0, or leave it empty." in page
    assert web_world.ledger.runs == []
    assert await web_world.app.list_grants(tenant_id=TENANT) == []
    [pending] = await web_world.app.list_pending(tenant_id=TENANT)
    assert pending.ask.tool == TOOL


async def test_no_grant_section_where_the_role_offers_none_and_a_forged_grant_is_refused(
    web_world: WebWorld,
) -> None:
    web_world.llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 50}))
    await web_world.app.execute(
        WebOfficeWorkflow, WorkflowStartText(text="x"), tenant_id=TENANT, owner_id=OWNER
    )
    path = web_world.link(ALICE, "refund-card-tool")
    _, page = await open_page(web_world.http, path)
    assert "Approve and allow similar" not in page
    response = await post(
        web_world.http, path, "grant", csrf_of(page), **{SCOPE_FIELD: "requester"}
    )
    assert response.status == 403
    assert await web_world.app.list_grants(tenant_id=TENANT) == []
    pause = (await web_world.app.list_pending(tenant_id=TENANT))[0]
    assert pause.ask.tool == "refund-card-tool"


async def test_revoked_from_the_inbox_the_next_ask_is_asked(web_world: WebWorld) -> None:
    status, _ = await grant_on_the_page(web_world)
    assert status == 200
    [grant] = await web_world.app.list_grants(tenant_id=TENANT)
    # BOB is signed in by the question's link: the inbox lists the grant, no pause id
    status, inbox = await open_page(web_world.http, "/inbox")
    assert status == 200
    assert "Standing grants" in inbox and f"for requests of {OWNER}" in inbox
    assert "amount ≤ 200.00" in inbox
    pause_ids = {
        p.pause_id for p in await web_world.app.list_answered(tenant_id=TENANT, responder=BOB)
    }
    assert all(pause_id not in inbox for pause_id in pause_ids)

    # without the inbox's CSRF token: refused, still in force
    refused = await web_world.http.post(
        GRANTS_PATH, data={"csrf": "forged", GRANT_ID_FIELD: grant.grant_id}
    )
    assert refused.status == 403
    assert len(await web_world.app.list_grants(tenant_id=TENANT)) == 1

    # from another approver's inbox (ALICE approves refunds, not payouts): refused
    alice = web_world.client()
    try:
        await alice.get(web_world.server.inbox_url(ALICE, tenant_id=TENANT))
        _, alice_inbox = await open_page(alice, "/inbox")
        assert grant.grant_id not in alice_inbox
        response = await alice.post(
            GRANTS_PATH,
            data={
                "csrf": forged_csrf(web_world.app, alice, GRANTS_PATH),  # passes the CSRF check
                GRANT_ID_FIELD: grant.grant_id,
            },
        )
        assert response.status == 403
    finally:
        await alice.close()
    assert len(await web_world.app.list_grants(tenant_id=TENANT)) == 1

    response = await web_world.http.post(
        GRANTS_PATH, data={"csrf": _inbox_csrf(inbox), GRANT_ID_FIELD: grant.grant_id}
    )
    assert response.status == 200
    after = await response.text()
    assert "Revoked: " in after and "No standing grants: every request is asked." in after
    assert await web_world.app.list_grants(tenant_id=TENANT) == []

    result = await ask(web_world, 150)
    assert result.status is ExecutionStatus.PAUSED  # asked again
    assert [p.ask.tool for p in await web_world.app.list_pending(tenant_id=TENANT)] == [TOOL]
    assert len(web_world.ledger.runs) == 1


def _inbox_csrf(page: str) -> str:
    """The CSRF token of the inbox's Revoke forms."""
    return csrf_of(page[page.index(f'action="{GRANTS_PATH}"') :])
