"""Spans with OpenTelemetry, when it is installed (``pip install countersign[otel]``).

:func:`span` opens a span on the tracer provider the process configured (the OpenTelemetry SDK,
an exporter: the operator's choice); without OpenTelemetry installed it is a
``nullcontext``: nothing is imported and nothing costs but one check made once. Spans are
named ``countersign.<what>`` (execute, answer, continue, pass, tool, channel.send,
channel.withdraw) and carry names and execution ids, never a pause id.
"""

from __future__ import annotations

import importlib.util
from contextlib import AbstractContextManager, nullcontext
from typing import Final

TRACER: Final = "countersign"
Attribute = str | int | float | bool


def _installed() -> bool:
    try:
        return importlib.util.find_spec("opentelemetry.trace") is not None
    except (ImportError, ValueError):  # a parent package blocked, or a broken install
        return False


INSTALLED: Final = _installed()
"""Whether the OpenTelemetry API can be imported (looked up once; nothing imported)."""


def span(name: str, **attributes: Attribute) -> AbstractContextManager[object]:
    """A span named ``countersign.<name>`` around a block, or nothing without OpenTelemetry."""
    if not INSTALLED:
        return nullcontext()
    from opentelemetry import trace  # only when installed, and only once a span starts

    tracer = trace.get_tracer(TRACER)
    started: AbstractContextManager[object] = tracer.start_as_current_span(
        f"{TRACER}.{name}", attributes=attributes
    )
    return started
