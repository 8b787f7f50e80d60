"""The web desk fuzzed, seeded and bounded: hostile requests (``web_cases``) over HTTP against
the desk as ``python -m bot`` serves it (its form beside the web channel's pages), with its
refund and expense questions waiting.

Every request is answered below 500, with the refusal its fault calls for; none answers a
question (both records unchanged) or starts work (nothing more waits); the server still
answers ``/healthz`` and logged no error; then the page's own form answers the refund.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientResponse, ClientSession
from yarl import URL

from bot import PauseStatus, PauseView, PendingPause
from bot.desk.office import REFUND_TOOL
from bot.desk.web import DESK_PERSON, DESK_TENANT, START_PATH
from channels.web.server import SESSION_COOKIE
from tests.fuzz.tally import Tally
from tests.fuzz.web_cases import Pages, WebCase, WebCases
from tests.web.conftest import browser
from tests.web.desk import Desk, served_desk
from tests.web.pages import answer, csrf_of, open_page

SEED = 25
CASES = 400


@pytest.fixture
async def desk(tmp_path: Path) -> AsyncIterator[Desk]:
    async with served_desk(tmp_path) as served:
        yield served


async def send(desk: Desk, stranger: ClientSession, case: WebCase) -> ClientResponse:
    http = desk.http if case.signed_in else stranger
    headers = dict(case.headers)
    if case.content_type is not None:
        headers["Content-Type"] = case.content_type
    if case.session_cookie is not None:
        headers["Cookie"] = f"{SESSION_COOKIE}={case.session_cookie}"
    return await http.request(
        case.method,
        URL(desk.base_url + case.path, encoded=True),
        data=case.body if case.method == "POST" else None,
        headers=headers,
        skip_auto_headers=["Content-Type"],
        allow_redirects=False,
    )


async def records_of(desk: Desk, waiting: list[PendingPause]) -> list[PauseView | None]:
    return [await desk.app.find_pause(str(p.pause_id), tenant_id=DESK_TENANT) for p in waiting]


async def pages_of(desk: Desk, question: str) -> Pages:
    _, question_page = await open_page(desk.http, question)
    _, desk_page = await open_page(desk.http, START_PATH)
    inbox = desk.server.inbox_url(DESK_PERSON, tenant_id=DESK_TENANT)
    return Pages(
        question=question,
        question_csrf=csrf_of(question_page),
        desk_csrf=csrf_of(desk_page),
        inbox_link=desk.path_of(inbox),
        origin=desk.base_url,
    )


async def test_hostile_web_requests_are_never_a_5xx_and_answer_nothing(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    waiting = await desk.ask()
    [refund] = [p for p in waiting if p.ask.tool == REFUND_TOOL]
    records = await records_of(desk, waiting)
    pages = await pages_of(desk, desk.question_path(refund))
    tally = Tally()
    wrong: list[str] = []

    async with browser(desk.base_url) as stranger:
        for case in WebCases(SEED, pages).draw(CASES):
            response = await send(desk, stranger, case)
            await response.read()
            tally.record(case.door, case.shape, response.status)
            if response.status != case.expect:
                wrong.append(f"{case.door}, {case.shape}: {response.status}, not {case.expect}")
            stranger.cookie_jar.clear()

    print(f"\nweb desk fuzz, seed {SEED}:\n{tally.summary()}")
    assert tally.server_errors == []
    assert wrong == []
    assert await records_of(desk, waiting) == records
    assert len(await desk.pending()) == len(waiting)  # nothing more was started
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    async with desk.http.get("/healthz") as health:
        assert health.status == 200
    # the page's own form still answers
    status, page = await answer(desk.http, pages.question, "approve")
    assert status == 303 and "Approved by you." in page
    assert refund.pause_id is not None
    answered = await desk.app.find_pause(refund.pause_id, tenant_id=DESK_TENANT)
    assert answered is not None and answered.status is not PauseStatus.PENDING
