"""Spans with OpenTelemetry, when it is installed (``pip install countersign[otel]``).

:func:`span` opens a span on the tracer provider the process configured (the OpenTelemetry SDK,
an exporter: the operator's choice); without OpenTelemetry installed it is a span that does
nothing: nothing is imported and nothing costs but one check made once. Spans are named
``countersign.<what>`` (execute, answer, continue, pass, tool, channel.send, channel.withdraw,
interpret, slack.request, slack.api) and carry names, kinds and outcomes, never a pause id, a
tenant id or a user id.

Across processes: a question keeps the trace context it was asked in (:func:`carrier`, a W3C
``traceparent`` from OpenTelemetry's trace-context propagator, stored with the pause), and the
span that answers it, in whichever process, links to it (:func:`link_to`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Final, Protocol

TRACER: Final = "countersign"
Attribute = str | int | float | bool

TraceCarrier = Mapping[str, str]
"""A span's context as W3C trace-context headers (``traceparent``, maybe ``tracestate``)."""


def _installed() -> bool:
    try:
        return importlib.util.find_spec("opentelemetry.trace") is not None
    except (ImportError, ValueError):  # a parent package blocked, or a broken install
        return False


INSTALLED: Final = _installed()
"""Whether the OpenTelemetry API can be imported (looked up once; nothing imported)."""


class Span(Protocol):
    """What a block may do with its span: say how it went (an OpenTelemetry span, or one that
    does nothing)."""

    def set_attribute(self, key: str, value: Attribute) -> object: ...


class _NoSpan:
    def set_attribute(self, key: str, value: Attribute) -> None:
        return None


_NO_SPAN: Final = _NoSpan()


class _Nothing(AbstractContextManager[Span]):
    """The block of a span that goes nowhere: one shared object, nothing made per block."""

    def __enter__(self) -> Span:
        return _NO_SPAN

    def __exit__(self, *_: object) -> None:
        return None


_NOTHING: Final = _Nothing()


def span(name: str, **attributes: Attribute) -> AbstractContextManager[Span]:
    """A span named ``countersign.<name>`` around a block, or nothing without OpenTelemetry.

    A block that raises marks its span failed with the error's type (``error.type``), never
    its message: messages may quote a reply, a tool's arguments or an id."""
    if not INSTALLED or not tracing():
        return _NOTHING
    return _recorded(f"{TRACER}.{name}", attributes)


def tracing() -> bool:
    """Whether spans go anywhere: OpenTelemetry installed and a tracer provider set (the SDK's,
    an exporter's). Without one, OpenTelemetry's API would still make a no-op span and attach
    it to the context at each block (measured: 9-14 µs a block, against 0.5 µs for none)."""
    if not INSTALLED:
        return False
    global _provider_check
    if _provider_check is None:  # imported at the first span, then kept: a span costs no import
        from opentelemetry.trace import (
            NoOpTracerProvider,
            ProxyTracerProvider,
            get_tracer_provider,
        )

        _provider_check = (get_tracer_provider, (ProxyTracerProvider, NoOpTracerProvider))
    current, no_ops = _provider_check
    return not isinstance(current(), no_ops)


_provider_check: tuple[Callable[[], object], tuple[type, ...]] | None = None


@contextmanager
def _recorded(name: str, attributes: dict[str, Attribute]) -> Iterator[Span]:
    from opentelemetry import trace  # only when installed, and only once a span starts

    tracer = trace.get_tracer(TRACER)
    with tracer.start_as_current_span(
        name, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as started:
        try:
            yield started
        except Exception as error:
            kind = type(error).__name__
            if kind != "GraphInterrupt":  # a pause is no failure
                started.set_attribute("error.type", kind)
                started.set_status(trace.StatusCode.ERROR, kind)
            raise


def carrier() -> dict[str, str] | None:
    """The current span's context as W3C trace-context headers, to keep with what outlives the
    process (a question); ``None`` without OpenTelemetry or outside a recorded span."""
    if not INSTALLED:
        return None
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    if not trace.get_current_span().get_span_context().is_valid:
        return None
    headers: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(headers)  # trace context only: never baggage
    return headers or None


def link_to(kept: TraceCarrier | None, *, why: str) -> None:
    """Link the current span to the span ``kept`` names (kept by :func:`carrier`, maybe in
    another process); nothing when either is missing, or when it links there already (an
    answer checked again on the row read after its remembered row changed)."""
    if kept is None or not INSTALLED:
        return
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    context = TraceContextTextMapPropagator().extract(dict(kept))
    linked = trace.get_current_span(context).get_span_context()
    current = trace.get_current_span()
    if not linked.is_valid or not current.is_recording():
        return
    if any(link.context == linked for link in getattr(current, "links", ())):
        return  # the SDK's span shows its links; another implementation may link twice
    current.add_link(linked, {"countersign.link": why})
