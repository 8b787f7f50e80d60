"""Model providers: how a model name such as ``"moonshotai/kimi-k2.6"`` becomes a chat model.

An agent's or a reply interpreter's ``model=`` is either a ``langchain_core`` chat model instance
or a model name. A name is resolved by the application's providers, in order: the first provider
that ``serves`` the name makes the chat model. Assembly reports a name nobody serves as
``[model.unserved]``; ``resolve_chat_model`` raises ``ModelUnservedError`` for it at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.core.errors import UsageError
from bot.core.providers import ModelProvider as ModelProvider

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


class ModelUnservedError(UsageError, LookupError):
    """No provider serves a model name.

    A ``LookupError`` (the name was looked up and not found) and a ``UsageError`` with the
    stable code of the assembly rule it corresponds to.
    """

    code = "model.unserved"

    def __init__(self, model: str, providers: Sequence[str]) -> None:
        self.model = model
        self.providers: tuple[str, ...] = tuple(providers)
        super().__init__(_unserved_message(model, self.providers))


def _unserved_message(model: str, providers: tuple[str, ...]) -> str:
    if not providers:
        return (
            f"no model provider is configured, so nothing serves the model {model!r}: "
            "configure one (e.g. COUNTERSIGN_MODEL_BASE_URL, COUNTERSIGN_MODEL_API_KEY and "
            "COUNTERSIGN_MODEL_NAMES) or pass a chat model instance"
        )
    consulted = ", ".join(providers)
    return (
        f"no model provider serves the model {model!r} (consulted: {consulted}): "
        "add the name to a provider's model names or pass a chat model instance"
    )


def serving_provider(model: str, providers: Sequence[ModelProvider]) -> ModelProvider | None:
    """The first of ``providers`` that serves ``model``, or ``None``."""
    for provider in providers:
        if provider.serves(model):
            return provider
    return None


def resolve_chat_model(
    model: str | BaseChatModel, providers: Sequence[ModelProvider]
) -> BaseChatModel:
    """The chat model for an agent's or interpreter's ``model=``.

    An instance is returned as is; a name goes to the first provider that serves it.
    """
    from langchain_core.language_models import BaseChatModel

    if isinstance(model, BaseChatModel):
        return model
    provider = serving_provider(model, providers)
    if provider is None:
        raise ModelUnservedError(model, [p.name for p in providers])
    return provider.chat_model(model)


@dataclass(frozen=True, slots=True)
class ModelNamePattern:
    """Which model names a provider serves: an exact name, ``"prefix/*"``, or ``"*"`` for all.

    Only a trailing ``*`` is a wildcard; names are compared exactly (case-sensitive), as the
    OpenAI-compatible APIs compare them.
    """

    text: str

    def __post_init__(self) -> None:
        problem = _pattern_problem(self.text)
        if problem is not None:
            raise ValueError(f"model name pattern {self.text!r} {problem}")

    @property
    def is_wildcard(self) -> bool:
        return self.text.endswith("*")

    @property
    def prefix(self) -> str:
        """The part a matching name starts with (the whole name for an exact pattern)."""
        return self.text.removesuffix("*")

    def matches(self, model: str) -> bool:
        if self.is_wildcard:
            return model.startswith(self.prefix) and model != self.prefix
        return model == self.text

    def covers(self, other: ModelNamePattern) -> bool:
        """Whether every name ``other`` matches is matched by this pattern too."""
        if not other.is_wildcard:
            return self.matches(other.text)
        return self.is_wildcard and other.prefix.startswith(self.prefix)


def _pattern_problem(text: str) -> str | None:
    if not text:
        return "is empty"
    if any(ch.isspace() for ch in text):
        return "contains whitespace"
    if "*" in text[:-1]:
        return "has a '*' before its end: only a trailing '*' is a wildcard"
    return None


def matches_any(patterns: Sequence[ModelNamePattern], model: str) -> bool:
    """Whether any of ``patterns`` matches ``model``."""
    return any(pattern.matches(model) for pattern in patterns)
