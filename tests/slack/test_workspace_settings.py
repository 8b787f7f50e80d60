# ruff: noqa: F811  (the ``installed`` fixture, imported from the install test, named in tests)
"""Per-workspace settings (installed by OAuth): a workspace admin sets, from App Home, where a
role's questions are asked in their workspace and who answers them there; ``.env``'s (the
code's) are the defaults. A question of workspace B is posted in B's conversation and only B's
approvers may answer it — by a click, a modal, a thread reply, from ``/pending`` — while
workspace A keeps its own. Anybody but an admin is refused. All as signed requests against the
Web API stub, every view parsed by slack_sdk's models."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bot import ExecutionStatus, PauseStatus, WorkflowStartText
from bot.store.workspace_settings import SqlWorkspaceSettings
from bot.testing import FakeClock, call_tool
from channels.slack.home_settings import NOT_A_MEMBER
from channels.slack.render import APPROVE_ACTION, REJECT_ACTION, REJECT_MODAL
from channels.slack.render_settings import (
    CHANGE_ACTION,
    CONVERSATION_BLOCK,
    ESCALATION_CONVERSATION_BLOCK,
    ESCALATION_USERS_BLOCK,
    GROUPS_BLOCK,
    MAY_CHANGE,
    MAY_NOT_CHANGE,
    REFUSED,
    RESET_ACTION,
    SETTINGS_MODAL,
    USERS_BLOCK,
    VALUE_ACTION,
)
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import interactive_body, signed_headers
from tests.slack.office import (
    APPROVALS,
    MANAGER,
    ONCALL,
    SlackOfficeWorkflow,
    WireMoneyTool,
)
from tests.slack.stub import Workspace
from tests.slack.test_oauth_install import Installed, install, installed  # noqa: F401
from tests.slack.test_oauth_tenants import token_of
from tests.slack.workspaces import Team

REFUNDS = "slack-refund-approval-channel"
WIRES = "slack-wire-approval-channel"
TWO_APPROVALS = "C0TWOAPPROVALS"
BOSS = "U0BOSS"  # the approver workspace TWO names
ONCALL_TWO = "U0ONCALLTWO"  # who TWO escalates its wires to
TWO_ESCALATIONS = "C0TWOESCALATIONS"
ADMIN_TWO = "U0ADMINTWO"  # who installed the app in TWO


async def two_workspaces(installed: Installed) -> tuple[Team, Team]:
    await install(installed, "code-1", Workspace(team_id="T0ONE"))
    await install(installed, "code-2", Workspace(team_id="T0TWO", installer=ADMIN_TWO))
    return Team(installed, "T0ONE"), Team(installed, "T0TWO")


def form_values(
    conversation: str,
    users: list[str],
    groups: str = "",
    *,
    escalation: list[str] | None = None,
    asked_again_in: str | None = None,
) -> dict[str, Any]:
    values: dict[str, Any] = {
        CONVERSATION_BLOCK: {
            VALUE_ACTION: {"type": "conversations_select", "selected_conversation": conversation}
        },
        USERS_BLOCK: {VALUE_ACTION: {"type": "multi_users_select", "selected_users": users}},
        GROUPS_BLOCK: {VALUE_ACTION: {"type": "plain_text_input", "value": groups}},
    }
    if escalation is not None:
        values[ESCALATION_USERS_BLOCK] = {
            VALUE_ACTION: {"type": "multi_users_select", "selected_users": escalation}
        }
        values[ESCALATION_CONVERSATION_BLOCK] = {
            VALUE_ACTION: {"type": "conversations_select", "selected_conversation": asked_again_in}
        }
    return values


async def change(
    team: Team, admin: str, values: dict[str, Any], implementation: str = REFUNDS
) -> dict[str, Any]:
    """What an admin does: open the Home, "Change" on ``implementation``, submit the form. The
    view published after (their Home again)."""
    home = await team.open_home(admin)
    change_refunds = next(
        b
        for b in buttons(home["blocks"])
        if b["action_id"] == CHANGE_ACTION and b["value"] == implementation
    )
    stub = team.installed.stub
    opened = len(stub.of("views.open"))
    assert await team.click(admin, CHANGE_ACTION, str(change_refunds["value"]), home=True) == 200
    opening = stub.of("views.open")[opened]
    form = opening.view()
    assert form["callback_id"] == SETTINGS_MODAL
    # a listener's own call, with the token of the workspace it answers
    assert opening.headers["Authorization"] == f"Bearer {token_of(team.installed, team.team)}"
    assert await team.submit(admin, form, values) == 200
    return stub.of("views.publish")[-1].view()


async def test_a_question_of_each_workspace_is_asked_where_it_says_and_answered_by_its_own(
    installed: Installed,
) -> None:
    one, two = await two_workspaces(installed)
    home = await change(two, ADMIN_TWO, form_values(TWO_APPROVALS, [BOSS]))
    assert f"<#{TWO_APPROVALS}>" in all_text(home) and f"<@{BOSS}>" in all_text(home)

    first, asked_one = await one.ask_refund()
    second, asked_two = await two.ask_refund()

    assert asked_one.payload["channel"] == APPROVALS  # the default (.env's)
    assert asked_two.payload["channel"] == TWO_APPROVALS  # TWO's own
    assert await two.click(MANAGER, APPROVE_ACTION, second, channel=TWO_APPROVALS) == 200
    assert await status(installed, second, "T0TWO") is PauseStatus.PENDING  # not TWO's approver
    assert await one.click(BOSS, APPROVE_ACTION, first, channel=APPROVALS) == 200
    assert await status(installed, first, "T0ONE") is PauseStatus.PENDING  # TWO's, not ONE's

    installed.llm.then_return("refund done", "refund done")
    assert await two.click(BOSS, APPROVE_ACTION, second, channel=TWO_APPROVALS) == 200
    assert await one.click(MANAGER, APPROVE_ACTION, first, channel=APPROVALS) == 200
    assert await status(installed, second, "T0TWO") is not PauseStatus.PENDING
    assert await status(installed, first, "T0ONE") is not PauseStatus.PENDING
    assert_sent_valid(installed.stub.calls, {first, second})


async def test_the_modal_a_thread_reply_and_pending_take_the_workspaces_approvers(
    installed: Installed,
) -> None:
    one, two = await two_workspaces(installed)
    await change(two, ADMIN_TWO, form_values(TWO_APPROVALS, [BOSS]))
    first, _ = await one.ask_refund()
    second, _ = await two.ask_refund()
    thread = installed.stub.posted[-1]["ts"]  # the question's

    assert await two.pending(BOSS) == [second]
    assert await two.pending(MANAGER) == []
    assert await one.pending(MANAGER) == [first]
    assert await one.pending(BOSS) == []

    opened = len(installed.stub.of("views.open"))
    assert await two.click(MANAGER, REJECT_ACTION, second, channel=TWO_APPROVALS) == 200
    assert len(installed.stub.of("views.open")) == opened  # refused: no reject modal
    assert await two.click(BOSS, REJECT_ACTION, second, channel=TWO_APPROVALS) == 200
    assert installed.stub.of("views.open")[-1].view()["callback_id"] == REJECT_MODAL

    assert await two.reply(MANAGER, "approve", channel=TWO_APPROVALS, thread_ts=thread) == 200
    assert await status(installed, second, "T0TWO") is PauseStatus.PENDING
    installed.llm.then_return("refund done")
    assert await two.reply(BOSS, "approve", channel=TWO_APPROVALS, thread_ts=thread) == 200
    assert await status(installed, second, "T0TWO") is not PauseStatus.PENDING
    assert_sent_valid(installed.stub.calls, {first, second})


async def test_a_reminder_and_an_escalation_are_said_where_the_workspace_says_to_its_people(
    installed: Installed,
) -> None:
    _, two = await two_workspaces(installed)
    values = form_values(
        TWO_APPROVALS, [BOSS], escalation=[ONCALL_TWO], asked_again_in=TWO_ESCALATIONS
    )
    home = await change(two, ADMIN_TWO, values, implementation=WIRES)
    assert f"<#{TWO_ESCALATIONS}>" in all_text(home)
    installed.llm.then_return(call_tool(WireMoneyTool, {"iban": "DE00", "amount": 5.0}))
    result = await installed.app.execute(
        SlackOfficeWorkflow, WorkflowStartText(text="wire 5"), tenant_id="T0TWO", owner_id="U0OWN"
    )
    assert result.status is ExecutionStatus.PAUSED
    asked = installed.stub.of("chat.postMessage")[-1]
    assert asked.payload["channel"] == TWO_APPROVALS
    wire = str(buttons(asked.blocks())[0]["value"])

    clock = installed.app.clock
    assert isinstance(clock, FakeClock)
    await clock.advance(timedelta(seconds=5))
    await clock.advance(timedelta(hours=1))  # reminded at 1 h, in the question's thread
    await installed.bot.wait_idle()
    reminder = installed.stub.of("chat.postMessage")[-1]
    assert reminder is not asked and reminder.payload["channel"] == TWO_APPROVALS
    assert f"<@{BOSS}>" in str(reminder.payload["text"])
    assert MANAGER not in str(reminder.payload["text"])  # the default's, not TWO's
    assert reminder.headers["Authorization"] == f"Bearer {token_of(installed, 'T0TWO')}"

    for _ in range(3):  # 4 h: escalated, to TWO's on-call, asked again in TWO's channel
        await clock.advance(timedelta(hours=1))
    await installed.bot.wait_idle()
    posts = installed.stub.of("chat.postMessage")
    [copy] = [p for p in posts if p.payload["channel"] == TWO_ESCALATIONS and "blocks" in p.payload]
    assert [b["value"] for b in buttons(copy.blocks())] == [
        b["value"] for b in buttons(asked.blocks())
    ]
    assert any(f"<@{ONCALL_TWO}>" in str(p.payload["text"]) for p in posts)
    assert not any(f"<@{ONCALL}>" in str(p.payload["text"]) for p in posts)  # the code's
    assert await two.click(ONCALL, APPROVE_ACTION, wire, channel=TWO_ESCALATIONS) == 200
    assert await status(installed, wire, "T0TWO") is PauseStatus.PENDING
    installed.llm.then_return("wired")
    assert await two.click(ONCALL_TWO, APPROVE_ACTION, wire, channel=TWO_ESCALATIONS) == 200
    assert await status(installed, wire, "T0TWO") is not PauseStatus.PENDING
    assert_sent_valid(installed.stub.calls, {wire})


async def test_anybody_but_an_admin_sees_the_settings_and_cannot_change_them(
    installed: Installed,
) -> None:
    _, two = await two_workspaces(installed)
    installed.stub.users["U0PLAIN"] = {"is_admin": False, "is_owner": False}

    home = await two.open_home("U0PLAIN")

    assert MAY_NOT_CHANGE in all_text(home) and MAY_CHANGE not in all_text(home)
    assert not [b for b in buttons(home["blocks"]) if b["action_id"] == CHANGE_ACTION]
    assert await two.click("U0PLAIN", CHANGE_ACTION, REFUNDS, home=True) == 200  # forged
    refused = installed.stub.of("views.open")[-1].view()
    assert REFUSED in all_text(refused) and "callback_id" not in refused
    forged = {"callback_id": SETTINGS_MODAL, "private_metadata": REFUNDS}
    before = len(installed.stub.calls)
    response = await two.interaction(
        "U0PLAIN",
        {
            "type": "view_submission",
            "view": forged
            | {"type": "modal", "state": {"values": form_values("C0MINE", ["U0PLAIN"])}},
        },
    )
    assert response == 200
    assert await SqlWorkspaceSettings(installed.app.database).of_tenant("T0TWO") == {}
    assert "views.publish" not in [c.method for c in installed.stub.calls[before:]]
    assert_sent_valid(installed.stub.calls, set())


async def test_an_admin_or_owner_by_slack_may_change_them_and_go_back_to_the_defaults(
    installed: Installed,
) -> None:
    _, two = await two_workspaces(installed)
    installed.stub.users["U0OWNER2"] = {"is_owner": True}

    home = await change(two, "U0OWNER2", form_values(TWO_APPROVALS, [], "S0BOSSES"))
    assert MAY_CHANGE in all_text(home) and "<!subteam^S0BOSSES>" in all_text(home)
    _, asked = await two.ask_refund()
    assert asked.payload["channel"] == TWO_APPROVALS

    assert await two.click("U0OWNER2", RESET_ACTION, REFUNDS, home=True) == 200
    assert await SqlWorkspaceSettings(installed.app.database).of_tenant("T0TWO") == {}
    assert f"<#{APPROVALS}>" in all_text(installed.stub.of("views.publish")[-1].view())
    _, asked = await two.ask_refund()
    assert asked.payload["channel"] == APPROVALS
    assert_sent_valid(installed.stub.calls, set())


async def test_a_mistake_in_the_form_stays_in_it_and_changes_nothing(
    installed: Installed,
) -> None:
    _, two = await two_workspaces(installed)
    form = {"callback_id": SETTINGS_MODAL, "private_metadata": REFUNDS}

    installed.stub.channel_errors["C0NOTIN"] = "not_in_channel"

    for values, block in [
        (form_values(TWO_APPROVALS, [], "finance"), GROUPS_BLOCK),
        (form_values(TWO_APPROVALS, []), USERS_BLOCK),
        (form_values("D0DM", [BOSS]), CONVERSATION_BLOCK),
        (form_values("C0NOTIN", [BOSS]), CONVERSATION_BLOCK),  # the app was not invited there
    ]:
        body = {"view": form | {"type": "modal", "state": {"values": values}}}
        response = await two.installed.http.post("/slack/events", **_signed(two, ADMIN_TWO, body))
        answer = await response.json()
        assert answer["response_action"] == "errors" and block in answer["errors"]
    assert answer["errors"][CONVERSATION_BLOCK] == NOT_A_MEMBER
    assert await SqlWorkspaceSettings(installed.app.database).of_tenant("T0TWO") == {}


async def test_a_new_conversation_is_told_so_with_the_workspaces_token(
    installed: Installed,
) -> None:
    _, two = await two_workspaces(installed)

    await change(two, ADMIN_TWO, form_values(TWO_APPROVALS, [BOSS]))

    [told] = installed.stub.of("chat.postMessage")
    assert told.payload["channel"] == TWO_APPROVALS
    assert "asked here now" in str(told.payload["text"]) and ADMIN_TWO in str(told.payload["text"])
    assert told.headers["Authorization"] == f"Bearer {token_of(installed, 'T0TWO')}"


def _signed(team: Team, user: str, payload: dict[str, Any]) -> dict[str, Any]:
    body = interactive_body(
        {
            "type": "view_submission",
            "team": {"id": team.team},
            "user": {"id": user, "team_id": team.team},
            "api_app_id": "A0APP",
            **payload,
        }
    )
    headers = signed_headers(body) | {"Content-Type": "application/x-www-form-urlencoded"}
    return {"data": body, "headers": headers}


async def status(installed: Installed, pause_id: str, tenant: str) -> PauseStatus:
    found = await installed.app.find_pause(pause_id, tenant_id=tenant)
    assert found is not None
    return found.status


async def test_a_change_while_slack_cannot_say_who_is_an_admin_is_refused_never_a_500(
    installed: Installed,
) -> None:
    """``users.info`` dropped (a connection reset, issue 24): not known to be an admin, refused
    (logged), answered 200 like any refusal; nothing changes."""
    _, two = await two_workspaces(installed)
    installed.stub.users["U0OWNER2"] = {"is_owner": True}
    await installed.stub.fail_all("reset", "users.info")
    try:
        forged = {"callback_id": SETTINGS_MODAL, "private_metadata": REFUNDS}
        response = await two.interaction(
            "U0OWNER2",
            {
                "type": "view_submission",
                "view": forged
                | {"type": "modal", "state": {"values": form_values("C0MINE", ["U0OWNER2"])}},
            },
        )
    finally:
        await installed.stub.restore()
    assert response == 200
    assert "users.info" in installed.stub.failed
    assert await SqlWorkspaceSettings(installed.app.database).of_tenant("T0TWO") == {}
