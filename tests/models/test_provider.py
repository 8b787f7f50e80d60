"""Model name patterns and resolving ``model=`` through the application's providers."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from bot.core.errors import CountersignError
from bot.models import (
    ModelNamePattern,
    ModelProvider,
    ModelUnservedError,
    resolve_chat_model,
    serving_provider,
)


class NamedProvider(ModelProvider):
    """A provider serving fixed names; subclasses the protocol to inherit is_decision_model."""

    def __init__(self, name: str, models: Sequence[str]) -> None:
        self._name = name
        self._models = frozenset(models)
        self.made: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    def serves(self, model: str) -> bool:
        return model in self._models

    def chat_model(self, model: str) -> BaseChatModel:
        if not self.serves(model):
            raise ModelUnservedError(model, [self.name])
        self.made.append(model)
        return fake_model(f"{self.name}:{model}")


def fake_model(text: str) -> BaseChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=text)]))


# --------------------------------------------------------------------------------------------
# Patterns


@pytest.mark.parametrize(
    ("pattern", "model", "expected"),
    [
        ("moonshotai/kimi-k2.6", "moonshotai/kimi-k2.6", True),
        ("moonshotai/kimi-k2.6", "moonshotai/kimi-k2.5", False),
        ("moonshotai/kimi-k2.6", "MoonshotAI/kimi-k2.6", False),
        ("moonshotai/kimi-k2.6", "moonshotai/kimi-k2.6:free", False),
        ("moonshotai/*", "moonshotai/kimi-k2.6", True),
        ("moonshotai/*", "moonshotai/", False),
        ("moonshotai/*", "moonshotai", False),
        ("moonshotai/*", "openai/gpt-4o", False),
        ("moonshotai/kimi-*", "moonshotai/kimi-k2.6", True),
        ("*", "anything/at-all", True),
        ("*", "gpt-4o", True),
        ("*", "", False),
    ],
)
def test_pattern_matching(pattern: str, model: str, expected: bool) -> None:
    assert ModelNamePattern(pattern).matches(model) is expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "is empty"),
        ("moonshot ai/kimi", "whitespace"),
        ("*/kimi", "trailing '*'"),
        ("moonshotai/*-k2", "trailing '*'"),
    ],
)
def test_invalid_patterns_are_refused(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        ModelNamePattern(text)


@pytest.mark.parametrize(
    ("wider", "narrower", "expected"),
    [
        ("*", "moonshotai/*", True),
        ("*", "moonshotai/kimi-k2.6", True),
        ("moonshotai/*", "moonshotai/*", True),
        ("moonshotai/*", "moonshotai/kimi-*", True),
        ("moonshotai/*", "moonshotai/kimi-k2.6", True),
        ("moonshotai/kimi-*", "moonshotai/*", False),
        ("moonshotai/kimi-k2.6", "moonshotai/*", False),
        ("moonshotai/kimi-k2.6", "moonshotai/kimi-k2.6", True),
        ("openai/*", "moonshotai/kimi-k2.6", False),
    ],
)
def test_pattern_covers(wider: str, narrower: str, expected: bool) -> None:
    assert ModelNamePattern(wider).covers(ModelNamePattern(narrower)) is expected


# --------------------------------------------------------------------------------------------
# Resolution


def test_instance_is_returned_as_is_without_consulting_providers() -> None:
    provider = NamedProvider("a", ["x"])
    instance = fake_model("mine")

    assert resolve_chat_model(instance, [provider]) is instance
    assert provider.made == []


def test_first_provider_that_serves_the_name_wins() -> None:
    first = NamedProvider("first", ["moonshotai/kimi-k2.6"])
    second = NamedProvider("second", ["moonshotai/kimi-k2.6", "other"])

    resolve_chat_model("moonshotai/kimi-k2.6", [first, second])
    resolve_chat_model("other", [first, second])

    assert first.made == ["moonshotai/kimi-k2.6"]
    assert second.made == ["other"]
    assert serving_provider("moonshotai/kimi-k2.6", [first, second]) is first
    assert serving_provider("other", [first, second]) is second
    assert serving_provider("nobody/serves-this", [first, second]) is None


def test_unserved_name_names_the_model_and_every_provider_consulted() -> None:
    providers = [NamedProvider("openrouter", ["a"]), NamedProvider("local-vllm", ["b"])]

    with pytest.raises(ModelUnservedError) as caught:
        resolve_chat_model("moonshotai/kimi-k2.6", providers)

    error = caught.value
    assert error.model == "moonshotai/kimi-k2.6"
    assert error.providers == ("openrouter", "local-vllm")
    assert "'moonshotai/kimi-k2.6'" in str(error)
    assert "openrouter, local-vllm" in str(error)
    assert str(error).startswith("[model.unserved] ")


def test_unserved_name_without_providers_says_none_is_configured() -> None:
    with pytest.raises(ModelUnservedError, match="no model provider is configured") as caught:
        resolve_chat_model("moonshotai/kimi-k2.6", [])

    assert caught.value.providers == ()
    assert "COUNTERSIGN_MODEL_NAMES" in str(caught.value)


def test_unserved_error_is_a_lookup_error_and_a_countersign_error() -> None:
    error = ModelUnservedError("m", ["p"])

    assert isinstance(error, LookupError)
    assert isinstance(error, CountersignError)
    assert error.code == "model.unserved"


def test_is_decision_model_defaults_to_false_for_protocol_subclasses() -> None:
    provider = NamedProvider("a", ["x"])

    assert provider.is_decision_model("x") is False
    assert isinstance(provider, ModelProvider)
