"""``python -m bot delegations list | add | end``: standing delegations in the database ("while
I'm away, Bob answers my questions"), one line each; adding one until an end date; ending one.

A delegation applies from the next answer on, on every instance (each reads the delegations
from the database when someone answers). The command opens the database as the bot does.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.cli.store_commands import EXIT_FAILED, EXIT_OK, EXIT_USAGE, opened_database, reporting

if TYPE_CHECKING:  # type-only: `python -m bot --help` loads no database code
    from bot.store.delegations import SqlDelegations


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``delegations list``, ``add`` and ``end`` to the command line's sub-commands."""
    delegations = subparsers.add_parser(
        "delegations",
        help="list, add or end standing delegations",
        description="Standing delegations (App.delegate): until its end, a delegate may answer "
        "the questions its delegator may answer, never their own request.",
    )
    verbs = delegations.add_subparsers(dest="verb", title="verbs", metavar="VERB", required=True)
    listing = verbs.add_parser("list", help="one line per delegation")
    listing.add_argument("--tenant", metavar="TENANT", help="only this tenant's delegations")
    listing.add_argument("--all", action="store_true", help="ended delegations too")
    listing.set_defaults(handler=list_command)
    add = verbs.add_parser("add", help="DELEGATOR's questions to DELEGATE until --until")
    add.add_argument("delegator", metavar="DELEGATOR", help="who is away (their user id)")
    add.add_argument("delegate", metavar="DELEGATE", help="who answers meanwhile")
    add.add_argument("--tenant", required=True, metavar="TENANT")
    add.add_argument(
        "--until", required=True, type=_moment, metavar="WHEN",
        help="when it ends: an ISO 8601 date or time (UTC unless it names a zone)",
    )  # fmt: skip
    add.add_argument("--by", metavar="WHO", help="who adds it, for the record (the delegator)")
    add.set_defaults(handler=add_command)
    end = verbs.add_parser("end", help="end one delegation now, by its id")
    end.add_argument("delegation_id", metavar="DELEGATION_ID")
    end.add_argument("--tenant", required=True, metavar="TENANT")
    end.add_argument("--by", default="cli", metavar="WHO", help="who ends it (default cli)")
    end.set_defaults(handler=end_command)
    for verb in (listing, add, end):
        verb.add_argument(
            "--database-url",
            metavar="URL",
            help="the database (default: DATABASE_URL from the environment or .env)",
        )


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            "not an ISO 8601 date or time (e.g. 2026-03-09 or 2026-03-09T18:00+01:00)"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def list_command(args: argparse.Namespace) -> int:
    async def run() -> int:
        async with _delegations(args) as (store, now):
            found = await store.list_delegations(args.tenant, now=now, include_ended=bool(args.all))
        for delegation in found:
            print(delegation.line(now), flush=True)
        if not found:
            print("no delegations" if args.all else "no active delegations", file=sys.stderr)
        return EXIT_OK

    return reporting(run)


def add_command(args: argparse.Namespace) -> int:
    from bot.core.delegations import NewDelegation

    async def run() -> int:
        async with _delegations(args) as (store, now):
            if args.until <= now:
                print("--until: the end is already past", file=sys.stderr)
                return EXIT_USAGE
            if args.delegator == args.delegate:
                print("a delegation hands questions to someone else", file=sys.stderr)
                return EXIT_USAGE
            added = await store.add(
                NewDelegation(
                    delegation_id=f"d-{uuid.uuid4().hex[:12]}",
                    tenant_id=args.tenant,
                    delegator=args.delegator,
                    delegate=args.delegate,
                    created_by=args.by or args.delegator,
                    created_at=now,
                    ends_at=args.until,
                )
            )
        print(f"added: {added.line(now)}", flush=True)
        return EXIT_OK

    return reporting(run)


def end_command(args: argparse.Namespace) -> int:
    async def run() -> int:
        async with _delegations(args) as (store, now):
            ended = await store.end(args.tenant, args.delegation_id, by=args.by, at=now)
            found = await store.get(args.tenant, args.delegation_id)
        if found is None:
            print(
                f"no delegation {args.delegation_id} is known for tenant {args.tenant}",
                file=sys.stderr,
            )
            return EXIT_FAILED
        print(f"{'ended' if ended else 'already ended'}: {found.line(now)}", flush=True)
        return EXIT_OK

    return reporting(run)


@asynccontextmanager
async def _delegations(
    args: argparse.Namespace,
) -> AsyncIterator[tuple[SqlDelegations, datetime]]:
    """The delegations on the database the settings name (migrated, as the bot does), and
    the time now. (Delegations hold no sealed payload: no keys are needed.)"""
    from bot.store.delegations import SqlDelegations

    async with opened_database(args) as (database, _, _, now):
        yield SqlDelegations(database), now
