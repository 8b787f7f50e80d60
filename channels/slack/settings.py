"""The Slack bot's settings, from the environment over ``.env``; each bad one is one clear line.

Build ``SlackSettings`` directly in code and tests (``SlackSettings(bot_token=...,
signing_secret=..., api_url=stub_url)``) or with :func:`load_slack_settings` in a process.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Final, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from bot.core.errors import SettingsError
from bot.settings import PORT_NUMBER, environment, malformed

DEFAULT_API_URL: Final = "https://slack.com/api/"
DEFAULT_PORT: Final = 3000
DEFAULT_API_TIMEOUT_SECONDS: Final = 10.0
"""How long one Web API call may take, retries apart (aiohttp's own default is 300 s: a hung
call would hold the work behind it for minutes)."""
DEFAULT_MAX_BODY_BYTES: Final = 1024 * 1024
"""Slack's own payloads are far smaller (a message's blocks are capped well below this)."""

ENVIRONMENT: Final[Mapping[str, str]] = {
    "SLACK_BOT_TOKEN": "bot_token",
    "SLACK_SIGNING_SECRET": "signing_secret",
    "SLACK_APP_TOKEN": "app_token",
    "SLACK_API_URL": "api_url",
    "PORT": "port",
    "COUNTERSIGN_TENANT": "tenant",
    "SLACK_MAX_BODY_BYTES": "max_body_bytes",
    "SLACK_SHUTDOWN_GRACE_SECONDS": "shutdown_grace_seconds",
    "SLACK_API_TIMEOUT_SECONDS": "api_timeout_seconds",
    "SLACK_CLIENT_ID": "client_id",
    "SLACK_CLIENT_SECRET": "client_secret",
    "SLACK_STATE_SECRET": "state_secret",
    "SLACK_REDIRECT_URI": "redirect_uri",
}
"""Environment variable → field. Error messages name the variable, never the field."""

_VARIABLE_OF: Final[Mapping[str, str]] = {field: name for name, field in ENVIRONMENT.items()}

_EXPECTED: Final[Mapping[str, str]] = {
    "port": PORT_NUMBER,
    "max_body_bytes": "a number of bytes, at least 1024",
    "shutdown_grace_seconds": "a number of seconds, 0 or more",
    "api_timeout_seconds": "a number of seconds, more than 0 and at most 120",
}
"""What each field takes, for the line a bad value gets (``PORT`` like the web desk's)."""

_HOW_TO_GET: Final[Mapping[str, str]] = {
    "bot_token": "create the Slack app from manifest.yml and copy its Bot User OAuth Token "
    "(OAuth & Permissions, xoxb-...)",
    "signing_secret": "copy the Signing Secret from the Slack app's Basic Information page",
}

OAUTH_SETTINGS: Final = ("SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "SLACK_STATE_SECRET")
"""Installed by OAuth in several workspaces: all three instead of ``SLACK_BOT_TOKEN``."""
_HOW_TO_GET_OAUTH: Final[Mapping[str, str]] = {
    "SLACK_CLIENT_ID": "copy the Client ID from the Slack app's Basic Information page",
    "SLACK_CLIENT_SECRET": "copy the Client Secret from the Slack app's Basic Information page",
    "SLACK_STATE_SECRET": "put a long random string of your own (openssl rand -hex 32 makes one)",
}


class SlackSettings(BaseModel):
    """What the Slack side needs: the tokens, where the Web API is, how to serve."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bot_token: SecretStr = SecretStr("")
    """One workspace's bot token (``xoxb-...``); empty when installed by OAuth."""
    signing_secret: SecretStr
    app_token: SecretStr | None = None
    """An app-level token (``xapp-...``, scope ``connections:write``): serve over Socket Mode."""
    api_url: str = DEFAULT_API_URL
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    tenant: str | None = None
    """A fixed tenant id; by default each Slack workspace (team id) is its own tenant."""
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=1024)
    shutdown_grace_seconds: float = Field(default=10.0, ge=0)
    api_timeout_seconds: float = Field(default=DEFAULT_API_TIMEOUT_SECONDS, gt=0, le=120)
    """How long one Web API call may take before it counts as a connection error."""
    client_id: str | None = None
    """The app's Client ID: installed by OAuth (``/slack/install``) in any number of
    workspaces, each installation's tokens in the App's database."""
    client_secret: SecretStr | None = None
    state_secret: SecretStr | None = None
    """Keys the OAuth states kept while an install is under way."""
    redirect_uri: str | None = None
    """The OAuth redirect URL, when Slack's app settings name more than one."""

    @field_validator("bot_token")
    @classmethod
    def _bot_token(cls, value: SecretStr) -> SecretStr:
        token = value.get_secret_value().strip()
        if token and not token.startswith("xoxb-"):
            raise ValueError("a bot token starts with xoxb-")
        return SecretStr(token)

    @field_validator("signing_secret")
    @classmethod
    def _signing_secret(cls, value: SecretStr) -> SecretStr:
        if not value.get_secret_value().strip():
            raise ValueError("it is empty")
        return SecretStr(value.get_secret_value().strip())

    @field_validator("app_token")
    @classmethod
    def _app_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        if not value.get_secret_value().strip().startswith("xapp-"):
            raise ValueError("an app-level token starts with xapp-")
        return SecretStr(value.get_secret_value().strip())

    @field_validator("client_id", "redirect_uri")
    @classmethod
    def _plain(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @field_validator("client_secret", "state_secret")
    @classmethod
    def _secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        return SecretStr(value.get_secret_value().strip())

    @model_validator(mode="after")
    def _one_mode(self) -> Self:
        oauth = (self.client_id, self.client_secret, self.state_secret)
        if not self.bot_token.get_secret_value() and None in oauth:
            raise ValueError(
                "give SLACK_BOT_TOKEN, or SLACK_CLIENT_ID, SLACK_CLIENT_SECRET "
                "and SLACK_STATE_SECRET to install by OAuth"
            )
        return self

    @property
    def oauth(self) -> bool:
        """Installed by OAuth: the tokens are the installations', not ``bot_token``."""
        return not self.bot_token.get_secret_value()

    @field_validator("api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        value = value.strip() or DEFAULT_API_URL
        if not value.startswith(("http://", "https://")):
            raise ValueError("it must be an http:// or https:// URL")
        return value if value.endswith("/") else value + "/"

    @field_validator("tenant")
    @classmethod
    def _tenant(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @property
    def socket_mode(self) -> bool:
        return self.app_token is not None

    @property
    def shutdown_grace(self) -> timedelta:
        return timedelta(seconds=self.shutdown_grace_seconds)

    @property
    def api_timeout(self) -> timedelta:
        return timedelta(seconds=self.api_timeout_seconds)


def load_slack_settings(
    environ: Mapping[str, str] | None = None, *, env_file: str | None = ".env"
) -> SlackSettings:
    """Settings from ``environ`` (default: the process environment) over ``env_file``.

    Blank values count as missing. Raises ``SettingsError`` naming the first bad variable.
    """
    values = environment(environ, env_file=env_file)
    fields = {field: values[name].strip() for name, field in ENVIRONMENT.items() if name in values}
    oauth = "bot_token" not in fields and any(name in values for name in OAUTH_SETTINGS)
    for name in OAUTH_SETTINGS if oauth else ():
        if not values.get(name, "").strip():
            raise SettingsError(f"{name} is missing: {_HOW_TO_GET_OAUTH[name]} into .env")
    for name, field in ENVIRONMENT.items():
        if field in _HOW_TO_GET and field not in fields and not (oauth and field == "bot_token"):
            raise SettingsError(f"{name} is missing: {_HOW_TO_GET[field]} into .env")
    try:
        return SlackSettings.model_validate(fields)
    except ValidationError as error:
        raise malformed(
            error, lambda field: _VARIABLE_OF.get(field, "a Slack setting"), expected=_EXPECTED
        ) from None
