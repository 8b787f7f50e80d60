"""PostgreSQL: writes of several statements made one statement (data-modifying CTEs).

On PostgreSQL a write of k statements costs k + 2 round trips (BEGIN and COMMIT besides its
statements: asyncpg sends each alone and waits for it); the same write as one statement, run
in autocommit, costs one, and is atomic as one statement is (each ``WITH`` part runs on the
same snapshot, all or none of them committed). Measured (``tests.benchmarks.cycle_cost --part
counts --database postgres``): the store's round trips per pause cycle, 32 before, 17 after.

Only writes whose statements need no Python between them are here: a later part depends on
an earlier one through ``EXISTS (SELECT 1 FROM <part>)``, never on a value computed in Python
— except ``rest`` and ``close_opening``, which say ``records.interrupts_to_resume``'s rule
again in SQL (the tree's contract tests check both on every backend:
``tests/store/test_tree_leases.py``, ``tests/store/test_close_opening.py``). ``close_opening``
writes an audit entry computed in Python before the statement, from the pause as read: its
update closes the pause only if the row is still the one read (an exact guard, the approvals'
version), and its caller goes the long way when it is not. Measured on a pause cycle (the
same benchmark): 15 round trips, 9 with an answer's write made one statement (resume 11 -> 5).
SQLite has no data-modifying CTEs: there the same writes stay transactions of several
statements (``bot.store.sql``), whose semantics these keep, as the store's contract suites
check on SQLite, PostgreSQL and memory.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    Integer,
    String,
    Text,
    TextClause,
    bindparam,
    column,
    text,
)
from sqlalchemy.sql.selectable import TextualSelect

from bot.core.enums import ExecutionStatus, PauseStatus
from bot.store.tables import executions, leases, pause_answers, pauses

PENDING = PauseStatus.PENDING.value
RESOLVED = PauseStatus.RESOLVED.value
CANCELLED = PauseStatus.CANCELLED.value


WAITING = "status = :b_pending"
"""A pause that waits, looked for in ``cs_pauses`` itself (not in a CTE's rows): its status a
value bound in the statement (``_typed`` binds it), not the literal ``'PENDING'``. A plan
PostgreSQL keeps for a statement (asyncpg prepares it once) and made while the table was new
and never analyzed found a pause by its id, or a tree's waiting pauses, in the pending gauge's
partial index (``PENDING_BY_ROLE_INDEX``: every waiting pause, proven to hold them by the
literal): with 30,000 waiting, an answer took 30 ms and an end 40 ms until the table was next
analyzed. A bound value proves nothing, so the kept plan goes by the pause's id or its tree."""


def _typed(statement: TextClause, binds: Iterable[tuple[str, Any]]) -> TextClause:
    typed = statement.bindparams(*(bindparam(name, type_=type_) for name, type_ in binds))
    if ":b_pending" in statement.text:
        typed = typed.bindparams(bindparam("b_pending", PENDING, type_=pauses.c.status.type))
    return typed


# ---------------------------------------------------------------- a pass's first write

_LEASE_BINDS = (
    ("l_root", leases.c.root_execution_id.type),
    ("l_owner", leases.c.owner.type),
    ("l_acquired_at", leases.c.acquired_at.type),
    ("l_expires_at", leases.c.expires_at.type),
)


def _take_lease_parts(*, only_if: str | None = None) -> str:
    """``LeaseClaim.take`` as two parts: the holder before (``held``, for ``took_over``) and the
    lease taken when free, expired or already the owner's (``taken``: a row if taken) — the
    same upsert as ``TAKE_LEASE``, which on a free lease inserts it. ``only_if``: a condition
    on the statement's other parts, without which nothing is taken (nor tried)."""
    claimed = (
        "VALUES (:l_root, :l_owner, :l_acquired_at, :l_expires_at)"
        if only_if is None
        else f"SELECT :l_root, :l_owner, :l_acquired_at, :l_expires_at WHERE {only_if}"
    )
    return (
        f"held AS (SELECT owner FROM {leases.name} WHERE root_execution_id = :l_root), "
        f"taken AS (INSERT INTO {leases.name} (root_execution_id, owner, acquired_at, expires_at)"
        f" {claimed}"
        " ON CONFLICT (root_execution_id) DO UPDATE SET owner = excluded.owner,"
        " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at"
        f" WHERE {leases.name}.expires_at < excluded.acquired_at"
        f" OR {leases.name}.owner = excluded.owner RETURNING 1)"
    )


_TAKE_LEASE_PARTS = _take_lease_parts()


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
_ROW_VERSION = "{table}.xmin::text::bigint AS row_version"
"""The version of a row as read or as the update returning it left it (``PauseRecord.
row_version``): the id of the transaction that wrote it, which any later write changes."""

_RESULTS_PARTS = (
    f"saved AS (UPDATE {pauses.name}"
    " SET tool_result = (:result_values)[array_position(:result_ids, pause_id)]"
    " WHERE root_execution_id = :b_root AND pause_id = ANY(:result_ids))",
)
"""The tool results a pass's last write carries (``result_ids[i]`` gets ``result_values[i]``,
sealed), each a pause of the tree (found by its index, as ``rest``'s keys are): each has run
its tool (TAKEN), so no other part of the statement updates its row."""
_RESULTS_BINDS = (("result_ids", ARRAY(String)), ("result_values", ARRAY(Text)))


@functools.cache
def rest(*, release: bool, results: bool = False) -> TextualSelect:
    """A pass paused (``SqlStore.rest``): its pauses' interrupt ids set (``keys[i]`` gets
    ``interrupt_ids[i]``), the tree's RESOLVED and PENDING pauses read as that left them, the
    root RUNNING if one of its interrupts waits to be continued (``records.
    interrupts_to_resume``: an interrupt with an answered pause and none still PENDING), else
    PAUSED, and with ``release`` its lease given up when none does. Returns the pauses in the
    order asked, each row with ``goes_on``: whether one waits to be continued (none if the
    tree has no such pause: then none does). With ``results``, the tools' results saved too
    (``_RESULTS_PARTS``)."""
    parts = [
        # found by the tree's index (every key is the tree's: its root execution begins it),
        # whatever the table's statistics: a join to the keys unnested was planned as a scan
        # of the whole table while it was small, and a cached plan stayed so as it grew
        f"marked AS (UPDATE {pauses.name}"
        " SET interrupt_id = (:interrupt_ids)[array_position(:keys, idempotency_key)]"
        " WHERE root_execution_id = :b_root AND idempotency_key = ANY(:keys)"
        f" RETURNING {pauses.name}.*, {_ROW_VERSION.format(table=pauses.name)})",
        # the update's rows as it left them, the others as they are (one snapshot)
        f"tree AS (SELECT * FROM marked WHERE {_IN_TREE} UNION ALL"
        f" SELECT {pauses.name}.*, {_ROW_VERSION.format(table=pauses.name)} FROM {pauses.name}"
        f" WHERE {_IN_TREE} AND id NOT IN (SELECT id FROM marked))",
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
    if results:
        parts += _RESULTS_PARTS
        binds += _RESULTS_BINDS
    sql = (
        f"WITH {', '.join(parts)} SELECT tree.*, EXISTS (SELECT 1 FROM resumable) AS goes_on"
        " FROM tree ORDER BY asked_at, ask_position, id"
    )
    return _typed(text(sql), binds).columns(
        *pauses.columns, column("row_version", BigInteger), column("goes_on", Boolean)
    )


# ---------------------------------------------------------------- an answer, opening its tree

_LIVE = f"status IN ('{ExecutionStatus.RUNNING.value}', '{ExecutionStatus.PAUSED.value}')"
CLOSED_OPENING_FLAGS = ("closed_it", "waited", "live", "taken", "moved", "goes_on")
"""The outcome of ``close_opening``'s statement, on every row beside ``holder`` (the lease's
owner before it) and the tree's execution (its columns named ``e_<column>``)."""


@functools.cache
def close_opening(
    sets: tuple[str, ...], entry: tuple[str, ...], *, before_deadline: bool, exact: bool = False
) -> TextualSelect:
    """An answer recorded and its tree opened (``SqlStore.close_opening``), in one statement.

    The pause closed (its columns ``sets``) only while it waits, before its deadline with
    ``before_deadline``, and only if it is still the row its audit entry was computed from
    (``b_seq``; ``b_version``: the approvals' version, which every write of its approvals or
    handovers moves on, ``RECORD_APPROVALS``); only if closed, its audit entry (the columns
    ``entry``, bound as ``a_<column>``) and, when the tree's execution is live (RUNNING or
    PAUSED), the tree's lease taken; only if taken, the execution RUNNING when a pause waits to
    be continued (``rest``'s rule). One row per pause of the tree (RESOLVED and PENDING, the
    closed one as the update left it, in the order asked), or one row of NULL pause columns,
    each with the outcome (``CLOSED_OPENING_FLAGS``, ``holder``) and the execution as it was.
    ``waited``: the pause was PENDING in the statement's snapshot (not closed though: the
    guard, its deadline or a writer at the same moment kept it). With ``exact``, closed only
    if the row is still the version the entry was computed from (``b_row_version``:
    ``PauseRecord.row_version``), whatever else changed."""
    guard = [
        "pause_id = :b_pause_id",
        "tenant_id = :b_tenant",
        WAITING,
        "id = :b_seq",
        "COALESCE(approvals_version, 0) = :b_version",
    ]
    if before_deadline:
        guard.append("(closes_at IS NULL OR closes_at > :b_now)")
    if exact:
        guard.append("xmin::text::bigint = :b_row_version")
    closed = "EXISTS (SELECT 1 FROM closed)"
    live = f"EXISTS (SELECT 1 FROM run WHERE {_LIVE})"
    parts = [
        f"closed AS (UPDATE {pauses.name} SET {', '.join(f'{n} = :{n}' for n in sets)}"
        f" WHERE {' AND '.join(guard)} RETURNING *)",
        f"audited AS (INSERT INTO {pause_answers.name} ({', '.join(entry)})"
        f" SELECT {', '.join(f':a_{n}' for n in entry)} WHERE {closed})",
        f"run AS (SELECT * FROM {executions.name} WHERE execution_id = :l_root)",
        _take_lease_parts(only_if=f"{closed} AND {live}"),
        # the update's row as it left it, the others as they are (one snapshot)
        f"tree AS (SELECT * FROM closed WHERE {_IN_TREE} UNION ALL"
        f" SELECT * FROM {pauses.name} WHERE {_IN_TREE} AND id NOT IN (SELECT id FROM closed))",
        f"resumable AS (SELECT 1 FROM tree answered WHERE answered.status = '{RESOLVED}'"
        " AND answered.interrupt_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM tree asked"
        f" WHERE asked.status = '{PENDING}' AND asked.interrupt_id = answered.interrupt_id))",
        f"moved AS (UPDATE {executions.name} SET status = '{ExecutionStatus.RUNNING.value}',"
        f" updated_at = :updated_at WHERE execution_id = :l_root AND {_LIVE}"
        " AND EXISTS (SELECT 1 FROM taken) AND EXISTS (SELECT 1 FROM resumable) RETURNING 1)",
    ]
    waited = (
        f"EXISTS (SELECT 1 FROM {pauses.name} WHERE pause_id = :b_pause_id"
        f" AND tenant_id = :b_tenant AND {WAITING})"
    )
    outcome = [
        f"{closed} AS closed_it",
        f"{waited} AS waited",
        f"{live} AS live",
        "EXISTS (SELECT 1 FROM taken) AS taken",
        "EXISTS (SELECT 1 FROM moved) AS moved",
        "EXISTS (SELECT 1 FROM resumable) AS goes_on",
        "(SELECT owner FROM held) AS holder",
    ]
    # named one by one: a migrated table's columns may stand in another order than these
    selected = [
        *(f"tree.{c.name}" for c in pauses.columns),
        *(f"run.{c.name} AS e_{c.name}" for c in executions.columns),
        *outcome,
    ]
    sql = (
        f"WITH {', '.join(parts)} SELECT {', '.join(selected)}"
        " FROM (SELECT 1) AS one LEFT JOIN run ON true LEFT JOIN tree ON true"
        " ORDER BY tree.asked_at, tree.ask_position, tree.id"
    )
    binds: list[tuple[str, Any]] = [
        *((name, pauses.c[name].type) for name in sets),
        *((f"a_{name}", pause_answers.c[name].type) for name in entry),
        ("b_pause_id", pauses.c.pause_id.type),
        ("b_tenant", pauses.c.tenant_id.type),
        ("b_seq", pauses.c.id.type),
        ("b_version", Integer()),
        ("b_root", pauses.c.root_execution_id.type),
        ("updated_at", executions.c.updated_at.type),
        *_LEASE_BINDS,
    ]
    if before_deadline:
        binds.append(("b_now", pauses.c.closes_at.type))
    if exact:
        binds.append(("b_row_version", BigInteger()))
    columns = [
        *pauses.columns,
        *(column(f"e_{c.name}", c.type) for c in executions.columns),
        *(column(name, Boolean) for name in CLOSED_OPENING_FLAGS),
        column("holder", String),
    ]
    return _typed(text(sql), binds).columns(*columns)


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

_WAITS = f"EXISTS (SELECT 1 FROM {pauses.name} WHERE root_execution_id = :b_root AND {WAITING})"


@functools.cache
def end_tree_if_nothing_waits(
    names: tuple[str, ...], *, release: bool, results: bool = False
) -> TextualSelect:
    """A tree's end when none of its pauses is PENDING (none to close with an audit entry):
    its answers no pass took closed (CANCELLED, their resolution kept: ``CLOSE_TREE_PAUSES``
    on a RESOLVED pause), the root's columns ``names`` set, with ``release`` its lease given
    up — else nothing written. One row: ``waits``, whether a pause was PENDING (then the
    caller ends the tree the long way, closing each with its audit entry). With ``results``,
    the tools' results saved whichever it is (``_RESULTS_PARTS``). Built once per set of
    columns."""
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
    if results:
        parts += _RESULTS_PARTS
        binds += _RESULTS_BINDS
    sql = f"WITH {', '.join(parts)} SELECT {_WAITS} AS waits"
    return _typed(text(sql), binds).columns(column("waits", Boolean))
