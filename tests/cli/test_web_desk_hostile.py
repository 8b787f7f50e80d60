"""``python -m bot``'s web desk against hostile requests (issue 25): a body that is not a form
is a 400 page and one log line, and the desk goes on serving (item 1: before, each was a 500
and a traceback); its links open only as they were printed or sent (item 2)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from tests.cli.processes import person_env
from tests.cli.web_desk import Browser, start_python_m_bot
from tests.ports import free_port

FORM: Final = "application/x-www-form-urlencoded"
REFUSED: Final = "refused a form that cannot be read"


def test_bad_bodies_are_400_links_have_one_spelling_and_the_desk_serves_on(tmp_path: Path) -> None:
    served = start_python_m_bot(tmp_path, person_env(PORT=str(free_port())))
    try:
        browser = Browser(origin=served.origin)
        for respelled in (served.inbox_link + "=", served.inbox_link + "=="):
            assert browser.get(respelled)[0] == 404
        assert browser.get("/inbox")[0] == 401  # not signed in by them
        assert browser.get(served.inbox_link)[0] == 200
        status, _, page = browser.post_bytes(
            "/", b"text=\xff&csrf=" + browser.csrf("/").encode(), FORM
        )
        assert status == 400
        assert "This form could not be read" in page

        status, _, page = browser.submit("/", {"text": "refund A-1001, book the lunch"})
        assert status == 200
        links = re.findall(r'href="(http://[^"]+/q/[^"]+)"', page)
        refund = next(link for link in links if "card" in browser.get(link)[2])
        assert browser.get(refund + "=")[0] == 404
        token = browser.csrf(refund).encode()
        status, _, _ = browser.post_bytes(
            refund, b"action=reject&reason=no&csrf=" + token, f"{FORM}; charset=bogus-9"
        )
        assert status == 400
        status, _, _ = browser.post_bytes(
            refund, b"action=reject&csrf=" + token, "multipart/form-data"
        )
        assert status == 400

        status, _, page = browser.get(refund)
        assert status == 200 and 'value="approve"' in page  # still waiting
        status, _, page = browser.submit(refund, {"action": "approve"})
        assert status == 200 and "Approved by you." in page
    finally:
        code, _, err = served.stop()
    assert code == 0, err
    assert "Traceback" not in err
    assert err.count(REFUSED) == 3
