"""After a run of the office example, the database holds none of the run's plaintext values.

SQLite: the database file, the checkpoint file beside it and their WAL files, read as raw bytes
(while the App runs and after it closed). PostgreSQL: every value of every column of every table
(ours and LangGraph's checkpoint tables).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.databases import BACKENDS, database
from tests.office import Inbox, Ledger
from tests.security.office_run import (
    KEY_A,
    TENANT,
    approve_refund,
    check_finished,
    found_in,
    open_office,
    raw_values,
    reject_expense,
    script_office,
    sqlite_files,
    start_office,
)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_plaintext_value_is_stored(backend: str, tmp_path: Path) -> None:
    script_office()
    inbox, ledger = Inbox(), Ledger()
    async with database(backend, tmp_path) as url:
        keys = None if backend == "sqlite" else KEY_A  # SQLite: the generated key file
        async with await open_office(url, keys, inbox, ledger) as app:
            paused = await start_office(app)
            await approve_refund(app, inbox)
            done = await reject_expense(app, paused.execution_id)
            check_finished(done, ledger)
            while_open = await raw_values(url)
        after_close = await raw_values(url)

        for stored in (while_open, after_close):
            assert found_in(stored) == []
            assert any(TENANT.encode() in value for value in stored)  # the scan sees the data
            assert any(b"v1." in value for value in stored)  # sealed values are there
        if backend == "sqlite":
            names = {f.name for f in sqlite_files(url)}
            assert {"countersign.db", "countersign.checkpoints.db"} <= names


async def test_the_scan_finds_plaintext_when_it_is_there(tmp_path: Path) -> None:
    """The control: the same scan, over a file holding the values in clear, finds every one."""
    from tests.security.office_run import PLAINTEXTS

    clear = tmp_path / "clear.bin"
    clear.write_bytes(b"|".join(PLAINTEXTS.values()))

    assert found_in([clear.read_bytes()]) == sorted(PLAINTEXTS)
