"""``python -m bot grants list`` and ``python -m bot grants revoke GRANT_ID``: the standing
grants in the database, one line per grant (never a pause id), and taking one back.

A revocation takes effect for the next question on every instance (each reads the grants from
the database when it asks). The grants' constraints are stored sealed: the command opens the
database with the encryption keys of the environment (or ``.env``), as the bot does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING

from bot.cli.store_commands import EXIT_FAILED, EXIT_OK, opened_database, reporting

if TYPE_CHECKING:  # type-only: `python -m bot --help` loads no database code
    from bot.core.grants import Grant
    from bot.store.grants import SqlGrants


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``grants list`` and ``grants revoke`` to the command line's sub-commands."""
    grants = subparsers.add_parser(
        "grants",
        help="list or revoke standing grants",
        description="The standing grants approvers gave (App.grant): list them, one line "
        "each, or revoke one (from the next question on, on every instance).",
    )
    verbs = grants.add_subparsers(dest="verb", title="verbs", metavar="VERB", required=True)
    listing = verbs.add_parser("list", help="one line per grant: id, state, tenant, role, tool")
    listing.add_argument("--tenant", metavar="TENANT", help="only this tenant's grants")
    listing.add_argument(
        "--all", action="store_true", help="expired, revoked and used-up grants too"
    )
    listing.set_defaults(handler=list_command)
    revoke = verbs.add_parser("revoke", help="revoke one grant by its id")
    revoke.add_argument("grant_id", metavar="GRANT_ID")
    revoke.add_argument("--tenant", required=True, metavar="TENANT", help="the grant's tenant")
    revoke.add_argument(
        "--by", default="cli", metavar="WHO", help="who revokes it, for the record (default cli)"
    )
    revoke.set_defaults(handler=revoke_command)
    for verb in (listing, revoke):
        verb.add_argument(
            "--database-url",
            metavar="URL",
            help="the database (default: DATABASE_URL from the environment or .env)",
        )


def list_command(args: argparse.Namespace) -> int:
    async def run() -> int:
        async with _grants(args) as (store, now):
            found = await store.list_grants(args.tenant, now=now, include_inactive=bool(args.all))
        for grant in found:
            print(grant.line(now), flush=True)
        if not found:
            print("no grants" if args.all else "no active grants", file=sys.stderr)
        return EXIT_OK

    return reporting(run)


def revoke_command(args: argparse.Namespace) -> int:
    async def run() -> int:
        async with _grants(args) as (store, now):
            revoked = await store.revoke(args.tenant, args.grant_id, by=args.by, at=now)
            grant: Grant | None = await store.get(args.tenant, args.grant_id)
        if grant is None:
            print(f"no grant {args.grant_id} is known for tenant {args.tenant}", file=sys.stderr)
            return EXIT_FAILED
        said = "revoked" if revoked else "already revoked"
        print(f"{said}: {grant.line(now)}", flush=True)
        return EXIT_OK

    return reporting(run)


@asynccontextmanager
async def _grants(args: argparse.Namespace) -> AsyncIterator[tuple[SqlGrants, datetime]]:
    """The grants store on the database the settings name (migrated, as the bot does), with
    the keys that open it, and the time now."""
    from bot.security.codec import EncryptingCodec
    from bot.security.key_source import key_source
    from bot.store.grants import SqlGrants

    async with opened_database(args) as (database, settings, url, now):
        keys = key_source(url, settings.countersign_encryption_keys)
        ring = await keys.load(holds_rows=database.holds_rows)
        yield SqlGrants(database, EncryptingCodec(ring)), now
