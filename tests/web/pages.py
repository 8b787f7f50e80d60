"""Reading the web pages in tests: the CSRF token of a page, its forms, its notice; and a
forged CSRF token for posts the page would not make."""

from __future__ import annotations

import hashlib
import hmac
import html
import re

from aiohttp import ClientResponse, ClientSession

from bot import App
from channels.web.server import CSRF_COOKIE, CSRF_PURPOSE

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_of(page: str) -> str:
    found = _CSRF.search(page)
    assert found is not None, "the page has no form"
    return found.group(1)


def field_error(page: str, key: str) -> str | None:
    """The error the page shows under the input of argument ``key`` (unescaped)."""
    found = re.search(rf'<p class="field-error" id="f-{re.escape(key)}-error">([^<]*)</p>', page)
    return None if found is None else html.unescape(found.group(1))


def has_forms(page: str) -> bool:
    return "<form" in page


async def open_page(http: ClientSession, path: str) -> tuple[int, str]:
    response = await http.get(path)
    return response.status, await response.text()


async def post(
    http: ClientSession, path: str, action: str, csrf: str, **fields: str
) -> ClientResponse:
    data = {"csrf": csrf, "action": action, **fields}
    return await http.post(path, data=data, allow_redirects=False)


async def answer(http: ClientSession, path: str, action: str, **fields: str) -> tuple[int, str]:
    """Open the question, post ``action`` with its CSRF token, follow a redirect: the status
    of the post and the page shown after it."""
    status, page = await open_page(http, path)
    assert status == 200, page
    response = await post(http, path, action, csrf_of(page), **fields)
    if response.status == 303:
        follow_status, shown = await open_page(http, response.headers["Location"])
        assert follow_status == 200
        return 303, shown
    return response.status, await response.text()


def forged_csrf(app: App, http: ClientSession, path: str) -> str:
    """A valid CSRF token for ``path`` in ``http``'s browser, made without the page's form (as
    someone who knows the key could): a post that passes the CSRF check, to show that what
    stops it is the rule of who may answer how."""
    [cookie] = [c.value for c in http.cookie_jar if c.key == CSRF_COOKIE]
    _, key = app.derived_keys.current(CSRF_PURPOSE)
    return hmac.new(key, f"{cookie}|{path}".encode(), hashlib.sha256).hexdigest()
