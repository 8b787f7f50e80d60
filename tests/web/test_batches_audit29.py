"""The inbox's batch over two-approval wires (issue 29 audit): the requester, an approver of
the role too, is not offered their own wires (four eyes refuse them: as Slack's /pending,
``channels.kit.waiting``), so their inbox has nothing to pick; another approver's selection
counts one approval per wire, a second approver's runs each wire once, and the same post
retried runs nothing twice."""

from __future__ import annotations

from pathlib import Path

from bot.testing import call_tool
from channels.web.render_batches import BATCH_PATH
from tests.four_eyes import WireTool
from tests.web.conftest import open_web_world
from tests.web.office import ALICE, BOB, OWNER, TENANT
from tests.web.test_batches import _batch_csrf, _inbox, _lines, _picks
from tests.web.test_four_eyes import FOUR_EYES, FourEyesAgent

WIRES = [{"account": "DE-1", "amount": 25000.0}, {"account": "DE-2", "amount": 26000.0}]


async def test_a_two_approval_batch_never_counts_the_requester_and_runs_each_wire_once(
    tmp_path: Path,
) -> None:
    application = (FOUR_EYES.application, FourEyesAgent, FOUR_EYES.workflow)
    async with open_web_world(tmp_path, application) as world:
        await world.ask([call_tool(WireTool, w) for w in WIRES], "wired", owner=OWNER)
        alices = await _inbox(world.http, world, ALICE)
        picks = _picks(alices)
        assert len(picks) == 2 and "DE-1" in alices and "DE-2" in alices

        async with world.client() as olga:  # the requester, an approver of the role too
            own = await _inbox(olga, world, OWNER)
            assert _picks(own) == {} and "DE-1" not in own and "DE-2" not in own

        form = {"csrf": _batch_csrf(alices), "action": "approve", "reason": "", **picks}
        response = await world.http.post(BATCH_PATH, data=form, allow_redirects=False)
        assert response.status == 200
        pending = await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
        assert len(pending) == 2
        for pause in pending:
            assert pause.pause_id is not None
            found = await world.app.find_pause(pause.pause_id, tenant_id=TENANT)
            assert found is not None and [a.by for a in found.approvals] == [ALICE]
        assert world.ledger.runs == []

        async with world.client() as bob:
            bobs = await _inbox(bob, world, BOB)
            form = {"csrf": _batch_csrf(bobs), "action": "approve", "reason": "", **_picks(bobs)}
            response = await bob.post(BATCH_PATH, data=form, allow_redirects=False)
            assert response.status == 200
            assert len(_lines(await response.text())) == 2
            again = await bob.post(BATCH_PATH, data=form, allow_redirects=False)  # retried
            assert again.status == 200
        assert sorted(args["account"] for _, args in world.ledger.runs) == ["DE-1", "DE-2"]
