"""The one tool a model reply interpreter answers through, and reading its call.

The tool's parameters are the role's answer DTO; for an approval role
(``ToolCallApprovalDecision``) ``override_arguments`` is described by the tool's input, so the
model sees which arguments it may change.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from bot.core.dtos import ToolCallApprovalDecision

ANSWER_TOOL = "answer"
DEFAULT_INSTRUCTIONS = "Read the person's reply to the question and give the answer it expresses."
_APPROVAL = (
    "Give the decision the person's reply expresses about the question: approved, the reason "
    "they gave (if any), and in override_arguments only the arguments the reply changes, with "
    "their new values."
)


class NoAnswerError(ValueError):
    """The model's response is not exactly one valid call of the answer tool."""


def answer_tool(answer_dto: type[BaseModel], tool_input: type[BaseModel] | None) -> dict[str, Any]:
    """The OpenAI tool definition of the answer tool."""
    schema = answer_dto.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    description = f"Give the answer ({answer_dto.__name__}) the person's reply expresses."
    if answer_dto is ToolCallApprovalDecision:
        description = _APPROVAL
        if tool_input is not None:
            _describe_overrides(schema, tool_input)
    return {
        "type": "function",
        "function": {"name": ANSWER_TOOL, "description": description, "parameters": schema},
    }


def _describe_overrides(schema: dict[str, Any], tool_input: type[BaseModel]) -> None:
    arguments = tool_input.model_json_schema()
    schema.setdefault("$defs", {}).update(arguments.pop("$defs", {}))
    properties = {
        name: {key: value for key, value in field.items() if key != "default"}
        for name, field in arguments.get("properties", {}).items()
    }
    schema["properties"]["override_arguments"] = {
        "anyOf": [
            {"type": "object", "properties": properties, "additionalProperties": False},
            {"type": "null"},
        ],
        "default": None,
        "description": "Only the arguments the reply changes, with their new values.",
    }


def input_message(ask: dict[str, Any], reply: str) -> HumanMessage:
    """The question and the reply, as every model interpreter reads them."""
    question = json.dumps(ask, ensure_ascii=False)
    return HumanMessage(content=f"### ask\n{question}\n\n### reply\n{reply}")


def answer_messages(instructions: str, ask: dict[str, Any], reply: str) -> list[BaseMessage]:
    return [SystemMessage(content=instructions or DEFAULT_INSTRUCTIONS), input_message(ask, reply)]


def read_answer(message: BaseMessage) -> dict[str, Any]:
    """The arguments of the one answer-tool call in ``message``; ``NoAnswerError`` otherwise."""
    if not isinstance(message, AIMessage):
        raise NoAnswerError(f"the model answered with a {type(message).__name__}")
    calls = [call for call in message.tool_calls if call["name"] == ANSWER_TOOL]
    broken = [call for call in message.invalid_tool_calls if call.get("name") == ANSWER_TOOL]
    if broken and not calls:
        raise NoAnswerError(f"the model's answer is not valid JSON: {broken[0].get('error')}")
    if not calls:
        raise NoAnswerError("the model gave no answer (it did not call the answer tool)")
    if len(calls) + len(broken) > 1:
        raise NoAnswerError(f"the model gave {len(calls) + len(broken)} answers, not one")
    return dict(calls[0]["args"])
