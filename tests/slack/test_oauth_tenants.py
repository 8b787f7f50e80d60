# ruff: noqa: F811  (the ``installed`` fixture, imported from the install test, named in tests)
"""Installed by OAuth in two workspaces, tenants are installations: a question asked for a
workspace is posted with that workspace's token, a signed click from the other workspace never
answers it, and a click from its own does; on Enterprise Grid the tenant is enterprise + team
and an org-wide install's token serves each workspace of the org."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from aiohttp import ClientResponse

from bot import ExecutionStatus, PauseStatus, WorkflowStartText
from bot.testing import FakeClock, ScriptedChatModel, call_tool
from channels.slack.render import APPROVE_ACTION
from channels.slack.tenant_tokens import tenant_of, workspace_of
from tests.slack.checks import buttons
from tests.slack.conftest import interactive_body, signed_headers
from tests.slack.office import (
    APPROVALS,
    MANAGER,
    RefundCardTool,
    SlackOfficeWorkflow,
)
from tests.slack.stub import Workspace
from tests.slack.test_oauth_install import Installed, install, installed, stored_text  # noqa: F401


async def ask_refund(installed: Installed, llm: ScriptedChatModel, tenant: str) -> str:
    llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 30.0}))
    result = await installed.app.execute(
        SlackOfficeWorkflow, WorkflowStartText(text="refund 7"), tenant_id=tenant, owner_id="U0OWN"
    )
    assert result.status is ExecutionStatus.PAUSED
    posted = installed.stub.of("chat.postMessage")[-1]
    return str(buttons(posted.blocks())[0]["value"])


async def click(installed: Installed, team: str, pause_id: str) -> ClientResponse:
    payload: dict[str, Any] = {
        "type": "block_actions",
        "team": {"id": team, "domain": "acme"},
        "user": {"id": MANAGER, "team_id": team, "username": "manager"},
        "api_app_id": "A0APP",
        "token": "legacy",
        "container": {
            "type": "message",
            "message_ts": "1700000000.000001",
            "channel_id": APPROVALS,
            "is_ephemeral": False,
        },
        "trigger_id": "trigger-1",
        "response_url": installed.stub.response_url(),
        "actions": [
            {
                "type": "button",
                "action_id": APPROVE_ACTION,
                "block_id": "b1",
                "value": pause_id,
                "action_ts": "1700000002.000000",
            }
        ],
        "channel": {"id": APPROVALS, "name": "approvals"},
        "message": {"ts": "1700000000.000001", "type": "message"},
    }
    body = interactive_body(payload)
    headers = signed_headers(body) | {"Content-Type": "application/x-www-form-urlencoded"}
    return await installed.http.post("/slack/events", data=body, headers=headers)


def token_of(installed: Installed, team: str) -> str:
    return next(t for t, w in reversed(installed.stub.tokens.items()) if w.team_id == team)


async def test_each_workspace_is_asked_with_its_own_token_and_answers_only_its_own(
    installed: Installed,
) -> None:
    llm = installed.llm
    await install(installed, "code-1", Workspace(team_id="T0ONE"))
    await install(installed, "code-2", Workspace(team_id="T0TWO"))

    one = await ask_refund(installed, llm, "T0ONE")
    asked_one = installed.stub.of("chat.postMessage")[-1]
    two = await ask_refund(installed, llm, "T0TWO")
    asked_two = installed.stub.of("chat.postMessage")[-1]

    assert asked_one.headers["Authorization"] == f"Bearer {token_of(installed, 'T0ONE')}"
    assert asked_two.headers["Authorization"] == f"Bearer {token_of(installed, 'T0TWO')}"

    assert (await click(installed, "T0TWO", one)).status == 200  # from the other workspace
    await installed.bot.wait_idle()
    still = await installed.app.find_pause(one, tenant_id="T0ONE")
    assert still is not None and still.status is PauseStatus.PENDING

    llm.then_return("refund done")
    assert (await click(installed, "T0ONE", one)).status == 200  # from its own
    await installed.bot.wait_idle()
    answered = await installed.app.find_pause(one, tenant_id="T0ONE")
    assert answered is not None and answered.status is not PauseStatus.PENDING
    updated = installed.stub.of("chat.update")[-1]
    assert updated.headers["Authorization"] == f"Bearer {token_of(installed, 'T0ONE')}"
    other = await installed.app.find_pause(two, tenant_id="T0TWO")
    assert other is not None and other.status is PauseStatus.PENDING


async def test_an_org_wide_install_serves_every_workspace_of_its_org(
    installed: Installed,
) -> None:
    llm = installed.llm
    await install(
        installed, "code-org", Workspace(team_id="T0ORG", enterprise_id="E0ORG", org_wide=True)
    )
    tenant = tenant_of("E0ORG", "T0ANY")

    await ask_refund(installed, llm, tenant or "")

    assert tenant == "E0ORG:T0ANY" and workspace_of(tenant) == ("E0ORG", "T0ANY")
    asked = installed.stub.of("chat.postMessage")[-1]
    assert asked.headers["Authorization"] == f"Bearer {token_of(installed, 'T0ORG')}"


async def test_a_workspace_not_installed_is_never_asked_with_another_ones_token(
    installed: Installed,
) -> None:
    llm = installed.llm
    await install(installed, "code-1", Workspace(team_id="T0ONE"))
    llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 30.0}), "done")

    await installed.app.execute(
        SlackOfficeWorkflow, WorkflowStartText(text="refund 7"), tenant_id="T0NONE", owner_id="U1"
    )

    posts = installed.stub.of("chat.postMessage")
    assert all(
        token_of(installed, "T0ONE") not in c.headers.get("Authorization", "") for c in posts
    )


async def pending_in(installed: Installed, team: str) -> list[str]:
    """The pause ids ``/pending`` offers MANAGER in ``team``'s workspace."""
    body = "&".join(
        f"{k}={v}"
        for k, v in {
            "command": "/pending",
            "text": "",
            "user_id": MANAGER,
            "team_id": team,
            "channel_id": "C0GENERAL",
            "response_url": installed.stub.response_url(),
            "trigger_id": "1.2.3",
        }.items()
    )
    headers = signed_headers(body) | {"Content-Type": "application/x-www-form-urlencoded"}
    assert (await installed.http.post("/slack/events", data=body, headers=headers)).status == 200
    await installed.bot.wait_idle()
    sent = installed.stub.of("response_url")[-1].payload
    return [
        str(b["value"])
        for b in buttons(sent["blocks"])
        if str(b["action_id"]).startswith(APPROVE_ACTION)
    ]


async def test_pending_lists_each_workspaces_own(installed: Installed) -> None:
    await install(installed, "code-1", Workspace(team_id="T0ONE"))
    await install(installed, "code-2", Workspace(team_id="T0TWO"))
    one = await ask_refund(installed, installed.llm, "T0ONE")
    two = await ask_refund(installed, installed.llm, "T0TWO")

    assert await pending_in(installed, "T0ONE") == [one]
    assert await pending_in(installed, "T0TWO") == [two]


async def event(installed: Installed, team: str, body: dict[str, Any]) -> int:
    envelope = {
        "token": "legacy",
        "team_id": team,
        "api_app_id": "A0APP",
        "type": "event_callback",
        "event_id": f"Ev{team}{body['type']}",
        "event_time": 1700000000,
        "event": body,
    }
    text = json.dumps(envelope)
    headers = signed_headers(text) | {"Content-Type": "application/json"}
    response = await installed.http.post("/slack/events", data=text, headers=headers)
    await installed.bot.wait_idle()
    return response.status


async def test_an_uninstall_removes_the_tokens_and_keeps_the_questions_for_a_reinstall(
    installed: Installed,
) -> None:
    await install(installed, "code-1", Workspace(team_id="T0ONE"))
    await install(installed, "code-2", Workspace(team_id="T0TWO"))
    one = await ask_refund(installed, installed.llm, "T0ONE")

    assert await event(installed, "T0ONE", {"type": "app_uninstalled"}) == 200

    assert "T0ONE" not in stored_text(installed.database)
    assert "T0TWO" in stored_text(installed.database)  # the other workspace's are kept
    kept = await installed.app.find_pause(one, tenant_id="T0ONE")
    assert kept is not None and kept.status is PauseStatus.PENDING

    await install(installed, "code-3", Workspace(team_id="T0ONE"))  # installed again
    installed.llm.then_return("refund done")
    assert (await click(installed, "T0ONE", one)).status == 200
    await installed.bot.wait_idle()
    answered = await installed.app.find_pause(one, tenant_id="T0ONE")
    assert answered is not None and answered.status is not PauseStatus.PENDING


async def test_a_revoked_bot_token_is_removed(installed: Installed) -> None:
    await install(installed, "code-1", Workspace(team_id="T0ONE"))
    revoked = {"type": "tokens_revoked", "tokens": {"bot": ["UB0T"]}}

    assert await event(installed, "T0ONE", revoked) == 200

    assert "T0ONE" not in stored_text(installed.database)


async def test_an_update_slack_failed_is_made_again_with_the_workspaces_token(
    installed: Installed,
) -> None:
    await install(installed, "code-1", Workspace(team_id="T0ONE"))
    await install(installed, "code-2", Workspace(team_id="T0TWO"))
    one = await ask_refund(installed, installed.llm, "T0ONE")
    installed.llm.then_return("refund done")
    await installed.stub.fail_all("500", "chat.update")
    assert (await click(installed, "T0ONE", one)).status == 200
    await installed.bot.wait_idle()
    await installed.stub.restore()

    clock = installed.app.clock
    assert isinstance(clock, FakeClock)
    await clock.advance(timedelta(seconds=3))  # the catch-up's tick
    updated = await installed.stub.wait_for("chat.update")

    assert updated[-1].headers["Authorization"] == f"Bearer {token_of(installed, 'T0ONE')}"
