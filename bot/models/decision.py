"""Decision models: read an approval as the model's probability of answering "yes".

Any OpenAI-compatible model that returns log-probabilities can decide: it is asked for one
constrained completion (one token, with the most likely alternatives for it) and P(yes) is the
share of the yes-tokens' probability mass among the yes- and no-tokens of that first position.
It never gives a reason or changed arguments; an approval role approves when P(yes) > 0.5.

Where ``langchain_openai`` puts the log-probabilities (verified on langchain-openai 1.7.4 and
langchain-core 1.8.3): ``BaseChatOpenAI._create_chat_result`` copies the Chat Completions
``choices[0].logprobs`` into the generation's ``generation_info["logprobs"]``, and
``BaseChatModel`` merges ``generation_info`` into the message's ``response_metadata``. So the
alternatives for the first token are
``message.response_metadata["logprobs"]["content"][0]["top_logprobs"]``, a list of
``{"token": str, "logprob": float, "bytes": [...]}``; ``["content"][0]`` itself also carries the
sampled ``token`` and ``logprob``. A server that does not support log-probabilities sends
``"logprobs": null`` (or nothing), which is ``None`` (or absent) there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ValidationError

from bot.core.errors import ExecutionFailedError

YES_TOKENS = frozenset({"yes", "y", "true"})
NO_TOKENS = frozenset({"no", "n", "false"})
TOP_LOGPROBS = 10
"""How many alternatives of the first token to ask for (OpenAI allows up to 20)."""


class DecisionModelError(ExecutionFailedError, ValueError):
    """A decision model's response cannot be read as yes / no.

    The response carries no log-probabilities (the endpoint or model does not return them), or
    neither a yes- nor a no-token is among the first token's most likely alternatives.
    """

    code = "model.undecided"


class _Alternative(BaseModel):
    token: str
    logprob: float | None = None


class _Position(BaseModel):
    token: str
    logprob: float | None = None
    top_logprobs: list[_Alternative] | None = None


class _Logprobs(BaseModel):
    content: list[_Position] | None = None


async def probability_of_yes(chat_model: BaseChatModel, messages: list[BaseMessage]) -> float:
    """P(yes) for ``messages``, from one one-token completion of ``chat_model`` with logprobs.

    The messages should ask a yes / no question. Streaming is switched off for the call so the
    log-probabilities come from one complete response. Raises ``DecisionModelError`` when the
    response cannot be read as yes / no; the model's own errors (timeouts, HTTP errors) pass
    through unchanged.
    """
    constrained = chat_model.bind(
        logprobs=True, top_logprobs=TOP_LOGPROBS, max_tokens=1, stream=False
    )
    response = await constrained.ainvoke(messages)
    return probability_of_yes_in(response)


def probability_of_yes_in(message: BaseMessage) -> float:
    """P(yes) read from the first-token log-probabilities in ``message.response_metadata``."""
    alternatives = _first_token_alternatives(message)
    yes = _probability_mass(alternatives, YES_TOKENS)
    no = _probability_mass(alternatives, NO_TOKENS)
    if yes + no == 0.0:
        seen = ", ".join(repr(alternative.token) for alternative in alternatives)
        raise DecisionModelError(
            "neither a yes- nor a no-token is among the most likely first tokens of the "
            f"decision model's answer (saw {seen or 'none'}): its instructions should ask for "
            "yes or no"
        )
    return yes / (yes + no)


def _first_token_alternatives(message: BaseMessage) -> list[_Alternative]:
    raw = message.response_metadata.get("logprobs")
    if raw is None:
        raise DecisionModelError(
            "the decision model's response carries no log-probabilities: use a model and "
            "endpoint that return logprobs, or a model interpreter with an answer tool"
        )
    try:
        positions = _Logprobs.model_validate(raw).content
    except ValidationError as error:
        raise DecisionModelError(
            f"the decision model's log-probabilities are malformed: {error.error_count()} "
            "problem(s) in response_metadata['logprobs']"
        ) from error
    if not positions:
        raise DecisionModelError(
            "the decision model's response has no tokens with log-probabilities"
        )
    first = positions[0]
    sampled = _Alternative(token=first.token, logprob=first.logprob)
    return _unique_by_token([sampled, *(first.top_logprobs or [])])


def _unique_by_token(alternatives: Iterable[_Alternative]) -> list[_Alternative]:
    """Each distinct token once: the sampled token usually reappears among the alternatives."""
    unique: dict[str, _Alternative] = {}
    for alternative in alternatives:
        unique.setdefault(alternative.token, alternative)
    return list(unique.values())


def _probability_mass(alternatives: Iterable[_Alternative], words: frozenset[str]) -> float:
    """The summed probability of the tokens that read as one of ``words``.

    Distinct tokens that read the same ("Yes", " yes", "YES") each carry their own mass.
    """
    return sum(
        math.exp(alternative.logprob)
        for alternative in alternatives
        if alternative.logprob is not None
        and math.isfinite(alternative.logprob)
        and alternative.token.strip().lower() in words
    )
