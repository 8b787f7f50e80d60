"""Slack channels: ``slack_channel(Role, ...)`` makes the concrete Slack implementation of a role.

```python
SlackRefunds = slack_channel(RefundApprovalChannel, name="slack-refund-approval-channel",
                             conversation="C0123456789", approvers=["U0MANAGER", "S0FINANCE"])

@application(name="office", workflows=[...], channels=[SlackRefunds])
```

``send`` posts the approval message (a CHANNEL role in ``conversation``; a THREAD_OWNER role in
the owner's Slack thread, else in ``conversation``) and stores its reference before returning;
``withdraw`` updates it to say the question is no longer needed, or was cancelled. The clicks and
thread replies that answer it are handled by ``channels.slack.SlackBot``, which also provides the
``SlackGateway`` these channels are given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from bot.components.decorators import channel
from bot.components.specs import ChannelRoleSpec, spec_of
from bot.core.channel import (
    AwaitReply,
    ChannelAsk,
    ChannelAutoDecision,
    ChannelEscalation,
    ChannelOf,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
)
from bot.core.context import ExecutionContext
from bot.core.enums import PauseAnswerer
from bot.core.errors import SetupError
from channels.slack.approvers import is_approver_id
from channels.slack.catalog import CONFIG_ATTRIBUTE, SlackChannelConfig
from channels.slack.conversation_ids import ANY_KIND, is_conversation_id
from channels.slack.gateway import SlackGateway

__all__ = ["SlackChannel", "slack_channel"]


class SlackChannel(ChannelOf):
    """The behaviour shared by every class ``slack_channel`` makes; not used on its own."""

    slack: ClassVar[SlackChannelConfig]
    implementation_name: ClassVar[str]

    def __init__(self, gateway: SlackGateway, context: ExecutionContext) -> None:
        self._gateway = gateway
        self._context = context

    @classmethod
    def approvers(cls) -> tuple[str, ...]:
        """The Slack user and user-group ids that may answer (a CHANNEL role)."""
        return cls.slack.approvers

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        await self._gateway.post_approval(
            ask, implementation=self.implementation_name, config=self.slack
        )
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal) -> None:
        await self._gateway.show_withdrawn(withdrawal, answered_by=self.slack.answered_by)

    async def auto_decided(self, decision: ChannelAutoDecision) -> None:
        await self._gateway.tell_auto_decided(decision)

    async def remind(self, reminder: ChannelReminder) -> None:
        await self._gateway.remind(reminder, config=self.slack)

    async def escalate(self, escalation: ChannelEscalation) -> None:
        await self._gateway.escalate(
            escalation, implementation=self.implementation_name, config=self.slack
        )


def slack_channel(
    role: type,
    *,
    name: str,
    conversation: str | None = None,
    approvers: Sequence[str] = (),
    escalate_to: Sequence[str] = (),
    description: str | None = None,
) -> type[SlackChannel]:
    """A new class implementing ``role`` in Slack (decorated with ``@channel``).

    ``conversation`` is a Slack conversation id (``C…``, ``G…``, ``D…``); a THREAD_OWNER role
    may leave it out, and then asks only in the owner's Slack thread. ``approvers`` are
    Slack user ids (``U…``, ``W…``) and user-group ids (``S…``): required for a CHANNEL role,
    none for a THREAD_OWNER role (its owner answers). ``escalate_to`` (a CHANNEL role whose
    timing has ``escalate_after``) names who may answer too once the question is escalated:
    user ids and user-group ids, validated like ``approvers``, and at most one conversation id
    (``C…``, ``G…``) where the escalated question is asked again, with the same buttons; without
    one the escalation is a reply in the question's thread mentioning them. Misuse raises
    ``SetupError`` at once.
    """
    spec = spec_of(role)
    if not isinstance(spec, ChannelRoleSpec):
        raise SetupError(
            f"slack_channel: {getattr(role, '__name__', role)!s} is not a @channel_role"
        )
    answered_by = _answered_by(spec)
    escalation_approvers, escalation_conversation = _escalate_to(escalate_to, answered_by, name)
    config = SlackChannelConfig(
        conversation=_conversation(conversation, answered_by, name),
        approvers=_approvers(approvers, answered_by, name),
        answered_by=answered_by,
        role=spec.name,
        escalate_to=escalation_approvers,
        escalation_conversation=escalation_conversation,
    )
    namespace = {
        CONFIG_ATTRIBUTE: config,
        "slack": config,
        "implementation_name": name,
        "escalates": bool(escalate_to),
        "__module__": role.__module__,
        "__doc__": f"Asks {spec.name} in Slack.",
    }
    cls = type(f"Slack{role.__name__}", (SlackChannel, role), namespace)
    decorate = channel(
        name=name,
        description=description or f"Asks in Slack: {spec.description}",
        deps=[SlackGateway, ExecutionContext],
    )
    return decorate(cls)


def _answered_by(spec: ChannelRoleSpec) -> PauseAnswerer:
    if not isinstance(spec.answered_by, PauseAnswerer):
        raise SetupError(f"slack_channel: the role {spec.name} has no valid answered_by")
    return spec.answered_by


def _conversation(conversation: str | None, answered_by: PauseAnswerer, name: str) -> str | None:
    if conversation is None and answered_by is PauseAnswerer.THREAD_OWNER:
        return None  # it asks in the owner's Slack thread
    if conversation is None or not is_conversation_id(conversation, kinds=ANY_KIND):
        raise SetupError(
            f"slack_channel {name}: conversation must be a Slack conversation id "
            f"(C…, G… or D…), got {conversation!r}"
        )
    return conversation


def _approvers(approvers: Sequence[str], answered_by: PauseAnswerer, name: str) -> tuple[str, ...]:
    if isinstance(approvers, str):
        raise SetupError(f"slack_channel {name}: approvers is a list of ids, not one string")
    wrong = [a for a in approvers if not is_approver_id(a)]
    if wrong:
        raise SetupError(
            f"slack_channel {name}: approvers must be Slack user ids (U…, W…) or user-group "
            f"ids (S…), got {wrong!r}"
        )
    if answered_by is PauseAnswerer.CHANNEL and not approvers:
        raise SetupError(
            f"slack_channel {name}: its role is answered through the channel: name at least "
            "one approver (a user id U… or a user-group id S…)"
        )
    if answered_by is PauseAnswerer.THREAD_OWNER and approvers:
        raise SetupError(
            f"slack_channel {name}: its role is answered by the thread's owner: approvers "
            "would be ignored, leave them out"
        )
    return tuple(dict.fromkeys(approvers))


def _escalate_to(
    escalate_to: Sequence[str], answered_by: PauseAnswerer, name: str
) -> tuple[tuple[str, ...], str | None]:
    """``escalate_to`` as (its user and user-group ids, its conversation id or None)."""
    if isinstance(escalate_to, str):
        raise SetupError(f"slack_channel {name}: escalate_to is a list of ids, not one string")
    if escalate_to and answered_by is not PauseAnswerer.CHANNEL:
        raise SetupError(
            f"slack_channel {name}: its role is answered by the thread's owner: nobody else "
            "may answer it, leave escalate_to out"
        )
    conversations = [c for c in escalate_to if is_conversation_id(c)]
    wrong = [a for a in escalate_to if a not in conversations and not is_approver_id(a)]
    if wrong:
        raise SetupError(
            f"slack_channel {name}: escalate_to must be Slack user ids (U…, W…), user-group "
            f"ids (S…) or one conversation id (C…, G…), got {wrong!r}"
        )
    if len(conversations) > 1:
        raise SetupError(
            f"slack_channel {name}: escalate_to names one conversation at most, got "
            f"{conversations!r}"
        )
    approvers = tuple(dict.fromkeys(a for a in escalate_to if a not in conversations))
    return approvers, conversations[0] if conversations else None
