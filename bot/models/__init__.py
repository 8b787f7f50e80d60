"""Model providers: resolving an agent's or a reply interpreter's ``model=`` to a chat model.

A model name (``"moonshotai/kimi-k2.6"``) goes to the first of the application's providers that
serves it; a ``langchain_core`` chat model instance is used as is. Decision models read an
approval as P(yes) from one completion's log-probabilities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from bot.models.decision import (
        NO_TOKENS,
        YES_TOKENS,
        DecisionModelError,
        probability_of_yes,
        probability_of_yes_in,
    )
    from bot.models.openai_compatible import (
        OpenAICompatibleProvider,
        OpenAICompatibleSettings,
        providers_from_env,
    )
    from bot.models.provider import (
        ModelNamePattern,
        ModelProvider,
        ModelUnservedError,
        resolve_chat_model,
        serving_provider,
    )

__all__ = [
    "NO_TOKENS",
    "YES_TOKENS",
    "DecisionModelError",
    "ModelNamePattern",
    "ModelProvider",
    "ModelUnservedError",
    "OpenAICompatibleProvider",
    "OpenAICompatibleSettings",
    "probability_of_yes",
    "probability_of_yes_in",
    "providers_from_env",
    "resolve_chat_model",
    "serving_provider",
]

_EXPORTED_FROM: dict[str, str] = {
    "DecisionModelError": "bot.models.decision",
    "ModelNamePattern": "bot.models.provider",
    "ModelProvider": "bot.models.provider",
    "ModelUnservedError": "bot.models.provider",
    "NO_TOKENS": "bot.models.decision",
    "OpenAICompatibleProvider": "bot.models.openai_compatible",
    "OpenAICompatibleSettings": "bot.models.openai_compatible",
    "YES_TOKENS": "bot.models.decision",
    "probability_of_yes": "bot.models.decision",
    "probability_of_yes_in": "bot.models.decision",
    "providers_from_env": "bot.models.openai_compatible",
    "resolve_chat_model": "bot.models.provider",
    "serving_provider": "bot.models.provider",
}
"""Where each public name lives, imported on first use: LangChain loads only when a model
is made, so reading the model settings stays quick."""


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTED_FROM, __all__)
