"""Reading a free-text reply with the role's reply interpreter, in the pause's execution frame.

Interpretation runs before the pause is closed: whatever goes wrong here leaves it PENDING.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from bot.components.specs import ReplyInterpreterSpec, spec_of
from bot.core.context import StepContext
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import DecidedBy
from bot.core.errors import (
    DtoValidationError,
    ReplyInterpreterMissingError,
    UninterpretableReplyError,
)
from bot.core.reply import ReplyInput, ReplyInterpretation
from bot.runtime.decisions import validate_decision
from bot.runtime.services import Runtime
from bot.runtime.withdrawals import frame_of_pause
from bot.store.records import PauseRecord

ANSWER_TOOL = "answer"


async def interpret_reply(
    runtime: Runtime,
    record: PauseRecord,
    reply: str,
    tool_input: type[BaseModel] | None,
    chat_model_for: Any,
) -> ToolCallApprovalDecision:
    role = runtime.assembly.roles_by_name.get(record.role)
    if role is None or role.reply_interpreter is None:
        raise ReplyInterpreterMissingError(
            f"the role {record.role} has no reply interpreter: answer with a decision"
        )
    interpreter = role.reply_interpreter
    spec = spec_of(interpreter)
    assert isinstance(spec, ReplyInterpreterSpec)
    step = StepContext(
        node_id=record.node_id, call_id=record.ask.call_id, idempotency_key=record.idempotency_key
    )
    context = frame_of_pause(record).context(step)
    reply_input = ReplyInput(ask=record.ask, reply=reply)
    if spec.decided_by is DecidedBy.CODE:
        value = await _by_code(runtime.container.create(interpreter, context), reply_input)
    else:
        value = await _by_model(spec, chat_model_for(interpreter, spec.model), reply_input)
    try:
        return validate_decision(value, tool_input=tool_input, arguments=record.ask.arguments)
    except DtoValidationError as error:
        raise UninterpretableReplyError(error.message) from error


async def _by_code(instance: Any, reply_input: ReplyInput) -> Any:
    try:
        outcome = instance.interpret(reply_input)
        if inspect.isawaitable(outcome):
            outcome = await outcome
    except Exception as error:  # a crash is an unreadable reply, the error its cause
        raise UninterpretableReplyError(f"{type(error).__name__}: {error}") from error
    if not isinstance(outcome, ReplyInterpretation):
        raise UninterpretableReplyError(
            f"the interpreter returned {type(outcome).__name__}, not a ReplyInterpretation"
        )
    if not outcome.is_understood:
        raise UninterpretableReplyError(outcome.reason or "the reply was not understood")
    return outcome.value


def answer_tool_schema() -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": ANSWER_TOOL,
            "description": "Give the decision the reply expresses.",
            "parameters": ToolCallApprovalDecision.model_json_schema(),
        },
    }


def model_input(spec: ReplyInterpreterSpec, reply_input: ReplyInput) -> list[Any]:
    ask = json.dumps(reply_input.ask.model_dump(mode="json"), ensure_ascii=False)
    instructions = spec.prompt or "Read the person's reply to the question."
    return [
        SystemMessage(content=instructions),
        HumanMessage(content=f"### ask\n{ask}\n\n### reply\n{reply_input.reply}"),
    ]


async def _by_model(spec: ReplyInterpreterSpec, chat_model: Any, reply_input: ReplyInput) -> Any:
    """A chat model answers through exactly one answer tool whose schema is the decision."""
    try:
        bound = chat_model.bind_tools([answer_tool_schema()], tool_choice=ANSWER_TOOL)
        message = await bound.ainvoke(model_input(spec, reply_input))
    except Exception as error:
        raise UninterpretableReplyError(
            f"the interpreter's model failed: {type(error).__name__}: {error}"
        ) from error
    calls = [c for c in getattr(message, "tool_calls", []) if c["name"] == ANSWER_TOOL]
    if not isinstance(message, AIMessage) or len(calls) != 1:
        raise UninterpretableReplyError("the interpreter's model gave no answer")
    return calls[0]["args"]
