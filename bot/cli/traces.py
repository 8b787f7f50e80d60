"""Exporting the spans of a served process over OTLP, as the standard ``OTEL_*`` settings say.

``bot.core.tracing`` opens spans on whichever tracer provider the process configured; a process
``python -m bot`` runs configures one here, only when the environment asks for an exporter:
``OTEL_TRACES_EXPORTER`` (``otlp``, ``console`` or ``none``) or any ``OTEL_EXPORTER_OTLP_*``
(``OTEL_EXPORTER_OTLP_ENDPOINT``, ``..._TRACES_ENDPOINT``, ``..._HEADERS``...). The exporter is
OpenTelemetry's OTLP over HTTP (protobuf), from the ``otel`` extra, and it reads those settings
itself; ``OTEL_SERVICE_NAME`` names the service (``countersign`` when unset), and
``OTEL_SDK_DISABLED=true`` turns it all off. Spans go out in batches (``OTEL_BSP_*``) and the rest
on shutdown.

Read from the process environment (the SDK's own rule), not from ``.env``. A value we cannot
honour is a ``SettingsError`` line naming it, before anything heavy loads: an exporter or a
protocol we do not ship, or an exporter asked for without the ``otel`` extra installed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Final

from bot.core.errors import SettingsError

EXPORTER: Final = "OTEL_TRACES_EXPORTER"
PROTOCOLS: Final = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
OTLP_PREFIX: Final = "OTEL_EXPORTER_OTLP_"
DISABLED: Final = "OTEL_SDK_DISABLED"
SERVICE_NAME: Final = "countersign"
"""The service's name when ``OTEL_SERVICE_NAME`` (or ``OTEL_RESOURCE_ATTRIBUTES``) gives none."""
EXPORTERS: Final = ("otlp", "console", "none")
PROTOCOL: Final = "http/protobuf"
_EXTRA: Final = "pip install 'countersign[otel]'"
_NEEDS: Final = ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http")


@dataclass(frozen=True, slots=True)
class TraceExport:
    """Where spans go: ``exporters`` by name (``otlp``, ``console``); empty: nowhere."""

    exporters: tuple[str, ...] = ()


def trace_export(
    environ: Mapping[str, str] | None = None,
    *,
    installed: Callable[[str], bool] | None = None,
) -> TraceExport:
    """What the ``OTEL_*`` settings ask for; a ``SettingsError`` line for one we cannot honour.

    ``installed(module)`` says whether a module can be imported (default: looked up, nothing
    imported)."""
    values = os.environ if environ is None else environ
    asked = values.get(EXPORTER, "").strip().lower()
    otlp_set = any(name.startswith(OTLP_PREFIX) and value.strip() for name, value in values.items())
    if values.get(DISABLED, "").strip().lower() == "true" or not (asked or otlp_set):
        return TraceExport()
    names = tuple(dict.fromkeys(n.strip() for n in (asked or "otlp").split(",") if n.strip()))
    unknown = [n for n in names if n not in EXPORTERS]
    if unknown:
        raise SettingsError(
            f"{EXPORTER} is malformed: otlp, console or none, not {', '.join(unknown)!r}"
        )
    exporters = tuple(n for n in names if n != "none")
    if "otlp" in exporters:
        _check_protocol(values)
    needed = _NEEDS if "otlp" in exporters else _NEEDS[:1]
    if exporters and not all((installed or _importable)(module) for module in needed):
        setting = EXPORTER if asked else "OTEL_EXPORTER_OTLP_*"
        raise SettingsError(
            f"{setting} asks for an OpenTelemetry exporter, which is not installed: {_EXTRA} "
            f"(or leave the OTEL_ settings unset, or set {EXPORTER}=none)"
        )
    return TraceExport(exporters)


def _check_protocol(values: Mapping[str, str]) -> None:
    for setting in PROTOCOLS:
        protocol = values.get(setting, "").strip()
        if protocol and protocol != PROTOCOL:
            raise SettingsError(
                f"{setting} is malformed: {PROTOCOL} (the exporter of the otel extra), "
                f"not {protocol!r}"
            )


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken install
        return False


class Tracing:
    """The tracer provider a process configured, flushed and shut down by :meth:`close`."""

    def __init__(self, close: Callable[[], object] | None = None) -> None:
        self._close = close

    def close(self) -> None:
        """Export what is left and stop; repeatable (nothing without a provider)."""
        close, self._close = self._close, None
        if close is not None:
            close()


def configure_tracing(export: TraceExport) -> Tracing:
    """Set the process's tracer provider to export as ``export`` says (nothing if it is
    empty); the OTLP exporter reads its endpoint, headers and timeout from the environment."""
    if not export.exporters:
        return Tracing()
    from opentelemetry import trace
    from opentelemetry.sdk.resources import SERVICE_NAME as SERVICE_NAME_KEY
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SpanExporter,
    )

    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME_KEY, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME_KEY: SERVICE_NAME}))
    provider = TracerProvider(resource=resource)
    for name in export.exporters:
        exporter: SpanExporter
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter()
        else:
            exporter = ConsoleSpanExporter()
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return Tracing(provider.shutdown)


def run_traced(
    environ: Mapping[str, str] | None, serve: Callable[[], Coroutine[Any, Any, int]]
) -> int:
    """Run ``serve`` (a server's main coroutine) until it returns its exit code, its spans
    exported as the ``OTEL_*`` settings say and what is left of them flushed on the way out; a
    bad trace setting is one line and exit 2 before anything is served."""
    try:
        tracing = configure_tracing(trace_export(environ))
    except SettingsError as error:
        print(error.message, file=sys.stderr)
        return 2  # a settings problem, as every command exits on one
    try:
        return asyncio.run(serve())
    finally:
        tracing.close()
