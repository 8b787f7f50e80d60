"""Installed by OAuth, tenants are installations: each Web API call is made with the token of
the workspace it is for.

The tenant of a workspace is its team id, and on Enterprise Grid ``E…:T…`` (the enterprise id
and the team id: ``tenant_of``). Who a call is for is the ``speaking_for`` context (a context
variable): set for a request by ``InstallationTenant`` (from the request's ids, as Bolt's
authorize found them), and by the Slack channel for what the runtime asks, withdraws, reminds
and escalates (the pause's tenant). ``TenantTokenClient`` then finds that workspace's bot
token in the installation store (an org-wide install's for a workspace of its org), refreshed
first when it rotates and is about to expire (slack_sdk's ``AsyncTokenRotator``), and calls
with it. A call for no tenant, or for a workspace not installed, goes out with no token and
Slack refuses it (``not_authed``): never with another workspace's token.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.core.metrics import Metrics
from channels.slack.installations import DatabaseInstallationStore
from channels.slack.middlewares import Next
from channels.slack.observing import Dispatch
from channels.slack.payloads import TENANT_KEY
from channels.slack.webapi import CountedWebClient

REFRESH_MINUTES_BEFORE: Final = 120
"""A rotating token is refreshed when it expires within this many minutes (Bolt's default)."""

_speaking_for: ContextVar[str | None] = ContextVar("countersign_slack_tenant", default=None)


def tenant_of(enterprise_id: str | None, team_id: str | None) -> str | None:
    """The tenant of a workspace: its team id; on Enterprise Grid ``enterprise:team``."""
    if team_id is None:
        return None
    return team_id if enterprise_id is None else f"{enterprise_id}:{team_id}"


def workspace_of(tenant: str) -> tuple[str | None, str]:
    """``tenant_of``'s inverse: (enterprise id or ``None``, team id)."""
    enterprise, _, team = tenant.rpartition(":")
    return enterprise or None, team


@contextmanager
def speaking_for(tenant: str | None) -> Iterator[None]:
    """Web API calls made inside are for ``tenant``'s workspace."""
    token = _speaking_for.set(tenant)
    try:
        yield
    finally:
        _speaking_for.reset(token)


def current_tenant() -> str | None:
    return _speaking_for.get()


class TenantTokens:
    """A tenant's bot token, from the installation store, refreshed when due."""

    def __init__(self, store: DatabaseInstallationStore, rotator: AsyncTokenRotator) -> None:
        self._store = store
        self._rotator = rotator

    async def token_for(self, tenant: str) -> str | None:
        enterprise, team = workspace_of(tenant)
        bot = await self._store.async_find_bot(enterprise_id=enterprise, team_id=team)
        if bot is None and enterprise is not None:  # an org-wide install covers its workspaces
            bot = await self._store.async_find_bot(
                enterprise_id=enterprise, team_id=None, is_enterprise_install=True
            )
        return None if bot is None else await self._fresh(bot)

    async def _fresh(self, bot: Bot) -> str | None:
        if bot.bot_refresh_token is None:
            return bot.bot_token
        refreshed = await self._rotator.perform_bot_token_rotation(
            bot=bot, minutes_before_expiration=REFRESH_MINUTES_BEFORE
        )
        if refreshed is None:
            return bot.bot_token
        await self._store.async_save_bot(refreshed)
        return refreshed.bot_token


def _names_a_token(options: dict[str, Any]) -> bool:
    if options.get("auth") is not None or "Authorization" in (options.get("headers") or {}):
        return True
    return any("token" in (options.get(part) or {}) for part in ("params", "data", "json"))


class TenantTokenClient(CountedWebClient):
    """The bot's client installed by OAuth: each call with its tenant's workspace token."""

    def __init__(self, metrics: Metrics, **options: Any) -> None:
        super().__init__(metrics, **options)
        self.tokens: TenantTokens | None = None

    async def api_call(self, api_method: str, **options: Any) -> AsyncSlackResponse:
        tenant = current_tenant()
        if self.tokens is not None and tenant is not None and not _names_a_token(options):
            token = await self.tokens.token_for(tenant)
            if token is not None:
                headers = {**(options.get("headers") or {}), "Authorization": f"Bearer {token}"}
                options = {**options, "headers": headers}
        return await super().api_call(api_method, **options)


class InstallationTenant(AsyncMiddleware):
    """Installed by OAuth: a request's tenant is its workspace's (``tenant_of``)."""

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Next
    ) -> BoltResponse | None:
        tenant = tenant_of(req.context.enterprise_id, req.context.team_id)
        if tenant is not None:
            req.context[TENANT_KEY] = tenant
        return await next()


def dispatched_for_tenant(dispatch: Dispatch) -> Dispatch:
    """``dispatch`` (Bolt's) with what its listeners call on the Web API made for the request's
    workspace, and what they spawn too (a task copies the context it is made in).

    Around the whole dispatch, not in a middleware: Bolt calls its global middlewares one
    after the other (``next()`` only marks that the chain goes on) and the listeners after
    them all, so a context a middleware sets around ``next()`` is gone before any listener
    runs."""

    async def for_tenant(request: AsyncBoltRequest) -> BoltResponse:
        with speaking_for(tenant_of(request.context.enterprise_id, request.context.team_id)):
            return await dispatch(request)

    return for_tenant
