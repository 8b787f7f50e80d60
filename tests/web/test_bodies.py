"""A posted body that is not a form our pages send is a 400 page and one warning, on every
form: the question pages and the web desk's own (issue 25, item 1). Each was a 500 with a
traceback (``request.post()`` raised), or was read as something it did not say.

Every post here carries the page's valid CSRF token and cookie, so only its body is wrong.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final

import pytest

from bot.desk.web import DESK_TENANT, START_PATH
from channels.web.server import CONTENT_SECURITY_POLICY
from tests.web.desk import Desk, served_desk
from tests.web.pages import csrf_of, open_page

FORM: Final = "application/x-www-form-urlencoded"
CSRF: Final = "{csrf}"
"""Where the page's CSRF token goes in a body below."""

HOSTILE_BODIES: Final[dict[str, tuple[bytes, str]]] = {
    "invalid UTF-8": (b"action=reject&reason=\xff&csrf={csrf}", FORM),
    "a percent-escape that is not UTF-8": (b"action=reject&reason=%FF&csrf={csrf}", FORM),
    "an unknown charset": (b"action=reject&reason=no&csrf={csrf}", f"{FORM}; charset=bogus-9"),
    "a charset we do not read": (b"action=reject&reason=no&csrf={csrf}", f"{FORM}; charset=utf-16"),
    "a charset aiohttp cannot parse": (
        b"action=reject&reason=no&csrf={csrf}",
        f"{FORM}; charset=[",
    ),
    "multipart without a boundary": (b"action=reject&csrf={csrf}", "multipart/form-data"),
    "a multipart field without a name": (
        b"--b\r\nContent-Disposition: form-data\r\n\r\nreject\r\n--b\r\nContent-Disposition: "
        b'form-data; name="csrf"\r\n\r\n{csrf}\r\n--b--\r\n',
        "multipart/form-data; boundary=b",
    ),
    "a well-formed multipart form": (
        b'--b\r\nContent-Disposition: form-data; name="action"\r\n\r\nreject\r\n--b\r\n'
        b'Content-Disposition: form-data; name="reason"\r\n\r\nno\r\n--b\r\n'
        b'Content-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n--b--\r\n',
        "multipart/form-data; boundary=b",
    ),
    "a field sent twice": (b"action=reply&action=reject&reason=no&csrf={csrf}", FORM),
    "a field without a value": (b"action=reject&reason=no&junk&csrf={csrf}", FORM),
    "JSON": (b'{"action": "reject", "reason": "no", "csrf": "{csrf}"}', "application/json"),
    "no content type": (b"action=reject&reason=no&csrf={csrf}", ""),
}


@pytest.fixture
async def desk(tmp_path: Path) -> AsyncIterator[Desk]:
    async with served_desk(tmp_path) as served:
        yield served


async def post_hostile(desk: Desk, path: str, body: bytes, content_type: str) -> tuple[int, str]:
    _, page = await open_page(desk.http, path)
    raw = body.replace(CSRF.encode(), csrf_of(page).encode())
    headers = {"Content-Type": content_type} if content_type else {}
    response = await desk.http.post(
        path, data=raw, headers=headers, skip_auto_headers=["Content-Type"], allow_redirects=False
    )
    if response.status != 303:
        assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    return response.status, await response.text()


def assert_one_warning_and_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    mine = [r for r in caplog.records if r.name.startswith(("countersign", "aiohttp"))]
    assert [r.levelno for r in mine] == [logging.WARNING], [r.getMessage() for r in mine]
    assert mine[0].exc_info is None
    assert "refused a form that cannot be read" in mine[0].getMessage()


@pytest.mark.parametrize(("body", "content_type"), HOSTILE_BODIES.values(), ids=HOSTILE_BODIES)
async def test_a_question_page_answers_an_unreadable_body_400_and_the_question_waits(
    desk: Desk, caplog: pytest.LogCaptureFixture, body: bytes, content_type: str
) -> None:
    refund = await desk.ask_refund()
    path = desk.question_path(refund)
    assert refund.pause_id is not None
    before = await desk.app.find_pause(refund.pause_id, tenant_id=DESK_TENANT)
    caplog.clear()

    status, page = await post_hostile(desk, path, body, content_type)

    assert status == 400
    assert "This form could not be read" in page
    assert_one_warning_and_no_traceback(caplog)
    assert await desk.app.find_pause(refund.pause_id, tenant_id=DESK_TENANT) == before


@pytest.mark.parametrize(("body", "content_type"), HOSTILE_BODIES.values(), ids=HOSTILE_BODIES)
async def test_the_desk_form_answers_an_unreadable_body_400_and_starts_nothing(
    desk: Desk, caplog: pytest.LogCaptureFixture, body: bytes, content_type: str
) -> None:
    caplog.clear()
    status, page = await post_hostile(
        desk, START_PATH, body.replace(b"action=", b"text="), content_type
    )

    assert status == 400
    assert "This form could not be read" in page
    assert_one_warning_and_no_traceback(caplog)
    assert await desk.pending() == []


async def test_a_well_formed_post_still_answers(desk: Desk) -> None:
    """The same page, the same token: a form as the page sends it (``charset=UTF-8`` too)."""
    refund = await desk.ask_refund()
    path = desk.question_path(refund)

    status, _ = await post_hostile(
        desk, path, b"action=reject&reason=caf%C3%A9&csrf={csrf}", f"{FORM}; charset=UTF-8"
    )

    assert status == 303
    assert refund.pause_id is not None
    pause = await desk.app.find_pause(refund.pause_id, tenant_id=DESK_TENANT)
    assert pause is not None and pause.decision is not None
    assert pause.decision.reason == "café"
