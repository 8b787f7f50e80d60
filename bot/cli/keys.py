"""``python -m bot keygen`` and ``python -m bot reencrypt``: making encryption keys, rotating them.

``register(subparsers)`` adds both sub-commands; each parser's default ``handler`` is the
function to call with the parsed arguments (``args.handler(args)`` returns the exit code).

Rotation: ``keygen`` makes key B; ``COUNTERSIGN_ENCRYPTION_KEYS=B,A`` writes with B and still
reads A; ``reencrypt`` moves every stored value to B; then A can go (``...=B``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from bot.core.errors import CountersignError, SettingsError

if TYPE_CHECKING:
    from bot.security.key_source import KeySource
    from bot.security.reencrypt import ReencryptReport

SETTING = "COUNTERSIGN_ENCRYPTION_KEYS"
"""``bot.security.SETTING``, not imported from there: ``bot.security`` loads LangGraph, and the
help of ``python -m bot`` should not wait for it."""
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
DEFAULT_BATCH_SIZE = 500
"""Rows per transaction; ``bot.security.reencrypt`` (loaded only to re-encrypt) has the same."""

ROTATION_HINT = (
    f"Put it first in {SETTING} (comma-separated, current key first; old keys after it).\n"
    "To rotate: keep the old keys after the new one, run 'python -m bot reencrypt', "
    "then remove them.\n"
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``keygen`` and ``reencrypt`` to the command line's sub-commands."""
    keygen = subparsers.add_parser(
        "keygen",
        help=f"print a new encryption key for {SETTING}",
        description=f"Print a new AES-256 key as one {SETTING} entry (<key-id>:<base64>) on "
        "standard output; how to use it goes to standard error.",
    )
    keygen.add_argument(
        "--id",
        dest="key_id",
        type=_key_id,
        metavar="KEY_ID",
        help="the key's id, stored beside every value it encrypts (default: k + 8 random hex)",
    )
    keygen.set_defaults(handler=keygen_command)
    reencrypt = subparsers.add_parser(
        "reencrypt",
        help="re-encrypt every stored value with the current key",
        description="Re-encrypt every stored value (pauses, executions, audit entries and "
        "LangGraph's checkpoints) with the first key of "
        f"{SETTING}, in batches; safe to run again and while the bot runs.",
    )
    reencrypt.add_argument(
        "--database-url",
        type=_database_url,
        metavar="URL",
        help="the database (default: DATABASE_URL from the environment or .env)",
    )
    reencrypt.add_argument(
        "--batch-size",
        type=_batch_size,
        default=DEFAULT_BATCH_SIZE,
        metavar="N",
        help=f"rows per transaction (default: {DEFAULT_BATCH_SIZE})",
    )
    reencrypt.set_defaults(handler=reencrypt_command)


def keygen_command(args: argparse.Namespace) -> int:
    """Print a new key entry (stdout) and how to use it (stderr)."""
    from bot.security.keys import generate_key

    key = generate_key(getattr(args, "key_id", None))
    print(key.entry(), flush=True)
    sys.stderr.write(ROTATION_HINT)
    return EXIT_OK


def reencrypt_command(args: argparse.Namespace) -> int:
    """Move every stored value to the current key; report how many values moved."""
    from bot.security.key_source import key_source
    from bot.settings import load_settings
    from bot.store.database import database_failure, database_url_problem

    try:
        settings = load_settings()
        given = getattr(args, "database_url", None)
        url = given or settings.database_url
        setting = "--database-url" if given else "DATABASE_URL"
        problem = database_url_problem(url) or _no_database(url)
        if problem is not None:
            print(f"{setting}: {problem}", file=sys.stderr)
            return EXIT_USAGE
        keys = key_source(url, settings.countersign_encryption_keys)
        batch_size = getattr(args, "batch_size", DEFAULT_BATCH_SIZE)
        report = asyncio.run(_reencrypt(url, setting, keys, batch_size))
    except SettingsError as error:
        print(error.message, file=sys.stderr)
        return EXIT_USAGE
    except CountersignError as error:
        if _missing_key(error):  # a key the setting lacks: the setting's problem
            print(
                f"{SETTING} lacks a key: re-encryption stopped at {error.message}", file=sys.stderr
            )
            return EXIT_USAGE
        print(f"re-encryption stopped: {error.message}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:
        reason = database_failure(error)
        if reason is None:
            raise
        print(f"the database could not be re-encrypted: {reason}", file=sys.stderr)
        return EXIT_FAILED
    print(describe(report), flush=True)
    return EXIT_OK


async def _reencrypt(url: str, setting: str, keys: KeySource, batch_size: int) -> ReencryptReport:
    """Refuses a database that cannot be opened (a ``SettingsError`` naming ``setting``), a
    SQLite database whose key file is lost (a new key would read nothing) and keys that do not
    open what is stored (``bot.security.key_check``)."""
    from bot.core.clock import SystemClock
    from bot.security.key_check import KeyCheck, checkpoint_file_sampler, database_samplers
    from bot.security.reencrypt import reencrypt
    from bot.store.database import Database, database_failure

    async with Database.open(url) as database:
        try:
            async with database.engine.connect():
                pass
        except Exception as error:
            reason = database_failure(error)
            if reason is None:
                raise
            raise SettingsError(f"{setting}: the database could not be opened: {reason}") from None
        ring = await keys.load(holds_rows=database.holds_rows)
        samplers = database_samplers(database)
        in_file = checkpoint_file_sampler(database)  # SQLite's checkpoints, beside it
        if in_file is not None:
            samplers.append(in_file)
        check = KeyCheck(ring, samplers, source=keys.named, clock=SystemClock())
        problem = await check.problem()  # the keys' problem, before anything moves
        if problem is not None:
            raise SettingsError(problem)
        return await reencrypt(database, ring, batch_size=batch_size)


def _missing_key(error: CountersignError) -> bool:
    """Whether re-encryption stopped at a value under a key id the ring does not hold."""
    from bot.security.errors import UnknownKeyError

    return isinstance(error.__cause__, UnknownKeyError)


def describe(report: ReencryptReport) -> str:
    """One line for people: how many values moved, where, and the key they are under now."""
    if report.total == 0:
        return f"nothing to re-encrypt: every stored value is under key {report.key_id} already"
    tables = ", ".join(f"{name} {count}" for name, count in report.moved.items() if count)
    values = "value" if report.total == 1 else "values"
    return f"re-encrypted {report.total} {values} under key {report.key_id} ({tables})"


def _no_database(url: str) -> str | None:
    from bot.store.database import DatabaseUrl

    parsed = DatabaseUrl.parse(url)
    if not parsed.is_sqlite:
        return None
    path = parsed.sqlite_path
    if path is None:
        return "an in-memory database keeps nothing to re-encrypt: give --database-url"
    if not path.is_file():
        return f"there is no database at {path.resolve()}"
    return None


def _key_id(text: str) -> str:
    from bot.security.keys import KEY_ID_PATTERN

    if not KEY_ID_PATTERN.fullmatch(text):
        raise argparse.ArgumentTypeError("a key id is 1 to 32 letters, digits, - or _")
    return text


def _database_url(text: str) -> str:
    from bot.store.database import DatabaseUrl, DatabaseUrlError

    try:
        DatabaseUrl.parse(text)
    except DatabaseUrlError:
        raise argparse.ArgumentTypeError(
            "not a database URL (e.g. sqlite+aiosqlite:///countersign.db)"
        ) from None
    return text


def _batch_size(text: str) -> int:
    try:
        size = int(text)
    except ValueError:
        size = 0
    if size < 1:
        raise argparse.ArgumentTypeError("the batch size is a whole number of at least 1")
    return size
