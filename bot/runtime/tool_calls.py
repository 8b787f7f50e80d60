"""One tool call of an agent: validate, ask the channel if there is one, run at most once."""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, assert_never

from langchain_core.messages import ToolMessage
from langchain_core.messages.tool import ToolCall
from langgraph.errors import GraphInterrupt
from pydantic import BaseModel, ValidationError

from bot.core.clock import wait_with_timeout
from bot.core.context import StepContext
from bot.core.dtos import ToolCallApprovalAsk
from bot.core.enums import PauseResolution
from bot.core.errors import AgentFailedError, ToolError
from bot.core.field_errors import failure_text
from bot.core.pii import PiiPolicy
from bot.core.sensitive import sensitive_fields
from bot.core.tracing import span
from bot.runtime.assembly import ToolBinding
from bot.runtime.expiry import nobody_in_time
from bot.runtime.frame import RunFrame
from bot.runtime.pii import policies_of
from bot.runtime.question_context import masked_context
from bot.runtime.run_once import GiveBack, MayHaveRun, RunNow, earlier_run, may_have_run
from bot.runtime.seam import Closed, PausePlace, Taken, ask_channel
from bot.runtime.services import Runtime


def tool_error(call: ToolCall, name: str, text: str) -> ToolMessage:
    return ToolMessage(
        content=f"Tool error: {text}", tool_call_id=call["id"] or "", name=name, status="error"
    )


def _render(result: Any) -> str:
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    if isinstance(result, str):
        return result
    return json.dumps(result, default=str, ensure_ascii=False)


class _Tool(Protocol):
    """A ``@tool`` instance: ``run`` takes the validated input, sync or async."""

    def run(self, input: BaseModel, /) -> object: ...


async def _run(
    runtime: Runtime, binding: ToolBinding, frame: RunFrame, step: StepContext, value: BaseModel
) -> str:
    tool: _Tool = runtime.container.create(binding.spec.cls, frame.context(step))
    with span("tool", tool=binding.spec.name, execution_id=frame.execution_id):
        result = tool.run(value)
        if inspect.isawaitable(result):
            result = await wait_with_timeout(runtime.clock, result, binding.spec.timeout)
    return _render(result)


@dataclass(frozen=True, kw_only=True, slots=True)
class Said:
    """What the conversation says beside a call: what the person asked (the latest human
    message before the model's turn) and the model's own words in that turn."""

    request: str | None = None
    reason: str | None = None


NOTHING_SAID: Final = Said()


async def call_tool(
    runtime: Runtime,
    binding: ToolBinding,
    frame: RunFrame,
    call: ToolCall,
    place: PausePlace,
    *,
    said: Said = NOTHING_SAID,
) -> ToolMessage:
    """The message the model reads for ``call``; its question carries ``said``, masked like
    its arguments."""
    name = binding.spec.name
    try:
        value = binding.spec.input.model_validate(call["args"])
    except ValidationError as error:
        return tool_error(call, name, f"invalid arguments for {name}: {error.errors()}")
    step = StepContext(node_id=place.checkpoint_ns, call_id=call["id"])
    if binding.channel is None:
        return await _run_reporting_errors(runtime, binding, frame, step, value, call, place.agent)
    arguments = value.model_dump(mode="json")
    ask = ToolCallApprovalAsk(
        tool=name,
        arguments=arguments,
        call_id=call["id"] or "",
        request=_masked(runtime, binding, frame, said.request, arguments),
        stated_reason=_masked(runtime, binding, frame, said.reason, arguments),
    )
    outcome = await ask_channel(runtime, binding, frame, ask, place)
    if isinstance(outcome, Closed):
        return _closed(binding, frame, call, outcome)
    return await _take(runtime, binding, frame, step, value, call, outcome, place.agent)


def _masked(
    runtime: Runtime,
    binding: ToolBinding,
    frame: RunFrame,
    text: str | None,
    arguments: Mapping[str, Any],
) -> str | None:
    """``text`` as a question may keep and show it: the call's ``Sensitive`` values and what
    the application's and the workflow's PII policies find, masked."""
    if text is None:
        return None
    policies = policies_of(runtime.assembly, [])
    workflow = next(
        (w for w in runtime.assembly.workflows.values() if w.name == frame.workflow), None
    )
    if workflow is not None:
        policies += [p for p in workflow.pii_policies if isinstance(p, PiiPolicy)]
    return masked_context(
        text, policies=policies, arguments=arguments, sensitive=sensitive_fields(binding.spec.input)
    )


def _closed(binding: ToolBinding, frame: RunFrame, call: ToolCall, closed: Closed) -> ToolMessage:
    """What the model reads of a question that closed without an answer; an expired one fails
    the step instead when its timing says so."""
    name = binding.spec.name
    match closed.resolution:
        case PauseResolution.EXPIRED:
            said = nobody_in_time(binding, name, closed.at, execution_id=frame.execution_id)
            return tool_error(call, name, said)
        case PauseResolution.WITHDRAWN:
            return tool_error(call, name, "the call was withdrawn before it was answered")
        case _:
            return tool_error(call, name, "the call was cancelled before it was answered")


async def _take(
    runtime: Runtime,
    binding: ToolBinding,
    frame: RunFrame,
    step: StepContext,
    value: BaseModel,
    call: ToolCall,
    taken: Taken,
    agent: str,
) -> ToolMessage:
    name = binding.spec.name
    decision = taken.decision
    if not decision.approved:
        who = taken.responder or taken.record.channel
        reason = f": {decision.reason}" if decision.reason else ""
        return tool_error(call, name, f"the call was rejected by {who}{reason}")
    # taking the decision is the run's start; its result is saved on the pause
    earlier = earlier_run(first_start=taken.first_take, saved=taken.record.tool_result)
    match earlier:
        case GiveBack(result=result):
            return ToolMessage(content=result, tool_call_id=call["id"] or "", name=name)
        case MayHaveRun():
            return tool_error(call, name, may_have_run(name))
        case RunNow():
            pass
        case _:
            assert_never(earlier)
    if decision.override_arguments is not None:
        value = binding.spec.input.model_validate(decision.override_arguments)
    message = await _run_reporting_errors(runtime, binding, frame, step, value, call, agent)
    # Saved with the pass's last write (``Engine``): this call is its own task (``Send``), and
    # LangGraph saves the task's message as it returns, so no pass runs the tool again meanwhile.
    frame.held_results[taken.record.pause_id] = str(message.content)
    return message


async def _run_reporting_errors(
    runtime: Runtime,
    binding: ToolBinding,
    frame: RunFrame,
    step: StepContext,
    value: BaseModel,
    call: ToolCall,
    agent: str,
) -> ToolMessage:
    name = binding.spec.name
    try:
        content = await _run(runtime, binding, frame, step, value)
    except GraphInterrupt:
        raise
    except ToolError as error:  # meant for the model: it reads it and may try otherwise
        return tool_error(call, name, error.message)
    except TimeoutError as error:
        raise AgentFailedError(
            f"the tool {name} timed out after {binding.spec.timeout}",
            agent=agent,
            execution_id=frame.execution_id,
        ) from error
    except Exception as error:
        raise AgentFailedError(
            f"the tool {name} failed: {failure_text(error)}",
            agent=agent,
            execution_id=frame.execution_id,
        ) from error
    return ToolMessage(content=content, tool_call_id=call["id"] or "", name=name)
