"""How a person learns of their link: a notifier the application gives (e-mail, a chat
webhook), or a log line by default.

```python
async def mail_it(notice: WebNotice) -> None:
    await mailer.send(to=directory.email(notice.approver), subject=notice.subject,
                      body=notice.text)

WebServer(app, base_url="https://approvals.example.com", notifier=mail_it)   # every channel
web_channel(Role, name=..., approvers=[...], notify=page_the_desk)            # this channel
```

The web has no push of its own, so a notifier is told three things, one ``WebNotice`` per
person each time: the question when it is asked (``NoticeKind.QUESTION``, to its approvers),
each reminder (``REMINDER``, to its approvers — once it is escalated, to the ``escalate_to``
people too —, with the reminder's number, when the question expires and who may answer) and
the escalation (``ESCALATION``, to the channel's ``escalate_to`` people). A question handed to
someone is told to them (``HANDOVER``), and so is a standing delegation to them when it starts
or is ended early (``DELEGATION``: the kit's sentence as ``title``, the link their inbox's).
A notice is for one person because its link is theirs: whoever holds it answers as them.
The requester of a question whose role separates duties (``separation_of_duties``, or several
approvals required) is never told of it, though they approve the role: every answer of theirs
would be refused (``channels.kit.answerers.without_requester``).
Neither the link nor the notice shows the pause id.

A notifier is called best effort: one that fails is logged (``web.notify-failed``) and the
others are still told; the question keeps waiting, and the inbox shows it all anyway.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Protocol

from channels.kit.question import when

log: Final = logging.getLogger("countersign.web")


class NoticeKind(enum.Enum):
    """Why a person is told about a question."""

    QUESTION = "question"  # it was just asked of them
    REMINDER = "reminder"  # it still waits for them
    ESCALATION = "escalation"  # nobody answered in time: it is asked of them now as well
    HANDOVER = "handover"  # an approver handed it to them (Reassign)
    DELEGATION = "delegation"  # a standing delegation to them started, or ended early


@dataclass(frozen=True, slots=True, kw_only=True)
class WebNotice:
    """One question for one person: where they answer it, and what it is about."""

    approver: str
    url: str
    tool: str
    tool_description: str
    role_description: str
    tenant_id: str
    kind: NoticeKind = NoticeKind.QUESTION
    reminder: int = 0
    """The reminder's number (1 for the first); 0 unless ``kind`` is ``REMINDER``."""
    expires_at: datetime | None = None
    """When the question expires unanswered; None if it does not."""
    approvers: tuple[str, ...] = ()
    """Who the question was asked of (its approvers; for a THREAD_OWNER question its owner);
    on a reminder after the escalation, the ``escalate_to`` people too: who may answer."""
    title: str = ""
    """The question as a person reads it (``channels.kit.question``): "Refund 120.00 to the
    card of order A-1001?"; empty: the tool's description is used."""

    @property
    def subject(self) -> str:
        what = self.title or self.tool_description or self.tool
        match self.kind:
            case NoticeKind.QUESTION:
                return f"Approval needed: {what}"
            case NoticeKind.REMINDER:
                return f"Reminder {self.reminder}: approval still needed: {what}"
            case NoticeKind.ESCALATION:
                return f"Escalated to you: approval needed: {what}"
            case NoticeKind.HANDOVER:
                return f"Handed to you: approval needed: {what}"
            case NoticeKind.DELEGATION:  # the kit's sentence (channels.kit.texts)
                return self.title

    @property
    def text(self) -> str:
        """The whole message for a person: the subject, who was asked, the expiry, the link."""
        lines = [self.subject]
        if self.role_description:
            lines.append(self.role_description)
        if self.kind is NoticeKind.ESCALATION:
            lines.append(f"Nobody answered in time: asked of {_names(self.approvers)} first.")
        elif self.kind is NoticeKind.REMINDER and len(self.approvers) > 1:
            lines.append(f"Asked of {_names(self.approvers)}: any one of them may answer.")
        if self.expires_at is not None:
            lines.append(f"Expires {when(self.expires_at)} if nobody answers.")
        where = "Your inbox" if self.kind is NoticeKind.DELEGATION else "Answer here"
        lines.append(f"{where}: {self.url}")
        return "\n".join(lines)

    def __repr__(self) -> str:  # the link is a secret: keep it out of reprs
        return f"WebNotice(kind={self.kind.value}, approver={self.approver!r}, tool={self.tool!r})"


class Notifier(Protocol):
    """Sends a notice to its person (an async callable, e.g. ``async def mail_it(notice)``)."""

    async def __call__(self, notice: WebNotice, /) -> None: ...


async def log_notifier(notice: WebNotice) -> None:
    """The default notifier: one log line per notice with the link (INFO, countersign.web)."""
    log.info("web: %s for %s: %s", notice.subject, notice.approver, notice.url)


async def notify_each(notifier: Notifier, notices: Sequence[WebNotice]) -> int:
    """Give every notice to ``notifier``, best effort; how many it took without failing."""
    taken = 0
    for notice in notices:
        try:
            await notifier(notice)
        except Exception as error:  # best effort by contract: a broken notifier loses nothing
            log.warning(
                "web.notify-failed: a %s notice for %s: %s",
                notice.kind.value,
                notice.approver,
                type(error).__name__,
            )
        else:
            taken += 1
    return taken


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) or "nobody"
