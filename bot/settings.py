"""Settings from the environment and ``.env``; each bad one is one clear line naming it.

The one way every setting is read (the runtime's here, the Slack channel's, the office desk's):
:func:`environment` (the environment over ``.env``, blank is unset) and :func:`malformed` (a
validation error as one ``SettingsError`` line naming the variable). Not pydantic-settings: a
``BaseSettings`` built directly (``SlackSettings(bot_token=...)`` in a test) also reads the
process environment, so a developer's ``SLACK_APP_TOKEN`` would switch the test to Socket Mode;
and an injected ``environ`` (every test of these loaders) needs a custom source.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, Literal

from dotenv import dotenv_values
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from bot.core.errors import SettingsError
from bot.store.database import DEFAULT_DATABASE_URL, database_url_problem

if TYPE_CHECKING:
    from bot.models import ModelProvider

PORT_NUMBER: Final = "a port number (1 to 65535)"
"""What a port setting takes, in the words every loader uses (``PORT``, the metrics port)."""
LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")
BIND_ADDRESS: Final = (
    "an IP address of this machine (0.0.0.0: every interface; 127.0.0.1: this machine only)"
)


class Settings(BaseModel):
    """The runtime's settings (the Slack settings live in ``channels.slack``).

    Build it with ``load_settings()`` (environment over ``.env``) or directly in tests.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    database_url: str = DEFAULT_DATABASE_URL
    countersign_app: str | None = None
    countersign_model_base_url: str | None = None
    countersign_model_api_key: str | None = None
    countersign_model_names: str | None = None
    countersign_decision_model_names: str | None = None
    countersign_model_timeout_seconds: str | None = None
    countersign_metrics_port: int | None = Field(default=None, ge=1, le=65535)
    """A port of its own serving ``/metrics``, ``/healthz`` and ``/readyz`` (Socket Mode has no
    HTTP server; with HTTP they are on ``PORT`` too)."""
    countersign_log_format: Literal["text", "json"] = "text"
    """``json``: one JSON object per log line (``bot.cli.logs``)."""
    countersign_log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """The least severe records logged (any case): at ``INFO`` each answer is a line, and so is
    each notice of the web desk's default notifier; ``WARNING`` leaves only what went wrong."""
    countersign_bind_address: str | None = None
    """The address ``serve`` binds its ports to (``PORT``, the web desk's, the metrics port):
    an IP address; unset, every interface for Slack (it must reach ``/slack/events``) and this
    machine only for the web desk of a fresh clone."""
    countersign_readyz_slack: bool = False
    """``1``/``true``: ``/readyz`` also asks Slack whether the bot token works (``auth.test``,
    its answer kept 30 s) and answers 503 naming ``slack`` when it does not."""
    countersign_sweep_interval_seconds: float = Field(default=3.0, gt=0, le=60)
    """How often each sweep runs (recovery, deadlines, reminders, untold ends, deliveries):
    with the lease's 8 s, a tree whose instance died is continued within about 11 s."""
    countersign_metrics_token: SecretStr | None = Field(default=None, repr=False)
    """When set, ``/metrics`` answers only ``Authorization: Bearer <token>`` (else 401): the
    Slack ``PORT`` is public. At least 16 characters of a bearer token's alphabet."""

    @field_validator("countersign_log_level", mode="before")
    @classmethod
    def _any_case(cls, level: object) -> object:
        named = level.strip().upper() if isinstance(level, str) else level
        return named if named in LOG_LEVELS else level  # a wrong one is shown as given

    @field_validator("countersign_bind_address")
    @classmethod
    def _an_ip_address(cls, address: str | None) -> str | None:
        if address is None:
            return None
        try:
            return str(ipaddress.ip_address(address.strip()))
        except ValueError:
            raise ValueError(f"{BIND_ADDRESS}, not {_shown(address)}") from None

    @field_validator("countersign_metrics_token")
    @classmethod
    def _a_bearer_token(cls, token: SecretStr | None) -> SecretStr | None:
        value = None if token is None else token.get_secret_value()
        if value is not None and not re.fullmatch(r"[A-Za-z0-9._~+/=-]{16,}", value):
            raise ValueError(
                "at least 16 characters of letters, digits and ._~+/=- "
                "(python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
        return token

    countersign_encryption_keys: str | None = Field(default=None, repr=False)
    """``<key-id>:<base64 32 bytes>``, comma-separated, current key first (``bot.security``).

    Blank is unset: on a SQLite file a key file beside it is used (made once), in memory a
    random key; PostgreSQL refuses to start without it. Never shown in a repr.
    """

    @property
    def sweep_interval(self) -> timedelta:
        return timedelta(seconds=self.countersign_sweep_interval_seconds)

    def model_providers(self) -> list[ModelProvider]:
        """The OpenAI-compatible provider these settings describe, if any."""
        from bot.models import providers_from_env  # LangChain loads only when models are needed

        environ = {
            "COUNTERSIGN_MODEL_BASE_URL": self.countersign_model_base_url,
            "COUNTERSIGN_MODEL_API_KEY": self.countersign_model_api_key,
            "COUNTERSIGN_MODEL_NAMES": self.countersign_model_names,
            "COUNTERSIGN_DECISION_MODEL_NAMES": self.countersign_decision_model_names,
            "COUNTERSIGN_MODEL_TIMEOUT_SECONDS": self.countersign_model_timeout_seconds,
        }
        return providers_from_env({k: v for k, v in environ.items() if v is not None})


def environment(
    environ: Mapping[str, str] | None = None, *, env_file: str | None = ".env"
) -> dict[str, str]:
    """``environ`` (default: the process environment) over ``env_file``; blank values dropped.

    A blank setting (``DATABASE_URL=`` as ``.env.example`` has it) is an unset one.
    """
    values: dict[str, str] = {}
    if env_file and os.path.exists(env_file):
        values.update({k: v for k, v in dotenv_values(env_file).items() if v is not None})
    values.update(os.environ if environ is None else environ)
    return {name: value for name, value in values.items() if value.strip()}


def load_settings(
    environ: Mapping[str, str] | None = None, *, env_file: str | None = ".env"
) -> Settings:
    """Settings from ``environ`` (default: the process environment) over ``env_file``."""
    values = {k.lower(): v for k, v in environment(environ, env_file=env_file).items()}
    known = set(Settings.model_fields)
    try:
        settings = Settings.model_validate({k: v for k, v in values.items() if k in known})
    except ValidationError as error:
        raise malformed(error, str.upper, expected=_EXPECTED) from None
    problem = database_url_problem(settings.database_url)
    if problem is not None:
        raise SettingsError(f"DATABASE_URL: {problem}")
    return settings


_EXPECTED: Final[Mapping[str, str]] = {
    "countersign_metrics_port": PORT_NUMBER,
    "countersign_log_format": "text or json",
    "countersign_log_level": ", ".join(LOG_LEVELS[:-1]) + f" or {LOG_LEVELS[-1]}",
    "countersign_readyz_slack": "1 or 0 (or true or false)",
    "countersign_sweep_interval_seconds": "a number of seconds, more than 0 and at most 60",
}


def malformed(
    error: ValidationError,
    variable: Callable[[str], str],
    *,
    expected: Mapping[str, str] | None = None,
) -> SettingsError:
    """The first problem of ``error`` as one line naming its variable (``variable(field)``), in
    our words, never pydantic's: ``expected[field]`` (``"a port number (1 to 65535)"``), else
    what the kind of problem says is wanted, then the value given (``not 'abc'``). A validator
    of ours words its own problem (and never shows a secret it was given)."""
    first = error.errors()[0]
    field = str(first["loc"][0]) if first.get("loc") else ""
    name = variable(field) if field else "a setting"
    if first["type"] == "missing":
        return SettingsError(f"{name} is missing")
    if first["type"] == "value_error":  # one of our validators: its own words
        message = str(first["msg"]).removeprefix("Value error, ")
        return SettingsError(f"{name} is malformed: {message}")
    wanted = (expected or {}).get(field) or _wanted(first["type"], first.get("ctx") or {})
    return SettingsError(f"{name} is malformed: {wanted}, not {_shown(first.get('input'))}")


def _wanted(kind: str, ctx: Mapping[str, Any]) -> str:
    """What a value must be, by the kind of problem pydantic found (its own words left out)."""
    match kind:
        case "int_parsing" | "int_type" | "int_from_float":
            return "a whole number"
        case "float_parsing" | "float_type" | "finite_number":
            return "a number"
        case "bool_parsing" | "bool_type":
            return "1 or 0 (or true or false)"
        case "literal_error":
            return str(ctx.get("expected", "one of the values it takes"))
        case "greater_than_equal":
            return f"at least {ctx.get('ge')}"
        case "greater_than":
            return f"more than {ctx.get('gt')}"
        case "less_than_equal":
            return f"at most {ctx.get('le')}"
        case "less_than":
            return f"less than {ctx.get('lt')}"
        case _:
            return "a value it takes"


def _shown(value: object, limit: int = 60) -> str:
    """A value given, quoted and cut short (a setting's value is a line of the environment)."""
    text = value if isinstance(value, str) else repr(value)
    return repr(text if len(text) <= limit else text[:limit] + "…")
