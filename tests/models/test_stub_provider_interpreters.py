"""Model reply interpreters through the OpenAI-compatible provider, against a local stub of the
Chat Completions HTTP API: the answer tool, a decision model's log-probabilities, errors and
timeouts. No test reaches the internet.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import openai
import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer
from langchain_core.exceptions import ModelTimeoutError
from pydantic import SecretStr

from bot import (
    AssemblyError,
    ExecutionStatus,
    ModelPrice,
    PauseStatus,
    UninterpretableReplyError,
)
from bot.models import OpenAICompatibleProvider, OpenAICompatibleSettings
from bot.testing import inspect_app
from tests.models.test_openai_compatible import (
    API_KEY,
    CompletionsStub,
    Scripted,
    completion,
    error,
    text_reply,
)
from tests.runtime.reply_desk import (
    DEPOSIT,
    JEV,
    KIMI,
    REFUND,
    REFUND_PROMPT,
    DeskApp,
    ReturnDepositTool,
    open_desk,
    script_agent,
)

PRICE = ModelPrice(input_per_million=1.0, output_per_million=2.0)


@pytest.fixture(autouse=True)
def _offline_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "LANGSMITH_TRACING", "LC_OUTPUT_VERSION"):
        monkeypatch.delenv(name, raising=False)


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


def _provider(stub: CompletionsStub, *, timeout: float = 5.0) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(
        OpenAICompatibleSettings(
            base_url=stub.base_url,
            api_key=SecretStr(API_KEY),
            models=("moonshotai/*", "typesafe/*"),
            decision_models=(JEV,),
            prices={KIMI: PRICE},
            timeout=timedelta(seconds=timeout),
            max_retries=0,
            name="stub",
        )
    )


def _answer(arguments: dict[str, Any]) -> Scripted:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "answer", "arguments": json.dumps(arguments)},
    }
    return completion(
        {"role": "assistant", "content": None, "tool_calls": [call]}, finish_reason="tool_calls"
    )


def _yes_no(p_yes: float) -> Scripted:
    top = [
        {"token": "yes", "logprob": math.log(p_yes), "bytes": None},
        {"token": "no", "logprob": math.log(1 - p_yes), "bytes": None},
    ]
    first = top[0] if p_yes >= 0.5 else top[1]
    return completion(
        {"role": "assistant", "content": first["token"]},
        finish_reason="length",
        logprobs={"content": [{**first, "top_logprobs": top}]},
    )


async def _refund_pause(desk: DeskApp) -> str:
    await desk.execute()
    return desk.desk.pause_of("refund-card-tool")


async def test_kimi_answers_through_the_answer_tool(stub: CompletionsStub) -> None:
    stub.script(_answer({"approved": True, "override_arguments": {"amount": 15}}))
    script_agent()
    async with open_desk(providers=[_provider(stub)], stand_ins=False) as desk:
        pause_id = await _refund_pause(desk)
        result = await desk.app.resume(
            pause_id, reply="ok, but only half", tenant_id="acme", answered_by="manager-17"
        )
        [row] = await inspect_app(desk.app).ledger.calls("acme", result.execution_id)
    assert result.status is ExecutionStatus.COMPLETED
    assert desk.runs.runs == [("refund", {**REFUND, "amount": 15.0})]
    [request] = stub.requests
    body = request.body
    assert body["model"] == KIMI
    assert [tool["function"]["name"] for tool in body["tools"]] == ["answer"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "answer"}}
    assert body["messages"][0] == {"role": "system", "content": REFUND_PROMPT}
    assert body["messages"][1]["content"].endswith("### reply\nok, but only half")
    assert "jane@example.com" not in json.dumps(body)  # the sensitive field stayed masked
    assert (row.input_tokens, row.output_tokens) == (9, 1)
    assert row.cost == pytest.approx((9 * 1.0 + 1 * 2.0) / 1_000_000)


@pytest.mark.parametrize(("p_yes", "approved"), [(0.9, True), (0.2, False)])
async def test_a_decision_model_reads_yes_or_no_from_log_probabilities(
    stub: CompletionsStub, p_yes: float, approved: bool
) -> None:
    stub.script(_yes_no(p_yes))
    script_agent((ReturnDepositTool, DEPOSIT))
    async with open_desk(providers=[_provider(stub)], stand_ins=False) as desk:
        await desk.execute()
        pause_id = desk.desk.pause_of("return-deposit-tool")
        result = await desk.app.resume(
            pause_id, reply="sure, give it back", tenant_id="acme", answered_by="clerk-3"
        )
    assert result.status is ExecutionStatus.COMPLETED
    assert desk.runs.runs == ([("deposit", DEPOSIT)] if approved else [])
    [request] = stub.requests
    assert request.body["model"] == JEV
    assert request.body["logprobs"] is True
    assert request.body["max_completion_tokens"] == 1
    assert "tools" not in request.body
    assert request.body["messages"][0]["content"].endswith("The clerk answered a deposit return.")


@pytest.mark.parametrize(
    ("response", "cause", "reason"),
    [
        (error(500, "upstream down"), openai.InternalServerError, "Error code: 500"),
        (error(401, "No auth credentials found"), openai.AuthenticationError, "Error code: 401"),
        (text_reply("I think they agree"), None, "no answer"),
    ],
    ids=["server-error", "unauthorized", "no-tool-call"],
)
async def test_model_failures_leave_the_pause_pending(
    stub: CompletionsStub, response: Scripted, cause: type[BaseException] | None, reason: str
) -> None:
    stub.script(response)
    script_agent()
    async with open_desk(providers=[_provider(stub)], stand_ins=False) as desk:
        pause_id = await _refund_pause(desk)
        with pytest.raises(UninterpretableReplyError) as caught:
            await desk.app.resume(pause_id, reply="yes", tenant_id="acme", answered_by="m")
        assert await desk.status(pause_id) is PauseStatus.PENDING
        rows = await inspect_app(desk.app).ledger.calls("acme", desk.desk.asks[-1].execution_id)
    assert reason in caught.value.reason
    if cause is not None:
        assert isinstance(caught.value.__cause__, cause)
    assert API_KEY not in str(caught.value)
    assert len(rows) == 1 and not rows[0].in_execution_spend  # made, so counted; not taken


async def test_a_timeout_is_unreadable(stub: CompletionsStub) -> None:
    stub.script(Scripted(hang=True, body={}))
    script_agent()
    async with open_desk(providers=[_provider(stub, timeout=0.3)], stand_ins=False) as desk:
        pause_id = await _refund_pause(desk)
        with pytest.raises(UninterpretableReplyError) as caught:
            await desk.app.resume(pause_id, reply="yes", tenant_id="acme", answered_by="m")
        assert await desk.status(pause_id) is PauseStatus.PENDING
    assert isinstance(caught.value.__cause__, ModelTimeoutError)


async def test_a_decision_endpoint_without_log_probabilities_is_unreadable(
    stub: CompletionsStub,
) -> None:
    stub.script(text_reply("yes"))
    script_agent((ReturnDepositTool, DEPOSIT))
    async with open_desk(providers=[_provider(stub)], stand_ins=False) as desk:
        await desk.execute()
        pause_id = desk.desk.pause_of("return-deposit-tool")
        with pytest.raises(UninterpretableReplyError, match="log-probabilities"):
            await desk.app.resume(pause_id, reply="yes", tenant_id="acme", answered_by="c")
        assert await desk.status(pause_id) is PauseStatus.PENDING


async def test_an_interpreter_model_no_provider_serves_is_found_at_assembly(
    stub: CompletionsStub,
) -> None:
    only_kimi = OpenAICompatibleProvider(
        OpenAICompatibleSettings(
            base_url=stub.base_url, api_key=SecretStr(API_KEY), models=("moonshotai/*",)
        )
    )
    script_agent()
    with pytest.raises(AssemblyError) as caught:
        async with open_desk(providers=[only_kimi], stand_ins=False):
            pass
    assert [(v.rule, v.component) for v in caught.value.violations] == [
        ("model.unserved", "deposit-reply-interpreter")
    ]
    assert stub.requests == []
