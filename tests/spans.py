"""Spans collected with OpenTelemetry's SDK (the ``otel`` extra) for the trace tests: one
in-memory exporter on the process's tracer provider (OpenTelemetry's is set once per process).

Import it only where the SDK is installed (the ``spans`` fixture skips a test without it)."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_EXPORTER = InMemorySpanExporter()


def exporter() -> InMemorySpanExporter:
    """The process's tracer provider's in-memory exporter (the provider set on first use),
    emptied (the ``spans`` fixture of ``tests/conftest.py``)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    return _EXPORTER


def tree(finished: tuple[ReadableSpan, ...]) -> list[tuple[str, str | None]]:
    """Each span's name with its parent's name, in the order they ended."""
    names = {s.context.span_id: s.name for s in finished if s.context is not None}
    return [(s.name, names.get(s.parent.span_id) if s.parent else None) for s in finished]


def named(finished: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name == f"countersign.{name}"]


def everything_said(finished: tuple[ReadableSpan, ...]) -> str:
    """Every attribute of every span, event and link, as one lower-case text to search."""
    said = []
    for s in finished:
        said.append(repr(dict(s.attributes or {})))
        said.extend(repr(dict(e.attributes or {})) for e in s.events)
        said.extend(repr(dict(link.attributes or {})) for link in s.links)
    return "\n".join(said).lower()
