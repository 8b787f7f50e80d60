"""Spans with OpenTelemetry's SDK (the ``otel`` extra): the tree of an execute and of an
answer, no pause id in any of them; without OpenTelemetry nothing of it is imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bot import ExecutionStatus, UninterpretableReplyError
from tests.conftest import MakeOffice
from tests.runtime.helpers import run, script_refund

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from tests.spans import everything_said, named, tree


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


async def test_each_reading_of_a_reply_is_a_span_with_its_kind_and_outcome(
    make_office: MakeOffice, spans: InMemorySpanExporter
) -> None:
    script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    spans.clear()

    with pytest.raises(UninterpretableReplyError):
        await office.app.resume(
            pause_id, reply="perhaps tomorrow", tenant_id="acme", answered_by="m"
        )
    await office.app.resume(pause_id, reply="approve", tenant_id="acme", answered_by="m")

    finished = spans.get_finished_spans()
    readings = [
        (dict(s.attributes or {}), names)
        for s, names in zip(finished, tree(finished), strict=True)
        if s.name == "countersign.interpret"
    ]
    role = {"kind": "code", "role": "refund-approval-channel"}
    assert readings == [
        (
            {
                **role,
                "outcome": "not_understood",
                "code": "pause.uninterpretable-reply",
                "error.type": "UninterpretableReplyError",
            },
            ("countersign.interpret", "countersign.resume"),
        ),
        ({**role, "outcome": "understood"}, ("countersign.interpret", "countersign.resume")),
    ]
    [refused] = [s for s in named(finished, "resume") if s.status.status_code.name == "ERROR"]
    assert dict(refused.attributes or {}) == {"error.type": "UninterpretableReplyError"}
    said = everything_said(finished)
    for secret in ("perhaps tomorrow", "approve", pause_id, "acme"):
        assert secret not in said
    assert all(not s.events for s in finished)  # no exception events: they quote messages
