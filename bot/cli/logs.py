"""How a served process logs: one line of text per record, or one JSON object per line
(``COUNTERSIGN_LOG_FORMAT=json``) for a log collector, on standard error, from
``COUNTERSIGN_LOG_LEVEL`` up (``INFO`` by default: each answer is a line).

A text line reads ``<time> <LEVEL> <logger>: <message>``. The libraries' own chatter (the Slack
SDK's retries and Bolt's internals, through ``countersign.slack.web`` and
``countersign.slack.bolt``; LangChain's HTTP clients; aiohttp's) is kept to warnings unless the
level is ``DEBUG``: at ``INFO`` the log is Countersign's own lines.

Each JSON line has ``time`` (ISO 8601, UTC), ``level``, ``logger`` and ``message``, then what the
call gave as ``extra`` of :data:`EXTRA_FIELDS` (``execution_id``, ``tenant_id``, ``role``,
``outcome``, ``duration``, …), and ``exception`` when there is one. The handler carries the pause
id redactor (``channels.slack.redaction``): every 32-hex token of the message, the traceback and
the extra strings is redacted, as in every other log line.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Final, TextIO

from bot.settings import Settings
from channels.slack.redaction import PauseIdRedactor, redact

EXTRA_FIELDS: Final = (
    "execution_id",
    "tenant_id",
    "role",
    "channel",
    "outcome",
    "code",
    "duration",
)
"""The ``extra`` keys a JSON line carries (others are left out: no payload reaches a log)."""


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        for name in EXTRA_FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                line[name] = redact(value) if isinstance(value, str) else _plain(value)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = redact(record.exc_text)
        return json.dumps(line, ensure_ascii=False)


class _StandardError(logging.StreamHandler[TextIO]):
    """A handler writing to ``stream``, else to whatever ``sys.stderr`` is when a record comes
    (as Python's last-resort handler does): a stream replaced meanwhile (a test's capture) is
    never written to after it closed."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        self._given = stream

    @property  # the base class keeps a plain attribute
    def stream(self) -> TextIO:
        return sys.stderr if self._given is None else self._given

    @stream.setter
    def stream(self, value: TextIO) -> None:  # the base class sets it; the given one is kept
        return None


class JsonHandler(_StandardError):
    """The handler ``COUNTERSIGN_LOG_FORMAT=json`` puts on the root logger."""


class TextHandler(_StandardError):
    """The handler ``COUNTERSIGN_LOG_FORMAT=text`` (the default) puts on the root logger."""


TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LIBRARY_LOGGERS: Final = (
    "countersign.slack.web",
    "countersign.slack.bolt",
    "slack_sdk",
    "slack_bolt",
    "httpx",
    "httpcore",
    "openai",
    "aiosqlite",
    "sqlalchemy",
    "aiohttp",
)
"""Loggers libraries speak through: at ``DEBUG`` only what they say at that level too."""


def _plain(value: object) -> object:
    if isinstance(value, bool | int | float):
        return value
    return redact(str(value))


def configure_logging(settings: Settings, stream: TextIO | None = None) -> None:
    """Log as ``settings`` say: one line per record (text or JSON) on ``stream`` (default:
    standard error) through the root logger, from ``COUNTERSIGN_LOG_LEVEL`` up. Repeatable."""
    root = logging.getLogger()
    for ours in [h for h in root.handlers if isinstance(h, _StandardError)]:
        root.removeHandler(ours)
    level = logging.getLevelName(settings.countersign_log_level)
    root.setLevel(level)
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(
            level if level == logging.DEBUG else max(level, logging.WARNING)
        )
    handler: logging.Handler
    if settings.countersign_log_format == "json":
        handler = JsonHandler(stream)
        handler.setFormatter(JsonFormatter())
    else:
        handler = TextHandler(stream)
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    handler.addFilter(PauseIdRedactor())
    root.addHandler(handler)


@contextmanager
def logging_as(settings: Settings, stream: TextIO | None = None) -> Iterator[None]:
    """Log as ``settings`` say while the block runs (a served process); then as before (a
    test that serves in its own process leaves no handler behind)."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    levels = {name: logging.getLogger(name).level for name in LIBRARY_LOGGERS}
    configure_logging(settings, stream)
    try:
        yield
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        for handler in handlers:
            if handler not in root.handlers:
                root.addHandler(handler)
        root.setLevel(level)
        for name, kept in levels.items():
            logging.getLogger(name).setLevel(kept)
