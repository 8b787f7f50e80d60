"""Who may answer a CHANNEL pause in Slack: the channel's approvers, users or user groups.

Approver ids are user ids (``U…``, ``W…``) and user-group ids (``S…``). A group's members come
from ``usergroups.users.list`` and are cached for ``ttl`` on the App's clock; a failed look-up
(no scope, a free plan: ``plan_upgrade_required``) grants nothing and is not cached.

A look-up that failed for now (Slack unreachable, 5xx, rate limited: ``webapi.is_transient``)
decides nothing for an answer: :meth:`ApproverDirectory.is_among` raises
:class:`MembersUnknownError`, so the person is told to try again instead of being refused (or
the click failing). Lists (``/pending``, the App Home) read it as "no members" for now.

A look-up may run before an ack (an answer's check), so it never waits on Slack's rate limit:
it goes through ``webapi.without_waits`` (no retries, no sleep on ``Retry-After``), and a group
rate limited is not asked again before its ``Retry-After`` (at least ``UNKNOWN_FOR``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.clock import Clock
from channels.slack.approver_ids import GROUP_ID as GROUP_ID  # where they were: kept importable
from channels.slack.approver_ids import USER_ID as USER_ID
from channels.slack.approver_ids import is_approver_id as is_approver_id
from channels.slack.redaction import log
from channels.slack.webapi import (
    TRANSPORT_ERRORS,
    failure_of,
    is_transient,
    retry_after,
    without_waits,
)

DEFAULT_TTL: Final = timedelta(minutes=5)
UNKNOWN_FOR: Final = timedelta(seconds=10)
"""How long a group Slack could not list for now is not asked again: the answers of one
"Approve all" (each checked) and a burst of clicks meet one failed look-up, not one each,
before Slack's 3 s are spent."""


class MembersUnknownError(Exception):
    """A user group's members could not be read for now (Slack unreachable, failing or rate
    limited): whether someone is among them is not known, neither yes nor no."""

    def __init__(self, group: str) -> None:
        super().__init__(f"the members of user group {group} could not be read for now")
        self.group = group


@dataclass(frozen=True, slots=True)
class _Members:
    users: frozenset[str]
    until: datetime


class ApproverDirectory:
    """Answers "may this user answer for these approvers?", with user groups expanded."""

    def __init__(self, client: AsyncWebClient, clock: Clock, *, ttl: timedelta = DEFAULT_TTL):
        self._client = without_waits(client)  # asked before acks: never sleeps on a 429
        self._clock = clock
        self._ttl = ttl
        self._groups: dict[str, _Members] = {}
        self._unknown: dict[str, datetime] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def may_answer(self, user: str, approvers: Sequence[str]) -> bool:
        """Whether ``user`` is among ``approvers``; a group not read for now grants nothing."""
        try:
            return await self.is_among(user, approvers)
        except MembersUnknownError:
            return False

    async def is_among(self, user: str, approvers: Sequence[str]) -> bool:
        """Whether ``user`` is among ``approvers``; ``MembersUnknownError`` when that hangs on
        a group whose members could not be read for now (a later try may answer)."""
        if user in approvers:
            return True
        unknown: MembersUnknownError | None = None
        for group in approvers:
            if not GROUP_ID.fullmatch(group):
                continue
            try:
                if user in await self._members(group):
                    return True
            except MembersUnknownError as error:
                unknown = error  # another group may still count them in
        if unknown is not None:
            raise unknown
        return False

    async def expand(self, approvers: Iterable[str]) -> set[str]:
        """Every user the approvers name (group members included)."""
        users: set[str] = set()
        for approver in approvers:
            if GROUP_ID.fullmatch(approver):
                users |= await self.members(approver)
            else:
                users.add(approver)
        return users

    async def members(self, group: str) -> frozenset[str]:
        """The group's members; none while they cannot be read."""
        try:
            return await self._members(group)
        except MembersUnknownError:
            return frozenset()

    async def _members(self, group: str) -> frozenset[str]:
        cached = self._groups.get(group)
        if cached is not None and cached.until > self._clock.now():
            return cached.users
        lock = self._locks.setdefault(group, asyncio.Lock())
        async with lock:  # one look-up per group at a time; the others read its result
            cached = self._groups.get(group)
            if cached is not None and cached.until > self._clock.now():
                return cached.users
            if self._unknown.get(group, self._clock.now()) > self._clock.now():
                raise MembersUnknownError(group)  # failed a moment ago: not asked again yet
            try:
                users = await self._fetch(group)
            except MembersUnknownError as error:
                wait = max(UNKNOWN_FOR, timedelta(seconds=retry_after(error.__cause__) or 0))
                self._unknown[group] = self._clock.now() + wait
                raise
            self._unknown.pop(group, None)
            if users is not None:
                self._groups[group] = _Members(users, self._clock.now() + self._ttl)
            return users or frozenset()

    async def _fetch(self, group: str) -> frozenset[str] | None:
        try:
            response = await self._client.usergroups_users_list(usergroup=group)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            if is_transient(error):
                log.warning(
                    "slack: the members of user group %s could not be read for now (%s)",
                    group,
                    failure_of(error),
                )
                raise MembersUnknownError(group) from error
            log.warning(
                "slack: the members of user group %s could not be read (%s): "
                "its members may not answer until they can",
                group,
                failure_of(error),
            )
            return None
        users = response.get("users")
        return (
            frozenset(u for u in users if isinstance(u, str)) if isinstance(users, list) else None
        )
