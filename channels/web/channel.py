"""Web channels: ``web_channel(Role, ...)`` makes the web implementation of a role.

```python
WebRefunds = web_channel(RefundApprovalChannel, name="web-refund-approval-channel",
                         approvers=["finance@example.com", "auditor@example.com"])

@application(name="office", workflows=[...], channels=[WebRefunds])
```

``send`` makes, for each approver (a THREAD_OWNER role: for the requester), a signed link that
expires, and hands it to the notifier (``WebOutbox``, provided by ``WebServer``). Whoever holds
the link answers as that approver, on the question's page. ``withdraw`` has nothing to update:
the page reads the question as it now is, so a withdrawn question shows as withdrawn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import ClassVar, Final

from bot.components.decorators import channel
from bot.components.specs import ChannelRoleSpec, spec_of
from bot.core.channel import AwaitReply, ChannelAsk, ChannelOf, ChannelOutcome, ChannelWithdrawal
from bot.core.context import ExecutionContext
from bot.core.enums import PauseAnswerer
from bot.core.errors import SetupError
from channels.web.catalog import CONFIG_ATTRIBUTE, WebChannelConfig
from channels.web.links import LinkKind, LinkSigner
from channels.web.notify import Notifier, WebNotice, log

QUESTION_PATH: Final = "/q/"
INBOX_PATH: Final = "/i/"
_APPROVER: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}")

__all__ = ["WebChannel", "WebOutbox", "web_channel"]


class WebOutbox:
    """Where web channels send: it signs a link per approver and hands it to the notifier."""

    def __init__(
        self,
        *,
        signer: LinkSigner,
        base_url: str,
        notifier: Notifier,
        link_lifetime: timedelta,
        tool_descriptions: Mapping[str, str],
    ) -> None:
        self._signer = signer
        self._base_url = base_url.rstrip("/")
        self._notifier = notifier
        self._lifetime = link_lifetime
        self._tools = dict(tool_descriptions)

    @property
    def base_url(self) -> str:
        return self._base_url

    def tool_description(self, tool: str) -> str:
        return self._tools.get(tool, "")

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

    async def post(self, ask: ChannelAsk, config: WebChannelConfig) -> None:
        approvers = (
            (ask.owner_id,)
            if config.answered_by is PauseAnswerer.THREAD_OWNER
            else config.approvers
        )
        for approver in approvers:
            url = self.question_url(ask.pause_id, approver=approver, tenant_id=ask.tenant_id)
            await self._notifier(
                WebNotice(
                    approver=approver,
                    url=url,
                    tool=ask.value.tool,
                    tool_description=self._tools.get(ask.value.tool, ""),
                    role_description=config.role_description,
                    tenant_id=ask.tenant_id,
                )
            )

    async def withdrawn(self, withdrawal: ChannelWithdrawal) -> None:
        log.info(
            "web: a question of role %s closed without an answer (%s)",
            withdrawal.role,
            withdrawal.resolution.value,
        )


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


def web_channel(
    role: type,
    *,
    name: str,
    approvers: Sequence[str] = (),
    description: str | None = None,
) -> type[WebChannel]:
    """A new class implementing ``role`` on the web (decorated with ``@channel``).

    ``approvers`` are the people who may answer (a CHANNEL role; an e-mail address or a user
    name each, as the notifier knows them); a THREAD_OWNER role takes none (its owner
    answers). Misuse raises ``SetupError`` at once.
    """
    spec = spec_of(role)
    if not isinstance(spec, ChannelRoleSpec):
        raise SetupError(f"web_channel: {getattr(role, '__name__', role)!s} is not a @channel_role")
    if not isinstance(spec.answered_by, PauseAnswerer):
        raise SetupError(f"web_channel: the role {spec.name} has no valid answered_by")
    config = WebChannelConfig(
        approvers=_approvers(approvers, spec.answered_by, name),
        answered_by=spec.answered_by,
        role=spec.name,
        role_description=spec.description,
    )
    namespace = {
        CONFIG_ATTRIBUTE: config,
        "web": config,
        "implementation_name": name,
        "__module__": role.__module__,
        "__doc__": f"Asks {spec.name} on the web.",
    }
    cls = type(f"Web{role.__name__}", (WebChannel, role), namespace)
    decorate = channel(
        name=name,
        description=description or f"Asks on the web: {spec.description}",
        deps=[WebOutbox, ExecutionContext],
    )
    return decorate(cls)


def _approvers(approvers: Sequence[str], answered_by: PauseAnswerer, name: str) -> tuple[str, ...]:
    if isinstance(approvers, str):
        raise SetupError(f"web_channel {name}: approvers is a list of names, not one string")
    wrong = [a for a in approvers if not _APPROVER.fullmatch(a)]
    if wrong:
        raise SetupError(
            f"web_channel {name}: an approver is a user name or an e-mail address (letters, "
            f"digits, . _ @ + -), got {wrong!r}"
        )
    if answered_by is PauseAnswerer.CHANNEL and not approvers:
        raise SetupError(
            f"web_channel {name}: its role is answered through the channel: name at least one "
            "approver"
        )
    if answered_by is PauseAnswerer.THREAD_OWNER and approvers:
        raise SetupError(
            f"web_channel {name}: its role is answered by the thread's owner: approvers would "
            "be ignored, leave them out"
        )
    return tuple(dict.fromkeys(approvers))
