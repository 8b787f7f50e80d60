"""Installations of a chat app by OAuth, and the OAuth states of installs under way, on the
App's one ``Database`` (``cs_installations``, ``cs_oauth_states``: v13).

What a channel keeps of an installation (for Slack, slack_sdk's ``Installation`` and ``Bot``
as dicts) is a *document*, written through the payload codec: it holds the workspace's tokens,
sealed at rest by the App's key ring and resealed by ``python -m bot reencrypt`` like every
payload. Only the ids an installation is looked up by are in clear.

One row per (client, enterprise, team, installer); the bot's row of a workspace has the
installer ``""``. Saving again replaces the row (a refreshed token, a reinstall): the latest
wins. An org-wide install (Enterprise Grid) has the team ``""``.

An OAuth state is kept as a keyed hash only, and consumed by deleting it: one use, and a state
older than its lifetime is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, delete, desc, insert, select, update

from bot.store.codec import JsonCodec, PayloadCodec
from bot.store.database import Database
from bot.store.tables import installations, oauth_states
from bot.store.transactions import Transactions

BOT_ROW = ""
"""The installer of a workspace's bot row."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallationKey:
    """Where an installation is: ``team_id`` ``None`` for an org-wide install; ``user_id``
    ``None`` for the workspace's bot (or, to find, any installer: the latest)."""

    client_id: str
    enterprise_id: str | None
    team_id: str | None
    user_id: str | None = None

    def condition(self, *, any_installer: bool = False) -> Any:
        c = installations.c
        clauses = [
            c.client_id == self.client_id,
            c.enterprise_id == (self.enterprise_id or ""),
            c.team_id == (self.team_id or ""),
        ]
        if self.user_id is not None:
            clauses.append(c.user_id == self.user_id)
        elif any_installer:
            clauses.append(c.user_id != BOT_ROW)
        else:
            clauses.append(c.user_id == BOT_ROW)
        return and_(*clauses)


class SqlInstallations:
    """Installations on ``database``; documents written with ``codec``."""

    def __init__(self, database: Database, codec: PayloadCodec | None = None) -> None:
        self._tx: Transactions = database.transactions
        self._codec: PayloadCodec = codec or JsonCodec()

    async def save(self, key: InstallationKey, *, installed_at: datetime, document: Any) -> None:
        """Keep ``document`` as the installation at ``key`` (its bot row when ``user_id`` is
        ``None``), replacing what was there."""
        ids = {
            "client_id": key.client_id,
            "enterprise_id": key.enterprise_id or "",
            "team_id": key.team_id or "",
            "user_id": key.user_id or BOT_ROW,
        }
        values = {"installed_at": installed_at, "document": self._codec.encode(document)}

        def upsert(connection: Connection) -> None:
            where = key.condition()
            changed = connection.execute(update(installations).where(where).values(**values))
            if changed.rowcount == 0:
                connection.execute(insert(installations), {**ids, **values})

        await self._tx.write(upsert)

    async def find(self, key: InstallationKey, *, any_installer: bool = False) -> Any | None:
        """The document at ``key``; with ``any_installer`` and no ``user_id``, the latest
        installer's (not the bot row)."""
        query = (
            select(installations.c.document)
            .where(key.condition(any_installer=any_installer))
            .order_by(desc(installations.c.installed_at))
            .limit(1)
        )
        stored = await self._tx.read(lambda connection: connection.execute(query).scalar())
        return None if stored is None else self._codec.decode(stored)

    async def delete(self, key: InstallationKey, *, every_row: bool = False) -> int:
        """Delete the row at ``key``; with ``every_row`` and no ``user_id``, every row of the
        workspace (bot and installers). How many went."""
        c = installations.c
        where = (
            and_(
                c.client_id == key.client_id,
                c.enterprise_id == (key.enterprise_id or ""),
                c.team_id == (key.team_id or ""),
            )
            if every_row and key.user_id is None
            else key.condition()
        )

        def remove(connection: Connection) -> int:
            return int(connection.execute(delete(installations).where(where)).rowcount)

        return await self._tx.apply(remove)


class SqlOAuthStates:
    """OAuth states on ``database``, by their keyed hash; each consumed at most once."""

    def __init__(self, database: Database) -> None:
        self._tx: Transactions = database.transactions

    async def issue(self, state_key: str, *, issued_at: datetime) -> None:
        values = {"state_key": state_key, "issued_at": issued_at}
        await self._tx.apply(lambda connection: connection.execute(insert(oauth_states), values))

    async def consume(self, state_key: str, *, issued_after: datetime) -> bool:
        """Whether ``state_key`` was issued after ``issued_after`` and not yet consumed; it is
        gone either way (and so is every state older than that)."""
        c = oauth_states.c

        def take(connection: Connection) -> bool:
            fresh = connection.execute(
                delete(oauth_states).where(c.state_key == state_key, c.issued_at > issued_after)
            ).rowcount
            connection.execute(delete(oauth_states).where(c.issued_at <= issued_after))
            return bool(fresh == 1)

        return await self._tx.write(take)
