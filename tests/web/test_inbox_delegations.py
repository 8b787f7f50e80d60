"""Standing delegations on the web inbox, over HTTP: each person's own (with End now) and those
to them listed; End now ends it (only for its delegator: a forged end is refused, nothing
changed); the form starts one, refusing an unknown person, the person themself and a past end
with the reason shown, nothing made; the delegate is told through the notifier when one starts
and when one is ended early."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from html import unescape
from pathlib import Path

import pytest
from aiohttp import ClientSession

from bot import Delegation
from channels.kit.delegations import DELEGATE_FIELD, UNTIL_FIELD
from channels.kit.question import when
from channels.kit.texts import (
    DELEGATE_UNKNOWN,
    DELEGATE_YOURSELF,
    DELEGATION_END_PAST,
    DELEGATION_ENDED,
    DELEGATION_NOT_YOURS,
    delegation_ended,
    delegation_started,
)
from channels.web import NoticeKind
from channels.web.delegations import DELEGATIONS_PATH
from channels.web.render_delegations import ID_FIELD
from tests.web.conftest import WebWorld, open_web_world
from tests.web.office import ALICE, BOB, TENANT
from tests.web.pages import csrf_of, forged_csrf, open_page
from tests.web.test_handing_on import DAN, HANDING, HandingAgent

DAY = timedelta(days=1)


@pytest.fixture
async def handing(tmp_path: Path) -> AsyncIterator[WebWorld]:
    """The refunds of ``test_handing_on``: alice and bob approve them."""
    async with open_web_world(tmp_path, (HANDING.application, HandingAgent, HANDING.workflow)) as w:
        yield w


async def _inbox(http: ClientSession, world: WebWorld, who: str) -> str:
    await http.get(world.server.inbox_url(who, tenant_id=TENANT))
    status, page = await open_page(http, "/inbox")
    assert status == 200
    return page


def _form_csrf(page: str) -> str:
    return csrf_of(page[page.index(f'action="{DELEGATIONS_PATH}"') :])


async def _post(http: ClientSession, csrf: str, **fields: str) -> tuple[int, str]:
    response = await http.post(DELEGATIONS_PATH, data={"csrf": csrf, **fields})
    return response.status, unescape(await response.text())


async def _delegated(world: WebWorld) -> Delegation:
    return await world.app.delegate(tenant_id=TENANT, delegator=BOB, delegate=ALICE, ends_in=DAY)


def _delegation_notices(world: WebWorld) -> list[tuple[str, str]]:
    return [(n.approver, n.subject) for n in world.notices if n.kind is NoticeKind.DELEGATION]


async def test_the_inbox_lists_delegations_and_end_now_ends_the_delegators_own(
    handing: WebWorld,
) -> None:
    world = handing
    delegation = await _delegated(world)
    until = when(delegation.ends_at)
    assert _delegation_notices(world) == [
        (ALICE, delegation_started(BOB, "refund-approval-channel", until))
    ]
    async with world.client() as alice:
        page = unescape(await _inbox(alice, world, ALICE))
        assert f"{BOB} hands their questions to you until {until}" in page
        assert f'name="{ID_FIELD}"' not in page  # no End now for the delegate
    async with world.client() as bob:
        page = await _inbox(bob, world, BOB)
        assert f"You hand your questions to {ALICE} until {until}" in unescape(page)
        status, shown = await _post(
            bob, _form_csrf(page), action="end", **{ID_FIELD: delegation.delegation_id}
        )
    assert status == 200 and DELEGATION_ENDED in shown
    assert await world.app.list_delegations(tenant_id=TENANT) == []
    assert _delegation_notices(world)[-1] == (ALICE, delegation_ended(BOB))


async def test_an_end_posted_by_anyone_but_the_delegator_is_refused(handing: WebWorld) -> None:
    world = handing
    delegation = await _delegated(world)
    async with world.client() as alice:  # its delegate
        await _inbox(alice, world, ALICE)
        csrf = forged_csrf(world.app, alice, DELEGATIONS_PATH)  # passes the CSRF check
        status, shown = await _post(
            alice, csrf, action="end", **{ID_FIELD: delegation.delegation_id}
        )
    assert status == 403 and DELEGATION_NOT_YOURS in shown
    assert [d.delegation_id for d in await world.app.list_delegations(tenant_id=TENANT)] == [
        delegation.delegation_id
    ]


async def test_the_form_starts_a_delegation_and_refuses_bad_input(handing: WebWorld) -> None:
    world = handing
    later = (world.app.clock.now() + DAY).strftime("%Y-%m-%dT%H:%M")
    past = (world.app.clock.now() - DAY).strftime("%Y-%m-%dT%H:%M")
    async with world.client() as alice:
        csrf = _form_csrf(await _inbox(alice, world, ALICE))
        for to, until, said in [
            (DAN, later, DELEGATE_UNKNOWN),  # no web channel knows them
            (ALICE, later, DELEGATE_YOURSELF),
            (BOB, past, DELEGATION_END_PAST),
        ]:
            status, shown = await _post(
                alice, csrf, action="start", **{DELEGATE_FIELD: to, UNTIL_FIELD: until}
            )
            assert status == 400 and said in shown
        assert await world.app.list_delegations(tenant_id=TENANT) == []
        assert _delegation_notices(world) == []

        status, shown = await _post(
            alice, csrf, action="start", **{DELEGATE_FIELD: BOB, UNTIL_FIELD: later}
        )
    assert status == 200
    [made] = await world.app.list_delegations(tenant_id=TENANT)
    assert (made.delegator, made.delegate, made.ends_at) == (
        ALICE,
        BOB,
        world.app.clock.now() + DAY,
    )
    assert f"You hand your questions to {BOB} until {when(made.ends_at)}" in shown
    assert [who for who, _ in _delegation_notices(world)] == [BOB]
