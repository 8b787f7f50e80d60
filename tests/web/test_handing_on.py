"""Handing a question on from the web page (Reassign) and answering under a standing
delegation, over HTTP: the new person gets their own link and may answer, the original may
still answer, the requester is never handed their own request; the inbox lists, for a delegate,
what was handed to them and what their active delegation covers, each with its link."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import timedelta
from html import unescape
from pathlib import Path

import pytest
from aiohttp import ClientSession

from bot import ExecutionStatus, tool
from bot.testing import call_tool
from channels.kit.question import when
from channels.web import NoticeKind, web_channel
from tests.apps import sample_agent, sample_application
from tests.office import Done, Ledger
from tests.web.conftest import WebWorld, open_web_world
from tests.web.office import (
    ALICE,
    BOB,
    CAROL,
    OWNER,
    TENANT,
    RefundApprovalChannel,
    RefundCardInput,
)
from tests.web.pages import answer, has_forms, open_page

DAN = "dan"  # not an approver of refunds

WebHandingRefundChannel = web_channel(
    RefundApprovalChannel, name="web-handing-refund-approval-channel", approvers=[ALICE, BOB]
)


@tool(
    name="handed-refund-tool",
    description="Refunds a card",
    input=RefundCardInput,
    output=Done,
    channel=RefundApprovalChannel,
    deps=[Ledger],
)
class HandedRefundTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: RefundCardInput) -> Done:
        self.ledger.runs.append(("refund", {"order_id": input.order_id}))
        return Done(status="refunded")


HandingAgent = sample_agent("web-handing", tools=[HandedRefundTool], description="Refunds")
HANDING = sample_application("web-handing", agent=HandingAgent, channels=[WebHandingRefundChannel])


@pytest.fixture
async def handing(tmp_path: Path) -> AsyncIterator[WebWorld]:
    async with open_web_world(tmp_path, (HANDING.application, HandingAgent, HANDING.workflow)) as w:
        yield w


async def _asked(world: WebWorld) -> ExecutionStatus:
    result = await world.ask(
        call_tool(HandedRefundTool, {"order_id": "7", "amount": 40}), "done", owner=OWNER
    )
    return result.status


async def test_reassign_hands_the_question_to_a_person_who_then_answers_it(
    handing: WebWorld,
) -> None:
    world = handing
    assert await _asked(world) is ExecutionStatus.PAUSED
    path = world.link(ALICE, "handed-refund-tool")
    status, page = await open_page(world.http, path)
    assert status == 200 and 'value="reassign"' in page

    status, page = await answer(world.http, path, "reassign", to=OWNER)  # the requester: never
    assert status == 403 and "asked for this" in unescape(page)
    status, page = await answer(world.http, path, "reassign", to=DAN)
    assert status == 303 and f"Handed to {DAN} by {ALICE}" in unescape(page)
    [told] = [n for n in world.notices if n.approver == DAN]
    assert told.kind is NoticeKind.HANDOVER and told.subject.startswith("Handed to you:")

    async with world.client() as dan:
        status, page = await answer(dan, world.link(DAN, "handed-refund-tool"), "approve")
        assert status == 303 and not has_forms(page)
    assert world.ledger.runs == [("refund", {"order_id": "7"})]
    result = await world.app.list_pending(tenant_id=TENANT)
    assert result == []


async def test_a_standing_delegation_opens_the_page_to_the_delegate_until_its_end(
    handing: WebWorld,
) -> None:
    world = handing
    await _asked(world)
    await world.app.delegate(
        tenant_id=TENANT, delegator=BOB, delegate=CAROL, ends_in=timedelta(hours=8)
    )
    carol_link = world.server.outbox.question_url(
        (await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True))[0].pause_id
        or "",
        approver=CAROL,
        tenant_id=TENANT,
    ).removeprefix(world.base_url)
    await world.clock.advance(timedelta(hours=9))  # past its end: refused
    async with world.client() as carol:
        status, page = await open_page(carol, carol_link)
        assert status == 403 and not has_forms(page)
    await world.app.delegate(
        tenant_id=TENANT, delegator=BOB, delegate=CAROL, ends_in=timedelta(hours=8)
    )
    async with world.client() as carol:
        status, page = await answer(carol, carol_link, "approve")
        assert status == 303 and not has_forms(page)
    assert world.ledger.runs == [("refund", {"order_id": "7"})]


async def _inbox_links(http: ClientSession, world: WebWorld, who: str) -> list[str]:
    """The question links on ``who``'s inbox (signed in by their inbox link), as paths."""
    await http.get(world.server.inbox_url(who, tenant_id=TENANT))
    status, page = await open_page(http, "/inbox")
    assert status == 200
    links = re.findall(r'<li class="card">.*?<a href="([^"]+)"', page)
    return [unescape(link).removeprefix(world.base_url) for link in links]


async def test_the_inbox_lists_a_question_reassigned_to_the_person_with_their_link(
    handing: WebWorld,
) -> None:
    world = handing
    await _asked(world)
    async with world.client() as dan:
        assert await _inbox_links(dan, world, DAN) == []
        [pause] = await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
        await world.app.reassign(pause.pause_id or "", tenant_id=TENANT, by=ALICE, to=DAN)
        [link] = await _inbox_links(dan, world, DAN)
        status, page = await answer(dan, link, "approve")
        assert status == 303 and not has_forms(page)
    assert world.ledger.runs == [("refund", {"order_id": "7"})]


async def test_the_inbox_lists_what_a_delegation_covers_until_its_end(handing: WebWorld) -> None:
    world = handing
    await _asked(world)
    await world.app.delegate(
        tenant_id=TENANT, delegator=BOB, delegate=CAROL, ends_in=timedelta(hours=8)
    )
    await world.app.delegate(  # the requester: never their own request
        tenant_id=TENANT, delegator=ALICE, delegate=OWNER, ends_in=timedelta(hours=8)
    )
    async with world.client() as owner:
        assert await _inbox_links(owner, world, OWNER) == []
    async with world.client() as carol:
        [link] = await _inbox_links(carol, world, CAROL)
        status, page = await open_page(carol, link)
        assert status == 200 and has_forms(page)
        await world.clock.advance(timedelta(hours=9))  # ended: off the inbox
        assert await _inbox_links(carol, world, CAROL) == []
    assert world.ledger.runs == []


async def _inbox_page(http: ClientSession, world: WebWorld, who: str) -> str:
    await http.get(world.server.inbox_url(who, tenant_id=TENANT))
    status, page = await open_page(http, "/inbox")
    assert status == 200
    return unescape(page)


async def test_the_inbox_says_why_a_delegate_is_asked_each_question(handing: WebWorld) -> None:
    """Handed on: "Handed to you by alice"; under a standing delegation: "You answer for bob
    until <its end>" (the kit's words, ``channels.kit.waiting.HandedOn``)."""
    world = handing
    await _asked(world)
    [pause] = await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
    await world.app.reassign(pause.pause_id or "", tenant_id=TENANT, by=ALICE, to=DAN)
    delegation = await world.app.delegate(
        tenant_id=TENANT, delegator=BOB, delegate=CAROL, ends_in=timedelta(hours=8)
    )
    async with world.client() as dan:
        assert f"Handed to you by {ALICE}" in await _inbox_page(dan, world, DAN)
    async with world.client() as carol:
        page = await _inbox_page(carol, world, CAROL)
        assert f"You answer for {BOB} until {when(delegation.ends_at)}" in page
        assert "Handed to you" not in page
    async with world.client() as alice:
        page = await _inbox_page(alice, world, ALICE)
        assert "Handed to you" not in page and "You answer for" not in page
