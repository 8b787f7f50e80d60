"""A process that asks a question with OpenTelemetry's SDK on, and says what it traced.

Run: python -m tests.runtime.trace_asker DATABASE_URL. It executes the office workflow until
the refund is asked, then prints one JSON line: the pause id (for the answering process only)
and the spans it finished (name, trace id, span id, parent span id, in hex).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from bot import App, WorkflowStartText
from tests.conftest import NO_SETTINGS
from tests.office import Inbox, Ledger, OfficeApplication, OfficeWorkflow
from tests.runtime.helpers import script_refund


def described(span: ReadableSpan) -> dict[str, str | None]:
    context = span.get_span_context()
    assert context is not None
    return {
        "name": span.name,
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_span_id": None if span.parent is None else f"{span.parent.span_id:016x}",
    }


async def ask(url: str) -> dict[str, object]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    script_refund()
    inbox = Inbox()
    services: dict[type, object] = {Inbox: inbox, Ledger: Ledger()}
    async with await App.create(
        OfficeApplication, database_url=url, settings=NO_SETTINGS, services=services
    ) as app:
        await app.execute(
            OfficeWorkflow, WorkflowStartText(text="please"), tenant_id="acme", owner_id="U1"
        )
    return {
        "pause_id": inbox.last("refund-card-tool").pause_id,
        "spans": [described(s) for s in exporter.get_finished_spans()],
    }


def ask_in_a_process(url: str) -> dict[str, object]:
    """Run this module as a process of its own; what it printed."""
    ran = subprocess.run(
        [sys.executable, "-m", "tests.runtime.trace_asker", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    said: dict[str, object] = json.loads(ran.stdout.strip().splitlines()[-1])
    return said


if __name__ == "__main__":
    print(json.dumps(asyncio.run(ask(sys.argv[1]))))
