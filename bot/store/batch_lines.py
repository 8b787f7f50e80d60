"""What a person's last batch did, one line per question ("Your last batch" on Slack's App
Home), kept per tenant and person so that it survives a restart and is the same on every
instance: ``cs_batch_lines`` (v20), one row each, replaced by their next batch.

The lines quote the questions' titles (which may show arguments), so they are sealed like every
payload (the App's codec; ``python -m bot reencrypt`` reseals them), and kept bounded
(``MAX_SAID``): a batch of many questions keeps its first lines.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final, Protocol

from sqlalchemy import Connection, and_, insert, select, update
from sqlalchemy.exc import IntegrityError

from bot.store.codec import JsonCodec, PayloadCodec
from bot.store.database import Database
from bot.store.tables import batch_lines
from bot.store.transactions import Transactions

MAX_SAID: Final = 6000
"""The most characters kept of one person's lines (a Home shows fewer: Slack's 3,000 a text)."""
CUT: Final = "…"


def bounded(said: str) -> str:
    """``said`` cut to ``MAX_SAID`` characters, at a line's end where it can be."""
    if len(said) <= MAX_SAID:
        return said
    head = said[: MAX_SAID - len(CUT)]
    whole_lines = head.rpartition("\n")[0]
    return f"{whole_lines or head}\n{CUT}" if whole_lines else f"{head}{CUT}"


class BatchLines(Protocol):
    """The lines of each person's last batch."""

    async def keep(self, tenant_id: str, user: str, said: str, *, at: datetime) -> None:
        """Keep ``said`` as ``user``'s last batch in ``tenant_id`` (bounded), replacing the one
        before."""
        ...

    async def last(self, tenant_id: str, user: str) -> str | None:
        """The lines of ``user``'s last batch, or None."""
        ...


class SqlBatchLines:
    """``BatchLines`` on ``database``; the lines written with ``codec`` (sealed at rest)."""

    def __init__(self, database: Database, codec: PayloadCodec | None = None) -> None:
        self._tx: Transactions = database.transactions
        self._codec: PayloadCodec = codec or JsonCodec()

    async def keep(self, tenant_id: str, user: str, said: str, *, at: datetime) -> None:
        sealed = self._codec.encode({"said": bounded(said)})
        mine = and_(batch_lines.c.tenant_id == tenant_id, batch_lines.c.user_id == user)
        replace = update(batch_lines).where(mine).values(said=sealed, kept_at=at)
        add = insert(batch_lines).values(tenant_id=tenant_id, user_id=user, said=sealed, kept_at=at)

        def body(connection: Connection) -> None:
            if connection.execute(replace).rowcount == 0:
                connection.execute(add)

        try:
            await self._tx.write(body)
        except IntegrityError:  # another instance added theirs first: replace it
            await self._tx.write(lambda connection: connection.execute(replace))

    async def last(self, tenant_id: str, user: str) -> str | None:
        statement = select(batch_lines.c.said).where(
            and_(batch_lines.c.tenant_id == tenant_id, batch_lines.c.user_id == user)
        )
        text = await self._tx.read(lambda connection: connection.execute(statement).scalar())
        if text is None:
            return None
        said = self._codec.decode(text).get("said")
        return said if isinstance(said, str) else None
