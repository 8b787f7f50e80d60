""" "Your last batch" on the App Home survives a restart: a batch approved on the Home, then a new
App and bot on the same database (a restarted process) publish the person's Home with its lines
when they open it — on a SQLite file and on PostgreSQL, as signed requests against the stub."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import Settings
from channels.slack.render import APPROVE_ALL_ACTION
from tests.databases import BACKENDS, TEST_ENCRYPTION_KEYS, database
from tests.slack.batch_picks import ask_refunds, batch_button
from tests.slack.checks import all_text, assert_sent_valid
from tests.slack.conftest import open_world
from tests.slack.office import MANAGER
from tests.slack.stub import SlackStub
from tests.slack.test_batch_home import home_blocks
from tests.slack.test_lists import home_opened

KEYED = Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_last_batch_lines_are_on_the_home_after_a_restart(
    backend: str, stub: SlackStub, tmp_path: Path
) -> None:
    async with database(backend, tmp_path) as url:
        async with open_world(stub, url, settings=KEYED) as world:
            await home_opened(world, MANAGER)
            ids = await ask_refunds(world, 3)
            await world.settle()
            value = str(batch_button(home_blocks(world), "batch")["value"])
            await world.click(MANAGER, APPROVE_ALL_ACTION, value, home=True)
            await world.settle()
            before = all_text(home_blocks(world))
            assert "Your last batch" in before and before.count("Approved.") == 3

        async with open_world(stub, url, settings=KEYED) as restarted:
            published = len(stub.of("views.publish"))
            opened = {"type": "app_home_opened", "user": MANAGER, "channel": "D0HOME"}
            await restarted.event(opened | {"tab": "home"}, event_id="EvRESTARTED")
            await restarted.settle()
            assert len(stub.of("views.publish")) == published + 1  # published by the new bot
            after = all_text(home_blocks(restarted))
            assert "Your last batch" in after and after.count("Approved.") == 3
            assert_sent_valid(stub.calls, set(ids))
