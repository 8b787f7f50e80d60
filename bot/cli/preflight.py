"""Every setting a served process reads, checked before anything heavy loads.

Bolt, LangGraph and LangChain take seconds to import; a person who mistyped ``PORT`` should
not wait for them to learn it. So ``python -m bot`` checks here first, with light modules only
(pydantic, SQLAlchemy's URL rules, the settings loaders): the Slack settings, the runtime's (log
format and level, bind address, metrics port and token, the model provider), the encryption
keys' form, the desk's settings and whether its model is served (or, with ``COUNTERSIGN_GRAPH``,
the served graphs' targets, approvers and assistant prompts), and the ``OTEL_*`` settings.
Each problem is one ``SettingsError`` line. What needs the heavy modules is checked after them:
``COUNTERSIGN_APP`` and ``COUNTERSIGN_GRAPH``'s graphs (imported), the bot token
(``auth.test``), the database.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from bot.cli.traces import trace_export
from bot.core.errors import SettingsError
from bot.desk.settings import (
    OFFLINE_MODEL,
    DeskSettings,
    check_desk_model,
    load_desk_settings,
    load_served_settings,
)
from bot.security.key_source import key_source
from bot.settings import PORT_NUMBER, Settings, environment, load_settings
from channels.slack.settings import load_slack_settings

WEB_DESK_PORT: Final = 8000
"""The web desk's port without ``PORT`` (``serve`` uses Slack's default, 3000)."""


def check_slack_serve(
    environ: Mapping[str, str] | None = None, env_file: Path = Path(".env")
) -> None:
    """``python -m bot serve``'s settings; the first problem as a ``SettingsError``."""
    load_slack_settings(environ, env_file=str(env_file))
    settings = _runtime(environ, env_file)
    if load_served_settings(environ, env_file=str(env_file), slack=True) is not None:
        return  # your graphs: no desk to check (they are imported after the heavy modules)
    if not (settings.countersign_app or "").strip():
        desk = load_desk_settings(environ, env_file=str(env_file))
        check_desk_model(desk, settings.model_providers())


def check_web_desk(environ: Mapping[str, str] | None = None, env_file: Path = Path(".env")) -> int:
    """The web desk's settings (``python -m bot`` without Slack); its port."""
    port = web_desk_port(environment(environ, env_file=str(env_file)).get("PORT", ""))
    settings = _runtime(environ, env_file)
    if load_served_settings(environ, env_file=str(env_file), slack=False) is None:
        check_desk_model(web_desk_settings(environ, env_file), settings.model_providers())
    return port


def _runtime(environ: Mapping[str, str] | None, env_file: Path) -> Settings:
    settings = load_settings(environ, env_file=str(env_file))
    key_source(settings.database_url, settings.countersign_encryption_keys)
    settings.model_providers()  # the provider's settings, read (LangChain loads on first use)
    trace_export(environ)
    return settings


def web_desk_settings(environ: Mapping[str, str] | None, env_file: Path) -> DeskSettings:
    """The web desk's model (``COUNTERSIGN_DESK_MODEL``, else the offline demo model)."""
    values = environment(environ, env_file=str(env_file))
    model = values.get("COUNTERSIGN_DESK_MODEL", "").strip() or OFFLINE_MODEL
    return DeskSettings(approval_channel="", approvers=(), model=model)


def web_desk_port(text: str) -> int:
    """``PORT`` for the web desk: :data:`WEB_DESK_PORT` when blank."""
    text = text.strip()
    if not text:
        return WEB_DESK_PORT
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise SettingsError(f"PORT is malformed: {PORT_NUMBER}, not {text!r}")
    return int(text)
