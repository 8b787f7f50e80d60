"""Per-workspace settings on the App's one ``Database`` (``cs_workspace_settings``: v15).

A chat app installed in several workspaces asks each one's questions where that workspace
says, of the people it names (and once escalated, of whom and where it says): one row per
(tenant, implementation), written by a workspace admin, read over the defaults the code gives
(``slack_channel(conversation=, approvers=, escalate_to=)``, from ``.env``). A field left
``None`` keeps the default. Only ids are kept, in clear.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, RowMapping, delete, insert, select, update

from bot.store.database import Database
from bot.store.tables import workspace_settings
from bot.store.transactions import Transactions


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkspaceSetting:
    """What one workspace set for one implementation (a role's channel)."""

    tenant_id: str
    implementation: str
    """The implementation's name (``slack_channel(name=...)``, a pause's ``channel``)."""
    conversation: str | None = None
    """Where its questions are asked in this workspace; ``None``: the default."""
    approvers: tuple[str, ...] | None = None
    """Who answers them in this workspace; ``None``: the default."""
    escalate_to: tuple[str, ...] | None = None
    """Who may answer too once a question is escalated; ``None``: the default."""
    escalation_conversation: str | None = None
    """Where an escalated question is asked again; ``None``: the default."""
    updated_by: str
    """The admin who set it (a user id)."""
    updated_at: datetime


class SqlWorkspaceSettings:
    """Per-workspace settings on ``database``."""

    def __init__(self, database: Database) -> None:
        self._tx: Transactions = database.transactions

    async def save(self, setting: WorkspaceSetting) -> None:
        """Keep ``setting``, replacing what its workspace set for its implementation."""
        c = workspace_settings.c
        where = (c.tenant_id == setting.tenant_id) & (c.implementation == setting.implementation)
        values = {
            "conversation": setting.conversation,
            "approvers": None if setting.approvers is None else list(setting.approvers),
            "escalate_to": None if setting.escalate_to is None else list(setting.escalate_to),
            "escalation_conversation": setting.escalation_conversation,
            "updated_by": setting.updated_by,
            "updated_at": setting.updated_at,
        }
        ids = {"tenant_id": setting.tenant_id, "implementation": setting.implementation}

        def upsert(connection: Connection) -> None:
            changed = connection.execute(update(workspace_settings).where(where).values(**values))
            if changed.rowcount == 0:
                connection.execute(insert(workspace_settings), {**ids, **values})

        await self._tx.write(upsert)

    async def of_tenant(self, tenant_id: str) -> dict[str, WorkspaceSetting]:
        """What ``tenant_id``'s workspace set, by implementation (one read)."""
        query = select(workspace_settings).where(workspace_settings.c.tenant_id == tenant_id)

        def rows(connection: Connection) -> Sequence[RowMapping]:
            return connection.execute(query).mappings().all()

        found = [_setting(row) for row in await self._tx.read(rows)]
        return {s.implementation: s for s in found}

    async def clear(self, tenant_id: str, implementation: str) -> bool:
        """Back to the defaults for ``implementation`` in ``tenant_id``; whether a row went."""
        c = workspace_settings.c
        where = (c.tenant_id == tenant_id) & (c.implementation == implementation)

        def remove(connection: Connection) -> bool:
            return bool(connection.execute(delete(workspace_settings).where(where)).rowcount)

        return await self._tx.write(remove)


def _setting(row: RowMapping) -> WorkspaceSetting:
    return WorkspaceSetting(
        tenant_id=row["tenant_id"],
        implementation=row["implementation"],
        conversation=row["conversation"],
        approvers=_ids(row["approvers"]),
        escalate_to=_ids(row["escalate_to"]),
        escalation_conversation=row["escalation_conversation"],
        updated_by=row["updated_by"],
        updated_at=row["updated_at"],
    )


def _ids(stored: object) -> tuple[str, ...] | None:
    return None if not isinstance(stored, list) else tuple(i for i in stored if isinstance(i, str))
