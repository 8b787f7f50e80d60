"""Bolt's installation store and OAuth state store, on the App's database.

``DatabaseInstallationStore`` is slack_sdk's ``AsyncInstallationStore`` over
``bot.store.installations`` (the tokens sealed by the App's key ring): Bolt's OAuth flow saves
into it, Bolt's ``AsyncInstallationStoreAuthorize`` finds a workspace's token in it and saves
the tokens it refreshed (token rotation). Its semantics are slack_sdk's SQLAlchemy store's
(the latest installation of a workspace, a user's own, the bot's), with one row per
installer instead of a history.

``DatabaseStateStore`` keeps each OAuth state as an HMAC under ``SLACK_STATE_SECRET`` (the
database never holds a state a browser could present) and lets it be consumed once, within
its lifetime on the App's clock.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from bot.core.clock import Clock
from bot.store.installations import InstallationKey, SqlInstallations, SqlOAuthStates
from channels.slack.redaction import log


def _when(value: Any) -> datetime:
    """slack_sdk's ``installed_at`` (a float of seconds, or a datetime) as an aware datetime."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromtimestamp(float(value), UTC)


def _document(values: dict[str, Any]) -> dict[str, Any]:
    """A model's values as JSON: datetimes as epoch seconds (what its constructor takes: an
    expiry as whole seconds, ``installed_at`` as a float)."""

    def plain(name: str, value: Any) -> Any:
        if not isinstance(value, datetime):
            return value
        return value.timestamp() if name == "installed_at" else int(value.timestamp())

    return {name: plain(name, value) for name, value in values.items()}


def _installation(document: dict[str, Any]) -> Installation:
    return Installation(**document)


def _bot(document: dict[str, Any]) -> Bot:
    return Bot(**document)


class DatabaseInstallationStore(AsyncInstallationStore):
    """slack_sdk's ``AsyncInstallationStore`` on ``SqlInstallations`` for one Slack app."""

    def __init__(self, client_id: str, installations: SqlInstallations) -> None:
        self.client_id = client_id
        self._installations = installations

    @property
    def logger(self) -> Any:
        return log

    def _key(
        self, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> InstallationKey:
        return InstallationKey(
            client_id=self.client_id, enterprise_id=enterprise_id, team_id=team_id, user_id=user_id
        )

    async def async_save(self, installation: Installation) -> None:
        team = None if installation.is_enterprise_install else installation.team_id
        await self._installations.save(
            self._key(installation.enterprise_id, team, installation.user_id),
            installed_at=_when(installation.installed_at),
            document=_document(installation.to_dict_for_copying()),
        )
        await self.async_save_bot(installation.to_bot())

    async def async_save_bot(self, bot: Bot) -> None:
        if bot.bot_token is None:
            return
        team = None if bot.is_enterprise_install else bot.team_id
        await self._installations.save(
            self._key(bot.enterprise_id, team),
            installed_at=_when(bot.installed_at),
            document=_document(bot.to_dict_for_copying()),
        )

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        team = None if is_enterprise_install else team_id
        found = await self._installations.find(self._key(enterprise_id, team))
        return None if found is None else _bot(found)

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        team = None if is_enterprise_install else team_id
        key = self._key(enterprise_id, team, user_id)
        found = await self._installations.find(key, any_installer=True)
        if found is None:
            return None
        installation = _installation(found)
        bot = await self.async_find_bot(
            enterprise_id=enterprise_id, team_id=team, is_enterprise_install=is_enterprise_install
        )
        if bot is not None and bot.bot_token != installation.bot_token:
            # the workspace's latest bot token (a refresh, another installer's install)
            installation.bot_id = bot.bot_id
            installation.bot_user_id = bot.bot_user_id
            installation.bot_token = bot.bot_token
            installation.bot_scopes = bot.bot_scopes
            installation.bot_refresh_token = bot.bot_refresh_token
            installation.bot_token_expires_at = bot.bot_token_expires_at
        return installation

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        """The bot's token revoked (``tokens_revoked``): every row of the workspace goes, the
        installers' too, which carry a copy of it (the install asks for no user token)."""
        await self._installations.delete(self._key(enterprise_id, team_id), every_row=True)

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        key = self._key(enterprise_id, team_id, user_id)
        if user_id is None:
            await self._installations.delete(key, every_row=True)
        else:
            await self._installations.delete(key)

    async def async_delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self._installations.delete(self._key(enterprise_id, team_id), every_row=True)


class DatabaseStateStore(AsyncOAuthStateStore):
    """OAuth states on ``SqlOAuthStates``: random, kept as an HMAC, one use, ``lifetime``."""

    def __init__(
        self, states: SqlOAuthStates, *, secret: str, clock: Clock, lifetime: timedelta
    ) -> None:
        self._states = states
        self._secret = secret.encode()
        self._clock = clock
        self._lifetime = lifetime

    @property
    def logger(self) -> Any:
        return log

    def _key(self, state: str) -> str:
        return hmac.new(self._secret, state.encode(), hashlib.sha256).hexdigest()

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = secrets.token_urlsafe(32)
        await self._states.issue(self._key(state), issued_at=self._clock.now())
        return state

    async def async_consume(self, state: str) -> bool:
        return await self._states.consume(
            self._key(state), issued_after=self._clock.now() - self._lifetime
        )
