"""The built-in Slack office desk: served by ``python -m bot serve`` without ``COUNTERSIGN_APP``.

Mention the bot (or DM it) with a request such as "refund order A-1001, 120.00, it arrived
broken": its agent may refund a card and book an expense, each after an approval in Slack.

* refunds: approved in ``COUNTERSIGN_APPROVAL_CHANNEL`` by ``COUNTERSIGN_APPROVERS`` (Slack
  user / user-group ids, comma-separated); without approvers, by the requester, in their thread;
* expenses: confirmed by the requester, in their thread.

Replies in a question's thread are read by the keyword interpreter ("approve", "reject: too
much"). The agent's model is ``COUNTERSIGN_DESK_MODEL``, served by the configured provider
(``COUNTERSIGN_MODEL_*``); ``offline`` is the terminal demo's scripted model (no provider, no
network): whatever is asked, it asks to refund order A-1001 and to book a team lunch.

``COUNTERSIGN_DESK_AGENT=langgraph`` runs the same desk as your own LangGraph agent would: a
LangChain ``create_agent`` with ``HumanInTheLoopMiddleware`` over the same tools, attached to the
refund role with ``App.langgraph`` (``bot.desk.langgraph_desk``; it needs LangChain installed,
``pip install 'countersign[langchain]'``). Refunds are asked in Slack as before; expenses are
booked without asking, as the middleware is told.
"""

from __future__ import annotations

from typing import Final

from bot.components.decorators import (
    reply_interpreter,
)
from bot.core.enums import DecidedBy, PauseAnswerer
from bot.desk.office import desk_application, desk_roles
from bot.desk.offline_model import OfflineDemoModel
from bot.desk.settings import OFFLINE_MODEL, DeskSettings
from channels.slack import slack_channel
from interpreters import KeywordReplyInterpreter

DESK_APPLICATION: Final = "slack-office-desk"


# ------------------------------------------------------------------------------- the tools


@reply_interpreter(
    name="desk-refund-reply-interpreter",
    description="Reads approve / reject[: reason] in a reply to a refund",
    decided_by=DecidedBy.CODE,
)
class DeskRefundReplyInterpreter(KeywordReplyInterpreter): ...


@reply_interpreter(
    name="desk-expense-reply-interpreter",
    description="Reads approve / reject[: reason] in a reply to an expense",
    decided_by=DecidedBy.CODE,
)
class DeskExpenseReplyInterpreter(KeywordReplyInterpreter): ...


def build_desk(settings: DeskSettings) -> type:
    """The desk application for these settings (its classes are made for them)."""
    refund_answered_by = PauseAnswerer.CHANNEL if settings.approvers else PauseAnswerer.THREAD_OWNER
    refund_role, expense_role = desk_roles(
        refund_answered_by=refund_answered_by,
        refund_description="Approves card refunds",
        interpreters=(DeskRefundReplyInterpreter, DeskExpenseReplyInterpreter),
        prefix="Desk",
    )
    refunds = slack_channel(
        refund_role,
        name="slack-desk-refund-approval-channel",
        conversation=settings.approval_channel,
        approvers=settings.approvers,
    )
    expenses = slack_channel(
        expense_role,
        name="slack-desk-expense-approval-channel",
        conversation=settings.approval_channel,
    )

    return desk_application(
        name=DESK_APPLICATION,
        description="An office desk agent whose refunds and expenses are approved in Slack",
        roles=(refund_role, expense_role),
        channels=[refunds, expenses],
        model=OfflineDemoModel() if settings.model == OFFLINE_MODEL else settings.model,
    )
