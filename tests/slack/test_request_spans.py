"""Each request Slack sends is a span and a count by kind and outcome; each Web API call a span
with its method and outcome; the answer a click starts is a child of the click's span. No
tenant, user or pause id in any span (OpenTelemetry's SDK, in memory)."""

from __future__ import annotations

import pytest

from channels.slack.render import APPROVE_ACTION
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund
from tests.slack.test_metrics import scrape, value

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from tests.spans import everything_said, named, tree


async def test_slack_requests_and_web_api_calls_are_spans_and_counts(
    world: SlackWorld, spans: InMemorySpanExporter
) -> None:
    pause_id = await ask_refund(world)
    world.stub.fail_next("chat.update", status=429, retry_after=0)

    click = await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()
    command = await world.command(MANAGER)
    await world.settle()
    unhandled = await world.post('{"type": "no_such_thing"}', content_type="application/json")
    await world.settle()

    assert (click.status, command.status, unhandled.status) == (200, 200, 404)
    finished = spans.get_finished_spans()
    requests = [dict(s.attributes or {}) for s in named(finished, "slack.request")]
    assert requests == [
        {
            "kind": "block_actions",
            "action": APPROVE_ACTION,
            "outcome": "ok",
            "http.response.status_code": 200,
        },
        {
            "kind": "command",
            "action": "/pending",
            "outcome": "ok",
            "http.response.status_code": 200,
        },
        {"kind": "other", "action": "", "outcome": "unhandled", "http.response.status_code": 404},
    ]
    assert ("countersign.answer", "countersign.slack.request") in tree(finished)
    calls = [dict(s.attributes or {}) for s in named(finished, "slack.api")]
    assert {"method": "chat.update", "outcome": "ok"} in calls  # retried once after the 429
    assert {"method": "chat.postMessage", "outcome": "ok"} in calls
    said = everything_said(finished)
    for secret in (pause_id, TEAM, MANAGER):
        assert secret.lower() not in said

    samples = await scrape(world)
    ok = {"kind": "block_actions", "outcome": "ok"}
    assert value(samples, "countersign_slack_requests_total", **ok) == 1
    assert value(samples, "countersign_slack_requests_total", kind="command", outcome="ok") == 1
    assert (
        value(samples, "countersign_slack_requests_total", kind="other", outcome="unhandled") == 1
    )
    assert value(samples, "countersign_slack_request_duration_seconds_count", kind="command") == 1
    assert value(samples, "countersign_slack_request_duration_seconds_sum", kind="command") == 0.0
