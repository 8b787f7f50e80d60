"""Pauses that know time: a question nobody answers expires (``PauseResolution.EXPIRED``),
which is never a rejection by a person; ``on_expiry`` says what the waiting step gets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from bot import (
    App,
    AssemblyError,
    ChannelAsk,
    ChannelEscalation,
    ChannelOf,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
    ExecutionStatus,
    NotPausedError,
    OnExpiry,
    PauseAnswerer,
    PauseResolution,
    PauseStatus,
    PauseTiming,
    WorkflowStartText,
    channel,
    channel_role,
    tool,
)
from bot.components.specs import AgentSpec, spec_of
from bot.core.channel import AwaitReply
from bot.testing import FakeClock, ScriptedChatModel, call_tool, mock_llm
from tests.apps import SampleApplication, sample_agent, sample_application
from tests.conftest import NO_SETTINGS

DAY = timedelta(hours=24)


class PayoutInput(BaseModel):
    account: str
    amount: float


class Sent:
    """What the channel was asked and told (a service: one per App)."""

    def __init__(self) -> None:
        self.asks: list[ChannelAsk] = []
        self.withdrawals: list[ChannelWithdrawal] = []
        self.reminders: list[ChannelReminder] = []
        self.escalations: list[ChannelEscalation] = []
        self.runs: list[dict[str, Any]] = []


@dataclass(frozen=True, slots=True, kw_only=True)
class Desk:
    app: App
    clock: FakeClock
    sent: Sent
    sample: SampleApplication
    llm: ScriptedChatModel

    async def ask(self) -> str:
        result = await self.app.execute(
            self.sample.workflow, WorkflowStartText(text="pay"), tenant_id="t", owner_id="U1"
        )
        assert result.status is ExecutionStatus.PAUSED
        return self.sent.asks[-1].pause_id

    async def status(self, pause_id: str) -> tuple[PauseStatus, PauseResolution | None]:
        pause = await self.app.find_pause(pause_id, tenant_id="t")
        assert pause is not None
        return pause.status, pause.resolution


def recording_role(
    name: str, *, approves: type[BaseModel], description: str, timing: PauseTiming | None
) -> tuple[type, type]:
    """A CHANNEL role with ``timing`` (named ``{name}-approval-channel``), and a channel
    implementing it that records what it is told in ``Sent``."""

    @channel_role(
        name=f"{name}-approval-channel",
        description=description,
        approves=approves,
        answered_by=PauseAnswerer.CHANNEL,
        timing=timing,
    )
    class TimedApproval(ChannelOf): ...

    @channel(name=f"{name}-recording-channel", description="Records", deps=[Sent])
    class Recording(TimedApproval):
        def __init__(self, sent: Sent) -> None:
            self.sent = sent

        async def send(self, ask: ChannelAsk) -> AwaitReply:
            self.sent.asks.append(ask)
            return ChannelOutcome.await_reply()

        async def withdraw(self, withdrawal: ChannelWithdrawal) -> None:
            self.sent.withdrawals.append(withdrawal)

        async def remind(self, reminder: ChannelReminder) -> None:
            self.sent.reminders.append(reminder)

        async def escalate(self, escalation: ChannelEscalation) -> None:
            self.sent.escalations.append(escalation)

    return TimedApproval, Recording


def payout_application(
    name: str, *, role_timing: PauseTiming | None, tool_timing: PauseTiming | None = None
) -> SampleApplication:
    PayoutApproval, RecordingPayouts = recording_role(
        name, approves=PayoutInput, description="Approves payouts", timing=role_timing
    )

    @tool(
        name=f"{name}-payout-tool",
        description="Pays out",
        input=PayoutInput,
        channel=PayoutApproval,
        deps=[Sent],
        timing=tool_timing,
    )
    class PayoutTool:
        def __init__(self, sent: Sent) -> None:
            self.sent = sent

        def run(self, input: PayoutInput) -> str:
            self.sent.runs.append(input.model_dump())
            return "paid"

    agent = sample_agent(name, tools=[PayoutTool], description="Pays")
    return sample_application(name, agent=agent, channels=[RecordingPayouts])


@asynccontextmanager
async def open_desk(sample: SampleApplication, tmp_path: Any) -> AsyncIterator[Desk]:
    llm = mock_llm(sample.agent)
    clock = FakeClock()
    sent = Sent()
    async with await App.create(
        sample.application,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'expiry.db'}",
        clock=clock,
        settings=NO_SETTINGS,
        services={Sent: sent},
    ) as app:
        yield Desk(app=app, clock=clock, sent=sent, sample=sample, llm=llm)


def payout_call(desk: Desk) -> None:
    spec = spec_of(desk.sample.agent)
    assert isinstance(spec, AgentSpec)
    [payout_tool] = spec.tools
    desk.llm.then_return(call_tool(payout_tool, {"account": "A-1", "amount": 40.0}), "over")


async def test_a_question_nobody_answers_expires_and_the_model_reads_why(tmp_path: Any) -> None:
    sample = payout_application("expiring", role_timing=PauseTiming(expire_after=DAY))
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        pause_id = await desk.ask()

        await desk.clock.advance(timedelta(hours=23))
        assert await desk.status(pause_id) == (PauseStatus.PENDING, None)
        await desk.clock.advance(timedelta(hours=2))  # the sweep moves the tree

        assert await desk.status(pause_id) == (PauseStatus.CANCELLED, PauseResolution.EXPIRED)
        assert desk.sent.runs == []
        [withdrawal] = desk.sent.withdrawals
        assert withdrawal.resolution is PauseResolution.EXPIRED
        read = [str(m.content) for m in desk.llm.calls[-1].messages if m.type == "tool"]
        assert len(read) == 1 and "nobody approved the call" in read[0]
        result = await desk.app.get_result(
            desk.sent.asks[-1].execution_id, tenant_id="t", record=True
        )
        assert result.status is ExecutionStatus.COMPLETED
        assert result.record is not None
        [entry] = result.record.pauses
        assert entry.resolution is PauseResolution.EXPIRED and entry.responder is None

        with pytest.raises(NotPausedError):
            await desk.app.resume(
                pause_id, decision={"approved": True}, tenant_id="t", answered_by="m"
            )
        assert desk.sent.runs == []


async def test_an_answer_before_the_expiry_wins(tmp_path: Any) -> None:
    sample = payout_application("answered", role_timing=PauseTiming(expire_after=DAY))
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        pause_id = await desk.ask()
        await desk.clock.advance(timedelta(hours=23))

        result = await desk.app.resume(
            pause_id, decision={"approved": True}, tenant_id="t", answered_by="m"
        )
        await desk.clock.advance(timedelta(hours=2))

        assert result.status is ExecutionStatus.COMPLETED
        assert desk.sent.runs == [{"account": "A-1", "amount": 40.0}]
        assert desk.sent.withdrawals == []
        assert (await desk.status(pause_id))[1] is PauseResolution.REPLIED


async def test_on_expiry_fail_fails_the_step_with_pause_expired(tmp_path: Any) -> None:
    timing = PauseTiming(expire_after=timedelta(hours=1), on_expiry=OnExpiry.FAIL)
    sample = payout_application("failing", role_timing=timing)
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        pause_id = await desk.ask()
        await desk.clock.advance(timedelta(hours=2))

        assert await desk.status(pause_id) == (PauseStatus.CANCELLED, PauseResolution.EXPIRED)
        result = await desk.app.get_result(desk.sent.asks[-1].execution_id, tenant_id="t")
        assert result.status is ExecutionStatus.FAILED
        assert desk.sent.runs == []


async def test_a_tool_overrides_its_roles_timing(tmp_path: Any) -> None:
    sample = payout_application(
        "overridden",
        role_timing=PauseTiming(expire_after=DAY),
        tool_timing=PauseTiming(expire_after=timedelta(hours=1)),
    )
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        pause_id = await desk.ask()
        await desk.clock.advance(timedelta(hours=2))

        assert await desk.status(pause_id) == (PauseStatus.CANCELLED, PauseResolution.EXPIRED)


@pytest.mark.parametrize(
    ("timing", "rule"),
    [
        (PauseTiming(remind_after=DAY, expire_after=DAY), "timing.after-expiry"),
        (PauseTiming(escalate_after=2 * DAY, expire_after=DAY), "timing.after-expiry"),
        (PauseTiming(remind_every=DAY), "timing.remind-every"),
        (PauseTiming(expire_after=timedelta(0)), "timing.positive"),
    ],
)
async def test_timing_that_makes_no_sense_is_an_assembly_error(
    tmp_path: Any, timing: PauseTiming, rule: str
) -> None:
    sample = payout_application(f"bad-{rule.replace('.', '-')}", role_timing=timing)
    mock_llm(sample.agent)
    with pytest.raises(AssemblyError) as raised:
        await App.create(
            sample.application,
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'x.db'}",
            settings=NO_SETTINGS,
        )
    assert f"[{rule}]" in str(raised.value)
