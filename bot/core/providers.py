"""What a model provider is: it serves chat models by name (``bot.models`` has the providers).

A core type, as ``ChannelOf`` is: an application names its providers
(``@application(providers=[...])``), so the component specs refer to this Protocol, and the
layers below ``bot.models`` must be able to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


@runtime_checkable
class ModelProvider(Protocol):
    """Serves chat models by name.

    ``name`` is a read-only member so that both a plain attribute and a property satisfy it.
    A class that subclasses this protocol explicitly inherits ``is_decision_model`` (always
    ``False``); a structural implementation must define it.
    """

    @property
    def name(self) -> str:
        """A short name for messages, e.g. ``"openrouter"``."""
        ...

    def serves(self, model: str) -> bool:
        """Whether this provider can make a chat model for ``model``. Never reaches the network."""
        ...

    def chat_model(self, model: str) -> BaseChatModel:
        """The chat model for ``model``; ``ModelUnservedError`` when not ``serves(model)``."""
        ...

    def is_decision_model(self, model: str) -> bool:
        """Whether ``model`` is natively a decision model: it reads yes / no only.

        Such a model answers an approval with its probability of "yes" and nothing else (no reason,
        no changed arguments), so only approval roles may use it.
        """
        return False
