"""A form posted while the database refuses at once (a PostgreSQL restart): a 503 page that
says plainly nothing was recorded and to try again (with ``Retry-After``), never a 500; the
question still waits, and the same form sent again once the database is back is taken
(issue 24). Each form: the question page's Approve and Reject, and the inbox's Approve
selected; a page read then is a 503 "try again" too."""

from __future__ import annotations

import pytest

from bot import PauseStatus
from channels.web.render_batches import BATCH_PATH
from channels.web.server import NOT_READ, NOT_RECORDED
from tests.database_refusals import RefusingDatabase
from tests.web.conftest import WebWorld
from tests.web.office import ALICE, TENANT
from tests.web.pages import csrf_of, open_page, post
from tests.web.test_batches import _batch_csrf, _five_refunds, _inbox, _picks
from tests.web.test_http import REFUND, ask_refund


@pytest.fixture
def refusing(web_world: WebWorld, monkeypatch: pytest.MonkeyPatch) -> RefusingDatabase:
    return RefusingDatabase(web_world.app, monkeypatch)


async def _pending(world: WebWorld) -> int:
    return len(await world.app.list_pending(tenant_id=TENANT))


@pytest.mark.parametrize(("action", "fields"), [("approve", {}), ("reject", {"reason": "no"})])
async def test_an_answer_posted_while_the_database_refuses_is_a_503_try_again(
    web_world: WebWorld, refusing: RefusingDatabase, action: str, fields: dict[str, str]
) -> None:
    world = web_world
    pause_id = await ask_refund(world)
    path = world.link(ALICE, REFUND)
    status, page = await open_page(world.http, path)
    assert status == 200
    csrf = csrf_of(page)
    refusing.down = True

    response = await post(world.http, path, action, csrf, **fields)
    assert response.status == 503
    assert response.headers["Retry-After"] == "30"
    assert NOT_RECORDED in await response.text()
    reading = await world.http.get(path)  # reading it then: "try again" too
    assert reading.status == 503 and NOT_READ in await reading.text()
    refusing.down = False
    found = await world.app.find_pause(pause_id, tenant_id=TENANT)
    assert found is not None and found.status is PauseStatus.PENDING
    assert world.ledger.runs == []

    again = await post(world.http, path, action, csrf, **fields)  # back: the same form is taken
    assert again.status == 303
    found = await world.app.find_pause(pause_id, tenant_id=TENANT)
    assert found is not None and found.status is not PauseStatus.PENDING


async def test_a_batch_posted_while_the_database_refuses_is_a_503_try_again(
    web_world: WebWorld, refusing: RefusingDatabase
) -> None:
    world = web_world
    await _five_refunds(world)
    page = await _inbox(world.http, world, ALICE)
    form = {"csrf": _batch_csrf(page), "action": "approve", "reason": "", **_picks(page)}
    refusing.down = True

    response = await world.http.post(BATCH_PATH, data=form, allow_redirects=False)
    assert response.status == 503
    assert NOT_RECORDED in await response.text()
    refusing.down = False
    assert await _pending(world) == 5
    assert world.ledger.runs == []

    again = await world.http.post(BATCH_PATH, data=form, allow_redirects=False)
    assert again.status == 200
    assert len(world.ledger.runs) == 5 and await _pending(world) == 0
