"""How a person learns of their link: a notifier the application gives (e-mail, a webhook), or
a log line by default.

```python
async def mail_it(notice: WebNotice) -> None:
    await mailer.send(to=directory.email(notice.approver), subject=notice.subject, body=notice.url)

WebServer(app, base_url="https://approvals.example.com", notifier=mail_it)
```

A notice carries the link: it is the right to answer, so a notifier sends it only to its
approver. Neither the link nor the notice shows the pause id.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

log: Final = logging.getLogger("countersign.web")


@dataclass(frozen=True, slots=True, kw_only=True)
class WebNotice:
    """One question for one approver: where to answer it, and what it is about."""

    approver: str
    url: str
    tool: str
    tool_description: str
    role_description: str
    tenant_id: str

    @property
    def subject(self) -> str:
        return f"Approval needed: {self.tool_description or self.tool}"

    def __repr__(self) -> str:  # the link is a secret: keep it out of reprs
        return f"WebNotice(approver={self.approver!r}, tool={self.tool!r})"


Notifier = Callable[[WebNotice], Awaitable[None]]
"""Sends a notice to its approver."""


async def log_notifier(notice: WebNotice) -> None:
    """The default notifier: one log line per approver with the link (INFO, countersign.web)."""
    log.info("web: %s for %s: %s", notice.subject, notice.approver, notice.url)
