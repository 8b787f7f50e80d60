"""Spans with OpenTelemetry's SDK (the ``otel`` extra): the tree of an execute and of an
answer, no pause id in any of them; without OpenTelemetry nothing of it is imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bot import ExecutionStatus
from tests.conftest import MakeOffice
from tests.runtime.helpers import run, script_refund

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from tests.spans import tree


async def test_execute_and_answer_are_trees_of_passes_tools_and_sends(
    make_office: MakeOffice, spans: InMemorySpanExporter
) -> None:
    script_refund()
    office = await make_office()
    paused = await run(office)
    asked = tree(spans.get_finished_spans())
    assert ("countersign.channel.send", "countersign.pass") in asked
    assert ("countersign.pass", "countersign.execute") in asked
    assert asked[-1] == ("countersign.execute", None)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    spans.clear()

    done = await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )

    assert done.status is ExecutionStatus.COMPLETED
    answered = tree(spans.get_finished_spans())
    assert ("countersign.tool", "countersign.pass") in answered
    assert ("countersign.pass", "countersign.continue") in answered
    assert ("countersign.continue", "countersign.resume") in answered
    assert answered[-1] == ("countersign.resume", None)
    for span in (*spans.get_finished_spans(),):
        assert pause_id not in repr(dict(span.attributes or {}))
    execute = [s for s in spans.get_finished_spans() if s.name == "countersign.continue"]
    assert execute[0].attributes == {"execution_id": paused.execution_id}


def test_without_opentelemetry_nothing_of_it_is_imported() -> None:
    program = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # as if it were not installed\n"
        "import bot, bot.app\n"
        "from bot.core import tracing\n"
        "assert not tracing.INSTALLED\n"
        "assert tracing.carrier() is None  # nothing kept with a question: NULL\n"
        "tracing.link_to({'traceparent': '00-' + '1' * 32 + '-' + '2' * 16 + '-01'}, why='t')\n"
        "with tracing.span('execute', workflow='w'):\n"
        "    pass\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry.')], sys.modules\n"
    )
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
