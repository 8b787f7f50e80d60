"""A policy's routed count on the web page (issue 29 with 28's routes): a wire of 10,000 or
more is asked as needing two approvers — said on the page, no "allow similar" form, a forged
grant post refused — the first approval is counted and the form stays for the others, the
second distinct approver's runs it once; a small wire offers the grant as its role does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path

import pytest

from bot.testing import call_tool
from channels.kit.grants import BOUND_FIELD, HOURS_FIELD, SCOPE_FIELD
from channels.kit.texts import GRANT_TITLE
from channels.web import web_channel
from tests.apps import sample_application
from tests.routed_four_eyes import (
    BIG_WIRE,
    SMALL_WIRE,
    RoutedWireApprovalChannel,
    RoutedWireTool,
    routed_wire_agent,
)
from tests.web.conftest import WebWorld, open_web_world
from tests.web.office import ALICE, BOB, CAROL, OWNER, TENANT
from tests.web.pages import answer, csrf_of, has_forms, open_page, post

TOOL = "routed-wire-tool"
WebRoutedWireChannel = web_channel(
    RoutedWireApprovalChannel,
    name="web-routed-wire-approval-channel",
    approvers=[ALICE, BOB, CAROL, OWNER],
)
RoutedAgent = routed_wire_agent("web-routed-wires")
ROUTED = sample_application("web-routed-wires", agent=RoutedAgent, channels=[WebRoutedWireChannel])


@pytest.fixture
async def routed(tmp_path: Path) -> AsyncIterator[WebWorld]:
    async with open_web_world(tmp_path, (ROUTED.application, RoutedAgent, ROUTED.workflow)) as w:
        yield w


async def test_a_big_wire_needs_two_approvers_on_the_page_and_offers_no_grant(
    routed: WebWorld,
) -> None:
    world = routed
    await world.ask(call_tool(RoutedWireTool, BIG_WIRE), "wired", owner=OWNER)
    path = world.link(ALICE, TOOL)
    status, page = await open_page(world.http, path)
    assert status == 200 and "Needs 2 approvals, each by a different person." in page
    assert GRANT_TITLE not in unescape(page)
    forged = await post(
        world.http,
        path,
        "grant",
        csrf_of(page),
        **{SCOPE_FIELD: "requester", HOURS_FIELD: "8", BOUND_FIELD: "30000"},
    )
    assert forged.status == 403  # not offered: nothing answered, nothing granted
    assert await world.app.list_grants(tenant_id=TENANT) == []
    status, page = await open_page(world.http, path)  # the forged post approved nothing
    assert status == 200 and has_forms(page) and "Approved by" not in page

    status, page = await answer(world.http, path, "approve")
    assert status == 303
    assert f"Approved by {ALICE} · 1 of 2 needed" in unescape(page)
    assert has_forms(page) and world.ledger.runs == []

    async with world.client() as bob:
        status, page = await answer(bob, world.link(BOB, TOOL), "approve")
        assert status == 303 and not has_forms(page)
    assert world.ledger.runs == [("wire", BIG_WIRE)]


async def test_a_small_wire_offers_the_grant_and_one_approval_runs_it(routed: WebWorld) -> None:
    world = routed
    await world.ask(call_tool(RoutedWireTool, SMALL_WIRE), "wired", owner=OWNER)
    path = world.link(ALICE, TOOL)
    status, page = await open_page(world.http, path)
    assert status == 200 and GRANT_TITLE in unescape(page)
    assert "Needs 2 approvals" not in page
    status, page = await answer(world.http, path, "approve")
    assert status == 303 and not has_forms(page)
    assert world.ledger.runs == [("wire", SMALL_WIRE)]
