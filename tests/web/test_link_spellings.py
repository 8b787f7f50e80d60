"""One spelling per link (issue 25, item 2): a question or inbox link opens only as it was
sent. Padding appended, the last signature character changed only in its unused bits, the
other base64 alphabet, characters base64 skips, or a percent-escape in the address all
decoded to the same token and opened it, so a link blocked by its exact text (a leaked one)
could be opened again. Each is 404 now, and answers nothing; the link as sent still opens.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Final

import pytest
from yarl import URL

from bot import PauseStatus
from tests.web.conftest import WebWorld
from tests.web.office import ALICE, TENANT
from tests.web.pages import csrf_of, open_page
from tests.web.test_http import ask_refund, status_of

ALPHABET: Final = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"


def same_bits_last(token: str) -> str:
    """The signature's last character swapped for one that differs only in the bits base64
    does not use (an HMAC-SHA256 is 32 bytes: its 43rd character carries 4 bits of 6)."""
    return token[:-1] + ALPHABET[ALPHABET.index(token[-1]) ^ 1]


def other_alphabet(token: str) -> str:
    """``+`` for ``-`` in the signature (standard base64's alphabet; its ``/`` for ``_``
    would make another path)."""
    key_id, sealed, mac = token.split(".")
    return f"{key_id}.{sealed}.{mac.replace('-', '+')}"


def percent_escaped(token: str) -> str:
    """One character of the signature written as its percent-escape (``A`` as ``%41``)."""
    return f"{token[:-2]}%{ord(token[-2]):02X}{token[-1]}"


def with_both_alphabets(make: Callable[[], str]) -> str:
    """A token from ``make`` whose signature has a ``-`` (half of them do)."""
    for _ in range(100):
        token = make()
        if "-" in token.rsplit(".", 1)[1]:
            return token
    raise AssertionError("no signature with a - in 100 tokens")


SPELLINGS: Final[dict[str, Callable[[str], str]]] = {
    "padding appended": lambda token: token + "=",
    "double padding appended": lambda token: token + "==",
    "the last character's unused bits changed": same_bits_last,
    "the other alphabet": other_alphabet,
    "characters base64 skips": lambda token: token[:-5] + "!!" + token[-5:],
    "a percent-escape": percent_escaped,
}


@pytest.mark.parametrize("spell", SPELLINGS.values(), ids=SPELLINGS)
async def test_a_question_link_opens_only_as_it_was_sent(
    web_world: WebWorld, spell: Callable[[str], str]
) -> None:
    pause_id = await ask_refund(web_world)
    outbox = web_world.server.outbox
    url = with_both_alphabets(
        lambda: outbox.question_url(pause_id, approver=ALICE, tenant_id=TENANT)
    )
    path = url.removeprefix(web_world.base_url)
    token = path.removeprefix("/q/")
    status, page = await open_page(web_world.http, path)
    assert status == 200
    respelled = "/q/" + spell(token)
    assert respelled != path

    sent = URL(web_world.base_url + respelled, encoded=True)  # as typed: no re-quoting
    got = await web_world.http.get(sent)
    posted = await web_world.http.post(
        sent, data={"csrf": csrf_of(page), "action": "approve"}, allow_redirects=False
    )

    assert got.status == 404
    assert "This link is not valid" in await got.text()
    assert posted.status in (403, 404)  # the CSRF token is bound to the path as sent
    assert await status_of(web_world, pause_id) is PauseStatus.PENDING
    assert (await web_world.http.get(path)).status == 200


@pytest.mark.parametrize("spell", SPELLINGS.values(), ids=SPELLINGS)
async def test_an_inbox_link_opens_only_as_it_was_sent(
    web_world: WebWorld, spell: Callable[[str], str]
) -> None:
    url = with_both_alphabets(lambda: web_world.server.inbox_url(ALICE, tenant_id=TENANT))
    token = url.removeprefix(f"{web_world.base_url}/i/")

    async with web_world.client() as other:
        sent = URL(f"{web_world.base_url}/i/{spell(token)}", encoded=True)
        got = await other.get(sent, allow_redirects=False)
        assert got.status == 404
        assert (await other.get("/inbox")).status == 401  # not signed in
    async with web_world.client() as other:
        signed_in = await other.get("/i/" + token, allow_redirects=False)
        assert signed_in.status == 303
