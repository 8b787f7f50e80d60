"""A MODEL reply interpreter's reading: PII policies, budgets, the counted call, the answer.

In order, each step before the model is called leaving the pause untouched: the question and
the reply go through the application's and the workflows' PII policies (``PiiRefusedError``),
the instructions are put together (prompt and prompt URLs), the tree's budgets are checked
(``BudgetExceededError``) and the call counted in the ledger, the model is called under the
pause's execution (``reply-interpreter:<name>``), its answer is read and revealed. A model that
fails, gives no answer, several, or one with a token it was never given →
``UninterpretableReplyError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt
from pydantic import BaseModel

from bot.components.specs import ChannelRoleSpec, ReplyInterpreterSpec
from bot.core.context import ExecutionContext
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.errors import UninterpretableReplyError
from bot.core.field_errors import failure_text
from bot.core.reply import ReplyInput
from bot.core.sensitive import sensitive_fields
from bot.models import DecisionModelError, ModelProvider
from bot.runtime.answer_tool import (
    ANSWER_TOOL,
    NoAnswerError,
    answer_messages,
    answer_tool,
    read_answer,
)
from bot.runtime.budgets import budget_checks, lineage
from bot.runtime.decision_models import (
    answer_dto_of,
    ask_yes_or_no,
    decision_messages,
    decision_of,
    is_decision_model,
)
from bot.runtime.ledger import counted_call, model_label, price_for
from bot.runtime.pii import Shielded, UnknownTokenError, policies_of, shield
from bot.runtime.prompt_urls import PromptSource, PromptUrlError
from bot.runtime.services import Runtime
from bot.store.ledger import NewModelCall, SqlLedger
from bot.store.records import ExecutionRow, PauseRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyModels:
    """What model reply interpreters need from the App (one per App)."""

    providers: Sequence[ModelProvider]
    chat_model_for: Callable[[type, Any], BaseChatModel]
    ledger: SqlLedger
    prompts: PromptSource

    @classmethod
    def of_app(
        cls,
        providers: Sequence[ModelProvider],
        chat_model_for: Callable[[type, Any], BaseChatModel],
        ledger: SqlLedger,
    ) -> ReplyModels:
        return cls(
            providers=tuple(providers),
            chat_model_for=chat_model_for,
            ledger=ledger,
            prompts=PromptSource(),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelReading:
    """One reply to read: the interpreter, its role, the pause and the frame it reads in."""

    interpreter: type
    spec: ReplyInterpreterSpec
    role: ChannelRoleSpec
    record: PauseRecord
    reply_input: ReplyInput
    context: ExecutionContext
    tool_input: type[BaseModel] | None

    @property
    def caller(self) -> str:
        return f"reply-interpreter:{self.spec.name}"


async def read_with_model(
    runtime: Runtime, models: ReplyModels, reading: ModelReading
) -> tuple[Any, int]:
    """The model's answer, revealed (not validated yet), and the ledger id of its call."""
    spec, record = reading.spec, reading.record
    chat_model = _chat_model(models.chat_model_for, reading)
    decides = is_decision_model(reading.interpreter, spec.model, models.providers)
    answer_dto = answer_dto_of(reading.role)
    if decides and answer_dto is not ToolCallApprovalDecision:
        raise UninterpretableReplyError(
            f"{spec.name} runs on a decision model, which cannot answer {answer_dto.__name__}"
        )
    tree = await runtime.store.list_executions_by_root(record.root_execution_id)
    chain = lineage(tree, record.execution_id)
    shielded = shield(
        policies_of(runtime.assembly, chain),
        reading.reply_input,
        sensitive_fields(reading.tool_input),
    )
    instructions = await _instructions(models.prompts, spec)
    if decides:
        messages = decision_messages(instructions, shielded.ask, shielded.reply)
    else:
        messages = answer_messages(instructions, shielded.ask, shielded.reply)
    config = _trace(reading)

    async def invoke() -> BaseMessage:
        try:
            if decides:
                return await ask_yes_or_no(chat_model, messages, config)
            tool = answer_tool(answer_dto, reading.tool_input)
            bound = chat_model.bind_tools([tool], tool_choice=ANSWER_TOOL)
            return await bound.ainvoke(messages, config=config)
        except GraphInterrupt:
            raise
        except Exception as error:  # a model that failed: an unreadable reply, its cause
            raise UninterpretableReplyError(
                f"the interpreter's model failed: {failure_text(error)}"
            ) from error

    now = runtime.clock.now()
    call_id, message = await counted_call(
        models.ledger,
        _new_call(reading, chain, now),
        budget_checks(runtime.assembly, tree, record.execution_id, now),
        price_for(spec.model, models.providers),
        invoke,
        metrics=runtime.metrics,
    )
    return _answer(message, shielded, decides=decides), call_id


def _chat_model(
    chat_model_for: Callable[[type, Any], BaseChatModel], reading: ModelReading
) -> BaseChatModel:
    try:
        return chat_model_for(reading.interpreter, reading.spec.model)
    except GraphInterrupt:
        raise
    except Exception as error:  # e.g. ModelUnservedError: the reply cannot be read now
        raise UninterpretableReplyError(
            f"the interpreter's model is not available: {failure_text(error)}"
        ) from error


async def _instructions(prompts: PromptSource, spec: ReplyInterpreterSpec) -> str:
    try:
        return await prompts.instructions(spec.prompt, spec.prompt_urls)
    except PromptUrlError as error:
        raise UninterpretableReplyError(str(error)) from error


def _new_call(reading: ModelReading, chain: Sequence[ExecutionRow], at: datetime) -> NewModelCall:
    record = reading.record
    return NewModelCall(
        tenant_id=record.tenant_id,
        root_execution_id=record.root_execution_id,
        execution_id=record.execution_id,
        workflow=chain[0].workflow if chain else "",
        caller=reading.caller,
        model=model_label(reading.spec.model),
        pause_key=record.idempotency_key,
        at=at,
    )


def _trace(reading: ModelReading) -> RunnableConfig:
    """The call's run: named by its caller, under the pause's execution (never the pause id)."""
    context = reading.context
    step = context.step
    return {
        "run_name": reading.caller,
        "tags": ["countersign", reading.caller],
        "metadata": {
            "countersign_caller": reading.caller,
            "tenant_id": context.tenant.tenant_id,
            "owner_id": context.owner_id,
            "execution_id": context.execution_id,
            "root_execution_id": context.root_execution_id,
            "thread_id": context.thread_id,
            "step_node_id": step.node_id if step else None,
            "step_call_id": step.call_id if step else None,
        },
    }


def _answer(message: BaseMessage, shielded: Shielded, *, decides: bool) -> Any:
    try:
        answer = decision_of(message) if decides else read_answer(message)
        return shielded.reveal(answer)
    except (NoAnswerError, DecisionModelError, UnknownTokenError) as error:
        raise UninterpretableReplyError(str(error)) from error
