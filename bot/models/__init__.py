"""Model providers: resolving an agent's or a reply interpreter's ``model=`` to a chat model.

A model name (``"moonshotai/kimi-k2.6"``) goes to the first of the application's providers that
serves it; a ``langchain_core`` chat model instance is used as is. Decision models read an
approval as P(yes) from one completion's log-probabilities.
"""

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
