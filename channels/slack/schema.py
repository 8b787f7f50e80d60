"""The Slack side's own tables, beside the App's, with their own ordered migrations.

Slack's approval messages are kept by the App's store, like every channel's
(``cs_message_refs``, ``bot.store.tables``); what only Slack needs lives here, so that the App's
migrations (``bot.store.migrations``) and these never have to be ordered against each other.
Their version is kept in ``cs_slack_schema_version``, like the App's in ``cs_schema_version``.

``cs_slack_notes`` (v1): pause id → the note in the requester's own thread that says where the
request waits ("Waiting for approval in #approvals"), updated with the outcome.

``cs_slack_events`` (v2): the Events API ids already handled; a retry of one is dropped. The
App's schema made it up to its v3 (a database made then has it already: v2 creates it only where
it is missing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Final

from sqlalchemy import Column, Connection, Index, Integer, MetaData, String, Table

from bot.store.migrations import apply_migrations
from bot.store.tables import UtcDateTime

_ADVISORY_LOCK: Final = 727002  # the App's migrations take 727001

slack_metadata = MetaData()

slack_schema_version = Table(
    "cs_slack_schema_version",
    slack_metadata,
    Column("version", Integer, primary_key=True),
    Column("applied_at", UtcDateTime, nullable=False),
)

requester_notes = Table(
    "cs_slack_notes",
    slack_metadata,
    Column("pause_id", String(64), primary_key=True),
    Column("channel_id", String(64), nullable=False),
    Column("ts", String(64), nullable=False),
    Column("thread_ts", String(64), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
)

seen_events = Table(
    "cs_slack_events",
    slack_metadata,
    Column("event_id", String(255), primary_key=True),
    Column("seen_at", UtcDateTime, nullable=False),
    Index("ix_cs_slack_events_seen", "seen_at"),
)

SlackMigration = Callable[[Connection], None]


def _v1_requester_notes(connection: Connection) -> None:
    requester_notes.create(connection, checkfirst=True)


def _v2_seen_events(connection: Connection) -> None:
    seen_events.create(connection, checkfirst=True)


SLACK_MIGRATIONS: Sequence[SlackMigration] = (_v1_requester_notes, _v2_seen_events)
"""Applied in order; version N is ``SLACK_MIGRATIONS[N - 1]``. Never edit one that has shipped."""


def migrate_slack(connection: Connection, now: datetime) -> int:
    """Bring the Slack tables to the newest version inside ``connection``'s transaction;
    idempotent. Returns the version."""
    if connection.dialect.name == "postgresql":
        # one instance migrates at a time (a short transaction); the others find nothing to do
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_ADVISORY_LOCK})")
    return apply_migrations(connection, slack_schema_version, SLACK_MIGRATIONS, now)
