"""The Slack app installed by OAuth in several workspaces: Bolt's OAuth flow on our stores.

With ``SLACK_CLIENT_ID``, ``SLACK_CLIENT_SECRET`` and ``SLACK_STATE_SECRET`` (instead of
``SLACK_BOT_TOKEN``), ``GET /slack/install`` offers "Add to Slack" and
``GET /slack/oauth_redirect`` finishes the install (``oauth.v2.access``), both Bolt's own
(``AsyncOAuthFlow``). Installations are kept in the App's database, their tokens sealed
(``channels.slack.installations``); each request is authorized with its workspace's token by
Bolt's ``AsyncInstallationStoreAuthorize``, which refreshes a rotating token
(``oauth.v2.access`` with ``grant_type=refresh_token``) before it expires and saves it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization.async_authorize import AsyncInstallationStoreAuthorize
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.listener.async_builtins import AsyncTokenRevocationListeners
from slack_bolt.oauth.async_oauth_flow import AsyncOAuthFlow
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.web.async_client import AsyncWebClient

from bot.app import App
from bot.core.errors import SetupError
from channels.slack.installations import DatabaseInstallationStore, DatabaseStateStore
from channels.slack.redaction import bolt_log
from channels.slack.settings import SlackSettings
from channels.slack.tasks import BackgroundTasks

BOT_SCOPES: Final = (
    "chat:write",
    "commands",
    "channels:history",
    "groups:history",
    "im:history",
    "im:write",
    "app_mentions:read",
    "users:read",
    "usergroups:read",
    "assistant:write",
)
"""What the install asks for: the bot scopes of ``manifest.yml`` (a test keeps them equal)."""
STATE_LIFETIME: Final = timedelta(minutes=10)
"""How long an install may take between "Add to Slack" and Slack's redirect back."""
INSTALL_PATH: Final = "/slack/install"
REDIRECT_PATH: Final = "/slack/oauth_redirect"
AUTHORIZATION_URL: Final = "https://slack.com/oauth/v2/authorize"
TOKEN_REFRESH_BEFORE: Final = timedelta(minutes=120)
"""A rotating token is refreshed when it expires within this (Bolt's default)."""


def oauth_settings(app: App, settings: SlackSettings, client: AsyncWebClient) -> AsyncOAuthSettings:
    """Bolt's OAuth settings for ``settings`` (installed by OAuth), on ``app``'s database.

    ``client`` (the bot's, without a token) makes every call: the code exchange, the token
    refreshes (Bolt's own authorize would make a client of its own, at slack.com)."""
    client_id, secret, state_secret = (
        settings.client_id,
        settings.client_secret,
        settings.state_secret,
    )
    if client_id is None or secret is None or state_secret is None:
        raise SetupError("oauth_settings: the Slack settings are not for an install by OAuth")
    store = DatabaseInstallationStore(client_id, app.installations)
    oauth = AsyncOAuthSettings(
        client_id=client_id,
        client_secret=secret.get_secret_value(),
        scopes=list(BOT_SCOPES),
        user_scopes=[],
        redirect_uri=settings.redirect_uri,
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        authorization_url=AUTHORIZATION_URL,
        installation_store=store,
        token_rotation_expiration_minutes=int(TOKEN_REFRESH_BEFORE.total_seconds() // 60),
        state_store=DatabaseStateStore(
            app.oauth_states,
            secret=state_secret.get_secret_value(),
            clock=app.clock,
            lifetime=STATE_LIFETIME,
        ),
        state_expiration_seconds=int(STATE_LIFETIME.total_seconds()),
        logger=bolt_log,
    )
    oauth.authorize = AsyncInstallationStoreAuthorize(
        logger=bolt_log,
        installation_store=store,
        client_id=client_id,
        client_secret=secret.get_secret_value(),
        token_rotation_expiration_minutes=oauth.token_rotation_expiration_minutes,
        client=client,
    )
    return oauth


def register_revocations(
    bolt: AsyncApp, store: DatabaseInstallationStore, tasks: BackgroundTasks
) -> None:
    """``app_uninstalled`` and ``tokens_revoked``: Bolt's own handlers delete the workspace's
    tokens, in a kept task (Bolt's ``enable_token_revocation_listeners`` would run them in one
    nobody waits for). The workspace's waiting questions are kept: a reinstall answers them."""
    revocations = AsyncTokenRevocationListeners(store)

    async def uninstalled(context: AsyncBoltContext) -> None:
        tasks.spawn(revocations.handle_app_uninstalled_events(context), name="slack uninstall")

    async def revoked(event: dict[str, Any], context: AsyncBoltContext) -> None:
        work = revocations.handle_tokens_revoked_events(event, context)
        tasks.spawn(work, name="slack tokens revoked")

    bolt.event("app_uninstalled")(uninstalled)
    bolt.event("tokens_revoked")(revoked)


def add_install_routes(application: web.Application, flow: AsyncOAuthFlow) -> None:
    """``GET /slack/install`` and ``GET /slack/oauth_redirect``, Bolt's handlers (as its own
    aiohttp server mounts them)."""

    async def install(request: web.Request) -> web.Response:
        return await to_aiohttp_response(
            await flow.handle_installation(await to_bolt_request(request))
        )

    async def redirect(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await flow.handle_callback(await to_bolt_request(request)))

    application.router.add_get(flow.install_path, install)
    application.router.add_get(flow.redirect_uri_path, redirect)
