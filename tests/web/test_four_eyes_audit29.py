"""Two approvers for one wire on the web page, the paths tests/web/test_four_eyes.py leaves out
(issue 29 audit): a rejection after one approval rejects with its reason and nothing runs; a
post after the question closed (a third approver's, a page left open) is refused (409) with a
page that says who answered it, and nothing runs twice."""

from __future__ import annotations

from html import unescape

from bot import PauseStatus
from tests.four_eyes import WIRE
from tests.web.conftest import WebWorld
from tests.web.office import ALICE, BOB, CAROL, TENANT
from tests.web.pages import answer, csrf_of, has_forms, open_page, post
from tests.web.test_four_eyes import _asked, four_eyes

__all__ = ["four_eyes"]  # the fixture, shared


async def _the_pause(world: WebWorld) -> str:
    [pending] = await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
    assert pending.pause_id is not None
    return pending.pause_id


async def test_a_rejection_after_one_approval_rejects_with_its_reason(
    four_eyes: WebWorld,
) -> None:
    world = four_eyes
    await _asked(world)
    pause_id = await _the_pause(world)
    status, _ = await answer(world.http, world.link(ALICE, "wire-tool"), "approve")
    assert status == 303

    async with world.client() as bob:
        status, page = await answer(
            bob, world.link(BOB, "wire-tool"), "reject", reason="unknown account"
        )
        assert status == 303 and not has_forms(page)
        assert "unknown account" in unescape(page)
    pause = await world.app.find_pause(pause_id, tenant_id=TENANT)
    assert pause is not None and pause.status is not PauseStatus.PENDING
    assert pause.responder == BOB and [a.by for a in pause.approvals] == [ALICE]
    assert world.ledger.runs == []


async def test_a_post_after_the_second_approval_is_told_it_was_answered(
    four_eyes: WebWorld,
) -> None:
    world = four_eyes
    await _asked(world)
    async with world.client() as carol:  # Carol opens the page while it still waits
        carol_path = world.link(CAROL, "wire-tool")
        status, left_open = await open_page(carol, carol_path)
        assert status == 200 and has_forms(left_open)
        for who, client in ((ALICE, world.http), (BOB, None)):
            if client is None:
                async with world.client() as bob:
                    status, _ = await answer(bob, world.link(who, "wire-tool"), "approve")
            else:
                status, _ = await answer(client, world.link(who, "wire-tool"), "approve")
            assert status == 303
        assert world.ledger.runs == [("wire", WIRE)]

        for action, fields in (("approve", {}), ("reject", {"reason": "too late"})):
            response = await post(carol, carol_path, action, csrf_of(left_open), **fields)
            assert response.status == 409  # a conflict: said on the page, nothing done
            shown = unescape(await response.text())
            assert "Your answer was not taken." in shown
            assert f"Approved by {ALICE} and {BOB} · 2 of 2." in shown  # every approver
            assert not has_forms(shown)
    assert world.ledger.runs == [("wire", WIRE)]
