"""Seeded hostile requests for the web desk: what the fuzz (``test_web_desk.py``) sends.

The doors are every route a person's browser reaches: the question page (its ``POST``, the
answer, and its ``GET``), the desk's own form (``POST /``), the inbox link (``GET /i/…``) and
the inbox (``/inbox``). Posts carry the page's real CSRF token unless the case is about the
token, so that only the named fault stands between the request and an answer:

* the body: bytes that are not UTF-8, a percent-escape that is not, a charset we do not read,
  multipart (without a boundary, a field without a name, or well-formed), a field sent twice,
  a field without ``=``, too many fields, a field over the size limit, a body of another type;
* the form: no CSRF token, a wrong one, another origin, no session (the desk), an unknown
  action, or answers the page refuses (an empty reason, an edit whose values are invalid, a
  reply it cannot read);
* the link: another spelling of it (padding, unused bits, the other alphabet, a
  percent-escape), a changed, cut or overlong one; a session cookie that was never issued;
  a method the route does not take.

None of them may answer a question or start work.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Final
from urllib.parse import quote

from bot.desk.web import START_PATH
from channels.web.posted import MAX_FIELDS
from channels.web.server import INBOX

FORM: Final = "application/x-www-form-urlencoded"
ALPHABET: Final = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
TOO_BIG: Final = 70 * 1024
"""Over the web app's ``client_max_size`` (64 KiB)."""
BAD_CHARSETS: Final = ("bogus-9", "utf-16", "latin-1", "utf-7", "[", '"utf-8"x', "x" * 300)
OTHER_TYPES: Final = ("application/json", "text/plain", "application/xml", "", "text/html")


@dataclass(frozen=True, slots=True, kw_only=True)
class WebCase:
    door: str
    shape: str
    expect: int
    """The status it must get: the refusal that names its fault."""
    method: str
    path: str
    """As sent: percent-escapes in it are not re-quoted."""
    body: bytes = b""
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    signed_in: bool = True
    """Sent by the person's browser (their session and CSRF cookies), else by a new one."""
    session_cookie: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Pages:
    """The pages the cases aim at, and the CSRF tokens the person's browser holds for them."""

    question: str
    """The path of the waiting refund's question link."""
    question_csrf: str
    desk_csrf: str
    inbox_link: str
    """The path of the person's inbox link."""
    origin: str


def respellings(token: str) -> list[str]:
    """The same token written otherwise: each decoded to the same bytes before issue 25."""
    key_id, sealed, mac = token.split(".")
    spelled = [
        token + "=",
        token + "==",
        token[:-1] + ALPHABET[ALPHABET.index(token[-1]) ^ 1],
        token[:-5] + "!!" + token[-5:],
        f"{token[:-2]}%{ord(token[-2]):02X}{token[-1]}",
    ]
    if "-" in mac:
        spelled.append(f"{key_id}.{sealed}.{mac.replace('-', '+')}")
    return spelled


class WebCases:
    """Cases drawn from one seed: the same seed gives the same requests, in the same order."""

    def __init__(self, seed: int, pages: Pages) -> None:
        self._rng = random.Random(seed)
        self._pages = pages

    def draw(self, count: int) -> list[WebCase]:
        makers: list[tuple[Callable[[], WebCase], int]] = [
            (self._question_body, 8),
            (self._question_form, 4),
            (self._desk_body, 5),
            (self._desk_form, 2),
            (self._question_link, 3),
            (self._inbox, 2),
        ]
        pool = [maker for maker, weight in makers for _ in range(weight)]
        return [self._rng.choice(pool)() for _ in range(count)]

    # ------------------------------------------------------------------------ bodies

    def _question_body(self) -> WebCase:
        fields = self._answer_fields(self._pages.question_csrf)
        shape, body, content_type = self._broken_body(fields)
        door = "question page POST /q/…"
        expect = 413 if shape == "huge field" else 400
        return self._post(door, shape, self._pages.question, body, content_type, expect=expect)

    def _desk_body(self) -> WebCase:
        fields = [("csrf", self._pages.desk_csrf), ("text", "refund order 5")]
        shape, body, content_type = self._broken_body(fields)
        expect = 413 if shape == "huge field" else 400
        return self._post("desk form POST /", shape, START_PATH, body, content_type, expect=expect)

    def _answer_fields(self, csrf: str) -> list[tuple[str, str]]:
        """A form the question page would send, as it would send it."""
        action = self._rng.choice(["approve", "reject", "reply", "edit"])
        fields = [("csrf", csrf), ("action", action)]
        match action:
            case "reject":
                fields.append(("reason", "too much"))
            case "reply":
                fields.append(("reply", "approve"))
            case "edit":
                fields += [("arg.order_id", "A-1001"), ("arg.amount", "20")]
        self._rng.shuffle(fields)
        return fields

    def _broken_body(self, fields: list[tuple[str, str]]) -> tuple[str, bytes, str | None]:
        """The form made unreadable in one of the ways a client can: (shape, body, type)."""
        encoded = "&".join(f"{quote(k)}={quote(v)}" for k, v in fields).encode()
        where = self._rng.randrange(len(fields))
        name, value = fields[where]
        match self._rng.randrange(11):
            case 0:
                bad = self._rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82", b"\x80"])
                return "bad UTF-8", encoded + b"&" + name.encode() + b"=" + bad, FORM
            case 1:
                escape = self._rng.choice(["%FF", "%C3", "%ED%A0%80", "%80%80", "%E2%82"])
                return "percent-escape not UTF-8", encoded + f"&note={escape}".encode(), FORM
            case 2:
                charset = self._rng.choice(BAD_CHARSETS)
                return "unknown charset", encoded, f"{FORM}; charset={charset}"
            case 3:
                return "multipart, no boundary", encoded, "multipart/form-data"
            case 4:
                return self._multipart(fields)
            case 5:
                again = quote(self._rng.choice([value, "approve", "x"]))
                return "repeated field", encoded + f"&{quote(name)}={again}".encode(), FORM
            case 6:
                return "field without =", encoded + b"&" + quote(name).encode(), FORM
            case 7:
                many = b"&".join(b"f%d=1" % n for n in range(MAX_FIELDS + 1))
                return "too many fields", encoded + b"&" + many, FORM
            case 8:
                huge = encoded + b"&" + name.encode() + b"=" + b"x" * TOO_BIG
                return "huge field", huge, FORM
            case 9:
                return "wrong content type", encoded, self._rng.choice(OTHER_TYPES)
            case _:
                return "no content type", encoded, None

    def _multipart(self, fields: list[tuple[str, str]]) -> tuple[str, bytes, str]:
        named = self._rng.random() < 0.5
        parts = []
        for name, value in fields:
            disposition = f'form-data; name="{name}"' if named else "form-data"
            parts.append(f"--b\r\nContent-Disposition: {disposition}\r\n\r\n{value}\r\n")
        body = ("".join(parts) + "--b--\r\n").encode()
        shape = "multipart" if named else "multipart field without a name"
        return shape, body, "multipart/form-data; boundary=b"

    # ------------------------------------------------------------------------ forms

    def _question_form(self) -> WebCase:
        """A readable form that must still be refused or not taken."""
        csrf = self._pages.question_csrf
        path = self._pages.question
        door = "question page POST /q/…"
        match self._rng.randrange(7):
            case 0:
                return self._form(door, "no CSRF token", path, [("action", "approve")], expect=403)
            case 1:
                wrong = csrf[:-1] + ("0" if csrf[-1] != "0" else "1")
                fields = [("csrf", wrong), ("action", "approve")]
                return self._form(door, "wrong CSRF token", path, fields, expect=403)
            case 2:
                fields = self._answer_fields(csrf)
                case = self._form(door, "another origin", path, fields, expect=403)
                return replace(case, headers={"Origin": "https://evil.example"})
            case 3:
                action = self._rng.choice(["", "APPROVE", "approve ", "delete", "é", "0" * 500])
                fields = [("csrf", csrf), ("action", action)]
                return self._form(door, "unknown action", path, fields, expect=400)
            case 4:
                reason = self._rng.choice(["", "   ", "\t\n"])
                fields = [("csrf", csrf), ("action", "reject"), ("reason", reason)]
                return self._form(door, "empty reason", path, fields, expect=422)
            case 5:
                amount = self._rng.choice(["-5", "abc", "0", "nan", "[]", "1,5"])
                fields = [
                    ("csrf", csrf),
                    ("action", "edit"),
                    ("arg.order_id", "A"),
                    ("arg.amount", amount),
                ]
                return self._form(door, "invalid edit", path, fields, expect=422)
            case _:
                reply = self._rng.choice(["maybe?", "approve if under 10", "ok, but only half"])
                fields = [("csrf", csrf), ("action", "reply"), ("reply", reply)]
                return self._form(door, "reply not understood", path, fields, expect=422)

    def _desk_form(self) -> WebCase:
        csrf = self._pages.desk_csrf
        door = "desk form POST /"
        match self._rng.randrange(4):
            case 0:
                fields = [("text", "refund 5")]
                return self._form(door, "no CSRF token", START_PATH, fields, expect=403)
            case 1:
                wrong = csrf[::-1]
                fields = [("csrf", wrong), ("text", "x")]
                return self._form(door, "wrong CSRF token", START_PATH, fields, expect=403)
            case 2:
                fields = [("csrf", csrf), ("text", "x")]
                case = self._form(door, "another origin", START_PATH, fields, expect=403)
                return replace(case, headers={"Origin": "http://127.0.0.1:1"})
            case _:
                fields = [("csrf", csrf), ("text", "x")]
                case = self._form(door, "no session", START_PATH, fields, expect=401)
                return replace(case, signed_in=False)

    # ------------------------------------------------------------------------ links

    def _question_link(self) -> WebCase:
        token = self._pages.question.removeprefix("/q/")
        shape, changed = self._changed_token(token)
        method = self._rng.choice(["GET", "POST"])
        door = f"question page {method} /q/…"
        if method == "POST":
            fields = self._answer_fields(self._pages.question_csrf)
            return self._form(door, shape, f"/q/{changed}", fields, expect=404)
        return WebCase(door=door, shape=shape, method="GET", path=f"/q/{changed}", expect=404)

    def _changed_token(self, token: str) -> tuple[str, str]:
        match self._rng.randrange(5):
            case 0 | 1:
                return "another spelling", self._rng.choice(respellings(token))
            case 2:
                at = self._rng.randrange(len(token))
                if token[at] == ".":
                    return "cut", token[:at]
                other = self._rng.choice([c for c in ALPHABET if c != token[at]])
                return "a character changed", token[:at] + other + token[at + 1 :]
            case 3:
                return "cut", token[: self._rng.randrange(len(token))]
            case _:
                return "overlong", token + "A" * self._rng.choice([4, 2100])

    def _inbox(self) -> WebCase:
        token = self._pages.inbox_link.removeprefix("/i/")
        match self._rng.randrange(4):
            case 0 | 1:
                shape, changed = self._changed_token(token)
                return WebCase(
                    door="inbox GET /i/…",
                    shape=shape,
                    method="GET",
                    path=f"/i/{changed}",
                    signed_in=False,
                    expect=404,
                )
            case 2:
                path = self._rng.choice([INBOX, self._pages.inbox_link])
                door = f"inbox POST {'/inbox' if path == INBOX else '/i/…'}"
                shape = "a method it does not take"
                return self._form(door, shape, path, [("x", "1")], expect=405)
            case _:
                cookie = self._rng.choice(["", "x", token, token + "=", "a.b.c", "%C3%A9"])
                return WebCase(
                    door="inbox GET /inbox",
                    shape="a session never issued",
                    method="GET",
                    path=INBOX,
                    signed_in=False,
                    session_cookie=cookie,
                    expect=401,
                )

    # ------------------------------------------------------------------------ requests

    def _post(
        self,
        door: str,
        shape: str,
        path: str,
        body: bytes,
        content_type: str | None,
        *,
        expect: int,
    ) -> WebCase:
        return WebCase(
            expect=expect,
            door=door,
            shape=shape,
            method="POST",
            path=path,
            body=body,
            content_type=content_type,
            headers={"Origin": self._pages.origin},
        )

    def _form(
        self, door: str, shape: str, path: str, fields: list[tuple[str, str]], *, expect: int
    ) -> WebCase:
        body = "&".join(f"{quote(k)}={quote(v)}" for k, v in fields).encode()
        return self._post(door, shape, path, body, FORM, expect=expect)
