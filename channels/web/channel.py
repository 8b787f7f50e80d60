"""Web channels: ``web_channel(Role, ...)`` makes the web implementation of a role.

```python
WebRefunds = web_channel(RefundApprovalChannel, name="web-refund-approval-channel",
                         approvers=["finance@example.com", "auditor@example.com"])

@application(name="office", workflows=[...], channels=[WebRefunds])
```

``send`` makes, for each approver (a THREAD_OWNER role: for the requester), a signed link that
expires, and hands it to the notifier (``WebOutbox``, provided by ``WebServer``). Whoever holds
the link answers as that approver, on the question's page. ``remind`` tells them again (with a
fresh link); ``escalate`` tells the channel's ``escalate_to`` people, who may answer from then
on (and are reminded with the approvers after it). ``withdraw`` has nothing to update: the page
reads the question as it now is, so a withdrawn question shows as withdrawn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from typing import ClassVar, Final, Protocol

from bot.core.channel import (
    AwaitReply,
    ChannelAsk,
    ChannelEscalation,
    ChannelOf,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
)
from bot.core.context import ExecutionContext
from bot.core.dtos import ToolCallApprovalAsk
from bot.core.enums import PauseAnswerer
from bot.core.errors import SetupError
from bot.core.results import PauseView
from channels.kit.answerers import SeparatesDuties, without_requester
from channels.kit.factory import PeopleRules, implement_role, role_people
from channels.web.catalog import CONFIG_ATTRIBUTE, WebChannelConfig
from channels.web.links import LinkKind, LinkSigner
from channels.web.notify import NoticeKind, Notifier, WebNotice, log, notify_each

QUESTION_PATH: Final = "/q/"
INBOX_PATH: Final = "/i/"
_APPROVER: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}")

__all__ = ["WebChannel", "WebOutbox", "web_channel"]


class DescribeTool(Protocol):
    """What a question's tool is, by the tool, its asker (our agent or an attached graph) and
    its role (``Assembly.binding_of``)."""

    def __call__(self, tool: str, *, agent: str, role: str) -> str: ...


class TitleQuestion(Protocol):
    """The title of a question (``channels.kit.question.title_of``)."""

    def __call__(self, value: ToolCallApprovalAsk, *, agent: str, role: str) -> str: ...


def routed_to(question: ChannelAsk | ChannelReminder, config: WebChannelConfig) -> tuple[str, ...]:
    """The approvers a policy routed ``question`` to (``PolicyOutcome.route``); none: the
    channel's (and always for a question its owner answers)."""
    route = question.route
    if route is None or config.answered_by is PauseAnswerer.THREAD_OWNER:
        return ()
    return route.approvers


class WebOutbox:
    """Where web channels send: it signs a link per person and hands each its notice."""

    def __init__(
        self,
        *,
        signer: LinkSigner,
        base_url: str,
        notifier: Notifier,
        link_lifetime: timedelta,
        describe_tool: DescribeTool,
        title: TitleQuestion | None = None,
        separates_duties: SeparatesDuties | None = None,
    ) -> None:
        self._signer = signer
        self._separates = separates_duties or (lambda role, route=None, /: False)
        self._base_url = base_url.rstrip("/")
        self._notifier = notifier
        self._lifetime = link_lifetime
        self._describe = describe_tool
        self._title = title or (lambda value, *, agent, role: "")

    @property
    def base_url(self) -> str:
        return self._base_url

    def tool_description(self, tool: str, *, agent: str, role: str) -> str:
        """What ``tool`` is, as asked by ``agent`` under ``role`` (``Assembly.binding_of``)."""
        return self._describe(tool, agent=agent, role=role)

    def question_url(self, pause_id: str, *, approver: str, tenant_id: str) -> str:
        token = self._signer.token(
            LinkKind.QUESTION,
            pause_id=pause_id,
            approver=approver,
            tenant_id=tenant_id,
            valid_for=self._lifetime,
        )
        return f"{self._base_url}{QUESTION_PATH}{token}"

    def inbox_url(self, *, approver: str, tenant_id: str) -> str:
        token = self._signer.token(
            LinkKind.INBOX, approver=approver, tenant_id=tenant_id, valid_for=self._lifetime
        )
        return f"{self._base_url}{INBOX_PATH}{token}"

    async def hand_over(self, pause: PauseView, to: str, config: WebChannelConfig) -> None:
        """Tell ``to`` that a question was handed to them, with their own link."""
        notice = WebNotice(
            approver=to,
            url=self.question_url(pause.pause_id, approver=to, tenant_id=pause.tenant_id),
            tool=pause.ask.tool,
            tool_description=self._describe(pause.ask.tool, agent=pause.agent, role=pause.role),
            title=self._title(pause.ask, agent=pause.agent, role=pause.role),
            role_description=config.role_description,
            tenant_id=pause.tenant_id,
            kind=NoticeKind.HANDOVER,
            approvers=(to,),
        )
        await notify_each(config.notify or self._notifier, [notice])

    async def post(self, ask: ChannelAsk, config: WebChannelConfig) -> None:
        """The question, to each person it is asked of."""
        asked = routed_to(ask, config) or config.asked(ask.owner_id)
        await self._tell(config, ask, asked, kind=NoticeKind.QUESTION, asked=asked)

    async def remind(self, reminder: ChannelReminder, config: WebChannelConfig) -> None:
        """A reminder (its number, the expiry, who may answer), to each person who may answer
        it: those it was asked of, and once it is escalated the ``escalate_to`` people too."""
        people = config.may_answer(reminder.owner_id, escalated=reminder.escalated)
        routed = routed_to(reminder, config)
        if routed:  # a policy's approvers instead of the channel's
            extra = config.escalate_to if reminder.escalated else ()
            people = tuple(dict.fromkeys((*routed, *extra)))
        await self._tell(
            config,
            reminder,
            people,
            kind=NoticeKind.REMINDER,
            asked=people,
            reminder=reminder.reminded + 1,
        )

    async def escalate(self, escalation: ChannelEscalation, config: WebChannelConfig) -> None:
        """The escalated question, to each of the channel's ``escalate_to`` people, with links
        of their own (they may answer it from now on)."""
        if not config.escalate_to:
            log.info("web: a question of role %s escalated, to nobody", escalation.role)
            return
        await self._tell(
            config,
            escalation,
            config.escalate_to,
            kind=NoticeKind.ESCALATION,
            asked=config.asked(escalation.owner_id),
        )

    async def withdrawn(self, withdrawal: ChannelWithdrawal) -> None:
        log.info(
            "web: a question of role %s closed without an answer (%s)",
            withdrawal.role,
            withdrawal.resolution.value,
        )

    async def _tell(
        self,
        config: WebChannelConfig,
        question: ChannelAsk | ChannelReminder | ChannelEscalation,
        people: Sequence[str],
        *,
        kind: NoticeKind,
        asked: tuple[str, ...],
        reminder: int = 0,
    ) -> None:
        """One notice per person of ``people``, never to the requester of a question whose
        role separates duties: every answer of theirs would be refused."""
        people = without_requester(people, question, self._separates)
        notices = [
            WebNotice(
                approver=person,
                url=self.question_url(
                    question.pause_id, approver=person, tenant_id=question.tenant_id
                ),
                tool=question.value.tool,
                tool_description=self._describe(
                    question.value.tool, agent=question.agent, role=question.role
                ),
                title=self._title(question.value, agent=question.agent, role=question.role),
                role_description=config.role_description,
                tenant_id=question.tenant_id,
                kind=kind,
                reminder=reminder,
                expires_at=question.expires_at,
                approvers=asked,
            )
            for person in people
        ]
        await notify_each(config.notify or self._notifier, notices)


class WebChannel(ChannelOf):
    """The behaviour shared by every class ``web_channel`` makes; not used on its own."""

    web: ClassVar[WebChannelConfig]
    implementation_name: ClassVar[str]

    def __init__(self, outbox: WebOutbox, context: ExecutionContext) -> None:
        self._outbox = outbox
        self._context = context

    @classmethod
    def approvers(cls) -> tuple[str, ...]:
        return cls.web.approvers

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        await self._outbox.post(ask, self.web)
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal) -> None:
        await self._outbox.withdrawn(withdrawal)

    async def remind(self, reminder: ChannelReminder) -> None:
        await self._outbox.remind(reminder, self.web)

    async def escalate(self, escalation: ChannelEscalation) -> None:
        await self._outbox.escalate(escalation, self.web)


def web_channel(
    role: type,
    *,
    name: str,
    approvers: Sequence[str] = (),
    escalate_to: Sequence[str] = (),
    notify: Notifier | None = None,
    description: str | None = None,
) -> type[WebChannel]:
    """A new class implementing ``role`` on the web (decorated with ``@channel``).

    ``approvers`` are the people who may answer (a CHANNEL role; an e-mail address or a user
    name each, as the notifier knows them); a THREAD_OWNER role takes none (its owner
    answers). ``escalate_to`` (a CHANNEL role whose timing has ``escalate_after``) names who
    may answer too once the question is escalated, validated like ``approvers``: they are told
    then, with links of their own, and find it in their inbox; before it, they are refused.
    ``notify``: this channel's notifier (questions, reminders, escalations), instead of the
    ``WebServer``'s. Misuse raises ``SetupError`` at once.
    """
    if notify is not None and not callable(notify):
        raise SetupError(f"web_channel {name}: notify is an async callable taking a WebNotice")
    people = role_people(
        role,
        approvers=approvers,
        escalate_to=escalate_to,
        rules=WEB_PEOPLE,
        channel="web_channel",
        name=name,
    )
    config = WebChannelConfig(
        approvers=people.approvers,
        answered_by=people.answered_by,
        role=people.role.name,
        role_description=people.role.description,
        escalate_to=people.escalate_to,
        notify=notify,
    )
    return implement_role(
        role,
        name=name,
        base=WebChannel,
        config=config,
        attribute=CONFIG_ATTRIBUTE,
        also_as="web",
        label="on the web",
        deps=[WebOutbox, ExecutionContext],
        escalates=bool(escalate_to),
        description=description,
        prefix="Web",
    )


WEB_PEOPLE: Final = PeopleRules(
    valid=lambda person: _APPROVER.fullmatch(person) is not None,
    described="user names or e-mail addresses (letters, digits, . _ @ + -)",
    noun="names",
)
