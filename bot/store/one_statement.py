"""PostgreSQL: writes of several statements made one statement (data-modifying CTEs).

On PostgreSQL a write of k statements costs k + 2 round trips (BEGIN and COMMIT besides its
statements: asyncpg sends each alone and waits for it); the same write as one statement, run
in autocommit, costs one, and is atomic as one statement is (each ``WITH`` part runs on the
same snapshot, all or none of them committed). Measured (``tests.benchmarks.cycle_cost --part
counts --database postgres``): the store's round trips per pause cycle, 32 before, 17 after.

Only writes whose statements need no Python between them are here: a later part depends on
an earlier one through ``EXISTS (SELECT 1 FROM <part>)``, never on a value computed in Python
— except ``rest``, which says ``records.interrupts_to_resume``'s rule again in SQL (the
tree's contract tests check both on every backend: ``tests/store/test_tree_leases.py``).
SQLite has no data-modifying CTEs: there the same writes stay transactions of several
statements (``bot.store.sql``), whose semantics these keep, as the store's contract suites
check on SQLite, PostgreSQL and memory.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from sqlalchemy import ARRAY, Boolean, String, TextClause, bindparam, column, text
from sqlalchemy.sql.selectable import TextualSelect

from bot.core.enums import ExecutionStatus, PauseStatus
from bot.store.tables import executions, leases, pause_answers, pauses

PENDING = PauseStatus.PENDING.value
RESOLVED = PauseStatus.RESOLVED.value
CANCELLED = PauseStatus.CANCELLED.value


def _typed(statement: TextClause, binds: Iterable[tuple[str, Any]]) -> TextClause:
    return statement.bindparams(*(bindparam(name, type_=type_) for name, type_ in binds))


# ---------------------------------------------------------------- a pass's first write

_LEASE_BINDS = (
    ("l_root", leases.c.root_execution_id.type),
    ("l_owner", leases.c.owner.type),
    ("l_acquired_at", leases.c.acquired_at.type),
    ("l_expires_at", leases.c.expires_at.type),
)
_TAKE_LEASE_PARTS = (
    f"held AS (SELECT owner FROM {leases.name} WHERE root_execution_id = :l_root), "
    f"taken AS (INSERT INTO {leases.name} (root_execution_id, owner, acquired_at, expires_at)"
    " VALUES (:l_root, :l_owner, :l_acquired_at, :l_expires_at)"
    " ON CONFLICT (root_execution_id) DO UPDATE SET owner = excluded.owner,"
    " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at"
    f" WHERE {leases.name}.expires_at < excluded.acquired_at"
    f" OR {leases.name}.owner = excluded.owner RETURNING 1)"
)
"""``LeaseClaim.take`` as two parts: the holder before (``held``, for ``took_over``) and the
lease taken when free, expired or already the owner's (``taken``: a row if taken) — the same
upsert as ``TAKE_LEASE``, which on a free lease inserts it."""


@functools.cache
def start_tree(names: tuple[str, ...]) -> TextualSelect:
    """A new root's lease taken and its execution recorded (the columns ``names``, unless
    recorded already) only if taken: one row, ``taken`` and the lease's ``holder`` before.
    Built once per set of columns (``bot.store.direct`` keeps each compiled by its object)."""
    values = ", ".join(f":{name}" for name in names)
    sql = (
        f"WITH {_TAKE_LEASE_PARTS}, "
        f"recorded AS (INSERT INTO {executions.name} ({', '.join(names)})"
        f" SELECT {values} WHERE EXISTS (SELECT 1 FROM taken)"
        " ON CONFLICT (execution_id) DO NOTHING) "
        "SELECT EXISTS (SELECT 1 FROM taken) AS taken, (SELECT owner FROM held) AS holder"
    )
    binds = [*_LEASE_BINDS, *((name, executions.c[name].type) for name in names)]
    return _typed(text(sql), binds).columns(column("taken", Boolean), column("holder", String))


# ---------------------------------------------------------------- a pass's last write, paused

_IN_TREE = f"root_execution_id = :b_root AND status IN ('{RESOLVED}', '{PENDING}')"


@functools.cache
def rest(*, release: bool) -> TextualSelect:
    """A pass paused (``SqlStore.rest``): its pauses' interrupt ids set (``keys[i]`` gets
    ``interrupt_ids[i]``), the tree's RESOLVED and PENDING pauses read as that left them, the
    root RUNNING if one of its interrupts waits to be continued (``records.
    interrupts_to_resume``: an interrupt with an answered pause and none still PENDING), else
    PAUSED, and with ``release`` its lease given up when none does. Returns the pauses in the
    order asked, each row with ``goes_on``: whether one waits to be continued (none if the
    tree has no such pause: then none does)."""
    parts = [
        "keyed AS (SELECT * FROM unnest(:keys, :interrupt_ids)"
        " AS k(idempotency_key, interrupt_id))",
        f"marked AS (UPDATE {pauses.name} SET interrupt_id = keyed.interrupt_id FROM keyed"
        f" WHERE {pauses.name}.idempotency_key = keyed.idempotency_key RETURNING {pauses.name}.*)",
        # the update's rows as it left them, the others as they are (one snapshot)
        f"tree AS (SELECT * FROM marked WHERE {_IN_TREE} UNION ALL"
        f" SELECT * FROM {pauses.name} WHERE {_IN_TREE} AND id NOT IN (SELECT id FROM marked))",
        f"resumable AS (SELECT 1 FROM tree answered WHERE answered.status = '{RESOLVED}'"
        " AND answered.interrupt_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM tree asked"
        f" WHERE asked.status = '{PENDING}' AND asked.interrupt_id = answered.interrupt_id))",
        f"moved AS (UPDATE {executions.name} SET status = CASE WHEN EXISTS"
        f" (SELECT 1 FROM resumable) THEN '{ExecutionStatus.RUNNING.value}'"
        f" ELSE '{ExecutionStatus.PAUSED.value}' END, updated_at = :updated_at"
        " WHERE execution_id = :b_root)",
    ]
    binds: list[tuple[str, Any]] = [
        ("keys", ARRAY(String)),
        ("interrupt_ids", ARRAY(String)),
        ("b_root", pauses.c.root_execution_id.type),
        ("updated_at", executions.c.updated_at.type),
    ]
    if release:
        parts.append(
            f"freed AS (DELETE FROM {leases.name} WHERE root_execution_id = :l_root"
            " AND owner = :l_owner AND NOT EXISTS (SELECT 1 FROM resumable))"
        )
        binds += _LEASE_BINDS[:2]
    sql = (
        f"WITH {', '.join(parts)} SELECT tree.*, EXISTS (SELECT 1 FROM resumable) AS goes_on"
        " FROM tree ORDER BY asked_at, ask_position, id"
    )
    return _typed(text(sql), binds).columns(*pauses.columns, column("goes_on", Boolean))


# ---------------------------------------------------------------- an approved tool about to run

TAKE_NOTING_RAN_WITH = _typed(
    text(
        f"WITH taken AS (UPDATE {pauses.name} SET status = :status"
        f" WHERE pause_id = :b_pause_id AND status = '{RESOLVED}' RETURNING 1), "
        f"noted AS (UPDATE {pause_answers.name} SET ran_with = :ran_with"
        " WHERE idempotency_key = :b_key AND EXISTS (SELECT 1 FROM taken)) "
        "SELECT EXISTS (SELECT 1 FROM taken) AS taken"
    ),
    (
        ("status", pauses.c.status.type),
        ("b_pause_id", pauses.c.pause_id.type),
        ("ran_with", pause_answers.c.ran_with.type),
        ("b_key", pause_answers.c.idempotency_key.type),
    ),
).columns(column("taken", Boolean))
"""RESOLVED → TAKEN and, only if taken, its audit entry's ``ran_with``: ``taken`` says which."""


# ---------------------------------------------------------------- a tree's end

_WAITS = (
    f"EXISTS (SELECT 1 FROM {pauses.name}"
    f" WHERE root_execution_id = :b_root AND status = '{PENDING}')"
)


@functools.cache
def end_tree_if_nothing_waits(names: tuple[str, ...], *, release: bool) -> TextualSelect:
    """A tree's end when none of its pauses is PENDING (none to close with an audit entry):
    its answers no pass took closed (CANCELLED, their resolution kept: ``CLOSE_TREE_PAUSES``
    on a RESOLVED pause), the root's columns ``names`` set, with ``release`` its lease given
    up — else nothing written. One row: ``waits``, whether a pause was PENDING (then the
    caller ends the tree the long way, closing each with its audit entry). Built once per
    set of columns."""
    nothing_waits = f"NOT {_WAITS}"
    sets = ", ".join(f"{name} = :{name}" for name in names)
    parts = [
        f"closed AS (UPDATE {pauses.name} SET status = '{CANCELLED}'"
        f" WHERE root_execution_id = :b_root AND status = '{RESOLVED}' AND {nothing_waits})",
        f"ended AS (UPDATE {executions.name} SET {sets}"
        f" WHERE execution_id = :b_root AND {nothing_waits})",
    ]
    binds = [("b_root", pauses.c.root_execution_id.type)]
    binds += [(name, executions.c[name].type) for name in names]
    if release:
        parts.append(
            f"freed AS (DELETE FROM {leases.name}"
            f" WHERE root_execution_id = :l_root AND owner = :l_owner AND {nothing_waits})"
        )
        binds += _LEASE_BINDS[:2]
    sql = f"WITH {', '.join(parts)} SELECT {_WAITS} AS waits"
    return _typed(text(sql), binds).columns(column("waits", Boolean))
