# ruff: noqa: F811  (the ``installed`` fixture, imported from the install test, named in tests)
"""App Home per workspace (installed by OAuth): the same person opening the Home in two
workspaces (signed ``app_home_opened`` from each) sees in each that workspace's own waiting
questions and its own settings, published with that workspace's token; a question answered in
one republishes the Home there only."""

from __future__ import annotations

from typing import Any

import pytest

from channels.slack.home_settings import HomeSettings
from channels.slack.render import APPROVE_ACTION
from channels.slack.render_settings import DEFAULT_MARK
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.office import APPROVALS, MANAGER
from tests.slack.test_oauth_install import Installed, installed  # noqa: F401
from tests.slack.test_oauth_tenants import token_of
from tests.slack.test_workspace_settings import (
    ADMIN_TWO,
    BOSS,
    TWO_APPROVALS,
    change,
    form_values,
    two_workspaces,
)


def offered(home: dict[str, Any]) -> list[str]:
    return [
        str(b["value"])
        for b in buttons(home["blocks"])
        if str(b["action_id"]).startswith(APPROVE_ACTION)
    ]


def settings_lines(home: dict[str, Any]) -> str:
    text = all_text(home)
    return text[text.index("Approvals in this workspace") :]


async def test_each_workspace_home_shows_its_own_questions_and_settings(
    installed: Installed,
) -> None:
    one, two = await two_workspaces(installed)
    await change(two, ADMIN_TWO, form_values(TWO_APPROVALS, [MANAGER, BOSS]))  # MANAGER: both
    first, _ = await one.ask_refund()
    second, _ = await two.ask_refund()

    home_one = await one.open_home(MANAGER)
    published_one = installed.stub.of("views.publish")[-1]
    home_two = await two.open_home(MANAGER)
    published_two = installed.stub.of("views.publish")[-1]

    assert offered(home_one) == [first]
    assert offered(home_two) == [second]
    assert offered(await two.open_home(BOSS)) == [second]  # TWO's approver by its settings
    assert offered(await one.open_home(BOSS)) == []  # not ONE's
    assert f"<#{APPROVALS}>{DEFAULT_MARK}" in settings_lines(home_one)
    assert f"<#{TWO_APPROVALS}>" in settings_lines(home_two)
    assert f"<#{TWO_APPROVALS}>" not in settings_lines(home_one)
    assert published_one.headers["Authorization"] == f"Bearer {token_of(installed, 'T0ONE')}"
    assert published_two.headers["Authorization"] == f"Bearer {token_of(installed, 'T0TWO')}"

    before = len(installed.stub.of("views.publish"))
    installed.llm.then_return("refund done")
    assert await two.click(MANAGER, APPROVE_ACTION, second, channel=TWO_APPROVALS) == 200
    refreshed = installed.stub.of("views.publish")[before:]
    assert refreshed, "the Home of who answered is published again"
    for call in refreshed:  # TWO's Home, with TWO's token, without ONE's question
        assert call.headers["Authorization"] == f"Bearer {token_of(installed, 'T0TWO')}"
        assert offered(call.view()) == []
    assert_sent_valid(installed.stub.calls, {first, second})


async def test_a_section_too_long_for_slack_is_left_out_and_the_list_still_shown(
    installed: Installed, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, _ = await two_workspaces(installed)
    first, _ = await one.ask_refund()

    async def too_long(self: HomeSettings, *, tenant_id: str, user: str) -> list[dict[str, object]]:
        return [{"type": "divider"}] * 100

    monkeypatch.setattr(HomeSettings, "blocks", too_long)
    home = await one.open_home(MANAGER)

    assert offered(home) == [first]
    assert "Approvals in this workspace" not in all_text(home)
    assert_sent_valid(installed.stub.calls, {first})
