"""A question keeps the trace context it was asked in, and the span that answers it — in
another instance, in another process — links to the pass that asked (OpenTelemetry's SDK, in
memory). No pause, tenant or user id in any span."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import App, ExecutionStatus, WorkflowStartText
from bot.core.tracing import carrier
from bot.testing import FakeClock, mock_llm, test_with
from tests.conftest import NO_SETTINGS
from tests.office import Inbox, Ledger, OfficeAgent, OfficeApplication, OfficeWorkflow
from tests.runtime.helpers import script_refund

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from tests.runtime.trace_asker import ask_in_a_process
from tests.spans import everything_said, named


async def ask(app: App) -> None:
    await app.execute(
        OfficeWorkflow, WorkflowStartText(text="please"), tenant_id="acme", owner_id="U1"
    )


def linked(span: ReadableSpan) -> list[tuple[int, int]]:
    return [(link.context.trace_id, link.context.span_id) for link in span.links]


def ids(span: ReadableSpan) -> tuple[int, int]:
    context = span.get_span_context()
    assert context is not None
    return context.trace_id, context.span_id


async def test_an_answer_in_another_instance_links_to_the_pass_that_asked(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    script_refund()
    inbox = Inbox()
    async with test_with(
        OfficeApplication,
        instances=2,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'two.db'}",
        clock=FakeClock(),
        settings=NO_SETTINGS,
        services={Inbox: inbox, Ledger: Ledger()},
    ) as (asker, answerer):
        await ask(asker)
        asked = spans.get_finished_spans()
        [execute] = named(asked, "execute")
        [asking] = [s for s in named(asked, "pass") if s.parent == execute.get_span_context()]
        pause_id = inbox.last("refund-card-tool").pause_id
        spans.clear()

        done = await answerer.resume(
            pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m-17"
        )

    assert done.status is ExecutionStatus.COMPLETED
    answered = spans.get_finished_spans()
    [resume] = named(answered, "resume")
    [moved] = named(answered, "continue")
    assert resume.parent is None  # a trace of its own, as in another process
    assert ids(resume)[0] != ids(execute)[0]
    assert linked(resume) == [ids(asking)]
    assert linked(moved) == [ids(asking)]
    said = everything_said(asked + answered)
    for secret in (pause_id, "acme", "u1", "m-17"):
        assert secret not in said


async def test_an_answer_links_to_a_question_asked_by_another_process(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'processes.db'}"
    said = ask_in_a_process(url)  # executes until the refund is asked, then exits
    traced = said["spans"]
    assert isinstance(traced, list)
    [execute] = [s for s in traced if s["name"] == "countersign.execute"]
    [asking] = [
        s
        for s in traced
        if s["name"] == "countersign.pass" and s["parent_span_id"] == execute["span_id"]
    ]
    mock_llm(OfficeAgent).then_return("done")
    async with test_with(
        OfficeApplication,
        instances=1,
        database_url=url,
        clock=FakeClock(),
        settings=NO_SETTINGS,
        services={Inbox: Inbox(), Ledger: Ledger()},
    ) as (answerer,):
        done = await answerer.resume(
            str(said["pause_id"]), decision={"approved": True}, tenant_id="acme", answered_by="m"
        )

    assert done.status is ExecutionStatus.COMPLETED
    [resume] = named(spans.get_finished_spans(), "resume")
    assert [(f"{t:032x}", f"{s:016x}") for t, s in linked(resume)] == [
        (asking["trace_id"], asking["span_id"])
    ]
    assert f"{ids(resume)[0]:032x}" != execute["trace_id"]


async def test_outside_a_recorded_span_no_trace_context_is_kept(
    spans: InMemorySpanExporter,
) -> None:
    assert carrier() is None  # no span is current: nothing to link to, NULL in the store
