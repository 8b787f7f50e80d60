"""Standing grants through the App (issue 28 item 2, the core): given by an approver, used by
the next question they cover (the tool runs once, the audit names the grant and its granter),
never by one they do not (another tool, an amount over the bound, another tenant, another
requester, the granter's own request under separation of duties), revoked and expired on the
FakeClock — then the next question is asked."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from bot import (
    ArgumentConstraint,
    ExecutionStatus,
    GrantRefusedError,
    GrantScope,
    PauseResolution,
    UnknownGrantError,
    WorkflowStartText,
)
from bot.testing import FakeClock, call_tool, mock_llm, test_with
from tests.conftest import NO_SETTINGS
from tests.databases import postgres_database
from tests.langgraph.kit import Refunds
from tests.runtime.test_policies import (
    Desk,
    Limits,
    Told,
    only_entry,
    open_desk,
    refund_application,
)

HOUR = timedelta(hours=1)
ANNS = GrantScope(owner_id="U0ANN")
UP_TO_50 = ArgumentConstraint(at_most={"amount": 50})


async def granting_desk(
    name: str,
    *,
    clock: FakeClock | None = None,
    sod: bool = False,
    database_url: str = "sqlite+aiosqlite:///:memory:",
) -> Desk:
    return await open_desk(
        name,
        clock=clock,
        database_url=database_url,
        role_policy=None,
        grants=("requester", "thread", "agent"),
        separation_of_duties=sod,
    )


def role_and_tool(desk: Desk) -> tuple[type, str]:
    spec = desk.tool.__countersign_spec__  # type: ignore[attr-defined]
    return desk.role, str(spec.name)


async def test_a_grant_decides_the_next_matching_ask_and_the_audit_names_it() -> None:
    desk = await granting_desk("granted")
    async with desk.app:
        role, tool = role_and_tool(desk)
        grant = await desk.app.grant(
            tenant_id="acme",
            role=role,
            tool=tool,
            by="U0MANAGER",
            scope=ANNS,
            constraint=UP_TO_50,
            expires_in=8 * HOUR,
        )
        result = await desk.refund(40, owner_id="U0ANN")
        assert result.status is ExecutionStatus.COMPLETED
        assert desk.refunds.runs == [{"order_id": "7", "amount": 40.0}]  # once
        assert desk.told.asks == []
        entry = only_entry(result)
        assert entry.resolution is PauseResolution.DECIDED
        assert (entry.grant_id, entry.granted_by, entry.policy) == (
            grant.grant_id,
            "U0MANAGER",
            None,
        )
        assert entry.responder == f"grant:{grant.grant_id}:U0MANAGER"
        assert entry.decision is not None and entry.decision["reason"].startswith(
            "allowed by U0MANAGER until "
        )
        [told] = desk.told.decided
        assert told.text.startswith(
            f"approved automatically by grant {grant.grant_id} of U0MANAGER"
        )
        [listed] = await desk.app.list_grants(tenant_id="acme")
        assert listed.uses == 1
        exposition = (await desk.app.metrics.exposition()).decode()
        assert f'countersign_grant_decisions_total{{role="{listed.role}"}} 1.0' in exposition


@pytest.mark.parametrize(
    ("amount", "owner", "tenant"),
    [(60, "U0ANN", "acme"), (40, "U0BOB", "acme"), (40, "U0ANN", "globex")],
    ids=["over-the-bound", "another-requester", "another-tenant"],
)
async def test_a_grant_never_decides_an_ask_it_does_not_cover(
    amount: float, owner: str, tenant: str
) -> None:
    desk = await granting_desk(f"uncovered-{amount}-{owner}-{tenant}".lower())
    async with desk.app:
        role, tool = role_and_tool(desk)
        await desk.app.grant(
            tenant_id="acme",
            role=role,
            tool=tool,
            by="U0MANAGER",
            scope=ANNS,
            constraint=UP_TO_50,
            expires_in=8 * HOUR,
        )
        paused = await desk.refund(amount, owner_id=owner, tenant_id=tenant, asked=True)
        assert paused.status is ExecutionStatus.PAUSED
        assert desk.refunds.runs == [] and len(desk.told.asks) == 1


async def test_a_grant_for_another_tool_or_used_up_decides_nothing() -> None:
    desk = await granting_desk("one-use")
    async with desk.app:
        role, tool = role_and_tool(desk)
        with pytest.raises(GrantRefusedError, match="asks about no tool named 'wire-tool'"):
            await desk.app.grant(
                tenant_id="acme", role=role, tool="wire-tool", by="U0M", scope=ANNS,
                expires_in=HOUR,
            )  # fmt: skip
        await desk.app.grant(
            tenant_id="acme", role=role, tool=tool, by="U0M", scope=ANNS, expires_in=HOUR,
            max_uses=1,
        )  # fmt: skip
        assert (await desk.refund(10, owner_id="U0ANN")).status is ExecutionStatus.COMPLETED
        again = await desk.refund(10, owner_id="U0ANN", asked=True)
        assert again.status is ExecutionStatus.PAUSED  # its one use is spent
        assert len(desk.refunds.runs) == 1
        assert await desk.app.list_grants(tenant_id="acme") == []  # used up: not active
        [spent] = await desk.app.list_grants(tenant_id="acme", include_inactive=True)
        assert spent.uses == 1


async def test_a_revoked_grant_and_an_expired_one_decide_nothing() -> None:
    clock = FakeClock()
    desk = await granting_desk("revoked", clock=clock)
    async with desk.app:
        role, tool = role_and_tool(desk)
        revoked = await desk.app.grant(
            tenant_id="acme", role=role, tool=tool, by="U0M", scope=ANNS, expires_in=8 * HOUR
        )
        back = await desk.app.revoke_grant(revoked.grant_id, tenant_id="acme", by="U0BOSS")
        assert back.revoked_by == "U0BOSS" and not back.is_active(clock.now())
        assert (await desk.refund(10, owner_id="U0ANN", asked=True)).status is (
            ExecutionStatus.PAUSED
        )
        with pytest.raises(UnknownGrantError):
            await desk.app.revoke_grant(revoked.grant_id, tenant_id="globex", by="U0BOSS")

        await desk.app.grant(
            tenant_id="acme", role=role, tool=tool, by="U0M", scope=ANNS, expires_in=HOUR
        )
        assert (await desk.refund(10, owner_id="U0ANN")).status is ExecutionStatus.COMPLETED
        await clock.advance(HOUR)
        assert (await desk.refund(10, owner_id="U0ANN", asked=True)).status is (
            ExecutionStatus.PAUSED
        )
        assert len(desk.refunds.runs) == 1 and len(desk.told.asks) == 2


async def test_a_grant_never_covers_what_its_granter_could_not_approve() -> None:
    desk = await granting_desk("duties", sod=True)
    async with desk.app:
        role, tool = role_and_tool(desk)
        with pytest.raises(GrantRefusedError, match="separates duties"):
            await desk.app.grant(
                tenant_id="acme", role=role, tool=tool, by="U0ANN", scope=ANNS, expires_in=HOUR
            )
        # a grant for an agent covers every requester's calls but the granter's own
        await desk.app.grant(
            tenant_id="acme",
            role=role,
            tool=tool,
            by="U0ANN",
            scope=GrantScope(agent=desk.sample.agent.__countersign_spec__.name),  # type: ignore[attr-defined]
            expires_in=HOUR,
        )
        assert (await desk.refund(10, owner_id="U0BOB")).status is ExecutionStatus.COMPLETED
        own = await desk.refund(10, owner_id="U0ANN", asked=True)
        assert own.status is ExecutionStatus.PAUSED


async def test_a_grant_is_refused_where_the_role_offers_none_or_its_bounds_are_no_bounds() -> None:
    plain = await open_desk("no-grants", role_policy=None)
    async with plain.app:
        role, tool = role_and_tool(plain)
        with pytest.raises(GrantRefusedError, match="offers no grants"):
            await plain.app.grant(
                tenant_id="acme", role=role, tool=tool, by="U0M", scope=ANNS, expires_in=HOUR
            )
    desk = await granting_desk("bounds")
    async with desk.app:
        role, tool = role_and_tool(desk)
        for kwargs, said in (
            ({"scope": GrantScope()}, "name a scope"),
            ({"expires_in": timedelta(0)}, "positive timedelta"),
            ({"max_uses": 0}, "at least 1"),
            ({"constraint": ArgumentConstraint(at_most={"amount": float("inf")})}, "finite"),
        ):
            arguments = {"scope": ANNS, "expires_in": HOUR, **kwargs}
            with pytest.raises(GrantRefusedError, match=said):
                await desk.app.grant(tenant_id="acme", role=role, tool=tool, by="U0M", **arguments)  # type: ignore[arg-type]
        assert await desk.app.list_grants(tenant_id="acme", include_inactive=True) == []


@pytest.mark.postgres
async def test_two_instances_racing_for_a_one_use_grant_on_postgres_auto_approve_once() -> None:
    sample, tool_cls, role = refund_application("racing", role_policy=None, grants=("requester",))
    spec = tool_cls.__countersign_spec__  # type: ignore[attr-defined]
    model = mock_llm(sample.agent)
    told, refunds = Told(), Refunds()
    async with (
        postgres_database() as url,
        test_with(
            sample.application,
            instances=2,
            database_url=url,
            services={Limits: Limits(), Told: told, Refunds: refunds},
        ) as (first, second),
    ):
        await first.grant(
            tenant_id="acme", role=role, tool=spec.name, by="U0M", scope=ANNS,
            expires_in=HOUR, max_uses=1,
        )  # fmt: skip
        # each run asks once: one is approved by the grant (and answers), one waits
        for order in ("1", "2"):
            model.then_return(call_tool(tool_cls, {"order_id": order, "amount": 10}))
        model.then_return("done")
        results = await asyncio.gather(
            *(
                app.execute(
                    sample.workflow,
                    WorkflowStartText(text=f"refund order {order}"),
                    tenant_id="acme",
                    owner_id="U0ANN",
                    record=True,
                )
                for app, order in ((first, "1"), (second, "2"))
            )
        )
        statuses = sorted(r.status.value for r in results)
        assert statuses == ["COMPLETED", "PAUSED"]
        assert len(refunds.runs) == 1 and len(told.asks) == 1
        [spent] = await second.list_grants(tenant_id="acme", include_inactive=True)
        assert spent.uses == 1


async def test_a_grant_revoked_on_one_instance_decides_nothing_on_another(tmp_path: Path) -> None:
    sample, tool_cls, role = refund_application(
        "revoked-elsewhere", role_policy=None, grants=("requester",)
    )
    spec = tool_cls.__countersign_spec__  # type: ignore[attr-defined]
    model = mock_llm(sample.agent)
    told, refunds = Told(), Refunds()
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    async with test_with(
        sample.application,
        instances=2,
        database_url=url,
        settings=NO_SETTINGS,
        services={Limits: Limits(), Told: told, Refunds: refunds},
    ) as (first, second):
        grant = await first.grant(
            tenant_id="acme", role=role, tool=spec.name, by="U0M", scope=ANNS, expires_in=HOUR
        )
        await second.revoke_grant(grant.grant_id, tenant_id="acme", by="U0M")
        model.then_return(call_tool(tool_cls, {"order_id": "1", "amount": 10}))
        asked = await first.execute(
            sample.workflow, WorkflowStartText(text="refund"), tenant_id="acme", owner_id="U0ANN"
        )
        assert asked.status is ExecutionStatus.PAUSED
        assert refunds.runs == [] and len(told.asks) == 1
