"""Per-workspace settings' contract on SQLite and PostgreSQL: saved and read back per workspace,
the latest wins, a field left out keeps the default, cleared, one workspace never sees
another's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.store.database import Database
from bot.store.workspace_settings import SqlWorkspaceSettings, WorkspaceSetting
from bot.testing import FakeClock
from tests.databases import BACKENDS, database

CLOCK = FakeClock()


@pytest.fixture(params=BACKENDS)
async def settings(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[SqlWorkspaceSettings]:
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(CLOCK.now())
        yield SqlWorkspaceSettings(opened)


def setting(
    tenant: str = "T1", implementation: str = "slack-refunds", **fields: object
) -> WorkspaceSetting:
    values: dict[str, object] = {
        "conversation": "C0ONE",
        "approvers": ("U0ADA", "S0FIN"),
        "escalate_to": ("U0ONCALL",),
        "escalation_conversation": "C0ESC",
        "updated_by": "U0ADMIN",
        "updated_at": CLOCK.now(),
    } | fields
    return WorkspaceSetting(tenant_id=tenant, implementation=implementation, **values)  # type: ignore[arg-type]


async def test_a_setting_is_read_back_as_saved(settings: SqlWorkspaceSettings) -> None:
    await settings.save(setting())

    assert await settings.of_tenant("T1") == {"slack-refunds": setting()}


async def test_the_latest_wins_and_a_field_left_out_is_none(settings: SqlWorkspaceSettings) -> None:
    await settings.save(setting())
    later = setting(
        conversation=None,
        approvers=("U0BOB",),
        escalate_to=None,
        escalation_conversation=None,
        updated_at=CLOCK.now() + timedelta(1),
    )
    await settings.save(later)

    assert await settings.of_tenant("T1") == {"slack-refunds": later}


async def test_each_workspace_reads_its_own(settings: SqlWorkspaceSettings) -> None:
    await settings.save(setting("T1"))
    await settings.save(setting("T2", approvers=("U0TWO",)))
    await settings.save(setting("E1:T3", implementation="slack-wires", approvers=None))

    assert (await settings.of_tenant("T2"))["slack-refunds"].approvers == ("U0TWO",)
    assert (await settings.of_tenant("T1"))["slack-refunds"].approvers == ("U0ADA", "S0FIN")
    assert (await settings.of_tenant("E1:T3"))["slack-wires"].approvers is None
    assert await settings.of_tenant("T9") == {}


async def test_cleared_back_to_the_defaults(settings: SqlWorkspaceSettings) -> None:
    await settings.save(setting("T1"))
    await settings.save(setting("T2"))

    assert await settings.clear("T1", "slack-refunds")
    assert not await settings.clear("T1", "slack-refunds")
    assert await settings.of_tenant("T1") == {}
    assert list(await settings.of_tenant("T2")) == ["slack-refunds"]
