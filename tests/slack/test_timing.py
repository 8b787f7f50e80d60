"""Time on a question in Slack: the message says when it expires, a reminder is a reply in its
thread mentioning the approvers, an escalation asks it again in the escalation conversation
(same buttons, same pause) and lets the on-call answer; every copy shows the outcome."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from bot import AssemblyError, ExecutionStatus, PauseStatus, SetupError
from bot.runtime.assembly import assemble
from bot.testing import call_tool
from channels.kit.texts import NOT_ESCALATED_YET
from channels.slack import slack_channel
from channels.slack.render import APPROVE_ACTION
from tests.apps import sample_agent, sample_application
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import (
    APPROVALS,
    ESCALATIONS,
    FINANCE,
    MANAGER,
    ONCALL,
    ExpenseApprovalChannel,
    HourlyWireMoneyTool,
    RefundApprovalChannel,
    RefundCardTool,
    SlackOfficeApplication,
    WireMoneyTool,
)
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund
from tests.slack.test_lists import approve_values, home_opened, pending_of

HOUR = timedelta(hours=1)


async def _ask_a_wire(world: SlackWorld, *, final: str | None = "wired") -> str:
    world.llm.then_return(call_tool(WireMoneyTool, {"iban": "DE00", "amount": 5.0}))
    if final is not None:
        world.llm.then_return(final)
    result = await world.execute("wire 5")
    assert result.status is ExecutionStatus.PAUSED
    [posted] = world.stub.of("chat.postMessage")
    await world.clock.advance(timedelta(seconds=5))  # just after a sweep's tick from now on
    return str(buttons(posted.blocks())[0]["value"])


async def _hours(world: SlackWorld, hours: int) -> None:
    for _ in range(hours):
        await world.clock.advance(HOUR)
    await world.settle()


async def test_reminders_in_the_thread_and_an_escalated_copy_both_updated(
    world: SlackWorld,
) -> None:
    pause_id = await _ask_a_wire(world)
    [question] = world.stub.of("chat.postMessage")
    [asked] = await world.bot.messages.copies(pause_id)
    assert question.payload["channel"] == APPROVALS
    assert "Expires <!date^" in all_text(question.blocks())

    await world.click(ONCALL, APPROVE_ACTION, pause_id)  # not escalated yet: refused
    await world.settle()
    [refused] = world.stub.of("chat.postEphemeral")
    assert refused.payload["text"] == NOT_ESCALATED_YET  # as the web says it

    await _hours(world, 3)  # reminded at 1 h and 3 h, in the question's thread
    reminders = world.stub.of("chat.postMessage")[1:]
    assert len(reminders) == 2
    for reminder in reminders:
        assert reminder.payload["channel"] == APPROVALS
        assert reminder.payload["thread_ts"] == asked.ts
        text = str(reminder.payload["text"])
        assert f"<@{MANAGER}>" in text and f"<!subteam^{FINANCE}>" in text

    await _hours(world, 1)  # 4 h: escalated, asked again in ESCALATIONS
    note, copy = world.stub.of("chat.postMessage")[3:]
    assert note.payload["thread_ts"] == asked.ts
    assert f"<@{ONCALL}>" in str(note.payload["text"])
    assert copy.payload["channel"] == ESCALATIONS and "thread_ts" not in copy.payload
    assert [b["value"] for b in buttons(copy.blocks())] == [
        b["value"] for b in buttons(question.blocks())
    ]
    [_, copied] = await world.bot.messages.copies(pause_id)
    assert copied.escalated_copy and copied.channel_id == ESCALATIONS

    await world.click(ONCALL, APPROVE_ACTION, pause_id)  # escalated: the on-call may answer
    await world.settle()

    assert [name for name, _ in world.ledger.runs] == ["wire"]
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.TAKEN
    updates = world.stub.of("chat.update")
    assert {(u.payload["channel"], u.payload["ts"]) for u in updates} == {
        (APPROVALS, asked.ts),
        (ESCALATIONS, copied.ts),
    }
    assert all(
        buttons(u.blocks()) == [] and f"<@{ONCALL}>" in all_text(u.blocks()) for u in updates
    )

    await _hours(world, 4)  # answered: no more reminders
    assert len(world.stub.of("chat.postMessage")) == 5
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_reminder_due_with_the_escalation_is_sent_and_mentions_the_on_call_after(
    world: SlackWorld,
) -> None:
    """Reminded every hour, escalated at 3 h: the 3 h reminder is posted (mentioning the
    approvers, before the escalation mentions the on-call), and each reminder after the
    escalation mentions the on-call too, who may answer it from then on."""
    world.llm.then_return(call_tool(HourlyWireMoneyTool, {"iban": "DE00", "amount": 5.0}))
    result = await world.execute("wire 5")
    assert result.status is ExecutionStatus.PAUSED
    [posted] = world.stub.of("chat.postMessage")
    pause_id = str(buttons(posted.blocks())[0]["value"])
    [asked] = await world.bot.messages.copies(pause_id)
    await world.clock.advance(timedelta(seconds=5))  # just after a sweep's tick from now on

    def said_since(seen: int) -> list[tuple[str, str]]:
        """The posts after the first ``seen``: (where, what kind and whom it mentions)."""
        return [
            (str(p.payload["channel"]), _nudge_of(str(p.payload["text"])))
            for p in world.stub.of("chat.postMessage")[seen:]
        ]

    approvers = f"<@{MANAGER}> <!subteam^{FINANCE}>"
    hours: list[list[tuple[str, str]]] = []
    for _ in range(5):
        seen = len(world.stub.of("chat.postMessage"))
        await _hours(world, 1)
        hours.append(said_since(seen))
    assert hours == [
        [(APPROVALS, f"reminder: {approvers}")],
        [(APPROVALS, f"reminder: {approvers}")],
        [
            (APPROVALS, f"reminder: {approvers}"),  # first: the approvers' own reminder
            (APPROVALS, f"escalation: <@{ONCALL}>"),
            (ESCALATIONS, "the question"),
        ],
        [(APPROVALS, f"reminder: {approvers} <@{ONCALL}>")],
        [(APPROVALS, f"reminder: {approvers} <@{ONCALL}>")],
    ]
    reminders = [p for p in world.stub.of("chat.postMessage") if ":bell:" in p.payload["text"]]
    assert all(r.payload["thread_ts"] == asked.ts for r in reminders)
    assert "(reminder 5)" in str(reminders[-1].payload["text"])
    assert_sent_valid(world.stub.calls, {pause_id})


def _nudge_of(text: str) -> str:
    """What a post is: a reminder or an escalation note and whom it mentions, or the question."""
    mentions = " ".join(re.findall(r"<@[A-Z0-9]+>|<!subteam\^[A-Z0-9]+>", text))
    if text.startswith(":bell:"):
        return f"reminder: {mentions}"
    if text.startswith(":rotating_light:"):
        return f"escalation: {mentions}"
    return "the question"


async def test_an_expired_question_loses_its_buttons_everywhere(world: SlackWorld) -> None:
    pause_id = await _ask_a_wire(world)
    await _hours(world, 25)

    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.CANCELLED
    updates = world.stub.of("chat.update")
    assert {u.payload["channel"] for u in updates} == {APPROVALS, ESCALATIONS}
    assert all(buttons(u.blocks()) == [] for u in updates)
    assert all("nobody answered in time" in all_text(u.blocks()) for u in updates)
    assert len(world.stub.of("chat.postMessage")) == 2 + 12 + 1  # + reminders, escalation note
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_pending_shows_the_time_left_and_what_expires_first_on_top(
    world: SlackWorld,
) -> None:
    wire = await _ask_a_wire(world, final=None)
    await world.clock.advance(2 * HOUR)
    refund = await ask_refund(world, final=None)  # newer, but it never expires

    sent = await pending_of(world, MANAGER)

    assert approve_values(sent["blocks"]) == [wire, refund]
    assert ":hourglass: 21 h 59 min left" in all_text(sent["blocks"])

    await home_opened(world, MANAGER)
    home = world.stub.of("views.publish")[-1].view()["blocks"]
    assert approve_values(home) == [wire, refund]
    assert ":hourglass: 21 h 59 min left" in all_text(home)


async def test_the_on_call_sees_a_wire_in_pending_once_it_is_escalated(
    world: SlackWorld,
) -> None:
    wire = await _ask_a_wire(world)
    assert approve_values((await pending_of(world, ONCALL))["blocks"]) == []

    await _hours(world, 4)

    assert approve_values((await pending_of(world, ONCALL))["blocks"]) == [wire]


def test_escalate_to_is_checked_like_approvers() -> None:
    with pytest.raises(SetupError, match="one conversation id"):
        slack_channel(
            RefundApprovalChannel,
            name="a-channel",
            conversation="C1234",
            approvers=["U123"],
            escalate_to=["bob"],
        )
    with pytest.raises(SetupError, match="one conversation at most"):
        slack_channel(
            RefundApprovalChannel,
            name="a-channel",
            conversation="C1234",
            approvers=["U123"],
            escalate_to=["C1111", "C2222"],
        )
    with pytest.raises(SetupError, match="leave escalate_to out"):
        slack_channel(
            ExpenseApprovalChannel, name="b-channel", conversation="C1234", escalate_to=["U9"]
        )


def _assembly_rules(application: type) -> list[tuple[str, str, str]]:
    """The violations assembling ``application`` finds (its agents' models are unserved here;
    that rule is left out)."""
    try:
        assemble(application)
    except AssemblyError as error:
        return [
            (v.rule, v.component, v.message) for v in error.violations if v.rule != "model.unserved"
        ]
    return []


def test_escalate_to_with_nothing_that_escalates_is_an_assembly_error() -> None:
    """``escalate_to`` on a role whose timing (and whose tools') has no ``escalate_after``
    would never be used: refused at assembly, naming the channel and the rule."""
    never_escalates = slack_channel(
        RefundApprovalChannel,
        name="never-escalates-channel",
        conversation=APPROVALS,
        approvers=[MANAGER],
        escalate_to=[ONCALL],
    )
    sample = sample_application(
        "never-escalates",
        agent=sample_agent("never-escalates", tools=[RefundCardTool], description="Refunds"),
        channels=[never_escalates],
    )
    [(rule, component, message)] = _assembly_rules(sample.application)
    assert (rule, component) == ("timing.escalation-unused", "never-escalates-channel")
    assert "escalate_after" in message
    assert _assembly_rules(SlackOfficeApplication) == []  # the wire role escalates
