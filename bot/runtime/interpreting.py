"""Reading a free-text reply with the role's reply interpreter, in the pause's execution frame.

Interpretation runs before the pause is closed: whatever goes wrong here leaves it PENDING.
A CODE interpreter's ``interpret`` gives a ``ReplyInterpretation``; a MODEL interpreter's model
answers through the answer tool, or — a decision model — with yes / no (``model_reading``).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from langgraph.errors import GraphInterrupt
from pydantic import BaseModel

from bot.components.specs import ReplyInterpreterSpec, spec_of
from bot.core.context import ExecutionContext, StepContext
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import DecidedBy
from bot.core.errors import (
    CountersignError,
    DtoValidationError,
    ReplyInterpreterMissingError,
    UninterpretableReplyError,
)
from bot.core.field_errors import failure_text
from bot.core.reply import ReplyInput, ReplyInterpretation
from bot.core.tracing import span
from bot.runtime.assembly import ToolBinding
from bot.runtime.decisions import validate_decision
from bot.runtime.edit_checks import valid_for_the_tool
from bot.runtime.model_reading import ModelReading, ReplyModels, read_with_model
from bot.runtime.services import Runtime
from bot.runtime.withdrawals import frame_of_pause
from bot.store.records import PauseRecord

__all__ = ["Reading", "ReplyModels", "interpret_reply"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """A reply read as a valid decision; ``model_call`` is the ledger id of the model call."""

    decision: ToolCallApprovalDecision
    model_call: int | None = None


async def interpret_reply(
    runtime: Runtime,
    models: ReplyModels,
    record: PauseRecord,
    reply: str,
    tool_input: type[BaseModel] | None,
    *,
    binding: ToolBinding | None = None,
) -> Reading:
    """Read ``reply`` as a decision, in a span (``countersign.interpret``: the interpreter's
    kind, code or model, and the outcome — understood, not_understood or refused with its code;
    never the reply)."""
    role = runtime.assembly.roles_by_name.get(record.role)
    interpreter = None if role is None else role.reply_interpreter
    spec = None if interpreter is None else spec_of(interpreter)
    kind = spec.decided_by.value.lower() if isinstance(spec, ReplyInterpreterSpec) else "none"
    with span("interpret", kind=kind, role=record.role) as traced:
        try:
            reading = await _interpret(runtime, models, record, reply, tool_input, binding)
        except (UninterpretableReplyError, ReplyInterpreterMissingError) as error:
            traced.set_attribute("outcome", "not_understood")
            traced.set_attribute("code", error.code)
            raise
        except CountersignError as error:
            traced.set_attribute("outcome", "refused")
            traced.set_attribute("code", error.code)
            raise
        traced.set_attribute("outcome", "understood")
        return reading


async def _interpret(
    runtime: Runtime,
    models: ReplyModels,
    record: PauseRecord,
    reply: str,
    tool_input: type[BaseModel] | None,
    binding: ToolBinding | None,
) -> Reading:
    role = runtime.assembly.roles_by_name.get(record.role)
    if role is None or role.reply_interpreter is None:
        raise ReplyInterpreterMissingError(
            f"the role {record.role} has no reply interpreter: answer with a decision"
        )
    interpreter = role.reply_interpreter
    spec = spec_of(interpreter)
    assert isinstance(spec, ReplyInterpreterSpec)
    context = _context_of(record)
    reply_input = ReplyInput(ask=record.ask, reply=reply)
    instance = _create(runtime, interpreter, context)
    model_call: int | None = None
    if spec.decided_by is DecidedBy.CODE:
        value = await _by_code(instance, reply_input)
    else:
        reading = ModelReading(
            interpreter=interpreter,
            spec=spec,
            role=role,
            record=record,
            reply_input=reply_input,
            context=context,
            tool_input=tool_input,
        )
        value, model_call = await read_with_model(runtime, models, reading)
    try:
        arguments = record.proposed_arguments  # an edit is of what the approver was shown
        decision = validate_decision(value, tool_input=tool_input, arguments=arguments)
        decision = valid_for_the_tool(binding, decision, arguments=arguments)
    except DtoValidationError as error:  # said for the person who replied
        raise UninterpretableReplyError(error.said()) from error
    return Reading(decision=decision, model_call=model_call)


def _context_of(record: PauseRecord) -> ExecutionContext:
    step = StepContext(
        node_id=record.node_id, call_id=record.ask.call_id, idempotency_key=record.idempotency_key
    )
    return frame_of_pause(record).context(step)


def _create(runtime: Runtime, interpreter: type, context: ExecutionContext) -> Any:
    """The interpreter, its deps (``ExecutionContext`` too) read in the pause's frame."""
    try:
        return runtime.container.create(interpreter, context)
    except GraphInterrupt:
        raise
    except Exception as error:  # a crash is an unreadable reply, the error its cause
        raise UninterpretableReplyError(
            f"the interpreter could not be created: {failure_text(error)}"
        ) from error


async def _by_code(instance: Any, reply_input: ReplyInput) -> Any:
    try:
        outcome = instance.interpret(reply_input)
        if inspect.isawaitable(outcome):
            outcome = await outcome
    except GraphInterrupt:
        raise
    except Exception as error:  # a crash is an unreadable reply, the error its cause
        raise UninterpretableReplyError(failure_text(error)) from error
    if not isinstance(outcome, ReplyInterpretation):
        raise UninterpretableReplyError(
            f"the interpreter returned {type(outcome).__name__}, not a ReplyInterpretation"
        )
    if not outcome.is_understood:
        raise UninterpretableReplyError(
            outcome.reason or "the reply was not understood", language=outcome.language
        )
    return outcome.value
