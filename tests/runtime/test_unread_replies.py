"""A free-text reply kept before the webhook's ack and read after it (``receive_reply`` /
``read_reply``): nothing a person sent is lost if the reading is slow or the process dies."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot import (
    ExecutionStatus,
    NotPausedError,
    PauseAnswererError,
    PauseResolution,
    PauseStatus,
    UninterpretableReplyError,
)
from tests.conftest import MakeOffice, Office
from tests.runtime.helpers import run, script_refund


async def _asked(make_office: MakeOffice) -> tuple[Office, str]:
    script_refund()
    office = await make_office()
    await run(office)
    return office, office.inbox.last("refund-card-tool").pause_id


async def _status(office: Office, pause_id: str) -> PauseStatus:
    view = await office.app.find_pause(pause_id, tenant_id="acme")
    assert view is not None
    return view.status


async def test_a_kept_reply_read_after_the_ack_answers_the_pause(make_office: MakeOffice) -> None:
    office, pause_id = await _asked(make_office)
    received = await office.app.receive_reply(
        pause_id, tenant_id="acme", reply="yes", answered_by="manager-17"
    )
    assert pause_id not in repr(received)
    assert await _status(office, pause_id) is PauseStatus.PENDING  # kept, not read yet
    assert office.ledger.runs == []

    recorded = await office.app.read_reply(received)
    done = await office.app.continue_answer(recorded, record=True)

    assert done.status is ExecutionStatus.COMPLETED
    assert [name for name, _ in office.ledger.runs] == ["refund"]
    assert done.record is not None
    [entry] = done.record.pauses
    assert (entry.resolution, entry.responder) == (PauseResolution.REPLIED, "manager-17")


async def test_a_reply_kept_by_a_process_that_died_is_read_by_the_sweep(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await _asked(make_office)
    await office.app.receive_reply(
        pause_id, tenant_id="acme", reply="yes", answered_by="manager-17"
    )  # and the process died before reading it
    await office.clock.advance(timedelta(seconds=30))
    assert await _status(office, pause_id) is PauseStatus.PENDING  # its reader may still work

    await office.clock.advance(timedelta(seconds=40))  # past the grace: the sweep reads it

    assert await _status(office, pause_id) is PauseStatus.TAKEN
    assert [name for name, _ in office.ledger.runs] == ["refund"]
    assert await office.app.read_unread() == 0  # read once


async def test_a_kept_reply_that_cannot_be_read_is_forgotten_and_the_pause_waits(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await _asked(make_office)
    received = await office.app.receive_reply(
        pause_id, tenant_id="acme", reply="maybe later", answered_by="manager-17"
    )
    with pytest.raises(UninterpretableReplyError):
        await office.app.read_reply(received)
    await office.clock.advance(timedelta(minutes=5))  # the sweep finds nothing to read
    assert await _status(office, pause_id) is PauseStatus.PENDING
    assert office.ledger.runs == []


async def test_an_answer_given_meanwhile_makes_a_kept_reply_moot(make_office: MakeOffice) -> None:
    office, pause_id = await _asked(make_office)
    received = await office.app.receive_reply(
        pause_id, tenant_id="acme", reply="no: too much", answered_by="manager-17"
    )
    await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="manager-9"
    )
    with pytest.raises(NotPausedError):
        await office.app.read_reply(received)
    await office.clock.advance(timedelta(minutes=5))
    assert [name for name, _ in office.ledger.runs] == ["refund"]  # once, as approved


async def test_a_reply_is_refused_as_an_answer_would_be_before_it_is_kept(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await _asked(make_office)
    with pytest.raises(PauseAnswererError):
        await office.app.receive_reply(pause_id, tenant_id="acme", reply="yes", owner_id="U1")
    await office.app.resume(
        pause_id, decision={"approved": False}, tenant_id="acme", answered_by="m"
    )
    with pytest.raises(NotPausedError):
        await office.app.receive_reply(pause_id, tenant_id="acme", reply="yes", answered_by="m")
