"""Applications with parallel launches, per-item launches and child workflows.

The agents' models are rule-based (they read the conversation), so concurrent branches of one
agent behave deterministically whatever order they run in.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, PrivateAttr

from bot import (
    OnExpiry,
    PauseTiming,
    StepFailedError,
    WorkflowStartText,
    agent,
    application,
    join_quorum,
    join_quorum_groups,
    start,
    tool,
    workflow,
)
from tests.apps import OfficeFinish, OfficeStart
from tests.office import (
    ASKED,
    Inbox,
    Ledger,
    RecordingExpenseChannel,
    RecordingRefundChannel,
    RefundApprovalChannel,
    RefundCardInput,
)

_ids = itertools.count(1)
Rule = Callable[[list[BaseMessage]], AIMessage]


class RuleModel(BaseChatModel):
    """Answers by a rule over the conversation; counts its calls."""

    name_: str = "rule"
    delay: float = 0.001
    waits_for_an_ask: bool = False
    records_calls: bool = True
    _rule: Rule = PrivateAttr()
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    def __init__(
        self,
        rule: Rule,
        name: str,
        delay: float = 0.001,
        waits_for_an_ask: bool = False,
        records_calls: bool = True,
    ) -> None:
        super().__init__(
            name_=name, delay=delay, waits_for_an_ask=waits_for_an_ask, records_calls=records_calls
        )
        self._rule = rule

    @property
    def _llm_type(self) -> str:
        return "rule"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        return self._calls

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.records_calls:
            self._calls.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self._rule(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.waits_for_an_ask:
            await ASKED.wait()
        await asyncio.sleep(self.delay)  # let siblings interleave
        return self._generate(messages, stop)


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": f"call_{next(_ids)}"}]
    )


def _request(messages: list[BaseMessage]) -> str:
    return next(str(m.content) for m in messages if isinstance(m, HumanMessage))


def _tool_results(messages: list[BaseMessage]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


def ask_refund_rule(messages: list[BaseMessage]) -> AIMessage:
    """Asks one refund of the amount in the request, then reports the tool's answer."""
    results = _tool_results(messages)
    if not results:
        amount = float(_request(messages).split()[-1]) if _request(messages)[-1:].isdigit() else 5.0
        return _call("refund-card-tool", {"order_id": _request(messages)[:20], "amount": amount})
    return AIMessage(content=f"refund: {results[-1]}")


def three_steps_rule(messages: list[BaseMessage]) -> AIMessage:
    """Looks three orders up one after another (three model turns), then answers."""
    results = _tool_results(messages)
    if len(results) < 3:
        return _call("lookup-order-tool", {"order_id": f"L{len(results)}"})
    return AIMessage(content="looked up 3 orders")


def failing_rule(messages: list[BaseMessage]) -> AIMessage:
    results = _tool_results(messages)
    if not results:
        return _call("declining-payment-tool", {"order_id": "X"})
    return AIMessage(content="unreachable")


def quick_rule(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage(content=f"quick answer to {_request(messages)}")


class PaymentDeclinedError(Exception):
    """A domain error raised by a tool."""


class OrderInput(BaseModel):
    order_id: str


@tool(name="declining-payment-tool", description="Always declined", input=OrderInput)
class DecliningPaymentTool:
    async def run(self, input: OrderInput) -> str:
        await ASKED.wait()  # fail once a sibling has asked (armed by the tests that need it)
        raise PaymentDeclinedError(f"card declined for {input.order_id}")


from tests.office import LookupOrderTool, RefundCardTool  # noqa: E402

ASKER = RuleModel(ask_refund_rule, "asker")
STEPPER = RuleModel(three_steps_rule, "stepper", delay=0.005, waits_for_an_ask=True)


@agent(
    name="asker-agent", description="Asks a refund", prompt="p", model=ASKER, tools=[RefundCardTool]
)
class AskerAgent: ...


@agent(
    name="second-asker-agent",
    description="Asks a refund",
    prompt="p",
    model=RuleModel(ask_refund_rule, "asker2"),
    tools=[RefundCardTool],
)
class SecondAskerAgent: ...


@agent(
    name="stepper-agent",
    description="Three steps",
    prompt="p",
    model=STEPPER,
    tools=[LookupOrderTool],
)
class StepperAgent: ...


@agent(
    name="failing-agent",
    description="Fails",
    prompt="p",
    model=RuleModel(failing_rule, "failing"),
    tools=[DecliningPaymentTool],
)
class FailingAgent: ...


@agent(
    name="quick-agent",
    description="Answers at once",
    prompt="p",
    model=RuleModel(quick_rule, "quick"),
)
class QuickAgent: ...


def _wf(name: str, flow: Any) -> Any:
    def decorate(cls: type) -> type:
        return workflow(name=name, version="1", flow=[flow])(cls)

    return decorate


def _start() -> Any:
    return start(OfficeStart).returns(WorkflowStartText)


@_wf(
    "all-three-workflow",
    _start().to_parallel([AskerAgent, SecondAskerAgent, StepperAgent]).to_finish(OfficeFinish),
)
class AllThreeWorkflow: ...


@_wf(
    "fail-fast-workflow",
    _start().to_parallel([AskerAgent, FailingAgent, StepperAgent]).to_finish(OfficeFinish),
)
class FailFastWorkflow: ...


@_wf(
    "handled-fail-fast-workflow",
    _start()
    .to_parallel([AskerAgent, FailingAgent])
    .on_join_error(
        PaymentDeclinedError,
        lambda f: f"declined: {f.error.__cause__}; stopped {sorted([*f.withdrawn, *f.cancelled])}",
    )
    .to_finish(OfficeFinish),
)
class HandledFailFastWorkflow: ...


@_wf(
    "quorum-workflow",
    _start()
    .to_parallel([AskerAgent, QuickAgent, StepperAgent], join=join_quorum(max=2))
    .to_finish(OfficeFinish),
)
class QuorumWorkflow: ...


@_wf(
    "late-quorum-workflow",
    _start()
    .to_parallel([AskerAgent, SecondAskerAgent, QuickAgent], join=join_quorum(max=2))
    .to_finish(OfficeFinish),
)
class LateQuorumWorkflow: ...


@_wf("per-item-workflow", _start().for_each(AskerAgent, max_concurrency=2).to_finish(OfficeFinish))
class PerItemWorkflow: ...


# ---- children


@_wf("refund-child-workflow", _start().to_agent(AskerAgent).to_finish(OfficeFinish))
class RefundChildWorkflow: ...


@_wf("failing-child-workflow", _start().to_agent(FailingAgent).to_finish(OfficeFinish))
class FailingChildWorkflow: ...


@_wf("middle-workflow", _start().to_workflow(RefundChildWorkflow).to_finish(OfficeFinish))
class MiddleWorkflow: ...


@_wf("grandparent-workflow", _start().to_workflow(MiddleWorkflow).to_finish(OfficeFinish))
class GrandparentWorkflow: ...


@_wf(
    "children-fail-fast-workflow",
    _start().to_parallel_workflows([MiddleWorkflow, FailingChildWorkflow]).to_finish(OfficeFinish),
)
class ChildrenFailFastWorkflow: ...


@_wf("per-item-children-workflow", _start().for_each(RefundChildWorkflow).to_finish(OfficeFinish))
class PerItemChildrenWorkflow: ...


@application(
    name="parallel",
    workflows=[
        AllThreeWorkflow,
        FailFastWorkflow,
        HandledFailFastWorkflow,
        QuorumWorkflow,
        LateQuorumWorkflow,
        PerItemWorkflow,
        GrandparentWorkflow,
        ChildrenFailFastWorkflow,
        PerItemChildrenWorkflow,
    ],
    channels=[RecordingRefundChannel, RecordingExpenseChannel],
)
class ParallelApplication: ...


__all__ = ["Inbox", "Ledger", "RefundApprovalChannel", "RefundCardInput", "json"]


@_wf(
    "deadline-quorum-workflow",
    _start()
    .to_parallel(
        [AskerAgent, SecondAskerAgent, QuickAgent],
        join=join_quorum(max=3, deadline=timedelta(hours=1)),
    )
    .to_finish(OfficeFinish),
)
class DeadlineQuorumWorkflow: ...


@application(
    name="deadline",
    workflows=[DeadlineQuorumWorkflow],
    channels=[RecordingRefundChannel, RecordingExpenseChannel],
)
class DeadlineApplication: ...


@_wf(
    "rescued-workflow",
    _start()
    .to_agent(FailingAgent)
    .on_error(PaymentDeclinedError, lambda error: f"rescued: {error.__cause__}")
    .to_agent(QuickAgent)
    .to_finish(OfficeFinish),
)
class RescuedWorkflow: ...


@application(name="rescued", workflows=[RescuedWorkflow], channels=[RecordingRefundChannel])
class RescuedApplication: ...


@_wf(
    "groups-workflow",
    _start()
    .to_parallel(
        [QuickAgent, AskerAgent, StepperAgent, SecondAskerAgent],
        join=join_quorum_groups({"fast": [0, 2], "slow": [1, 3]}, max=2),
    )
    .to_finish(OfficeFinish),
)
class GroupsWorkflow: ...


@_wf(
    "unreachable-workflow",
    _start()
    .to_parallel([FailingAgent, AskerAgent], join=join_quorum(max=2))
    .on_join_error(StepFailedError, lambda f: f"unreachable: {f.error}")
    .to_finish(OfficeFinish),
)
class UnreachableWorkflow: ...


@_wf(
    "step-failed-workflow",
    _start()
    .to_parallel([AskerAgent, FailingAgent])
    .on_join_error(StepFailedError, lambda f: f"a step failed: {type(f.error).__name__}")
    .to_finish(OfficeFinish),
)
class StepFailedHandlerWorkflow: ...


@application(
    name="joins",
    workflows=[GroupsWorkflow, UnreachableWorkflow, StepFailedHandlerWorkflow],
    channels=[RecordingRefundChannel, RecordingExpenseChannel],
)
class JoinsApplication: ...


# ------------------------------------------------------------------------- time on a question


def _timed_refund_tool(name: str, timing: PauseTiming) -> type:
    """A refund tool whose questions expire (``timing``), asked through the refunds role."""

    @tool(
        name=name,
        description="Refunds a card, if approved in time",
        input=RefundCardInput,
        channel=RefundApprovalChannel,
        timing=timing,
    )
    class TimedRefundTool:
        async def run(self, input: RefundCardInput) -> str:
            return f"refunded {input.amount}"

    return TimedRefundTool


def _asks_with(tool_name: str) -> Rule:
    def rule(messages: list[BaseMessage]) -> AIMessage:
        results = _tool_results(messages)
        if not results:
            return _call(tool_name, {"order_id": _request(messages)[:20], "amount": 5.0})
        return AIMessage(content=f"{tool_name}: {results[-1]}")

    return rule


EXPIRY = timedelta(hours=1)
FailingOnExpiryTool = _timed_refund_tool(
    "failing-on-expiry-refund-tool", PauseTiming(expire_after=EXPIRY, on_expiry=OnExpiry.FAIL)
)
ReadingExpiryTool = _timed_refund_tool(
    "reading-expiry-refund-tool", PauseTiming(expire_after=EXPIRY)
)


@agent(
    name="failing-on-expiry-agent",
    description="Asks a refund that fails its step when nobody answers in time",
    prompt="p",
    model=RuleModel(_asks_with("failing-on-expiry-refund-tool"), "failing-on-expiry"),
    tools=[FailingOnExpiryTool],
)
class FailingOnExpiryAgent: ...


@agent(
    name="reading-expiry-agent",
    description="Asks a refund and reads that nobody answered in time",
    prompt="p",
    model=RuleModel(_asks_with("reading-expiry-refund-tool"), "reading-expiry"),
    tools=[ReadingExpiryTool],
)
class ReadingExpiryAgent: ...


@_wf(
    "expiring-fail-fast-workflow",
    _start().to_parallel([FailingOnExpiryAgent, AskerAgent]).to_finish(OfficeFinish),
)
class ExpiringFailFastWorkflow: ...


@_wf(
    "expiring-quorum-workflow",
    _start()
    .to_parallel([ReadingExpiryAgent, QuickAgent, AskerAgent], join=join_quorum(max=2))
    .to_finish(OfficeFinish),
)
class ExpiringQuorumWorkflow: ...


@_wf("expiring-child-workflow", _start().to_agent(ReadingExpiryAgent).to_finish(OfficeFinish))
class ExpiringChildWorkflow: ...


@_wf(
    "expiring-parent-workflow",
    _start().to_workflow(ExpiringChildWorkflow).to_finish(OfficeFinish),
)
class ExpiringParentWorkflow: ...


@application(
    name="expiring",
    workflows=[ExpiringFailFastWorkflow, ExpiringQuorumWorkflow, ExpiringParentWorkflow],
    channels=[RecordingRefundChannel, RecordingExpenseChannel],
)
class ExpiringApplication: ...
