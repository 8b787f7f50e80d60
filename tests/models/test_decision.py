"""P(yes) of a decision model, read from the first token's log-probabilities.

These tests use an in-process chat model that puts log-probabilities where ``ChatOpenAI`` puts
them (the generation's ``generation_info``); the HTTP round trip through ``ChatOpenAI`` is in
``test_openai_compatible.py``.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from bot.models import DecisionModelError, probability_of_yes, probability_of_yes_in

QUESTION: list[BaseMessage] = [HumanMessage("### ask\nrefund 12 EUR?\n### reply\nsure")]


class LogprobsChatModel(BaseChatModel):
    """Answers with fixed ``logprobs`` metadata and records the keyword arguments of each call."""

    logprobs: dict[str, Any] | None
    calls: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "logprobs-test-model"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append({"messages": messages, **kwargs})
        generation_info = {} if self.logprobs is None else {"logprobs": self.logprobs}
        generation = ChatGeneration(message=AIMessage(content="x"), generation_info=generation_info)
        return ChatResult(generations=[generation])


def first_token(token: str, logprob: float, alternatives: dict[str, float]) -> dict[str, Any]:
    """The Chat Completions ``logprobs`` object for a one-token answer."""
    top = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alternatives.items()]
    return {
        "content": [
            {
                "token": token,
                "logprob": logprob,
                "bytes": list(token.encode()),
                "top_logprobs": top,
            }
        ],
        "refusal": None,
    }


def share(yes: list[float], no: list[float]) -> float:
    p_yes = sum(math.exp(lp) for lp in yes)
    p_no = sum(math.exp(lp) for lp in no)
    return p_yes / (p_yes + p_no)


@pytest.mark.asyncio
async def test_asks_one_constrained_completion_with_logprobs() -> None:
    model = LogprobsChatModel(logprobs=first_token("yes", -0.1, {"yes": -0.1, "no": -2.3}))

    await probability_of_yes(model, QUESTION)

    [call] = model.calls
    assert call["messages"] == QUESTION
    assert call["logprobs"] is True
    assert call["top_logprobs"] >= 5
    assert call["max_tokens"] == 1
    assert call["stream"] is False


@pytest.mark.asyncio
async def test_probability_is_the_yes_share_of_yes_and_no() -> None:
    model = LogprobsChatModel(logprobs=first_token("yes", -0.1, {"yes": -0.1, "no": -2.3}))

    p_yes = await probability_of_yes(model, QUESTION)

    assert p_yes == pytest.approx(share([-0.1], [-2.3]))
    assert p_yes == pytest.approx(0.9002, abs=1e-4)


@pytest.mark.asyncio
async def test_tokens_compare_case_insensitively_after_stripping_spaces() -> None:
    alternatives = {
        "Yes": -0.5,
        " yes": -1.5,
        "TRUE": -4.0,
        " No": -1.2,
        "n": -3.0,
        "Maybe": -2.0,
    }
    model = LogprobsChatModel(logprobs=first_token("Yes", -0.5, alternatives))

    p_yes = await probability_of_yes(model, QUESTION)

    assert p_yes == pytest.approx(share([-0.5, -1.5, -4.0], [-1.2, -3.0]))


@pytest.mark.asyncio
async def test_a_likely_no_gives_a_low_probability() -> None:
    model = LogprobsChatModel(logprobs=first_token("No", -0.05, {"No": -0.05, "Yes": -3.2}))

    assert await probability_of_yes(model, QUESTION) < 0.5


@pytest.mark.asyncio
async def test_only_yes_tokens_give_certainty() -> None:
    model = LogprobsChatModel(logprobs=first_token("yes", -0.01, {"yes": -0.01, "sure": -5.0}))

    assert await probability_of_yes(model, QUESTION) == 1.0


def test_sampled_token_counts_when_missing_from_the_alternatives_but_never_twice() -> None:
    missing = AIMessage(
        content="y",
        response_metadata={"logprobs": first_token("y", -1.0, {"no": -1.0})},
    )
    repeated = AIMessage(
        content="yes",
        response_metadata={"logprobs": first_token("yes", -1.0, {"yes": -1.0, "no": -1.0})},
    )

    assert probability_of_yes_in(missing) == pytest.approx(0.5)
    assert probability_of_yes_in(repeated) == pytest.approx(0.5)


def test_only_the_first_token_is_read() -> None:
    logprobs = first_token("no", -0.1, {"no": -0.1, "yes": -2.3})
    logprobs["content"].append({"token": "yes", "logprob": 0.0, "bytes": [], "top_logprobs": []})

    assert (
        probability_of_yes_in(AIMessage(content="no yes", response_metadata={"logprobs": logprobs}))
        < 0.5
    )


@pytest.mark.parametrize(
    "metadata",
    [
        pytest.param({}, id="no logprobs key"),
        pytest.param({"logprobs": None}, id="logprobs null"),
    ],
)
def test_a_response_without_logprobs_is_an_error(metadata: dict[str, Any]) -> None:
    with pytest.raises(DecisionModelError, match="no log-probabilities"):
        probability_of_yes_in(AIMessage(content="yes", response_metadata=metadata))


@pytest.mark.asyncio
async def test_a_model_that_returns_no_logprobs_is_an_error() -> None:
    with pytest.raises(DecisionModelError, match="no log-probabilities"):
        await probability_of_yes(LogprobsChatModel(logprobs=None), QUESTION)


@pytest.mark.parametrize(
    "logprobs",
    [
        pytest.param({"content": []}, id="no tokens"),
        pytest.param({"content": None}, id="content null"),
    ],
)
def test_a_response_without_tokens_is_an_error(logprobs: dict[str, Any]) -> None:
    with pytest.raises(DecisionModelError, match="no tokens"):
        probability_of_yes_in(AIMessage(content="", response_metadata={"logprobs": logprobs}))


def test_malformed_logprobs_are_an_error() -> None:
    message = AIMessage(
        content="", response_metadata={"logprobs": {"content": [{"logprob": "high"}]}}
    )

    with pytest.raises(DecisionModelError, match="malformed"):
        probability_of_yes_in(message)


def test_neither_yes_nor_no_among_the_alternatives_is_an_error() -> None:
    logprobs = first_token("Maybe", -0.2, {"Maybe": -0.2, "I": -1.9})

    with pytest.raises(DecisionModelError, match="neither a yes- nor a no-token") as caught:
        probability_of_yes_in(AIMessage(content="Maybe", response_metadata={"logprobs": logprobs}))

    assert "'Maybe', 'I'" in str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert caught.value.code == "model.undecided"
