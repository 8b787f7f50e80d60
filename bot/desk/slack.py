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

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from bot.components.decorators import (
    reply_interpreter,
)
from bot.core.enums import DecidedBy, PauseAnswerer
from bot.core.errors import SettingsError
from bot.desk.office import desk_application, desk_roles
from bot.desk.offline_model import OFFLINE_MODEL, OfflineDemoModel
from bot.models import ModelProvider, serving_provider
from bot.settings import environment
from channels.slack import slack_channel
from channels.slack.approvers import is_approver_id
from channels.slack.conversation_ids import is_conversation_id
from interpreters import KeywordReplyInterpreter

DEFAULT_DESK_MODEL: Final = "moonshotai/kimi-k2.6"


DESK_AGENTS: Final = ("native", "langgraph")
"""``COUNTERSIGN_DESK_AGENT``: the desk's own agent, or a LangChain agent attached to it."""
DESK_APPLICATION: Final = "slack-office-desk"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeskSettings:
    approval_channel: str
    approvers: tuple[str, ...]
    model: str
    agent: str = "native"


def load_desk_settings(
    environ: Mapping[str, str] | None = None, *, env_file: str | None = ".env"
) -> DeskSettings:
    """The desk's settings; each missing or malformed one is one ``SettingsError`` line."""
    values = environment(environ, env_file=env_file)
    channel = values.get("COUNTERSIGN_APPROVAL_CHANNEL", "").strip()
    if not channel:
        raise SettingsError(
            "COUNTERSIGN_APPROVAL_CHANNEL is missing: the id of the Slack channel where the "
            "desk asks for approvals (C…; the channel's details show it), invite the bot there"
        )
    if not is_conversation_id(channel):  # the rule slack_channel applies: one for both
        raise SettingsError(
            f"COUNTERSIGN_APPROVAL_CHANNEL is malformed: a channel id such as C0123456789, "
            f"not {channel!r}"
        )
    approvers = tuple(
        a.strip() for a in values.get("COUNTERSIGN_APPROVERS", "").split(",") if a.strip()
    )
    wrong = [a for a in approvers if not is_approver_id(a)]
    if wrong:
        raise SettingsError(
            f"COUNTERSIGN_APPROVERS is malformed: Slack user ids (U…) or user-group ids (S…), "
            f"comma-separated, not {', '.join(wrong)}"
        )
    model = values.get("COUNTERSIGN_DESK_MODEL", "").strip() or DEFAULT_DESK_MODEL
    agent = values.get("COUNTERSIGN_DESK_AGENT", "").strip().lower() or "native"
    if agent not in DESK_AGENTS:
        raise SettingsError(
            f"COUNTERSIGN_DESK_AGENT is malformed: {' or '.join(DESK_AGENTS)}, not {agent!r}"
        )
    if agent == "langgraph" and importlib.util.find_spec("langchain") is None:
        raise SettingsError(
            "COUNTERSIGN_DESK_AGENT=langgraph needs LangChain (create_agent and its "
            "HumanInTheLoopMiddleware): pip install 'countersign[langchain]'"
        )
    return DeskSettings(approval_channel=channel, approvers=approvers, model=model, agent=agent)


def check_desk_model(settings: DeskSettings, providers: list[ModelProvider]) -> None:
    """One clear line when no configured provider serves the desk's model."""
    if settings.model == OFFLINE_MODEL:
        return
    if serving_provider(settings.model, providers) is None:
        raise SettingsError(
            f"COUNTERSIGN_MODEL_NAMES: no model provider serves the desk's model "
            f"{settings.model!r}: set COUNTERSIGN_MODEL_BASE_URL, COUNTERSIGN_MODEL_API_KEY and "
            "COUNTERSIGN_MODEL_NAMES (or COUNTERSIGN_DESK_MODEL to a model they serve, or to "
            f"{OFFLINE_MODEL} for the scripted demo model)"
        )


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
