"""A database that refuses at once, as PostgreSQL does while it restarts (connection refused,
a pooled connection the server closed): for the tests of what each answering path says then."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from bot import App


def refused() -> OperationalError:
    """What SQLAlchemy raises when the server refuses the connection."""
    return OperationalError("SELECT 1", {}, ConnectionRefusedError(111, "Connection refused"))


class RefusingDatabase:
    """Every statement of ``app``'s database refused at once while ``down``."""

    def __init__(self, app: App, monkeypatch: pytest.MonkeyPatch) -> None:
        self.down = False
        transactions = app.database.transactions
        for name in ("write", "apply", "read"):
            real = getattr(transactions, name)

            async def refusing(body: Any, _real: Any = real, *, short: bool = False) -> Any:
                if self.down:
                    raise refused()
                return await _real(body, short=short)

            monkeypatch.setattr(transactions, name, refusing)
