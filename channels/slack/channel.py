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
from typing import ClassVar, Final

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
from channels.kit.factory import PeopleRules, implement_role, listed, role_people, role_spec
from channels.slack.approvers import is_approver_id
from channels.slack.catalog import CONFIG_ATTRIBUTE, SlackChannelConfig
from channels.slack.conversation_ids import ANY_KIND, is_conversation_id
from channels.slack.gateway import SlackGateway
from channels.slack.tenant_tokens import speaking_for

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
        """The Slack user and user-group ids that may answer (a CHANNEL role): the code's; a
        workspace installed by OAuth may name its own (``channels.slack.workspaces``)."""
        return cls.slack.approvers

    async def _in(self, tenant: str) -> SlackChannelConfig:
        """Where this role asks and who answers it in ``tenant``'s workspace (its admin's
        settings over the code's: ``channels.slack.workspaces``)."""
        return await self._gateway.workspaces.config(tenant, self.implementation_name, self.slack)

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        with speaking_for(ask.tenant_id):  # installed by OAuth: with the tenant's own token
            await self._gateway.post_approval(
                ask, implementation=self.implementation_name, config=await self._in(ask.tenant_id)
            )
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal) -> None:
        with speaking_for(withdrawal.tenant_id):
            await self._gateway.show_withdrawn(withdrawal, answered_by=self.slack.answered_by)

    async def auto_decided(self, decision: ChannelAutoDecision) -> None:
        with speaking_for(decision.tenant_id):
            await self._gateway.tell_auto_decided(decision)

    async def remind(self, reminder: ChannelReminder) -> None:
        with speaking_for(reminder.tenant_id):
            await self._gateway.remind(reminder, config=await self._in(reminder.tenant_id))

    async def escalate(self, escalation: ChannelEscalation) -> None:
        with speaking_for(escalation.tenant_id):
            config = await self._in(escalation.tenant_id)
            await self._gateway.escalate(
                escalation, implementation=self.implementation_name, config=config
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
    where = f"slack_channel {name}"
    spec = role_spec(role, channel="slack_channel")
    conversation = _conversation(conversation, spec.answered_by, name)
    escalation = listed(escalate_to, "escalate_to", where)
    conversations = [c for c in escalation if is_conversation_id(c)]
    if len(conversations) > 1:
        raise SetupError(
            f"{where}: escalate_to names one conversation at most, got {conversations!r}"
        )
    if conversations and spec.answered_by is not PauseAnswerer.CHANNEL:
        raise SetupError(
            f"{where}: its role is answered by the thread's owner: nobody else may answer it, "
            "leave escalate_to out"
        )
    people = role_people(
        role,
        approvers=approvers,
        escalate_to=[c for c in escalation if c not in conversations],
        rules=SLACK_PEOPLE,
        channel="slack_channel",
        name=name,
    )
    config = SlackChannelConfig(
        conversation=conversation,
        approvers=people.approvers,
        answered_by=people.answered_by,
        role=people.role.name,
        escalate_to=people.escalate_to,
        escalation_conversation=conversations[0] if conversations else None,
    )
    return implement_role(
        role,
        name=name,
        base=SlackChannel,
        config=config,
        attribute=CONFIG_ATTRIBUTE,
        also_as="slack",
        label="in Slack",
        deps=[SlackGateway, ExecutionContext],
        escalates=bool(escalate_to),
        description=description,
        prefix="Slack",
    )


SLACK_PEOPLE: Final = PeopleRules(
    valid=is_approver_id,
    described="Slack user ids (U…, W…) or user-group ids (S…), or in escalate_to one "
    "conversation id (C…, G…)",
    one_of="one approver (a user id U… or a user-group id S…)",
)


def _conversation(conversation: str | None, answered_by: PauseAnswerer, name: str) -> str | None:
    if conversation is None and answered_by is PauseAnswerer.THREAD_OWNER:
        return None  # it asks in the owner's Slack thread
    if conversation is None or not is_conversation_id(conversation, kinds=ANY_KIND):
        raise SetupError(
            f"slack_channel {name}: conversation must be a Slack conversation id "
            f"(C…, G… or D…), got {conversation!r}"
        )
    return conversation
