"""Reading a posted form's body into its fields, strictly: what is not a form our pages send
is refused (``UnreadableForm``, a 400 page for the server), never guessed at.

Our pages post URL-encoded forms in UTF-8 (they are served in UTF-8 and declare no other
``enctype``), each field once. aiohttp's ``request.post()`` raised on what else arrived —
``UnicodeDecodeError`` for ``reason=\\xff``, ``LookupError`` for ``charset=bogus-9``,
``ValueError`` for multipart without a boundary or with a field without a name — and each
was a 500 with a traceback; and it let through what was not sent as meant: a percent-escape
that is not UTF-8 (``%FF`` kept as those three letters), a field sent twice (the last won).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import parse_qsl

from aiohttp import hdrs, web

FORM_TYPE: Final = "application/x-www-form-urlencoded"
MAX_FIELDS: Final = 200
"""More fields than any form of ours has (a tool's arguments and three of the form's own)."""
_CHARSETS: Final = {"utf-8": "utf-8", "utf8": "utf-8", "us-ascii": "ascii", "ascii": "ascii"}
_CHARSET: Final = re.compile(r";\s*charset\s*=([^;]*)", re.IGNORECASE)


class UnreadableForm(Exception):
    """A posted body that is not a form our pages send; ``reason`` is for the log (it never
    quotes the body)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def posted_fields(request: web.Request) -> dict[str, str]:
    """The fields of the form posted in ``request``; ``UnreadableForm`` when its body is not a
    URL-encoded form in UTF-8 with each field once. A body over the application's
    ``client_max_size`` is aiohttp's 413."""
    media_type, charset = _content_type(request.headers.get(hdrs.CONTENT_TYPE, ""))
    if media_type != FORM_TYPE:
        raise UnreadableForm(f"the body is {media_type or 'of no type'}, not a form")
    codec = _CHARSETS.get(charset.lower() or "utf-8")
    if codec is None:
        raise UnreadableForm("the form's charset is not UTF-8")
    raw = await request.read()
    try:
        text = raw.decode(codec)
        pairs = parse_qsl(
            text,
            keep_blank_values=True,
            strict_parsing=bool(text),
            encoding="utf-8",
            errors="strict",
            max_num_fields=MAX_FIELDS,
        )
    except UnicodeDecodeError:
        raise UnreadableForm("the form is not UTF-8") from None
    except ValueError:  # a field without "=", or too many fields
        raise UnreadableForm("the form is not URL-encoded fields") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise UnreadableForm("a field of the form was sent twice")
    return fields


def _content_type(header: str) -> tuple[str, str]:
    """The media type and the charset named in a Content-Type header (``""`` when none).

    Read here rather than by aiohttp, which skips a parameter it cannot parse (``charset=[``)
    as if it were not there."""
    media_type = header.split(";", 1)[0].strip().lower()
    found = _CHARSET.search(header)
    charset = found.group(1).strip().strip('"').strip() if found else ""
    return media_type, charset
