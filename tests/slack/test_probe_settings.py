"""``COUNTERSIGN_READYZ_SLACK``: ``/readyz`` asks Slack whether the bot token works (kept 30 s on
the App's clock); ``COUNTERSIGN_METRICS_TOKEN``: ``/metrics`` only for its bearer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.conftest import NO_SETTINGS
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.stub import SlackStub

TOKEN = "scrape-token-0123456789"


@pytest.fixture
async def checked(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'checked.db'}"
    async with open_world(stub, url, check_slack_when_ready=True) as opened:
        yield opened


async def test_readyz_asks_slack_at_most_once_in_30_seconds_and_names_slack(
    checked: SlackWorld,
) -> None:
    asked = len(checked.stub.of("auth.test"))
    ready = await checked.http.get("/readyz")
    again = await checked.http.get("/readyz")
    assert (ready.status, again.status) == (200, 200)
    assert len(checked.stub.of("auth.test")) == asked + 1  # the second from what was kept

    checked.stub.errors["auth.test"] = "invalid_auth"
    await checked.clock.advance(timedelta(seconds=29))
    assert (await checked.http.get("/readyz")).status == 200  # still what was kept
    await checked.clock.advance(timedelta(seconds=1))
    unready = await checked.http.get("/readyz")

    assert unready.status == 503
    assert await unready.json() == {"status": "unready", "problems": {"slack": "invalid_auth"}}
    assert len(checked.stub.of("auth.test")) == asked + 2


async def test_without_the_setting_readyz_never_asks_slack(world: SlackWorld) -> None:
    asked = len(world.stub.of("auth.test"))
    world.stub.errors["auth.test"] = "invalid_auth"
    assert (await world.http.get("/readyz")).status == 200
    assert len(world.stub.of("auth.test")) == asked


async def test_metrics_with_a_token_answer_only_its_bearer(stub: SlackStub, tmp_path: Path) -> None:
    settings = NO_SETTINGS.model_copy(update={"countersign_metrics_token": SecretStr(TOKEN)})
    url = f"sqlite+aiosqlite:///{tmp_path / 'token.db'}"
    async with open_world(stub, url, settings=settings) as world:
        missing = await world.http.get("/metrics")
        wrong = await world.http.get("/metrics", headers={"Authorization": "Bearer nope"})
        bare = await world.http.get("/metrics", headers={"Authorization": TOKEN})
        right = await world.http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        refused, shown = await missing.text(), await right.text()
        ready = await world.http.get("/readyz")  # the probes need no token

    assert [r.status for r in (missing, wrong, bare)] == [401, 401, 401]
    assert missing.headers["WWW-Authenticate"] == "Bearer"
    assert TOKEN not in refused
    assert right.status == 200
    assert "countersign_answers_total" in shown
    assert ready.status == 200


async def test_metrics_without_a_token_answer_anyone(world: SlackWorld) -> None:
    assert (await world.http.get("/metrics")).status == 200
