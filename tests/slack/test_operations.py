"""What an operator reads of ``python -m bot serve``, run as a process: its log (each answer a
line, refusals with their role and code as JSON fields, the level it is set to), its metrics
after a scripted scenario (a bad signature, a body too large, a refused click), the address it
binds, and its spans exported over OTLP to a receiver."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from prometheus_client.parser import text_string_to_metric_families

from channels.slack.render import APPROVE_ACTION, REJECT_ACTION
from tests.ports import free_port
from tests.slack.checks import all_text, buttons
from tests.slack.conftest import interactive_body, signed_headers
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_serve import (
    ROOT,
    clean_environ,
    desk_mention,
    start_serve,
    stop,
    wait_healthy,
)

OWNER = "U0OWNER"
STRANGER = "U0STRANGER"
FORM = "application/x-www-form-urlencoded"
MAX_BODY = 2048


def served_env(stub: SlackStub, tmp_path: Path, port: int, **settings: str) -> dict[str, str]:
    """``python -m bot serve`` of the served application (two THREAD_OWNER questions)."""
    return clean_environ(
        SLACK_API_URL=stub.api_url,
        PORT=str(port),
        COUNTERSIGN_APP="tests.slack.served:ServedApplication",
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'served.db'}",
        PYTHONPATH=str(ROOT),
        SLACK_MAX_BODY_BYTES=str(MAX_BODY),
        **settings,
    )


def click(user: str, action: str, pause_id: str) -> str:
    return interactive_body(
        {
            "type": "block_actions",
            "team": {"id": TEAM},
            "user": {"id": user, "team_id": TEAM},
            "container": {"type": "message", "channel_id": "C0GENERAL", "is_ephemeral": False},
            "channel": {"id": "C0GENERAL"},
            "trigger_id": "t",
            "actions": [{"type": "button", "action_id": action, "value": pause_id}],
        }
    )


@dataclass
class Events:
    """Posts to a served process's ``/slack/events``: signed (or not), as Slack sends them."""

    session: aiohttp.ClientSession
    url: str

    async def post(self, body: str, content_type: str = FORM, *, secret: str | None = None) -> int:
        signed = signed_headers(body) if secret is None else signed_headers(body, secret=secret)
        headers = {"Content-Type": content_type, **signed}
        async with self.session.post(self.url, data=body.encode(), headers=headers) as response:
            return response.status


async def ask_both(events: Events, stub: SlackStub, event_id: str) -> tuple[str, str]:
    """Mention the bot: it asks the owner for the refund and the expense (at once: in either
    order); their pause ids, the refund's first."""
    mention = desk_mention(event_id, ts="1700000970.000001")
    assert await events.post(json.dumps(mention), "application/json") == 200
    questions = await stub.wait_for("chat.postMessage", 2)
    [refund] = [q for q in questions if "Refunds a card" in all_text(q.blocks())]
    [expense] = [q for q in questions if "Books an expense" in all_text(q.blocks())]
    return str(buttons(refund.blocks())[0]["value"]), str(buttons(expense.blocks())[0]["value"])


async def scrape(
    session: aiohttp.ClientSession, url: str
) -> dict[tuple[str, frozenset[Any]], float]:
    async with session.get(url) as response:
        assert response.status == 200
        text = await response.text()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict[tuple[str, frozenset[Any]], float], name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def test_a_scripted_scenario_is_read_back_exactly_in_metrics_and_the_json_log(
    stub: SlackStub, tmp_path: Path
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = served_env(stub, tmp_path, port, COUNTERSIGN_LOG_FORMAT="json")
    process = await start_serve(env, tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"{base}/healthz", process)
            events = Events(session, f"{base}/slack/events")
            refund, expense = await ask_both(events, stub, "Ev0OPERATOR")
            # a stranger clicks Approve on one and Reject on the other (the modal's way): refused
            assert await events.post(click(STRANGER, APPROVE_ACTION, refund)) == 200
            assert await events.post(click(STRANGER, REJECT_ACTION, expense)) == 200
            await stub.wait_for("chat.postEphemeral", 2)
            # a request signed with another secret, and one over SLACK_MAX_BODY_BYTES
            assert await events.post(click(OWNER, APPROVE_ACTION, refund), secret="wrong") == 401
            assert await events.post("payload=" + "x" * (2 * MAX_BODY)) == 413
            # the owner approves both
            for pause_id in (refund, expense):
                assert await events.post(click(OWNER, APPROVE_ACTION, pause_id)) == 200
            await stub.wait_for("chat.postMessage", 3)  # the run's end, in the thread
            samples = await scrape(session, f"{base}/metrics")
    finally:
        code, _, err = await stop(process)
    assert code == 0, err

    requests = "countersign_slack_requests_total"
    assert value(samples, requests, kind="event", outcome="ok") == 1
    assert value(samples, requests, kind="block_actions", outcome="ok") == 4
    assert value(samples, requests, kind="bad_signature", outcome="refused") == 1
    assert value(samples, requests, kind="too_large", outcome="refused") == 1
    answers = "countersign_answers_total"
    assert value(samples, answers, outcome="refused", code="pause.not-thread-owner") == 2
    assert value(samples, answers, outcome="answered", code="") == 2
    # Bolt's own auth.test (its authorization, on the first request) is a Web API call too
    assert (
        value(samples, "countersign_slack_api_calls_total", method="auth.test", outcome="ok") == 1
    )

    lines = [json.loads(line) for line in err.splitlines()]
    said = [line for line in lines if line["logger"] == "countersign.answers"]
    roles = {"served-refund-approval-channel", "served-expense-approval-channel"}
    refused = [line for line in said if line["outcome"] == "refused"]
    assert [(r["level"], r["code"], r["tenant_id"]) for r in refused] == [
        ("WARNING", "pause.not-thread-owner", TEAM)
    ] * 2
    assert {r["role"] for r in refused} == roles
    answered = [line for line in said if line["outcome"] == "answered"]
    assert {(a["level"], a["role"]) for a in answered} == {("INFO", role) for role in roles}
    assert all(f"by {OWNER}" in a["message"] for a in answered)
    assert "will be unused" not in err  # Bolt's warning about the token: not on every start
    assert refund not in err and expense not in err


async def test_at_warning_the_log_keeps_refusals_and_leaves_out_the_answers(
    stub: SlackStub, tmp_path: Path
) -> None:
    """Without a bind address, Slack's port is on every interface (127.0.0.2 too): checked on
    this process too (a start costs seconds)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = await start_serve(
        served_env(stub, tmp_path, port, COUNTERSIGN_LOG_LEVEL="warning"), tmp_path
    )
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"{base}/healthz", process)
            await wait_healthy(session, f"http://127.0.0.2:{port}/healthz", process)
            events = Events(session, f"{base}/slack/events")
            refund, _ = await ask_both(events, stub, "Ev0WARNING")
            assert await events.post(click(STRANGER, APPROVE_ACTION, refund)) == 200
            assert await events.post(click(OWNER, APPROVE_ACTION, refund)) == 200
            await stub.wait_for("chat.update", 1)
    finally:
        code, _, err = await stop(process)
    assert code == 0, err
    said = [line for line in err.splitlines() if " countersign.answers: " in line]
    assert len(said) == 1
    assert " WARNING countersign.answers: answer refused (pause.not-thread-owner): " in said[0]
    assert f"by {STRANGER} (tenant {TEAM}, role served-refund-approval-channel)" in said[0]


async def test_the_bind_address_keeps_both_ports_on_loopback(
    stub: SlackStub, tmp_path: Path
) -> None:
    """127.0.0.1 only: another loopback address of the machine (127.0.0.2) is not served."""
    port, metrics = free_port(), free_port()
    env = served_env(
        stub,
        tmp_path,
        port,
        COUNTERSIGN_BIND_ADDRESS="127.0.0.1",
        COUNTERSIGN_METRICS_PORT=str(metrics),
    )
    process = await start_serve(env, tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            for served in (port, metrics):
                await wait_healthy(session, f"http://127.0.0.1:{served}/healthz", process)
                with pytest.raises(aiohttp.ClientConnectionError):
                    await session.get(f"http://127.0.0.2:{served}/healthz")
    finally:
        code, out, err = await stop(process)
    assert code == 0, err
    assert f"serves Slack on http://127.0.0.1:{port}/slack/events" in out
    assert f"Metrics on http://127.0.0.1:{metrics}/metrics" in out


# --------------------------------------------------------------------------------------------
# Traces, over OTLP/HTTP to a receiver in the test.


@dataclass
class OtlpReceiver:
    """An OTLP/HTTP trace receiver: it decodes each export (protobuf) and keeps its spans."""

    spans: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    """(span name, its resource's attributes) of every span received."""

    async def traces(self, request: web.Request) -> web.Response:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        body = await request.read()
        if request.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        export = ExportTraceServiceRequest()
        export.ParseFromString(body)
        for resource_spans in export.resource_spans:
            resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                self.spans.extend((span.name, resource) for span in scope.spans)
        return web.Response(
            body=ExportTraceServiceResponse().SerializeToString(),
            content_type="application/x-protobuf",
        )


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[OtlpReceiver, str]]:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    kept = OtlpReceiver()
    application = web.Application()
    application.router.add_post("/v1/traces", kept.traces)
    server = TestServer(application, host="127.0.0.1")
    await server.start_server()
    try:
        yield kept, f"http://127.0.0.1:{server.port}"
    finally:
        await server.close()


async def test_spans_are_exported_over_otlp_as_the_otel_settings_say(
    stub: SlackStub, tmp_path: Path, receiver: tuple[OtlpReceiver, str]
) -> None:
    kept, endpoint = receiver
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = served_env(stub, tmp_path, port, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    process = await start_serve(env, tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"{base}/healthz", process)
            events = Events(session, f"{base}/slack/events")
            for pause_id in await ask_both(events, stub, "Ev0TRACES"):
                assert await events.post(click(OWNER, APPROVE_ACTION, pause_id)) == 200
            await stub.wait_for("chat.postMessage", 3)
    finally:
        code, _, err = await stop(process)  # what is left is exported on the way out
    assert code == 0, err

    names = {name for name, _ in kept.spans}
    assert {
        "countersign.slack.request",
        "countersign.execute",
        "countersign.pass",
        "countersign.answer",
        "countersign.tool",
        "countersign.slack.api",
    } <= names
    assert {resource.get("service.name") for _, resource in kept.spans} == {"countersign"}
