"""A bounded pool of Web API calls per method family, so that one slow family never holds the
others: posting, updating, views, and the rest.

When Slack hangs one kind of call (``chat.update`` withheld for a minute), those calls fill
their family's pool and wait there; a post, a modal or a lookup goes on in its own. The pools
together stay under the bot's aiohttp connector limit (``CONNECTIONS``), so the hung calls
cannot take every connection either. Each call is still bounded by ``SLACK_API_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

POSTING: Final = "posting"
UPDATING: Final = "updating"
VIEWS: Final = "views"
OTHER: Final = "other"
FAMILIES: Final = (POSTING, UPDATING, VIEWS, OTHER)
POOL_SIZE: Final = 16
"""Calls of one family in flight at once (Slack's own limits are per method and minute)."""
CONNECTIONS: Final = 100
"""The session's connector limit (aiohttp's default, said explicitly): the pools' sum is under."""

_POSTING = frozenset({"chat.postMessage", "chat.postEphemeral", "chat.scheduleMessage"})
_UPDATING = frozenset({"chat.update", "chat.delete"})


def family_of(method: str) -> str:
    """The family of the Web API method ``method`` (``chat.update`` → ``updating``)."""
    if method in _POSTING:
        return POSTING
    if method in _UPDATING:
        return UPDATING
    if method.startswith("views."):
        return VIEWS
    return OTHER


class CallPools:
    """One semaphore per family (made in the event loop of the first call)."""

    def __init__(self, size: int = POOL_SIZE) -> None:
        assert size * len(FAMILIES) < CONNECTIONS
        self._size = size
        self._pools: dict[str, asyncio.Semaphore] = {}

    @asynccontextmanager
    async def slot(self, method: str) -> AsyncIterator[None]:
        """Hold a place in ``method``'s family's pool for the call."""
        family = family_of(method)
        pool = self._pools.get(family)
        if pool is None:
            pool = self._pools[family] = asyncio.Semaphore(self._size)
        async with pool:
            yield
