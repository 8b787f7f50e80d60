"""A delegation's web notice (``NoticeKind.DELEGATION``) is never lost in a crash: a process
that dies between taking the telling of a delegation's start or end and giving the notice to the
notifier leaves it owed, and the sweep tells it once the taker's hold lapsed, once."""

from __future__ import annotations

from typing import Any

import pytest

import channels.web.delegations as web_delegations
from bot.runtime.handovers import TELLING_HOLD
from bot.runtime.sweeps import SWEEP_INTERVAL
from channels.kit.question import when
from channels.kit.texts import delegation_ended, delegation_started
from channels.web.notify import notify_each
from tests.web.conftest import WebWorld
from tests.web.office import ALICE, BOB, TENANT
from tests.web.test_inbox_delegations import DAY, _delegation_notices, handing

__all__ = ["handing"]


class Died(BaseException):
    """The process dies here: nothing after this line of the telling runs."""


def _dies_once(monkeypatch: pytest.MonkeyPatch) -> None:
    async def dying(*args: Any, **kwargs: Any) -> int:
        monkeypatch.setattr(web_delegations, "notify_each", notify_each)
        raise Died()

    monkeypatch.setattr(web_delegations, "notify_each", dying)


async def _sweep_after_the_hold(world: WebWorld) -> None:
    await world.clock.advance(TELLING_HOLD + SWEEP_INTERVAL)
    await world.clock.advance(SWEEP_INTERVAL)  # a second sweep says nothing more


async def test_a_web_delegation_notice_whose_teller_died_is_told_by_the_sweep_once(
    handing: WebWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = handing
    _dies_once(monkeypatch)
    with pytest.raises(Died):
        await world.app.delegate(tenant_id=TENANT, delegator=BOB, delegate=ALICE, ends_in=DAY)
    assert _delegation_notices(world) == []

    await _sweep_after_the_hold(world)
    [made] = await world.app.list_delegations(tenant_id=TENANT)
    started = (ALICE, delegation_started(BOB, "refund-approval-channel", when(made.ends_at)))
    assert _delegation_notices(world) == [started]

    _dies_once(monkeypatch)
    with pytest.raises(Died):
        await world.app.end_delegation(made.delegation_id, tenant_id=TENANT, by=BOB)
    assert _delegation_notices(world) == [started]

    await _sweep_after_the_hold(world)
    assert _delegation_notices(world) == [started, (ALICE, delegation_ended(BOB))]
