"""Decision models: models that read a reply as yes / no only (``approved`` when P(yes) > 0.5).

A model is a decision model when the provider serving its name says so
(``ModelProvider.is_decision_model``), or — for a chat model standing in for it, such as a
``mock_llm`` scripted with ``decide_with`` — when the chat model carries
``decision_model = True``. Only a role whose answer DTO is ``ToolCallApprovalDecision`` can be
answered by one: its answer is ``{approved}``, never a reason or changed arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from bot.components.specs import ChannelRoleSpec
from bot.core.dtos import ToolCallApprovalDecision
from bot.models.decision import TOP_LOGPROBS, probability_of_yes_in
from bot.runtime.answer_tool import input_message
from bot.runtime.model_overrides import override_for

DECISION_QUESTION = (
    "Below are a question that asked a person to approve an action (### ask) and the person's "
    "reply (### reply). Does the reply approve the action? Answer yes or no."
)


def answer_dto_of(role: ChannelRoleSpec) -> type[BaseModel]:
    """The DTO that answers a role's pause: a decision for an approval role (``approves=``).

    A role that declares another answer (``answers``, a question role) answers with it.
    """
    answers = getattr(role, "answers", None)
    if isinstance(answers, type) and issubclass(answers, BaseModel):
        return answers
    return ToolCallApprovalDecision


def marked_decision_model(chat_model: Any) -> bool:
    """Whether a chat model instance says it reads yes / no only."""
    return getattr(chat_model, "decision_model", False) is True


def is_decision_model(component: type, model: Any, providers: Sequence[Any]) -> bool:
    """Whether ``component``'s model reads yes / no only.

    A chat model standing in for the component (``mock_llm``) decides by its own marker; a
    model name by the provider that serves it; a chat model instance by its marker.
    """
    standing_in = override_for(component)
    if standing_in is not None:
        return marked_decision_model(standing_in)
    if not isinstance(model, str):
        return marked_decision_model(model)
    for provider in providers:
        if provider.serves(model):
            check = getattr(provider, "is_decision_model", None)
            return callable(check) and check(model) is True
    return False


def decision_messages(instructions: str, ask: dict[str, Any], reply: str) -> list[BaseMessage]:
    """The framework's question, then the interpreter's prompt; the ask and the reply."""
    system = f"{DECISION_QUESTION}\n\n{instructions}" if instructions else DECISION_QUESTION
    return [SystemMessage(content=system), input_message(ask, reply)]


async def ask_yes_or_no(
    chat_model: BaseChatModel, messages: list[BaseMessage], config: RunnableConfig
) -> BaseMessage:
    """One one-token completion with the first token's log-probabilities."""
    constrained = chat_model.bind(
        logprobs=True, top_logprobs=TOP_LOGPROBS, max_tokens=1, stream=False
    )
    return await constrained.ainvoke(messages, config=config)


def decision_of(message: BaseMessage) -> dict[str, Any]:
    """``{"approved": P(yes) > 0.5}``; ``DecisionModelError`` if it cannot be read as yes / no."""
    return {"approved": probability_of_yes_in(message) > 0.5}
