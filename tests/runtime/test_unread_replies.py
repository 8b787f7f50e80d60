"""A free-text reply kept before the webhook's ack and read after it (``App.answer(...,
keep_model_replies=True)`` → ``ReplyKept``, then ``App.read_kept``): nothing a person sent is
lost if the reading is slow or the process dies. The role reads its replies with a model (the
reply desk's refund, on a scripted "moonshotai/kimi-k2.6"): only such a reading is kept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from bot import (
    AlreadyClosed,
    Answered,
    ExecutionStatus,
    NotUnderstood,
    PauseResolution,
    PauseStatus,
    PauseView,
    Refused,
    ReplyKept,
    ToolCallApprovalDecision,
)
from bot.testing import inspect_app, mock_llm, reply_with
from tests.runtime.reply_desk import DeskApp, RefundReplyInterpreter, open_desk, script_agent

APPROVE = reply_with(ToolCallApprovalDecision, {"approved": True})


@pytest.fixture
async def desk() -> AsyncIterator[DeskApp]:
    script_agent()
    async with open_desk() as desk:
        yield desk


async def _asked(desk: DeskApp) -> str:
    paused = await desk.execute()
    assert paused.status is ExecutionStatus.PAUSED
    return desk.desk.pause_of("refund-card-tool")


async def _kept(desk: DeskApp, pause_id: str, reply: str, by: str = "manager-17") -> ReplyKept:
    outcome = await desk.app.answer(
        pause_id,
        tenant_id="acme",
        by=by,
        reply=reply,
        keep_model_replies=True,
        continue_run=False,
    )
    assert isinstance(outcome, ReplyKept), outcome
    return outcome


async def _unread(desk: DeskApp) -> list[str | None]:
    """The replies kept and never read, as the sweep would find them now."""
    kept = await inspect_app(desk.app).store.unread_replies(desk.clock.now() + timedelta(days=1))
    return [record.unread_reply for record in kept]


async def test_a_kept_reply_read_after_the_ack_answers_the_pause(desk: DeskApp) -> None:
    model = mock_llm(RefundReplyInterpreter).then_return(APPROVE)
    pause_id = await _asked(desk)
    kept = await _kept(desk, pause_id, "yes")
    assert pause_id not in repr(kept.received)
    assert kept.received.answered_by == "manager-17" and kept.received.owner_id is None
    assert await desk.status(pause_id) is PauseStatus.PENDING  # kept, not read yet
    assert model.calls == [] and desk.runs.runs == []

    read = await desk.app.read_kept(kept.received, continue_run=False)
    assert isinstance(read, Answered)
    done = await desk.app.continue_answer(read, record=True)

    assert done.status is ExecutionStatus.COMPLETED
    assert [name for name, _ in desk.runs.runs] == ["refund"]
    assert done.record is not None
    [entry] = done.record.pauses
    assert (entry.resolution, entry.responder) == (PauseResolution.REPLIED, "manager-17")


async def test_a_reply_kept_by_a_process_that_died_is_read_by_the_sweep(desk: DeskApp) -> None:
    mock_llm(RefundReplyInterpreter).then_return(APPROVE)
    pause_id = await _asked(desk)
    await _kept(desk, pause_id, "yes")  # and the process died before reading it
    await desk.clock.advance(timedelta(seconds=30))
    assert await desk.status(pause_id) is PauseStatus.PENDING  # its reader may still work

    await desk.clock.advance(timedelta(seconds=40))  # past the grace: the sweep reads it

    assert await desk.status(pause_id) is PauseStatus.TAKEN
    assert [name for name, _ in desk.runs.runs] == ["refund"]
    assert await _unread(desk) == []  # read once: nothing left for the next sweep
    await desk.clock.advance(timedelta(minutes=5))
    assert [name for name, _ in desk.runs.runs] == ["refund"]


async def test_a_kept_reply_that_cannot_be_read_is_forgotten_and_the_pause_waits(
    desk: DeskApp,
) -> None:
    mock_llm(RefundReplyInterpreter).then_return("I would rather not say")  # no answer tool
    pause_id = await _asked(desk)
    kept = await _kept(desk, pause_id, "maybe later")

    read = await desk.app.read_kept(kept.received)

    assert isinstance(read, NotUnderstood)
    assert read.error.code == "pause.uninterpretable-reply"
    assert await _unread(desk) == []  # forgotten: the sweep finds nothing to read
    await desk.clock.advance(timedelta(minutes=5))
    assert await desk.status(pause_id) is PauseStatus.PENDING
    assert desk.runs.runs == []


async def test_an_answer_given_meanwhile_makes_a_kept_reply_moot(desk: DeskApp) -> None:
    model = mock_llm(RefundReplyInterpreter)
    pause_id = await _asked(desk)
    kept = await _kept(desk, pause_id, "no: too much")
    await desk.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="manager-9"
    )

    read = await desk.app.read_kept(kept.received)

    assert isinstance(read, AlreadyClosed)
    assert read.error.code == "run.not-paused" and read.pause.responder == "manager-9"
    await desk.clock.advance(timedelta(minutes=5))
    assert model.calls == []  # never read: the question had closed
    assert [name for name, _ in desk.runs.runs] == ["refund"]  # once, as approved


async def test_a_reply_is_refused_as_an_answer_would_be_before_it_is_kept(
    desk: DeskApp,
) -> None:
    pause_id = await _asked(desk)

    async def not_on_duty(pause: PauseView) -> str | None:
        return "you are not on duty"

    for refused in (
        await desk.app.answer(
            pause_id, tenant_id="acme", by="  ", reply="yes", keep_model_replies=True
        ),
        await desk.app.answer(
            pause_id,
            tenant_id="acme",
            by="intern",
            reply="yes",
            keep_model_replies=True,
            may_answer=not_on_duty,
        ),
    ):
        assert isinstance(refused, Refused), refused
        assert refused.code == "pause.wrong-answerer"
    assert await _unread(desk) == []
    await desk.app.resume(pause_id, decision={"approved": False}, tenant_id="acme", answered_by="m")

    late = await desk.app.answer(
        pause_id, tenant_id="acme", by="m", reply="yes", keep_model_replies=True
    )

    assert isinstance(late, AlreadyClosed)
    assert await _unread(desk) == []
