"""Pause ids never reach a log: a filter that redacts 32-hex tokens from log records.

A pause id is the right to answer (``secrets.token_hex(16)``). Slack payloads carry it in button
values, so anything that logs a payload (Bolt on an error, the Web API client at DEBUG) could
leak it. The filter formats each record once and replaces every 32-hex token — execution ids
(uuid4 hex) look the same and are redacted too: the price of never guessing wrong.

Python applies a logger's filters only to records logged on that very logger, not to records
propagated from its children, so :func:`install` puts the filter on each logger we and Bolt
log through (Bolt copies the filters of the base logger we hand it to every logger it makes),
and on the database drivers' loggers, which log statements with their parameters at DEBUG.
"""

from __future__ import annotations

import logging
import re
from typing import Final

REDACTED: Final = "<redacted>"
HEX_TOKEN: Final = re.compile(r"(?<![0-9A-Fa-f])[0-9a-f]{32}(?![0-9A-Fa-f])")

LOGGER_NAMES: Final = (
    "countersign",
    "countersign.slack",
    "countersign.slack.bolt",
    "countersign.slack.web",
    "slack_bolt",
    "slack_sdk",
    "aiosqlite",  # logs every statement with its parameters at DEBUG
    "sqlalchemy.engine",
)
_PREFIXES: Final = tuple(f"{name}." for name in LOGGER_NAMES)

log: Final = logging.getLogger("countersign.slack")
bolt_log: Final = logging.getLogger("countersign.slack.bolt")
"""The base logger handed to Bolt: every logger Bolt makes copies its filters."""
web_log: Final = logging.getLogger("countersign.slack.web")
"""The Web API client's logger (it logs request bodies at DEBUG)."""


def redact(text: str) -> str:
    """``text`` with every 32-hex token replaced."""
    return HEX_TOKEN.sub(REDACTED, text)


class PauseIdRedactor(logging.Filter):
    """Formats a record's message (and its traceback) once, with every 32-hex token redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a broken format string: keep what can be kept
            message = str(record.msg)
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_REDACTOR: Final = PauseIdRedactor()


def install() -> None:
    """Put the redactor on our loggers, Bolt's, and every existing child of them; idempotent."""
    names = set(LOGGER_NAMES)
    for name in list(logging.root.manager.loggerDict):
        if name.startswith(_PREFIXES):
            names.add(name)
    for name in names:
        logger = logging.getLogger(name)
        if _REDACTOR not in logger.filters:
            logger.addFilter(_REDACTOR)


def settle_bolt_level() -> None:
    """Give Bolt's base logger a level of its own, as Bolt does for its default logger.

    Bolt tests ``logger.level <= DEBUG`` (not the effective level) before building its debug
    messages; a logger left at NOTSET (0) would have them built for every request.
    """
    if bolt_log.level == logging.NOTSET:
        bolt_log.setLevel(bolt_log.getEffectiveLevel())
