"""The Slack edge fuzzed, seeded and bounded: hostile requests (``slack_cases``) over HTTP
against the bot's aiohttp app, with a refund waiting in Slack.

Every request is answered below 500 (a badly signed one 401); none answers the waiting
question (its record is unchanged) or starts work (the agent's model is never called); the
process still answers ``/healthz`` and logged no error (a refusal is a warning at most); then
an intact Approve click answers the question.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientResponse

from bot import PauseStatus
from tests.fuzz.slack_cases import Question, SlackCase, SlackCases, approve_click
from tests.fuzz.tally import Tally
from tests.slack.conftest import SlackWorld, interactive_body, open_world, signed_headers
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_clicks import ask_refund

SEED = 25
CASES = 400
DOOR = "slack POST /slack/events"


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[SlackWorld]:
    stub = SlackStub()
    await stub.start()
    try:
        async with open_world(stub, f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}") as opened:
            yield opened
    finally:
        await stub.close()


async def send(world: SlackWorld, case: SlackCase) -> ClientResponse:
    match case.signing:
        case "signed":
            return await world.post(case.body, content_type=case.content_type)
        case "unsigned":
            return await world.post(case.body, content_type=case.content_type, sign=False)
        case "stale":
            stale = int(signed_headers("")["X-Slack-Request-Timestamp"]) - 6 * 60
            return await world.post(case.body, content_type=case.content_type, timestamp=stale)
        case "wrong secret":
            return await world.post(case.body, content_type=case.content_type, secret="nope")


async def test_hostile_slack_requests_are_never_a_5xx_and_answer_nothing(
    world: SlackWorld, caplog: pytest.LogCaptureFixture
) -> None:
    pause_id = await ask_refund(world)
    question = Question(
        pause_id=pause_id,
        message_ts=str(world.stub.posted[-1]["ts"]),
        response_url=world.stub.response_url(),
    )
    before = await world.app.find_pause(pause_id, tenant_id=TEAM)
    model_calls = len(world.llm.calls)
    tally = Tally()
    wrong: list[str] = []

    for case in SlackCases(SEED, question).draw(CASES):
        response = await send(world, case)
        await response.read()
        await world.settle()
        tally.record(DOOR, case.shape, response.status)
        if case.signing != "signed" and response.status != 401:
            wrong.append(f"{case.shape}: {response.status}, not 401")
        if await world.app.find_pause(pause_id, tenant_id=TEAM) != before:
            wrong.append(f"{case.shape} changed the question: {case.body[:300]}")
            break
        if len(world.llm.calls) != model_calls or world.ledger.runs:
            wrong.append(f"{case.shape} started or ran something: {case.body[:300]}")
            break

    print(f"\nSlack edge fuzz, seed {SEED}: {tally.summary()}")
    assert tally.total == CASES or wrong
    assert tally.server_errors == []
    assert wrong == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    async with world.http.get("/healthz") as health:
        assert health.status == 200
    # the same world answers an intact click from the approver
    answered = await world.post(interactive_body(approve_click(question)))
    await world.settle()
    assert answered.status == 200
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status in (PauseStatus.RESOLVED, PauseStatus.TAKEN)
    assert len(world.ledger.runs) == 1
