"""``COUNTERSIGN_LOG_FORMAT=json``: one JSON object per log record, pause ids redacted."""

from __future__ import annotations

import io
import json
import logging
import secrets
from collections.abc import Iterator

import pytest

from bot.cli.logs import JsonHandler, TextHandler, configure_logging, logging_as
from bot.settings import Settings, load_settings


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    with logging_as(Settings(countersign_log_format="json"), stream):
        yield stream


def parsed(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_each_record_is_one_json_line_with_its_extra_fields(lines: io.StringIO) -> None:
    log = logging.getLogger("countersign.test-logs")
    log.warning(
        "a pass took %d ms",
        12,
        extra={"tenant_id": "acme", "role": "finance", "outcome": "rested", "duration": 0.012},
    )
    log.warning("no extra")

    first, second = parsed(lines)
    assert set(first) == {
        "time",
        "level",
        "logger",
        "message",
        "tenant_id",
        "role",
        "outcome",
        "duration",
    }
    assert (first["level"], first["logger"], first["message"]) == (
        "WARNING",
        "countersign.test-logs",
        "a pass took 12 ms",
    )
    assert (first["tenant_id"], first["role"], first["outcome"], first["duration"]) == (
        "acme",
        "finance",
        "rested",
        0.012,
    )
    assert str(first["time"]).endswith("+00:00")
    assert set(second) == {"time", "level", "logger", "message"}


def test_a_pause_id_is_redacted_in_the_message_the_extras_and_the_traceback(
    lines: io.StringIO,
) -> None:
    pause_id = secrets.token_hex(16)
    log = logging.getLogger("some.library")  # not one of ours: the handler redacts anyway
    try:
        raise ValueError(f"unknown pause {pause_id}")
    except ValueError:
        log.exception("clicked %s", pause_id, extra={"execution_id": pause_id})

    [line] = parsed(lines)
    assert pause_id not in lines.getvalue()
    assert line["message"] == "clicked <redacted>"
    assert line["execution_id"] == "<redacted>"
    assert "ValueError: unknown pause <redacted>" in str(line["exception"])


def test_configuring_again_leaves_one_handler_and_the_block_leaves_none() -> None:
    root = logging.getLogger()
    before = list(root.handlers), root.level
    with logging_as(Settings(countersign_log_format="json"), io.StringIO()):
        configure_logging(Settings(countersign_log_format="json"), io.StringIO())
        assert sum(isinstance(h, JsonHandler) for h in root.handlers) == 1
        configure_logging(load_settings({}, env_file=None))
        assert not any(isinstance(h, JsonHandler) for h in root.handlers)
        assert sum(isinstance(h, TextHandler) for h in root.handlers) == 1
        assert root.level == logging.INFO  # the default level
    assert (list(root.handlers), root.level) == before


def test_a_text_line_names_its_time_level_and_logger_and_redacts_a_pause_id() -> None:
    stream = io.StringIO()
    pause_id = secrets.token_hex(16)
    with logging_as(load_settings({"COUNTERSIGN_LOG_LEVEL": "debug"}, env_file=None), stream):
        logging.getLogger("countersign.test-logs").debug("clicked %s", pause_id)

    [line] = stream.getvalue().splitlines()
    assert line.endswith(" DEBUG countersign.test-logs: clicked <redacted>")


def test_the_libraries_are_kept_to_warnings_unless_the_level_is_debug() -> None:
    stream = io.StringIO()
    with logging_as(Settings(), stream):
        logging.getLogger("countersign.slack.web").info("a retry handler found")
        logging.getLogger("countersign.answers").info("answer recorded")
    with logging_as(Settings(countersign_log_level="DEBUG"), stream):
        logging.getLogger("countersign.slack.web").debug("sending a request")

    said = [line.split(": ", 1)[1] for line in stream.getvalue().splitlines()]
    assert said == ["answer recorded", "sending a request"]
