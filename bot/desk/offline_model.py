"""The offline desk model: scripted, deterministic, no network and no provider.

It serves both desks when no model is configured: the terminal demo (``python -m bot demo``) and
the Slack desk with ``COUNTERSIGN_DESK_MODEL=offline`` (try the Slack flow with nothing but a
Slack app). Asked anything, it calls the refund and the expense tools at once, then sums up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from bot.desk.office import EXPENSE_TOOL, REFUND_TOOL, Done


@dataclass(frozen=True, slots=True)
class _ScriptedCall:
    tool: str
    subject: str  # how the summary names it: "the refund"
    args: dict[str, Any]


_CALLS = (
    _ScriptedCall(REFUND_TOOL, "the refund", {"order_id": "A-1001", "amount": 120.0}),
    _ScriptedCall(EXPENSE_TOOL, "the expense", {"purpose": "team lunch", "amount": 86.5}),
)
_REJECTED = re.compile(r"^Tool error: the call was rejected by [^:]*(?::\s*(?P<reason>.*))?$", re.S)
_TOOL_ERROR = "Tool error: "


class OfflineDemoModel(BaseChatModel):
    """A deterministic chat model for the demo: it reads the conversation, never a network.

    First turn: it calls both tools at once (one AI message, two tool calls). Once it reads
    their two results, it answers with a plain-text summary of what happened to each.
    """

    @property
    def _llm_type(self) -> str:
        return "countersign-offline-demo"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        # the script already knows its tools; this model only ever answers with an AIMessage
        return cast("Runnable[LanguageModelInput, AIMessage]", self)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=next_message(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop)


def next_message(messages: Sequence[BaseMessage]) -> AIMessage:
    """The demo model's answer to a conversation."""
    results = {m.name: m for m in messages if isinstance(m, ToolMessage) and m.name}
    if not results:
        calls = [
            {"name": c.tool, "args": dict(c.args), "id": f"demo-call-{i}", "type": "tool_call"}
            for i, c in enumerate(_CALLS, start=1)
        ]
        return AIMessage(content="", tool_calls=calls)
    outcomes = [_outcome(call, results.get(call.tool)) for call in _CALLS]
    return AIMessage(content="Here is what happened: " + "; ".join(outcomes) + ".")


def _outcome(call: _ScriptedCall, result: ToolMessage | None) -> str:
    if result is None:
        return f"{call.subject} got no answer"
    text = result.content if isinstance(result.content, str) else json.dumps(result.content)
    rejected = _REJECTED.match(text)
    if rejected is not None:
        reason = rejected.group("reason")
        return (
            f"{call.subject} was rejected: {reason}" if reason else f"{call.subject} was rejected"
        )
    if text.startswith(_TOOL_ERROR) or result.status == "error":
        return f"{call.subject} did not happen ({text.removeprefix(_TOOL_ERROR)})"
    return _status_of(text)


def _status_of(text: str) -> str:
    try:
        return Done.model_validate_json(text).status
    except ValueError:
        return text
