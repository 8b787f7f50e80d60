"""Refused signatures: a WARNING per reason a minute, with the team id, never the body."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from urllib.parse import quote

import pytest

from bot.testing import FakeClock
from channels.slack.signature_log import RefusedSignatures, team_id

PAUSE_LIKE = "0123456789abcdef0123456789abcdef"
EVENT = json.dumps({"type": "event_callback", "team_id": "T0ACME", "event": {"text": PAUSE_LIKE}})


def headers(clock: FakeClock, *, age: timedelta = timedelta(0)) -> dict[str, list[str]]:
    sent = int((clock.now() - age).timestamp())
    return {"x-slack-request-timestamp": [str(sent)], "x-slack-signature": ["v0=bad"]}


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


async def test_one_warning_a_minute_per_reason_then_the_count_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    refused = RefusedSignatures(clock)

    for _ in range(3):
        refused.refused(EVENT, headers(clock))
    refused.refused(EVENT, {})  # another reason: its own warning
    await clock.advance(timedelta(minutes=1))
    refused.refused(EVENT, headers(clock))

    first, other, later = warnings(caplog)
    assert first.startswith("refused a Slack request with a signature that does not match ")
    assert "(team T0ACME): check SLACK_SIGNING_SECRET" in first
    assert other.startswith("refused a Slack request with no signature (team T0ACME)")
    assert later.endswith("(2 more refused for this reason since the last one)")
    assert not [w for w in warnings(caplog) if PAUSE_LIKE in w or "event_callback" in w]


def test_a_stale_timestamp_is_its_own_reason(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()

    RefusedSignatures(clock).refused("", headers(clock, age=timedelta(minutes=6)))

    [warning] = warnings(caplog)
    assert "with a stale timestamp (is this machine's clock right?) (team unknown)" in warning


@pytest.mark.parametrize(
    ("body", "team"),
    [
        (EVENT, "T0ACME"),
        ("team_id=T0CMD&command=%2Fpending&text=", "T0CMD"),
        (f"payload={quote(json.dumps({'team': {'id': 'T0CLICK'}}))}", "T0CLICK"),
        ('{"team_id": "<script>"}', None),  # only what looks like a team id is logged
        ("payload=%7Bnot json", None),
        ("\x00garbage", None),
    ],
)
def test_the_team_id_is_read_from_each_kind_of_body(body: str, team: str | None) -> None:
    assert team_id(body) == team
