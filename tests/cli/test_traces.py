"""Which exporter the ``OTEL_*`` settings ask a served process for (``bot.cli.traces``); the
export itself is tested through ``python -m bot serve`` (``tests/slack/test_operations.py``)."""

from __future__ import annotations

import pytest

from bot import SettingsError
from bot.cli.traces import TraceExport, trace_export


@pytest.mark.parametrize(
    ("environ", "exporters"),
    [
        ({}, ()),
        ({"OTEL_SERVICE_NAME": "desk"}, ()),  # naming the service asks for no exporter
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ("otlp",)),
        ({"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x=1"}, ("otlp",)),
        ({"OTEL_TRACES_EXPORTER": "otlp,console"}, ("otlp", "console")),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, ()),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, ()),
        (
            {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_TRACES_EXPORTER": "otlp"},
            ("otlp",),
        ),
    ],
)
def test_the_exporters_asked_for(environ: dict[str, str], exporters: tuple[str, ...]) -> None:
    assert trace_export(environ, installed=lambda _: True) == TraceExport(exporters)


def test_an_exporter_asked_for_without_the_extra_is_one_line_saying_how_to_install_it() -> None:
    with pytest.raises(SettingsError) as missing:
        trace_export({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, installed=lambda _: False)

    assert missing.value.message == (
        "OTEL_EXPORTER_OTLP_* asks for an OpenTelemetry exporter, which is not installed: "
        "pip install 'countersign[otel]' (or leave the OTEL_ settings unset, or set "
        "OTEL_TRACES_EXPORTER=none)"
    )


def test_the_console_exporter_needs_only_the_sdk() -> None:
    def installed(module: str) -> bool:
        return module == "opentelemetry.sdk.trace"

    assert trace_export({"OTEL_TRACES_EXPORTER": "console"}, installed=installed).exporters == (
        "console",
    )
