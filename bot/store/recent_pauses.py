"""The waiting pauses a process last wrote, kept so that an answer to one needs no read first.

A pass's rest (``SqlStore.rest`` on PostgreSQL) writes every pause it asked and returns each
row as the write left it, with the row's version (``PauseRecord.row_version``: its ``xmin``).
The answer that usually follows — an Approve click on the instance that asked — would read the
same row back before it checks and records anything (issue 32: one round trip of the eight a
pause cycle makes). Here it finds the row instead, once (taken, not copied); the write that
records the answer (``SqlStore.close_opening`` given it as ``known``) then closes the pause only
if the row's version is still that one, in the same statement, and raises
``ChangedSinceRead`` otherwise, having written nothing: the answer is then checked again
against a row read from the database (``bot.runtime.answers``). So a record kept here never
decides anything the row no longer says: a nudge, a handover, an approval, an answer given on
another instance, any write of the row, moves its version.

Bounded (``LIMIT`` records, the oldest dropped first) and short-lived (``MAX_AGE``): a question
answered later than that, or on another instance, is read as before. A version is the 32-bit
id of the transaction that wrote the row; the age bound keeps a record far younger than the
four billion transactions after which such an id comes round again.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Final

from bot.core.enums import PauseStatus
from bot.store.records import PauseRecord

LIMIT: Final = 1024
MAX_AGE: Final = 600.0
"""Seconds a record is kept (by the process's monotonic clock)."""


class ChangedSinceRead(Exception):
    """The pause's row changed since the record given as ``known`` was made of it: nothing was
    written; read it again."""


class RecentPauses:
    """Waiting pauses by pause id, as the last write of this process left them."""

    def __init__(
        self,
        *,
        limit: int = LIMIT,
        max_age: float = MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limit = limit
        self._max_age = max_age
        self._clock = clock
        self._kept: OrderedDict[str, tuple[float, PauseRecord]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, records: Iterable[PauseRecord]) -> None:
        """Keep the waiting ones that carry their row's version (the others: forgotten)."""
        now = self._clock()
        for record in records:
            if record.status is PauseStatus.PENDING and record.row_version is not None:
                self._kept[record.pause_id] = (now, record)
                self._kept.move_to_end(record.pause_id)
            else:
                self._kept.pop(record.pause_id, None)
        while len(self._kept) > self._limit:
            self._kept.popitem(last=False)

    def take(self, tenant_id: str, pause_id: str) -> PauseRecord | None:
        """The record kept for ``pause_id`` of ``tenant_id``, taken (a second answer reads);
        None if none is, or it is older than ``max_age``."""
        kept = self._kept.get(pause_id)
        if kept is None or kept[1].tenant_id != tenant_id:
            return None
        at, record = self._kept.pop(pause_id)
        return record if self._clock() - at <= self._max_age else None
