"""What the commands that read and change one store share (``grants``, ``delegations``): the
exit codes, one way to report their errors, and the database the settings name, opened and
migrated as the bot opens it."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bot.core.errors import CountersignError, SettingsError

if TYPE_CHECKING:  # type-only: `python -m bot --help` loads no database code
    from bot.settings import Settings
    from bot.store.database import Database

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def reporting(run: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run a command's coroutine; a settings problem is one line and exit 2, a refusal or a
    database that cannot be read one line and exit 1."""
    from bot.store.database import database_failure

    try:
        return asyncio.run(run())
    except SettingsError as error:
        print(error.message, file=sys.stderr)
        return EXIT_USAGE
    except CountersignError as error:
        print(error.message, file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:
        reason = database_failure(error)
        if reason is None:
            raise
        print(f"the database could not be read: {reason}", file=sys.stderr)
        return EXIT_FAILED


@asynccontextmanager
async def opened_database(
    args: argparse.Namespace,
) -> AsyncIterator[tuple[Database, Settings, str, datetime]]:
    """The database ``--database-url`` or ``DATABASE_URL`` names, migrated as the bot does;
    with the settings, its URL and the time now."""
    from bot.core.clock import SystemClock
    from bot.settings import load_settings
    from bot.store.database import Database, database_url_problem

    settings = load_settings()
    given = getattr(args, "database_url", None)
    url = given or settings.database_url
    problem = database_url_problem(url)
    if problem is not None:
        raise SettingsError(f"{'--database-url' if given else 'DATABASE_URL'}: {problem}")
    now = SystemClock().now()
    async with Database.open(url) as database:
        await database.migrate(now)
        yield database, settings, url, now
