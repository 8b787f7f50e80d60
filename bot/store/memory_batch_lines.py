"""``BatchLines`` in memory: the same contract as ``SqlBatchLines``
(``tests/store/test_batch_lines_contract.py``)."""

from __future__ import annotations

from datetime import datetime

from bot.store.batch_lines import bounded


class MemoryBatchLines:
    """``BatchLines`` in one process."""

    def __init__(self) -> None:
        self._said: dict[tuple[str, str], str] = {}

    async def keep(self, tenant_id: str, user: str, said: str, *, at: datetime) -> None:
        self._said[(tenant_id, user)] = bounded(said)

    async def last(self, tenant_id: str, user: str) -> str | None:
        return self._said.get((tenant_id, user))
