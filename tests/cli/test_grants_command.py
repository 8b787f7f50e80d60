"""``python -m bot grants list | revoke`` as a person runs it (a process, on the bot's database
and keys): one line per grant, never a pause id; a revoked grant covers nothing from the next
question on — here an App opened again on the same database asks."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from bot import ArgumentConstraint, ExecutionStatus, GrantScope, PauseStatus
from bot.testing import inspect_app
from tests.cli.processes import person_env, python_m_bot
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.runtime.test_grants import UP_TO_50, granting_desk, role_and_tool
from tests.runtime.test_policies import open_desk


async def test_grants_are_listed_one_a_line_and_a_revoked_one_decides_nothing(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    desk = await granting_desk("cli-grants", database_url=url)
    async with desk.app:
        role, tool = role_and_tool(desk)
        granted = await desk.app.grant(
            tenant_id="acme",
            role=role,
            tool=tool,
            by="U0MANAGER",
            scope=GrantScope(owner_id="U0ANN"),
            constraint=UP_TO_50,
            expires_in=timedelta(hours=8),
        )
        await desk.app.grant(
            tenant_id="globex",
            role=role,
            tool=tool,
            by="U0OTHER",
            scope=GrantScope(owner_id="U0ZED"),
            expires_in=timedelta(hours=1),
        )
        done = await desk.refund(20, owner_id="U0ANN")
        assert done.status is ExecutionStatus.COMPLETED
        decided = await inspect_app(desk.app).store.list_by_root(
            done.execution_id, list(PauseStatus)
        )
        pause_ids = {record.pause_id for record in decided}
        assert len(pause_ids) == 1
    env = person_env(COUNTERSIGN_ENCRYPTION_KEYS=TEST_ENCRYPTION_KEYS, DATABASE_URL=url)

    listed = python_m_bot("grants", "list", cwd=tmp_path, env=env)
    assert listed.code == 0, listed.err
    lines = listed.out.splitlines()
    assert len(lines) == 2
    ours = next(line for line in lines if line.startswith(granted.grant_id))
    assert "active" in ours and "tenant=acme" in ours and "by=U0MANAGER" in ours
    assert "requester=U0ANN" in ours and "amount ≤ 50.00" in ours and "uses=1/∞" in ours
    assert all(pause_id and pause_id not in listed.out for pause_id in pause_ids)
    only_acme = python_m_bot("grants", "list", "--tenant", "acme", cwd=tmp_path, env=env)
    assert only_acme.out.splitlines() == [ours]

    revoked = python_m_bot(
        "grants", "revoke", granted.grant_id, "--tenant", "acme", "--by", "U0BOSS",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert revoked.code == 0, revoked.err
    assert revoked.out.startswith(f"revoked: {granted.grant_id}  revoked  tenant=acme")
    unknown = python_m_bot("grants", "revoke", "g-nope", "--tenant", "acme", cwd=tmp_path, env=env)
    assert (unknown.code, unknown.err.strip()) == (1, "no grant g-nope is known for tenant acme")
    after = python_m_bot("grants", "list", "--tenant", "acme", cwd=tmp_path, env=env)
    assert after.out == "" and after.err.strip() == "no active grants"
    every = python_m_bot("grants", "list", "--all", "--tenant", "acme", cwd=tmp_path, env=env)
    assert "  revoked  " in every.out

    again = await open_desk("cli-grants", database_url=url, role_policy=None, grants=("requester",))
    async with again.app:
        asked = await again.refund(20, owner_id="U0ANN", asked=True)
        assert asked.status is ExecutionStatus.PAUSED  # revoked: the next ask is asked


async def test_a_grant_s_constraint_is_sealed_at_rest(tmp_path: Path) -> None:
    from tests.security.office_run import stored_values

    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    desk = await granting_desk("sealed-grants", database_url=url)
    async with desk.app:
        role, tool = role_and_tool(desk)
        await desk.app.grant(
            tenant_id="acme",
            role=role,
            tool=tool,
            by="U0MANAGER",
            scope=GrantScope(owner_id="U0ANN"),
            constraint=ArgumentConstraint(equals={"email": "carol.secret@example.com"}),
            expires_in=timedelta(hours=1),
        )
        [listed] = await desk.app.list_grants(tenant_id="acme")
        assert listed.constraint.equals == {"email": "carol.secret@example.com"}
    values = await stored_values(url)
    assert any(table == "cs_grants" for table, _ in values)
    assert not [table for table, value in values if b"carol.secret" in value]
