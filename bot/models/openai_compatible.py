"""A model provider for any OpenAI-compatible Chat Completions endpoint (OpenRouter, vLLM, ...).

Models are ``langchain_openai.ChatOpenAI`` instances pointed at the configured base URL; they are
made on first use and cached per model name. Nothing here reaches the network until a model is
called, and LangChain is imported only then: reading the settings (``providers_from_env``) is
quick, so a process tells a bad setting before it loads LangChain.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import SecretStr

from bot.core.budget import ModelPrice
from bot.core.errors import SettingsError
from bot.models.provider import (
    ModelNamePattern,
    ModelProvider,
    ModelUnservedError,
    matches_any,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_openai import ChatOpenAI

DEFAULT_TIMEOUT = timedelta(seconds=60)
DEFAULT_MAX_RETRIES = 2

BASE_URL_SETTING = "COUNTERSIGN_MODEL_BASE_URL"
API_KEY_SETTING = "COUNTERSIGN_MODEL_API_KEY"
MODEL_NAMES_SETTING = "COUNTERSIGN_MODEL_NAMES"
DECISION_MODEL_NAMES_SETTING = "COUNTERSIGN_DECISION_MODEL_NAMES"
TIMEOUT_SETTING = "COUNTERSIGN_MODEL_TIMEOUT_SECONDS"

_REQUIRED_SETTINGS = (BASE_URL_SETTING, API_KEY_SETTING, MODEL_NAMES_SETTING)
_ALL_SETTINGS = (*_REQUIRED_SETTINGS, DECISION_MODEL_NAMES_SETTING, TIMEOUT_SETTING)


@dataclass(frozen=True, kw_only=True, slots=True)
class OpenAICompatibleSettings:
    """Where an OpenAI-compatible endpoint is and which model names it serves.

    ``models`` and ``decision_models`` hold exact names (``"moonshotai/kimi-k2.6"``), prefixes
    with a trailing ``*`` (``"moonshotai/*"``) or ``"*"`` for every name. ``decision_models`` are
    natively decision models (they read yes / no only); each must also be served by ``models``.
    ``prices`` gives what a model costs (by exact name), which the ledger of model calls counts;
    a model without a price costs 0.
    The API key is a ``SecretStr`` so that it never shows in a repr, a log line or an error.
    Invalid settings raise ``ValueError`` (``TypeError`` for a wrong type) at construction.
    """

    base_url: str
    api_key: SecretStr
    models: tuple[str, ...]
    decision_models: tuple[str, ...] = ()
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    timeout: timedelta = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    name: str = "openai-compatible"

    def __post_init__(self) -> None:
        _check_types(self)
        problem = _settings_problem(self)
        if problem is not None:
            raise ValueError(f"invalid OpenAI-compatible provider settings: {problem}")


def _check_types(settings: OpenAICompatibleSettings) -> None:
    # Checked at run time: a bare string would pass as a tuple of one-letter names, and a plain
    # str key would show in reprs.
    if not isinstance(settings.api_key, SecretStr):
        raise TypeError("api_key must be a pydantic SecretStr, so that it never shows in a repr")
    for field_name in ("models", "decision_models"):
        if not isinstance(getattr(settings, field_name), tuple):
            raise TypeError(f"{field_name} must be a tuple of model names")


def _settings_problem(settings: OpenAICompatibleSettings) -> str | None:
    url_problem = _base_url_problem(settings.base_url)
    if url_problem is not None:
        return f"base_url {url_problem}"
    if not settings.api_key.get_secret_value():
        return "api_key is empty"
    if not settings.models:
        return "models is empty: name at least one model or pattern"
    try:
        served = _patterns(settings.models)
        uncovered = _first_uncovered(_patterns(settings.decision_models), served)
    except ValueError as error:
        return str(error)
    if uncovered is not None:
        return f"decision model {uncovered.text!r} is not served by models"
    if settings.timeout <= timedelta(0):
        return "timeout must be positive"
    if settings.max_retries < 0:
        return "max_retries must not be negative"
    if not settings.name:
        return "name is empty"
    return None


def _base_url_problem(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL with a host, e.g. https://openrouter.ai/api/v1"
    return None


def _patterns(texts: tuple[str, ...]) -> tuple[ModelNamePattern, ...]:
    return tuple(ModelNamePattern(text) for text in texts)


def _first_uncovered(
    patterns: tuple[ModelNamePattern, ...], served: tuple[ModelNamePattern, ...]
) -> ModelNamePattern | None:
    for pattern in patterns:
        if not any(candidate.covers(pattern) for candidate in served):
            return pattern
    return None


class OpenAICompatibleProvider:
    """Serves ``ChatOpenAI`` models from one OpenAI-compatible endpoint.

    Each chat model uses the Chat Completions API (never the Responses API, which
    ``ChatOpenAI`` would otherwise pick for some model names and which most compatible
    endpoints lack), the settings' timeout and its retry budget (the ``openai`` client retries
    connection errors, timeouts, 408, 409, 429 and 5xx with backoff; never a 401).
    """

    def __init__(self, settings: OpenAICompatibleSettings) -> None:
        self._settings = settings
        self._served = _patterns(settings.models)
        self._decision = _patterns(settings.decision_models)
        self._chat_models: dict[str, ChatOpenAI] = {}

    @property
    def name(self) -> str:
        return self._settings.name

    @property
    def settings(self) -> OpenAICompatibleSettings:
        return self._settings

    def serves(self, model: str) -> bool:
        return matches_any(self._served, model)

    def is_decision_model(self, model: str) -> bool:
        return self.serves(model) and matches_any(self._decision, model)

    def price_of(self, model: str) -> ModelPrice | None:
        """What ``model`` costs, from the settings' ``prices`` (None: not priced, costs 0)."""
        return self._settings.prices.get(model)

    def chat_model(self, model: str) -> BaseChatModel:
        if not self.serves(model):
            raise ModelUnservedError(model, [self.name])
        chat_model = self._chat_models.get(model)
        if chat_model is None:
            chat_model = self._make_chat_model(model)
            self._chat_models[model] = chat_model
        return chat_model

    def _make_chat_model(self, model: str) -> ChatOpenAI:
        from langchain_openai import ChatOpenAI

        settings = self._settings
        return ChatOpenAI(
            model=model,
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout.total_seconds(),
            max_retries=settings.max_retries,
            use_responses_api=False,
        )

    def __repr__(self) -> str:
        settings = self._settings
        return (
            f"OpenAICompatibleProvider(name={settings.name!r}, base_url={settings.base_url!r}, "
            f"models={settings.models!r}, decision_models={settings.decision_models!r})"
        )


# --------------------------------------------------------------------------------------------
# Settings from the environment.


def providers_from_env(environ: Mapping[str, str]) -> list[ModelProvider]:
    """The model providers the environment configures: none, or one OpenAI-compatible provider.

    Reads ``COUNTERSIGN_MODEL_BASE_URL``, ``COUNTERSIGN_MODEL_API_KEY`` and
    ``COUNTERSIGN_MODEL_NAMES`` (comma-separated names or patterns), all three or none, and
    optionally ``COUNTERSIGN_DECISION_MODEL_NAMES`` and ``COUNTERSIGN_MODEL_TIMEOUT_SECONDS``.
    A blank value counts as unset (as ``.env.example`` leaves them). A missing or malformed
    setting raises ``SettingsError`` with one line naming it; no value of the key is ever shown.
    """
    values = {setting: environ.get(setting, "").strip() for setting in _ALL_SETTINGS}
    given = [setting for setting in _ALL_SETTINGS if values[setting]]
    if not given:
        return []
    timeout = _env_timeout(values[TIMEOUT_SETTING])  # its own mistake first, then what is missing
    _require_all(values, given)
    models = _env_patterns(MODEL_NAMES_SETTING, values[MODEL_NAMES_SETTING])
    decision_models = _env_patterns(
        DECISION_MODEL_NAMES_SETTING,
        values[DECISION_MODEL_NAMES_SETTING],
        optional=True,
    )
    _require_decision_models_served(decision_models, models)
    settings = OpenAICompatibleSettings(
        base_url=_env_base_url(values[BASE_URL_SETTING]),
        api_key=_env_api_key(values[API_KEY_SETTING]),
        models=tuple(pattern.text for pattern in models),
        decision_models=tuple(pattern.text for pattern in decision_models),
        timeout=timeout,
    )
    return [OpenAICompatibleProvider(settings)]


def _require_all(values: Mapping[str, str], given: list[str]) -> None:
    missing = [setting for setting in _REQUIRED_SETTINGS if not values[setting]]
    if not missing:
        return
    also = f" (so is {' and '.join(missing[1:])})" if len(missing) > 1 else ""
    raise SettingsError(
        f"{missing[0]} is missing{also}: set it together with {' and '.join(given)}"
    )


def _env_base_url(value: str) -> str:
    problem = _base_url_problem(value)
    if problem is not None:
        raise SettingsError(f"{BASE_URL_SETTING} is malformed: it {problem}")
    return value


def _env_api_key(value: str) -> SecretStr:
    if any(ch.isspace() for ch in value):
        raise SettingsError(f"{API_KEY_SETTING} is malformed: it contains whitespace")
    return SecretStr(value)


def _env_patterns(
    setting: str, value: str, *, optional: bool = False
) -> tuple[ModelNamePattern, ...]:
    if optional and not value:
        return ()
    patterns: list[ModelNamePattern] = []
    for position, text in enumerate(value.split(","), start=1):
        try:
            patterns.append(ModelNamePattern(text.strip()))
        except ValueError as error:
            raise SettingsError(
                f"{setting} is malformed: entry {position} of the comma-separated list: {error}"
            ) from None
    return tuple(patterns)


def _require_decision_models_served(
    decision_models: tuple[ModelNamePattern, ...], models: tuple[ModelNamePattern, ...]
) -> None:
    uncovered = _first_uncovered(decision_models, models)
    if uncovered is not None:
        raise SettingsError(
            f"{DECISION_MODEL_NAMES_SETTING} names {uncovered.text!r}, which "
            f"{MODEL_NAMES_SETTING} does not serve: add it there too"
        )


def _env_timeout(value: str) -> timedelta:
    if not value:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise SettingsError(
            f"{TIMEOUT_SETTING} is malformed: a positive number of seconds, not {value!r}"
        )
    return timedelta(seconds=seconds)
