"""The OpenAI-compatible provider, against a local stub of the Chat Completions HTTP API.

The stub is an ``aiohttp.web`` app on 127.0.0.1 (a random port) that records every request and
answers with scripted responses. No test reaches the internet.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import openai
import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer
from langchain_core.exceptions import ModelAuthenticationError, ModelTimeoutError
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel, Field, SecretStr

from bot.core.errors import SettingsError
from bot.models import (
    DecisionModelError,
    ModelProvider,
    ModelUnservedError,
    OpenAICompatibleProvider,
    OpenAICompatibleSettings,
    probability_of_yes,
    providers_from_env,
    resolve_chat_model,
)

MODEL = "moonshotai/kimi-k2.6"
API_KEY = "sk-or-v1-test-secret-0123456789"


@pytest.fixture(autouse=True)
def _offline_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep proxies, tracing and OpenAI defaults of the machine out of the tests."""
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "OPENAI_PROXY",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_ORG_ID",
        "OPENAI_ORGANIZATION",
        "LANGSMITH_TRACING",
        "LANGCHAIN_TRACING_V2",
        "LC_OUTPUT_VERSION",
    ):
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------------------------
# The stub


@dataclass(frozen=True, kw_only=True)
class Scripted:
    """One scripted answer; ``hang`` holds it until the test ends (beyond any timeout)."""

    status: int = 200
    body: Mapping[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    hang: bool = False


@dataclass(frozen=True, kw_only=True)
class Received:
    body: dict[str, Any]
    headers: Mapping[str, str]


class CompletionsStub:
    """``POST /v1/chat/completions``: records each request, answers the next scripted response."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._script: deque[Scripted] = deque()
        self._released = asyncio.Event()
        self.base_url = ""

    def script(self, *responses: Scripted) -> None:
        self._script.extend(responses)

    def release(self) -> None:
        self._released.set()

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append(Received(body=await request.json(), headers=dict(request.headers)))
        if not self._script:
            return web.json_response(
                {"error": {"message": "no scripted response left"}}, status=500
            )
        scripted = self._script.popleft()
        if scripted.hang:
            await self._released.wait()
        return web.json_response(
            dict(scripted.body), status=scripted.status, headers=scripted.headers
        )


@pytest_asyncio.fixture
async def stub() -> AsyncIterator[CompletionsStub]:
    completions = CompletionsStub()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    completions.base_url = str(server.make_url("/v1"))
    try:
        yield completions
    finally:
        completions.release()
        await server.close()


def completion(
    message: Mapping[str, Any],
    *,
    finish_reason: str = "stop",
    logprobs: Mapping[str, Any] | None = None,
) -> Scripted:
    return Scripted(
        body={
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": dict(message),
                    "finish_reason": finish_reason,
                    "logprobs": logprobs,
                }
            ],
            "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10},
        }
    )


def text_reply(text: str) -> Scripted:
    return completion({"role": "assistant", "content": text})


def error(status: int, message: str, *, headers: Mapping[str, str] | None = None) -> Scripted:
    return Scripted(
        status=status,
        body={"error": {"message": message, "type": "test_error", "code": status}},
        headers=headers or {},
    )


def provider_for(
    stub: CompletionsStub,
    *,
    models: tuple[str, ...] = ("moonshotai/*",),
    timeout: timedelta = timedelta(seconds=5),
    max_retries: int = 2,
) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(
        OpenAICompatibleSettings(
            base_url=stub.base_url,
            api_key=SecretStr(API_KEY),
            models=models,
            timeout=timeout,
            max_retries=max_retries,
            name="stub",
        )
    )


# --------------------------------------------------------------------------------------------
# Calls through the stub


@pytest.mark.asyncio
async def test_plain_text_reply(stub: CompletionsStub) -> None:
    stub.script(text_reply("Hello from the stub"))
    model = resolve_chat_model(MODEL, [provider_for(stub)])

    answer = await model.ainvoke([HumanMessage("hi")])

    assert answer.content == "Hello from the stub"
    [request] = stub.requests
    assert request.body["model"] == MODEL
    assert request.body["messages"] == [{"role": "user", "content": "hi"}]
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"


class RefundCard(BaseModel):
    """Refunds a card payment."""

    order_id: str = Field(description="The order to refund")
    amount: float


@pytest.mark.asyncio
async def test_tool_call_carries_the_bound_tool_schema(stub: CompletionsStub) -> None:
    arguments = {"order_id": "7", "amount": 12.5}
    stub.script(
        completion(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "RefundCard",
                            "arguments": json.dumps(arguments),
                        },
                    }
                ],
            },
            finish_reason="tool_calls",
        )
    )
    model = provider_for(stub).chat_model(MODEL).bind_tools([RefundCard])

    answer = await model.ainvoke([HumanMessage("refund order 7, 12.50")])

    assert isinstance(answer, AIMessage)
    assert [(call["name"], call["args"], call["id"]) for call in answer.tool_calls] == [
        ("RefundCard", arguments, "call_1")
    ]
    [request] = stub.requests
    assert request.body["model"] == MODEL
    assert request.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "RefundCard",
                "description": "Refunds a card payment.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "order_id": {
                            "type": "string",
                            "description": "The order to refund",
                        },
                        "amount": {"type": "number"},
                    },
                    "required": ["order_id", "amount"],
                },
            },
        }
    ]


@pytest.mark.asyncio
async def test_probability_of_yes_from_logprobs(stub: CompletionsStub) -> None:
    top = [
        {"token": "yes", "logprob": -0.1, "bytes": None},
        {"token": "no", "logprob": -2.3, "bytes": None},
    ]
    stub.script(
        completion(
            {"role": "assistant", "content": "yes"},
            finish_reason="length",
            logprobs={
                "content": [
                    {
                        "token": "yes",
                        "logprob": -0.1,
                        "bytes": None,
                        "top_logprobs": top,
                    }
                ]
            },
        )
    )
    model = provider_for(stub).chat_model(MODEL)

    p_yes = await probability_of_yes(model, [HumanMessage("Approve? Answer yes or no.")])

    assert p_yes == pytest.approx(math.exp(-0.1) / (math.exp(-0.1) + math.exp(-2.3)))
    assert p_yes == pytest.approx(0.90, abs=0.005)
    [request] = stub.requests
    assert request.body["logprobs"] is True
    assert request.body["top_logprobs"] >= 5
    # ChatOpenAI renames max_tokens to max_completion_tokens in every Chat Completions request.
    assert request.body["max_completion_tokens"] == 1
    assert "max_tokens" not in request.body
    assert request.body["stream"] is False


@pytest.mark.asyncio
async def test_a_server_without_logprobs_is_a_decision_error(
    stub: CompletionsStub,
) -> None:
    stub.script(text_reply("yes"))

    with pytest.raises(DecisionModelError, match="no log-probabilities"):
        await probability_of_yes(provider_for(stub).chat_model(MODEL), [HumanMessage("ok?")])


@pytest.mark.asyncio
async def test_a_server_error_is_retried(stub: CompletionsStub) -> None:
    stub.script(
        error(500, "upstream hiccup", headers={"retry-after-ms": "10"}),
        text_reply("recovered"),
    )

    answer = await provider_for(stub, max_retries=1).chat_model(MODEL).ainvoke("hi")

    assert answer.content == "recovered"
    assert len(stub.requests) == 2


@pytest.mark.asyncio
async def test_a_server_error_beyond_the_retries_raises(stub: CompletionsStub) -> None:
    stub.script(*[error(500, "down", headers={"retry-after-ms": "10"})] * 2)

    with pytest.raises(openai.InternalServerError):
        await provider_for(stub, max_retries=1).chat_model(MODEL).ainvoke("hi")

    assert len(stub.requests) == 2


@pytest.mark.asyncio
async def test_unauthorized_raises_without_retrying(stub: CompletionsStub) -> None:
    stub.script(error(401, "No auth credentials found"), text_reply("never sent"))

    with pytest.raises(ModelAuthenticationError) as caught:
        await provider_for(stub).chat_model(MODEL).ainvoke("hi")

    assert isinstance(caught.value, openai.AuthenticationError)
    assert len(stub.requests) == 1
    assert API_KEY not in str(caught.value)


@pytest.mark.asyncio
async def test_a_slow_response_times_out_quickly(stub: CompletionsStub) -> None:
    stub.script(Scripted(hang=True, body={}))
    # long enough for the request to reach the stub on a loaded machine; how quickly it times
    # out is the timeout's business (a benchmark's, not a timed assertion's)
    model = provider_for(stub, timeout=timedelta(seconds=3), max_retries=0).chat_model(MODEL)

    with pytest.raises(ModelTimeoutError) as caught:
        await model.ainvoke("hi")

    assert isinstance(caught.value, openai.APITimeoutError)
    assert len(stub.requests) == 1


@pytest.mark.asyncio
async def test_a_timeout_is_retried(stub: CompletionsStub) -> None:
    stub.script(Scripted(hang=True, body={}), text_reply("second try"))
    model = provider_for(stub, timeout=timedelta(seconds=0.5), max_retries=1).chat_model(MODEL)

    answer = await model.ainvoke("hi")

    assert answer.content == "second try"
    assert len(stub.requests) == 2


@pytest.mark.asyncio
async def test_chat_completions_even_for_names_chat_openai_sends_to_the_responses_api(
    stub: CompletionsStub,
) -> None:
    # ChatOpenAI routes model names containing "codex" to /v1/responses unless told otherwise;
    # an OpenAI-compatible endpoint only promises /v1/chat/completions.
    stub.script(text_reply("done"))
    model = provider_for(stub, models=("*",)).chat_model("openai/gpt-5-codex")

    answer = await model.ainvoke("hi")

    assert answer.content == "done"
    assert stub.requests[0].body["model"] == "openai/gpt-5-codex"


# --------------------------------------------------------------------------------------------
# The provider without calls


@pytest.mark.asyncio
async def test_construction_never_reaches_the_network(stub: CompletionsStub) -> None:
    provider = provider_for(stub)
    provider.chat_model(MODEL)
    providers_from_env(
        {
            "COUNTERSIGN_MODEL_BASE_URL": stub.base_url,
            "COUNTERSIGN_MODEL_API_KEY": API_KEY,
            "COUNTERSIGN_MODEL_NAMES": "*",
        }
    )[0].chat_model(MODEL)
    await asyncio.sleep(0.05)

    assert stub.requests == []


def test_construction_does_not_need_a_reachable_endpoint() -> None:
    settings = OpenAICompatibleSettings(
        base_url="http://127.0.0.1:9/v1", api_key=SecretStr(API_KEY), models=(MODEL,)
    )

    assert OpenAICompatibleProvider(settings).chat_model(MODEL) is not None


def test_chat_models_are_cached_per_name() -> None:
    provider = OpenAICompatibleProvider(
        OpenAICompatibleSettings(
            base_url="http://127.0.0.1:9/v1", api_key=SecretStr(API_KEY), models=("*",)
        )
    )

    first = provider.chat_model(MODEL)

    assert provider.chat_model(MODEL) is first
    assert provider.chat_model("openai/gpt-4o") is not first


def test_serves_exact_names_and_patterns() -> None:
    provider = OpenAICompatibleProvider(
        OpenAICompatibleSettings(
            base_url="https://openrouter.ai/api/v1",
            api_key=SecretStr(API_KEY),
            models=("moonshotai/*", "openai/gpt-4o"),
            decision_models=("moonshotai/kimi-judge",),
        )
    )

    assert provider.serves(MODEL)
    assert provider.serves("openai/gpt-4o")
    assert not provider.serves("openai/gpt-4o-mini")
    assert provider.is_decision_model("moonshotai/kimi-judge")
    assert not provider.is_decision_model(MODEL)
    assert isinstance(provider, ModelProvider)


def test_chat_model_of_an_unserved_name_raises() -> None:
    provider = OpenAICompatibleProvider(
        OpenAICompatibleSettings(
            base_url="http://127.0.0.1:9/v1",
            api_key=SecretStr(API_KEY),
            models=(MODEL,),
        )
    )

    with pytest.raises(ModelUnservedError, match="openai/gpt-4o"):
        provider.chat_model("openai/gpt-4o")


def test_the_api_key_never_shows_in_repr_or_str() -> None:
    settings = OpenAICompatibleSettings(
        base_url="https://openrouter.ai/api/v1",
        api_key=SecretStr(API_KEY),
        models=(MODEL,),
    )
    provider = OpenAICompatibleProvider(settings)
    [from_env] = providers_from_env(
        {
            "COUNTERSIGN_MODEL_BASE_URL": "https://openrouter.ai/api/v1",
            "COUNTERSIGN_MODEL_API_KEY": API_KEY,
            "COUNTERSIGN_MODEL_NAMES": MODEL,
        }
    )

    shown = [
        repr(settings),
        str(settings),
        repr(provider),
        str(provider),
        repr(from_env),
        str(from_env),
    ]
    shown += [repr(provider.chat_model(MODEL)), str(provider.chat_model(MODEL))]
    for text in shown:
        assert API_KEY not in text
    assert "openrouter.ai" in repr(provider)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"base_url": "openrouter.ai/api/v1"}, "base_url must be an http"),
        ({"base_url": "ftp://example.com"}, "base_url must be an http"),
        ({"api_key": SecretStr("")}, "api_key is empty"),
        ({"models": ()}, "models is empty"),
        ({"models": ("moonshot ai",)}, "whitespace"),
        ({"decision_models": ("openai/gpt-4o",)}, "'openai/gpt-4o' is not served"),
        ({"timeout": timedelta(0)}, "timeout must be positive"),
        ({"max_retries": -1}, "max_retries must not be negative"),
        ({"name": ""}, "name is empty"),
    ],
)
def test_invalid_settings_are_refused(changes: dict[str, Any], problem: str) -> None:
    arguments: dict[str, Any] = {
        "base_url": "https://openrouter.ai/api/v1",
        "api_key": SecretStr(API_KEY),
        "models": ("moonshotai/*",),
        **changes,
    }

    with pytest.raises(ValueError, match=problem):
        OpenAICompatibleSettings(**arguments)


@pytest.mark.parametrize(
    "changes",
    [
        {"api_key": API_KEY},
        {"models": "moonshotai/*"},
        {"decision_models": ["moonshotai/*"]},
    ],
)
def test_settings_of_the_wrong_type_are_refused(changes: dict[str, Any]) -> None:
    arguments: dict[str, Any] = {
        "base_url": "https://openrouter.ai/api/v1",
        "api_key": SecretStr(API_KEY),
        "models": ("moonshotai/*",),
        **changes,
    }

    with pytest.raises(TypeError):
        OpenAICompatibleSettings(**arguments)


# --------------------------------------------------------------------------------------------
# Settings from the environment

FULL_ENV = {
    "COUNTERSIGN_MODEL_BASE_URL": "https://openrouter.ai/api/v1",
    "COUNTERSIGN_MODEL_API_KEY": API_KEY,
    "COUNTERSIGN_MODEL_NAMES": "moonshotai/*, openai/gpt-4o",
}


def test_no_model_settings_means_no_providers() -> None:
    assert providers_from_env({}) == []
    assert (
        providers_from_env({"COUNTERSIGN_MODEL_BASE_URL": "  ", "COUNTERSIGN_MODEL_NAMES": ""})
        == []
    )
    assert providers_from_env({"UNRELATED": "x"}) == []


def test_full_settings_make_one_openai_compatible_provider() -> None:
    env = {
        **FULL_ENV,
        "COUNTERSIGN_DECISION_MODEL_NAMES": "moonshotai/kimi-judge",
        "COUNTERSIGN_MODEL_TIMEOUT_SECONDS": "12.5",
    }

    [provider] = providers_from_env(env)

    assert isinstance(provider, OpenAICompatibleProvider)
    assert provider.settings.base_url == "https://openrouter.ai/api/v1"
    assert provider.settings.api_key.get_secret_value() == API_KEY
    assert provider.settings.models == ("moonshotai/*", "openai/gpt-4o")
    assert provider.settings.decision_models == ("moonshotai/kimi-judge",)
    assert provider.settings.timeout == timedelta(seconds=12.5)
    assert provider.serves(MODEL)
    assert provider.serves("openai/gpt-4o")
    assert not provider.serves("anthropic/claude-sonnet-4")
    assert provider.is_decision_model("moonshotai/kimi-judge")


def test_optional_settings_have_defaults() -> None:
    [provider] = providers_from_env(FULL_ENV)

    assert isinstance(provider, OpenAICompatibleProvider)
    assert provider.settings.decision_models == ()
    assert provider.settings.timeout == timedelta(seconds=60)
    assert provider.settings.max_retries == 2


@pytest.mark.parametrize(
    ("env", "named", "expected"),
    [
        (
            {
                "COUNTERSIGN_MODEL_BASE_URL": "https://openrouter.ai/api/v1",
                "COUNTERSIGN_MODEL_NAMES": MODEL,
            },
            "COUNTERSIGN_MODEL_API_KEY",
            (
                "COUNTERSIGN_MODEL_API_KEY is missing: set it together with "
                "COUNTERSIGN_MODEL_BASE_URL and COUNTERSIGN_MODEL_NAMES"
            ),
        ),
        (
            {"COUNTERSIGN_MODEL_API_KEY": API_KEY},
            "COUNTERSIGN_MODEL_BASE_URL",
            (
                "COUNTERSIGN_MODEL_BASE_URL is missing (so is COUNTERSIGN_MODEL_NAMES): "
                "set it together with COUNTERSIGN_MODEL_API_KEY"
            ),
        ),
        (
            {
                "COUNTERSIGN_MODEL_BASE_URL": "https://openrouter.ai/api/v1",
                "COUNTERSIGN_MODEL_API_KEY": API_KEY,
            },
            "COUNTERSIGN_MODEL_NAMES",
            None,
        ),
        (
            {"COUNTERSIGN_MODEL_TIMEOUT_SECONDS": "30"},
            "COUNTERSIGN_MODEL_BASE_URL",
            None,
        ),
        (
            {"COUNTERSIGN_DECISION_MODEL_NAMES": MODEL},
            "COUNTERSIGN_MODEL_BASE_URL",
            None,
        ),
    ],
)
def test_partial_settings_name_the_missing_one(
    env: dict[str, str], named: str, expected: str | None
) -> None:
    with pytest.raises(SettingsError) as caught:
        providers_from_env(env)

    message = caught.value.message
    assert message.startswith(f"{named} is missing")
    if expected is not None:
        assert message == expected
    assert_one_clear_line(caught.value)


@pytest.mark.parametrize(
    ("setting", "value", "problem"),
    [
        (
            "COUNTERSIGN_MODEL_BASE_URL",
            "openrouter.ai/api/v1",
            "http:// or https:// URL",
        ),
        ("COUNTERSIGN_MODEL_BASE_URL", "https://", "http:// or https:// URL"),
        ("COUNTERSIGN_MODEL_API_KEY", "sk-or-v1 with-space", "contains whitespace"),
        ("COUNTERSIGN_MODEL_NAMES", "moonshotai/*,,openai/gpt-4o", "entry 2"),
        ("COUNTERSIGN_MODEL_NAMES", "moonshotai/*,", "entry 2"),
        ("COUNTERSIGN_MODEL_NAMES", "moonshot ai/kimi", "whitespace"),
        ("COUNTERSIGN_MODEL_NAMES", "*/kimi-k2.6", "trailing '*'"),
        ("COUNTERSIGN_DECISION_MODEL_NAMES", "a,,b", "entry 2"),
        (
            "COUNTERSIGN_DECISION_MODEL_NAMES",
            "anthropic/claude-sonnet-4",
            "does not serve",
        ),
        ("COUNTERSIGN_DECISION_MODEL_NAMES", "*", "does not serve"),
        ("COUNTERSIGN_MODEL_TIMEOUT_SECONDS", "soon", "positive number of seconds"),
        ("COUNTERSIGN_MODEL_TIMEOUT_SECONDS", "0", "positive number of seconds"),
        ("COUNTERSIGN_MODEL_TIMEOUT_SECONDS", "-3", "positive number of seconds"),
        ("COUNTERSIGN_MODEL_TIMEOUT_SECONDS", "inf", "positive number of seconds"),
        ("COUNTERSIGN_MODEL_TIMEOUT_SECONDS", "nan", "positive number of seconds"),
    ],
)
def test_each_malformed_setting_is_one_line_naming_it(
    setting: str, value: str, problem: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        providers_from_env({**FULL_ENV, setting: value})

    assert caught.value.message.startswith(setting)
    assert problem in caught.value.message
    assert_one_clear_line(caught.value)


def test_a_malformed_key_is_never_shown() -> None:
    with pytest.raises(SettingsError) as caught:
        providers_from_env({**FULL_ENV, "COUNTERSIGN_MODEL_API_KEY": f"{API_KEY} trailing"})

    assert API_KEY not in str(caught.value)


def assert_one_clear_line(error: SettingsError) -> None:
    assert "\n" not in str(error)
    assert str(error).startswith("[settings.invalid] COUNTERSIGN_")
    assert error.__cause__ is None
    assert API_KEY not in str(error)
