"""Scripted chat models: ``mock_llm(Component).then_return(...)`` — one response per model call.

What a script item becomes depends on who calls: an agent reads ``call_tool(...)`` as a tool
call and ``reply_with(Dto, {...})`` as its final answer; a model reply interpreter reads
``reply_with(Dto, {...})`` as a call of its answer tool; a decision model reads ``decide_with``.

A scripted model that is given ``decide_with(...)`` (or made with
``mock_llm(Component, decision_model=True)``) stands in for a decision model: it reads yes / no
only, so a reply interpreter on it answers ``{approved}`` from P(yes). ``.with_usage(...)`` makes
every response report tokens (what the ledger prices); each call records the messages, the
bound tools and the run's metadata (``RecordedCall.metadata``).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, PrivateAttr

from bot.components.specs import AgentSpec, ReplyInterpreterSpec, ToolSpec, spec_of
from bot.core.enums import DecidedBy
from bot.core.errors import SetupError
from bot.runtime.model_overrides import set_override

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class ToolCallScript:
    tool: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ReplyWith:
    dto: type[BaseModel]
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DecideWith:
    approved: float


def call_tool(tool: type, args: dict[str, Any]) -> ToolCallScript:
    """The model calls ``tool`` with ``args`` (a list of these is one turn with several calls)."""
    spec = spec_of(tool)
    if not isinstance(spec, ToolSpec):
        raise SetupError(f"call_tool: {getattr(tool, '__name__', tool)!s} is not a @tool")
    return ToolCallScript(spec.name, dict(args))


def reply_with(dto: type[BaseModel], data: dict[str, Any]) -> ReplyWith:
    """The model answers with ``dto`` (validated now, so a typo fails the test at once)."""
    return ReplyWith(dto, dto.model_validate(data).model_dump(mode="json"))


def decide_with(*, approved: float) -> DecideWith:
    """A decision model's yes / no: ``approved`` is P(yes)."""
    if not 0.0 <= approved <= 1.0:
        raise SetupError("decide_with(approved=p) takes a probability from 0 to 1")
    return DecideWith(approved)


@dataclass(slots=True)
class RecordedCall:
    messages: list[BaseMessage]
    tools: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


def _reply_section(messages: Sequence[BaseMessage]) -> str | None:
    for message in reversed(messages):
        content = message.content if isinstance(message.content, str) else ""
        if "### reply" in content:
            return content.split("### reply", 1)[1].strip()
    return None


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script and records every call."""

    component: str = "component"
    decision_model: bool = False
    """Whether this model stands in for a decision model (set by ``decide_with`` scripts)."""
    _usage: UsageMetadata | None = PrivateAttr(default=None)
    _script: list[Any] = PrivateAttr(default_factory=list)
    _conditional: list[tuple[str, list[Any]]] = PrivateAttr(default_factory=list)
    _calls: list[RecordedCall] = PrivateAttr(default_factory=list)
    _tools: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "countersign-scripted"

    @property
    def calls(self) -> list[RecordedCall]:
        return self._calls

    def then_return(self, *responses: Any) -> ScriptedChatModel:
        self._check_kind(responses)
        self._script.extend(responses)
        return self

    def with_usage(self, *, input_tokens: int, output_tokens: int) -> ScriptedChatModel:
        """Every response reports these tokens (``AIMessage.usage_metadata``)."""
        self._usage = UsageMetadata(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
        )
        return self

    def _check_kind(self, responses: Sequence[Any]) -> None:
        decisions = [r for r in responses if isinstance(r, DecideWith)]
        others = [r for r in responses if not isinstance(r, DecideWith | AIMessage | BaseException)]
        scripted = [*self._script, *(i for _, items in self._conditional for i in items)]
        if decisions:
            self.decision_model = True
        if self.decision_model and (
            others or any(isinstance(i, ReplyWith | ToolCallScript) for i in scripted)
        ):
            raise SetupError(
                f"mock_llm({self.component}) stands in for a decision model: it reads yes / no "
                "only, so script it with decide_with(...) alone"
            )

    def when(self, *, reply: str) -> _When:
        """Script the answer to one reply text (model reply interpreters)."""
        return _When(self, reply)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self._tools = [t for t in tools if isinstance(t, dict)]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        metadata = dict(run_manager.metadata) if run_manager is not None else {}
        self._calls.append(
            RecordedCall(messages=list(messages), tools=list(self._tools), metadata=metadata)
        )
        item = self._next(messages)
        if isinstance(item, BaseException):
            raise item
        message = self._render(item)
        if self._usage is not None and message.usage_metadata is None:
            message = message.model_copy(update={"usage_metadata": self._usage})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _next(self, messages: Sequence[BaseMessage]) -> Any:
        reply = _reply_section(messages)
        for index, (text, script) in enumerate(self._conditional):
            if reply is not None and reply == text and script:
                item = script.pop(0)
                if not script:
                    del self._conditional[index]
                return item
        if not self._script:
            raise SetupError(
                f"mock_llm({self.component}) has no scripted response left for call "
                f"#{len(self._calls)}: add one with .then_return(...)"
            )
        return self._script.pop(0)

    def _tool_names(self) -> set[str]:
        return {t.get("function", {}).get("name", "") for t in self._tools}

    def _render(self, item: Any) -> AIMessage:
        if isinstance(item, AIMessage):
            return item
        if isinstance(item, str):
            return AIMessage(content=item)
        if isinstance(item, ToolCallScript):
            item = [item]
        if isinstance(item, list) and all(isinstance(i, ToolCallScript) for i in item):
            calls = [
                {"name": c.tool, "args": c.args, "id": f"call_{next(_ids)}", "type": "tool_call"}
                for c in item
            ]
            return AIMessage(content="", tool_calls=calls)
        if isinstance(item, ReplyWith):
            if "answer" in self._tool_names():
                call = {"name": "answer", "args": item.data, "id": f"call_{next(_ids)}"}
                return AIMessage(content="", tool_calls=[call])
            return AIMessage(content=json.dumps(item.data))
        if isinstance(item, DecideWith):
            return _decision_message(item.approved)
        raise SetupError(f"mock_llm({self.component}): cannot answer with {item!r}")


def _decision_message(p_yes: float) -> AIMessage:
    """A one-token answer whose logprobs say P(yes) = ``p_yes`` (as ChatOpenAI reports them)."""
    p = min(max(p_yes, 1e-9), 1 - 1e-9)
    top = [
        {"token": "yes", "logprob": math.log(p), "bytes": None},
        {"token": "no", "logprob": math.log(1 - p), "bytes": None},
    ]
    first = top[0] if p >= 0.5 else top[1]
    logprobs = {"content": [{**first, "top_logprobs": top}]}
    return AIMessage(content=str(first["token"]), response_metadata={"logprobs": logprobs})


class _When:
    def __init__(self, model: ScriptedChatModel, reply: str) -> None:
        self._model = model
        self._reply = reply

    def then_return(self, *responses: Any) -> ScriptedChatModel:
        """Answer the model's calls that read this reply, in order (before unconditional ones)."""
        self._model._check_kind(responses)
        self._model._conditional.append((self._reply.strip(), list(responses)))
        return self._model


def mock_llm(component: type, *, decision_model: bool = False) -> ScriptedChatModel:
    """Script the model of an agent or of a model reply interpreter (not of a code one).

    ``decision_model=True`` makes it stand in for a decision model before anything is scripted
    (a ``decide_with(...)`` script does the same).
    """
    spec = spec_of(component)
    if isinstance(spec, ReplyInterpreterSpec) and spec.decided_by is DecidedBy.CODE:
        raise SetupError(
            f"mock_llm({spec.name}): a code interpreter calls no model; use mock_of(...) instead"
        )
    if not isinstance(spec, AgentSpec | ReplyInterpreterSpec):
        raise SetupError(
            f"mock_llm({getattr(component, '__name__', component)!s}): "
            "only an @agent or a model @reply_interpreter has a model"
        )
    model = ScriptedChatModel(component=spec.name, decision_model=decision_model)
    set_override(component, model)
    return model
