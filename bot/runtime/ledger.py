"""Counting a model call: checked against the budgets and written to the ledger before it is
made, its tokens and cost filled in when it answered.

The cost is the tokens of ``AIMessage.usage_metadata`` at the price the serving provider gives
for the model (``price_of(model)``, e.g. ``OpenAICompatibleSettings.prices``), else 0.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage

from bot.core.budget import ModelPrice
from bot.core.errors import BudgetExceededError
from bot.core.metrics import Metrics
from bot.runtime.budgets import BudgetCheck, refuse_exhausted
from bot.store.ledger import NewModelCall, SqlLedger


@runtime_checkable
class PricesModels(Protocol):
    """A provider that knows what its models cost."""

    def price_of(self, model: str) -> ModelPrice | None: ...


def price_for(model: Any, providers: Sequence[Any]) -> ModelPrice | None:
    """The price the first provider serving ``model`` (a name) gives for it, if any."""
    if not isinstance(model, str):
        return None
    for provider in providers:
        if provider.serves(model):
            return provider.price_of(model) if isinstance(provider, PricesModels) else None
    return None


def model_label(model: Any) -> str:
    """How the ledger names a model: its name, or the class of a chat model instance."""
    if isinstance(model, str):
        return model
    if isinstance(model, BaseChatModel):
        name = getattr(model, "model_name", None) or getattr(model, "model", None)
        return name if isinstance(name, str) else type(model).__name__
    return type(model).__name__


def usage_of(message: BaseMessage) -> tuple[int, int]:
    """Input and output tokens a response reports (0 and 0 if it reports none)."""
    usage = message.usage_metadata if isinstance(message, AIMessage) else None
    if not usage:
        return 0, 0
    return int(usage.get("input_tokens", 0) or 0), int(usage.get("output_tokens", 0) or 0)


async def counted_call(
    ledger: SqlLedger,
    call: NewModelCall,
    checks: Sequence[BudgetCheck],
    price: ModelPrice | None,
    invoke: Callable[[], Awaitable[BaseMessage]],
    *,
    metrics: Metrics | None = None,
) -> tuple[int, BaseMessage]:
    """Make the call ``invoke`` makes, counted; returns its ledger id and the response.

    ``BudgetExceededError`` before anything is called when a budget is exhausted. A call that
    raises stays counted (it was made), with no tokens.
    """
    try:
        call_id = await ledger.open_call(
            call, [check.scope for check in checks], lambda spends: refuse_exhausted(checks, spends)
        )
    except BudgetExceededError:
        if metrics is not None:
            metrics.model_call(call.caller, "over_budget")
        raise
    try:
        message = await invoke()
    except BaseException:
        if metrics is not None:
            metrics.model_call(call.caller, "failed")
        raise
    input_tokens, output_tokens = usage_of(message)
    cost = price.cost(input_tokens=input_tokens, output_tokens=output_tokens) if price else 0.0
    await ledger.settle_call(
        call_id, input_tokens=input_tokens, output_tokens=output_tokens, cost=cost
    )
    if metrics is not None:
        metrics.model_call(call.caller, "ok", cost=cost)
    return call_id, message
