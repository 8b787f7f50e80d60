"""Who may answer a CHANNEL pause in Slack: the channel's approvers, users or user groups.

Approver ids are user ids (``U…``, ``W…``) and user-group ids (``S…``). A group's members come
from ``usergroups.users.list`` and are cached for ``ttl`` on the App's clock; a failed look-up
(no scope, a free plan: ``plan_upgrade_required``) grants nothing and is not cached.
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
from channels.slack.webapi import api_error

DEFAULT_TTL: Final = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class _Members:
    users: frozenset[str]
    until: datetime


class ApproverDirectory:
    """Answers "may this user answer for these approvers?", with user groups expanded."""

    def __init__(self, client: AsyncWebClient, clock: Clock, *, ttl: timedelta = DEFAULT_TTL):
        self._client = client
        self._clock = clock
        self._ttl = ttl
        self._groups: dict[str, _Members] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def may_answer(self, user: str, approvers: Sequence[str]) -> bool:
        if user in approvers:
            return True
        for group in approvers:
            if GROUP_ID.fullmatch(group) and user in await self.members(group):
                return True
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
        cached = self._groups.get(group)
        if cached is not None and cached.until > self._clock.now():
            return cached.users
        lock = self._locks.setdefault(group, asyncio.Lock())
        async with lock:  # one look-up per group at a time; the others read its result
            cached = self._groups.get(group)
            if cached is not None and cached.until > self._clock.now():
                return cached.users
            users = await self._fetch(group)
            if users is not None:
                self._groups[group] = _Members(users, self._clock.now() + self._ttl)
            return users or frozenset()

    async def _fetch(self, group: str) -> frozenset[str] | None:
        try:
            response = await self._client.usergroups_users_list(usergroup=group)
        except SlackApiError as error:
            log.warning(
                "slack: the members of user group %s could not be read (%s): "
                "its members may not answer until they can",
                group,
                api_error(error),
            )
            return None
        users = response.get("users")
        return (
            frozenset(u for u in users if isinstance(u, str)) if isinstance(users, list) else None
        )
