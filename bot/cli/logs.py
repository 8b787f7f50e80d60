"""How a served process logs: as Python does by default, or one JSON object per line
(``COUNTERSIGN_LOG_FORMAT=json``) for a log collector.

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


class JsonHandler(logging.StreamHandler[TextIO]):
    """The handler ``COUNTERSIGN_LOG_FORMAT=json`` puts on the root logger."""


def _plain(value: object) -> object:
    if isinstance(value, bool | int | float):
        return value
    return redact(str(value))


def configure_logging(settings: Settings, stream: TextIO | None = None) -> None:
    """Log as ``settings`` say: with ``json``, one JSON line per record on ``stream`` (default:
    standard error) through the root logger; with ``text``, Python's default. Repeatable."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, JsonHandler)]:
        root.removeHandler(handler)
    if settings.countersign_log_format != "json":
        return
    handler = JsonHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(PauseIdRedactor())
    root.addHandler(handler)
